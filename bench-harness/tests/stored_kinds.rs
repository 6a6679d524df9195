//! The kinds the store keeps through its generic shape (the volume, DRA and pod-group kinds,
//! and PriorityClass), each created, updated, listed and deleted through the workload ops as
//! upstream's scheduler_perf does it (createAny, updateAny: a PUT of the object, then of its
//! status; churn's recreate mode deletes), with the watch events as kube's informers deliver
//! them; a stale resourceVersion is a Conflict; and the generic shape's own rules (finalizers,
//! status subresource, immutable fields, indexes, versions) on the store directly.

use parking_lot::Mutex;
use std::sync::Arc;
use tidegate_bench::cluster::controller::Controller;
use tidegate_bench::cluster::store::kind::Kind;
use tidegate_bench::cluster::store::registry;
use tidegate_bench::cluster::store::{Store, StoreError, Subresource, WatchEvent};
use tidegate_bench::error::HarnessError;
use tidegate_bench::output::results::Outcome;
use tidegate_bench::run::{RunOptions, run_config};
use tidegate_bench::workload;

/// One kind: its apiVersion and what follows its metadata in a valid object.
struct Case {
    kind: &'static str,
    api_version: &'static str,
    body: &'static str,
}

const CASES: &[Case] = &[
    Case {
        kind: "PersistentVolume",
        api_version: "v1",
        body: "spec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadOnlyMany]\n  csi:\n    driver: ebs.csi.aws.com\n    volumeHandle: vol\n",
    },
    Case {
        kind: "PersistentVolumeClaim",
        api_version: "v1",
        body: "spec:\n  accessModes: [ReadWriteOncePod]\n  resources:\n    requests:\n      storage: 1Gi\n",
    },
    Case {
        kind: "StorageClass",
        api_version: "storage.k8s.io/v1",
        body: "provisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\n",
    },
    Case {
        kind: "CSINode",
        api_version: "storage.k8s.io/v1",
        body: "spec:\n  drivers:\n  - name: ebs.csi.aws.com\n    nodeID: node-0\n",
    },
    Case {
        kind: "CSIDriver",
        api_version: "storage.k8s.io/v1",
        body: "spec:\n  attachRequired: true\n",
    },
    Case {
        kind: "CSIStorageCapacity",
        api_version: "storage.k8s.io/v1",
        body: "storageClassName: fast\ncapacity: 10Gi\n",
    },
    Case {
        kind: "VolumeAttachment",
        api_version: "storage.k8s.io/v1",
        body: "spec:\n  attacher: ebs.csi.aws.com\n  nodeName: node-0\n  source:\n    persistentVolumeName: pv-0\n",
    },
    Case {
        kind: "DeviceClass",
        api_version: "resource.k8s.io/v1",
        body: "spec:\n  selectors:\n  - cel:\n      expression: device.driver == \"gpu.example.com\"\n",
    },
    Case {
        kind: "ResourceSlice",
        api_version: "resource.k8s.io/v1",
        body: "spec:\n  driver: gpu.example.com\n  nodeName: node-0\n  pool:\n    name: node-0\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n  - name: gpu-0\n",
    },
    Case {
        kind: "ResourceClaim",
        api_version: "resource.k8s.io/v1",
        body: "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.example.com\n",
    },
    Case {
        kind: "ResourceClaimTemplate",
        api_version: "resource.k8s.io/v1",
        body: "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.example.com\n",
    },
    Case {
        kind: "DeviceTaintRule",
        api_version: "resource.k8s.io/v1",
        body: "spec:\n  taint:\n    key: broken\n    effect: NoSchedule\n",
    },
    Case {
        kind: "PriorityClass",
        api_version: "scheduling.k8s.io/v1",
        body: "value: 1000\n",
    },
    Case {
        kind: "PodGroup",
        api_version: "scheduling.k8s.io/v1beta1",
        body: "spec:\n  priority: 1000\n  schedulingPolicy:\n    gang:\n      minCount: 2\n",
    },
    Case {
        kind: "Workload",
        api_version: "scheduling.k8s.io/v1beta1",
        body: "spec:\n  podGroupTemplates:\n  - name: workers\n    schedulingPolicy:\n      gang:\n        minCount: 2\n",
    },
    Case {
        kind: "CompositePodGroup",
        api_version: "scheduling.k8s.io/v1alpha3",
        body: "spec:\n  workloadRef:\n    workloadName: w\n    templateName: t\n  schedulingPolicy:\n    gang:\n      minGroupCount: 1\n",
    },
];

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  generateName: p-
spec:
  containers:
  - name: c
    image: pause
";

/// The object template of a case: `<kind>-<Index>`, labelled `v: <V>`, with `extra` in its
/// metadata.
fn template(c: &Case, name: &str, extra: &str) -> String {
    format!(
        "apiVersion: {}\nkind: {}\nmetadata:\n  name: {name}\n  labels:\n    v: \"{{{{.V}}}}\"\n{extra}{}",
        c.api_version, c.kind, c.body
    )
    .replace("{{.V}}", if name.contains("churn") { "c" } else { "{{.V}}" })
}

fn lower(c: &Case) -> String {
    c.kind.to_lowercase()
}

fn kind(c: &Case) -> &'static Kind {
    registry::lookup(c.kind).expect("registered")
}

/// The namespace line of an op on `c`'s objects (none for cluster-scoped kinds, as upstream
/// requires).
fn ns(c: &Case) -> &'static str {
    if kind(c).namespaced {
        "    namespace: objs\n"
    } else {
        ""
    }
}

/// createAny of two objects of `c`, then `then` (more ops).
fn ops(c: &Case, then: &str) -> String {
    let n = lower(c);
    format!(
        "  - opcode: createAny\n    templatePath: {n}.yaml\n    count: 2\n{}    templateParams:\n      V: a\n{then}",
        ns(c)
    )
}

/// Grabs each workload's store and records every watch event of the registered kinds.
#[derive(Default)]
struct Grab {
    store: Mutex<Option<Arc<Store>>>,
    events: Arc<Mutex<Vec<String>>>,
}

impl Controller for Grab {
    fn start(&self, store: &Arc<Store>) {
        for k in registry::KINDS {
            let events = self.events.clone();
            let name = k.kind;
            let handler = Arc::new(move |ev: &WatchEvent<'_>| {
                let (what, o) = match ev {
                    WatchEvent::Added(o) => ("Added", o),
                    WatchEvent::Modified { new, .. } => ("Modified", new),
                    WatchEvent::Deleted(o) => ("Deleted", o),
                };
                let m = o.meta();
                events.lock().push(format!(
                    "{name} {what} {}",
                    m.name.as_deref().unwrap_or_default()
                ));
            });
            store.watch(k.kind, handler).unwrap();
        }
        *self.store.lock() = Some(store.clone());
    }
}

/// Runs `workload_ops` (after one node, before one measured pod) with `files` beside it.
fn run(
    workload_ops: &str,
    files: &[(String, String)],
) -> (Result<(), HarnessError>, Arc<Store>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    for (n, t) in files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    std::fs::write(dir.path().join("pod.yaml"), POD).unwrap();
    let config = format!(
        "- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n{workload_ops}  - opcode: createPods\n    count: 1\n    podTemplatePath: pod.yaml\n    collectMetrics: true\n  workloads:\n  - name: w\n"
    );
    std::fs::write(dir.path().join("config.yaml"), &config).unwrap();
    let cfg = workload::load(&dir.path().join("config.yaml")).unwrap();
    let grab = Arc::new(Grab::default());
    let opts = RunOptions {
        label_filter: Some(String::new()),
        threads: Some(1),
        timeout: std::time::Duration::from_secs(20),
        controllers: vec![grab.clone() as Arc<dyn Controller>],
        ..RunOptions::default()
    };
    let result = run_config(&cfg, &opts).map(|mut reports| match reports.remove(0).outcome {
        Outcome::Ran(_) => {}
        other => panic!("{config}: {}", matches_outcome(&other)),
    });
    let Some(store) = grab.store.lock().clone() else {
        panic!("the workload never started: {result:?}");
    };
    let events = grab.events.lock().clone();
    (result, store, events)
}

fn matches_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Ran(_) => "ran".into(),
        Outcome::Skipped(w) => format!("skipped: {w}"),
        Outcome::Failed(w) => format!("failed: {w}"),
    }
}

/// `name → label v` of every stored object of `c`'s kind, with its resourceVersion and
/// generation.
fn listed(store: &Store, c: &Case) -> Vec<(String, String, i64)> {
    store
        .list_objects(kind(c), None)
        .iter()
        .map(|o| {
            let m = o.meta();
            let v = m
                .labels
                .as_ref()
                .and_then(|l| l.get("v"))
                .cloned()
                .unwrap_or_default();
            let rv: u64 = m.resource_version.as_deref().unwrap().parse().unwrap();
            assert!(rv > 0);
            (
                m.name.clone().unwrap_or_default(),
                v,
                m.generation.unwrap_or_default(),
            )
        })
        .collect()
}

/// Whether `updateAny` (which carries no resourceVersion) updates the kind: it has a status
/// subresource (upstream's op PUTs the status after the object) and allows unconditional
/// updates.
fn updated(c: &Case) -> bool {
    kind(c).status && kind(c).unconditional_update
}

/// Every kind with a status subresource that allows unconditional updates is created and
/// updated (the object, then its status, which writes nothing when unchanged) and listed; churn creates and deletes one more of each
/// kind. Each change reaches the watch handlers in order.
#[test]
fn create_update_list_and_churn_every_kind_through_the_ops() {
    let mut files = Vec::new();
    let mut workload = String::new();
    let mut churn = Vec::new();
    for c in CASES {
        let n = lower(c);
        files.push((
            format!("{n}.yaml"),
            template(c, &format!("{n}-{{{{.Index}}}}"), ""),
        ));
        files.push((
            format!("{n}-churn.yaml"),
            template(c, &format!("{n}-churn"), ""),
        ));
        churn.push(format!("{n}-churn.yaml"));
        let update = if updated(c) {
            format!(
                "  - opcode: updateAny\n    templatePath: {n}.yaml\n    count: 2\n{}    templateParams:\n      V: b\n",
                ns(c)
            )
        } else {
            String::new()
        };
        workload.push_str(&ops(c, &update));
    }
    workload.push_str(&format!(
        "  - opcode: churn\n    mode: recreate\n    number: 1\n    intervalMilliseconds: 30\n    namespace: objs\n    templatePaths: [{}]\n  - opcode: sleep\n    duration: 400ms\n",
        churn.join(", ")
    ));
    let (result, store, events) = run(&workload, &files);
    result.unwrap();
    for c in CASES {
        let n = lower(c);
        let v = if updated(c) { "b" } else { "a" };
        let got: Vec<_> = listed(&store, c)
            .into_iter()
            .filter(|(name, ..)| !name.ends_with("churn"))
            .collect();
        assert_eq!(
            got,
            vec![
                (format!("{n}-0"), v.to_string(), 1),
                (format!("{n}-1"), v.to_string(), 1)
            ],
            "{}",
            c.kind
        );
        let mine: Vec<&String> = events
            .iter()
            .filter(|e| e.starts_with(&format!("{} ", c.kind)))
            .collect();
        let first = |what: &str, name: &str| {
            let e = format!("{} {what} {name}", c.kind);
            mine.iter().position(|x| **x == e)
        };
        let added = first("Added", &format!("{n}-0")).expect("added");
        if updated(c) {
            let modified = first("Modified", &format!("{n}-0")).expect("modified");
            assert!(added < modified, "{mine:?}");
            let updates = mine.iter().filter(|e| e.contains(" Modified ")).count();
            assert_eq!(updates, 2, "one write per object: {mine:?}");
        }
        let churned = first("Added", &format!("{n}-churn")).expect("churn created");
        let deleted = first("Deleted", &format!("{n}-churn")).expect("churn deleted");
        assert!(churned < deleted, "{mine:?}");
    }
    // A typed read: the store's objects as k8s-openapi's types.
    let pvs = store.list::<k8s_openapi::api::core::v1::PersistentVolume>(None);
    assert!(pvs.len() >= 2);
    assert_eq!(pvs[0].metadata.name.as_deref(), Some("persistentvolume-0"));
    assert!(pvs[0].status.is_none(), "a create drops the status");
}

/// One object of the kind created (label `v: a`), then one updateAny to `v: b`.
fn update_once(c: &Case) -> (Result<(), HarnessError>, Arc<Store>) {
    let n = lower(c);
    let files = vec![(
        format!("{n}.yaml"),
        template(c, &format!("{n}-{{{{.Index}}}}"), ""),
    )];
    let update = format!(
        "  - opcode: updateAny\n    templatePath: {n}.yaml\n{}    templateParams:\n      V: b\n",
        ns(c)
    );
    let (result, store, _) = run(&ops(c, &update), &files);
    (result, store)
}

/// upstream's updateAny follows the object's PUT with a PUT of its status: for a kind without
/// a status subresource the API server has none, so the op fails after the object changed,
/// as it does against kube.
#[test]
fn update_any_of_a_kind_without_status_fails_at_the_status_put() {
    for c in CASES
        .iter()
        .filter(|c| !kind(c).status && kind(c).unconditional_update)
    {
        let n = lower(c);
        let (result, store) = update_once(c);
        let e = result.expect_err(c.kind).to_string();
        assert!(
            e.contains(&format!(
                "updateAny[0]: the server could not find the requested resource ({} has no status subresource",
                kind(c).resource
            )),
            "{e}"
        );
        assert_eq!(
            listed(&store, c)[0],
            (format!("{n}-0"), "b".into(), 1),
            "the object's PUT went through: {}",
            c.kind
        );
    }
}

/// A PUT carrying a resourceVersion that is not the stored one is kube's Conflict.
#[test]
fn a_stale_resource_version_is_a_conflict() {
    for c in CASES {
        let n = lower(c);
        let files = vec![
            (
                format!("{n}.yaml"),
                template(c, &format!("{n}-{{{{.Index}}}}"), ""),
            ),
            (
                format!("{n}-stale.yaml"),
                template(
                    c,
                    &format!("{n}-{{{{.Index}}}}"),
                    "  resourceVersion: \"1\"\n",
                ),
            ),
        ];
        let update = format!(
            "  - opcode: updateAny\n    templatePath: {n}-stale.yaml\n{}    templateParams:\n      V: b\n",
            ns(c)
        );
        let (result, store, _) = run(&ops(c, &update), &files);
        let e = result.expect_err(c.kind).to_string();
        assert!(
            e.contains(&format!(
                "Operation cannot be fulfilled on {} \"{n}-0\": the object has been modified",
                kind(c).resource
            )),
            "{e}"
        );
        assert_eq!(listed(&store, c)[0].1, "a", "nothing written: {}", c.kind);
    }
}

/// The generic shape's rules on the store directly: finalizers hold a delete until an update
/// removes the last one; a PUT keeps the stored status and `/status` changes only the status;
/// immutable fields; the claims-by-pod index; an object read in another served version.
#[test]
fn finalizers_status_immutability_indexes_and_versions() {
    use k8s_openapi::api::resource::v1::ResourceClaim;
    use k8s_openapi::api::scheduling::{v1alpha3, v1beta1};
    let store = Store::new(1);
    let claim =
        |json: serde_json::Value| -> ResourceClaim { serde_json::from_value(json).unwrap() };
    let spec = serde_json::json!({"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}});
    store
        .create(
            claim(serde_json::json!({
                "metadata": {"name": "c", "finalizers": ["resource.kubernetes.io/delete-protection"],
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}]},
                "spec": spec,
                "status": {"reservedFor": [{"resource": "pods", "name": "q", "uid": "v"}]}
            })),
            "ns",
        )
        .unwrap();
    let rc = registry::lookup("ResourceClaim").unwrap();
    let names = |key: &str| -> Vec<String> {
        store
            .by_index(rc, "pod", key)
            .iter()
            .map(|o| o.meta().name.clone().unwrap())
            .collect()
    };
    assert_eq!(names("ns/p"), vec!["c"], "the owner pod");
    assert!(
        names("ns/q").is_empty(),
        "the status given at create is dropped"
    );
    let stored = store.get::<ResourceClaim>("ns", "c").unwrap();
    assert!(stored.status.is_none());

    // /status writes the reservation; the object's PUT then keeps it.
    let mut with_status = (*stored).clone();
    with_status.status = Some(
        serde_json::from_value(
            serde_json::json!({"reservedFor": [{"resource": "pods", "name": "q", "uid": "v"}]}),
        )
        .unwrap(),
    );
    store
        .update(with_status.clone(), "ns", Subresource::Status)
        .unwrap();
    assert_eq!(names("ns/q"), vec!["c"]);
    let mut relabelled = with_status.clone();
    relabelled.status = None;
    relabelled.metadata.resource_version = None;
    relabelled.metadata.labels = Some([("x".to_string(), "y".to_string())].into());
    store
        .update(relabelled.clone(), "ns", Subresource::Main)
        .unwrap();
    let now = store.get::<ResourceClaim>("ns", "c").unwrap();
    assert!(now.status.is_some(), "the object's PUT keeps the status");
    assert_eq!(
        now.metadata.generation,
        Some(1),
        "labels do not bump the generation"
    );

    // spec is immutable.
    let mut changed = relabelled.clone();
    changed.spec.as_mut().unwrap().devices = None;
    let e = store.update(changed, "ns", Subresource::Main).unwrap_err();
    assert!(e.to_string().contains("spec: Invalid value"), "{e}");
    assert!(e.to_string().contains("field is immutable"), "{e}");

    // A delete with a finalizer only marks the claim; removing the finalizer deletes it.
    assert!(store.delete_object(rc, "ns", "c"));
    let marked = store.get::<ResourceClaim>("ns", "c").unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    let mut unfinalized = (*marked).clone();
    unfinalized.metadata.finalizers = None;
    store.update(unfinalized, "ns", Subresource::Main).unwrap();
    assert!(store.get::<ResourceClaim>("ns", "c").is_none());
    assert!(names("ns/p").is_empty());

    // An object created as v1alpha3 reads as v1beta1.
    let group: v1alpha3::PodGroup = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "g"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}
    }))
    .unwrap();
    store.create(group, "ns").unwrap();
    let beta = store.get::<v1beta1::PodGroup>("ns", "g").unwrap();
    assert_eq!(
        beta.spec
            .scheduling_policy
            .gang
            .as_ref()
            .map(|g| g.min_count),
        Some(2)
    );
    // A create carrying a resourceVersion is refused, as kube refuses it.
    let mut again = (*beta).clone();
    again.metadata.name = Some("h".into());
    let e = store.create(again, "ns").unwrap_err();
    assert!(matches!(e, StoreError::Invalid(_)), "{e}");
    assert!(
        e.to_string().contains("resourceVersion should not be set"),
        "{e}"
    );
}

/// A plugin that keeps pods out until a PersistentVolume named `ready` exists, as it learns
/// from the volume's add event: its hint sees the object as the store holds it (k8s-openapi's
/// `PersistentVolume`), as kube hands hints the informer's object.
struct WaitsForVolume {
    ready: std::sync::atomic::AtomicBool,
    seen: Mutex<Vec<String>>,
}

mod waits_for_volume {
    use super::WaitsForVolume;
    use k8s_openapi::api::core::v1::PersistentVolume;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use tidegate_engine::api::Pod;
    use tidegate_engine::{
        ActionType, ClusterEvent, Code, CycleState, EnqueueExtensions, EventResource, Plugin,
        PreFilterPlugin, PreFilterResult, Snapshot, Status,
    };
    use tidegate_engine::{EventObject, QueueingHint};

    impl Plugin for WaitsForVolume {
        fn name(&self) -> &'static str {
            "WaitsForVolume"
        }
        fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
            Some(self)
        }
        fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
            Some(self)
        }
    }

    impl PreFilterPlugin for WaitsForVolume {
        fn pre_filter(
            &self,
            _: &mut CycleState,
            _: &Pod,
            _: &Snapshot,
        ) -> (Option<PreFilterResult>, Status) {
            if self.ready.load(Ordering::SeqCst) {
                (None, Status::success())
            } else {
                let no = Status::new(Code::UnschedulableAndUnresolvable, "no volume yet");
                (None, no)
            }
        }
    }

    impl EnqueueExtensions for WaitsForVolume {
        fn events_to_register(&self) -> Vec<ClusterEvent> {
            vec![ClusterEvent::new(
                EventResource::PersistentVolume,
                ActionType::ADD,
            )]
        }
        fn queueing_hint(
            &self,
            _: &ClusterEvent,
            _: &Pod,
            _: &EventObject,
            new: &EventObject,
        ) -> Result<QueueingHint, String> {
            let EventObject::Object(o) = new else {
                return Err("no object".into());
            };
            let pv = o.downcast_ref::<PersistentVolume>().ok_or("not a PV")?;
            let name = pv.metadata.name.clone().unwrap_or_default();
            self.seen.lock().push(name.clone());
            let ready = name == "ready";
            self.ready.fetch_or(ready, Ordering::SeqCst);
            Ok(QueueingHint::queue_if(ready))
        }
    }
}

/// The store hands each new kind's events to the scheduler's event handlers: a pod a plugin
/// rejected until a PersistentVolume exists stays parked through another volume's add (the
/// hint skips it) and is scheduled after the one it waits for (the hint queues it).
#[test]
fn the_scheduler_sees_the_new_kinds_through_its_plugins_hints() {
    let plugin = Arc::new(WaitsForVolume {
        ready: false.into(),
        seen: Mutex::new(Vec::new()),
    });
    let dir = tempfile::tempdir().unwrap();
    let pv = |name: &str| {
        format!(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: {name}\n{}",
            CASES[0].body
        )
    };
    let files = [
        ("pod.yaml", POD.to_string()),
        ("pv-other.yaml", pv("other")),
        ("pv-ready.yaml", pv("ready")),
        (
            "cfg.yaml",
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n      - name: WaitsForVolume\n".to_string(),
        ),
        (
            "config.yaml",
            "- name: T\n  schedulerConfigPath: cfg.yaml\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n  - opcode: createPods\n    count: 1\n    namespace: waiting\n    podTemplatePath: pod.yaml\n    skipWaitToCompletion: true\n  - opcode: barrier\n    stageRequirement: Attempted\n  - opcode: createAny\n    templatePath: pv-other.yaml\n  - opcode: createAny\n    templatePath: pv-ready.yaml\n  - opcode: barrier\n  - opcode: createPods\n    count: 1\n    podTemplatePath: pod.yaml\n    collectMetrics: true\n  workloads:\n  - name: w\n".to_string(),
        ),
    ];
    for (n, t) in &files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    let mut registry = tidegate_engine::Registry::in_tree();
    let p = plugin.clone();
    registry.register("WaitsForVolume", move |_| {
        p.clone() as Arc<dyn tidegate_engine::Plugin>
    });
    let cfg = workload::load(&dir.path().join("config.yaml")).unwrap();
    let opts = RunOptions {
        label_filter: Some(String::new()),
        threads: Some(1),
        timeout: std::time::Duration::from_secs(20),
        registry,
        ..RunOptions::default()
    };
    let mut reports = run_config(&cfg, &opts).unwrap();
    let r = match reports.remove(0).outcome {
        Outcome::Ran(r) => r,
        other => panic!("{}", matches_outcome(&other)),
    };
    assert_eq!(r.summary.bound, 2, "{:?}", r.summary);
    assert_eq!(*plugin.seen.lock(), vec!["other", "ready"]);
}

/// The pods of each node are indexed: created with a nodeName, bound, and gone when deleted.
#[test]
fn pods_are_indexed_by_node() {
    use k8s_openapi::api::core::v1 as core;
    use tidegate_engine::ClusterClient;
    use tidegate_engine::api::{PodKey, convert};
    let store = Store::new(1);
    for n in ["a", "b"] {
        let node: core::Node =
            serde_json::from_value(serde_json::json!({"metadata": {"name": n}})).unwrap();
        let converted = convert::node(&node).unwrap();
        store.create_node(node, converted).unwrap();
    }
    let pod = |name: &str, node: Option<&str>| {
        let mut spec = serde_json::json!({"containers": [{"name": "c", "image": "pause"}]});
        if let Some(n) = node {
            spec["nodeName"] = n.into();
        }
        let p: core::Pod =
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "spec": spec}))
                .unwrap();
        let info = convert::pod_spec_info(p.spec.as_ref().unwrap()).unwrap();
        store
            .create_pod(&Arc::new(p), "ns", Arc::new(info))
            .unwrap()
    };
    let on_a = pod("on-a", Some("a"));
    let free = pod("free", None);
    let keys = |n: &str| store.pods_on_node(n);
    assert_eq!(keys("a"), vec![on_a.clone()]);
    let unbound = tidegate_engine::api::Pod::new("ns", "free", Default::default());
    store
        .bind(&unbound, tidegate_engine::api::Sym::new("b"))
        .unwrap();
    assert_eq!(keys("b"), vec![free.clone()]);
    assert!(store.delete_pod_with_grace(&on_a, Some(0)));
    assert!(keys("a").is_empty());
    assert_eq!(keys("b"), vec![PodKey::new("ns", "free")]);
}

/// A plugin that keeps pods out until a PodGroup named `ready` exists, as it learns from the
/// group's add event: its hint sees the group in the scheduler's form (`api::PodGroup`), as
/// the store hands PodGroups to `Scheduler::on_pod_group_add`.
struct WaitsForGroup {
    ready: std::sync::atomic::AtomicBool,
    seen: Mutex<Vec<(String, i32)>>,
}

mod waits_for_group {
    use super::WaitsForGroup;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use tidegate_engine::api::{Pod, PodGroup};
    use tidegate_engine::{
        ActionType, ClusterEvent, Code, CycleState, EnqueueExtensions, EventObject, EventResource,
        Plugin, PreFilterPlugin, PreFilterResult, QueueingHint, Snapshot, Status,
    };

    impl Plugin for WaitsForGroup {
        fn name(&self) -> &'static str {
            "WaitsForGroup"
        }
        fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
            Some(self)
        }
        fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
            Some(self)
        }
    }

    impl PreFilterPlugin for WaitsForGroup {
        fn pre_filter(
            &self,
            _: &mut CycleState,
            _: &Pod,
            _: &Snapshot,
        ) -> (Option<PreFilterResult>, Status) {
            if self.ready.load(Ordering::SeqCst) {
                (None, Status::success())
            } else {
                let no = Status::new(Code::UnschedulableAndUnresolvable, "no group yet");
                (None, no)
            }
        }
    }

    impl EnqueueExtensions for WaitsForGroup {
        fn events_to_register(&self) -> Vec<ClusterEvent> {
            vec![ClusterEvent::new(EventResource::PodGroup, ActionType::ADD)]
        }
        fn queueing_hint(
            &self,
            _: &ClusterEvent,
            _: &Pod,
            _: &EventObject,
            new: &EventObject,
        ) -> Result<QueueingHint, String> {
            let EventObject::Object(o) = new else {
                return Err("no object".into());
            };
            let g = o.downcast_ref::<PodGroup>().ok_or("not an api::PodGroup")?;
            self.seen
                .lock()
                .push((g.key.name.to_string(), g.min_count()));
            let ready = &*g.key.name == "ready";
            self.ready.fetch_or(ready, Ordering::SeqCst);
            Ok(QueueingHint::queue_if(ready))
        }
    }
}

/// PodGroups reach the scheduler converted, through its pod-group handlers: a pod a plugin
/// rejects until a group named `ready` exists stays parked through another group's add and is
/// scheduled after the one it waits for; the hint reads each group's quorum.
#[test]
fn pod_groups_reach_the_scheduler_in_its_form() {
    let plugin = Arc::new(WaitsForGroup {
        ready: false.into(),
        seen: Mutex::new(Vec::new()),
    });
    let dir = tempfile::tempdir().unwrap();
    let group = |name: &str, min: i32| {
        format!(
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: {name}\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: {min}\n"
        )
    };
    let files = [
        ("pod.yaml", POD.to_string()),
        ("pg-other.yaml", group("other", 2)),
        ("pg-ready.yaml", group("ready", 3)),
        (
            "cfg.yaml",
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled:\n      - name: WaitsForGroup\n".to_string(),
        ),
        (
            "config.yaml",
            "- name: T\n  schedulerConfigPath: cfg.yaml\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n  - opcode: createPods\n    count: 1\n    namespace: waiting\n    podTemplatePath: pod.yaml\n    skipWaitToCompletion: true\n  - opcode: barrier\n    stageRequirement: Attempted\n  - opcode: createPodGroups\n    count: 1\n    namespace: groups\n    templatePath: pg-other.yaml\n  - opcode: createAny\n    namespace: groups\n    templatePath: pg-ready.yaml\n  - opcode: barrier\n  - opcode: createPods\n    count: 1\n    podTemplatePath: pod.yaml\n    collectMetrics: true\n  workloads:\n  - name: w\n".to_string(),
        ),
    ];
    for (n, t) in &files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    let mut registry = tidegate_engine::Registry::in_tree();
    let p = plugin.clone();
    registry.register("WaitsForGroup", move |_| {
        p.clone() as Arc<dyn tidegate_engine::Plugin>
    });
    let cfg = workload::load(&dir.path().join("config.yaml")).unwrap();
    let opts = RunOptions {
        label_filter: Some(String::new()),
        threads: Some(1),
        timeout: std::time::Duration::from_secs(20),
        registry,
        ..RunOptions::default()
    };
    let mut reports = run_config(&cfg, &opts).unwrap();
    let r = match reports.remove(0).outcome {
        Outcome::Ran(r) => r,
        other => panic!("{}", matches_outcome(&other)),
    };
    assert_eq!(r.summary.bound, 2, "{:?}", r.summary);
    assert_eq!(
        *plugin.seen.lock(),
        vec![("other".to_string(), 2), ("ready".to_string(), 3)]
    );
}

/// kube v1.37.2 refuses an update without a resourceVersion for the kinds whose strategy
/// disallows unconditional updates (`AllowUnconditionalUpdate`: CSINode, VolumeAttachment,
/// v1 DeviceTaintRule, PodGroup, ...): updateAny fails with its message, nothing written.
#[test]
fn update_any_of_a_kind_that_needs_a_resource_version_fails() {
    let strict: Vec<&Case> = CASES
        .iter()
        .filter(|c| !kind(c).unconditional_update)
        .collect();
    assert!(strict.len() >= 3, "{}", strict.len());
    for c in strict {
        let n = lower(c);
        let (result, store) = update_once(c);
        let e = result.expect_err(c.kind).to_string();
        assert!(
            e.contains(
                "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
            ),
            "{e}"
        );
        assert_eq!(
            listed(&store, c)[0],
            (format!("{n}-0"), "a".into(), 1),
            "nothing written: {}",
            c.kind
        );
    }
}
