//! Ported from kubernetes/kubernetes
//! pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go (v1.37.2): TestCSILimits (all
//! 33 cases), TestCSILimitsQHint, TestCSILimitsAddedPVCQHint,
//! TestCSILimitsDeletedVolumeAttachmentQHint, TestCSILimitsAfterCSINodeUpdatedQHint,
//! TestVolumeLimitScalingGate (the gate-on cases: tidegate always has VolumeLimitScaling) and
//! TestCSILimits_DeferredResizeSkipped.
//!
//! Differences from kube's tables:
//! - Lister NotFound texts are the production listers' singular ones
//!   (`persistentvolumeclaim "abc-xyz" not found`), not kube's test fakes' plural
//!   `persistentvolumeclaims "abc-xyz" not found`.
//! - kube's `ephemeralEnabled` and `migrationEnabled` columns are read by nothing in v1.37
//!   (both features are GA); the cases are kept with their names. kube's
//!   `enableMigrationOnNode` annotation is written on every CSINode as kube's test does,
//!   though `isCSIMigrationOn` does not read it (one case of our own checks that).
//! - Filter also runs on a fresh CycleState (no PreFilter state) and must agree with the run
//!   after PreFilter: the plugin computes the pod's volumes in PreFilter for both kinds of node.
//! - The deferred-resize pod uses a missing claim, so that it fails unless the resize check
//!   skips it (kube's pod has no volumes and would pass anyway).
//! - Cases marked "tidegate:" are not in kube's tables; each cites the csi.go behaviour it pins.

use super::*;
use crate::api::volume::pod_volume;
use crate::api::{Node, PodResize, PodSpecInfo, ResizePending, Resource};
use crate::framework::events::ApiObject;
use serde_json::{Value, json};

const NODE: &str = "node-for-max-pd-test-1";
const EBS: &str = "ebs.csi.aws.com";
const GCE: &str = "pd.csi.storage.gke.io";
const EBS_IN_TREE: &str = "kubernetes.io/aws-ebs";
const HOSTPATH_IN_TREE: &str = "kubernetes.io/hostpath";
const SC_NAME: &str = "csi-sc";

fn obj<T: serde::de::DeserializeOwned + Send + Sync + 'static>(v: Value) -> ApiObject {
    ApiObject::from_json::<T>(v)
}

// ---- pods ----

fn pod(ns: &str, name: &str, uid: &str, volumes: &[Value]) -> Pod {
    let spec = PodSpecInfo {
        volumes: volumes
            .iter()
            .map(|v| pod_volume(&serde_json::from_value(v.clone()).unwrap()))
            .collect(),
        ..PodSpecInfo::default()
    };
    let mut p = Pod::new(ns, name, Arc::new(spec));
    p.uid = Arc::from(uid);
    p
}

/// `st.MakePod().PVC(a).PVC(b)`: the volume is named after its claim.
fn pvc_vol(claim: &str) -> Value {
    json!({"name": claim, "persistentVolumeClaim": {"claimName": claim}})
}

fn pvc_pod(claims: &[&str]) -> Pod {
    let v: Vec<Value> = claims.iter().map(|c| pvc_vol(c)).collect();
    pod("", "", "", &v)
}

fn ephemeral_vol(name: &str) -> Value {
    json!({"name": name, "ephemeral": {}})
}

fn ebs_inline(id: &str) -> Value {
    json!({"name": "", "awsElasticBlockStore": {"volumeID": id}})
}

fn config_map_and_secret() -> [Value; 2] {
    [
        json!({"name": "", "configMap": {}}),
        json!({"name": "", "secret": {}}),
    ]
}

fn running_pod() -> Pod {
    pvc_pod(&["csi-ebs.csi.aws.com-3"])
}
fn pending_volume_pod() -> Pod {
    pvc_pod(&["csi-4"])
}
fn csi_ebs_one_vol_pod() -> Pod {
    pvc_pod(&["csi-ebs.csi.aws.com-0"])
}
fn csi_ebs_two_vol_pod() -> Pod {
    pvc_pod(&["csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"])
}
fn gce_two_vol_pod() -> Pod {
    pvc_pod(&["csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2"])
}
fn in_tree_one_vol_pod() -> Pod {
    pvc_pod(&["csi-kubernetes.io/aws-ebs-0"])
}
fn in_tree_two_vol_pod() -> Pod {
    pvc_pod(&["csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2"])
}
fn in_tree_inline_vol_pod(id: &str) -> Pod {
    pod("", "", "", &[ebs_inline(id)])
}
fn ephemeral_volume_pod() -> Pod {
    pod("test", "abc", "12345", &[ephemeral_vol("xyz")])
}
fn ephemeral_two_volume_pod() -> Pod {
    pod(
        "test",
        "abc",
        "12345II",
        &[ephemeral_vol("x"), ephemeral_vol("y")],
    )
}

/// A generic ephemeral volume's claim in namespace `test`, controlled by the pod `owner_uid`
/// (`None`: no owner, kube's `conflictingClaim`).
fn ephemeral_claim(name: &str, owner_uid: Option<&str>) -> ApiObject {
    let owners = owner_uid.map_or(json!([]), |uid| {
        json!([{"apiVersion": "v1", "kind": "Pod", "name": "abc", "uid": uid, "controller": true}])
    });
    obj::<core::PersistentVolumeClaim>(json!({
        "metadata": {"name": name, "namespace": "test", "ownerReferences": owners},
        "spec": {"storageClassName": SC_NAME}
    }))
}

// ---- the cluster (kube's fake listers) ----

/// kube's `limitSource`.
#[derive(Clone, Copy, Debug)]
enum Limits {
    /// "": no CSINode object.
    NoCsiNode,
    /// "csinode": each driver with `allocatable.count` = max.
    CsiNode,
    /// "csinode-with-no-limit": the drivers without `allocatable`.
    NoLimit,
    /// "no-csi-driver": a CSINode without drivers.
    NoDriver,
}

/// kube's `getFakeCSIPVLister`, `getFakeCSIPVCLister`, `getFakeCSIStorageClassLister` (the
/// class provisions with `drivers[0]`), `getNodeWithPodAndVolumeLimits`' CSINode (with
/// `enableMigrationOnNode`) and `buildFakeClientWithVALister`.
fn listers(drivers: &[&str], limits: Limits, max: i32, vas: usize) -> VolumeListers {
    use EventResource as R;
    let l = VolumeListers::default();
    let add = |r: R, o: ApiObject| l.apply(r, None, Some(&o));
    for d in drivers {
        for j in 0..4 {
            let name = format!("csi-{d}-{j}");
            let source = match *d {
                EBS_IN_TREE => json!({"awsElasticBlockStore": {"volumeID": name}}),
                HOSTPATH_IN_TREE => json!({"hostPath": {"path": "/tmp"}}),
                _ => json!({"csi": {"driver": d, "volumeHandle": name}}),
            };
            add(
                R::PersistentVolume,
                obj::<core::PersistentVolume>(json!({"metadata": {"name": name}, "spec": source})),
            );
            let claim = json!({"metadata": {"name": name}, "spec": {"volumeName": name}});
            add(
                R::PersistentVolumeClaim,
                obj::<core::PersistentVolumeClaim>(claim),
            );
        }
        for j in 0..vas {
            add(
                R::VolumeAttachment,
                obj::<storage::VolumeAttachment>(json!({
                    "metadata": {"name": format!("va-{d}-{j}")},
                    "spec": {"nodeName": NODE, "attacher": d,
                             "source": {"persistentVolumeName": format!("csi-{d}-{j}")}}
                })),
            );
        }
    }
    for spec in [
        json!({"metadata": {"name": "csi-4"}, "spec": {"storageClassName": SC_NAME}}),
        json!({"metadata": {"name": "csi-5"}, "spec": {}}),
        json!({"metadata": {"name": "csi-6"},
               "spec": {"storageClassName": SC_NAME, "volumeName": "missing-in-action"}}),
    ] {
        add(
            R::PersistentVolumeClaim,
            obj::<core::PersistentVolumeClaim>(spec),
        );
    }
    add(
        R::StorageClass,
        obj::<storage::StorageClass>(
            json!({"metadata": {"name": SC_NAME}, "provisioner": drivers[0]}),
        ),
    );
    let driver = |d: &&str| match limits {
        Limits::CsiNode => json!({"name": d, "nodeID": NODE, "allocatable": {"count": max}}),
        _ => json!({"name": d, "nodeID": NODE}),
    };
    let csi_drivers: Vec<Value> = match limits {
        Limits::NoCsiNode => return l,
        Limits::NoDriver => vec![],
        Limits::CsiNode | Limits::NoLimit => drivers.iter().map(driver).collect(),
    };
    add(R::CSINode, csi_node_obj(csi_drivers, true));
    l
}

fn csi_node_obj(drivers: Vec<Value>, migration_annotation: bool) -> ApiObject {
    let annotations = if migration_annotation {
        json!({crate::api::volume::MIGRATED_PLUGINS: EBS_IN_TREE})
    } else {
        json!({})
    };
    obj::<storage::CSINode>(json!({
        "metadata": {"name": NODE, "annotations": annotations},
        "spec": {"drivers": drivers}
    }))
}

fn node_with(existing: Vec<Pod>) -> NodeInfo {
    let mut n = NodeInfo::new(Arc::new(Node::named(NODE)));
    for mut p in existing {
        p.node_name = Some(Sym::new(NODE));
        n.add_pod(&Arc::new(p));
    }
    n
}

/// A non-success status's code and message (`None`: Success).
type Verdict = Option<(Code, String)>;

fn verdict(s: &Status) -> Verdict {
    (!s.is_success()).then(|| (s.code(), s.message()))
}

fn exceeded() -> Verdict {
    Some((
        Code::Unschedulable,
        ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED.to_string(),
    ))
}

/// PreFilter's verdict, then Filter's after a PreFilter success (none after a Skip, as the
/// framework does). Filter on a fresh state must say the same.
fn run(pl: &NodeVolumeLimits, pod: &Pod, node: &NodeInfo, name: &str) -> (Verdict, Verdict) {
    let mut state = CycleState::default();
    let (res, pre) = pl.pre_filter(&mut state, pod, &Snapshot::default());
    assert!(res.is_none(), "{name}: PreFilter result");
    if pre.code() == Code::Skip {
        return (verdict(&pre), None);
    }
    let got = verdict(&pl.filter(&state, pod, node));
    let fresh = verdict(&pl.filter(&CycleState::default(), pod, node));
    assert_eq!(got, fresh, "{name}: Filter without PreFilter state");
    (verdict(&pre), got)
}

// ---- TestCSILimits ----

/// One row of TestCSILimits (`filterName` is always "csi").
struct Case {
    name: &'static str,
    new: Pod,
    existing: Vec<Pod>,
    drivers: &'static [&'static str],
    limits: Limits,
    max: i32,
    vas: usize,
    claims: Vec<ApiObject>,
}

fn case(name: &'static str, new: Pod, drivers: &'static [&'static str]) -> Case {
    Case {
        name,
        new,
        existing: vec![],
        drivers,
        limits: Limits::NoCsiNode,
        max: 0,
        vas: 0,
        claims: vec![],
    }
}

impl Case {
    fn on(mut self, existing: Vec<Pod>) -> Case {
        self.existing = existing;
        self
    }
    fn limits(mut self, limits: Limits, max: i32) -> Case {
        self.limits = limits;
        self.max = max;
        self
    }
    fn vas(mut self, n: usize) -> Case {
        self.vas = n;
        self
    }
    fn claims(mut self, claims: Vec<ApiObject>) -> Case {
        self.claims = claims;
        self
    }
    fn expect(self, want_pre: Verdict, want: Verdict) {
        let l = listers(self.drivers, self.limits, self.max, self.vas);
        for c in &self.claims {
            l.apply(EventResource::PersistentVolumeClaim, None, Some(c));
        }
        let pl = NodeVolumeLimits::new(Arc::new(l));
        let node = node_with(self.existing);
        let got = run(&pl, &self.new, &node, self.name);
        assert_eq!(got, (want_pre, want), "{}", self.name);
    }
    fn fits(self) {
        self.expect(None, None);
    }
    fn exceeds(self) {
        self.expect(None, exceeded());
    }
}

const EBS_ONLY: &[&str] = &[EBS];
const EBS_GCE: &[&str] = &[EBS, GCE];
const MIGRATED: &[&str] = &[EBS_IN_TREE, EBS];

#[test]
fn csi_limits_count_csi_claims_and_attachments() {
    use Limits::{CsiNode, NoLimit};
    case(
        "should count VolumeAttachments towards volume limit when no pods exist",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .limits(CsiNode, 2)
    .vas(2)
    .exceeds();
    case(
        "should schedule pod when VolumeAttachments count does not exceed limit",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .limits(CsiNode, 2)
    .vas(1)
    .fits();
    case(
        "fits when node volume limit >= new pods CSI volume",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![running_pod(), csi_ebs_two_vol_pod()])
    .limits(CsiNode, 4)
    .fits();
    case(
        "doesn't when node volume limit <= pods CSI volume",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![running_pod(), csi_ebs_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    case(
        "should when driver does not support volume limits",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![running_pod(), csi_ebs_two_vol_pod()])
    .limits(NoLimit, 2)
    .fits();
    case(
        "count pending PVCs towards volume limit <= pods CSI volume",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![pending_volume_pod(), csi_ebs_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    // Two pods on the same unbound claim count it once: 1 + 2 + 1 new = 4.
    case(
        "count multiple pending pvcs towards volume limit >= pods CSI volume",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![
        pending_volume_pod(),
        pending_volume_pod(),
        csi_ebs_two_vol_pod(),
    ])
    .limits(CsiNode, 4)
    .fits();
    case(
        "should count PVCs with invalid PV name but valid SC",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![pvc_pod(&["csi-6"]), csi_ebs_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    case(
        "don't count pvcs with missing SC towards volume limit",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .on(vec![running_pod(), pvc_pod(&["csi-5"])])
    .limits(CsiNode, 2)
    .fits();
    case(
        "count pvcs with the same type towards volume limit",
        csi_ebs_one_vol_pod(),
        EBS_GCE,
    )
    .on(vec![gce_two_vol_pod(), csi_ebs_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    case(
        "don't count pvcs with different type towards volume limit",
        gce_two_vol_pod(),
        EBS_GCE,
    )
    .on(vec![csi_ebs_two_vol_pod(), running_pod()])
    .limits(CsiNode, 2)
    .fits();
}

#[test]
fn csi_limits_count_migrated_in_tree_volumes() {
    use Limits::{CsiNode, NoCsiNode, NoLimit};
    case(
        "should count in-tree volumes if migration is enabled",
        in_tree_one_vol_pod(),
        MIGRATED,
    )
    .on(vec![in_tree_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    case(
        "nil csi node",
        in_tree_inline_vol_pod("aws-inline1"),
        MIGRATED,
    )
    .on(vec![in_tree_two_vol_pod()])
    .limits(NoCsiNode, 0)
    .fits();
    case(
        "should count unbound in-tree volumes if migration is enabled",
        pending_volume_pod(),
        MIGRATED,
    )
    .on(vec![in_tree_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    case(
        "should not limit pod if volume used does not report limits",
        in_tree_one_vol_pod(),
        MIGRATED,
    )
    .on(vec![in_tree_two_vol_pod()])
    .limits(NoLimit, 2)
    .fits();
    case(
        "should not count non-migratable in-tree volumes",
        pvc_pod(&["csi-kubernetes.io/hostpath-0"]),
        &[HOSTPATH_IN_TREE, EBS],
    )
    .on(vec![csi_ebs_two_vol_pod()])
    .limits(CsiNode, 2)
    .fits();
    case(
        "should count in-tree inline volumes if migration is enabled",
        in_tree_inline_vol_pod("aws-inline1"),
        MIGRATED,
    )
    .on(vec![in_tree_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    case("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", in_tree_one_vol_pod(), MIGRATED)
        .on(vec![csi_ebs_two_vol_pod()]).limits(CsiNode, 2).exceeds();
    case("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", in_tree_inline_vol_pod("aws-inline1"), MIGRATED)
        .on(vec![csi_ebs_two_vol_pod(), in_tree_one_vol_pod()]).limits(CsiNode, 3).exceeds();
    // The inline disk's handle is the CSI volume csi-ebs.csi.aws.com-1's: already attached.
    case("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", in_tree_inline_vol_pod("csi-ebs.csi.aws.com-1"), MIGRATED)
        .on(vec![csi_ebs_two_vol_pod(), in_tree_one_vol_pod()]).limits(CsiNode, 3).fits();
    case("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", csi_ebs_one_vol_pod(), MIGRATED)
        .on(vec![in_tree_two_vol_pod()]).limits(CsiNode, 2).exceeds();
}

#[test]
fn csi_limits_count_ephemeral_volumes() {
    use Limits::{CsiNode, NoLimit};
    let owned = || ephemeral_claim("abc-xyz", Some("12345"));
    let missing = Some((
        Code::UnschedulableAndUnresolvable,
        r#"looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found"#.to_string(),
    ));
    case("ephemeral volume missing", ephemeral_volume_pod(), EBS_ONLY)
        .limits(NoLimit, 0)
        .expect(None, missing);
    let not_owner = "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)";
    case(
        "ephemeral volume not owned",
        ephemeral_volume_pod(),
        EBS_ONLY,
    )
    .claims(vec![ephemeral_claim("abc-xyz", None)])
    .limits(NoLimit, 0)
    .expect(None, Some((Code::Error, not_owner.to_string())));
    case("ephemeral volume unbound", ephemeral_volume_pod(), EBS_ONLY)
        .claims(vec![owned()])
        .limits(NoLimit, 0)
        .fits();
    case(
        "ephemeral doesn't when node volume limit <= pods CSI volume",
        ephemeral_volume_pod(),
        EBS_ONLY,
    )
    .claims(vec![owned()])
    .on(vec![running_pod(), csi_ebs_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    let xy = || {
        vec![
            ephemeral_claim("abc-x", Some("12345II")),
            ephemeral_claim("abc-y", Some("12345II")),
        ]
    };
    case(
        "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .claims(xy())
    .on(vec![running_pod(), ephemeral_two_volume_pod()])
    .limits(CsiNode, 2)
    .exceeds();
    let three = || vec![running_pod(), ephemeral_volume_pod(), csi_ebs_two_vol_pod()];
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled", csi_ebs_one_vol_pod(), EBS_ONLY)
        .claims(vec![owned()]).on(three()).limits(CsiNode, 3).exceeds();
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", csi_ebs_one_vol_pod(), EBS_ONLY)
        .claims(vec![owned()]).on(three()).limits(CsiNode, 3).exceeds();
    case(
        "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
        csi_ebs_one_vol_pod(),
        EBS_ONLY,
    )
    .claims(vec![owned()])
    .on(three())
    .limits(CsiNode, 5)
    .fits();
}

#[test]
fn csi_limits_pre_filter_skips_only_pods_without_counted_volumes() {
    use Limits::{CsiNode, NoLimit};
    let [cm, secret] = config_map_and_secret();
    let only = pod("", "", "", &[cm.clone(), secret.clone()]);
    case(
        "skip Filter when the pod only uses secrets and configmaps",
        only,
        EBS_ONLY,
    )
    .limits(CsiNode, 2)
    .expect(Some((Code::Skip, String::new())), None);
    let with_pvc = pod(
        "",
        "",
        "",
        &[cm.clone(), secret.clone(), pvc_vol("csi-ebs.csi.aws.com-0")],
    );
    case(
        "don't skip Filter when the pod has pvcs",
        with_pvc,
        EBS_ONLY,
    )
    .limits(CsiNode, 2)
    .fits();
    let with_ephemeral = pod(
        "test",
        "abc",
        "",
        &[cm.clone(), secret.clone(), ephemeral_vol("xyz")],
    );
    let missing = r#"looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found"#;
    case(
        "don't skip Filter when the pod has ephemeral volumes",
        with_ephemeral,
        EBS_ONLY,
    )
    .limits(NoLimit, 0)
    .expect(
        None,
        Some((Code::UnschedulableAndUnresolvable, missing.to_string())),
    );
    let with_inline = pod("", "", "", &[cm, secret, ebs_inline("aws-inline1")]);
    case(
        "don't skip Filter when the pod has inline migratable volumes",
        with_inline,
        MIGRATED,
    )
    .on(vec![in_tree_two_vol_pod()])
    .limits(CsiNode, 2)
    .exceeds();
}

/// tidegate: kube's `isCSIMigrationOn` wants a CSINode, not its migrated-plugins annotation
/// (csi.go's utils.go `isCSIMigrationOn`); and a missing claim of a pod already on the node is
/// not counted (csi.go `filterAttachableVolumes`, `newPod` false).
#[test]
fn csi_limits_migration_needs_no_annotation_and_existing_pods_may_miss_claims() {
    let l = listers(MIGRATED, Limits::NoCsiNode, 0, 0);
    let limited = |d: &str| json!({"name": d, "nodeID": NODE, "allocatable": {"count": 2}});
    let node_obj = csi_node_obj(vec![limited(EBS_IN_TREE), limited(EBS)], false);
    l.apply(EventResource::CSINode, None, Some(&node_obj));
    let pl = NodeVolumeLimits::new(Arc::new(l));
    let node = node_with(vec![in_tree_two_vol_pod()]);
    let name = "in-tree volumes count without the annotation";
    assert_eq!(
        run(&pl, &in_tree_one_vol_pod(), &node, name),
        (None, exceeded())
    );
    let node = node_with(vec![pvc_pod(&["no-such-claim"]), csi_ebs_two_vol_pod()]);
    let name = "an existing pod's missing claim is not counted";
    assert_eq!(
        run(&pl, &csi_ebs_one_vol_pod(), &node, name),
        (None, exceeded())
    );
    let node = node_with(vec![pvc_pod(&["no-such-claim"]), running_pod()]);
    assert_eq!(run(&pl, &csi_ebs_one_vol_pod(), &node, name), (None, None));
}

/// tidegate: csi.go Filter ("Avoid double-counting volumes already used by existing pods")
/// and `getNodeVolumeAttachmentInfo`: a VolumeAttachment of a volume a pod on the node uses
/// counts once; one of another node, one without a volume and one of a non-CSI volume do not
/// count.
#[test]
fn attachments_count_once_and_only_this_nodes_csi_volumes() {
    let l = listers(MIGRATED, Limits::CsiNode, 2, 0);
    let va = |name: &str, node: &str, source: Value| {
        let o = obj::<storage::VolumeAttachment>(json!({
            "metadata": {"name": name},
            "spec": {"nodeName": node, "attacher": EBS, "source": source}
        }));
        l.apply(EventResource::VolumeAttachment, None, Some(&o));
    };
    let pv = |name: &str| json!({"persistentVolumeName": name});
    va("same-as-pod", NODE, pv("csi-ebs.csi.aws.com-0"));
    va("other-node", "other", pv("csi-ebs.csi.aws.com-2"));
    va("no-volume", NODE, json!({}));
    va("in-tree", NODE, pv("csi-kubernetes.io/aws-ebs-3"));
    va("missing-pv", NODE, pv("no-such-pv"));
    let pl = NodeVolumeLimits::new(Arc::new(l));
    let new = pvc_pod(&["csi-ebs.csi.aws.com-1"]);
    let node = node_with(vec![csi_ebs_one_vol_pod()]);
    let name = "attachments beside a pod";
    assert_eq!(run(&pl, &new, &node, name), (None, None));
    // One more attachment of this node's counts.
    pl.volumes.apply(
        EventResource::VolumeAttachment,
        None,
        Some(&obj::<storage::VolumeAttachment>(json!({
            "metadata": {"name": "counted"},
            "spec": {"nodeName": NODE, "attacher": EBS, "source": pv("csi-ebs.csi.aws.com-3")}
        }))),
    );
    assert_eq!(run(&pl, &new, &node, name), (None, exceeded()));
}

// ---- TestVolumeLimitScalingGate (gate on) ----

#[test]
fn volume_limit_scaling_checks_the_driver_is_on_the_node() {
    let not_installed = Some((
        Code::Unschedulable,
        format!("{EBS} CSI driver is not installed on the node"),
    ));
    // (name, limit source, limit, CSIDriver present, preventPodSchedulingIfMissing, want)
    let cases: Vec<(&str, Limits, i32, bool, bool, Verdict)> = vec![
        (
            "gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set",
            Limits::NoDriver,
            0,
            true,
            false,
            None,
        ),
        (
            "gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true",
            Limits::NoDriver,
            0,
            true,
            true,
            not_installed.clone(),
        ),
        (
            "gate enabled - driver installed within limit",
            Limits::CsiNode,
            2,
            true,
            true,
            None,
        ),
        (
            "gate enabled - allow scheduling when CSIDriver object missing",
            Limits::NoDriver,
            0,
            false,
            false,
            None,
        ),
        // tidegate: no CSINode at all is "not installed" (csi.go `checkCSIDriverOnNode`:
        // `if csiNode == nil { return false, nil }`).
        (
            "tidegate: fail without a CSINode when PreventPodSchedulingIfMissing is true",
            Limits::NoCsiNode,
            0,
            true,
            true,
            not_installed,
        ),
    ];
    for (name, limits, max, present, prevent, want) in cases {
        let l = listers(EBS_ONLY, limits, max, 0);
        if present {
            let d = obj::<storage::CSIDriver>(json!({
                "metadata": {"name": EBS},
                "spec": if prevent { json!({"preventPodSchedulingIfMissing": true}) } else { json!({}) }
            }));
            l.apply(EventResource::CSIDriver, None, Some(&d));
        }
        let pl = NodeVolumeLimits::new(Arc::new(l));
        let got = run(&pl, &csi_ebs_one_vol_pod(), &node_with(vec![]), name);
        assert_eq!(got, (None, want), "{name}");
    }
}

// ---- TestCSILimits_DeferredResizeSkipped ----

#[test]
fn deferred_resize_is_skipped() {
    let mut p = pvc_pod(&["no-such-claim"]);
    p.resize = Some(Arc::new(PodResize {
        pending: Some(ResizePending::Deferred),
        requests: Resource::default(),
        non_zero_requests: Resource::default(),
    }));
    let pl = NodeVolumeLimits::new(Arc::new(listers(EBS_ONLY, Limits::CsiNode, 0, 0)));
    let node = node_with(vec![]);
    let (_, pre) = pl.pre_filter(&mut CycleState::default(), &p, &Snapshot::default());
    assert_eq!(pre.code(), Code::Skip);
    assert!(pl.filter(&CycleState::default(), &p, &node).is_success());
    // Without the deferred resize the claim is looked up and missing.
    p.resize = None;
    let got = run(&pl, &p, &node, "not deferred");
    assert_eq!(got.1.map(|v| v.0), Some(Code::UnschedulableAndUnresolvable));
}

// ---- queueing hints ----

fn hint(
    pl: &NodeVolumeLimits,
    ev: ClusterEvent,
    pod: &Pod,
    old: EventObject,
    new: EventObject,
) -> QueueingHint {
    pl.queueing_hint(&ev, pod, &old, &new).unwrap()
}

fn no_lister_plugin() -> NodeVolumeLimits {
    NodeVolumeLimits::new(Arc::new(VolumeListers::default()))
}

#[test]
fn hint_after_assigned_pod_deleted() {
    let pl = no_lister_plugin();
    let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
    let pending = pvc_pod(&["csi-ebs.csi.aws.com-2"]);
    let scheduled = |mut p: Pod| {
        p.node_name = Some(Sym::new(NODE));
        p
    };
    let empty_ebs = json!({"name": "", "awsElasticBlockStore": {"volumeID": ""}});
    let nominated = {
        let mut p = pvc_pod(&["placeholder"]);
        p.nominated_node_name = Some(Sym::new(NODE));
        p
    };
    let cases = [
        (
            "return a Queue when a deleted pod has a PVC",
            scheduled(pvc_pod(&["placeholder"])),
            QueueingHint::Queue,
        ),
        (
            "return a Queue when a deleted pod has a inline migratable volume",
            scheduled(pod("", "", "", &[empty_ebs])),
            QueueingHint::Queue,
        ),
        (
            "return a QueueSkip when a deleted pod doesn't have any volume",
            scheduled(pod("", "", "", &[])),
            QueueingHint::QueueSkip,
        ),
        (
            "return a QueueSkip when a deleted pod is not scheduled.",
            pvc_pod(&["csi-ebs.csi.aws.com-0"]),
            QueueingHint::QueueSkip,
        ),
        // tidegate: a nominated pod counts as placed (csi.go: `NodeName == "" && NominatedNodeName == ""`).
        (
            "tidegate: return a Queue when a deleted pod is only nominated",
            nominated,
            QueueingHint::Queue,
        ),
        (
            "tidegate: return a QueueSkip when a deleted pod has only a ConfigMap",
            scheduled(pod("", "", "", &[json!({"name": "c", "configMap": {}})])),
            QueueingHint::QueueSkip,
        ),
    ];
    for (name, deleted, want) in cases {
        let got = hint(
            &pl,
            ev,
            &pending,
            EventObject::Pod(Arc::new(deleted)),
            EventObject::None,
        );
        assert_eq!(got, want, "{name}");
    }
}

fn claim_obj(ns: &str, name: &str) -> ApiObject {
    obj::<core::PersistentVolumeClaim>(json!({"metadata": {"name": name, "namespace": ns}}))
}

#[test]
fn hint_after_pvc_added() {
    let pl = no_lister_plugin();
    let ev = ClusterEvent::new(EventResource::PersistentVolumeClaim, ActionType::ADD);
    let cases = [
        (
            "a pod isn't in the same namespace as an added PVC",
            pod("ns1", "", "", &[]),
            claim_obj("ns2", ""),
            QueueingHint::QueueSkip,
        ),
        (
            "a pod is in the same namespace as an added PVC",
            pod("ns1", "", "", &[pvc_vol("pvc1")]),
            claim_obj("ns1", "pvc1"),
            QueueingHint::Queue,
        ),
        (
            "a pod has an ephemeral volume related to an added PVC",
            pod("ns1", "pod1", "", &[ephemeral_vol("ephemeral")]),
            claim_obj("ns1", "pod1-ephemeral"),
            QueueingHint::Queue,
        ),
        (
            "a pod doesn't have the same PVC as an added PVC",
            pod("ns1", "", "", &[pvc_vol("pvc1")]),
            claim_obj("ns1", "pvc2"),
            QueueingHint::QueueSkip,
        ),
        (
            "a pod doesn't have any PVC attached",
            pod("ns1", "", "", &[]),
            claim_obj("ns1", "pvc2"),
            QueueingHint::QueueSkip,
        ),
        // tidegate: the same claim name in another namespace does not help.
        (
            "tidegate: a pod's claim name in another namespace",
            pod("ns1", "", "", &[pvc_vol("pvc1")]),
            claim_obj("ns2", "pvc1"),
            QueueingHint::QueueSkip,
        ),
    ];
    for (name, p, added, want) in cases {
        assert_eq!(
            hint(&pl, ev, &p, EventObject::None, EventObject::Object(added)),
            want,
            "{name}"
        );
    }
}

fn va_obj(attacher: &str, source: Value) -> ApiObject {
    obj::<storage::VolumeAttachment>(json!({
        "metadata": {"name": "volumeattachment1"},
        "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}
    }))
}

#[test]
fn hint_after_volume_attachment_deleted() {
    let pl = no_lister_plugin();
    let ev = ClusterEvent::new(EventResource::VolumeAttachment, ActionType::DELETE);
    let by_pv = || {
        va_obj(
            "test.storage.gke.io",
            json!({"persistentVolumeName": "pv1"}),
        )
    };
    let inline_ebs = || {
        va_obj(
            EBS,
            json!({"inlineVolumeSpec": {"csi": {"driver": EBS, "volumeHandle": ""}}}),
        )
    };
    let ebs_vol = ebs_inline("test");
    let gce_vol = json!({"name": "", "gcePersistentDisk": {"pdName": "test"}});
    let cases = [
        (
            "a pod has PVC when VolumeAttachment is deleting",
            vec![pvc_vol("pvc1")],
            by_pv(),
            QueueingHint::Queue,
        ),
        (
            "a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)",
            vec![ebs_vol.clone()],
            inline_ebs(),
            QueueingHint::Queue,
        ),
        (
            "a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)",
            vec![gce_vol],
            inline_ebs(),
            QueueingHint::QueueSkip,
        ),
        (
            "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting",
            vec![ebs_vol.clone(), pvc_vol("pvc1")],
            inline_ebs(),
            QueueingHint::Queue,
        ),
        (
            "a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting",
            vec![ebs_vol.clone(), pvc_vol("pvc1")],
            by_pv(),
            QueueingHint::Queue,
        ),
        (
            "a pod has no PVC when VolumeAttachment is deleting",
            vec![],
            by_pv(),
            QueueingHint::QueueSkip,
        ),
        // tidegate: an inline EBS disk alone does not help a VolumeAttachment of another driver.
        (
            "tidegate: an inline EBS volume and another driver's VolumeAttachment",
            vec![ebs_vol],
            by_pv(),
            QueueingHint::QueueSkip,
        ),
    ];
    for (name, volumes, deleted, want) in cases {
        let p = pod("ns1", "", "", &volumes);
        assert_eq!(
            hint(&pl, ev, &p, EventObject::Object(deleted), EventObject::None),
            want,
            "{name}"
        );
    }
}

#[test]
fn hint_after_csi_node_updated() {
    let pl = no_lister_plugin();
    let ev = ClusterEvent::new(EventResource::CSINode, ActionType::UPDATE);
    let p = pod("ns1", "test-pod", "", &[pvc_vol("csi-ebs.csi.aws.com-0")]);
    let node = |count: Option<i32>| {
        let mut d = json!({"name": EBS, "nodeID": "test-node"});
        if let Some(c) = count {
            d["allocatable"] = json!({"count": c});
        }
        obj::<storage::CSINode>(
            json!({"metadata": {"name": "test-node"}, "spec": {"drivers": [d]}}),
        )
    };
    let cases = [
        ("limit raised, queue", Some(1), Some(2), QueueingHint::Queue),
        (
            "limit decreased, skip queueing",
            Some(2),
            Some(1),
            QueueingHint::QueueSkip,
        ),
        (
            "limit unchanged, skip queueing",
            Some(1),
            Some(1),
            QueueingHint::QueueSkip,
        ),
        // tidegate: an absent limit reads as 0 on either side (csi.go `isSchedulableAfterCSINodeUpdated`).
        (
            "tidegate: limit set where there was none, queue",
            None,
            Some(1),
            QueueingHint::Queue,
        ),
        (
            "tidegate: limit removed, skip queueing",
            Some(1),
            None,
            QueueingHint::QueueSkip,
        ),
    ];
    for (name, old, new, want) in cases {
        let got = hint(
            &pl,
            ev,
            &p,
            EventObject::Object(node(old)),
            EventObject::Object(node(new)),
        );
        assert_eq!(got, want, "{name}");
    }
}

/// csi.go `EventsToRegister`.
#[test]
fn events_to_register_are_kubes() {
    use ActionType as A;
    use EventResource as R;
    assert_eq!(
        no_lister_plugin().events_to_register(),
        vec![
            ClusterEvent::new(R::CSINode, A::ADD),
            ClusterEvent::new(R::CSINode, A::UPDATE),
            ClusterEvent::new(R::AssignedPod, A::DELETE),
            ClusterEvent::new(R::PersistentVolumeClaim, A::ADD),
            ClusterEvent::new(R::VolumeAttachment, A::DELETE),
        ]
    );
}
