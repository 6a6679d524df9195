//! loom models of the sharded activeQ protocol, run on the real code (`src/sync.rs` swaps in
//! loom's primitives). `bash ci/loom.sh` runs them:
//! `RUSTFLAGS="--cfg loom" cargo test -p tidegate-engine --test loom_active --release`.
#![cfg(loom)]

use loom::thread;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::QueuedPodInfo;
use tidegate_engine::api::{Pod, PodKey, PodSpecInfo};
use tidegate_engine::bench_support::{ActiveQ, LessFn};

fn q(name: &str, priority: i32, ts: u64) -> QueuedPodInfo {
    let pod = Pod::new(
        "l",
        name,
        Arc::new(PodSpecInfo {
            priority,
            ..Default::default()
        }),
    );
    QueuedPodInfo::new(Arc::new(pod), Duration::from_nanos(ts))
}

fn less() -> LessFn {
    Arc::new(|a: &QueuedPodInfo, b: &QueuedPodInfo| {
        let (pa, pb) = (a.pod.priority(), b.pod.priority());
        pa > pb || (pa == pb && a.timestamp < b.timestamp)
    })
}

fn name(x: QueuedPodInfo) -> String {
    x.pod.name.to_string()
}

/// Two producers push to different shards while a consumer pops: every pod comes out exactly
/// once, and the count ends at zero.
#[test]
fn pushes_race_a_pop() {
    let (a, b) = (q("a", 0, 1), q("b", 1, 2));
    loom::model(move || {
        let aq = Arc::new(ActiveQ::new(2, less()));
        let (q1, q2) = (aq.clone(), aq.clone());
        let (a, b) = (a.clone(), b.clone());
        let t1 = thread::spawn(move || q1.push(a));
        let t2 = thread::spawn(move || q2.push(b));
        let mut got: Vec<String> = aq.try_pop().into_iter().map(name).collect();
        t1.join().unwrap();
        t2.join().unwrap();
        while let Some(x) = aq.try_pop() {
            got.push(name(x));
        }
        got.sort();
        assert_eq!(got, vec!["a", "b"]);
        assert_eq!(aq.len(), 0);
    });
}

/// The same race with PrioritySort's sort key in the heap slots (the scheduler's queue):
/// the keys change only what sifting reads, not the protocol; every pod comes out once, the
/// higher priority first when both were pushed before the pops.
#[test]
fn pushes_race_a_pop_with_sort_keys() {
    use tidegate_engine::QueueSortPlugin;
    use tidegate_engine::bench_support::PrioritySort;
    let (a, b) = (q("a", 0, 1), q("b", 1, 2));
    loom::model(move || {
        let aq = Arc::new(ActiveQ::with_sort_key(2, less(), PrioritySort.sort_key()));
        let (q1, q2) = (aq.clone(), aq.clone());
        let (a, b) = (a.clone(), b.clone());
        let t1 = thread::spawn(move || q1.push(a));
        let t2 = thread::spawn(move || q2.push(b));
        let early: Vec<String> = aq.try_pop().into_iter().map(name).collect();
        t1.join().unwrap();
        t2.join().unwrap();
        let mut got = early.clone();
        while let Some(x) = aq.try_pop() {
            got.push(name(x));
        }
        if early.is_empty() {
            assert_eq!(got, vec!["b", "a"], "both queued: priority first");
        }
        got.sort();
        assert_eq!(got, vec!["a", "b"]);
        assert_eq!(aq.len(), 0);
        aq.check().unwrap();
    });
}

/// A delete races a pop of the same pod: exactly one of them gets it.
#[test]
fn a_delete_races_a_pop() {
    let a = q("a", 0, 1);
    loom::model(move || {
        let aq = Arc::new(ActiveQ::new(2, less()));
        aq.push(a.clone());
        let q1 = aq.clone();
        let t = thread::spawn(move || q1.remove(&PodKey::new("l", "a")).is_some());
        let popped = aq.try_pop().is_some();
        let removed = t.join().unwrap();
        assert!(popped ^ removed, "popped {popped}, removed {removed}");
        assert_eq!(aq.len(), 0);
        assert!(aq.try_pop().is_none());
        // The stale counts (invariant 4) hold whichever won.
        aq.check().unwrap();
    });
}

/// An update (a second push of the same pod, from another thread's shard) races a pop: the
/// pod comes out once or twice (popped before the update re-queued it), never lost, and the
/// stale entry the update leaves behind is counted in the shard that holds it.
#[test]
fn an_update_races_a_pop() {
    let (a, a2) = (q("a", 0, 1), q("a", 3, 1));
    loom::model(move || {
        let aq = Arc::new(ActiveQ::new(2, less()));
        aq.push(a.clone());
        let q1 = aq.clone();
        let upd = a2.clone();
        let t = thread::spawn(move || q1.push(upd));
        let first = aq.try_pop().is_some();
        t.join().unwrap();
        aq.check().unwrap();
        let mut n = usize::from(first);
        while aq.try_pop().is_some() {
            n += 1;
        }
        assert!((1..=2).contains(&n), "popped {n} times");
        assert_eq!(aq.len(), 0);
        aq.check().unwrap();
    });
}

/// Once the pushes are done, pop is exact: the best pod comes first whatever shard it is in.
#[test]
fn a_quiescent_pop_returns_the_best() {
    let (low, high) = (q("low", 0, 1), q("high", 5, 2));
    loom::model(move || {
        let aq = Arc::new(ActiveQ::new(2, less()));
        let (q1, q2) = (aq.clone(), aq.clone());
        let (l, h) = (low.clone(), high.clone());
        let t1 = thread::spawn(move || q1.push(l));
        let t2 = thread::spawn(move || q2.push(h));
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(aq.try_pop().map(name).as_deref(), Some("high"));
        assert_eq!(aq.try_pop().map(name).as_deref(), Some("low"));
        aq.check().unwrap();
    });
}
