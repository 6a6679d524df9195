//! Ported from kubernetes/kubernetes
//! pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go (v1.37.2):
//! TestVolumeBinding (18 of its 20 cases), Test_PreBindPreFlight (all 4),
//! TestIsSchedulableAfterCSINodeChange (5), TestIsSchedulableAfterPersistentVolumeClaimChange
//! (7), TestIsSchedulableAfterStorageClassChange (4),
//! TestIsSchedulableAfterCSIStorageCapacityChange (12), TestIsSchedulableAfterCSIDriverChange
//! (8) and TestVolumeBinding_DeferredResizeSkipped; plus a Reserve → PreBind → Unreserve test
//! of our own with a fake `ClusterClient` (kube's table tests stop at Score).
//!
//! Differences from kube's tables:
//! - tidegate always runs with StorageCapacityScoring on (kube v1.37's default). The cases
//!   kube runs with the gate off ("pod has not pvcs", "all bound", "unbound claims no
//!   matches", "bound and unbound unsatisfied", "pv not found", and the two "(StorageCapacity
//!   Scoring disabled)" ones) expect PreScore Success here, where kube expects Skip, and are
//!   scored: 0 on every node, except the two "disabled" cases, which score as their gate-on
//!   twins. Each such case's name says "gate on here".
//! - kube's test returns after a PreFilter Skip ("pod has not pvcs"); here the framework's
//!   behaviour is followed: Filter is not run (it counts as passed), PreScore and Score are.
//! - Not ported: "zonal volumes with close capacity are preferred (custom shape)" and "prefer
//!   node with least allocatable". Both set `VolumeBindingArgs.Shape`, which tidegate does not
//!   take (it scores with kube's default shape only).
//! - kube's `wantStateAfterPreFilter` is checked as the claims' names by class (bound, unbound
//!   with delayed binding) and the volume names by class, sorted as kube's `cmpopts.SortSlices`
//!   does.
//! - Lister NotFound texts are the production listers' singular ones
//!   (`persistentvolumeclaim "pvc-a" not found`), which kube's table also uses here.
//! - kube's PVCs and PVs carry no `resourceVersion`; here each has "1" (the assume cache
//!   compares it), and claims carry a `uid`.
//! - Statuses are compared as (code, reasons); kube compares `*fwk.Status`.
//! - The hint tables' "unexpected objects" cases pass an object of another type; kube's hint
//!   returns (Queue, error), tidegate's `Err`, which the queue counts as Queue.
//! - The CSINode case marked "tidegate:" is not in kube's table: it pins volume_binding.go:152,
//!   where a missing migrated-plugins annotation reads as "" (Go's map index).

use super::*;
use crate::api::volume::pod_volume;
use crate::api::{Labels, Node, PodResize, PodSpecInfo, ResizePending, Resource};
use crate::framework::events::ApiObject;
use serde_json::{Value, json};

const NS: &str = "default";
const HOSTNAME: &str = "kubernetes.io/hostname";
/// binder_test.go's `nodeLabelKey`, which `makeCapacity` matches on.
const NODE_KEY: &str = "nodeKey";
const REGION: &str = "topology.kubernetes.io/region";
const ZONE: &str = "topology.kubernetes.io/zone";
const IMMEDIATE_SC: &str = "immediate-sc";
const WAIT_SC: &str = "wait-sc";
const WAIT_HDD_SC: &str = "wait-hdd-sc";
const WAIT_SC_CAP: &str = "wait-sc-with-storage-capacity";
const DRIVER_CAP: &str = "driver-with-storage-capacity";
const BIND_CONFLICT: &str = binder::ERR_REASON_BIND_CONFLICT;

fn obj<T: serde::de::DeserializeOwned + Send + Sync + 'static>(v: Value) -> ApiObject {
    ApiObject::from_json::<T>(v)
}

// ---- objects (kube's test_utils.go builders) ----

/// `makePVC(name, class)`.
fn make_pvc(name: &str, class: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": NS, "uid": format!("uid-{name}"),
                     "resourceVersion": "1"},
        "spec": {"storageClassName": class}
    })
}

/// `withBoundPV`: the volume's name and the bind-completed annotation.
fn bound_to_pv(mut v: Value, pv: &str) -> Value {
    v["spec"]["volumeName"] = json!(pv);
    v["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "true"});
    v
}

fn request(mut v: Value, q: &str) -> Value {
    v["spec"]["resources"] = json!({"requests": {"storage": q}});
    v
}

/// `makePV(name, class)`.
fn make_pv(name: &str, class: &str) -> Value {
    json!({"metadata": {"name": name, "resourceVersion": "1"},
           "spec": {"storageClassName": class}})
}

/// `withPhase(v1.VolumeAvailable)`.
fn available(mut v: Value) -> Value {
    v["status"] = json!({"phase": "Available"});
    v
}

fn capacity(mut v: Value, q: &str) -> Value {
    v["spec"]["capacity"] = json!({"storage": q});
    v
}

/// `withNodeAffinity`: one term, an `In` requirement per key.
fn node_affinity(mut v: Value, kv: &[(&str, &str)]) -> Value {
    let exprs: Vec<Value> = (kv.iter())
        .map(|(k, val)| json!({"key": k, "operator": "In", "values": [val]}))
        .collect();
    v["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
        {"matchExpressions": exprs}]}});
    v
}

/// An available volume of `class` and `size` on the node named `host`.
fn local_pv(name: &str, class: &str, size: &str, host: &str) -> Value {
    node_affinity(
        capacity(available(make_pv(name, class)), size),
        &[(HOSTNAME, host)],
    )
}

/// An available volume of `wait-sc` and `size` in `region`/`zone`.
fn zonal_pv(name: &str, size: &str, region: &str, zone: &str) -> Value {
    node_affinity(
        capacity(available(make_pv(name, WAIT_SC)), size),
        &[(REGION, region), (ZONE, zone)],
    )
}

/// `makeCapacity(name, class, node, capacity, "")`: topology `nodeKey=<node>`.
fn make_capacity(name: &str, class: &str, node: &str, size: &str) -> Value {
    json!({
        "metadata": {"name": name}, "storageClassName": class,
        "nodeTopology": {"matchLabels": {NODE_KEY: node}}, "capacity": size
    })
}

/// `makeNode(name).withLabel(...)`: the hostname label and `labels`.
fn node(name: &str, labels: &[(&str, &str)]) -> NodeInfo {
    let mut n = Node::named(name);
    let pairs = [(HOSTNAME, name)].into_iter().chain(labels.iter().copied());
    n.labels = Arc::new(Labels::from_pairs(pairs));
    NodeInfo::new(Arc::new(n))
}

/// `makeNode(name).withLabel(nodeLabelKey, name)`.
fn keyed_node(name: &str) -> NodeInfo {
    node(name, &[(NODE_KEY, name)])
}

fn zonal_nodes() -> Vec<NodeInfo> {
    let mut v = Vec::new();
    for (region, zone) in [
        ("region-a", "zone-a"),
        ("region-b", "zone-b"),
        ("region-c", "zone-c"),
    ] {
        for n in ["node-a", "node-b"] {
            v.push(node(
                &format!("{zone}-{n}"),
                &[(REGION, region), (ZONE, zone)],
            ));
        }
    }
    v
}

fn pod_in(ns: &str, name: &str, volumes: &[Value]) -> Pod {
    let spec = PodSpecInfo {
        volumes: volumes
            .iter()
            .map(|v| pod_volume(&serde_json::from_value(v.clone()).unwrap()))
            .collect(),
        ..PodSpecInfo::default()
    };
    Pod::new(ns, name, Arc::new(spec))
}

/// `withPVCVolume(claim, "")`.
fn claim_vol(claim: &str) -> Value {
    json!({"name": "", "persistentVolumeClaim": {"claimName": claim}})
}

/// `makePod(name).withPVCVolume(c, "")...`.
fn pod(claims: &[&str]) -> Pod {
    let v: Vec<Value> = claims.iter().map(|c| claim_vol(c)).collect();
    pod_in(NS, "pod-a", &v)
}

// ---- the cluster ----

/// kube's four storage classes and `driverWithStorageCapacity`, then the case's objects.
fn listers(pvcs: &[Value], pvs: &[Value], caps: &[Value]) -> VolumeListers {
    use EventResource as R;
    let l = VolumeListers::default();
    let add = |r: R, o: ApiObject| l.apply(r, None, Some(&o));
    for (name, mode, provisioner) in [
        (IMMEDIATE_SC, "Immediate", ""),
        (WAIT_SC, "WaitForFirstConsumer", ""),
        (WAIT_HDD_SC, "WaitForFirstConsumer", ""),
        (WAIT_SC_CAP, "WaitForFirstConsumer", DRIVER_CAP),
    ] {
        let sc = json!({"metadata": {"name": name}, "provisioner": provisioner,
                        "volumeBindingMode": mode});
        add(R::StorageClass, obj::<storage::StorageClass>(sc));
    }
    let d = json!({"metadata": {"name": DRIVER_CAP}, "spec": {"storageCapacity": true}});
    add(R::CSIDriver, obj::<storage::CSIDriver>(d));
    for c in pvcs {
        add(
            R::PersistentVolumeClaim,
            obj::<core::PersistentVolumeClaim>(c.clone()),
        );
    }
    for v in pvs {
        add(
            R::PersistentVolume,
            obj::<core::PersistentVolume>(v.clone()),
        );
    }
    for c in caps {
        add(
            R::CSIStorageCapacity,
            obj::<storage::CSIStorageCapacity>(c.clone()),
        );
    }
    assert_eq!(l.rejected(), 0);
    l
}

/// What the fake client was asked, in order.
#[derive(Default)]
struct FakeClient {
    /// When set, the client also plays the API server and scheduler_perf's fake PV
    /// controller: a volume's binding is stored (a new `resourceVersion`) and completes the
    /// claim, and both reach these listers as informer events.
    api: Option<(Arc<VolumeListers>, Vec<Value>, Vec<Value>)>,
    calls: parking_lot::Mutex<Vec<String>>,
}

impl ClusterClient for FakeClient {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        self.calls.lock().push(format!("bind {} {node}", pod.name));
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn bind_volume_to_claim(
        &self,
        pv: &crate::api::volume::PersistentVolume,
        claim: &crate::api::volume::PersistentVolumeClaim,
    ) -> Result<(), String> {
        let uid = pv.claim_ref.as_ref().map(|r| r.uid.clone());
        self.calls.lock().push(format!(
            "bind_volume_to_claim {} {}/{} uid={uid:?} rv={}",
            pv.name, claim.namespace, claim.name, pv.resource_version
        ));
        let Some((l, pvs, pvcs)) = &self.api else {
            return Ok(());
        };
        let named = |vs: &[Value], n: &str| vs.iter().find(|v| v["metadata"]["name"] == n).cloned();
        let stored = l.pv(pv.name).ok_or("persistentvolumes not found")?;
        if stored.resource_version != pv.resource_version {
            return Err("conflict".into());
        }
        let mut v = named(pvs, &pv.name.to_string_lossy()).expect("a known volume");
        v["metadata"]["resourceVersion"] = json!("2");
        v["spec"]["claimRef"] = json!({"namespace": claim.namespace.to_string_lossy(), "name": &*claim.name,
                   "uid": &*claim.uid});
        l.apply(
            EventResource::PersistentVolume,
            None,
            Some(&obj::<core::PersistentVolume>(v)),
        );
        let mut c = named(pvcs, &claim.name).expect("a known claim");
        c["metadata"]["resourceVersion"] = json!("2");
        let c = bound_to_pv(c, &pv.name.to_string_lossy());
        l.apply(
            EventResource::PersistentVolumeClaim,
            None,
            Some(&obj::<core::PersistentVolumeClaim>(c)),
        );
        Ok(())
    }
    fn set_claim_selected_node(
        &self,
        claim: &crate::api::volume::PersistentVolumeClaim,
        node: Sym,
    ) -> Result<(), String> {
        self.calls.lock().push(format!(
            "set_claim_selected_node {}/{} {node}",
            claim.namespace, claim.name
        ));
        Ok(())
    }
}

fn plugin(pvcs: &[Value], pvs: &[Value], caps: &[Value]) -> VolumeBinding {
    VolumeBinding::new(
        Arc::new(listers(pvcs, pvs, caps)),
        Arc::new(FakeClient::default()),
    )
}

// ---- TestVolumeBinding ----

/// A non-success status as (code, reasons).
type Verdict = Option<(Code, Vec<String>)>;

fn verdict(s: &Status) -> Verdict {
    (!s.is_success()).then(|| {
        (
            s.code(),
            s.reasons().iter().map(|r| r.to_string()).collect(),
        )
    })
}

fn rejected(reasons: &[&str]) -> Verdict {
    Some((
        Code::UnschedulableAndUnresolvable,
        reasons.iter().map(|r| r.to_string()).collect(),
    ))
}

/// kube's `wantStateAfterPreFilter`: bound claims, unbound delay-binding claims, and the
/// volumes of each of their classes.
struct WantState {
    bound: Vec<&'static str>,
    delay: Vec<&'static str>,
    pvs: Vec<(&'static str, Vec<&'static str>)>,
}

fn want_state(
    bound: &[&'static str],
    delay: &[&'static str],
    pvs: &[(&'static str, &[&'static str])],
) -> Option<WantState> {
    Some(WantState {
        bound: bound.to_vec(),
        delay: delay.to_vec(),
        pvs: pvs.iter().map(|(c, v)| (*c, v.to_vec())).collect(),
    })
}

struct Case {
    name: &'static str,
    pod: Pod,
    nodes: Vec<NodeInfo>,
    pvcs: Vec<Value>,
    pvs: Vec<Value>,
    caps: Vec<Value>,
    pre_filter: Verdict,
    /// `None`: the state kube writes on a PreFilter Skip (no claims).
    state: Option<WantState>,
    filter: Vec<Verdict>,
    scores: Vec<i64>,
}

fn check_state(c: &Case, s: &State) {
    let Some(want) = &c.state else {
        assert!(s.0.claims.is_none(), "{}: state", c.name);
        return;
    };
    let claims = s.0.claims.as_ref().expect("claims in the state");
    let names = |v: &[Arc<crate::api::volume::PersistentVolumeClaim>]| {
        v.iter().map(|c| c.name.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(names(&claims.bound), want.bound, "{}: bound", c.name);
    assert_eq!(
        names(&claims.unbound_delay),
        want.delay,
        "{}: delay",
        c.name
    );
    assert!(claims.unbound_immediate.is_empty(), "{}", c.name);
    let mut got: Vec<(String, Vec<String>)> = (claims.pvs_by_class.iter())
        .map(|(class, pvs)| {
            let mut n: Vec<String> = pvs.iter().map(|p| p.name.to_string_lossy()).collect();
            n.sort();
            (class.to_string(), n)
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, Vec<String>)> = (want.pvs.iter())
        .map(|(class, v)| (class.to_string(), v.iter().map(|s| s.to_string()).collect()))
        .collect();
    want.sort();
    assert_eq!(got, want, "{}: volumes by class", c.name);
}

/// PreFilter, Filter on each node, PreScore and Score on each node, as kube's test runs them.
fn run(c: Case) {
    let pl = plugin(&c.pvcs, &c.pvs, &c.caps);
    let mut state = CycleState::default();
    let (res, pre) = pl.pre_filter(&mut state, &c.pod, &Snapshot::default());
    assert!(res.is_none(), "{}", c.name);
    assert_eq!(verdict(&pre), c.pre_filter, "{}: PreFilter", c.name);
    if !pre.is_success() && !pre.is_skip() {
        // The framework runs nothing else of the cycle.
        return;
    }
    check_state(&c, pl.state(&state).expect("state written"));
    if pre.is_success() {
        for (n, want) in c.nodes.iter().zip(&c.filter) {
            let got = verdict(&pl.filter(&state, &c.pod, n));
            assert_eq!(&got, want, "{}: Filter on {}", c.name, n.name());
        }
    }
    let refs: Vec<&NodeInfo> = c.nodes.iter().collect();
    let ps = pl.pre_score(&mut state, &c.pod, &refs, &Snapshot::default());
    assert!(ps.is_success(), "{}: PreScore {ps}", c.name);
    let got: Vec<i64> = (c.nodes.iter())
        .map(|n| pl.score(&state, &c.pod, n).expect("score"))
        .collect();
    assert_eq!(got, c.scores, "{}: scores", c.name);
    if pl.scores_nothing(&state) {
        assert!(got.iter().all(|&s| s == 0), "{}: scores_nothing", c.name);
    }
}

fn case(name: &'static str, pod: Pod, nodes: Vec<NodeInfo>) -> Case {
    Case {
        name,
        pod,
        nodes,
        pvcs: vec![],
        pvs: vec![],
        caps: vec![],
        pre_filter: None,
        state: None,
        filter: vec![],
        scores: vec![],
    }
}

#[test]
fn volume_binding_without_volumes_or_with_missing_claims() {
    let node_a = || vec![node("node-a", &[])];
    run(Case {
        pre_filter: Some((Code::Skip, vec![])),
        scores: vec![0],
        ..case("pod has not pvcs (gate on here)", pod(&[]), node_a())
    });
    run(Case {
        pvcs: vec![bound_to_pv(make_pvc("pvc-a", WAIT_SC), "pv-a")],
        pvs: vec![available(make_pv("pv-a", WAIT_SC))],
        state: want_state(&["pvc-a"], &[], &[]),
        filter: vec![None],
        scores: vec![0],
        ..case("all bound (gate on here)", pod(&["pvc-a"]), node_a())
    });
    run(Case {
        pre_filter: rejected(&[r#"persistentvolumeclaim "pvc-a" not found"#]),
        ..case("PVC does not exist", pod(&["pvc-a"]), node_a())
    });
    run(Case {
        pvcs: vec![bound_to_pv(make_pvc("pvc-a", WAIT_SC), "pv-a")],
        pre_filter: rejected(&[r#"persistentvolumeclaim "pvc-b" not found"#]),
        ..case(
            "Part of PVCs do not exist",
            pod(&["pvc-a", "pvc-b"]),
            node_a(),
        )
    });
    run(Case {
        pvcs: vec![make_pvc("pvc-a", IMMEDIATE_SC)],
        pre_filter: rejected(&[ERR_UNBOUND_IMMEDIATE]),
        ..case("immediate claims not bound", pod(&["pvc-a"]), node_a())
    });
    let mut lost = bound_to_pv(make_pvc("pvc-a", WAIT_SC), "pv-a");
    lost["status"] = json!({"phase": "Lost"});
    run(Case {
        pvcs: vec![lost],
        pre_filter: rejected(&[
            r#"persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a""#,
        ]),
        ..case("pv not found claim lost", pod(&["pvc-a"]), node_a())
    });
}

#[test]
fn volume_binding_unsatisfied_claims() {
    let node_a = || vec![node("node-a", &[])];
    run(Case {
        pvcs: vec![make_pvc("pvc-a", WAIT_SC)],
        state: want_state(&[], &["pvc-a"], &[(WAIT_SC, &[])]),
        filter: vec![rejected(&[BIND_CONFLICT])],
        scores: vec![0],
        ..case(
            "unbound claims no matches (gate on here)",
            pod(&["pvc-a"]),
            node_a(),
        )
    });
    run(Case {
        pvcs: vec![
            bound_to_pv(make_pvc("pvc-a", WAIT_SC), "pv-a"),
            make_pvc("pvc-b", WAIT_SC),
        ],
        pvs: vec![node_affinity(
            available(make_pv("pv-a", WAIT_SC)),
            &[("foo", "bar")],
        )],
        state: want_state(&["pvc-a"], &["pvc-b"], &[(WAIT_SC, &["pv-a"])]),
        filter: vec![rejected(&[binder::ERR_REASON_NODE_CONFLICT, BIND_CONFLICT])],
        scores: vec![0],
        ..case(
            "bound and unbound unsatisfied (gate on here)",
            pod(&["pvc-a", "pvc-b"]),
            vec![node("node-a", &[("foo", "barbar")])],
        )
    });
    run(Case {
        pvcs: vec![bound_to_pv(make_pvc("pvc-a", WAIT_SC), "pv-a")],
        state: want_state(&["pvc-a"], &[], &[]),
        filter: vec![rejected(&[binder::ERR_REASON_PV_NOT_EXIST])],
        scores: vec![0],
        ..case("pv not found (gate on here)", pod(&["pvc-a"]), node_a())
    });
}

fn local_pvs() -> Vec<Value> {
    vec![
        local_pv("pv-a-0", WAIT_SC, "200Gi", "node-a"),
        local_pv("pv-a-1", WAIT_SC, "200Gi", "node-a"),
        local_pv("pv-b-0", WAIT_SC, "100Gi", "node-b"),
        local_pv("pv-b-1", WAIT_SC, "100Gi", "node-b"),
    ]
}

fn three_nodes() -> Vec<NodeInfo> {
    vec![
        node("node-a", &[]),
        node("node-b", &[]),
        node("node-c", &[]),
    ]
}

#[test]
fn volume_binding_local_volumes_with_close_capacity_are_preferred() {
    for name in [
        "local volumes with close capacity are preferred",
        "local volumes with close capacity are preferred (StorageCapacityScoring disabled; gate on here)",
    ] {
        run(Case {
            pvcs: vec![request(make_pvc("pvc-a", WAIT_SC), "50Gi")],
            pvs: local_pvs(),
            state: want_state(
                &[],
                &["pvc-a"],
                &[(WAIT_SC, &["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"])],
            ),
            filter: vec![None, None, rejected(&[BIND_CONFLICT])],
            scores: vec![75, 50, 0],
            ..case(name, pod(&["pvc-a"]), three_nodes())
        });
    }
    let mut pvs = Vec::new();
    for (host, size, prefix) in [("node-a", "200Gi", "pv-a"), ("node-b", "100Gi", "pv-b")] {
        for (i, class) in [WAIT_SC, WAIT_SC, WAIT_HDD_SC, WAIT_HDD_SC]
            .iter()
            .enumerate()
        {
            pvs.push(local_pv(&format!("{prefix}-{i}"), class, size, host));
        }
    }
    run(Case {
        pvcs: vec![
            request(make_pvc("pvc-0", WAIT_SC), "50Gi"),
            request(make_pvc("pvc-1", WAIT_HDD_SC), "100Gi"),
        ],
        pvs,
        state: want_state(
            &[],
            &["pvc-0", "pvc-1"],
            &[
                (WAIT_HDD_SC, &["pv-a-2", "pv-a-3", "pv-b-2", "pv-b-3"]),
                (WAIT_SC, &["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]),
            ],
        ),
        filter: vec![None, None, rejected(&[BIND_CONFLICT])],
        scores: vec![63, 25, 0],
        ..case(
            "local volumes with close capacity are preferred (multiple pvcs)",
            pod(&["pvc-0", "pvc-1"]),
            three_nodes(),
        )
    });
}

#[test]
fn volume_binding_zonal_volumes_with_close_capacity_are_preferred() {
    for name in [
        "zonal volumes with close capacity are preferred",
        "zonal volumes with close capacity are preferred (StorageCapacityScoring disabled; gate on here)",
    ] {
        run(Case {
            pvcs: vec![request(make_pvc("pvc-a", WAIT_SC), "50Gi")],
            pvs: vec![
                zonal_pv("pv-a-0", "200Gi", "region-a", "zone-a"),
                zonal_pv("pv-a-1", "200Gi", "region-a", "zone-a"),
                zonal_pv("pv-b-0", "100Gi", "region-b", "zone-b"),
                zonal_pv("pv-b-1", "100Gi", "region-b", "zone-b"),
            ],
            state: want_state(
                &[],
                &["pvc-a"],
                &[(WAIT_SC, &["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"])],
            ),
            filter: vec![
                None,
                None,
                None,
                None,
                rejected(&[BIND_CONFLICT]),
                rejected(&[BIND_CONFLICT]),
            ],
            scores: vec![75, 75, 50, 50, 0, 0],
            ..case(name, pod(&["pvc-a"]), zonal_nodes())
        });
    }
}

fn keyed_nodes() -> Vec<NodeInfo> {
    vec![
        keyed_node("node-a"),
        keyed_node("node-b"),
        keyed_node("node-c"),
    ]
}

fn capacities(sizes: [&str; 3]) -> Vec<Value> {
    (["node-a", "node-b", "node-c"].iter().zip(sizes))
        .map(|(n, s)| make_capacity(n, WAIT_SC_CAP, n, s))
        .collect()
}

#[test]
fn volume_binding_storage_capacity_scores() {
    let dynamic = || request(make_pvc("pvc-dynamic", WAIT_SC_CAP), "10Gi");
    run(Case {
        pvcs: vec![dynamic()],
        caps: capacities(["100Gi", "50Gi", "10Gi"]),
        state: want_state(&[], &["pvc-dynamic"], &[(WAIT_SC_CAP, &[])]),
        filter: vec![None, None, None],
        scores: vec![90, 80, 0],
        ..case(
            "storage capacity score",
            pod(&["pvc-dynamic"]),
            keyed_nodes(),
        )
    });
    run(Case {
        pvcs: vec![dynamic(), request(make_pvc("pvc-static", WAIT_SC), "50Gi")],
        pvs: (["a", "b", "c"].iter())
            .map(|n| {
                local_pv(
                    &format!("pv-static-{n}"),
                    WAIT_SC,
                    "100Gi",
                    &format!("node-{n}"),
                )
            })
            .collect(),
        caps: capacities(["100Gi", "50Gi", "10Gi"]),
        state: want_state(
            &[],
            &["pvc-dynamic", "pvc-static"],
            &[
                (WAIT_SC, &["pv-static-a", "pv-static-b", "pv-static-c"]),
                (WAIT_SC_CAP, &[]),
            ],
        ),
        filter: vec![None, None, None],
        scores: vec![50, 50, 50],
        ..case(
            "storage capacity score with static binds",
            pod(&["pvc-dynamic", "pvc-static"]),
            keyed_nodes(),
        )
    });
    run(Case {
        pvcs: vec![
            request(make_pvc("pvc-dynamic-0", WAIT_SC_CAP), "50Gi"),
            request(make_pvc("pvc-dynamic-1", WAIT_SC_CAP), "50Gi"),
        ],
        caps: vec![make_capacity("node-a", WAIT_SC_CAP, "node-a", "100Gi")],
        state: want_state(
            &[],
            &["pvc-dynamic-0", "pvc-dynamic-1"],
            &[(WAIT_SC_CAP, &[])],
        ),
        filter: vec![None],
        scores: vec![0],
        ..case(
            "dynamic provisioning with multiple PVCs of the same StorageClass",
            pod(&["pvc-dynamic-0", "pvc-dynamic-1"]),
            vec![keyed_node("node-a")],
        )
    });
    run(Case {
        pvcs: vec![dynamic()],
        caps: capacities(["100Gi", "20Gi", "10Gi"]),
        state: want_state(&[], &["pvc-dynamic"], &[(WAIT_SC_CAP, &[])]),
        filter: vec![None, None, None],
        scores: vec![90, 50, 0],
        ..case(
            "prefer node with maximum allocatable",
            pod(&["pvc-dynamic"]),
            keyed_nodes(),
        )
    });
}

// ---- TestVolumeBinding_DeferredResizeSkipped ----

#[test]
fn deferred_resize_is_skipped() {
    let mut p = pod(&["no-such-claim"]);
    p.resize = Some(Arc::new(PodResize {
        pending: Some(ResizePending::Deferred),
        requests: Resource::default(),
        non_zero_requests: Resource::default(),
    }));
    let pl = plugin(&[], &[], &[]);
    let (res, pre) = pl.pre_filter(&mut CycleState::default(), &p, &Snapshot::default());
    assert!(res.is_none());
    assert_eq!(pre.code(), Code::Skip);
    let n = node("node1", &[]);
    assert!(pl.filter(&CycleState::default(), &p, &n).is_success());
    // Without the deferred resize the claim is looked up and missing.
    p.resize = None;
    let (_, pre) = pl.pre_filter(&mut CycleState::default(), &p, &Snapshot::default());
    assert_eq!(pre.code(), Code::UnschedulableAndUnresolvable);
}

/// A pod without claims: PreFilter skips and writes the plugin's one shared state (no
/// allocation per cycle); Reserve and PreBind find no binding work, for every such pod alike.
#[test]
fn pods_without_claims_share_one_state_and_bind_nothing() {
    let pl = plugin(&[], &[], &[]);
    let mut seen = Vec::new();
    for name in ["a", "b"] {
        let mut p = pod(&[]);
        p.name = name.into();
        let mut cs = CycleState::default();
        let (res, pre) = pl.pre_filter(&mut cs, &p, &Snapshot::default());
        assert!(res.is_none());
        assert_eq!(pre.code(), Code::Skip);
        let node = Sym::new("node1");
        assert!(pl.reserve(&mut cs, &p, node).is_success());
        assert_eq!(pl.pre_bind_pre_flight(&cs, &p, node).code(), Code::Skip);
        assert!(pl.pre_bind(&mut cs, &p, node).is_success());
        pl.unreserve(&mut cs, &p, node);
        let s = pl.state(&cs).expect("PreFilter wrote the state").clone();
        assert!(s.0.claims.is_none() && s.0.by_node.lock().is_empty());
        assert!(!s.0.binds());
        seen.push(s);
    }
    assert!(Arc::ptr_eq(&seen[0].0, &seen[1].0), "one shared state");
}

// ---- Test_PreBindPreFlight ----

#[test]
fn pre_bind_pre_flight() {
    let pl = plugin(&[], &[], &[]);
    let with = |all_bound: bool, nodes: &[&str]| {
        let by_node: ByNode = (nodes.iter())
            .map(|n| (Sym::new(n), PodVolumes::default()))
            .collect();
        let mut cs = CycleState::default();
        cs.write(
            STATE_KEY,
            State(Arc::new(StateData {
                by_node: Mutex::new(by_node),
                all_bound: AtomicBool::new(all_bound),
                ..StateData::default()
            })),
        );
        cs
    };
    let node_a = Sym::new("node-a");
    let pod = pod(&[]);
    let cases: Vec<(&str, CycleState, Code, Option<&str>)> = vec![
        ("all bound", with(true, &[]), Code::Skip, None),
        (
            "volume to be bound",
            with(false, &["node-a"]),
            Code::Success,
            None,
        ),
        (
            "error: state is nil",
            CycleState::default(),
            Code::Error,
            None,
        ),
        (
            "error: node is not found in podVolumesByNode",
            with(false, &["node-b"]),
            Code::Error,
            Some(r#"no pod volume found for node "node-a""#),
        ),
    ];
    for (name, state, code, message) in cases {
        let s = pl.pre_bind_pre_flight(&state, &pod, node_a);
        assert_eq!(s.code(), code, "{name}: {s}");
        if let Some(m) = message {
            assert_eq!(s.message(), m, "{name}");
        }
    }
}

// ---- queueing hints ----

/// The hint, or `Err(())` where kube returns an error (with Queue).
fn hint(
    resource: EventResource,
    pod: &Pod,
    old: Option<ApiObject>,
    new: ApiObject,
) -> Result<QueueingHint, ()> {
    let pl = plugin(&[], &[], &[]);
    let (action, old) = match old {
        None => (ActionType::ADD, EventObject::None),
        Some(o) => (ActionType::UPDATE, EventObject::Object(o)),
    };
    let ev = ClusterEvent::new(resource, action);
    pl.queueing_hint(&ev, pod, &old, &EventObject::Object(new))
        .map_err(|_| ())
}

/// An object of a type no hint expects (kube's `new(struct{})`).
fn unexpected() -> ApiObject {
    ApiObject(Arc::new(()))
}

use QueueingHint::{Queue, QueueSkip};

/// (case, old object, new object, the hint).
type HintCase = (
    &'static str,
    Option<ApiObject>,
    ApiObject,
    Result<QueueingHint, ()>,
);
/// (case, pod, old object, new object, the hint).
type PodHintCase = (
    &'static str,
    Pod,
    Option<ApiObject>,
    ApiObject,
    Result<QueueingHint, ()>,
);

#[test]
fn is_schedulable_after_csi_node_change() {
    let csi_node = |migrated: Option<&str>| {
        let ann = migrated.map_or(
            json!({}),
            |m| json!({crate::api::volume::MIGRATED_PLUGINS: m}),
        );
        obj::<storage::CSINode>(json!({
            "metadata": {"name": "csinode-a", "annotations": ann}, "spec": {"drivers": []}
        }))
    };
    let p = pod(&[]);
    let r = EventResource::CSINode;
    let cases: Vec<HintCase> = vec![
        (
            "unexpected objects are passed",
            Some(unexpected()),
            unexpected(),
            Err(()),
        ),
        ("CSINode is newly created", None, csi_node(None), Ok(Queue)),
        (
            "CSINode's migrated-plugins annotations is added",
            Some(csi_node(Some("test1"))),
            csi_node(Some("test1, test2")),
            Ok(Queue),
        ),
        (
            "CSINode's migrated-plugins annotation is updated",
            Some(csi_node(Some("test1"))),
            csi_node(Some("test2")),
            Ok(Queue),
        ),
        (
            "CSINode is updated but migrated-plugins annotation gets unchanged",
            Some(csi_node(Some("test1"))),
            csi_node(Some("test1")),
            Ok(QueueSkip),
        ),
        // tidegate: Go reads a missing annotation as "" (volume_binding.go:152 indexes the
        // map), so adding it empty changes nothing.
        (
            "tidegate: migrated-plugins annotation added empty",
            Some(csi_node(None)),
            csi_node(Some("")),
            Ok(QueueSkip),
        ),
    ];
    for (name, old, new, want) in cases {
        assert_eq!(hint(r, &p, old, new), want, "{name}");
    }
}

#[test]
fn is_schedulable_after_persistent_volume_claim_change() {
    let claim = |name: &str| obj::<core::PersistentVolumeClaim>(make_pvc(name, ""));
    let ephemeral = |name: &str| json!({"name": name, "ephemeral": {}});
    let empty_dir = pod_in(NS, "pod-a", &[json!({"name": "", "emptyDir": {}})]);
    let other_ns = pod_in("ns-a", "pod-a", &[claim_vol("pvc-a"), claim_vol("pvc-b")]);
    let eph_ac = pod_in(
        NS,
        "pod-a",
        &[ephemeral("ephemeral-a"), ephemeral("ephemeral-c")],
    );
    let eph_ab = pod_in(
        NS,
        "pod-a",
        &[ephemeral("ephemeral-a"), ephemeral("ephemeral-b")],
    );
    let r = EventResource::PersistentVolumeClaim;
    let cases: Vec<PodHintCase> = vec![
        (
            "pod has no pvc or ephemeral volumes",
            empty_dir,
            Some(claim("pvc-b")),
            claim("pvc-b"),
            Ok(QueueSkip),
        ),
        (
            "pvc with the same name as the one used by the pod in a different namespace is modified",
            other_ns,
            None,
            claim("pvc-b"),
            Ok(QueueSkip),
        ),
        (
            "pod has no pvc that is being modified",
            pod(&["pvc-a", "pvc-c"]),
            Some(claim("pvc-b")),
            claim("pvc-b"),
            Ok(QueueSkip),
        ),
        (
            "pod has no generic ephemeral volume that is being modified",
            eph_ac,
            Some(claim("pod-a-ephemeral-b")),
            claim("pod-a-ephemeral-b"),
            Ok(QueueSkip),
        ),
        (
            "pod has the pvc that is being modified",
            pod(&["pvc-a", "pvc-b"]),
            Some(claim("pvc-b")),
            claim("pvc-b"),
            Ok(Queue),
        ),
        (
            "pod has the generic ephemeral volume that is being modified",
            eph_ab,
            Some(claim("pod-a-ephemeral-b")),
            claim("pod-a-ephemeral-b"),
            Ok(Queue),
        ),
        (
            "type conversion error",
            pod(&[]),
            Some(unexpected()),
            unexpected(),
            Err(()),
        ),
    ];
    for (name, p, old, new, want) in cases {
        assert_eq!(hint(r, &p, old, new), want, "{name}");
    }
}

#[test]
fn is_schedulable_after_storage_class_change() {
    let sc = |topologies: Option<Value>| {
        let mut v = json!({"metadata": {"name": "sc-a"}, "provisioner": ""});
        if let Some(t) = topologies {
            v["allowedTopologies"] = t;
        }
        obj::<storage::StorageClass>(v)
    };
    let host_a = json!([{"matchLabelExpressions": [{"key": HOSTNAME, "values": ["node-a"]}]}]);
    let p = pod(&[]);
    let r = EventResource::StorageClass;
    let cases: Vec<HintCase> = vec![
        (
            "When a new StorageClass is created, it returns Queue",
            None,
            sc(None),
            Ok(Queue),
        ),
        (
            "When the AllowedTopologies are changed, it returns Queue",
            Some(sc(None)),
            sc(Some(host_a)),
            Ok(Queue),
        ),
        (
            "When there are no changes to the StorageClass, it returns QueueSkip",
            Some(sc(None)),
            sc(None),
            Ok(QueueSkip),
        ),
        (
            "type conversion error",
            Some(unexpected()),
            unexpected(),
            Err(()),
        ),
    ];
    for (name, old, new, want) in cases {
        assert_eq!(hint(r, &p, old, new), want, "{name}");
    }
}

/// A CSIStorageCapacity with `capacity` and `maximumVolumeSize` (plain numbers, kube's
/// `resource.NewQuantity(n, DecimalSI)`).
fn cap_obj(capacity: Option<i64>, max: Option<i64>) -> ApiObject {
    let mut v = json!({"metadata": {"name": "cap-a"}, "storageClassName": ""});
    if let Some(c) = capacity {
        v["capacity"] = json!(c.to_string());
    }
    if let Some(m) = max {
        v["maximumVolumeSize"] = json!(m.to_string());
    }
    obj::<storage::CSIStorageCapacity>(v)
}

#[test]
fn is_schedulable_after_csi_storage_capacity_change() {
    let p = pod(&[]);
    let r = EventResource::CSIStorageCapacity;
    let c = |cap, max| Some(cap_obj(cap, max));
    let cases: Vec<HintCase> = vec![
        ("new", None, cap_obj(None, None), Ok(Queue)),
        (
            "increase (Capacity set)",
            c(None, None),
            cap_obj(Some(100), None),
            Ok(Queue),
        ),
        (
            "increase (MaximumVolumeSize set)",
            c(None, None),
            cap_obj(None, Some(100)),
            Ok(Queue),
        ),
        (
            "increase (Capacity increase)",
            c(Some(50), None),
            cap_obj(Some(100), None),
            Ok(Queue),
        ),
        (
            "increase (MaximumVolumeSize unset)",
            c(Some(100), Some(50)),
            cap_obj(Some(100), None),
            Ok(Queue),
        ),
        (
            "increase (MaximumVolumeSize increase)",
            c(Some(100), Some(50)),
            cap_obj(Some(100), Some(60)),
            Ok(Queue),
        ),
        (
            "no changes",
            c(Some(100), Some(50)),
            cap_obj(Some(100), Some(50)),
            Ok(QueueSkip),
        ),
        (
            "equal (Capacity)",
            c(Some(100), None),
            cap_obj(Some(100), None),
            Ok(QueueSkip),
        ),
        (
            "equal (MaximumVolumeSize unset)",
            c(Some(100), Some(50)),
            cap_obj(Some(50), None),
            Ok(QueueSkip),
        ),
        (
            "decrease (Capacity)",
            c(Some(100), None),
            cap_obj(Some(90), None),
            Ok(QueueSkip),
        ),
        (
            "decrease (MaximumVolumeSize)",
            c(None, Some(100)),
            cap_obj(None, Some(90)),
            Ok(QueueSkip),
        ),
        (
            "type conversion error",
            Some(unexpected()),
            unexpected(),
            Err(()),
        ),
    ];
    for (name, old, new, want) in cases {
        assert_eq!(hint(r, &p, old, new), want, "{name}");
    }
}

#[test]
fn is_schedulable_after_csi_driver_change() {
    let driver = |name: &str, capacity: Option<bool>| {
        let spec = capacity.map_or(json!({}), |c| json!({"storageCapacity": c}));
        obj::<storage::CSIDriver>(json!({"metadata": {"name": name}, "spec": spec}))
    };
    let csi_pod = pod_in(
        NS,
        "pod-a",
        &[json!({"name": "", "csi": {"driver": "test1"}})],
    );
    let r = EventResource::CSIDriver;
    type DriverCase = (
        &'static str,
        Pod,
        Option<ApiObject>,
        ApiObject,
        QueueingHint,
    );
    let cases: Vec<DriverCase> = vec![
        (
            "pod has no CSIDriver",
            pod(&[]),
            Some(driver("test1", None)),
            driver("test1", Some(true)),
            QueueSkip,
        ),
        (
            "driver name in pod and csidriver name are different",
            csi_pod.clone(),
            Some(driver("test2", Some(true))),
            driver("test2", Some(false)),
            QueueSkip,
        ),
        (
            "original StorageCapacity is nil",
            csi_pod.clone(),
            Some(driver("test1", None)),
            driver("test1", None),
            QueueSkip,
        ),
        (
            "original StorageCapacity is false",
            csi_pod.clone(),
            Some(driver("test1", Some(false))),
            driver("test1", Some(false)),
            QueueSkip,
        ),
        (
            "modified StorageCapacity is nil",
            csi_pod.clone(),
            Some(driver("test1", Some(true))),
            driver("test1", None),
            Queue,
        ),
        (
            "modified StorageCapacity is true",
            csi_pod.clone(),
            Some(driver("test1", Some(true))),
            driver("test1", Some(true)),
            QueueSkip,
        ),
        (
            "modified StorageCapacity is false",
            csi_pod.clone(),
            Some(driver("test1", Some(true))),
            driver("test1", Some(false)),
            Queue,
        ),
    ];
    for (name, p, old, new, want) in cases {
        assert_eq!(hint(r, &p, old, new), Ok(want), "{name}");
    }
    let got = hint(r, &csi_pod, Some(unexpected()), unexpected());
    assert_eq!(got, Err(()), "unexpected objects are passed");
}

// ---- Reserve → PreBind → Unreserve (tidegate's own) ----

/// Two claims of `wait-sc` (5Gi) and one available 10Gi volume on node-a.
fn static_cluster() -> (Vec<Value>, Vec<Value>) {
    let claims = vec![
        request(make_pvc("pvc-a", WAIT_SC), "5Gi"),
        request(make_pvc("pvc-b", WAIT_SC), "5Gi"),
    ];
    (claims, vec![local_pv("pv-a", WAIT_SC, "10Gi", "node-a")])
}

/// PreFilter then Filter on `node` in a fresh cycle.
fn filter_in_new_cycle(pl: &VolumeBinding, pod: &Pod, node: &NodeInfo) -> (CycleState, Verdict) {
    let mut state = CycleState::default();
    let (_, pre) = pl.pre_filter(&mut state, pod, &Snapshot::default());
    assert!(pre.is_success(), "PreFilter of {}: {pre}", pod.name);
    let v = verdict(&pl.filter(&state, pod, node));
    (state, v)
}

fn single_claim_pod(name: &str, claim: &str) -> Pod {
    pod_in(NS, name, &[claim_vol(claim)])
}

#[test]
fn reserve_assumes_the_static_binding_and_unreserve_reverts_it() {
    let (pvcs, pvs) = static_cluster();
    let client = Arc::new(FakeClient::default());
    let pl = VolumeBinding::new(Arc::new(listers(&pvcs, &pvs, &[])), client.clone());
    let node_a = node("node-a", &[]);
    let (pod_a, pod_b) = (
        single_claim_pod("pod-a", "pvc-a"),
        single_claim_pod("pod-b", "pvc-b"),
    );
    let (mut state_a, v) = filter_in_new_cycle(&pl, &pod_a, &node_a);
    assert_eq!(v, None);
    assert!(pl.reserve(&mut state_a, &pod_a, node_a.name()).is_success());
    let pv = pl
        .binder
        .cache
        .pv(&pl.binder.listers, Sym::new("pv-a"))
        .unwrap();
    let r = pv.claim_ref.as_ref().expect("assumed claimRef");
    assert_eq!((&*r.name, &*r.uid), ("pvc-a", "uid-pvc-a"));
    // The next pod's cycle sees the volume taken.
    let (_, v) = filter_in_new_cycle(&pl, &pod_b, &node_a);
    assert_eq!(v, rejected(&[BIND_CONFLICT]));
    // Unreserve gives it back (twice: it is idempotent).
    pl.unreserve(&mut state_a, &pod_a, node_a.name());
    pl.unreserve(&mut state_a, &pod_a, node_a.name());
    let pv = pl
        .binder
        .cache
        .pv(&pl.binder.listers, Sym::new("pv-a"))
        .unwrap();
    assert!(pv.claim_ref.is_none());
    let (state_b, v) = filter_in_new_cycle(&pl, &pod_b, &node_a);
    assert_eq!(v, None);
    let s = pl.state(&state_b).unwrap();
    let by_node = s.0.by_node.lock();
    let b = &by_node[&node_a.name()].static_bindings;
    assert_eq!(
        b.iter()
            .map(|b| (b.pv.name.to_string_lossy(), b.pvc.name.to_string()))
            .collect::<Vec<_>>(),
        vec![("pv-a".to_string(), "pvc-b".to_string())]
    );
    assert!(client.calls.lock().is_empty());
}

#[test]
fn pre_bind_writes_the_assumed_binding() {
    let (pvcs, pvs) = static_cluster();
    let l = Arc::new(listers(&pvcs, &pvs, &[]));
    let client = Arc::new(FakeClient {
        api: Some((l.clone(), pvs, pvcs)),
        ..FakeClient::default()
    });
    let pl = VolumeBinding::new(l.clone(), client.clone());
    let (node_a, node_b) = (node("node-a", &[]), node("node-b", &[]));
    let (pod_a, pod_b) = (
        single_claim_pod("pod-a", "pvc-a"),
        single_claim_pod("pod-b", "pvc-b"),
    );
    let (mut state, v) = filter_in_new_cycle(&pl, &pod_a, &node_a);
    assert_eq!(v, None);
    let rejected_b = verdict(&pl.filter(&state, &pod_a, &node_b));
    assert_eq!(rejected_b, rejected(&[BIND_CONFLICT]));
    assert!(pl.reserve(&mut state, &pod_a, node_a.name()).is_success());
    assert!(
        pl.pre_bind_pre_flight(&state, &pod_a, node_a.name())
            .is_success()
    );
    let s = pl.pre_bind_pre_flight(&state, &pod_a, node_b.name());
    assert_eq!(
        (s.code(), s.message()),
        (
            Code::Error,
            r#"no pod volume found for node "node-b""#.into()
        )
    );
    let s = pl.pre_bind(&mut state, &pod_a, node_a.name());
    assert!(s.is_success(), "{s}");
    assert_eq!(
        *client.calls.lock(),
        vec![r#"bind_volume_to_claim pv-a default/pvc-a uid=Some("uid-pvc-a") rv=1"#.to_string()]
    );
    let pvc = l.pvc(Sym::new(NS), "pvc-a").unwrap();
    assert_eq!((&*pvc.volume_name, pvc.bind_completed), ("pv-a", true));
    // The volume is taken for good: the other claim finds nothing.
    let (_, v) = filter_in_new_cycle(&pl, &pod_b, &node_a);
    assert_eq!(v, rejected(&[BIND_CONFLICT]));
    // pod-a's claim is bound now: another cycle binds nothing.
    let (mut state, v) = filter_in_new_cycle(&pl, &pod_a, &node_a);
    assert_eq!(v, None);
    assert!(pl.scores_nothing(&state));
    assert!(pl.reserve(&mut state, &pod_a, node_a.name()).is_success());
    assert!(
        pl.pre_bind_pre_flight(&state, &pod_a, node_a.name())
            .is_skip()
    );
    assert!(pl.pre_bind(&mut state, &pod_a, node_a.name()).is_success());
    assert_eq!(client.calls.lock().len(), 1);
}

#[test]
fn a_provisioned_claim_is_assumed_on_its_node_and_pre_bind_times_out() {
    let pvcs = vec![request(make_pvc("pvc-p", WAIT_SC_CAP), "10Gi")];
    let caps = vec![make_capacity("node-a", WAIT_SC_CAP, "node-a", "100Gi")];
    let client = Arc::new(FakeClient::default());
    let pl = VolumeBinding::new(Arc::new(listers(&pvcs, &[], &caps)), client.clone());
    let node_a = keyed_node("node-a");
    let p = single_claim_pod("pod-a", "pvc-p");
    let (mut state, v) = filter_in_new_cycle(&pl, &p, &node_a);
    assert_eq!(v, None);
    assert_eq!(pl.score(&state, &p, &node_a).unwrap(), 90);
    assert!(pl.reserve(&mut state, &p, node_a.name()).is_success());
    let cached = |pl: &VolumeBinding| {
        let c = pl
            .binder
            .cache
            .pvc(&pl.binder.listers, Sym::new(NS), "pvc-p");
        c.unwrap().selected_node
    };
    assert_eq!(cached(&pl), Some(node_a.name()));
    assert!(
        pl.pre_bind_pre_flight(&state, &p, node_a.name())
            .is_success()
    );
    let s = pl.pre_bind(&mut state, &p, node_a.name());
    assert_eq!(
        (s.code(), s.message()),
        (
            Code::Error,
            "binding volumes: context deadline exceeded".into()
        )
    );
    assert_eq!(
        *client.calls.lock(),
        vec!["set_claim_selected_node default/pvc-p node-a".to_string()]
    );
    pl.unreserve(&mut state, &p, node_a.name());
    assert_eq!(cached(&pl), None);
}

// ---- the oracle's hook: following kube's pick among equal volumes ----

/// Two equal volumes on node-a and three claims that fit either: kube's pick among them is
/// random (it lists them from a map), so the replay follows what the API shows.
fn twin_volumes() -> (Arc<VolumeListers>, VolumeBinding, NodeInfo) {
    let claims: Vec<Value> = ["pvc-a", "pvc-b", "pvc-c"]
        .iter()
        .map(|c| request(make_pvc(c, WAIT_SC), "1Gi"))
        .collect();
    let pvs = vec![
        local_pv("pv-0", WAIT_SC, "1Gi", "node-a"),
        local_pv("pv-1", WAIT_SC, "1Gi", "node-a"),
    ];
    let l = Arc::new(listers(&claims, &pvs, &[]));
    let pl = VolumeBinding::new(l.clone(), Arc::new(FakeClient::default()));
    (l, pl, node("node-a", &[]))
}

/// The API's write of `pv` (a 1Gi volume on node-a) bound to `claim` (a new
/// `resourceVersion`), as an informer delivers it.
fn api_binds(l: &VolumeListers, pv: &str, claim: &str) {
    api_binds_sized(l, pv, "1Gi", claim)
}

fn api_binds_sized(l: &VolumeListers, pv: &str, size: &str, claim: &str) {
    let old = local_pv(pv, WAIT_SC, size, "node-a");
    let mut new = old.clone();
    new["metadata"]["resourceVersion"] = json!("2");
    new["spec"]["claimRef"] =
        json!({"namespace": NS, "name": claim, "uid": format!("uid-{claim}")});
    l.apply(
        EventResource::PersistentVolume,
        Some(&obj::<core::PersistentVolume>(old)),
        Some(&obj::<core::PersistentVolume>(new)),
    );
}

fn reserve_on(pl: &VolumeBinding, pod: &Pod, node: &NodeInfo) -> Verdict {
    reserve_keeping(pl, pod, node).1
}

/// Filter and Reserve in a fresh cycle; the cycle state for Unreserve.
fn reserve_keeping(pl: &VolumeBinding, pod: &Pod, node: &NodeInfo) -> (CycleState, Verdict) {
    let (mut state, v) = filter_in_new_cycle(pl, pod, node);
    if v.is_none() {
        assert!(pl.reserve(&mut state, pod, node.name()).is_success());
    }
    (state, v)
}

fn claim_of_assumed(pl: &VolumeBinding, pv: &str) -> Option<String> {
    let v = pl
        .binder
        .cache
        .pv(&pl.binder.listers, Sym::new(pv))
        .unwrap();
    v.claim_ref.as_ref().map(|c| c.name.to_string())
}

#[test]
fn follow_binding_frees_the_volume_tidegate_picked_where_kube_picked_its_twin() {
    let (l, pl, node_a) = twin_volumes();
    let (pod_a, pod_b) = (
        single_claim_pod("pod-a", "pvc-a"),
        single_claim_pod("pod-b", "pvc-b"),
    );
    assert_eq!(reserve_on(&pl, &pod_a, &node_a), None);
    let ours = ["pv-0", "pv-1"]
        .into_iter()
        .find(|pv| claim_of_assumed(&pl, pv).is_some())
        .expect("pod-a's Reserve assumed a volume");
    let kubes = if ours == "pv-0" { "pv-1" } else { "pv-0" };
    api_binds(&l, kubes, "pvc-a");
    // Without the hook both volumes read as taken, and pod-b finds none (the replay's
    // disagreement this hook removes).
    assert_eq!(
        verdict(&pl.filter(
            &filter_in_new_cycle(&pl, &pod_b, &node_a).0,
            &pod_b,
            &node_a
        )),
        rejected(&[BIND_CONFLICT])
    );
    assert_eq!(pl.follow_binding(Sym::new(kubes)), Some(Sym::new(ours)));
    assert_eq!(claim_of_assumed(&pl, ours), None);
    assert_eq!(reserve_on(&pl, &pod_b, &node_a), None);
    assert_eq!(claim_of_assumed(&pl, ours).as_deref(), Some("pvc-b"));
    // Followed already: nothing more to do.
    assert_eq!(pl.follow_binding(Sym::new(kubes)), None);
}

#[test]
fn follow_binding_swaps_two_picks_that_kube_made_the_other_way_round() {
    let (l, pl, node_a) = twin_volumes();
    let pods = [
        single_claim_pod("pod-a", "pvc-a"),
        single_claim_pod("pod-b", "pvc-b"),
        single_claim_pod("pod-c", "pvc-c"),
    ];
    assert_eq!(reserve_on(&pl, &pods[0], &node_a), None);
    let (mut state_b, v) = reserve_keeping(&pl, &pods[1], &node_a);
    assert_eq!(v, None);
    let for_a = ["pv-0", "pv-1"]
        .into_iter()
        .find(|pv| claim_of_assumed(&pl, pv).as_deref() == Some("pvc-a"))
        .unwrap();
    let for_b = if for_a == "pv-0" { "pv-1" } else { "pv-0" };
    assert_eq!(claim_of_assumed(&pl, for_b).as_deref(), Some("pvc-b"));
    // kube gave pvc-a the volume tidegate gave pvc-b: so it gave pvc-b the other one.
    api_binds(&l, for_b, "pvc-a");
    assert_eq!(pl.follow_binding(Sym::new(for_b)), Some(Sym::new(for_a)));
    assert_eq!(claim_of_assumed(&pl, for_a).as_deref(), Some("pvc-b"));
    assert_eq!(claim_of_assumed(&pl, for_b).as_deref(), Some("pvc-a"));
    // Both volumes stay taken: a third claim finds none.
    let (state, _) = filter_in_new_cycle(&pl, &pods[2], &node_a);
    assert_eq!(
        verdict(&pl.filter(&state, &pods[2], &node_a)),
        rejected(&[BIND_CONFLICT])
    );
    // pod-b's placement undone: the twin that took pvc-b is free again, and pod-c finds it.
    pl.unreserve(&mut state_b, &pods[1], node_a.name());
    assert_eq!(claim_of_assumed(&pl, for_a), None);
    assert_eq!(reserve_on(&pl, &pods[2], &node_a), None);
    assert_eq!(claim_of_assumed(&pl, for_a).as_deref(), Some("pvc-c"));
}

#[test]
fn follow_binding_leaves_a_volume_kube_could_not_have_picked() {
    // pv-1 is larger than pv-0: kube's matcher takes pv-0 for a 1Gi claim, never pv-1, so
    // tidegate's pick of pv-0 is not followed when the API shows pv-1 bound (the judge
    // reports what follows).
    let claims = vec![request(make_pvc("pvc-a", WAIT_SC), "1Gi")];
    let pvs = vec![
        local_pv("pv-0", WAIT_SC, "1Gi", "node-a"),
        local_pv("pv-1", WAIT_SC, "2Gi", "node-a"),
    ];
    let l = Arc::new(listers(&claims, &pvs, &[]));
    let pl = VolumeBinding::new(l.clone(), Arc::new(FakeClient::default()));
    let node_a = node("node-a", &[]);
    assert_eq!(
        reserve_on(&pl, &single_claim_pod("pod-a", "pvc-a"), &node_a),
        None
    );
    assert_eq!(claim_of_assumed(&pl, "pv-0").as_deref(), Some("pvc-a"));
    api_binds_sized(&l, "pv-1", "2Gi", "pvc-a");
    assert_eq!(pl.follow_binding(Sym::new("pv-1")), None);
    assert_eq!(claim_of_assumed(&pl, "pv-0").as_deref(), Some("pvc-a"));
}
