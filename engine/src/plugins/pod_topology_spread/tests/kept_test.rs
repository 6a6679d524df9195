use super::scoring_test::{ps_counts, run_pre_score};
use super::*;

// ---- counts kept between cycles (crate::plugins::kept) ---------------------------------------

/// One change to the cluster between two cycles.
#[derive(Clone, Debug)]
enum Change {
    /// A pod on node `n` (index into the six), matching `foo` or not, in namespace `ns`.
    AddPod { n: usize, foo: bool, ns: bool },
    /// Remove the `k`-th pod added so far (if any).
    RemovePod(usize),
    /// Node `n` leaves or comes back.
    ToggleNode(usize),
    /// Node `n` moves to the other zone.
    Relabel(usize),
}

fn change() -> impl proptest::strategy::Strategy<Value = Change> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0usize..6, any::<bool>(), any::<bool>()).prop_map(|(n, foo, ns)| Change::AddPod { n, foo, ns }),
        2 => (0usize..64).prop_map(Change::RemovePod),
        1 => (0usize..6).prop_map(Change::ToggleNode),
        1 => (0usize..6).prop_map(Change::Relabel),
    ]
}

fn cache_node(i: usize, zone2: bool) -> Arc<Node> {
    let name = format!("node-{i}");
    let zone = if zone2 { "zone2" } else { "zone1" };
    Arc::new(node(&name, &[("zone", zone), ("node", &name)]))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// A plugin that carries its counts from cycle to cycle computes the same PreFilter and
    /// PreScore states as a fresh one, whatever changed in between: pods added and removed
    /// (matching or not, in the pod's namespace or another), nodes removed, re-added and
    /// relabelled. The snapshot is refreshed incrementally, as the scheduler does.
    #[test]
    fn counts_kept_between_cycles_equal_a_fresh_count(changes in proptest::collection::vec(change(), 1..40)) {
        let warm = plugin();
        let hard = pod("p").label("foo", "").spread(tsc(1, "zone", Hard, foo())).spread(tsc(1, "node", Hard, foo())).obj();
        let soft = pod("q").label("foo", "").spread(tsc(1, "zone", Soft, foo())).obj();
        // Node affinity honoured: only zone1's nodes are eligible, and relabelling moves them.
        // The same constraints, so only the spec tells the keys apart.
        let hard_zone1 = pod("r").label("foo", "").node_selector("zone", "zone1").spread(tsc(1, "zone", Hard, foo())).spread(tsc(1, "node", Hard, foo())).obj();
        let soft_zone1 = pod("s").label("foo", "").node_selector("zone", "zone1").spread(tsc(1, "zone", Soft, foo())).obj();
        let cache = Cache::new();
        let mut zone2 = [false, false, false, true, true, true];
        let mut present = [true; 6];
        for (i, z) in zone2.iter().enumerate() {
            cache.add_node(cache_node(i, *z));
        }
        let mut snap = Snapshot::default();
        let mut added: Vec<Pod> = Vec::new();
        for (step, c) in changes.into_iter().enumerate() {
            match c {
                Change::AddPod { n, foo, ns } => {
                    let mut b = pod(&format!("e{step}")).node(&format!("node-{n}"));
                    if foo {
                        b = b.label("foo", "");
                    }
                    if ns {
                        b = b.ns("other");
                    }
                    let p = b.obj();
                    cache.add_pod(Arc::new(p.clone()));
                    added.push(p);
                }
                Change::RemovePod(k) => {
                    if !added.is_empty() {
                        let p = added.remove(k % added.len());
                        cache.remove_pod(&p.key);
                    }
                }
                Change::ToggleNode(n) => {
                    if present[n] {
                        cache.remove_node(Sym::new(&format!("node-{n}")));
                    } else {
                        cache.add_node(cache_node(n, zone2[n]));
                    }
                    present[n] = !present[n];
                }
                Change::Relabel(n) => {
                    zone2[n] = !zone2[n];
                    if present[n] {
                        cache.update_node(cache_node(n, zone2[n]));
                    }
                }
            }
            cache.update_snapshot(&mut snap);
            // Twice per pod: a key is kept from its second sighting. The reference is a new
            // plugin each time (it keeps nothing).
            for _ in 0..2 {
                for p in [&hard, &hard_zone1] {
                    let a = pre_filter_state(&warm, p, &snap);
                    let b = pre_filter_state(&plugin(), p, &snap);
                    proptest::prop_assert_eq!(got_counts(&a), got_counts(&b), "step {}", step);
                    // The global minima (which domain holds a tied minimum depends on the
                    // map's order, in kube as here).
                    let mins = |s: &PreFilterState| (0..s.constraints.len()).map(|i| s.min_match_num(i)).collect::<Vec<_>>();
                    proptest::prop_assert_eq!(mins(&a), mins(&b), "step {}", step);
                }
                let feasible: Vec<Sym> = snap.nodes.iter().map(|n| n.name()).collect();
                for p in [&soft, &soft_zone1] {
                    let (cs_a, st_a) = run_pre_score(&warm, p, &snap, &feasible);
                    let (cs_b, st_b) = run_pre_score(&plugin(), p, &snap, &feasible);
                    proptest::prop_assert_eq!(st_a.code(), st_b.code());
                    if let (Some(x), Some(y)) = (
                        cs_a.read::<PreScoreState>(PRE_SCORE_STATE_KEY),
                        cs_b.read::<PreScoreState>(PRE_SCORE_STATE_KEY),
                    ) {
                        proptest::prop_assert_eq!(ps_counts(x), ps_counts(y), "step {}", step);
                    }
                }
            }
        }
    }
}
