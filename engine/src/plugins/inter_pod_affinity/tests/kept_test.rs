use super::*;

// ---- sums kept between cycles (kept.rs) ----------------------------------------------------

/// A client whose namespaces can be relabelled between cycles.
#[derive(Default)]
struct MutableNsClient {
    ns: parking_lot::Mutex<AHashMap<Sym, Arc<Labels>>>,
}

impl MutableNsClient {
    fn set(&self, ns: &str, team: Option<&str>) {
        let mut m = self.ns.lock();
        match team {
            Some(t) => {
                m.insert(Sym::new(ns), Arc::new(Labels::from_pairs([("team", t)])));
            }
            None => {
                m.remove(&Sym::new(ns));
            }
        }
    }
}

impl ClusterClient for MutableNsClient {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn namespace_labels(&self, namespace: Sym) -> Option<Arc<Labels>> {
        self.ns.lock().get(&namespace).cloned()
    }
}

/// One change to the cluster between two cycles.
#[derive(Clone, Debug)]
enum Change {
    /// A running pod of kind `kind` (see `running_pod`) on node `n`, in namespace `ns`.
    AddPod { n: usize, kind: usize, ns: usize },
    /// Remove the `k`-th pod added so far (if any).
    RemovePod(usize),
    /// Node `n` leaves or comes back.
    ToggleNode(usize),
    /// Node `n` moves to the other zone (or loses its zone label, every third time).
    Relabel(usize),
    /// Namespace `ns` changes team, or disappears.
    RelabelNamespace(usize, Option<usize>),
}

const KEPT_NAMESPACES: [&str; 3] = ["ns0", "ns1", "ns2"];

fn change() -> impl proptest::strategy::Strategy<Value = Change> {
    use proptest::prelude::*;
    prop_oneof![
        5 => (0usize..6, 0usize..6, 0usize..3).prop_map(|(n, kind, ns)| Change::AddPod { n, kind, ns }),
        2 => (0usize..64).prop_map(Change::RemovePod),
        1 => (0usize..6).prop_map(Change::ToggleNode),
        1 => (0usize..6).prop_map(Change::Relabel),
        1 => (0usize..3, proptest::option::of(0usize..2)).prop_map(|(n, t)| Change::RelabelNamespace(n, t)),
    ]
}

/// The running pods: plain ones with `app` a or b, and ones carrying each kind of term.
fn running_pod(kind: usize, name: &str, ns: &str, node: &str) -> Pod {
    let ns_team1 = || Some(sel(&[("team", IN, &["team1"])]));
    let b = pod().name(name).ns(ns).node(node);
    match kind {
        0 => b.label("app", "a").obj(),
        1 => b.label("app", "b").label("tier", "x").obj(),
        2 => b.label("app", "a").anti_in("app", "hostname", &["a"]).obj(),
        3 => b
            .label("app", "b")
            .req_anti(term_ns(&[("app", IN, &["a"])], "zone", &[], ns_team1()))
            .obj(),
        4 => b.label("app", "a").aff_in("app", "zone", &["b"]).obj(),
        _ => {
            let mut p = b.label("app", "b").obj();
            let mut spec = (*p.spec).clone();
            spec.pod_affinity.preferred_affinity = vec![w(5, term(&[("app", IN, &["a"])], "zone"))];
            spec.pod_affinity.preferred_anti_affinity =
                vec![w(3, term(&[("tier", EXISTS, &[])], "hostname"))];
            p.spec = Arc::new(spec);
            p
        }
    }
}

/// The incoming pods: each map of the plugin, with namespace selectors and matchLabelKeys.
fn incoming_pods() -> Vec<Pod> {
    let ns_team1 = || Some(sel(&[("team", IN, &["team1"])]));
    let mut match_keys = term(&[("app", EXISTS, &[])], "zone");
    match_keys.match_label_keys = vec![Sym::new("tier")];
    let mut preferred = pod()
        .name("in-c")
        .ns("ns0")
        .label("app", "a")
        .label("tier", "x")
        .obj();
    let mut spec = (*preferred.spec).clone();
    spec.pod_affinity.preferred_affinity = vec![w(7, term(&[("app", IN, &["b"])], "zone"))];
    spec.pod_affinity.preferred_anti_affinity = vec![w(
        2,
        term_ns(&[("app", EXISTS, &[])], "hostname", &[], ns_team1()),
    )];
    preferred.spec = Arc::new(spec);
    vec![
        pod()
            .name("in-a")
            .ns("ns0")
            .label("app", "a")
            .req_aff(term_ns(
                &[("app", IN, &["a", "b"])],
                "zone",
                &[],
                ns_team1(),
            ))
            .anti_in("app", "hostname", &["b"])
            .obj(),
        pod()
            .name("in-b")
            .ns("ns1")
            .label("app", "b")
            .label("tier", "x")
            .req_anti(match_keys)
            .obj(),
        preferred,
        // No terms: only the running pods' terms count.
        pod().name("in-d").ns("ns2").label("app", "a").obj(),
        // The same, in the namespace of in-a and in-c with other labels: running pods' terms
        // see it differently.
        pod()
            .name("in-e")
            .ns("ns0")
            .label("app", "b")
            .label("tier", "x")
            .obj(),
    ]
}

fn kept_node(i: usize, zone: usize) -> Arc<Node> {
    let name = format!("node-{i}");
    let zone_label = format!("z{zone}");
    let mut labels = vec![("hostname", name.as_str())];
    if zone < 2 {
        labels.push(("zone", zone_label.as_str()));
    }
    Arc::new(node(&name, &labels))
}

/// Every map of both states, for comparison.
fn all_maps(
    pl: &InterPodAffinity,
    p: &Pod,
    snap: &Snapshot,
) -> (
    TopologyCounts,
    TopologyCounts,
    TopologyCounts,
    scoring::TopologyScores,
) {
    let f = pl.compute_pre_filter_state(p, snap);
    let s = pl.compute_pre_score_state(p, snap);
    (
        (*f.existing_anti_affinity_counts).clone(),
        (*f.affinity_counts).clone(),
        (*f.anti_affinity_counts).clone(),
        (*s.topology_score).clone(),
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// A plugin that keeps its sums from cycle to cycle computes the same four maps as a fresh
    /// one, whatever changed in between: running pods with and without terms added and
    /// removed, nodes removed, re-added and moved between zones (or out of every zone), and
    /// namespaces relabelled or deleted. The snapshot is refreshed incrementally, as the
    /// scheduler does.
    #[test]
    fn kept_sums_equal_fresh_sums(changes in proptest::collection::vec(change(), 1..40)) {
        let client = Arc::new(MutableNsClient::default());
        client.set("ns0", Some("team1"));
        client.set("ns1", Some("team2"));
        let warm = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone());
        let incoming = incoming_pods();
        let cache = Cache::new();
        let mut zone = [0usize, 0, 1, 1, 0, 1];
        let mut present = [true; 6];
        for (i, &z) in zone.iter().enumerate() {
            cache.add_node(kept_node(i, z));
        }
        let mut snap = Snapshot::default();
        let mut added: Vec<Pod> = Vec::new();
        for (step, c) in changes.into_iter().enumerate() {
            match c {
                Change::AddPod { n, kind, ns } => {
                    let p = running_pod(kind, &format!("e{step}"), KEPT_NAMESPACES[ns], &format!("node-{n}"));
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
                        cache.add_node(kept_node(n, zone[n]));
                    }
                    present[n] = !present[n];
                }
                Change::Relabel(n) => {
                    zone[n] = (zone[n] + 1) % 3;
                    if present[n] {
                        cache.update_node(kept_node(n, zone[n]));
                    }
                }
                Change::RelabelNamespace(ns, team) => {
                    client.set(KEPT_NAMESPACES[ns], team.map(|t| ["team1", "team2"][t]));
                }
            }
            cache.update_snapshot(&mut snap);
            for p in &incoming {
                // Twice: the first sighting of a key is computed afresh, the second keeps it.
                // The reference is a new plugin each time (it keeps nothing).
                for _ in 0..2 {
                    let a = all_maps(&warm, p, &snap);
                    let fresh = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone());
                    let b = all_maps(&fresh, p, &snap);
                    proptest::prop_assert_eq!(&a, &b, "step {} pod {}", step, p.name);
                }
            }
        }
    }
}

/// The parallel paths: a first (fresh) pass and a refresh of hundreds of changed nodes run
/// on a pool, and give what a sequential fresh plugin computes.
#[test]
fn kept_sums_refresh_many_nodes_on_a_pool() {
    let client = Arc::new(MutableNsClient::default());
    client.set("ns0", Some("team1"));
    client.set("ns1", Some("team2"));
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    );
    let warm = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone())
        .with_pool(Some(pool));
    let cache = Cache::new();
    for i in 0..600 {
        cache.add_node(kept_node(i, i % 3));
    }
    let mut snap = Snapshot::default();
    let incoming = incoming_pods();
    let mut seq = 0;
    for round in 0..4 {
        // Round 0 fills every node; later rounds touch 300 of them, relabel the namespaces
        // once, and remove a block of nodes.
        let touched: Vec<usize> = if round == 0 {
            (0..600).collect()
        } else {
            (0..300).map(|k| (k * 2 + round) % 600).collect()
        };
        for &n in &touched {
            let p = running_pod(
                seq % 6,
                &format!("r{seq}"),
                KEPT_NAMESPACES[seq % 3],
                &format!("node-{n}"),
            );
            seq += 1;
            cache.add_pod(Arc::new(p));
        }
        if round == 2 {
            client.set("ns1", Some("team1"));
        }
        if round == 3 {
            for n in 500..600 {
                cache.remove_node(Sym::new(&format!("node-{n}")));
            }
        }
        cache.update_snapshot(&mut snap);
        for p in &incoming {
            for _ in 0..2 {
                let fresh = InterPodAffinity::new(InterPodAffinityArgs::default(), client.clone());
                assert!(
                    all_maps(&warm, p, &snap) == all_maps(&fresh, p, &snap),
                    "round {round} pod {}",
                    p.name
                );
            }
        }
    }
}
