//! The unschedulable pool, indexed by rejector plugin.
//!
//! kube-scheduler keeps these pods in one map and, on every cluster event, walks all of them
//! under its queue lock (kubernetes#124384, #125564). Here each pod is also filed under every
//! plugin that rejected it (its UnschedulablePlugins ∪ PendingPlugins), so an event visits only
//! the pods filed under plugins that registered it: O(pods it can help), not O(parked pods).
//!
//! Invariant: `by_plugin[p]` contains `k` iff `pods[k]` exists and `p` is one of its
//! rejectors; `no_rejector` holds the pods with none.
//!
//! A second index serves kube's pre-filter for assigned-pod events
//! (`getUnschedulablePodsWithCrossTopologyTerm`): an added or relabelled pod on a node can only
//! help the pods rejected by PodTopologySpread in its namespace and the pods with a required
//! affinity term that selects it. kube scans the whole pool for them; here
//!
//! - `spread_by_ns[ns]` holds the pods in `ns` whose rejectors include PodTopologySpread;
//! - each required affinity term of each pod is filed under one *anchor* of its selector: the
//!   first `In` requirement files it under every `(key, value)` it names (`by_label`), else the
//!   first `Exists` under its key (`by_key`), else (only `NotIn`/`DoesNotExist`, or an empty
//!   selector) under `any_label`. A term whose selector is absent selects nothing and is not filed.
//!
//! Every pod a term selects carries its anchor label, so the lookup by the added pod's labels
//! finds a superset of the matching pods; the exact `AffinityTerm.Matches` check then keeps
//! the right ones. Invariant: a pod is filed under an anchor iff it is in `pods` and one of its
//! required affinity terms has that anchor. `anti_by_anchor` files required anti-affinity
//! terms the same way; with QueueingHints, assigned-pod events look InterPodAffinity's
//! candidates up in both (`pod_event_candidates`).

use crate::api::labels::{Labels, Operator};
use crate::api::{Pod, PodKey, Sym};
use crate::framework::QueuedPodInfo;
use ahash::AHashSet;

/// Fixed-key hashing for the pool's maps and indexes. Their iteration order is the order an
/// event moves its pods in (and a flush's), and so the order they enter activeQ when their
/// sort keys tie. With fixed keys that order is a function of the pool's history: two
/// schedulers fed the same events, in one process or in two runs, move the same pods in the
/// same order, as `--seed` promises. (A [`PodKey`]'s hash is already fixed, so random keys
/// would add no flood resistance.) Not `BuildHasherDefault<AHasher>`: ahash draws those
/// "fixed" keys at random once per process.
#[derive(Clone, Copy, Default)]
struct Fixed;

impl std::hash::BuildHasher for Fixed {
    type Hasher = ahash::AHasher;
    #[inline]
    fn build_hasher(&self) -> ahash::AHasher {
        const KEYS: ahash::RandomState = ahash::RandomState::with_seeds(
            0x5be0_cd19_137e_2179,
            0x1f83_d9ab_fb41_bd6b,
            0x9b05_688c_2b3e_6c1f,
            0x510e_527f_ade6_82d1,
        );
        KEYS.build_hasher()
    }
}

type FixedMap<K, V> = std::collections::HashMap<K, V, Fixed>;
type KeySet = std::collections::HashSet<PodKey, Fixed>;

/// The PodTopologySpread plugin's name (kube's pre-filter looks for it among the rejectors).
const POD_TOPOLOGY_SPREAD: &str = "PodTopologySpread";

/// Where a required affinity term is filed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Anchor {
    Label(Sym, Sym),
    Key(Sym),
    Any,
}

/// The anchors of a pod's required affinity terms (deduplicated).
fn anchors(pod: &Pod) -> Vec<Anchor> {
    anchors_of(pod, &pod.spec.pod_affinity.required_affinity)
}

/// The anchors of a pod's required anti-affinity terms (deduplicated).
fn anti_anchors(pod: &Pod) -> Vec<Anchor> {
    anchors_of(pod, &pod.spec.pod_affinity.required_anti_affinity)
}

/// The anchors of `terms`, owned by `pod` (deduplicated).
fn anchors_of(pod: &Pod, terms: &[crate::api::PodAffinityTerm]) -> Vec<Anchor> {
    let mut out: Vec<Anchor> = Vec::new();
    for term in terms {
        let Some(sel) = term.selector_for(&pod.labels) else {
            continue;
        };
        let reqs = &sel.requirements;
        if let Some(r) = reqs.iter().find(|r| r.op == Operator::In) {
            out.extend(r.values.iter().map(|&v| Anchor::Label(r.key, v)));
        } else if let Some(r) = reqs.iter().find(|r| r.op == Operator::Exists) {
            out.push(Anchor::Key(r.key));
        } else {
            out.push(Anchor::Any);
        }
    }
    out.sort_unstable_by_key(|a| match *a {
        Anchor::Label(k, v) => (0, k, v),
        Anchor::Key(k) => (1, k, k),
        Anchor::Any => (2, Sym::default(), Sym::default()),
    });
    out.dedup();
    out
}

#[derive(Default)]
pub(crate) struct UnschedulablePods {
    pods: FixedMap<PodKey, QueuedPodInfo>,
    by_plugin: FixedMap<&'static str, KeySet>,
    no_rejector: KeySet,
    spread_by_ns: FixedMap<Sym, KeySet>,
    by_anchor: FixedMap<Anchor, KeySet>,
    /// The same for required anti-affinity terms.
    anti_by_anchor: FixedMap<Anchor, KeySet>,
}

/// The keys filed in `index` under an anchor a pod with `labels` carries (a superset of the
/// pods with a term that selects it).
fn anchor_hits<'s>(
    index: &'s FixedMap<Anchor, KeySet>,
    labels: &Labels,
) -> impl Iterator<Item = &'s PodKey> {
    labels
        .iter()
        .flat_map(move |(k, v)| {
            index
                .get(&Anchor::Label(k, v))
                .into_iter()
                .chain(index.get(&Anchor::Key(k)))
        })
        .chain(index.get(&Anchor::Any))
        .flatten()
}

/// InterPodAffinity's name (its hints for pod events look only at the terms an event's pods
/// match; see [`UnschedulablePods::pod_event_candidates`]).
const INTER_POD_AFFINITY: &str = "InterPodAffinity";

fn file_in<K: std::hash::Hash + Eq>(map: &mut FixedMap<K, KeySet>, k: K, key: &PodKey) {
    map.entry(k).or_default().insert(key.clone());
}

fn unfile_from<K: std::hash::Hash + Eq>(map: &mut FixedMap<K, KeySet>, k: &K, key: &PodKey) {
    if let Some(set) = map.get_mut(k) {
        set.remove(key);
        if set.is_empty() {
            map.remove(k);
        }
    }
}

impl UnschedulablePods {
    pub(crate) fn len(&self) -> usize {
        self.pods.len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
    pub(crate) fn contains(&self, k: &PodKey) -> bool {
        self.pods.contains_key(k)
    }
    pub(crate) fn get(&self, k: &PodKey) -> Option<&QueuedPodInfo> {
        self.pods.get(k)
    }
    pub(crate) fn values(&self) -> impl Iterator<Item = &QueuedPodInfo> {
        self.pods.values()
    }

    fn file(&mut self, q: &QueuedPodInfo) {
        let key = &q.pod.key;
        let mut any = false;
        for p in q.rejectors() {
            any = true;
            self.by_plugin.entry(p).or_default().insert(key.clone());
        }
        if !any {
            self.no_rejector.insert(key.clone());
        }
        if q.rejectors().any(|p| p == POD_TOPOLOGY_SPREAD) {
            file_in(&mut self.spread_by_ns, q.pod.namespace, key);
        }
        for a in anchors(&q.pod) {
            file_in(&mut self.by_anchor, a, key);
        }
        for a in anti_anchors(&q.pod) {
            file_in(&mut self.anti_by_anchor, a, key);
        }
    }

    fn unfile(&mut self, q: &QueuedPodInfo) {
        let key = &q.pod.key;
        for p in q.rejectors() {
            unfile_from(&mut self.by_plugin, &p, key);
        }
        self.no_rejector.remove(key);
        unfile_from(&mut self.spread_by_ns, &q.pod.namespace, key);
        for a in anchors(&q.pod) {
            unfile_from(&mut self.by_anchor, &a, key);
        }
        for a in anti_anchors(&q.pod) {
            unfile_from(&mut self.anti_by_anchor, &a, key);
        }
    }

    pub(crate) fn insert(&mut self, q: QueuedPodInfo) {
        if let Some(old) = self.pods.remove(&q.pod.key) {
            self.unfile(&old);
        }
        self.file(&q);
        self.pods.insert(q.pod.key.clone(), q);
    }

    pub(crate) fn remove(&mut self, k: &PodKey) -> Option<QueuedPodInfo> {
        let q = self.pods.remove(k)?;
        self.unfile(&q);
        Some(q)
    }

    /// Keys of the pods filed under any of `plugins` (each once), plus the pods with no
    /// rejector plugin (an event may always help those).
    pub(crate) fn candidates<'a>(&self, plugins: impl Iterator<Item = &'a str>) -> Vec<PodKey> {
        let mut seen: AHashSet<&PodKey> = AHashSet::new();
        let mut out = Vec::new();
        for p in plugins {
            if let Some(set) = self.by_plugin.get(p) {
                for k in set {
                    if seen.insert(k) {
                        out.push(k.clone());
                    }
                }
            }
        }
        for k in &self.no_rejector {
            if seen.insert(k) {
                out.push(k.clone());
            }
        }
        out
    }

    /// The candidates of an assigned pod's event (`old`, `new`: the pod before and after;
    /// one of them for an add or a delete) under QueueingHints, where kube hints every pod
    /// parked by a plugin that registered the event. They are those of [`Self::candidates`],
    /// except that for the two in-tree plugins whose hints can only say Queue for some pods,
    /// only those pods are listed:
    ///
    /// - InterPodAffinity queues a pod when all its required affinity terms match `new` (and
    ///   did not all match `old`), or all its required anti-affinity terms matched `old` (and
    ///   do not all match `new`): the pods with an affinity term filed under an anchor of
    ///   `new`'s labels, or an anti-affinity term filed under one of `old`'s;
    /// - PodTopologySpread queues only pods of the event pod's namespace: its entries in
    ///   `spread_by_ns`.
    ///
    /// The hints then decide each candidate, so the pods moved are the full scan's (a
    /// property test in `queue/tests.rs` holds the two to each other).
    pub(crate) fn pod_event_candidates<'a>(
        &self,
        plugins: impl Iterator<Item = &'a str>,
        old: Option<&Pod>,
        new: Option<&Pod>,
    ) -> Vec<PodKey> {
        let mut keys: Vec<&PodKey> = Vec::new();
        for p in plugins {
            match p {
                INTER_POD_AFFINITY => {
                    if let Some(n) = new {
                        keys.extend(anchor_hits(&self.by_anchor, &n.labels));
                    }
                    if let Some(o) = old {
                        keys.extend(anchor_hits(&self.anti_by_anchor, &o.labels));
                    }
                }
                POD_TOPOLOGY_SPREAD => {
                    for ns in [new.map(|p| p.namespace), old.map(|p| p.namespace)]
                        .into_iter()
                        .flatten()
                    {
                        keys.extend(self.spread_by_ns.get(&ns).into_iter().flatten());
                    }
                }
                _ => keys.extend(self.by_plugin.get(p).into_iter().flatten()),
            }
        }
        keys.extend(self.no_rejector.iter());
        let mut seen: AHashSet<&PodKey> = AHashSet::with_capacity(keys.len());
        keys.into_iter()
            .filter(|k| seen.insert(k))
            .cloned()
            .collect()
    }

    /// kube's `getUnschedulablePodsWithCrossTopologyTerm(pod)`: the pods rejected by
    /// PodTopologySpread in `pod`'s namespace, and the pods with a required affinity term that
    /// selects `pod` (`ns_labels`: the labels of `pod`'s namespace). Found through the anchor
    /// index: the cost is the number of pods filed under `pod`'s labels, not the pool size.
    pub(crate) fn cross_topology_candidates(
        &self,
        pod: &Pod,
        ns_labels: Option<&Labels>,
    ) -> Vec<PodKey> {
        let mut seen: AHashSet<&PodKey> = AHashSet::new();
        let mut out = Vec::new();
        if let Some(set) = self.spread_by_ns.get(&pod.namespace) {
            for k in set {
                if seen.insert(k) {
                    out.push(k.clone());
                }
            }
        }
        let mut sets: Vec<&KeySet> = Vec::new();
        for (k, v) in pod.labels.iter() {
            sets.extend(self.by_anchor.get(&Anchor::Label(k, v)));
            sets.extend(self.by_anchor.get(&Anchor::Key(k)));
        }
        sets.extend(self.by_anchor.get(&Anchor::Any));
        for k in sets.into_iter().flatten() {
            if seen.contains(k) {
                continue;
            }
            let Some(q) = self.pods.get(k) else { continue };
            let owner = &q.pod;
            let terms = &owner.spec.pod_affinity.required_affinity;
            if terms.iter().any(|t| t.matches_pod(owner, pod, ns_labels)) {
                seen.insert(k);
                out.push(k.clone());
            }
        }
        out
    }

    /// All keys (wildcard events, flushes).
    pub(crate) fn keys(&self) -> Vec<PodKey> {
        self.pods.keys().cloned().collect()
    }

    /// Checks the index invariant (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<(), String> {
        for (k, q) in &self.pods {
            let mut any = false;
            for p in q.rejectors() {
                any = true;
                if !self.by_plugin.get(p).is_some_and(|s| s.contains(k)) {
                    return Err(format!("{k} not filed under {p}"));
                }
            }
            if !any && !self.no_rejector.contains(k) {
                return Err(format!("{k} not filed as rejector-less"));
            }
        }
        let filed: usize = self.by_plugin.values().map(|s| s.len()).sum::<usize>();
        let expected: usize = self
            .pods
            .values()
            .map(|q| q.rejectors().count())
            .sum::<usize>();
        if filed != expected {
            return Err(format!("{filed} filings for {expected} rejections"));
        }
        let mut anchored = 0;
        for (k, q) in &self.pods {
            for a in anchors(&q.pod) {
                anchored += 1;
                if !self.by_anchor.get(&a).is_some_and(|s| s.contains(k)) {
                    return Err(format!("{k} not filed under anchor {a:?}"));
                }
            }
            let spread = q.rejectors().any(|p| p == POD_TOPOLOGY_SPREAD);
            let filed = self
                .spread_by_ns
                .get(&q.pod.namespace)
                .is_some_and(|s| s.contains(k));
            if spread != filed {
                return Err(format!(
                    "{k}: spread filing {filed}, rejected by spread {spread}"
                ));
            }
        }
        let filed: usize = self.by_anchor.values().map(|s| s.len()).sum();
        if filed != anchored {
            return Err(format!("{filed} anchor filings for {anchored} anchors"));
        }
        let spread_filed: usize = self.spread_by_ns.values().map(|s| s.len()).sum();
        let spread_expected = self
            .pods
            .values()
            .filter(|q| q.rejectors().any(|p| p == POD_TOPOLOGY_SPREAD))
            .count();
        if spread_filed != spread_expected {
            return Err(format!(
                "{spread_filed} spread filings for {spread_expected} pods"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Pod, PodSpecInfo};
    use proptest::prelude::*;
    use std::sync::Arc;

    fn qpi(name: &str, plugins: &[&'static str]) -> QueuedPodInfo {
        let pod = Pod::new("ns", name, Arc::new(PodSpecInfo::default()));
        let mut q = QueuedPodInfo::new(Arc::new(pod), std::time::Duration::ZERO);
        q.unschedulable_plugins = plugins.to_vec();
        q
    }

    const PLUGINS: [&str; 3] = ["A", "B", "C"];

    use crate::api::labels::{LabelSelector, Requirement};
    use crate::api::{PodAffinity, PodAffinityTerm};

    /// A generated requirement: (key 0..2, op 0..4, values ⊆ 0..2).
    type GenReq = (usize, u8, Vec<usize>);
    /// A generated term: requirements (None: absent selector), own namespace / listed
    /// namespaces / namespace selector.
    type GenTerm = (Option<Vec<GenReq>>, u8);

    const KEYS: [&str; 2] = ["app", "tier"];
    const VALUES: [&str; 2] = ["x", "y"];
    const NAMESPACES: [&str; 2] = ["ns1", "ns2"];

    fn requirement(&(k, op, ref vs): &GenReq) -> Requirement {
        let op = [
            Operator::In,
            Operator::NotIn,
            Operator::Exists,
            Operator::DoesNotExist,
        ][op as usize % 4];
        let values = match op {
            Operator::In | Operator::NotIn => {
                let mut v: Vec<Sym> = vs.iter().map(|&i| Sym::new(VALUES[i])).collect();
                if v.is_empty() {
                    v.push(Sym::new(VALUES[0]));
                }
                v
            }
            _ => Vec::new(),
        };
        Requirement {
            key: Sym::new(KEYS[k]),
            op,
            values,
            int_value: 0,
        }
    }

    fn term((reqs, ns): &GenTerm) -> PodAffinityTerm {
        PodAffinityTerm {
            label_selector: reqs.as_ref().map(|r| LabelSelector {
                requirements: r.iter().map(requirement).collect(),
            }),
            namespaces: if *ns == 1 {
                vec![Sym::new("ns2")]
            } else {
                vec![]
            },
            namespace_selector: match ns {
                2 => Some(LabelSelector::default()),
                3 => Some(LabelSelector {
                    requirements: vec![requirement(&(0, 0, vec![0]))],
                }),
                _ => None,
            },
            topology_key: Sym::new("zone"),
            match_label_keys: vec![],
            mismatch_label_keys: vec![],
        }
    }

    fn labels(ls: &[(usize, usize)]) -> Labels {
        Labels::from_pairs(ls.iter().map(|&(k, v)| (KEYS[k], VALUES[v])))
    }

    fn affinity_pod(
        name: &str,
        ns: usize,
        own: &[(usize, usize)],
        terms: &[GenTerm],
        plugins: &[&'static str],
    ) -> QueuedPodInfo {
        let spec = PodSpecInfo {
            pod_affinity: PodAffinity {
                required_affinity: terms.iter().map(term).collect(),
                ..PodAffinity::default()
            },
            ..PodSpecInfo::default()
        };
        let mut pod = Pod::new(NAMESPACES[ns], name, Arc::new(spec));
        pod.labels = Arc::new(labels(own));
        let mut q = QueuedPodInfo::new(Arc::new(pod), std::time::Duration::ZERO);
        q.unschedulable_plugins = plugins.to_vec();
        q
    }

    /// kube's `getUnschedulablePodsWithCrossTopologyTerm`, as the scan it is.
    fn scan(u: &UnschedulablePods, added: &Pod, ns_labels: Option<&Labels>) -> Vec<PodKey> {
        let mut v: Vec<PodKey> = u
            .values()
            .filter(|q| {
                (q.rejectors().any(|p| p == POD_TOPOLOGY_SPREAD)
                    && q.pod.namespace == added.namespace)
                    || q.pod
                        .spec
                        .pod_affinity
                        .required_affinity
                        .iter()
                        .any(|t| t.matches_pod(&q.pod, added, ns_labels))
            })
            .map(|q| q.pod.key.clone())
            .collect();
        v.sort();
        v
    }

    /// Two pools fed the same inserts and removes list their pods in the same order: an
    /// event's moves (and a flush's) are a function of the queue's history, not of a map's
    /// random keys. (With per-map random keys, 300 pods came out in different orders.)
    #[test]
    fn two_pools_with_one_history_list_their_pods_in_one_order() {
        let fill = || {
            let mut u = UnschedulablePods::default();
            for i in 0..300 {
                u.insert(qpi(&format!("p{i}"), &[PLUGINS[i % 3]]));
                if i % 7 == 0 {
                    u.insert(qpi(&format!("none{i}"), &[]));
                }
            }
            for i in (0..300).step_by(5) {
                u.remove(&PodKey::new("ns", &format!("p{i}")));
            }
            u
        };
        let (a, b) = (fill(), fill());
        let listed = |u: &UnschedulablePods| {
            (
                u.candidates(["A", "C"].into_iter()),
                u.keys(),
                u.values().map(|q| q.pod.key.clone()).collect::<Vec<_>>(),
            )
        };
        let (ca, ka, va) = listed(&a);
        assert_eq!(ca.len(), 160 + 43);
        assert_eq!((ca, ka, va), listed(&b));
    }

    /// The same in two processes: the order comes from no key drawn at run time. (With
    /// ahash's per-process keys the two children listed 300 pods in different orders.)
    #[test]
    fn two_processes_with_one_history_list_their_pods_in_one_order() {
        const CHILD: &str = "TIDEGATE_POOL_ORDER_CHILD";
        const NAME: &str = "queue::unschedulable::tests::two_processes_with_one_history_list_their_pods_in_one_order";
        if std::env::var_os(CHILD).is_some() {
            let mut u = UnschedulablePods::default();
            for i in 0..300 {
                u.insert(qpi(&format!("p{i}"), &[PLUGINS[i % 3]]));
            }
            let keys: Vec<String> = u.keys().iter().map(|k| k.as_str().to_owned()).collect();
            println!("ORDER {}", keys.join(","));
            return;
        }
        let run = || {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            // The harness prints the test's name first, on the same line.
            let order = text
                .lines()
                .find_map(|l| l.split_once("ORDER ").map(|(_, o)| o.to_owned()));
            order.unwrap_or_else(|| panic!("the child printed no order: {text}"))
        };
        let (a, b) = (run(), run());
        assert_eq!(a.matches(',').count(), 299);
        assert_eq!(a, b);
    }

    #[test]
    fn assigned_pod_add_visits_only_the_pods_whose_terms_can_select_it() {
        let mut u = UnschedulablePods::default();
        let want_x: GenTerm = (Some(vec![(0, 0, vec![0])]), 0); // app In (x)
        let want_y: GenTerm = (Some(vec![(0, 0, vec![1])]), 0); // app In (y)
        for i in 0..1000 {
            u.insert(affinity_pod(
                &format!("x{i}"),
                0,
                &[],
                std::slice::from_ref(&want_x),
                &["InterPodAffinity"],
            ));
            u.insert(affinity_pod(
                &format!("y{i}"),
                0,
                &[],
                std::slice::from_ref(&want_y),
                &["InterPodAffinity"],
            ));
        }
        // Rejected by spread in each namespace; no affinity.
        u.insert(affinity_pod("spread1", 0, &[], &[], &[POD_TOPOLOGY_SPREAD]));
        u.insert(affinity_pod("spread2", 1, &[], &[], &[POD_TOPOLOGY_SPREAD]));
        // tier Exists, and tier DoesNotExist (filed under "any").
        u.insert(affinity_pod(
            "tier",
            0,
            &[],
            &[(Some(vec![(1, 2, vec![])]), 0)],
            &["A"],
        ));
        u.insert(affinity_pod(
            "notier",
            0,
            &[],
            &[(Some(vec![(1, 3, vec![])]), 0)],
            &["A"],
        ));
        // app In (x), but the term looks only in ns2.
        u.insert(affinity_pod(
            "elsewhere",
            0,
            &[],
            &[(want_x.0.clone(), 1)],
            &["A"],
        ));
        u.check().unwrap();

        let mut added = Pod::new("ns1", "added", Arc::new(PodSpecInfo::default()));
        added.labels = Arc::new(labels(&[(0, 0)])); // app=x
        let mut got = u.cross_topology_candidates(&added, None);
        got.sort();
        assert_eq!(got, scan(&u, &added, None));
        assert_eq!(got.len(), 1000 + 2); // the x pods, spread1, notier
        assert!(got.contains(&PodKey::new("ns1", "notier")));
        assert!(!got.contains(&PodKey::new("ns1", "elsewhere")));
        assert!(!got.contains(&PodKey::new("ns2", "spread2")));

        // Removing the pods empties the index.
        for k in u.keys() {
            u.remove(&k);
        }
        u.check().unwrap();
        assert!(u.by_anchor.is_empty() && u.spread_by_ns.is_empty());
    }

    #[test]
    fn candidates_are_only_the_pods_an_event_can_help() {
        let mut u = UnschedulablePods::default();
        for i in 0..1000 {
            u.insert(qpi(&format!("a{i}"), &["A"]));
        }
        u.insert(qpi("b", &["B"]));
        u.insert(qpi("ab", &["A", "B"]));
        u.insert(qpi("err", &[]));
        let mut c = u.candidates(["B"].into_iter());
        c.sort();
        assert_eq!(
            c,
            vec![
                PodKey::new("ns", "ab"),
                PodKey::new("ns", "b"),
                PodKey::new("ns", "err")
            ]
        );
        u.check().unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 3 } else { 256 },
            ..ProptestConfig::default()
        })]
        #[test]
        fn index_stays_consistent(ops in proptest::collection::vec((0u8..2, 0usize..20, proptest::collection::vec(0usize..3, 0..3)), 1..200)) {
            let mut u = UnschedulablePods::default();
            for (op, k, ps) in ops {
                let name = format!("p{k}");
                if op == 0 {
                    let mut plugins: Vec<&'static str> = ps.iter().map(|&i| PLUGINS[i]).collect();
                    plugins.sort_unstable();
                    plugins.dedup();
                    u.insert(qpi(&name, &plugins));
                } else {
                    u.remove(&PodKey::new("ns", &name));
                }
                prop_assert!(u.check().is_ok(), "{:?}", u.check());
            }
        }

        /// The anchor index finds exactly the pods kube's scan finds, for random pools,
        /// selectors (all four operators, absent, empty), namespaces and added pods.
        #[test]
        fn cross_topology_candidates_equal_the_scan(
            pods in proptest::collection::vec((
                0usize..2,
                proptest::collection::vec((0usize..2, 0usize..2), 0..3),
                proptest::collection::vec((
                    proptest::option::weighted(0.9, proptest::collection::vec((0usize..2, 0u8..4, proptest::collection::vec(0usize..2, 0..3)), 0..3)),
                    0u8..4,
                ), 0..3),
                proptest::bool::ANY,
            ), 0..40),
            added_ns in 0usize..2,
            added_labels in proptest::collection::vec((0usize..2, 0usize..2), 0..3),
            ns_labelled in proptest::bool::ANY,
            removals in proptest::collection::vec(0usize..40, 0..10),
        ) {
            let mut u = UnschedulablePods::default();
            for (i, (ns, own, terms, spread)) in pods.iter().enumerate() {
                let plugins: &[&'static str] = if *spread { &[POD_TOPOLOGY_SPREAD] } else { &["InterPodAffinity"] };
                u.insert(affinity_pod(&format!("p{i}"), *ns, own, terms, plugins));
            }
            for r in removals {
                for ns in NAMESPACES {
                    u.remove(&PodKey::new(ns, &format!("p{r}")));
                }
            }
            prop_assert!(u.check().is_ok(), "{:?}", u.check());
            let mut added = Pod::new(NAMESPACES[added_ns], "added", Arc::new(PodSpecInfo::default()));
            added.labels = Arc::new(labels(&added_labels));
            let ns_labels = labels(&[(0, 0)]);
            let ns_labels = ns_labelled.then_some(&ns_labels);
            let mut got = u.cross_topology_candidates(&added, ns_labels);
            got.sort();
            prop_assert_eq!(got, scan(&u, &added, ns_labels));
        }
    }
}
