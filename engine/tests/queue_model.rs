//! A small sequential reference model of the queue semantics (reference §1, QueueingHints off
//! for the unschedulable pool), and proptest comparing random operation sequences against the
//! real `SchedulingQueue`: after every operation each pod must be where the model says. The
//! model runs with `SchedulerPopFromBackoffQ` off and on (1 s expiry windows, whole-second
//! flushes, Pop from the rejection heap of backoffQ when activeQ is empty).

use proptest::prelude::*;

#[path = "model/queue_model.rs"]
mod model;
use model::{Op, check, check_bytes};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..12, 0usize..3).prop_map(|(i, g)| Op::Add(i, g)),
        2 => (0u8..12).prop_map(Op::RemoveGate),
        1 => (0u8..12).prop_map(Op::Delete),
        3 => Just(Op::Pop),
        2 => any::<bool>().prop_map(Op::Fail),
        1 => Just(Op::Bind),
        1 => Just(Op::NodeAdd),
        2 => prop_oneof![1u64..2_000, 2_000u64..400_000].prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, ..ProptestConfig::default() })]

    #[test]
    fn the_queue_matches_the_reference_model(ops in proptest::collection::vec(op(), 1..120)) {
        check(ops, false).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_queue_matches_the_reference_model_with_pop_from_backoff(ops in proptest::collection::vec(op(), 1..120)) {
        check(ops, true).map_err(TestCaseError::fail)?;
    }
}

/// The fuzz target's inputs kept in `fuzz/regressions/queue_ops/` (two bytes per operation,
/// see `check_bytes`), replayed on every test run.
#[test]
fn kept_fuzz_inputs_match_the_reference_model() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/queue_ops");
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap().flatten() {
        let data = std::fs::read(f.path()).unwrap();
        if let Err(e) = check_bytes(&data) {
            panic!("{}: {e}", f.path().display());
        }
        n += 1;
    }
    assert!(n > 0, "no inputs in {}", dir.display());
}
