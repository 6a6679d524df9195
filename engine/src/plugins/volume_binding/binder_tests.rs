//! Ported from kubernetes/kubernetes
//! pkg/scheduler/framework/plugins/volumebinding/binder_test.go (v1.37.2):
//! TestFindPodVolumesWithoutProvisioning (all 22 scenarios × kube's 3 CSIDriver variants),
//! TestFindPodVolumesWithProvisioning (all 8 × 3), TestFindPodVolumesWithCSIMigration (all 4),
//! TestAssumePodVolumes (all 7) and TestRevertAssumedPodVolumes; from
//! pkg/scheduler/framework/plugins/volumebinding/scorer_test.go TestScore (the 11 cases of
//! the default shape, through the plugin's Score); and from kubernetes/component-helpers
//! storage/volume/pv_helpers_test.go (v0.37.2) TestFindMatchVolumeWithNode (the 12
//! scenarios run with VolumeAttributesClass enabled).
//!
//! Differences from kube's tables:
//! - The binder is built over `VolumeListers` fed with the objects (kube adds them to its
//!   informers' indexers and to a fake API reactor; nothing here writes to an API).
//! - tidegate's volume list of a class is in name order (`pvs_of_class`); kube's is its
//!   informer's. kube sorts claims by size with an unstable sort; tidegate's sort is stable.
//!   No scenario depends on either.
//! - Bindings and provisions are compared as the converted objects (`PersistentVolume`,
//!   `PersistentVolumeClaim`), which leave out what the scheduler does not read (the
//!   `bound-by-controller` annotation, `kind`, `apiVersion`); kube compares the API objects.
//! - The generic ephemeral volume's owner reference carries the pod's uid ("test-pod-uid");
//!   kube's pod and reference both have an empty uid.
//! - Not ported from TestFindMatchVolumeWithNode: "fail-on-error" and "fail-volumes-vac",
//!   which run only with VolumeAttributesClass off (locked on in v1.37). Volumes are told
//!   apart by a `uid` label, as two of kube's share the name `affinity003`; kube's excluded
//!   volumes are named in `chosen`.
//! - Not ported from TestScore: "custom shape, multiple classes" (tidegate takes no shape).
//!   Each class's (requested, capacity) is one static binding of that class.
//! - Cases marked "tidegate:" are not in kube's tables; each cites the binder.go behaviour it
//!   pins.

use super::super::{ERR_UNBOUND_IMMEDIATE, STATE_KEY, State, StateData, VolumeBinding};
use super::*;
use crate::api::volume::pod_volume;
use crate::api::volume_convert::{persistent_volume, persistent_volume_claim};
use crate::api::{Labels, Node, PodSpecInfo};
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{ApiObject, EventResource};
use crate::framework::interface::{NoopClient, ScorePlugin};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

const NS: &str = "testns";
const NODE_KEY: &str = "nodeKey";
const PROVISIONER: &str = "test-provisioner";
const WAIT: &str = "waitClass";
const IMMEDIATE: &str = "immediateClass";
const WAIT_PROV: &str = "waitClassWithProvisioner";
const TOPO_MISMATCH: &str = "topoMismatchClass";
const BIND: &str = ERR_REASON_BIND_CONFLICT;
const NODE: &str = ERR_REASON_NODE_CONFLICT;
const SPACE: &str = ERR_REASON_NOT_ENOUGH_SPACE;
const PV_MISSING: &str = ERR_REASON_PV_NOT_EXIST;

fn obj<T: serde::de::DeserializeOwned + Send + Sync + 'static>(v: Value) -> ApiObject {
    ApiObject::from_json::<T>(v)
}

fn pv_of(v: &Value) -> PersistentVolume {
    persistent_volume(&serde_json::from_value(v.clone()).unwrap()).unwrap()
}

fn pvc_of(v: &Value) -> PersistentVolumeClaim {
    persistent_volume_claim(&serde_json::from_value(v.clone()).unwrap()).unwrap()
}

// ---- kube's fixtures ----

/// `pvcUnbound`, `pvcPrebound`, `pvcBound`, `pvcSelectedNode`.
enum Claim<'a> {
    Unbound,
    Prebound(&'a str),
    Bound(&'a str),
    SelectedNode(&'a str),
}

/// `makeTestPVC`.
fn test_pvc(name: &str, size: &str, state: Claim<'_>, rv: &str, class: &str) -> Value {
    let mut v = json!({
        "metadata": {"name": name, "namespace": NS, "uid": "pvc-uid", "resourceVersion": rv},
        "spec": {"resources": {"requests": {"storage": size}}, "storageClassName": class,
                 "volumeMode": "Filesystem"}
    });
    match state {
        Claim::Unbound => {}
        Claim::SelectedNode(n) => {
            v["metadata"]["annotations"] = json!({"volume.kubernetes.io/selected-node": n});
        }
        Claim::Bound(pv) => {
            v["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
            v["spec"]["volumeName"] = json!(pv);
        }
        Claim::Prebound(pv) => v["spec"]["volumeName"] = json!(pv),
    }
    v
}

/// `makeTestPV`.
fn test_pv(
    name: &str,
    node: &str,
    size: &str,
    rv: &str,
    bound_to: Option<&Value>,
    class: &str,
) -> Value {
    let mut v = json!({
        "metadata": {"name": name, "resourceVersion": rv},
        "spec": {"capacity": {"storage": size}, "storageClassName": class,
                 "volumeMode": "Filesystem"},
        "status": {"phase": "Available"}
    });
    if !node.is_empty() {
        v["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": NODE_KEY, "operator": "In", "values": [node]}]}]}});
    }
    if let Some(c) = bound_to {
        let m = &c["metadata"];
        v["spec"]["claimRef"] = json!({
            "kind": "PersistentVolumeClaim", "apiVersion": "v1",
            "resourceVersion": m["resourceVersion"], "name": m["name"],
            "namespace": m["namespace"], "uid": m["uid"]
        });
        v["metadata"]["annotations"] = json!({"pv.kubernetes.io/bound-by-controller": "yes"});
    }
    v
}

fn unbound_pvc() -> Value {
    test_pvc("unbound-pvc", "1G", Claim::Unbound, "1", WAIT)
}
fn unbound_pvc2() -> Value {
    test_pvc("unbound-pvc2", "5G", Claim::Unbound, "1", WAIT)
}
fn prebound_pvc() -> Value {
    test_pvc(
        "prebound-pvc",
        "1G",
        Claim::Prebound("pv-node1a"),
        "1",
        WAIT,
    )
}
fn bound_pvc() -> Value {
    test_pvc("bound-pvc", "1G", Claim::Bound("pv-bound"), "1", WAIT)
}
fn immediate_unbound_pvc() -> Value {
    test_pvc(
        "immediate-unbound-pvc",
        "1G",
        Claim::Unbound,
        "1",
        IMMEDIATE,
    )
}
fn immediate_bound_pvc() -> Value {
    let b = Claim::Bound("pv-bound-immediate");
    test_pvc("immediate-bound-pvc", "1G", b, "1", IMMEDIATE)
}
fn provisioned_pvc() -> Value {
    test_pvc("provisioned-pvc", "1Gi", Claim::Unbound, "1", WAIT_PROV)
}
fn provisioned_pvc2() -> Value {
    test_pvc("provisioned-pvc2", "1Gi", Claim::Unbound, "1", WAIT_PROV)
}
fn provisioned_pvc_higher_version() -> Value {
    test_pvc("provisioned-pvc2", "1Gi", Claim::Unbound, "2", WAIT_PROV)
}
fn no_provisioner_pvc() -> Value {
    test_pvc("no-provisioner-pvc", "1Gi", Claim::Unbound, "1", WAIT)
}
fn topo_mismatch_pvc() -> Value {
    test_pvc(
        "topo-mismatch-pvc",
        "1Gi",
        Claim::Unbound,
        "1",
        TOPO_MISMATCH,
    )
}
fn selected_node_pvc() -> Value {
    let s = Claim::SelectedNode("node1");
    test_pvc("provisioned-pvc", "1Gi", s, "1", WAIT_PROV)
}

const POD_UID: &str = "test-pod-uid";

/// `makeGenericEphemeralPVC("test-volume", owned)`.
fn generic_pvc(owned: bool) -> Value {
    let b = Claim::Bound("pv-bound");
    let mut v = test_pvc("test-pod-test-volume", "1G", b, "1", IMMEDIATE);
    if owned {
        v["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Pod",
            "name": "test-pod", "uid": POD_UID, "controller": true}]);
    }
    v
}

fn pv_node1a() -> Value {
    test_pv("pv-node1a", "node1", "5G", "1", None, WAIT)
}
fn pv_node1b() -> Value {
    test_pv("pv-node1b", "node1", "10G", "1", None, WAIT)
}
fn pv_node2() -> Value {
    test_pv("pv-node2", "node2", "1G", "1", None, WAIT)
}
fn pv_bound() -> Value {
    test_pv("pv-bound", "node1", "1G", "1", Some(&bound_pvc()), WAIT)
}
fn pv_node1a_bound() -> Value {
    test_pv("pv-node1a", "node1", "5G", "1", Some(&unbound_pvc()), WAIT)
}
fn pv_node1b_bound() -> Value {
    test_pv(
        "pv-node1b",
        "node1",
        "10G",
        "1",
        Some(&unbound_pvc2()),
        WAIT,
    )
}
fn pv_bound_immediate(node: &str) -> Value {
    let c = immediate_bound_pvc();
    test_pv("pv-bound-immediate", node, "1G", "1", Some(&c), IMMEDIATE)
}
fn pv_bound_generic() -> Value {
    test_pv(
        "pv-bound",
        "node1",
        "1G",
        "1",
        Some(&generic_pvc(true)),
        WAIT,
    )
}

/// `newTestBinder`'s storage classes, kube's CSIDriver variant (`Some(storageCapacity)`),
/// then the claims and volumes.
fn binder(pvcs: &[Value], pvs: &[Value], driver: Option<bool>) -> Binder {
    use EventResource as R;
    let l = VolumeListers::default();
    let add = |r: R, o: ApiObject| l.apply(r, None, Some(&o));
    let topology =
        |values: &[&str]| json!([{"matchLabelExpressions": [{"key": NODE_KEY, "values": values}]}]);
    for (name, mode, provisioner, topologies) in [
        (
            WAIT_PROV,
            "WaitForFirstConsumer",
            PROVISIONER,
            topology(&["node1", "reference-value"]),
        ),
        (IMMEDIATE, "Immediate", "", Value::Null),
        (
            WAIT,
            "WaitForFirstConsumer",
            "kubernetes.io/no-provisioner",
            Value::Null,
        ),
        (
            TOPO_MISMATCH,
            "WaitForFirstConsumer",
            PROVISIONER,
            topology(&["reference-value"]),
        ),
    ] {
        let sc = json!({"metadata": {"name": name}, "volumeBindingMode": mode,
                        "provisioner": provisioner, "allowedTopologies": topologies});
        add(R::StorageClass, obj::<storage::StorageClass>(sc));
    }
    if let Some(capacity) = driver {
        let d = json!({"metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": capacity}});
        add(R::CSIDriver, obj::<storage::CSIDriver>(d));
    }
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
    assert_eq!(l.rejected(), 0);
    Binder {
        listers: Arc::new(l),
        cache: AssumeCache::default(),
    }
}

/// `makePod("test-pod").withNamespace("testns").withPVCSVolume(pvcs)`.
fn test_pod(pvcs: &[Value]) -> Pod {
    let volumes = pvcs.iter().enumerate().map(|(i, c)| {
        json!({"name": format!("vol{i}"),
               "persistentVolumeClaim": {"claimName": c["metadata"]["name"]}})
    });
    pod_with(volumes.collect())
}

fn pod_with(volumes: Vec<Value>) -> Pod {
    let spec = PodSpecInfo {
        volumes: (volumes.into_iter())
            .map(|v| pod_volume(&serde_json::from_value(v).unwrap()))
            .collect(),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new(NS, "test-pod", Arc::new(spec));
    p.uid = Arc::from(POD_UID);
    p
}

fn ephemeral_pod(volume: &str) -> Pod {
    pod_with(vec![json!({"name": volume, "ephemeral": {}})])
}

fn node_with(name: &str, labels: &[(&str, &str)]) -> NodeInfo {
    let mut n = Node::named(name);
    n.labels = Arc::new(Labels::from_pairs(labels.iter().copied()));
    NodeInfo::new(Arc::new(n))
}

/// kube's `testNode`: `node1` labelled `nodeKey=node1`.
fn test_node() -> NodeInfo {
    node_with("node1", &[(NODE_KEY, "node1")])
}

/// kube's `findPodVolumes`: the claims, refused when some immediate one is unbound, then
/// `FindPodVolumes` on the node.
fn find(b: &Binder, pod: &Pod, node: &NodeInfo) -> Result<(PodVolumes, Conflicts), String> {
    let claims = b.pod_volume_claims(pod)?;
    if !claims.unbound_immediate.is_empty() {
        return Err(ERR_UNBOUND_IMMEDIATE.into());
    }
    b.find_pod_volumes(&claims, node)
}

// ---- TestFindPodVolumesWithoutProvisioning, TestFindPodVolumesWithProvisioning ----

#[derive(Default)]
struct Scenario {
    name: &'static str,
    pvs: Vec<Value>,
    pod_pvcs: Vec<Value>,
    /// `None`: the pod's claims.
    cache_pvcs: Option<Vec<Value>>,
    /// `None`: `test_pod(pod_pvcs)`.
    pod: Option<Pod>,
    /// `None`: `test_node()`.
    node: Option<NodeInfo>,
    /// (claim, volume).
    bindings: Vec<(Value, Value)>,
    provisions: Vec<Value>,
    reasons: Vec<&'static str>,
    fail: bool,
    /// With a capacity-tracking CSIDriver and no CSIStorageCapacity, provisioning is blocked.
    needs_capacity: bool,
}

fn sc(name: &'static str, pod_pvcs: Vec<Value>, pvs: Vec<Value>) -> Scenario {
    Scenario {
        name,
        pod_pvcs,
        pvs,
        ..Scenario::default()
    }
}

fn run_find(s: &Scenario, driver: Option<bool>) {
    let label = format!("{} (CSIDriver storageCapacity {driver:?})", s.name);
    let cache = s.cache_pvcs.as_ref().unwrap_or(&s.pod_pvcs);
    let b = binder(cache, &s.pvs, driver);
    let pod = s.pod.clone().unwrap_or_else(|| test_pod(&s.pod_pvcs));
    let node = s.node.clone().unwrap_or_else(test_node);
    let r = find(&b, &pod, &node);
    assert_eq!(r.is_err(), s.fail, "{label}: {r:?}");
    let (volumes, conflicts) = r.unwrap_or_default();
    let mut reasons = s.reasons.clone();
    let mut provisions = s.provisions.clone();
    if s.needs_capacity && driver == Some(true) {
        reasons.push(SPACE);
        provisions.clear();
    }
    reasons.sort();
    let mut got: Vec<&str> = conflicts.reasons().collect();
    got.sort();
    assert_eq!(got, reasons, "{label}: reasons");
    let got: Vec<(PersistentVolumeClaim, PersistentVolume)> = (volumes.static_bindings.iter())
        .map(|b| ((*b.pvc).clone(), (*b.pv).clone()))
        .collect();
    let want: Vec<_> = s
        .bindings
        .iter()
        .map(|(c, v)| (pvc_of(c), pv_of(v)))
        .collect();
    assert_eq!(got, want, "{label}: bindings");
    let got: Vec<PersistentVolumeClaim> = (volumes.dynamic_provisions.iter())
        .map(|p| {
            assert!(p.capacity.is_none(), "{label}: no capacity object");
            (*p.pvc).clone()
        })
        .collect();
    let want: Vec<_> = provisions.iter().map(pvc_of).collect();
    assert_eq!(got, want, "{label}: provisions");
}

fn run_all(scenarios: &[Scenario]) {
    for driver in [None, Some(true), Some(false)] {
        for s in scenarios {
            run_find(s, driver);
        }
    }
}

#[test]
fn find_pod_volumes_without_provisioning_bound_and_immediate() {
    let pod_with_empty_dir = pod_with(vec![json!({"name": "", "emptyDir": {}})]);
    run_all(&[
        Scenario {
            pod: Some(pod_with(vec![])),
            ..sc("no-volumes", vec![], vec![])
        },
        Scenario {
            pod: Some(pod_with_empty_dir),
            ..sc("no-pvcs", vec![], vec![])
        },
        Scenario {
            cache_pvcs: Some(vec![]),
            fail: true,
            ..sc("pvc-not-found", vec![bound_pvc()], vec![])
        },
        sc("bound-pvc", vec![bound_pvc()], vec![pv_bound()]),
        Scenario {
            reasons: vec![PV_MISSING],
            ..sc("bound-pvc,pv-not-exists", vec![bound_pvc()], vec![])
        },
        Scenario {
            fail: true,
            ..sc(
                "prebound-pvc",
                vec![prebound_pvc()],
                vec![pv_node1a_bound()],
            )
        },
        sc(
            "immediate-bound-pvc",
            vec![immediate_bound_pvc()],
            vec![pv_bound_immediate("node1")],
        ),
        Scenario {
            reasons: vec![NODE],
            ..sc(
                "immediate-bound-pvc-wrong-node",
                vec![immediate_bound_pvc()],
                vec![pv_bound_immediate("node2")],
            )
        },
        Scenario {
            fail: true,
            ..sc(
                "immediate-unbound-pvc",
                vec![immediate_unbound_pvc()],
                vec![],
            )
        },
        Scenario {
            fail: true,
            ..sc(
                "immediate-unbound-pvc,delayed-mode-bound",
                vec![immediate_unbound_pvc(), bound_pvc()],
                vec![pv_bound()],
            )
        },
        Scenario {
            fail: true,
            ..sc(
                "immediate-unbound-pvc,delayed-mode-unbound",
                vec![immediate_unbound_pvc(), unbound_pvc()],
                vec![],
            )
        },
    ]);
}

#[test]
fn find_pod_volumes_without_provisioning_unbound_and_ephemeral() {
    let (a, b) = (unbound_pvc, unbound_pvc2);
    run_all(&[
        Scenario {
            bindings: vec![(a(), pv_node1a())],
            ..sc(
                "unbound-pvc,pv-same-node",
                vec![a()],
                vec![pv_node2(), pv_node1a(), pv_node1b()],
            )
        },
        Scenario {
            reasons: vec![BIND],
            ..sc("unbound-pvc,pv-different-node", vec![a()], vec![pv_node2()])
        },
        Scenario {
            bindings: vec![(a(), pv_node1a()), (b(), pv_node1b())],
            ..sc(
                "two-unbound-pvcs",
                vec![a(), b()],
                vec![pv_node1a(), pv_node1b()],
            )
        },
        Scenario {
            bindings: vec![(a(), pv_node1a()), (b(), pv_node1b())],
            ..sc(
                "two-unbound-pvcs,order-by-size",
                vec![b(), a()],
                vec![pv_node1a(), pv_node1b()],
            )
        },
        Scenario {
            bindings: vec![(a(), pv_node1a())],
            reasons: vec![BIND],
            ..sc(
                "two-unbound-pvcs,partial-match",
                vec![a(), b()],
                vec![pv_node1a()],
            )
        },
        Scenario {
            bindings: vec![(a(), pv_node1a())],
            ..sc(
                "one-bound,one-unbound",
                vec![a(), bound_pvc()],
                vec![pv_bound(), pv_node1a()],
            )
        },
        Scenario {
            reasons: vec![BIND],
            ..sc(
                "one-bound,one-unbound,no-match",
                vec![a(), bound_pvc()],
                vec![pv_bound(), pv_node2()],
            )
        },
        Scenario {
            fail: true,
            ..sc(
                "one-prebound,one-unbound",
                vec![a(), prebound_pvc()],
                vec![pv_node1a(), pv_node1b()],
            )
        },
        Scenario {
            pod: Some(ephemeral_pod("no-such-pvc")),
            fail: true,
            ..sc("generic-ephemeral,no-pvc", vec![], vec![])
        },
        Scenario {
            pod: Some(ephemeral_pod("test-volume")),
            cache_pvcs: Some(vec![generic_pvc(true)]),
            ..sc(
                "generic-ephemeral,with-pvc",
                vec![],
                vec![pv_bound_generic()],
            )
        },
        Scenario {
            pod: Some(ephemeral_pod("test-volume")),
            cache_pvcs: Some(vec![generic_pvc(false)]),
            fail: true,
            ..sc(
                "generic-ephemeral,wrong-pvc",
                vec![],
                vec![pv_bound_generic()],
            )
        },
    ]);
}

#[test]
fn find_pod_volumes_with_provisioning() {
    let provisioned = |name, pvcs, pvs, bindings, provisions| Scenario {
        bindings,
        provisions,
        needs_capacity: true,
        ..sc(name, pvcs, pvs)
    };
    run_all(&[
        provisioned(
            "one-provisioned",
            vec![provisioned_pvc()],
            vec![],
            vec![],
            vec![provisioned_pvc()],
        ),
        provisioned(
            "two-unbound-pvcs,one-matched,one-provisioned",
            vec![unbound_pvc(), provisioned_pvc()],
            vec![pv_node1a()],
            vec![(unbound_pvc(), pv_node1a())],
            vec![provisioned_pvc()],
        ),
        provisioned(
            "one-bound,one-provisioned",
            vec![bound_pvc(), provisioned_pvc()],
            vec![pv_bound()],
            vec![],
            vec![provisioned_pvc()],
        ),
        provisioned(
            "one-binding,one-selected-node",
            vec![bound_pvc(), selected_node_pvc()],
            vec![pv_bound()],
            vec![],
            vec![selected_node_pvc()],
        ),
        Scenario {
            fail: true,
            ..sc(
                "immediate-unbound-pvc",
                vec![immediate_unbound_pvc()],
                vec![],
            )
        },
        provisioned(
            "one-immediate-bound,one-provisioned",
            vec![immediate_bound_pvc(), provisioned_pvc()],
            vec![pv_bound_immediate("node1")],
            vec![],
            vec![provisioned_pvc()],
        ),
        Scenario {
            reasons: vec![BIND],
            ..sc("invalid-provisioner", vec![no_provisioner_pvc()], vec![])
        },
        Scenario {
            reasons: vec![BIND],
            ..sc(
                "volume-topology-unsatisfied",
                vec![topo_mismatch_pvc()],
                vec![],
            )
        },
        // tidegate: a claim whose selected node is another node is a bind conflict at once
        // (binder.go `FindPodVolumes`, the `AnnSelectedNode` check), even where the class
        // could provision on this node (its labels match `allowedTopologies`).
        Scenario {
            node: Some(node_with("node-x", &[(NODE_KEY, "node1")])),
            reasons: vec![BIND],
            ..sc(
                "tidegate: selected-node names another node",
                vec![selected_node_pvc()],
                vec![],
            )
        },
    ]);
}

// ---- TestFindPodVolumesWithCSIMigration ----

/// `makeTestPVForCSIMigration(zone1Labels, boundMigrationPVC, true)`.
fn migration_pv_bound(claim: &Value) -> Value {
    let mut v = test_pv("pv-migration-bound", "node1", "1G", "1", Some(claim), WAIT);
    v["spec"].as_object_mut().unwrap().remove("nodeAffinity");
    v["metadata"]["labels"] = json!({
        "failure-domain.beta.kubernetes.io/zone": "us-east-1",
        "failure-domain.beta.kubernetes.io/region": "us-east-1a"
    });
    v["spec"]["gcePersistentDisk"] = json!({"pdName": "test-disk", "fsType": "ext4"});
    v
}

#[test]
fn find_pod_volumes_with_csi_migration() {
    let claim = test_pvc(
        "pvc-migration-bound",
        "1G",
        Claim::Bound("pv-migration-bound"),
        "1",
        WAIT,
    );
    let zone = |z: &str| node_with("node1", &[(NODE_KEY, "node1"), ("topology.gke.io/zone", z)]);
    let csi_node = |migrated: &str| {
        obj::<storage::CSINode>(json!({
            "metadata": {"name": "node1",
                         "annotations": {crate::api::volume::MIGRATED_PLUGINS: migrated}},
            "spec": {"drivers": []}
        }))
    };
    let cases: Vec<(&str, NodeInfo, Option<ApiObject>, Vec<&str>)> = vec![
        (
            "pvc-bound",
            zone("us-east-1"),
            Some(csi_node("kubernetes.io/gce-pd")),
            vec![],
        ),
        (
            "pvc-bound,csinode-not-migrated",
            zone("us-east-1"),
            Some(csi_node("")),
            vec![],
        ),
        ("pvc-bound,missing-csinode", zone("us-east-1"), None, vec![]),
        (
            "pvc-bound,node-different-zone",
            zone("us-east-2"),
            Some(csi_node("kubernetes.io/gce-pd")),
            vec![NODE],
        ),
    ];
    for (name, node, csi, want) in cases {
        let b = binder(
            std::slice::from_ref(&claim),
            &[migration_pv_bound(&claim)],
            None,
        );
        if let Some(c) = csi {
            b.listers.apply(EventResource::CSINode, None, Some(&c));
        }
        let pod = test_pod(std::slice::from_ref(&claim));
        let (_, conflicts) = find(&b, &pod, &node).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(conflicts.reasons().collect::<Vec<_>>(), want, "{name}");
    }
}

// ---- TestAssumePodVolumes, TestRevertAssumedPodVolumes ----

fn binding(pvc: &Value, pv: &Value) -> Binding {
    Binding {
        pv: Arc::new(pv_of(pv)),
        pvc: Arc::new(pvc_of(pvc)),
    }
}

fn provision(pvc: &Value) -> Provision {
    Provision {
        pvc: Arc::new(pvc_of(pvc)),
        capacity: None,
    }
}

/// kube's `validateAssume`: the caches hold the volumes bound to their claims and the claims
/// to provision with the selected node.
fn validate_assume(b: &Binder, name: &str, bindings: &[(Value, Value)], provisions: &[Value]) {
    for (c, v) in bindings {
        let pv = b.cache.pv(&b.listers, pv_of(v).name).unwrap();
        let r = pv
            .claim_ref
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no claimRef"));
        let c = pvc_of(c);
        assert_eq!((&r.name, r.namespace), (&c.name, c.namespace), "{name}");
    }
    for c in provisions {
        let c = pvc_of(c);
        let got = b.cache.pvc(&b.listers, c.namespace, &c.name).unwrap();
        assert_eq!(got.selected_node, Some(Sym::new("node1")), "{name}");
    }
}

/// kube's `validateCacheRestored`: the caches give the informers' objects back.
fn validate_restored(b: &Binder, name: &str, volumes: &[Binding], claims: &[Provision]) {
    for v in volumes {
        if let Ok(pv) = b.cache.pv(&b.listers, v.pv.name) {
            assert!(
                Arc::ptr_eq(&pv, &b.listers.pv(v.pv.name).unwrap()),
                "{name}"
            );
        }
    }
    for p in claims {
        let c = b
            .cache
            .pvc(&b.listers, p.pvc.namespace, &p.pvc.name)
            .unwrap();
        assert_eq!(c.selected_node, None, "{name}");
    }
}

struct AssumeCase {
    name: &'static str,
    pod_pvcs: Vec<Value>,
    pvs: Vec<Value>,
    bindings: Vec<(Value, Value)>,
    provisions: Vec<Value>,
    fail: bool,
    all_bound: bool,
    /// `None`: the input's.
    want_bindings: Option<Vec<(Value, Value)>>,
    want_provisions: Option<Vec<Value>>,
}

fn run_assume(c: AssumeCase) {
    let name = c.name;
    let b = binder(&c.pod_pvcs, &c.pvs, None);
    let pod = test_pod(&c.pod_pvcs);
    let bindings: Vec<Binding> = c.bindings.iter().map(|(p, v)| binding(p, v)).collect();
    let provisions: Vec<Provision> = c.provisions.iter().map(provision).collect();
    let mut volumes = PodVolumes {
        static_bindings: bindings.clone(),
        dynamic_provisions: provisions.clone(),
    };
    let r = b.assume(&pod, Sym::new("node1"), &mut volumes);
    assert_eq!(r.is_err(), c.fail, "{name}: {r:?}");
    assert_eq!(r.unwrap_or(false), c.all_bound, "{name}: allBound");
    let want_bindings = c.want_bindings.unwrap_or(c.bindings);
    let want_provisions = c.want_provisions.unwrap_or(c.provisions);
    if c.fail {
        validate_restored(&b, name, &bindings, &provisions);
    } else {
        validate_assume(&b, name, &want_bindings, &want_provisions);
    }
    // kube's `validatePodCache`: the pod's volumes are the assumed copies (unchanged on
    // failure).
    let got: Vec<_> = (volumes.static_bindings.iter())
        .map(|b| ((*b.pvc).clone(), (*b.pv).clone()))
        .collect();
    let want: Vec<_> = (want_bindings.iter())
        .map(|(c, v)| (pvc_of(c), pv_of(v)))
        .collect();
    assert_eq!(got, want, "{name}: bindings");
    let got: Vec<_> = volumes
        .dynamic_provisions
        .iter()
        .map(|p| (*p.pvc).clone())
        .collect();
    let want: Vec<_> = want_provisions.iter().map(pvc_of).collect();
    assert_eq!(got, want, "{name}: provisions");
}

fn assume_case(name: &'static str, pod_pvcs: Vec<Value>, pvs: Vec<Value>) -> AssumeCase {
    AssumeCase {
        name,
        pod_pvcs,
        pvs,
        bindings: vec![],
        provisions: vec![],
        fail: false,
        all_bound: false,
        want_bindings: None,
        want_provisions: None,
    }
}

#[test]
fn assume_pod_volumes() {
    let (a, a2) = (unbound_pvc, unbound_pvc2);
    run_assume(AssumeCase {
        all_bound: true,
        ..assume_case("all-bound", vec![bound_pvc()], vec![pv_bound()])
    });
    run_assume(AssumeCase {
        bindings: vec![(a(), pv_node1a())],
        want_bindings: Some(vec![(a(), pv_node1a_bound())]),
        ..assume_case("one-binding", vec![a()], vec![pv_node1a()])
    });
    run_assume(AssumeCase {
        bindings: vec![(a(), pv_node1a()), (a2(), pv_node1b())],
        want_bindings: Some(vec![(a(), pv_node1a_bound()), (a2(), pv_node1b_bound())]),
        ..assume_case(
            "two-bindings",
            vec![a(), a2()],
            vec![pv_node1a(), pv_node1b()],
        )
    });
    run_assume(AssumeCase {
        bindings: vec![(a(), pv_node1a_bound())],
        ..assume_case("pv-already-bound", vec![a()], vec![pv_node1a_bound()])
    });
    run_assume(AssumeCase {
        bindings: vec![(a(), pv_node1a()), (a2(), pv_node1b())],
        fail: true,
        ..assume_case("tmpupdate-failed", vec![a()], vec![pv_node1a()])
    });
    run_assume(AssumeCase {
        bindings: vec![(a(), pv_node1a())],
        provisions: vec![provisioned_pvc()],
        want_bindings: Some(vec![(a(), pv_node1a_bound())]),
        want_provisions: Some(vec![selected_node_pvc()]),
        ..assume_case(
            "one-binding, one-pvc-provisioned",
            vec![a(), provisioned_pvc()],
            vec![pv_node1a()],
        )
    });
    run_assume(AssumeCase {
        bindings: vec![(a(), pv_node1a())],
        provisions: vec![provisioned_pvc2()],
        fail: true,
        ..assume_case(
            "one-binding, one-provision-tmpupdate-failed",
            vec![a(), provisioned_pvc_higher_version()],
            vec![pv_node1a()],
        )
    });
}

#[test]
fn revert_assumed_pod_volumes() {
    let pod_pvcs = [unbound_pvc(), provisioned_pvc()];
    let b = binder(&pod_pvcs, &[pv_node1a()], None);
    let pod = test_pod(&pod_pvcs);
    let bindings = vec![binding(&unbound_pvc(), &pv_node1a())];
    let provisions = vec![provision(&provisioned_pvc())];
    let mut volumes = PodVolumes {
        static_bindings: bindings.clone(),
        dynamic_provisions: provisions.clone(),
    };
    assert_eq!(b.assume(&pod, Sym::new("node1"), &mut volumes), Ok(false));
    let name = "revert";
    validate_assume(
        &b,
        name,
        &[(unbound_pvc(), pv_node1a_bound())],
        &[selected_node_pvc()],
    );
    b.revert(&volumes);
    validate_restored(&b, name, &bindings, &provisions);
}

#[path = "matcher_tests.rs"]
mod matcher;
