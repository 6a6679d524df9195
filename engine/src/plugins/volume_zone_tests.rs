//! Ported from kubernetes/kubernetes
//! pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go (v1.37.2): TestSingleZone,
//! TestMultiZone, TestWithBinding, and the hint tables
//! (TestIsSchedulableAfterPersistentVolumeClaimAdded, TestIsSchedulableAfterStorageClassAdded,
//! TestIsSchedulableAfterPersistentVolumeChange, their main cases). Lister NotFound texts are
//! the production listers' (`storageclass.storage.k8s.io "x" not found`), not the test
//! fakes' plural ones.

use super::*;
use crate::api::volume::pod_volume;
use crate::api::{Labels, Node, PodSpecInfo};
use crate::framework::events::ApiObject;
use serde_json::{Value, json};

const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";

fn obj<T: serde::de::DeserializeOwned + Send + Sync + 'static>(v: Value) -> ApiObject {
    ApiObject::from_json::<T>(v)
}

fn pv(name: &str, labels: Value) -> ApiObject {
    obj::<core::PersistentVolume>(json!({"metadata": {"name": name, "labels": labels}}))
}

fn pvc(name: &str, spec: Value) -> ApiObject {
    obj::<core::PersistentVolumeClaim>(json!({
        "metadata": {"name": name, "namespace": "default"}, "spec": spec
    }))
}

fn bound(name: &str, volume: &str) -> ApiObject {
    pvc(name, json!({"volumeName": volume}))
}

fn plugin(objects: &[(EventResource, ApiObject)]) -> VolumeZone {
    let l = VolumeListers::default();
    for (r, o) in objects {
        l.apply(*r, None, Some(o));
    }
    VolumeZone::new(Arc::new(l))
}

fn pod_with(claim: Option<&str>) -> Pod {
    let volumes = claim
        .map(|c| {
            pod_volume(
                &serde_json::from_value(
                    json!({"name": "vol", "persistentVolumeClaim": {"claimName": c}}),
                )
                .unwrap(),
            )
        })
        .into_iter()
        .collect();
    Pod::new(
        "default",
        "pod_1",
        Arc::new(PodSpecInfo {
            volumes,
            ..PodSpecInfo::default()
        }),
    )
}

fn node(labels: &[(&str, &str)]) -> NodeInfo {
    let mut n = Node::named("host1");
    n.labels = Arc::new(Labels::from_pairs(labels.iter().copied()));
    NodeInfo::new(Arc::new(n))
}

/// PreFilter's non-success (code, message), and Filter's (run after a PreFilter success, or
/// on a fresh state as kube's tests do after a failure).
type Verdict = Option<(Code, String)>;

/// A node's labels in a case.
type NodeLabels = Vec<(&'static str, &'static str)>;

fn run(pl: &VolumeZone, pod: &Pod, node: &NodeInfo) -> (Verdict, Verdict) {
    let verdict = |s: &Status| (!s.is_success()).then(|| (s.code(), s.message()));
    let mut state = CycleState::default();
    let (_, pre) = pl.pre_filter(&mut state, pod, &Snapshot::default());
    if pre.code() == Code::Skip {
        return (verdict(&pre), None);
    }
    let state = if pre.is_success() {
        state
    } else {
        CycleState::default()
    };
    (verdict(&pre), verdict(&pl.filter(&state, pod, node)))
}

fn conflict() -> Verdict {
    Some((
        Code::UnschedulableAndUnresolvable,
        ERR_REASON_CONFLICT.to_string(),
    ))
}

fn single_zone_plugin() -> VolumeZone {
    use EventResource::{PersistentVolume as PV, PersistentVolumeClaim as PVC};
    plugin(&[
        (PV, pv("Vol_1", json!({BETA_ZONE: "us-west1-a"}))),
        (
            PV,
            pv(
                "Vol_2",
                json!({BETA_REGION: "us-west1", "uselessLabel": "none"}),
            ),
        ),
        (PV, pv("Vol_3", json!({BETA_REGION: "us-west1"}))),
        (PV, pv("Vol_Stable_1", json!({ZONE: "us-west1-a"}))),
        (
            PV,
            pv(
                "Vol_Stable_2",
                json!({REGION: "us-west1", "uselessLabel": "none"}),
            ),
        ),
        (
            PV,
            pv(
                "Vol_Stable_3",
                json!({ZONE: "us-west1-a", REGION: "us-west1-a"}),
            ),
        ),
        (PVC, bound("PVC_1", "Vol_1")),
        (PVC, bound("PVC_2", "Vol_2")),
        (PVC, bound("PVC_3", "Vol_3")),
        (PVC, bound("PVC_4", "Vol_not_exist")),
        (PVC, bound("PVC_Stable_1", "Vol_Stable_1")),
        (PVC, bound("PVC_Stable_2", "Vol_Stable_2")),
        (PVC, bound("PVC_Stable_3", "Vol_Stable_3")),
    ])
}

#[test]
fn single_zone() {
    let pl = single_zone_plugin();
    let skip = Some((Code::Skip, String::new()));
    let cases: Vec<(&str, Option<&str>, NodeLabels, Verdict, Verdict)> = vec![
        (
            "pod without volume",
            None,
            vec![(BETA_ZONE, "us-west1-a")],
            skip,
            None,
        ),
        ("node without labels", Some("PVC_1"), vec![], None, None),
        (
            "beta zone label matched",
            Some("PVC_1"),
            vec![(BETA_ZONE, "us-west1-a"), ("uselessLabel", "none")],
            None,
            None,
        ),
        (
            "beta region label matched",
            Some("PVC_2"),
            vec![(BETA_REGION, "us-west1"), ("uselessLabel", "none")],
            None,
            None,
        ),
        (
            "beta region label doesn't match",
            Some("PVC_2"),
            vec![(BETA_REGION, "no_us-west1"), ("uselessLabel", "none")],
            None,
            conflict(),
        ),
        (
            "beta zone label doesn't match",
            Some("PVC_1"),
            vec![(BETA_ZONE, "no_us-west1-a"), ("uselessLabel", "none")],
            None,
            conflict(),
        ),
        (
            "zone label matched",
            Some("PVC_Stable_1"),
            vec![(ZONE, "us-west1-a"), ("uselessLabel", "none")],
            None,
            None,
        ),
        (
            "region label matched",
            Some("PVC_Stable_2"),
            vec![(REGION, "us-west1"), ("uselessLabel", "none")],
            None,
            None,
        ),
        (
            "region label doesn't match",
            Some("PVC_Stable_2"),
            vec![(REGION, "no_us-west1"), ("uselessLabel", "none")],
            None,
            conflict(),
        ),
        (
            "zone label doesn't match",
            Some("PVC_Stable_1"),
            vec![(ZONE, "no_us-west1-a"), ("uselessLabel", "none")],
            None,
            conflict(),
        ),
        (
            "pv with zone and region, node with only zone",
            Some("PVC_Stable_3"),
            vec![(ZONE, "us-west1-a")],
            None,
            conflict(),
        ),
        (
            "pv with zone,node with beta zone",
            Some("PVC_Stable_1"),
            vec![(BETA_ZONE, "us-west1-a")],
            None,
            conflict(),
        ),
        (
            "pv with beta label,node with ga label, matched",
            Some("PVC_1"),
            vec![(ZONE, "us-west1-a")],
            None,
            None,
        ),
        (
            "pv with beta label,node with ga label, don't match",
            Some("PVC_1"),
            vec![(ZONE, "us-west1-b")],
            None,
            conflict(),
        ),
    ];
    for (name, claim, labels, pre, filter) in cases {
        assert_eq!(
            run(&pl, &pod_with(claim), &node(&labels)),
            (pre, filter),
            "{name}"
        );
    }
}

#[test]
fn multi_zone() {
    use EventResource::{PersistentVolume as PV, PersistentVolumeClaim as PVC};
    let pl = plugin(&[
        (PV, pv("Vol_1", json!({BETA_ZONE: "us-west1-a"}))),
        (
            PV,
            pv(
                "Vol_2",
                json!({BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
            ),
        ),
        (
            PV,
            pv("Vol_3", json!({BETA_ZONE: "us-west1-c__us-west1-a"})),
        ),
        (PV, pv("Vol_Stable_1", json!({ZONE: "us-west1-a"}))),
        (
            PV,
            pv("Vol_Stable_2", json!({ZONE: "us-west1-c__us-west1-a"})),
        ),
        (PVC, bound("PVC_1", "Vol_1")),
        (PVC, bound("PVC_2", "Vol_2")),
        (PVC, bound("PVC_3", "Vol_3")),
        (PVC, bound("PVC_Stable_1", "Vol_Stable_1")),
        (PVC, bound("PVC_Stable_2", "Vol_Stable_2")),
    ]);
    let cases: Vec<(&str, &str, NodeLabels, Verdict)> = vec![
        ("node without labels", "PVC_3", vec![], None),
        (
            "beta zone label matched",
            "PVC_3",
            vec![(BETA_ZONE, "us-west1-a"), ("uselessLabel", "none")],
            None,
        ),
        (
            "beta zone label doesn't match",
            "PVC_1",
            vec![(BETA_ZONE, "us-west1-b"), ("uselessLabel", "none")],
            conflict(),
        ),
        (
            "zone label matched",
            "PVC_Stable_2",
            vec![(ZONE, "us-west1-a"), ("uselessLabel", "none")],
            None,
        ),
        (
            "zone label doesn't match",
            "PVC_Stable_1",
            vec![(ZONE, "us-west1-b"), ("uselessLabel", "none")],
            conflict(),
        ),
    ];
    for (name, claim, labels, filter) in cases {
        assert_eq!(
            run(&pl, &pod_with(Some(claim)), &node(&labels)),
            (None, filter),
            "{name}"
        );
    }
}

#[test]
fn with_binding() {
    use EventResource::{PersistentVolume as PV, PersistentVolumeClaim as PVC, StorageClass as SC};
    let sc = |name: &str, mode: Option<&str>| {
        let mut v = json!({"metadata": {"name": name}, "provisioner": "p"});
        if let Some(m) = mode {
            v["volumeBindingMode"] = json!(m);
        }
        obj::<storage::StorageClass>(v)
    };
    let pl = plugin(&[
        (SC, sc("Class_Immediate", None)),
        (SC, sc("Class_Wait", Some("WaitForFirstConsumer"))),
        (PV, pv("Vol_1", json!({BETA_ZONE: "us-west1-a"}))),
        (PVC, bound("PVC_1", "Vol_1")),
        (PVC, pvc("PVC_NoSC", json!({"storageClassName": "Class_0"}))),
        (PVC, pvc("PVC_EmptySC", json!({}))),
        (
            PVC,
            pvc("PVC_WaitSC", json!({"storageClassName": "Class_Wait"})),
        ),
        (
            PVC,
            pvc(
                "PVC_ImmediateSC",
                json!({"storageClassName": "Class_Immediate"}),
            ),
        ),
    ]);
    let host = node(&[(BETA_ZONE, "us-west1-a"), ("uselessLabel", "none")]);
    let both = |m: &str| {
        let v = Some((Code::UnschedulableAndUnresolvable, m.to_string()));
        (v.clone(), v)
    };
    assert_eq!(run(&pl, &pod_with(Some("PVC_1")), &host), (None, None));
    assert_eq!(
        run(&pl, &pod_with(Some("PVC_EmptySC")), &host),
        both("PersistentVolumeClaim had no pv name and storageClass name")
    );
    assert_eq!(
        run(&pl, &pod_with(Some("PVC_NoSC")), &host),
        both("storageclass.storage.k8s.io \"Class_0\" not found")
    );
    assert_eq!(
        run(&pl, &pod_with(Some("PVC_ImmediateSC")), &host),
        both("VolumeBindingMode not set for StorageClass \"Class_Immediate\"")
    );
    assert_eq!(
        run(&pl, &pod_with(Some("PVC_WaitSC")), &host),
        (Some((Code::Skip, String::new())), None)
    );
    // A claim or a volume the listers lack.
    assert_eq!(
        run(&pl, &pod_with(Some("PVC_missing")), &host),
        both("persistentvolumeclaim \"PVC_missing\" not found")
    );
    let pl = plugin(&[(PVC, bound("PVC_4", "Vol_not_exist"))]);
    assert_eq!(
        run(&pl, &pod_with(Some("PVC_4")), &host),
        both("persistentvolume \"Vol_not_exist\" not found")
    );
}

#[test]
fn an_empty_zone_in_a_label_ignores_the_label() {
    // cloud-provider's LabelZonesToSet refuses "a__", so kube's getPVTopologies drops the label.
    use EventResource::{PersistentVolume as PV, PersistentVolumeClaim as PVC};
    let pl = plugin(&[
        (PV, pv("v", json!({ZONE: "us-west1-a__"}))),
        (PVC, bound("c", "v")),
    ]);
    let (pre, _) = run(&pl, &pod_with(Some("c")), &node(&[(ZONE, "b")]));
    assert_eq!(pre, Some((Code::Skip, String::new())));
}

#[test]
fn hints() {
    let pl = plugin(&[]);
    let me = pod_with(Some("PVC_1"));
    let hint = |r: EventResource, a: ActionType, old: Option<ApiObject>, new: ApiObject| {
        let ev = ClusterEvent::new(r, a);
        let o = old.map_or(EventObject::None, EventObject::Object);
        pl.queueing_hint(&ev, &me, &o, &EventObject::Object(new))
            .unwrap()
    };
    use ActionType as A;
    use EventResource::{PersistentVolume as PV, PersistentVolumeClaim as PVC, StorageClass as SC};
    // A claim the pod names, added or updated, queues it; another does not.
    assert_eq!(
        hint(PVC, A::ADD, None, bound("PVC_1", "v")),
        QueueingHint::Queue
    );
    assert_eq!(
        hint(PVC, A::ADD, None, bound("PVC_2", "v")),
        QueueingHint::QueueSkip
    );
    // Only a WaitForFirstConsumer class helps.
    let sc = |mode: &str| {
        obj::<storage::StorageClass>(
            json!({"metadata": {"name": "c"}, "provisioner": "p", "volumeBindingMode": mode}),
        )
    };
    assert_eq!(
        hint(SC, A::ADD, None, sc("WaitForFirstConsumer")),
        QueueingHint::Queue
    );
    assert_eq!(
        hint(SC, A::ADD, None, sc("Immediate")),
        QueueingHint::QueueSkip
    );
    // A volume added queues; updated, only when its topology changed.
    let a = pv("v", json!({ZONE: "us-west1-a"}));
    assert_eq!(hint(PV, A::ADD, None, a.clone()), QueueingHint::Queue);
    assert_eq!(
        hint(
            PV,
            A::UPDATE,
            Some(a.clone()),
            pv("v", json!({ZONE: "us-west1-a", "x": "y"}))
        ),
        QueueingHint::QueueSkip
    );
    assert_eq!(
        hint(PV, A::UPDATE, Some(a), pv("v", json!({ZONE: "us-west1-b"}))),
        QueueingHint::Queue
    );
}
