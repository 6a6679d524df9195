//! The event handlers (kube's `pkg/scheduler/eventhandlers.go`): nodes and pods added,
//! updated and deleted, as an informer (or the harness's object store) reports them. Pods not
//! yet bound go to the queue (PreEnqueue decides activeQ or the gated set); bound pods go to
//! the cache and, as cluster events, to the queue's hints. Objects of the other kinds the
//! plugins may watch (volumes, DRA, pod groups) go to the hints only (`on_object_event`).

use crate::api::{Node, Pod, Sym};
use crate::framework::events::{
    ActionType, ApiObject, ClusterEvent, EventObject, EventResource,
    pod_scheduling_properties_change,
};
use std::sync::Arc;

use super::Scheduler;

impl Scheduler {
    pub fn on_node_add(&self, node: Arc<Node>) {
        self.cache.add_node(node.clone());
        self.queue.on_cluster_event(
            ClusterEvent::new(EventResource::Node, ActionType::ADD),
            EventObject::None,
            EventObject::Node(node),
        );
    }

    /// kube's `updateNodeInCache`: one cluster event per changed aspect, in the order of
    /// kube's `nodeSchedulingPropertiesChange` (allocatable, labels, taints and
    /// unschedulable, then declared features when the NodeDeclaredFeatures gate is on).
    pub fn on_node_update(&self, old: &Node, new: Arc<Node>) {
        let declared =
            self.features.node_declared_features && old.declared_features != new.declared_features;
        let actions = [
            (
                old.allocatable != new.allocatable,
                ActionType::UPDATE_NODE_ALLOCATABLE,
            ),
            (old.labels != new.labels, ActionType::UPDATE_NODE_LABEL),
            (
                old.taints != new.taints || old.unschedulable != new.unschedulable,
                ActionType::UPDATE_NODE_TAINT,
            ),
            (declared, ActionType::UPDATE_NODE_DECLARED_FEATURE),
        ];
        self.cache.update_node(new.clone());
        let old = EventObject::Node(Arc::new(old.clone()));
        for (_, a) in actions.into_iter().filter(|(changed, _)| *changed) {
            self.queue.on_cluster_event(
                ClusterEvent::new(EventResource::Node, a),
                old.clone(),
                EventObject::Node(new.clone()),
            );
        }
    }

    /// kube's `deleteNodeFromCache`: the node leaves the cache, and the pods whose rejectors
    /// registered NodeDelete (PodTopologySpread: a domain may be gone) hear of it.
    pub fn on_node_delete(&self, name: Sym) {
        if let Some(old) = self.cache.remove_node(name) {
            self.queue.on_cluster_event(
                ClusterEvent::new(EventResource::Node, ActionType::DELETE),
                EventObject::Node(old),
                EventObject::None,
            );
        }
    }

    /// kube's `addAssignedPodToCache`'s queue step: with QueueingHints, every parked pod whose
    /// rejector registered the event goes through its hints (`MoveAllToActiveOrBackoffQueue`);
    /// without, only the cross-topology candidates (`AssignedPodAdded`). Source:
    /// pkg/scheduler/eventhandlers.go in kubernetes/kubernetes, which takes the first path
    /// whenever the gate is on, because the pre-filter knows only the in-tree plugins and
    /// misses pods a relabelled pod stops blocking.
    pub(super) fn assigned_pod_added(&self, pod: Arc<Pod>) {
        if self.queue.queueing_hints() {
            self.queue.assigned_pod_event(
                ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD),
                None,
                Some(pod),
            );
        } else {
            let ns = self.client.namespace_labels(pod.namespace);
            self.queue.assigned_pod_added(pod, ns.as_deref());
        }
    }

    /// A member of a pod group, under GenericWorkload.
    #[inline]
    fn group_member(&self, pod: &Pod) -> bool {
        self.features.generic_workload && pod.spec.scheduling_group.is_some()
    }

    /// A pod this scheduler re-evaluates although it is bound: its resize is Deferred and
    /// resize preemption is on (`scheduler/resize.rs`).
    fn deferred_resize(&self, pod: &Pod) -> bool {
        self.resize_preemption && pod.is_resize_deferred() && self.responsible_for(pod)
    }

    pub fn on_pod_add(&self, pod: Arc<Pod>) {
        if self.group_member(&pod) {
            // kube's `AddPodGroupMember` in the cache, before the queue sees the pod.
            self.cache.pod_groups().add_pod(&pod);
            if !pod.is_assigned() && self.responsible_for(&pod) {
                self.queue.add(pod.clone());
                // kube's addPodToSchedulingQueue under GenericWorkload: a gang waiting for
                // its quorum hears of the new member.
                self.queue.on_cluster_event(
                    ClusterEvent::new(EventResource::UnscheduledPod, ActionType::ADD),
                    EventObject::None,
                    EventObject::Pod(pod),
                );
                return;
            }
        }
        if pod.is_assigned() {
            if self.deferred_resize(&pod) {
                self.queue.add(pod.clone());
            }
            self.cache.add_pod(pod.clone());
            self.assigned_pod_added(pod);
        } else if self.responsible_for(&pod) {
            self.queue.add(pod);
        }
    }

    pub fn on_pod_update(&self, old: &Pod, new: Arc<Pod>) {
        if self.group_member(&new) {
            self.cache.pod_groups().add_pod(&new);
        }
        match (old.is_assigned(), new.is_assigned()) {
            (false, false) => {
                // kube's updatePodInSchedulingQueue: a resync carrying the same object, and any
                // update of a pod this scheduler has assumed (its binding cycle is running), are
                // bypassed; otherwise the pod could go through scheduling twice (kube #96071).
                if old.resource_version == new.resource_version && old.resource_version != 0 {
                    return;
                }
                if self.cache.is_assumed(&new.key) {
                    return;
                }
                if new.deletion_timestamp {
                    // Terminating: it will never be scheduled (kube pops and skips it; we drop
                    // it at once).
                    self.queue.delete(&new.key);
                } else if self.responsible_for(&new) {
                    let left = old.nominated_node_name.is_some()
                        && old.nominated_node_name != new.nominated_node_name;
                    self.queue.update(old, new);
                    if left {
                        // kube's updatePodInSchedulingQueue (hasNominatedNodeNameChanged): as
                        // if the pod were deleted from the node it was nominated to.
                        self.queue.nominated_pod_left(Arc::new(old.clone()));
                    }
                }
            }
            (false, true) => {
                // Left the unscheduled informer, entered the assigned one. A pod we assumed is
                // in no queue (it was popped, and updates to it were bypassed since).
                if self.cache.is_assumed(&new.key) {
                    self.queue.delete_scheduled(&new.key);
                } else {
                    self.queue.delete(&new.key);
                }
                self.cache.add_pod(new.clone());
                self.assigned_pod_added(new);
            }
            (true, _) => {
                // With resize preemption, a pod whose resize became Deferred enters the queue,
                // one no longer Deferred leaves it, one still Deferred is updated there (kube's
                // `updatePod`).
                if self.resize_preemption && self.responsible_for(&new) {
                    match (old.is_resize_deferred(), new.is_resize_deferred()) {
                        (false, true) => self.queue.add(new.clone()),
                        (true, false) => self.queue.delete(&new.key),
                        (true, true) => self.queue.update(old, new.clone()),
                        (false, false) => {}
                    }
                }
                // kube's `updateAssignedPodInCache`: one event per changed property, to every
                // parked pod with QueueingHints (see `assigned_pod_added`), else through the
                // cross-topology pre-filter.
                self.cache.add_pod(new.clone());
                let hints = self.queue.queueing_hints();
                let ns = if hints {
                    None
                } else {
                    self.client.namespace_labels(new.namespace)
                };
                let old = Arc::new(old.clone());
                for event in pod_scheduling_properties_change(&old, &new) {
                    if hints {
                        self.queue
                            .assigned_pod_event(event, Some(old.clone()), Some(new.clone()));
                    } else {
                        self.queue.assigned_pod_updated(
                            old.clone(),
                            new.clone(),
                            event,
                            ns.as_deref(),
                        );
                    }
                }
            }
        }
    }

    /// An object of a kind the engine keeps no cache of (PersistentVolume, ResourceClaim,
    /// PodGroup, …) added (`old` None), updated, or deleted (`new` None), as its informer
    /// delivers it; `action` is ADD, UPDATE or DELETE. The pods it may help move only where a
    /// plugin registered the resource with that action and its hint asks for it
    /// ([`crate::queue::SchedulingQueue::on_informer_event`]).
    /// A PodGroup (or CompositePodGroup) was created: kube's `AddPodGroup` informer handler.
    pub fn on_pod_group_add(&self, group: Arc<crate::api::PodGroup>) {
        if self.group_kind_served(&group) {
            self.set_group_state(&group);
            self.queue.add_pod_group(group.clone());
        }
        self.on_object_event(
            group_resource(&group),
            ActionType::ADD,
            None,
            Some(ApiObject(group)),
        );
    }

    /// A PodGroup changed (spec or status).
    pub fn on_pod_group_update(
        &self,
        old: Arc<crate::api::PodGroup>,
        new: Arc<crate::api::PodGroup>,
    ) {
        if old.resource_version == new.resource_version && old.resource_version != 0 {
            return;
        }
        if self.group_kind_served(&new) {
            self.set_group_state(&new);
            self.queue.update_pod_group(new.clone());
        }
        self.on_object_event(
            group_resource(&new),
            ActionType::UPDATE,
            Some(ApiObject(old)),
            Some(ApiObject(new)),
        );
    }

    /// A PodGroup was deleted.
    pub fn on_pod_group_delete(&self, group: Arc<crate::api::PodGroup>) {
        if self.group_kind_served(&group) {
            if group.composite {
                self.cache.pod_groups().remove_composite(&group.key);
            } else {
                self.cache.pod_groups().remove_pod_group(&group.key);
            }
            self.queue.delete_pod_group(&group);
        }
        self.on_object_event(
            group_resource(&group),
            ActionType::DELETE,
            Some(ApiObject(group)),
            None,
        );
    }

    /// Whether the scheduler watches the group's kind: PodGroups with GenericWorkload,
    /// CompositePodGroups with CompositePodGroup too (kube registers their informers so).
    fn group_kind_served(&self, g: &crate::api::PodGroup) -> bool {
        self.features.generic_workload && (!g.composite || self.features.composite_pod_group)
    }

    fn set_group_state(&self, g: &Arc<crate::api::PodGroup>) {
        if g.composite {
            self.cache.pod_groups().set_composite(g.clone());
        } else {
            self.cache.pod_groups().set_pod_group(g.clone());
        }
    }

    /// The feature gates this scheduler runs with, as its plugins read them.
    pub fn features(&self) -> &crate::features::Features {
        &self.features
    }

    /// Replaces the in-flight DRA allocations (Reserve made them, PreBind has not written
    /// them) with `pending`: `(claim UID, allocation)`. For replays of a recorded state: a
    /// running scheduler makes its own. An allocation that does not convert is an error.
    pub fn replace_pending_claim_allocations(
        &self,
        pending: &[(String, k8s_openapi::api::resource::v1::AllocationResult)],
    ) -> Result<(), String> {
        let mut m = ahash::AHashMap::new();
        for (uid, a) in pending {
            let a = crate::api::dra::allocation(a).map_err(|e| e.to_string())?;
            m.insert(Arc::<str>::from(uid.as_str()), Arc::new(a));
        }
        self.cache.dra().replace_pending_allocations(m);
        Ok(())
    }

    /// Drops the in-flight DRA allocation of the claim `uid`, whoever shares it (a replay
    /// that learned kube undid it); whether one was in flight.
    pub fn drop_pending_claim_allocation(&self, uid: &str) -> bool {
        self.cache.dra().maybe_remove_pending_allocation(uid, true)
    }

    /// DRA objects the scheduler dropped because they did not convert (the embedder's store
    /// validated them, so any count here is a mismatch between the two).
    pub fn dra_objects_rejected(&self) -> u64 {
        self.cache.dra().rejected()
    }

    /// Volume objects the scheduler dropped because they did not convert (the embedder's
    /// store validated them, so any count here is a mismatch between the two).
    pub fn volume_objects_rejected(&self) -> u64 {
        self.cache.volumes().rejected()
    }

    /// How many snapshots of the allocated devices cycles hold now (pods between PreFilter
    /// and Reserve; a pod past Reserve holds none). For tests and diagnostics.
    pub fn dra_snapshots_held(&self) -> usize {
        self.cache.dra().snapshots_held()
    }

    pub fn on_object_event(
        &self,
        resource: EventResource,
        action: ActionType,
        old: Option<ApiObject>,
        new: Option<ApiObject>,
    ) {
        if resource == EventResource::DeviceTaintRule {
            // kube's slice tracker: the rule reaches the queue as the updates of the slices
            // whose taints it changed (none with DRADeviceTaintRules off: no tracker reads it).
            if self.features.dra_device_taint_rules {
                let changed = self
                    .cache
                    .dra()
                    .apply_taint_rule(old.as_ref(), new.as_ref());
                let update = ClusterEvent::new(EventResource::ResourceSlice, ActionType::UPDATE);
                for _ in 0..changed {
                    (self.queue).on_informer_event(update, EventObject::None, EventObject::None);
                }
            }
            return;
        }
        self.cache.dra().apply(resource, old.as_ref(), new.as_ref());
        self.cache
            .volumes()
            .apply(resource, old.as_ref(), new.as_ref());
        let obj = |o: Option<ApiObject>| o.map_or(EventObject::None, EventObject::Object);
        self.queue
            .on_informer_event(ClusterEvent::new(resource, action), obj(old), obj(new));
    }

    pub fn on_pod_delete(&self, pod: &Pod) {
        if self.group_member(pod) {
            self.cache.pod_groups().delete_pod(pod);
        }
        if pod.is_assigned() {
            if self.deferred_resize(pod) {
                self.queue.delete(&pod.key);
            }
            self.cache.remove_pod(&pod.key);
            self.queue.assigned_pod_event(
                ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE),
                Some(Arc::new(pod.clone())),
                None,
            );
        } else {
            self.queue.delete(&pod.key);
            if pod.nominated_node_name.is_some() {
                // kube's deletePodFromSchedulingQueue: a deleted nominated pod may unblock
                // the pods of lower or equal priority that counted it.
                self.queue.nominated_pod_left(Arc::new(pod.clone()));
            }
        }
    }
}

/// The event resource of a group: PodGroup or CompositePodGroup.
fn group_resource(group: &crate::api::PodGroup) -> EventResource {
    if group.composite {
        EventResource::CompositePodGroup
    } else {
        EventResource::PodGroup
    }
}
