//! Gangs under fault injection (`--inject`): for random clusters, gang sizes, quorums and
//! faults, no gang ends bound below its quorum, no gang that cannot hold a quorum binds any
//! member, every gang that fits ends bound whole, and the counts add up for pods and for
//! PodGroups (`created = bound + pending + deleted`, `created = scheduled + pending +
//! deleted`). The workload is perf-data/workloads/podgroups/gang-faults.yaml with its params
//! replaced; it runs on the virtual clock, so Permit timeouts and backoff cost no wall time.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tidegate_bench::cluster::inject::Injection;
use tidegate_bench::output::results::{Outcome, RunResult};
use tidegate_bench::run::pace::ClockMode;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload::{self, ParamValue};

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-data/workloads/podgroups/gang-faults.yaml")
}

/// One random case: the cluster, the two kinds of gang, the faults.
#[derive(Clone, Debug)]
struct Case {
    nodes: i64,
    fitting_gangs: i64,
    fitting_size: i64,
    fitting_min: i64,
    too_big_gangs: i64,
    too_big_size: i64,
    too_big_min: i64,
    faults: String,
    seed: u64,
}

/// Transient faults: each may hit any member at any step, and each is retried.
const FAULTS: &[&str] = &[
    "bind-failure=0.2",
    "permit-timeout=0.15@50ms",
    "error@permit=0.15",
    "error@reserve=0.15",
    "error@filter=0.02",
    "error@prefilter=0.1",
    "error@bind=0.15",
];

fn case() -> impl Strategy<Value = Case> {
    (2i64..7, 1i64..5, 1i64..4, 1i64..3, any::<u64>())
        .prop_flat_map(|(nodes, fitting_gangs, too_big_gangs, extra, seed)| {
            (
                Just((nodes, fitting_gangs, too_big_gangs, extra, seed)),
                1..=nodes,
                proptest::sample::subsequence(FAULTS.to_vec(), 1..=3),
            )
        })
        .prop_flat_map(|((nodes, fg, tg, extra, seed), fitting_size, faults)| {
            (
                Just((nodes, fg, tg, extra, seed, fitting_size, faults)),
                1..=fitting_size,
            )
        })
        .prop_map(
            |((nodes, fitting_gangs, too_big_gangs, extra, seed, fitting_size, faults), min)| {
                Case {
                    nodes,
                    fitting_gangs,
                    fitting_size,
                    fitting_min: min,
                    too_big_gangs,
                    // A quorum one above the node count: no placement holds it, as a gang's
                    // members need a node each (one host port per gang).
                    too_big_size: nodes + extra,
                    too_big_min: nodes + 1,
                    faults: faults.join(","),
                    seed,
                }
            },
        )
}

fn run(c: &Case) -> RunResult {
    let mut cfg = workload::load(&config()).expect("gang-faults.yaml loads");
    let wl = &mut cfg.test_cases[0].workloads[0];
    for (k, v) in [
        ("nodes", c.nodes),
        ("fittingGangs", c.fitting_gangs),
        ("fittingSize", c.fitting_size),
        ("fittingMin", c.fitting_min),
        ("tooBigGangs", c.too_big_gangs),
        ("tooBigSize", c.too_big_size),
        ("tooBigMin", c.too_big_min),
    ] {
        wl.params.get_mut(k).expect("a param of the file").0 = ParamValue::Int(v);
    }
    let mut inj = Injection::default();
    inj.add(&c.faults).expect("a valid fault spec");
    let opts = RunOptions {
        workload: Some(format!("GangFaults/{}", wl.name)),
        seed: c.seed,
        threads: Some(2),
        dump_pods: true,
        clock: ClockMode::Virtual {
            attempt_cost: ClockMode::DEFAULT_ATTEMPT_COST,
        },
        inject: Some(Arc::new(inj)),
        timeout: Duration::from_secs(600),
        ..RunOptions::default()
    };
    let mut reports = run_config(&cfg, &opts).unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert_eq!(reports.len(), 1);
    match reports.remove(0).outcome {
        Outcome::Ran(r) => *r,
        other => panic!("{c:?}: {other:?}"),
    }
}

/// Checks one case's end state; the message names what broke.
fn check(c: &Case, r: &RunResult) -> Result<(), String> {
    let s = &r.summary;
    let g = &s.pod_groups;
    let fitting = (c.fitting_gangs * c.fitting_size) as u64;
    let too_big = (c.too_big_gangs * c.too_big_size) as u64;
    if !s.adds_up() {
        return Err(format!("counts do not add up: {s:?}"));
    }
    if (s.created, s.bound, s.deleted) != (fitting + too_big, fitting, 0) {
        return Err(format!(
            "expected {fitting} of {} pods bound, none deleted: {s:?}",
            fitting + too_big
        ));
    }
    if s.binds != s.bound {
        return Err(format!("a pod bound twice: {s:?}"));
    }
    let groups = (c.fitting_gangs + c.too_big_gangs) as u64;
    if (g.created, g.scheduled, g.pending, g.deleted)
        != (groups, c.fitting_gangs as u64, c.too_big_gangs as u64, 0)
    {
        return Err(format!("PodGroups: {g:?}"));
    }
    if g.below_quorum != 0 || g.bound_unscheduled != 0 {
        return Err(format!("a gang bound below its quorum: {g:?}"));
    }
    // Per gang, from the pods: a fitting gang bound whole, a too-big one not at all, and its
    // members pending in a known queue.
    let mut per_gang: std::collections::BTreeMap<(String, String), (u64, u64)> = Default::default();
    for p in &r.pods {
        let group = p
            .pod_group
            .clone()
            .ok_or_else(|| format!("{} has no group", p.name))?;
        let e = per_gang.entry((p.namespace.clone(), group)).or_default();
        if p.node.is_some() {
            e.0 += 1;
        } else {
            e.1 += 1;
            if p.queue.is_none() {
                return Err(format!(
                    "{}/{} pending in no queue: {p:?}",
                    p.namespace, p.name
                ));
            }
        }
    }
    for ((ns, group), (bound, pending)) in per_gang {
        let whole = if ns == "fits-0" {
            (bound, pending) == (c.fitting_size as u64, 0)
        } else {
            (bound, pending) == (0, c.too_big_size as u64)
        };
        if !whole {
            return Err(format!("{ns}/{group}: {bound} bound, {pending} pending"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn no_gang_is_half_bound_under_faults(c in case()) {
        let r = run(&c);
        if let Err(why) = check(&c, &r) {
            prop_assert!(false, "{:?}: {}", c, why);
        }
    }
}

/// The checks themselves catch a half-bound gang: the same end state with one fitting member
/// unbound, or one too-big member bound, fails them.
#[test]
fn the_check_rejects_a_half_bound_gang() {
    let c = Case {
        nodes: 3,
        fitting_gangs: 2,
        fitting_size: 3,
        fitting_min: 2,
        too_big_gangs: 1,
        too_big_size: 4,
        too_big_min: 4,
        faults: "bind-failure=0.2,permit-timeout=0.1@50ms".into(),
        seed: 11,
    };
    let r = run(&c);
    check(&c, &r).expect("the real run holds");
    let mut half = r.pods.clone();
    let i = half.iter().position(|p| p.namespace == "fits-0").unwrap();
    half[i].node = None;
    half[i].queue = Some("backoff");
    let broken = RunResult {
        pods: half,
        ..clone_result(&r)
    };
    assert!(check(&c, &broken).unwrap_err().contains("bound"));
    let mut stray = r.pods.clone();
    let i = stray
        .iter()
        .position(|p| p.namespace == "too-big-0")
        .unwrap();
    stray[i].node = Some("node-0".into());
    let broken = RunResult {
        pods: stray,
        ..clone_result(&r)
    };
    assert!(check(&c, &broken).unwrap_err().contains("bound"));
}

/// The parts of a result `check` reads.
fn clone_result(r: &RunResult) -> RunResult {
    RunResult {
        series: Vec::new(),
        profile: None,
        prometheus: None,
        items: Vec::new(),
        summary: r.summary,
        threshold_failures: Vec::new(),
        placements: r.placements.clone(),
        wall: r.wall,
        pods: r.pods.clone(),
        peak_rss_mb: r.peak_rss_mb,
        profiler_mb: r.profiler_mb,
    }
}
