//! Dynamic Resource Allocation through the real scheduler (kube v1.37.2's DynamicResources
//! plugin, `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`): a pod
//! waits until the claims it names exist, a device is handed out once, a claim shared by
//! pods is allocated once and keeps them on its node, an unknown class is unresolvable, and
//! PostFilter frees an allocated claim nobody uses so the next attempt can place it
//! elsewhere. The test's client is the API server: it applies PreBind's and PostFilter's
//! claim writes and delivers them back to the scheduler as its informer would.
//!
//! Expected behaviour after kubernetes/kubernetes
//! pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go (TestPlugin's
//! cases "claim not found", "missing class", "allocation fails", "shared claim",
//! "deallocate in PostFilter"), driven through whole scheduling cycles here.

use k8s_openapi::api::resource::v1 as k;
use parking_lot::Mutex;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use tidegate_engine::api::dra::{self, Allocation, ClaimConsumer, ResourceClaim};
use tidegate_engine::api::{ClaimSource, Node, Pod, PodResourceClaim, PodSpecInfo, Sym};
use tidegate_engine::clock::VirtualClock;
use tidegate_engine::{
    ActionType, ApiObject, ClusterClient, EventResource, Registry, Scheduler, SchedulerConfig,
};

const DRIVER: &str = "gpu.example.com";

/// The API server: claims by `ns/name`, binds, the last failure message per pod, and the
/// pods' `extendedResourceClaimStatus`.
#[derive(Default)]
struct Api {
    sched: Mutex<Weak<Scheduler>>,
    claims: Mutex<BTreeMap<String, Arc<k::ResourceClaim>>>,
    binds: Mutex<BTreeMap<String, String>>,
    /// Pods whose bind fails (once each).
    fail_bind: Mutex<std::collections::BTreeSet<String>>,
    failures: Mutex<BTreeMap<String, String>>,
    extended_status:
        Mutex<BTreeMap<String, k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus>>,
}

impl Api {
    fn sched(&self) -> Arc<Scheduler> {
        self.sched.lock().upgrade().expect("scheduler alive")
    }

    /// Stores a claim and delivers the informer's add or update.
    fn put_claim(&self, c: k::ResourceClaim) {
        let key = format!(
            "{}/{}",
            c.metadata.namespace.as_deref().unwrap_or(""),
            c.metadata.name.as_deref().unwrap_or("")
        );
        let new = Arc::new(c);
        let old = self.claims.lock().insert(key, new.clone());
        let action = if old.is_some() {
            ActionType::UPDATE
        } else {
            ActionType::ADD
        };
        self.sched().on_object_event(
            EventResource::ResourceClaim,
            action,
            old.map(|o| ApiObject(o)),
            Some(ApiObject(new)),
        );
    }

    fn claim(&self, name: &str) -> Arc<k::ResourceClaim> {
        self.claims.lock()[&format!("ns/{name}")].clone()
    }
}

impl ClusterClient for Api {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        if self.fail_bind.lock().remove(&*pod.name) {
            return Err("the API server refused the binding".into());
        }
        self.binds
            .lock()
            .insert(pod.name.to_string(), node.to_string_lossy());
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn set_unschedulable(&self, pod: &Pod, _: &str, message: &str) {
        self.failures
            .lock()
            .insert(pod.name.to_string(), message.to_string());
    }
    fn reserve_resource_claim(
        &self,
        claim: &ResourceClaim,
        allocation: Option<&Allocation>,
        consumer: &ClaimConsumer,
    ) -> Result<(), String> {
        let mut c = (*self.claim(&claim.name)).clone();
        let st = c.status.get_or_insert_with(Default::default);
        if let Some(a) = allocation {
            if st.allocation.is_some() {
                return Err("got allocated elsewhere in the meantime".into());
            }
            st.allocation = Some(dra::allocation_to_api(a));
        }
        let reserved = st.reserved_for.get_or_insert_with(Vec::new);
        if reserved.iter().any(|r| r.uid == **consumer.uid()) {
            return Err("status.reservedFor: Duplicate value".into());
        }
        reserved.push(consumer.to_api());
        self.put_claim(c);
        Ok(())
    }
    fn unreserve_resource_claim_for(&self, claim: &ResourceClaim, uid: &str) -> Result<(), String> {
        let mut c = (*self.claim(&claim.name)).clone();
        if let Some(r) = c.status.as_mut().and_then(|s| s.reserved_for.as_mut()) {
            r.retain(|r| r.uid != uid);
        }
        self.put_claim(c);
        Ok(())
    }
    fn unreserve_resource_claim(&self, claim: &ResourceClaim, pod: &Pod) {
        let _ = self.unreserve_resource_claim_for(claim, &pod.uid);
    }
    fn create_resource_claim(&self, mut c: k::ResourceClaim) -> Result<Arc<ResourceClaim>, String> {
        let name = format!(
            "{}{}",
            c.metadata.generate_name.as_deref().unwrap_or(""),
            self.claims.lock().len()
        );
        c.metadata.uid = Some(format!("uid-{name}"));
        c.metadata.name = Some(name);
        let converted = dra::resource_claim(&c).map_err(|e| e.to_string())?;
        self.put_claim(c);
        Ok(Arc::new(converted))
    }
    fn set_extended_resource_claim_status(
        &self,
        pod: &Pod,
        status: k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus,
    ) -> Result<(), String> {
        self.extended_status
            .lock()
            .insert(pod.name.to_string(), status);
        Ok(())
    }
    fn deallocate_resource_claim(&self, claim: &ResourceClaim) -> Result<(), String> {
        let mut c = (*self.claim(&claim.name)).clone();
        c.status = None;
        self.put_claim(c);
        Ok(())
    }
}

/// A scheduler over nodes `n0..n{devices.len()}`, node `i` with `devices[i]` devices of
/// class `gpu` in its own slice.
fn setup(devices: &[usize]) -> (Arc<Scheduler>, Arc<Api>) {
    let cfg = SchedulerConfig {
        parallelism: 1,
        deterministic: true,
        ..SchedulerConfig::default()
    };
    setup_with(cfg, devices, Arc::new(VirtualClock::new()))
}

/// [`setup`] with a configuration and a clock of the test's.
fn setup_with(
    cfg: SchedulerConfig,
    devices: &[usize],
    clock: Arc<VirtualClock>,
) -> (Arc<Scheduler>, Arc<Api>) {
    setup_in(cfg, &Registry::in_tree(), devices, clock)
}

/// [`setup_with`] with the plugins of `registry`.
fn setup_in(
    cfg: SchedulerConfig,
    registry: &Registry,
    devices: &[usize],
    clock: Arc<VirtualClock>,
) -> (Arc<Scheduler>, Arc<Api>) {
    let api = Arc::new(Api::default());
    let s = Scheduler::new(cfg, registry, api.clone(), Some(clock)).expect("valid profile");
    *api.sched.lock() = Arc::downgrade(&s);
    add_class(&s, "gpu", None);
    for (i, &n) in devices.iter().enumerate() {
        s.on_node_add(Arc::new(node(i)));
        s.on_object_event(
            EventResource::ResourceSlice,
            ActionType::ADD,
            None,
            Some(ApiObject(Arc::new(slice(i, n, 1)))),
        );
    }
    (s, api)
}

/// Node `i`'s slice with `n` devices, at pool generation `generation`.
fn slice(i: usize, n: usize, generation: i64) -> k::ResourceSlice {
    let devs: Vec<_> = (0..n)
        .map(|d| json!({"name": format!("dev-{d}")}))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": format!("slice-n{i}")},
        "spec": {"driver": DRIVER, "nodeName": format!("n{i}"),
                 "pool": {"name": format!("n{i}"), "generation": generation, "resourceSliceCount": 1},
                 "devices": devs}
    }))
    .unwrap()
}

/// Class `name` of the driver's devices, backing `extended` when given.
fn add_class(s: &Scheduler, name: &str, extended: Option<&str>) {
    s.on_object_event(
        EventResource::DeviceClass,
        ActionType::ADD,
        None,
        Some(ApiObject(Arc::new(class(name, extended, DRIVER)))),
    );
}

/// Class `name` of the devices of `driver`, backing `extended` when given.
fn class(name: &str, extended: Option<&str>, driver: &str) -> k::DeviceClass {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"extendedResourceName": extended,
                 "selectors": [{"cel": {"expression": format!("device.driver == \"{driver}\"")}}]}
    }))
    .unwrap()
}

fn node(i: usize) -> Node {
    let mut node = Node::named(&format!("n{i}"));
    node.allocatable.allowed_pod_number = 110;
    node
}

/// A claim for one device of `class`.
fn claim(name: &str, class: &str) -> k::ResourceClaim {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
        "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": class}}]}}
    }))
    .unwrap()
}

/// A pod naming `claims` (`(pod claim name, source)`).
fn pod(name: &str, claims: Vec<(&str, ClaimSource)>) -> Arc<Pod> {
    let spec = PodSpecInfo {
        scheduler_name: Sym::new("default-scheduler"),
        resource_claims: claims
            .into_iter()
            .map(|(n, source)| PodResourceClaim {
                name: n.into(),
                source,
            })
            .collect(),
        ..PodSpecInfo::default()
    };
    Arc::new(Pod::new("ns", name, Arc::new(spec)))
}

fn named(claim: &str) -> Vec<(&'static str, ClaimSource)> {
    vec![("gpu", ClaimSource::Claim(claim.into()))]
}

fn drain(s: &Scheduler) {
    let mut n = 0;
    while s.try_schedule_one() {
        n += 1;
        assert!(n < 1000, "the queue never empties");
    }
}

fn allocated_device(c: &k::ResourceClaim) -> Option<String> {
    let r = &c
        .status
        .as_ref()?
        .allocation
        .as_ref()?
        .devices
        .as_ref()?
        .results
        .as_ref()?[0];
    Some(format!("{}/{}", r.pool, r.device))
}

#[test]
fn a_pod_waits_until_its_generated_claim_is_named_in_its_status() {
    let (s, api) = setup(&[1]);
    let p = pod("p", vec![("gpu", ClaimSource::Template("t".into()))]);
    s.on_pod_add(p.clone());
    drain(&s);
    assert!(api.binds.lock().is_empty(), "no claim yet: the pod waits");
    assert_eq!(
        s.queue.counts().gated,
        1,
        "gated by DynamicResources' PreEnqueue"
    );
    // The ResourceClaim controller: the claim (owned by the pod), then the pod's status.
    let mut c = claim("p-gpu-abcde", "gpu");
    c.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod", "name": "p",
                                      "uid": "p", "controller": true}))
        .unwrap(),
    ]);
    api.put_claim(c);
    drain(&s);
    assert!(
        api.binds.lock().is_empty(),
        "the status does not name it yet"
    );
    let mut updated = (*p).clone();
    updated.resource_claim_statuses = Some(Arc::from(vec![(
        Arc::<str>::from("gpu"),
        Some(Arc::<str>::from("p-gpu-abcde")),
    )]));
    s.on_pod_update(&p, Arc::new(updated));
    drain(&s);
    assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n0"));
    let c = api.claim("p-gpu-abcde");
    assert_eq!(allocated_device(&c).as_deref(), Some("n0/dev-0"));
    let reserved = &c.status.as_ref().unwrap().reserved_for.as_ref().unwrap()[0];
    assert_eq!(reserved.uid, "p", "PreBind reserves the claim for the pod");
}

#[test]
fn a_generated_claim_the_pod_does_not_own_keeps_it_waiting() {
    let (s, api) = setup(&[1]);
    api.put_claim(claim("other", "gpu"));
    let mut p = (*pod("p", vec![("gpu", ClaimSource::Template("t".into()))])).clone();
    p.resource_claim_statuses = Some(Arc::from(vec![(
        Arc::<str>::from("gpu"),
        Some(Arc::<str>::from("other")),
    )]));
    s.on_pod_add(Arc::new(p));
    drain(&s);
    assert!(api.binds.lock().is_empty());
    assert_eq!(s.queue.counts().gated, 1);
}

#[test]
fn each_device_goes_to_one_claim() {
    let (s, api) = setup(&[1, 1]);
    for i in 0..3 {
        api.put_claim(claim(&format!("c{i}"), "gpu"));
        s.on_pod_add(pod(&format!("p{i}"), named(&format!("c{i}"))));
    }
    drain(&s);
    let binds = api.binds.lock().clone();
    assert_eq!(binds.len(), 2, "two devices, two pods: {binds:?}");
    let nodes: std::collections::BTreeSet<_> = binds.values().cloned().collect();
    assert_eq!(nodes.len(), 2, "one pod per node: {binds:?}");
    let devices: std::collections::BTreeSet<_> = (0..3)
        .filter_map(|i| allocated_device(&api.claim(&format!("c{i}"))))
        .collect();
    assert_eq!(devices.len(), 2, "no device allocated twice");
    let failures = api.failures.lock();
    let (_, msg) = failures
        .iter()
        .find(|(p, _)| !binds.contains_key(*p))
        .expect("the third pod failed");
    assert_eq!(
        msg,
        "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

#[test]
fn a_shared_claim_is_allocated_once_and_holds_its_pods_on_its_node() {
    let (s, api) = setup(&[1, 1]);
    api.put_claim(claim("shared", "gpu"));
    for i in 0..3 {
        s.on_pod_add(pod(&format!("p{i}"), named("shared")));
    }
    drain(&s);
    let binds = api.binds.lock().clone();
    assert_eq!(binds.len(), 3, "every pod shares the one device: {binds:?}");
    let nodes: std::collections::BTreeSet<_> = binds.values().cloned().collect();
    assert_eq!(
        nodes.len(),
        1,
        "the claim's node selector holds them: {binds:?}"
    );
    let c = api.claim("shared");
    assert_eq!(
        c.status
            .as_ref()
            .unwrap()
            .reserved_for
            .as_ref()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn a_missing_class_is_unresolvable() {
    let (s, api) = setup(&[1]);
    api.put_claim(claim("c", "nope"));
    s.on_pod_add(pod("p", named("c")));
    drain(&s);
    assert!(api.binds.lock().is_empty());
    let msg = api.failures.lock()["p"].clone();
    assert!(
        msg.contains("request req-0: device class nope does not exist"),
        "{msg}"
    );
}

#[test]
fn post_filter_frees_an_idle_claim_allocated_where_the_pod_cannot_go() {
    let (s, api) = setup(&[1, 1]);
    // Allocated on n0 (allocResourceClaims' way: no reservation), and n0 is unschedulable.
    let mut c = claim("c", "gpu");
    c.status = Some(
        serde_json::from_value(json!({"allocation": {
            "devices": {"results": [{"request": "req-0", "driver": DRIVER, "pool": "n0", "device": "dev-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}
        }}))
        .unwrap(),
    );
    api.put_claim(c);
    let mut n0 = node(0);
    n0.unschedulable = true;
    n0.resource_version = 1;
    s.on_node_update(&node(0), Arc::new(n0));
    s.on_pod_add(pod("p", named("c")));
    drain(&s);
    // The first attempt failed (n0 cordoned, n1 outside the claim's selector) and PostFilter
    // deallocated the claim; its update event requeued the pod, which then got n1's device.
    assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n1"));
    assert_eq!(
        allocated_device(&api.claim("c")).as_deref(),
        Some("n1/dev-0")
    );
}

#[test]
fn a_pod_naming_a_claim_not_created_yet_waits_for_its_creation() {
    let (s, api) = setup(&[1]);
    s.on_pod_add(pod("p", named("later")));
    drain(&s);
    assert!(api.binds.lock().is_empty());
    assert_eq!(
        s.queue.counts().gated,
        1,
        "gated by DynamicResources' PreEnqueue"
    );
    // Another claim's creation is not the one it waits for (the hint says QueueSkip).
    api.put_claim(claim("unrelated", "gpu"));
    assert_eq!(s.queue.counts().gated, 1);
    api.put_claim(claim("later", "gpu"));
    assert_eq!(
        s.queue.counts().gated,
        0,
        "the claim's creation releases it"
    );
    drain(&s);
    assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n0"));
}

/// The allocator's answers kept per node between cycles (`node_memo.rs`) are taken again
/// only while nothing the allocator reads on the node changed: here the node's slice gains
/// a device after a pod found none free there.
#[test]
fn a_slice_that_gains_a_device_is_searched_again() {
    let (s, api) = setup(&[1]);
    for i in 0..2 {
        api.put_claim(claim(&format!("c{i}"), "gpu"));
        s.on_pod_add(pod(&format!("p{i}"), named(&format!("c{i}"))));
    }
    drain(&s);
    assert_eq!(api.binds.lock().len(), 1, "one device, one pod");
    s.on_object_event(
        EventResource::ResourceSlice,
        ActionType::UPDATE,
        Some(ApiObject(Arc::new(slice(0, 1, 1)))),
        Some(ApiObject(Arc::new(slice(0, 2, 2)))),
    );
    drain(&s);
    assert_eq!(
        api.binds.lock().len(),
        2,
        "the new device went to the second pod"
    );
    let devices: std::collections::BTreeSet<_> = (0..2)
        .filter_map(|i| allocated_device(&api.claim(&format!("c{i}"))))
        .collect();
    assert_eq!(devices.len(), 2, "no device allocated twice: {devices:?}");
}

/// As above, for a class whose selector comes to match the node's devices.
#[test]
fn a_class_that_comes_to_select_the_devices_is_searched_again() {
    let (s, api) = setup(&[1]);
    let none = class("gpu", None, "elsewhere.example.com");
    s.on_object_event(
        EventResource::DeviceClass,
        ActionType::UPDATE,
        Some(ApiObject(Arc::new(class("gpu", None, DRIVER)))),
        Some(ApiObject(Arc::new(none.clone()))),
    );
    api.put_claim(claim("c", "gpu"));
    s.on_pod_add(pod("p", named("c")));
    drain(&s);
    assert!(api.binds.lock().is_empty(), "the class selects no device");
    s.on_object_event(
        EventResource::DeviceClass,
        ActionType::UPDATE,
        Some(ApiObject(Arc::new(none))),
        Some(ApiObject(Arc::new(class("gpu", None, DRIVER)))),
    );
    drain(&s);
    assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n0"));
}

/// Extended resources backed by DRA (DRAExtendedResource), after kubernetes/kubernetes
/// pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go (TestPlugin's
/// "extended-resource-name-with-resources", "implicit-extended-resource-name-with-resources",
/// "extended-resource-name-with-node-resource", "extended-resource-name-no-resource",
/// "non-DRA-extended-resource-name-with-zero-allocatable"), driven through whole cycles.
mod extended_resources {
    use super::*;

    /// Class `gpu-ext` backs `example.com/gpu` (and its implicit name).
    fn backing_class(s: &Scheduler) {
        add_class(s, "gpu-ext", Some("example.com/gpu"));
    }

    /// A pod without claims whose container requests `count` of `resource`.
    fn ext_pod(name: &str, resource: &str, count: &str) -> Arc<Pod> {
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": name},
            "spec": {"containers": [{"name": "app", "image": "img",
                     "resources": {"requests": {resource: count}, "limits": {resource: count}}}]}
        }))
        .unwrap();
        Arc::new(tidegate_engine::api::convert::pod(&p).unwrap())
    }

    fn extended_claims(api: &Api) -> Vec<Arc<k::ResourceClaim>> {
        api.claims
            .lock()
            .values()
            .filter(|c| {
                c.metadata.annotations.as_ref().is_some_and(|a| {
                    a.contains_key("resource.kubernetes.io/extended-resource-claim")
                })
            })
            .cloned()
            .collect()
    }

    #[test]
    fn a_backed_resource_gets_a_claim_created_at_prebind() {
        for resource in [
            "example.com/gpu",
            "deviceclass.resource.kubernetes.io/gpu-ext",
        ] {
            let (s, api) = setup(&[2]);
            backing_class(&s);
            s.on_pod_add(ext_pod("p", resource, "2"));
            drain(&s);
            assert_eq!(
                api.binds.lock().get("p").map(String::as_str),
                Some("n0"),
                "{resource}"
            );
            let claims = extended_claims(&api);
            assert_eq!(claims.len(), 1, "{resource}");
            let c = &claims[0];
            assert!(
                c.metadata
                    .name
                    .as_deref()
                    .unwrap()
                    .starts_with("p-extended-resources-")
            );
            let owner = &c.metadata.owner_references.as_ref().unwrap()[0];
            assert_eq!(
                (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
                ("Pod", "p", Some(true))
            );
            let req = &c
                .spec
                .as_ref()
                .unwrap()
                .devices
                .as_ref()
                .unwrap()
                .requests
                .as_ref()
                .unwrap()[0];
            let exactly = req.exactly.as_ref().unwrap();
            assert_eq!(
                (
                    req.name.as_str(),
                    exactly.device_class_name.as_str(),
                    exactly.count
                ),
                ("container-0-request-0", "gpu-ext", Some(2))
            );
            let status = c.status.as_ref().unwrap();
            let results = status
                .allocation
                .as_ref()
                .unwrap()
                .devices
                .as_ref()
                .unwrap()
                .results
                .as_ref()
                .unwrap();
            assert_eq!(results.len(), 2, "both devices of n0");
            assert_eq!(status.reserved_for.as_ref().unwrap()[0].uid, "p");
            let pod_status = api.extended_status.lock()["p"].clone();
            assert_eq!(
                pod_status.resource_claim_name,
                c.metadata.name.clone().unwrap()
            );
            let m = &pod_status.request_mappings[0];
            assert_eq!(
                (
                    m.container_name.as_str(),
                    m.resource_name.as_str(),
                    m.request_name.as_str()
                ),
                ("app", resource, "container-0-request-0")
            );
        }
    }

    #[test]
    fn devices_held_by_extended_claims_are_not_handed_out_again() {
        let (s, api) = setup(&[1, 1]);
        backing_class(&s);
        for i in 0..3 {
            s.on_pod_add(ext_pod(&format!("p{i}"), "example.com/gpu", "1"));
        }
        drain(&s);
        let binds = api.binds.lock().clone();
        assert_eq!(binds.len(), 2, "two devices: {binds:?}");
        let nodes: std::collections::BTreeSet<_> = binds.values().cloned().collect();
        assert_eq!(nodes.len(), 2, "{binds:?}");
        let failures = api.failures.lock();
        let (_, msg) = failures
            .iter()
            .find(|(p, _)| !binds.contains_key(*p))
            .unwrap();
        assert_eq!(
            msg,
            "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn a_node_offering_the_resource_itself_needs_no_claim() {
        let (s, api) = setup(&[]);
        backing_class(&s);
        let mut n = node(0);
        n.allocatable.set_scalar(Sym::new("example.com/gpu"), 4);
        s.on_node_add(Arc::new(n));
        s.on_pod_add(ext_pod("p", "example.com/gpu", "1"));
        drain(&s);
        assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n0"));
        assert!(extended_claims(&api).is_empty());
        assert!(api.extended_status.lock().is_empty());
    }

    #[test]
    fn a_backed_resource_without_devices_cannot_be_allocated() {
        let (s, api) = setup(&[0]);
        backing_class(&s);
        s.on_pod_add(ext_pod("p", "example.com/gpu", "1"));
        drain(&s);
        assert!(api.binds.lock().is_empty());
        assert_eq!(
            api.failures.lock()["p"],
            "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn a_resource_no_class_backs_is_insufficient() {
        let (s, api) = setup(&[1]);
        s.on_pod_add(ext_pod("p", "example.com/gpu", "1"));
        drain(&s);
        assert!(api.binds.lock().is_empty());
        assert_eq!(
            api.failures.lock()["p"],
            // Insufficient is resolvable: preemption looks for victims (there are none).
            "0/1 nodes are available: 1 Insufficient example.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        );
    }
}

/// Claims shared by a pod group (DRAWorkloadResourceClaims), after kubernetes/kubernetes
/// pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go (TestPlugin's
/// pod-group cases: "podgroup-claim-reference", "podgroup-with-resources" and their
/// "-feature-disabled-reserves-for-pod" variants, "reserved-okay-podgroup",
/// "bind-podgroup-failure" (with "bind-failure" beside it), "postfilter-deallocate-
/// {reserved,unreserved}-podgroup", "postfilter-skip-deallocate-reserved-podgroup-{feature-
/// disabled,when-pods-active}"; a pending allocation shared within one pod-group cycle) and
/// staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go (`BindTo`,
/// `IsReservedForPod`), driven through whole pod-group cycles here.
mod pod_group_claims {
    use super::*;
    use std::time::Duration;
    use tidegate_engine::Profile;
    use tidegate_engine::api::{PodGroup, PodGroupKey, PodGroupPolicy};
    use tidegate_engine::features::{FeatureGates, Features};

    fn features(workload_claims: bool) -> Features {
        let mut set = BTreeMap::new();
        set.insert("GenericWorkload".to_string(), true);
        set.insert("DRAWorkloadResourceClaims".to_string(), workload_claims);
        Features::from_gates(&FeatureGates::for_workload(&set).expect("supported gates"))
    }

    fn group_setup(
        devices: &[usize],
        workload_claims: bool,
    ) -> (Arc<Scheduler>, Arc<Api>, Arc<VirtualClock>) {
        let f = features(workload_claims);
        let cfg = SchedulerConfig {
            profiles: vec![Profile::default_profile_for(&f)],
            parallelism: 1,
            deterministic: true,
            features: f,
            ..SchedulerConfig::default()
        };
        let clock = Arc::new(VirtualClock::new());
        let (s, api) = setup_with(cfg, devices, clock.clone());
        (s, api, clock)
    }

    /// Basic group `g` whose entry `gpu` is the claim `claim`.
    fn group(claim: &str) -> Arc<PodGroup> {
        Arc::new(PodGroup {
            uid: "uid-g".into(),
            resource_claims: vec![PodResourceClaim {
                name: "gpu".into(),
                source: ClaimSource::Claim(claim.into()),
            }],
            ..PodGroup::new(PodGroupKey::new("ns", "g"), PodGroupPolicy::Basic)
        })
    }

    /// A member of `g` whose entry `gpu` names `claim` (the group's entry).
    fn member(name: &str, claim: &str) -> Arc<Pod> {
        let mut p = (*pod(name, named(claim))).clone();
        let mut spec = (*p.spec).clone();
        spec.scheduling_group = Some("g".into());
        p.spec = Arc::new(spec);
        Arc::new(p)
    }

    /// Scheduling attempts, with the clock moved past each backoff, until `want` pods are
    /// bound (or the test gives up).
    fn run_until_bound(s: &Scheduler, api: &Api, clock: &VirtualClock, want: usize) {
        for _ in 0..20 {
            drain(s);
            if api.binds.lock().len() >= want {
                return;
            }
            clock.advance(Duration::from_secs(11));
            s.queue.flush();
        }
        panic!("only {:?} bound", api.binds.lock());
    }

    /// `rounds` rounds of scheduling attempts, the clock moved past each backoff.
    fn attempts(s: &Scheduler, clock: &VirtualClock, rounds: usize) {
        for _ in 0..rounds {
            drain(s);
            clock.advance(Duration::from_secs(11));
            s.queue.flush();
        }
    }

    fn reserved_for(api: &Api, claim: &str) -> Vec<(String, String)> {
        api.claim(claim)
            .status
            .as_ref()
            .and_then(|s| s.reserved_for.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.resource, r.name))
            .collect()
    }

    #[test]
    fn members_share_the_group_claim_reserved_once_for_the_group() {
        let (s, api, clock) = group_setup(&[1, 1], true);
        api.put_claim(claim("shared", "gpu"));
        s.on_pod_group_add(group("shared"));
        for i in 0..3 {
            s.on_pod_add(member(&format!("p{i}"), "shared"));
        }
        run_until_bound(&s, &api, &clock, 3);
        let binds = api.binds.lock().clone();
        let nodes: std::collections::BTreeSet<_> = binds.values().cloned().collect();
        assert_eq!(nodes.len(), 1, "one device, one node: {binds:?}");
        assert_eq!(
            reserved_for(&api, "shared"),
            [("podgroups".to_string(), "g".to_string())],
            "reserved for the PodGroup, once"
        );
        // kube's binding race: the first member's PreBind wrote the allocation, the others
        // had seen the claim unallocated and were retried.
        let failures = api.failures.lock();
        assert!(
            failures
                .values()
                .any(|m| m.contains("got allocated elsewhere in the meantime")),
            "{failures:?}"
        );
    }

    #[test]
    fn without_the_gate_each_member_reserves_the_claim_for_itself() {
        let (s, api, clock) = group_setup(&[1, 1], false);
        api.put_claim(claim("shared", "gpu"));
        s.on_pod_group_add(group("shared"));
        for i in 0..3 {
            s.on_pod_add(member(&format!("p{i}"), "shared"));
        }
        run_until_bound(&s, &api, &clock, 3);
        let mut got = reserved_for(&api, "shared");
        got.sort();
        let want: Vec<_> = (0..3)
            .map(|i| ("pods".to_string(), format!("p{i}")))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_pending_allocation_is_shared_within_one_group_cycle() {
        // Two nodes with one device each: the second member shares the first's allocation
        // in flight (so lands on its node) instead of waiting for it.
        let (s, api, clock) = group_setup(&[1, 1], true);
        api.put_claim(claim("shared", "gpu"));
        s.on_pod_group_add(group("shared"));
        s.on_pod_add(member("a", "shared"));
        s.on_pod_add(member("b", "shared"));
        run_until_bound(&s, &api, &clock, 2);
        // Both were placed by the one group cycle: "b" lost only the binding race (its
        // retry needed no allocation), it never waited for "a"'s allocation in flight.
        let failures = api.failures.lock().clone();
        assert!(
            failures["b"].contains("got allocated elsewhere in the meantime"),
            "{failures:?}"
        );
        assert!(
            !failures
                .values()
                .any(|m| m.contains("in the process of being allocated")),
            "{failures:?}"
        );
        let binds = api.binds.lock().clone();
        assert_eq!(binds["a"], binds["b"], "{binds:?}");
    }

    /// A claim allocated on n0 (cordoned), reserved for `reserved` (a consumer's resource
    /// and UID) if any.
    fn stranded_claim(api: &Api, s: &Scheduler, reserved: Option<(&str, &str, &str)>) {
        let mut c = claim("c", "gpu");
        let mut status = json!({"allocation": {
            "devices": {"results": [{"request": "req-0", "driver": DRIVER, "pool": "n0", "device": "dev-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}
        }});
        if let Some((resource, name, uid)) = reserved {
            status["reservedFor"] = json!([{"apiGroup": "scheduling.k8s.io", "resource": resource,
                                             "name": name, "uid": uid}]);
        }
        c.status = Some(serde_json::from_value(status).unwrap());
        api.put_claim(c);
        let mut n0 = node(0);
        n0.unschedulable = true;
        n0.resource_version = 1;
        s.on_node_update(&node(0), Arc::new(n0));
    }

    /// kube's `DynamicResources.PodGroupPostFilter` reads its state from the group's cycle,
    /// where only its own PreFilter writes it. A member rejected by an earlier PreFilter
    /// (VolumeBinding: the claim its volume names does not exist) leaves none, so the
    /// plugin fails with `not found`: an error, which every member of the failed cycle
    /// carries (seen in kube v1.37.2 by `ci/kube-diff.sh --seed 4`, scenario-80).
    #[test]
    fn pod_group_post_filter_without_a_members_dra_state_is_an_error() {
        use tidegate_engine::api::volume::{PodVolume, PodVolumeSource};
        use tidegate_engine::api::{PodGroup, PodGroupKey, PodGroupPolicy};
        let (s, api, clock) = group_setup(&[1], true);
        s.on_pod_group_add(Arc::new(PodGroup {
            uid: "uid-g".into(),
            ..PodGroup::new(PodGroupKey::new("ns", "g"), PodGroupPolicy::Basic)
        }));
        let mut p = (*pod("p", vec![])).clone();
        let mut spec = (*p.spec).clone();
        spec.scheduling_group = Some("g".into());
        spec.volumes = vec![PodVolume {
            name: "data".into(),
            source: PodVolumeSource::Claim {
                claim_name: "missing".into(),
                read_only: false,
            },
        }];
        p.spec = Arc::new(spec);
        s.on_pod_add(Arc::new(p));
        attempts(&s, &clock, 1);
        assert!(api.binds.lock().is_empty());
        assert_eq!(
            api.failures.lock()["p"],
            "error in \"DynamicResources\" PodGroupPostFilter plugins: not found"
        );
    }

    #[test]
    fn pod_group_post_filter_frees_an_idle_claim_of_a_member() {
        let (s, api, clock) = group_setup(&[1, 1], true);
        stranded_claim(&api, &s, None);
        s.on_pod_group_add(group("c"));
        s.on_pod_add(member("p", "c"));
        // No pod-level PostFilter runs in a group cycle: only PodGroupPostFilter can free
        // the claim, and then the retry allocates it on n1.
        run_until_bound(&s, &api, &clock, 1);
        assert_eq!(api.binds.lock()["p"], "n1");
        assert_eq!(
            allocated_device(&api.claim("c")).as_deref(),
            Some("n1/dev-0")
        );
    }

    #[test]
    fn pod_group_post_filter_deallocates_a_claim_reserved_only_for_the_group() {
        let (s, api, clock) = group_setup(&[1, 1], true);
        stranded_claim(&api, &s, Some(("podgroups", "g", "uid-g")));
        s.on_pod_group_add(group("c"));
        s.on_pod_add(member("p", "c"));
        // The member's own PostFilter leaves a claim reserved for its group alone; the
        // group's deallocates it, as no pod of the group is scheduled.
        run_until_bound(&s, &api, &clock, 1);
        assert_eq!(api.binds.lock()["p"], "n1");
        assert_eq!(
            reserved_for(&api, "c"),
            [("podgroups".to_string(), "g".to_string())]
        );
    }

    /// TestPlugin "reserved-okay-podgroup": a claim reserved for the member's group needs no
    /// write at PreBind, and the member binds.
    #[test]
    fn a_claim_already_reserved_for_the_group_needs_no_write() {
        let (s, api, clock) = group_setup(&[1], true);
        let mut c = claim("shared", "gpu");
        c.status = Some(
            serde_json::from_value(json!({
                "allocation": {
                    "devices": {"results": [{"request": "req-0", "driver": DRIVER,
                                             "pool": "n0", "device": "dev-0"}]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}},
                "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                 "name": "g", "uid": "uid-g"}]
            }))
            .unwrap(),
        );
        api.put_claim(c);
        let before = api.claim("shared");
        s.on_pod_group_add(group("shared"));
        s.on_pod_add(member("p", "shared"));
        run_until_bound(&s, &api, &clock, 1);
        assert_eq!(api.binds.lock()["p"], "n0");
        assert_eq!(api.claim("shared"), before, "PreBind wrote nothing");
    }

    /// TestPlugin "podgroup-claim-template": the group's entry is a template, the claim the
    /// controller made from it is owned by the PodGroup (not by the member) and already
    /// allocated; the member is let in (its group owns the claim), binds where the
    /// allocation is, and PreBind reserves the claim for the group.
    #[test]
    fn a_claim_made_from_the_groups_template_is_reserved_for_the_group() {
        let (s, api, clock) = group_setup(&[1, 1], true);
        let mut c = claim("g-gpu-x", "gpu");
        c.metadata.owner_references = Some(vec![
            serde_json::from_value(json!({"apiVersion": "scheduling.k8s.io/v1alpha2",
                "kind": "PodGroup", "name": "g", "uid": "uid-g", "controller": true}))
            .unwrap(),
        ]);
        c.status = Some(
            serde_json::from_value(json!({"allocation": {
                "devices": {"results": [{"request": "req-0", "driver": DRIVER,
                                         "pool": "n1", "device": "dev-0"}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}))
            .unwrap(),
        );
        api.put_claim(c);
        let mut g = (*group("unused")).clone();
        g.resource_claims[0].source = ClaimSource::Template("t".into());
        s.on_pod_group_add(Arc::new(g));
        let mut p = (*pod("p", vec![("gpu", ClaimSource::Template("t".into()))])).clone();
        let mut spec = (*p.spec).clone();
        spec.scheduling_group = Some("g".into());
        p.spec = Arc::new(spec);
        p.resource_claim_statuses = Some(Arc::from(vec![(
            Arc::<str>::from("gpu"),
            Some(Arc::<str>::from("g-gpu-x")),
        )]));
        s.on_pod_add(Arc::new(p));
        run_until_bound(&s, &api, &clock, 1);
        assert_eq!(api.binds.lock()["p"], "n1", "where the allocation is");
        assert_eq!(
            reserved_for(&api, "g-gpu-x"),
            [("podgroups".to_string(), "g".to_string())]
        );
        assert_eq!(
            allocated_device(&api.claim("g-gpu-x")).as_deref(),
            Some("n1/dev-0"),
            "the allocation is kept"
        );
    }

    /// TestPlugin "bind-podgroup-failure": after a failed bind, Unreserve leaves the
    /// group's reservation (other members may use the claim); the retry binds.
    #[test]
    fn a_failed_bind_keeps_the_groups_reservation() {
        let (s, api, clock) = group_setup(&[1], true);
        api.put_claim(claim("shared", "gpu"));
        api.fail_bind.lock().insert("p".into());
        s.on_pod_group_add(group("shared"));
        s.on_pod_add(member("p", "shared"));
        assert!(s.try_schedule_one());
        assert!(api.binds.lock().is_empty(), "the first bind failed");
        let group_reservation = [("podgroups".to_string(), "g".to_string())];
        assert_eq!(reserved_for(&api, "shared"), group_reservation);
        assert!(allocated_device(&api.claim("shared")).is_some());
        run_until_bound(&s, &api, &clock, 1);
        assert_eq!(reserved_for(&api, "shared"), group_reservation);
    }

    /// The same for a pod's own claim (TestPlugin "bind-failure"): Unreserve takes the pod
    /// out of `reservedFor`.
    #[test]
    fn a_failed_bind_drops_a_pods_own_reservation() {
        let (s, api, clock) = group_setup(&[1], true);
        api.put_claim(claim("own", "gpu"));
        api.fail_bind.lock().insert("p".into());
        s.on_pod_add(pod("p", named("own")));
        assert!(s.try_schedule_one());
        assert!(api.binds.lock().is_empty(), "the bind failed");
        assert_eq!(reserved_for(&api, "own"), []);
        run_until_bound(&s, &api, &clock, 1);
        assert_eq!(api.binds.lock()["p"], "n0", "the retry binds");
        assert_eq!(
            reserved_for(&api, "own"),
            [("pods".to_string(), "p".to_string())]
        );
    }

    /// TestPlugin "postfilter-skip-deallocate-reserved-podgroup-when-pods-active": a group
    /// claim allocated where the member cannot go stays allocated while a pod of the group
    /// is scheduled (it still uses the claim).
    #[test]
    fn a_group_claim_stays_allocated_while_a_member_is_scheduled() {
        let (s, api, clock) = group_setup(&[1, 1], true);
        stranded_claim(&api, &s, Some(("podgroups", "g", "uid-g")));
        s.on_pod_group_add(group("c"));
        let mut running = (*member("running", "c")).clone();
        running.node_name = Some(Sym::new("n0"));
        s.on_pod_add(Arc::new(running));
        s.on_pod_add(member("p", "c"));
        attempts(&s, &clock, 3);
        assert!(api.binds.lock().is_empty(), "{:?}", api.binds.lock());
        assert_eq!(
            allocated_device(&api.claim("c")).as_deref(),
            Some("n0/dev-0"),
            "not deallocated"
        );
        assert!(
            api.failures.lock()["p"].contains("resourceclaim not available on the node"),
            "{:?}",
            api.failures.lock()
        );
    }

    /// TestPlugin "postfilter-skip-deallocate-reserved-podgroup-feature-disabled": without
    /// the gate a claim reserved for a PodGroup is in use by a consumer that is not a pod,
    /// so PostFilter leaves it allocated.
    #[test]
    fn without_the_gate_a_claim_reserved_for_the_group_is_not_deallocated() {
        let (s, api, clock) = group_setup(&[1, 1], false);
        stranded_claim(&api, &s, Some(("podgroups", "g", "uid-g")));
        s.on_pod_group_add(group("c"));
        s.on_pod_add(member("p", "c"));
        attempts(&s, &clock, 3);
        assert!(api.binds.lock().is_empty(), "{:?}", api.binds.lock());
        assert_eq!(
            allocated_device(&api.claim("c")).as_deref(),
            Some("n0/dev-0")
        );
    }
}

/// Consumable capacity (DRAConsumableCapacity): a share of a device that allows several
/// allocations gets an ID derived from its own claim. A node memo answer found for one pod's
/// claim and taken by the next pod's must carry the next claim's IDs
/// (`node_memo::for_claims`, applied at Reserve).
mod consumable {
    use super::*;
    use tidegate_engine::Profile;
    use tidegate_engine::features::{FeatureGates, Features};

    #[test]
    fn shares_taken_from_a_kept_answer_carry_their_own_claims_ids() {
        let set = BTreeMap::from([("DRAConsumableCapacity".to_string(), true)]);
        let f = Features::from_gates(&FeatureGates::for_workload(&set).expect("supported gates"));
        let cfg = SchedulerConfig {
            profiles: vec![Profile::default_profile_for(&f)],
            parallelism: 1,
            deterministic: true,
            features: f,
            ..SchedulerConfig::default()
        };
        let (s, api) = setup_with(cfg, &[], Arc::new(VirtualClock::new()));
        // Two nodes, each with one shared device with room for one share.
        for i in 0..2 {
            s.on_node_add(Arc::new(node(i)));
            let slice: k::ResourceSlice = serde_json::from_value(json!({
                "metadata": {"name": format!("slice-n{i}")},
                "spec": {"driver": DRIVER, "nodeName": format!("n{i}"),
                         "pool": {"name": format!("n{i}"), "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "dev-0", "allowMultipleAllocations": true,
                                      "capacity": {"bandwidth": {"value": "10"}}}]}
            }))
            .unwrap();
            s.on_object_event(
                EventResource::ResourceSlice,
                ActionType::ADD,
                None,
                Some(ApiObject(Arc::new(slice))),
            );
        }
        for i in 0..2 {
            let c: k::ResourceClaim = serde_json::from_value(json!({
                "metadata": {"name": format!("c{i}"), "namespace": "ns", "uid": format!("uid-c{i}")},
                "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
                    "deviceClassName": "gpu", "capacity": {"requests": {"bandwidth": "10"}}}}]}}
            }))
            .unwrap();
            api.put_claim(c);
        }
        // One cycle at a time: the second pod's cycle finds the first's answer for the node
        // the first pod left alone.
        s.on_pod_add(pod("p0", named("c0")));
        drain(&s);
        s.on_pod_add(pod("p1", named("c1")));
        drain(&s);
        assert_eq!(api.binds.lock().len(), 2, "{:?}", api.failures.lock());
        let share = |c: &str| {
            let c = api.claim(c);
            let r = &c
                .status
                .as_ref()
                .unwrap()
                .allocation
                .as_ref()
                .unwrap()
                .devices
                .as_ref()
                .unwrap()
                .results
                .as_ref()
                .unwrap()[0];
            (r.pool.clone(), r.share_id.clone().expect("a share"))
        };
        let ((pool0, id0), (pool1, id1)) = (share("c0"), share("c1"));
        assert_ne!(pool0, pool1, "one share per device");
        assert_ne!(id0, id1, "each claim's share has its own ID");
    }
}

/// DeviceTaintRules (DRADeviceTaintRules), applied as kube's ResourceSlice tracker applies
/// them (staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go):
/// a rule's taint goes on the devices its selector picks, the scheduler hears of it as
/// updates of those slices, and a rule that stops selecting a device gives it back.
mod taint_rules {
    use super::*;
    use tidegate_engine::features::{FeatureGates, Features};

    fn rule(selector: serde_json::Value) -> ApiObject {
        let r: k::DeviceTaintRule = serde_json::from_value(json!({
            "metadata": {"name": "maintenance"},
            "spec": {"deviceSelector": selector,
                     "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"}}
        }))
        .unwrap();
        ApiObject(Arc::new(r))
    }

    fn on_rule(s: &Scheduler, action: ActionType, old: Option<ApiObject>, new: Option<ApiObject>) {
        s.on_object_event(EventResource::DeviceTaintRule, action, old, new);
    }

    #[test]
    fn a_rule_keeps_pods_off_the_devices_it_selects_until_it_stops_selecting_them() {
        let (s, api) = setup(&[1, 1]);
        let on_n0 = rule(json!({"driver": DRIVER, "pool": "n0", "device": "dev-0"}));
        on_rule(&s, ActionType::ADD, None, Some(on_n0.clone()));
        for i in 0..2 {
            api.put_claim(claim(&format!("c{i}"), "gpu"));
            s.on_pod_add(pod(&format!("p{i}"), named(&format!("c{i}"))));
        }
        drain(&s);
        assert_eq!(
            api.binds.lock().clone(),
            BTreeMap::from([("p0".to_string(), "n1".to_string())]),
            "n0's only device is tainted"
        );
        // The rule now names a device n0 does not have: the taint goes, and the slice's
        // update brings the waiting pod back.
        let elsewhere = rule(json!({"driver": DRIVER, "pool": "n0", "device": "dev-9"}));
        on_rule(&s, ActionType::UPDATE, Some(on_n0), Some(elsewhere));
        drain(&s);
        assert_eq!(api.binds.lock().get("p1").map(String::as_str), Some("n0"));
    }

    #[test]
    fn a_deleted_rule_untaints_and_a_rule_without_a_selector_taints_nothing() {
        let (s, api) = setup(&[1]);
        let every = rule(json!({}));
        on_rule(&s, ActionType::ADD, None, Some(every.clone()));
        on_rule(
            &s,
            ActionType::ADD,
            None,
            Some(rule(serde_json::Value::Null)),
        );
        api.put_claim(claim("c", "gpu"));
        s.on_pod_add(pod("p", named("c")));
        drain(&s);
        assert!(
            api.binds.lock().is_empty(),
            "an empty selector taints every device"
        );
        on_rule(&s, ActionType::DELETE, Some(every), None);
        drain(&s);
        assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n0"));
    }

    #[test]
    fn a_slice_added_after_the_rule_is_tainted_too() {
        let (s, api) = setup(&[]);
        on_rule(
            &s,
            ActionType::ADD,
            None,
            Some(rule(json!({"driver": DRIVER}))),
        );
        s.on_node_add(Arc::new(node(0)));
        s.on_object_event(
            EventResource::ResourceSlice,
            ActionType::ADD,
            None,
            Some(ApiObject(Arc::new(slice(0, 1, 1)))),
        );
        api.put_claim(claim("c", "gpu"));
        s.on_pod_add(pod("p", named("c")));
        drain(&s);
        assert!(
            api.binds.lock().is_empty(),
            "the new slice's device is tainted"
        );
    }

    #[test]
    fn with_the_gate_off_the_rules_are_ignored() {
        let mut set = BTreeMap::new();
        set.insert("DRADeviceTaintRules".to_string(), false);
        let cfg = SchedulerConfig {
            parallelism: 1,
            deterministic: true,
            features: Features::from_gates(&FeatureGates::for_workload(&set).unwrap()),
            ..SchedulerConfig::default()
        };
        let (s, api) = setup_with(cfg, &[1], Arc::new(VirtualClock::new()));
        on_rule(&s, ActionType::ADD, None, Some(rule(json!({}))));
        api.put_claim(claim("c", "gpu"));
        s.on_pod_add(pod("p", named("c")));
        drain(&s);
        assert_eq!(api.binds.lock().get("p").map(String::as_str), Some("n0"));
    }
}

/// A pod past Reserve keeps only what its binding needs: its cycle's snapshot of every
/// allocated device goes at Reserve. A pod waiting at Permit (or binding) held it before, so
/// hundreds of pods in flight each kept a copy of the allocated devices: 6.3 GB at
/// ConsumableCapacity/full_1000nodes, 279 MB now.
mod snapshots {
    use super::*;
    use std::time::Duration;
    use tidegate_engine::Profile;
    use tidegate_engine::{Code, CycleState, PermitPlugin, Plugin, PluginSet, Status};

    /// Makes every pod wait at Permit.
    struct Hold;

    impl Plugin for Hold {
        fn name(&self) -> &'static str {
            "Hold"
        }
        fn into_permit(self: Arc<Self>) -> Option<Arc<dyn PermitPlugin>> {
            Some(self)
        }
    }

    impl PermitPlugin for Hold {
        fn permit(&self, _: &mut CycleState, _: &Pod, _: Sym) -> (Status, Duration) {
            (Status::code_only(Code::Wait), Duration::from_secs(600))
        }
    }

    #[test]
    fn a_pod_waiting_at_permit_holds_no_snapshot_of_the_allocated_devices() {
        let mut registry = Registry::in_tree();
        registry.register("Hold", |_| Arc::new(Hold));
        let mut profile = Profile::default_profile();
        profile.plugins.permit = PluginSet {
            enabled: vec![("Hold".to_string(), 0)],
            disabled: vec![],
        };
        let cfg = SchedulerConfig {
            profiles: vec![profile],
            parallelism: 1,
            deterministic: true,
            ..SchedulerConfig::default()
        };
        let (s, api) = setup_in(cfg, &registry, &[2], Arc::new(VirtualClock::new()));
        for i in 0..2 {
            api.put_claim(claim(&format!("c{i}"), "gpu"));
            s.on_pod_add(pod(&format!("p{i}"), named(&format!("c{i}"))));
        }
        drain(&s);
        assert_eq!(s.waiting_pods.len(), 2, "both pods wait at Permit");
        assert!(api.binds.lock().is_empty());
        assert_eq!(s.dra_snapshots_held(), 0);
    }
}
