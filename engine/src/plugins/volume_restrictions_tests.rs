//! Ported from kubernetes/kubernetes
//! pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go (v1.37.2):
//! TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
//! TestAccessModeConflicts, Test_isSchedulableAfterAssignedPodDeleted (the disk and claim
//! cases), Test_isSchedulableAfterPersistentVolumeClaimChange.

use super::*;
use crate::api::volume::pod_volume;
use crate::api::{Node, PodSpecInfo, Sym};
use crate::framework::events::ApiObject;
use serde_json::{Value, json};

fn pod(ns: &str, name: &str, node: Option<&str>, volumes: &[Value]) -> Arc<Pod> {
    let spec = PodSpecInfo {
        volumes: volumes
            .iter()
            .map(|v| pod_volume(&serde_json::from_value(v.clone()).unwrap()))
            .collect(),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new(ns, name, Arc::new(spec));
    p.node_name = node.map(Sym::new);
    Arc::new(p)
}

fn node_with(pods: &[Arc<Pod>]) -> Arc<NodeInfo> {
    let mut n = NodeInfo::new(Arc::new(Node::named("node-1")));
    for p in pods {
        n.add_pod(p);
    }
    Arc::new(n)
}

fn snapshot(nodes: &[Arc<NodeInfo>]) -> Snapshot {
    let mut s = Snapshot::default();
    for (i, n) in nodes.iter().enumerate() {
        s.index.insert(n.name(), i);
        s.nodes.push(n.clone());
    }
    s
}

fn claim(name: &str, mode: &str) -> ApiObject {
    ApiObject::from_json::<core::PersistentVolumeClaim>(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "1Gi"}}}
    }))
}

fn plugin(claims: &[ApiObject]) -> VolumeRestrictions {
    let l = VolumeListers::default();
    for c in claims {
        l.apply(EventResource::PersistentVolumeClaim, None, Some(c));
    }
    VolumeRestrictions::new(Arc::new(l))
}

/// A non-success status's code and message (`None`: Success).
type Verdict = Option<(Code, String)>;

/// PreFilter's code (`None`: Success) and, when it passes, Filter's on `node`.
fn run(
    pl: &VolumeRestrictions,
    pod: &Pod,
    node: &Arc<NodeInfo>,
    snap: &Snapshot,
) -> (Verdict, Verdict) {
    let mut state = CycleState::default();
    let (_, pre) = pl.pre_filter(&mut state, pod, snap);
    let code = |s: &Status| (!s.is_success()).then(|| (s.code(), s.message()));
    if !pre.is_success() {
        return (code(&pre), None);
    }
    let f = pl.filter(&state, pod, node);
    (None, code(&f))
}

/// The four disk tables: "nothing", "one state", "same state", "different state" (and the
/// GCE table's "pod with a volume that doesn't have restrictions").
fn disk_table(same: Value, other: Value) {
    let pl = plugin(&[]);
    let snap = snapshot(&[]);
    let holder = |v: &Value| pod("default", "holder", Some("node-1"), std::slice::from_ref(v));
    let skip = Some((Code::Skip, String::new()));
    let conflict = Some((Code::Unschedulable, ERR_REASON_DISK_CONFLICT.to_string()));
    let empty = pod("default", "p", None, &[]);
    // nothing
    assert_eq!(
        run(&pl, &empty, &node_with(&[]), &snap),
        (skip.clone(), None)
    );
    // one state
    assert_eq!(
        run(&pl, &empty, &node_with(&[holder(&same)]), &snap),
        (skip.clone(), None)
    );
    // same state
    let p = pod("default", "p", None, std::slice::from_ref(&same));
    assert_eq!(
        run(&pl, &p, &node_with(&[holder(&same)]), &snap),
        (None, conflict)
    );
    // different state
    let q = pod("default", "q", None, &[other]);
    assert_eq!(
        run(&pl, &q, &node_with(&[holder(&same)]), &snap),
        (None, None)
    );
    // a volume without restrictions
    let r = pod(
        "default",
        "r",
        None,
        &[json!({"name": "v", "emptyDir": {}})],
    );
    assert_eq!(run(&pl, &r, &node_with(&[]), &snap), (skip, None));
}

#[test]
fn gce_disk_conflicts() {
    disk_table(
        json!({"name": "v", "gcePersistentDisk": {"pdName": "foo"}}),
        json!({"name": "v", "gcePersistentDisk": {"pdName": "bar"}}),
    );
}

#[test]
fn aws_disk_conflicts() {
    disk_table(
        json!({"name": "v", "awsElasticBlockStore": {"volumeID": "foo"}}),
        json!({"name": "v", "awsElasticBlockStore": {"volumeID": "bar"}}),
    );
}

#[test]
fn rbd_disk_conflicts() {
    disk_table(
        json!({"name": "v", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}),
        json!({"name": "v", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}),
    );
}

#[test]
fn iscsi_disk_conflicts() {
    disk_table(
        json!({"name": "v", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "fsType": "ext4", "lun": 0}}),
        json!({"name": "v", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4", "lun": 0}}),
    );
}

#[test]
fn read_only_disks_share_except_ebs() {
    // kube's isVolumeConflict: two read-only GCE PDs (or RBD, ISCSI) share; EBS never does.
    let gce = json!({"name": "v", "gcePersistentDisk": {"pdName": "foo", "readOnly": true}});
    let ebs = json!({"name": "v", "awsElasticBlockStore": {"volumeID": "foo", "readOnly": true}});
    let pl = plugin(&[]);
    let snap = snapshot(&[]);
    for (v, clash) in [(gce, false), (ebs, true)] {
        let holder = pod("default", "h", Some("node-1"), std::slice::from_ref(&v));
        let p = pod("default", "p", None, &[v]);
        let (_, f) = run(&pl, &p, &node_with(&[holder]), &snap);
        assert_eq!(f.is_some(), clash);
    }
}

fn pvc_volume(name: &str) -> Value {
    json!({"name": name, "persistentVolumeClaim": {"claimName": name}})
}

#[test]
fn access_mode_conflicts() {
    let on_node = |name: &str, claims: &[&str]| {
        let vols: Vec<Value> = claims.iter().map(|c| pvc_volume(c)).collect();
        pod("default", name, Some("node-1"), &vols)
    };
    let with_one = on_node("pod-with-one-pvc", &["claim-with-rwop-1"]);
    let with_two = on_node(
        "pod-with-two-pvcs",
        &["claim-with-rwop-1", "claim-with-rwop-2"],
    );
    let one_conflict = on_node("pod-with-one-conflict", &["claim-with-rwop-1"]);
    let two_conflicts = on_node(
        "pod-with-two-conflicts",
        &["claim-with-rwop-1", "claim-with-rwop-2"],
    );
    let rwx = on_node("pod-with-rwx", &["claim-with-rwx"]);
    let rwop1 = claim("claim-with-rwop-1", "ReadWriteOncePod");
    let rwop2 = claim("claim-with-rwop-2", "ReadWriteOncePod");
    let many = claim("claim-with-rwx", "ReadWriteMany");
    let skip = Some((Code::Skip, String::new()));
    let rwop = Some((
        Code::Unschedulable,
        ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT.to_string(),
    ));
    // nothing
    let empty = pod("default", "p", None, &[]);
    assert_eq!(
        run(&plugin(&[]), &empty, &node_with(&[]), &snapshot(&[])),
        (skip.clone(), None)
    );
    // failed to get PVC
    assert_eq!(
        run(&plugin(&[]), &with_one, &node_with(&[]), &snapshot(&[])),
        (
            Some((
                Code::UnschedulableAndUnresolvable,
                "persistentvolumeclaim \"claim-with-rwop-1\" not found".to_string()
            )),
            None
        )
    );
    // no access mode conflict
    let node = node_with(std::slice::from_ref(&rwx));
    assert_eq!(
        run(
            &plugin(&[rwop1.clone(), many.clone()]),
            &with_one,
            &node,
            &snapshot(std::slice::from_ref(&node))
        ),
        (skip, None)
    );
    // access mode conflict, unschedulable
    let node = node_with(&[with_one.clone(), rwx.clone()]);
    assert_eq!(
        run(
            &plugin(&[rwop1.clone(), many.clone()]),
            &one_conflict,
            &node,
            &snapshot(std::slice::from_ref(&node))
        ),
        (None, rwop.clone())
    );
    // two conflicts, unschedulable
    let node = node_with(&[with_two, rwx]);
    assert_eq!(
        run(
            &plugin(&[rwop1, rwop2, many]),
            &two_conflicts,
            &node,
            &snapshot(std::slice::from_ref(&node))
        ),
        (None, rwop)
    );
}

#[test]
fn removing_the_claims_user_clears_the_conflict() {
    // AddPod/RemovePod (preemption's view): with the other user removed, the claim is free.
    let user = pod(
        "default",
        "user",
        Some("node-1"),
        &[pvc_volume("claim-with-rwop-1")],
    );
    let me = pod("default", "me", None, &[pvc_volume("claim-with-rwop-1")]);
    let node = node_with(std::slice::from_ref(&user));
    let pl = plugin(&[claim("claim-with-rwop-1", "ReadWriteOncePod")]);
    let mut state = CycleState::default();
    let (_, pre) = pl.pre_filter(&mut state, &me, &snapshot(std::slice::from_ref(&node)));
    assert!(pre.is_success());
    assert_eq!(pl.filter(&state, &me, &node).code(), Code::Unschedulable);
    assert!(pl.remove_pod(&mut state, &me, &user, &node).is_success());
    assert!(pl.filter(&state, &me, &node).is_success());
    assert!(pl.add_pod(&mut state, &me, &user, &node).is_success());
    assert_eq!(pl.filter(&state, &me, &node).code(), Code::Unschedulable);
}

#[test]
fn an_assigned_pods_deletion_queues_only_what_it_frees() {
    let pl = plugin(&[]);
    let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
    let gce = json!({"name": "v", "gcePersistentDisk": {"pdName": "foo"}});
    let me = pod("default", "me", None, &[gce.clone(), pvc_volume("claim-1")]);
    let hint = |deleted: Arc<Pod>| {
        pl.queueing_hint(&ev, &me, &EventObject::Pod(deleted), &EventObject::None)
            .unwrap()
    };
    assert_eq!(
        hint(pod(
            "default",
            "d",
            Some("node-1"),
            std::slice::from_ref(&gce)
        )),
        QueueingHint::Queue,
        "a disk conflict"
    );
    assert_eq!(
        hint(pod(
            "default",
            "d",
            Some("node-1"),
            &[pvc_volume("claim-1")]
        )),
        QueueingHint::Queue,
        "the same claim"
    );
    assert_eq!(
        hint(pod("other", "d", Some("node-1"), &[pvc_volume("claim-1")])),
        QueueingHint::QueueSkip,
        "another namespace"
    );
    assert_eq!(
        hint(pod(
            "default",
            "d",
            Some("node-1"),
            &[pvc_volume("claim-2")]
        )),
        QueueingHint::QueueSkip,
        "another claim"
    );
}

#[test]
fn a_claim_added_queues_the_pods_that_name_it() {
    let pl = plugin(&[]);
    let ev = ClusterEvent::new(EventResource::PersistentVolumeClaim, ActionType::ADD);
    let me = pod("default", "me", None, &[pvc_volume("claim-with-rwop-1")]);
    let hint = |c: ApiObject| {
        pl.queueing_hint(&ev, &me, &EventObject::None, &EventObject::Object(c))
            .unwrap()
    };
    assert_eq!(
        hint(claim("claim-with-rwop-1", "ReadWriteOncePod")),
        QueueingHint::Queue
    );
    assert_eq!(
        hint(claim("claim-with-rwop-2", "ReadWriteOncePod")),
        QueueingHint::QueueSkip
    );
}
