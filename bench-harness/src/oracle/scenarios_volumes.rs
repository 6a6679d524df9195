//! Volumes in the random scenarios (issue 35, item 3): some scenarios get storage classes,
//! PersistentVolumes, claims and CSINodes of their own, and pods that mount claims, so the
//! differential judges the four volume plugins (VolumeBinding, VolumeRestrictions,
//! VolumeZone, NodeVolumeLimits) on varied clusters beside every other plugin.
//!
//! Everything stays inside the scenario: the classes are `<namespace>-local` and
//! `<namespace>-immediate`, the volumes `<namespace>-pv-<k>` and `<namespace>-csi-pv-<k>`, the
//! CSI driver `<namespace>.csi.example.com`, a CSINode is named after its (the scenario's)
//! node, and the claims live in the scenario's namespace. What a scenario draws comes from its
//! fourth ChaCha8 stream, so the rest of the scenario is what a mix without volumes draws.
//!
//! What is drawn, and why:
//!
//! - `<namespace>-local` (provisioner `kubernetes.io/no-provisioner`, WaitForFirstConsumer):
//!   VolumeBinding's Filter matches each claim to a volume on the node (smallest fit, access
//!   modes, node affinity), and fails a node without one (nothing provisions).
//! - Sometimes `<namespace>-immediate` (Immediate). A few claims name that class whether the
//!   scenario drew it or not: unbound immediate claims (no PV controller binds them) and claims
//!   of a missing class, both keep their pod pending at PreFilter ("pod has unbound immediate
//!   PersistentVolumeClaims").
//! - Local volumes per node (1Gi, 2Gi or 5Gi; ReadWriteOnce or ReadWriteOncePod; a `local`
//!   path and node affinity `kubernetes.io/hostname In [node]`), some labelled with their
//!   node's zone (VolumeZone reads a bound volume's labels). A volume `createAny` makes has no
//!   status (kube's API server sets phase Pending, and scheduler_perf runs no PV controller),
//!   so an `updateAny` of the same object with `status.phase: Available` follows it.
//! - Claims of `<namespace>-local` (`data-<k>`: 1Gi or 2Gi, ReadWriteOnce or sometimes
//!   ReadWriteOncePod), unbound: the scheduler binds them (its Reserve assumes, its PreBind
//!   writes the volume's claimRef, scheduler_perf's fake PV controller completes the claim).
//! - In some scenarios a CSI driver: CSINodes on some of the nodes, each with an
//!   `allocatable.count` of 1 to 3, and pre-bound CSI volumes (`csi-<k>` claims with
//!   `volumeName` and `pv.kubernetes.io/bind-completed`, volumes with a `claimRef`, both
//!   brought to phase Bound by an `updateAny`, as scheduler_perf's own pre-bound volumes are),
//!   some labelled with one or two of the scenario's zones (`a__b`, kube's multi-zone form),
//!   a few with the beta zone label: NodeVolumeLimits' limits bind and VolumeZone filters.
//! - Of the pods, a share mount one claim (a few two), each claim used by one pod, except a few
//!   ReadWriteOncePod claims that a later pod names again, so VolumeRestrictions rejects the
//!   second while the first holds it (or preemption takes it back).

use k8s_openapi::api::core::v1 as core;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::draw::{between, chance, pick};

/// The node labels the scenarios set (`scenarios::HOSTNAME` and `scenarios::ZONE`, written
/// again here: `scenarios` imports this file, and a folder's files import no circle).
const HOSTNAME: &str = "kubernetes.io/hostname";
const ZONE: &str = "topology.kubernetes.io/zone";

/// The annotation of a claim whose binding is complete.
pub const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The deprecated zone label, which VolumeZone matches against a node's GA label.
pub const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
pub const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";
const RWO: &str = "ReadWriteOnce";
const RWOP: &str = "ReadWriteOncePod";

/// How often scenarios get volumes, and what they get. Percentages are of the scenarios,
/// volumes, nodes, pods or claims drawn.
#[derive(Clone, Debug)]
pub struct VolumeMix {
    /// The share of scenarios with volumes.
    pub pct: u32,
    /// Of those, the share with the `<namespace>-immediate` class.
    pub immediate_pct: u32,
    /// Local volumes per node, inclusive.
    pub local_pvs: (u32, u32),
    pub capacities: &'static [&'static str],
    /// Of the local volumes and local claims, the share that are ReadWriteOncePod.
    pub once_pod_pct: u32,
    /// Of the volumes, the share with a zone label; of those, with two zones (where the
    /// scenario has two), and with the beta label key.
    pub zone_pct: u32,
    pub two_zones_pct: u32,
    pub beta_zone_pct: u32,
    /// The share of scenarios with volumes that have a CSI driver; of their nodes, the share
    /// with a CSINode, and its `allocatable.count`, inclusive.
    pub csi_pct: u32,
    pub csi_node_pct: u32,
    pub csi_limits: (u32, u32),
    /// Of the pods, the share that mount a claim; of those, the share that mount two.
    pub claim_pct: u32,
    pub two_claims_pct: u32,
    /// Of the claims (in a scenario with a CSI driver), the share that are pre-bound CSI ones.
    pub csi_claim_pct: u32,
    pub claim_sizes: &'static [&'static str],
    /// Of the local claims, the share of `<namespace>-immediate` (unbound for good).
    pub unbound_pct: u32,
    /// Of the claims, the share that name an earlier pod's ReadWriteOncePod claim instead.
    pub shared_pct: u32,
}

impl VolumeMix {
    pub const DEFAULT: VolumeMix = VolumeMix {
        pct: 25,
        immediate_pct: 50,
        local_pvs: (0, 2),
        capacities: &["1Gi", "2Gi", "5Gi"],
        once_pod_pct: 25,
        zone_pct: 40,
        two_zones_pct: 25,
        beta_zone_pct: 20,
        csi_pct: 60,
        csi_node_pct: 70,
        csi_limits: (1, 3),
        claim_pct: 50,
        two_claims_pct: 15,
        csi_claim_pct: 45,
        claim_sizes: &["1Gi", "2Gi"],
        unbound_pct: 10,
        shared_pct: 20,
    };
}

/// A scenario's volume objects, as the API objects scheduler_perf's `createAny` creates
/// (without status: [`status_twin`] gives the `updateAny` object).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VolumeObjects {
    /// StorageClasses (cluster-scoped).
    pub classes: Vec<Value>,
    /// CSINodes (cluster-scoped), named after their nodes.
    pub csi_nodes: Vec<Value>,
    /// PersistentVolumeClaims (in the scenario's namespace).
    pub claims: Vec<Value>,
    /// PersistentVolumes (cluster-scoped).
    pub volumes: Vec<Value>,
}

pub fn local_class(ns: &str) -> String {
    format!("{ns}-local")
}

pub fn immediate_class(ns: &str) -> String {
    format!("{ns}-immediate")
}

pub fn csi_driver(ns: &str) -> String {
    format!("{ns}.csi.example.com")
}

/// The scenario's volume objects, if it draws them; the pods that draw claims get
/// `persistentVolumeClaim` volumes (`vol-0`, `vol-1`) naming them.
pub fn make_volumes(
    rng: &mut ChaCha8Rng,
    mix: &VolumeMix,
    ns: &str,
    nodes: &[core::Node],
    pods: &mut [core::Pod],
) -> Option<VolumeObjects> {
    if !chance(rng, mix.pct) {
        return None;
    }
    let mut v = VolumeObjects::default();
    v.classes
        .push(storage_class(&local_class(ns), "WaitForFirstConsumer"));
    if chance(rng, mix.immediate_pct) {
        v.classes
            .push(storage_class(&immediate_class(ns), "Immediate"));
    }
    let zones: Vec<String> = nodes
        .iter()
        .filter_map(|n| node_label(n, ZONE))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for n in nodes {
        for _ in 0..between(rng, mix.local_pvs) {
            let pv = local_pv(rng, mix, ns, v.volumes.len(), n);
            v.volumes.push(pv);
        }
    }
    let csi = chance(rng, mix.csi_pct);
    if csi {
        for n in nodes {
            if chance(rng, mix.csi_node_pct) {
                let count = between(rng, mix.csi_limits);
                v.csi_nodes.push(csi_node(ns, n, count));
            }
        }
    }
    // The ReadWriteOncePod claims one pod names, which a later pod may name again.
    let mut shareable: Vec<String> = Vec::new();
    for p in pods.iter_mut() {
        if !chance(rng, mix.claim_pct) {
            continue;
        }
        let count = if chance(rng, mix.two_claims_pct) {
            2
        } else {
            1
        };
        let (mut names, mut once_pod) = (Vec::new(), Vec::new());
        for _ in 0..count {
            if !shareable.is_empty() && chance(rng, mix.shared_pct) {
                let at = rng.random_range(0..shareable.len() as u32) as usize;
                names.push(shareable.remove(at));
            } else if csi && chance(rng, mix.csi_claim_pct) {
                names.push(bound_csi(rng, mix, ns, &zones, &mut v));
            } else {
                let (name, rwop) = local_claim(rng, mix, ns, &mut v);
                if rwop {
                    once_pod.push(name.clone());
                }
                names.push(name);
            }
        }
        // Shared only with a later pod, never twice in one pod.
        shareable.extend(once_pod);
        if let Some(spec) = p.spec.as_mut() {
            spec.volumes = Some(names.into_iter().enumerate().map(claim_volume).collect());
        }
    }
    Some(v)
}

fn claim_volume((k, claim): (usize, String)) -> core::Volume {
    core::Volume {
        name: format!("vol-{k}"),
        persistent_volume_claim: Some(core::PersistentVolumeClaimVolumeSource {
            claim_name: claim,
            read_only: None,
        }),
        ..Default::default()
    }
}

fn node_label(n: &core::Node, key: &str) -> Option<String> {
    n.metadata.labels.as_ref()?.get(key).cloned()
}

fn storage_class(name: &str, mode: &str) -> Value {
    json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": NO_PROVISIONER,
        "reclaimPolicy": "Retain",
        "volumeBindingMode": mode
    })
}

/// A zone label (`key: value`) drawn from `zones` (one, or two joined by `__`), if drawn.
fn zone_label(rng: &mut ChaCha8Rng, mix: &VolumeMix, zones: &[String]) -> Option<Value> {
    if zones.is_empty() || !chance(rng, mix.zone_pct) {
        return None;
    }
    let first = rng.random_range(0..zones.len() as u32) as usize;
    let mut value = zones[first].clone();
    if zones.len() > 1 && chance(rng, mix.two_zones_pct) {
        let other =
            (first + 1 + rng.random_range(0..zones.len() as u32 - 1) as usize) % zones.len();
        value = format!("{value}__{}", zones[other]);
    }
    let key = if chance(rng, mix.beta_zone_pct) {
        BETA_ZONE
    } else {
        ZONE
    };
    Some(json!({ key: value }))
}

/// Local volume `k` on node `n`, of the scenario's WaitForFirstConsumer class.
fn local_pv(rng: &mut ChaCha8Rng, mix: &VolumeMix, ns: &str, k: usize, n: &core::Node) -> Value {
    let node = n.metadata.name.clone().unwrap_or_default();
    let mode = if chance(rng, mix.once_pod_pct) {
        RWOP
    } else {
        RWO
    };
    let capacity = pick(rng, mix.capacities);
    let zone: Vec<String> = node_label(n, ZONE).into_iter().collect();
    let mut pv = json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": format!("{ns}-pv-{k}")},
        "spec": {
            "accessModes": [mode],
            "capacity": {"storage": capacity},
            "storageClassName": local_class(ns),
            "persistentVolumeReclaimPolicy": "Retain",
            "local": {"path": format!("/mnt/pv-{k}")},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": HOSTNAME, "operator": "In", "values": [node]}
            ]}]}}
        }
    });
    if let Some(l) = zone_label(rng, mix, &zone) {
        pv["metadata"]["labels"] = l;
    }
    pv
}

fn csi_node(ns: &str, n: &core::Node, count: u32) -> Value {
    let node = n.metadata.name.clone().unwrap_or_default();
    json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"name": node},
        "spec": {"drivers": [
            {"name": csi_driver(ns), "nodeID": node, "allocatable": {"count": count}}
        ]}
    })
}

/// An unbound claim `data-<k>`: of the local class, or (`unbound_pct`) of the immediate one,
/// which the scenario may lack. Its name, and whether it is ReadWriteOncePod.
fn local_claim(
    rng: &mut ChaCha8Rng,
    mix: &VolumeMix,
    ns: &str,
    v: &mut VolumeObjects,
) -> (String, bool) {
    let name = format!("data-{}", v.claims.len());
    let class = if chance(rng, mix.unbound_pct) {
        immediate_class(ns)
    } else {
        local_class(ns)
    };
    let rwop = chance(rng, mix.once_pod_pct);
    let mode = if rwop { RWOP } else { RWO };
    v.claims.push(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "accessModes": [mode],
            "resources": {"requests": {"storage": pick(rng, mix.claim_sizes)}},
            "storageClassName": class
        }
    }));
    (name, rwop)
}

/// A pre-bound CSI claim `csi-<k>` and its volume `<namespace>-csi-pv-<k>`; the claim's name.
fn bound_csi(
    rng: &mut ChaCha8Rng,
    mix: &VolumeMix,
    ns: &str,
    zones: &[String],
    v: &mut VolumeObjects,
) -> String {
    let k = v.claims.len();
    let (claim, pv) = (format!("csi-{k}"), format!("{ns}-csi-pv-{k}"));
    let size = pick(rng, mix.claim_sizes);
    v.claims.push(json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": ns, "annotations": {BIND_COMPLETED: "yes"}},
        "spec": {
            "accessModes": [RWO],
            "resources": {"requests": {"storage": size}},
            "storageClassName": "",
            "volumeName": pv
        }
    }));
    let mut volume = json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": pv},
        "spec": {
            "accessModes": [RWO],
            "capacity": {"storage": size},
            "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Retain",
            "csi": {"driver": csi_driver(ns), "volumeHandle": pv},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "namespace": ns, "name": claim}
        }
    });
    if let Some(l) = zone_label(rng, mix, zones) {
        volume["metadata"]["labels"] = l;
    }
    v.volumes.push(volume);
    claim
}

/// The `updateAny` object that gives a created volume or claim its phase: a volume is
/// Available, or Bound when it has a claimRef; a claim with a `volumeName` is Bound (an
/// unbound claim keeps the Pending kube gives it: `None`).
pub fn status_twin(o: &Value) -> Option<Value> {
    let phase = match o["kind"].as_str()? {
        "PersistentVolume" if o["spec"]["claimRef"].is_object() => "Bound",
        "PersistentVolume" => "Available",
        "PersistentVolumeClaim" if o["spec"]["volumeName"].is_string() => "Bound",
        _ => return None,
    };
    let mut twin = o.clone();
    twin["status"] = json!({ "phase": phase });
    Some(twin)
}

/// A scenario's volume ops onto `ops`, their templates through `add` (path, object → path)
/// under `dir`: the classes, the CSINodes, the claims (each pre-bound one then brought to
/// Bound), the volumes (each then brought to Available or Bound). The claims come before the
/// volumes whose claimRef names them.
pub fn volume_ops(
    v: &VolumeObjects,
    ns: &str,
    dir: &str,
    add: &mut dyn FnMut(String, Value) -> String,
    ops: &mut String,
) {
    let mut op = |opcode: &str, path: String, namespace: Option<&str>| {
        let _ = write!(ops, "  - opcode: {opcode}\n    templatePath: {path}\n");
        if let Some(ns) = namespace {
            let _ = writeln!(ops, "    namespace: {ns}");
        }
    };
    let groups = [
        ("storageclass", &v.classes, None),
        ("csinode", &v.csi_nodes, None),
        ("pvc", &v.claims, Some(ns)),
        ("pv", &v.volumes, None),
    ];
    for (kind, objects, namespace) in groups {
        for (k, o) in objects.iter().enumerate() {
            op(
                "createAny",
                add(format!("{dir}/{kind}-{k}.yaml"), o.clone()),
                namespace,
            );
            if let Some(twin) = status_twin(o) {
                let path = add(format!("{dir}/{kind}-{k}-status.yaml"), twin);
                op("updateAny", path, namespace);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::scenarios::{self, Mix, SCENARIO_LABEL};
    use super::*;

    #[test]
    fn the_label_keys_are_those_of_the_scenarios() {
        assert_eq!(HOSTNAME, scenarios::HOSTNAME);
        assert_eq!(ZONE, scenarios::ZONE);
    }
    use std::collections::BTreeMap;

    /// The default mix with volumes in `pct` of the scenarios, and no pod groups.
    fn with_volumes(pct: u32) -> Mix {
        Mix {
            volumes: VolumeMix {
                pct,
                ..VolumeMix::DEFAULT
            },
            group_pct: 0,
            ..Mix::DEFAULT
        }
    }

    fn s(v: &Value) -> &str {
        v.as_str().unwrap_or_else(|| panic!("a string: {v}"))
    }

    /// Every object of scenario `sc` names only the scenario's own: classes, volumes and
    /// CSINodes prefixed with its namespace (CSINodes and node affinity naming its nodes, zone
    /// labels its zones), claims in its namespace, pods mounting its claims (each by one pod,
    /// a ReadWriteOncePod one by at most two).
    fn check_inside(sc: &scenarios::Scenario) {
        let ns = sc.namespace();
        let v = sc.volumes.as_ref().unwrap();
        let node_names: BTreeSet<String> = sc
            .nodes
            .iter()
            .map(|n| n.metadata.name.clone().unwrap())
            .collect();
        let zones: BTreeSet<String> = sc
            .nodes
            .iter()
            .filter_map(|n| node_label(n, ZONE))
            .collect();
        let classes: BTreeSet<&str> = v
            .classes
            .iter()
            .map(|c| s(&c["metadata"]["name"]))
            .collect();
        assert!(classes.contains(local_class(&ns).as_str()));
        for c in &v.classes {
            assert!(s(&c["metadata"]["name"]).starts_with(&format!("{ns}-")));
            assert_eq!(c["provisioner"], NO_PROVISIONER);
        }
        for c in &v.csi_nodes {
            let name = s(&c["metadata"]["name"]);
            assert!(node_names.contains(name), "{name}");
            let d = &c["spec"]["drivers"][0];
            assert_eq!(d["name"], csi_driver(&ns).as_str());
            assert_eq!(d["nodeID"], name);
            assert!((1..=3).contains(&d["allocatable"]["count"].as_u64().unwrap()));
        }
        let mut claims: BTreeMap<String, &Value> = BTreeMap::new();
        for c in &v.claims {
            assert_eq!(c["metadata"]["namespace"], ns.as_str());
            assert!(!c["spec"]["accessModes"].as_array().unwrap().is_empty());
            claims.insert(s(&c["metadata"]["name"]).to_string(), c);
        }
        for pv in &v.volumes {
            let name = s(&pv["metadata"]["name"]);
            assert!(name.starts_with(&format!("{ns}-")), "{name}");
            let spec = &pv["spec"];
            assert!(spec["capacity"]["storage"].is_string());
            assert_eq!(spec["accessModes"].as_array().unwrap().len(), 1);
            assert!(spec["local"].is_object() != spec["csi"].is_object(), "{pv}");
            if spec["local"].is_object() {
                let term = &spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0];
                let e = &term["matchExpressions"][0];
                assert_eq!(e["key"], HOSTNAME);
                assert!(node_names.contains(s(&e["values"][0])));
                assert_eq!(spec["storageClassName"], local_class(&ns).as_str());
            } else {
                assert_eq!(spec["csi"]["driver"], csi_driver(&ns).as_str());
                assert_eq!(spec["claimRef"]["namespace"], ns.as_str());
                let claim = claims[s(&spec["claimRef"]["name"])];
                assert_eq!(claim["spec"]["volumeName"], name);
                assert_eq!(claim["metadata"]["annotations"][BIND_COMPLETED], "yes");
            }
            for (key, value) in pv["metadata"]["labels"].as_object().into_iter().flatten() {
                assert!(key == ZONE || key == BETA_ZONE, "{key}");
                for z in s(value).split("__") {
                    assert!(zones.contains(z), "{z} of {zones:?}");
                }
            }
        }
        let mut used: BTreeMap<String, usize> = BTreeMap::new();
        for p in &sc.pods {
            let spec = p.spec.as_ref().unwrap();
            assert_eq!(spec.node_selector.as_ref().unwrap()[SCENARIO_LABEL], ns);
            let mut own = BTreeSet::new();
            for vol in spec.volumes.iter().flatten() {
                let claim = &vol.persistent_volume_claim.as_ref().unwrap().claim_name;
                assert!(claims.contains_key(claim), "{ns}: {claim}");
                assert!(own.insert(claim.clone()), "{claim} twice in one pod");
                *used.entry(claim.clone()).or_default() += 1;
            }
        }
        for (claim, n) in used {
            let rwop = claims[&claim]["spec"]["accessModes"][0] == RWOP;
            assert!(n == 1 || (rwop && n == 2), "{ns}/{claim} used by {n}");
        }
    }

    #[test]
    fn volumes_stay_inside_their_scenario() {
        let mix = with_volumes(100);
        for i in 0..150 {
            check_inside(&scenarios::scenario(4, i, &mix));
        }
    }

    #[test]
    fn a_scenario_drawn_twice_is_the_same_and_volumes_change_nothing_else() {
        let without = Mix {
            volumes: VolumeMix {
                pct: 0,
                ..VolumeMix::DEFAULT
            },
            ..Mix::DEFAULT
        };
        for i in 0..60 {
            let a = scenarios::scenario(7, i, &Mix::DEFAULT);
            let b = scenarios::scenario(7, i, &Mix::DEFAULT);
            assert_eq!(a.volumes, b.volumes);
            assert_eq!(a.pods, b.pods);
            // The fourth stream: without volumes, the same nodes, and the same pods but for
            // their volumes.
            let plain = scenarios::scenario(7, i, &without);
            assert!(plain.volumes.is_none());
            assert_eq!(a.nodes, plain.nodes);
            let mut pods = a.pods.clone();
            for p in &mut pods {
                p.spec.as_mut().unwrap().volumes = None;
            }
            assert_eq!(pods, plain.pods);
        }
    }

    #[test]
    fn the_default_mix_reaches_every_kind_of_volume() {
        let n = 400;
        let (mut scen, mut csi_nodes, mut bound, mut shared, mut unbound, mut rwop, mut zoned) =
            (0, 0, 0, 0, 0, 0, 0);
        let (mut immediate, mut two, mut all, mut beside_groups) = (0, 0, 0, 0);
        for i in 0..n {
            let sc = scenarios::scenario(1, i, &Mix::DEFAULT);
            all += 1;
            beside_groups += usize::from(!sc.groups.is_empty() && sc.volumes.is_some());
            let Some(v) = &sc.volumes else {
                assert!(
                    sc.pods
                        .iter()
                        .all(|p| p.spec.as_ref().unwrap().volumes.is_none())
                );
                continue;
            };
            scen += 1;
            immediate += usize::from(v.classes.len() == 2);
            csi_nodes += v.csi_nodes.len();
            bound += v
                .claims
                .iter()
                .filter(|c| c["spec"]["volumeName"].is_string())
                .count();
            unbound += v
                .claims
                .iter()
                .filter(|c| {
                    c["spec"]["storageClassName"] == immediate_class(&sc.namespace()).as_str()
                })
                .count();
            rwop += v
                .volumes
                .iter()
                .filter(|p| p["spec"]["accessModes"][0] == RWOP)
                .count();
            zoned += v
                .volumes
                .iter()
                .filter(|p| p["metadata"]["labels"].is_object())
                .count();
            let mut users: BTreeMap<&str, usize> = BTreeMap::new();
            for p in &sc.pods {
                let vols = p.spec.as_ref().unwrap().volumes.iter().flatten();
                let vols: Vec<_> = vols.collect();
                two += usize::from(vols.len() == 2);
                for vol in vols {
                    let c = &vol.persistent_volume_claim.as_ref().unwrap().claim_name;
                    *users.entry(c.as_str()).or_default() += 1;
                }
            }
            shared += users.values().filter(|n| **n == 2).count();
        }
        let share = scen as f64 / all as f64;
        assert!(
            (share - 0.25).abs() < 0.06,
            "{scen} of {all} scenarios have volumes"
        );
        for (what, count) in [
            ("scenarios with volumes and pod groups", beside_groups),
            ("immediate classes", immediate),
            ("CSINodes", csi_nodes),
            ("pre-bound claims", bound),
            ("shared ReadWriteOncePod claims", shared),
            ("unbound immediate or classless claims", unbound),
            ("ReadWriteOncePod volumes", rwop),
            ("zoned volumes", zoned),
            ("pods with two claims", two),
        ] {
            assert!(count >= 3, "{count} {what}");
        }
    }

    #[test]
    fn each_volume_and_bound_claim_is_created_then_given_its_phase() {
        let files = scenarios::generate(2, 6, 6, &with_volumes(100));
        let config = &files.last().unwrap().contents;
        let text: BTreeMap<&str, &str> = files
            .iter()
            .map(|f| (f.path.as_str(), f.contents.as_str()))
            .collect();
        let lines: Vec<&str> = config.lines().collect();
        let (mut pvs, mut first_pod) = (0, None);
        for (at, l) in lines.iter().enumerate() {
            if l.starts_with("- name: ") {
                first_pod = None; // another test case
            }
            if l.contains("opcode: createPods") {
                first_pod.get_or_insert(at);
            }
            let Some(path) = l.strip_prefix("    templatePath: ") else {
                continue;
            };
            let body = text[path];
            if lines[at - 1].ends_with("createAny") && body.contains("kind: PersistentVolume\n") {
                pvs += 1;
                assert!(first_pod.is_none(), "{path} after a pod");
                // The next op updates the same volume with its phase.
                assert_eq!(lines[at + 1], "  - opcode: updateAny");
                let twin = text[lines[at + 2].strip_prefix("    templatePath: ").unwrap()];
                assert!(twin.starts_with(body.trim_end()), "{twin}");
                let phase = if body.contains("claimRef:") {
                    "Bound"
                } else {
                    "Available"
                };
                assert!(
                    twin.ends_with(&format!("status:\n  phase: {phase}\n")),
                    "{twin}"
                );
            }
        }
        assert!(pvs > 0, "{config}");
    }
}
