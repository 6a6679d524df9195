//! Cluster events: `(resource, action)` pairs, kube's matching rule, and their labels.

use std::borrow::Cow;
use std::fmt;

/// Event resources (kube's `EventResource`). Namespace and Service are tidegate's own (kube
/// reads them through listers only); the volume, DRA and pod-group kinds are kube's, raised by
/// the harness's store through [`crate::Scheduler::on_object_event`] (provenance:
/// staging/src/k8s.io/kube-scheduler/framework/types.go, the `EventResource` constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventResource {
    /// Any pod: matches both assigned and unscheduled pods.
    Pod,
    AssignedPod,
    UnscheduledPod,
    Node,
    Namespace,
    Service,
    PersistentVolume,
    PersistentVolumeClaim,
    CSINode,
    CSIDriver,
    VolumeAttachment,
    CSIStorageCapacity,
    StorageClass,
    ResourceClaim,
    ResourceSlice,
    DeviceClass,
    /// tidegate's own, like Namespace: kube's scheduler sees DeviceTaintRules only through
    /// the ResourceSlice events its slice tracker sends for the slices a rule re-taints
    /// ([`crate::Scheduler::on_object_event`] does the same).
    DeviceTaintRule,
    Workload,
    PodGroup,
    CompositePodGroup,
    /// The wildcard resource `*`.
    Wildcard,
}

impl EventResource {
    pub fn as_str(self) -> &'static str {
        match self {
            EventResource::Pod => "Pod",
            EventResource::AssignedPod => "AssignedPod",
            EventResource::UnscheduledPod => "UnscheduledPod",
            EventResource::Node => "Node",
            EventResource::Namespace => "Namespace",
            EventResource::Service => "Service",
            EventResource::PersistentVolume => "PersistentVolume",
            EventResource::PersistentVolumeClaim => "PersistentVolumeClaim",
            EventResource::CSINode => "storage.k8s.io/CSINode",
            EventResource::CSIDriver => "storage.k8s.io/CSIDriver",
            EventResource::VolumeAttachment => "storage.k8s.io/VolumeAttachment",
            EventResource::CSIStorageCapacity => "storage.k8s.io/CSIStorageCapacity",
            EventResource::StorageClass => "storage.k8s.io/StorageClass",
            EventResource::ResourceClaim => "resource.k8s.io/ResourceClaim",
            EventResource::ResourceSlice => "resource.k8s.io/ResourceSlice",
            EventResource::DeviceClass => "resource.k8s.io/DeviceClass",
            EventResource::DeviceTaintRule => "resource.k8s.io/DeviceTaintRule",
            EventResource::Workload => "scheduling.k8s.io/Workload",
            EventResource::PodGroup => "scheduling.k8s.io/PodGroup",
            EventResource::CompositePodGroup => "scheduling.k8s.io/CompositePodGroup",
            EventResource::Wildcard => "*",
        }
    }
}

/// ActionType bitmask, in kube's bit order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActionType(pub u32);

impl ActionType {
    pub const ADD: ActionType = ActionType(1 << 0);
    pub const DELETE: ActionType = ActionType(1 << 1);
    pub const UPDATE_NODE_ALLOCATABLE: ActionType = ActionType(1 << 2);
    pub const UPDATE_NODE_LABEL: ActionType = ActionType(1 << 3);
    pub const UPDATE_NODE_TAINT: ActionType = ActionType(1 << 4);
    pub const UPDATE_NODE_CONDITION: ActionType = ActionType(1 << 5);
    pub const UPDATE_NODE_ANNOTATION: ActionType = ActionType(1 << 6);
    /// `status.declaredFeatures` changed (NodeDeclaredFeatures).
    pub const UPDATE_NODE_DECLARED_FEATURE: ActionType = ActionType(1 << 7);
    /// `spec.podPreemptionPolicy` changed.
    pub const UPDATE_NODE_PREEMPTION_POLICY: ActionType = ActionType(1 << 8);
    pub const UPDATE_POD_LABEL: ActionType = ActionType(1 << 9);
    pub const UPDATE_POD_SCALE_DOWN: ActionType = ActionType(1 << 10);
    pub const UPDATE_POD_SCALE_UP: ActionType = ActionType(1 << 11);
    pub const UPDATE_POD_TOLERATIONS: ActionType = ActionType(1 << 12);
    pub const UPDATE_POD_SCHEDULING_GATES_ELIMINATED: ActionType = ActionType(1 << 13);
    pub const UPDATE_POD_GENERATED_RESOURCE_CLAIM: ActionType = ActionType(1 << 14);
    /// Every update bit.
    pub const UPDATE: ActionType = ActionType(((1 << 15) - 1) & !0b11);
    pub const ALL: ActionType = ActionType((1 << 15) - 1);

    pub const fn union(self, o: ActionType) -> ActionType {
        ActionType(self.0 | o.0)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ActionType::ADD => "Add",
            ActionType::DELETE => "Delete",
            ActionType::UPDATE_NODE_ALLOCATABLE => "UpdateNodeAllocatable",
            ActionType::UPDATE_NODE_LABEL => "UpdateNodeLabel",
            ActionType::UPDATE_NODE_TAINT => "UpdateNodeTaint",
            ActionType::UPDATE_NODE_CONDITION => "UpdateNodeCondition",
            ActionType::UPDATE_NODE_ANNOTATION => "UpdateNodeAnnotation",
            ActionType::UPDATE_NODE_DECLARED_FEATURE => "UpdateNodeDeclaredFeature",
            ActionType::UPDATE_NODE_PREEMPTION_POLICY => "UpdateNodePreemptionPolicy",
            ActionType::UPDATE_POD_LABEL => "UpdatePodLabel",
            ActionType::UPDATE_POD_SCALE_DOWN => "UpdatePodScaleDown",
            ActionType::UPDATE_POD_SCALE_UP => "UpdatePodScaleUp",
            ActionType::UPDATE_POD_TOLERATIONS => "UpdatePodToleration",
            ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED => {
                "UpdatePodSchedulingGatesEliminated"
            }
            ActionType::UPDATE_POD_GENERATED_RESOURCE_CLAIM => "UpdatePodGeneratedResourceClaim",
            ActionType::UPDATE => "Update",
            ActionType::ALL => "All",
            _ => "Mixed",
        }
    }
}

/// A cluster event. A custom label (e.g. `ScheduleAttemptFailure`) replaces the derived one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterEvent {
    pub resource: EventResource,
    pub action: ActionType,
    pub custom_label: Option<&'static str>,
}

impl ClusterEvent {
    pub const fn new(resource: EventResource, action: ActionType) -> ClusterEvent {
        ClusterEvent {
            resource,
            action,
            custom_label: None,
        }
    }

    pub const fn wildcard(label: &'static str) -> ClusterEvent {
        ClusterEvent {
            resource: EventResource::Wildcard,
            action: ActionType::ALL,
            custom_label: Some(label),
        }
    }

    pub fn is_wildcard(&self) -> bool {
        self.resource == EventResource::Wildcard && self.action == ActionType::ALL
    }

    /// kube's `ClusterEvent.Match`: does registration `self` match incoming event `ev`?
    pub fn matches(&self, ev: &ClusterEvent) -> bool {
        if self.is_wildcard() {
            return true;
        }
        if ev.is_wildcard() {
            return false;
        }
        let resource_ok = self.resource == ev.resource
            || (self.resource == EventResource::Pod
                && matches!(
                    ev.resource,
                    EventResource::AssignedPod | EventResource::UnscheduledPod
                ));
        resource_ok && (self.action.0 & ev.action.0) != 0 && ev.action.0 <= self.action.0
    }

    /// The label used in metrics: the custom label, else resource + action (`NodeAdd`).
    /// The events the engine raises have static labels, so labelling them allocates nothing.
    pub fn label(&self) -> Cow<'static, str> {
        use ActionType as A;
        use EventResource as R;
        if let Some(l) = self.custom_label {
            return Cow::Borrowed(l);
        }
        let known = match (self.resource, self.action) {
            (R::Node, A::ADD) => "NodeAdd",
            (R::Node, A::DELETE) => "NodeDelete",
            (R::Node, A::UPDATE_NODE_ALLOCATABLE) => "NodeUpdateNodeAllocatable",
            (R::Node, A::UPDATE_NODE_LABEL) => "NodeUpdateNodeLabel",
            (R::Node, A::UPDATE_NODE_TAINT) => "NodeUpdateNodeTaint",
            (R::AssignedPod, A::ADD) => "AssignedPodAdd",
            (R::AssignedPod, A::DELETE) => "AssignedPodDelete",
            (R::AssignedPod, A::UPDATE_POD_LABEL) => "AssignedPodUpdatePodLabel",
            (R::AssignedPod, A::UPDATE_POD_SCALE_DOWN) => "AssignedPodUpdatePodScaleDown",
            (R::AssignedPod, A::UPDATE_POD_SCALE_UP) => "AssignedPodUpdatePodScaleUp",
            (R::UnscheduledPod, A::ADD) => "UnscheduledPodAdd",
            (R::UnscheduledPod, A::UPDATE) => "UnscheduledPodUpdate",
            (R::UnscheduledPod, A::UPDATE_POD_LABEL) => "UnscheduledPodUpdatePodLabel",
            (R::UnscheduledPod, A::UPDATE_POD_SCALE_DOWN) => "UnscheduledPodUpdatePodScaleDown",
            (R::UnscheduledPod, A::UPDATE_POD_TOLERATIONS) => "UnscheduledPodUpdatePodToleration",
            (R::UnscheduledPod, A::UPDATE_POD_SCHEDULING_GATES_ELIMINATED) => {
                "UnscheduledPodUpdatePodSchedulingGatesEliminated"
            }
            _ => {
                return Cow::Owned(format!(
                    "{}{}",
                    self.resource.as_str(),
                    self.action.as_str()
                ));
            }
        };
        Cow::Borrowed(known)
    }
}

impl fmt::Display for ClusterEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// The objects an event carries (the old and the new version of what changed).
#[derive(Clone, Debug, Default)]
pub enum EventObject {
    #[default]
    None,
    Pod(std::sync::Arc<crate::api::Pod>),
    Node(std::sync::Arc<crate::api::Node>),
    /// An object of a kind the engine does not convert (a PersistentVolume, a ResourceClaim,
    /// a PodGroup, …) as its informer delivers it: a hint downcasts it to the type it expects
    /// (k8s-openapi's, for the kinds the harness stores).
    Object(ApiObject),
}

/// An API object of any type, shared (kube hands hints an `interface{}`).
#[derive(Clone)]
pub struct ApiObject(pub std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl ApiObject {
    /// A `T` decoded from JSON (tests).
    #[cfg(test)]
    pub(crate) fn from_json<T: serde::de::DeserializeOwned + Send + Sync + 'static>(
        v: serde_json::Value,
    ) -> ApiObject {
        ApiObject(std::sync::Arc::new(serde_json::from_value::<T>(v).unwrap()))
    }

    /// The object as `T`, if it is one.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Debug for ApiObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiObject(..)")
    }
}

impl EventObject {
    pub fn pod(&self) -> Option<&crate::api::Pod> {
        match self {
            EventObject::Pod(p) => Some(p),
            _ => None,
        }
    }
}

/// What a plugin's QueueingHint says about an event for a pod it rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueueingHint {
    /// The event may make the pod schedulable: requeue it.
    Queue,
    /// The event cannot help: leave the pod where it is.
    QueueSkip,
}

impl QueueingHint {
    /// Queue when `helps`, else QueueSkip (what most hint functions decide).
    pub fn queue_if(helps: bool) -> QueueingHint {
        if helps {
            QueueingHint::Queue
        } else {
            QueueingHint::QueueSkip
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            QueueingHint::Queue => "Queue",
            QueueingHint::QueueSkip => "QueueSkip",
        }
    }
}

/// Which events changed on an unassigned pod (kube's `PodSchedulingPropertiesChange`): one
/// event per extractor that fires, or a single generic `Update`.
pub(crate) fn pod_scheduling_properties_change(
    old: &crate::api::Pod,
    new: &crate::api::Pod,
) -> Vec<ClusterEvent> {
    let resource = if new.is_assigned() {
        EventResource::AssignedPod
    } else {
        EventResource::UnscheduledPod
    };
    let mut out = Vec::new();
    if old.labels != new.labels {
        out.push(ActionType::UPDATE_POD_LABEL);
    }
    // The requests the scheduler counts (status resources included, kube's
    // `UseStatusResources`): a pod never resized compares its spec's.
    let (o, n) = (old.requests(), new.requests());
    if scaled(o, n) {
        out.push(ActionType::UPDATE_POD_SCALE_DOWN);
    }
    if scaled(n, o) {
        out.push(ActionType::UPDATE_POD_SCALE_UP);
    }
    if !old.spec.scheduling_gates.is_empty() && new.spec.scheduling_gates.is_empty() {
        out.push(ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED);
    }
    if old.spec.tolerations.len() != new.spec.tolerations.len() {
        out.push(ActionType::UPDATE_POD_TOLERATIONS);
    }
    // kube's `extractPodGeneratedResourceClaimChange`.
    if old.resource_claim_statuses != new.resource_claim_statuses {
        out.push(ActionType::UPDATE_POD_GENERATED_RESOURCE_CLAIM);
    }
    if out.is_empty() {
        out.push(ActionType::UPDATE);
    }
    out.into_iter()
        .map(|a| ClusterEvent::new(resource, a))
        .collect()
}

/// Whether any resource of `from` shrinks in `to` (kube's `extractPodScaleDown`; with the
/// arguments swapped, `extractPodScaleUp`). A resource missing from `to` counts as 0.
fn scaled(from: &crate::api::Resource, to: &crate::api::Resource) -> bool {
    to.milli_cpu < from.milli_cpu
        || to.memory < from.memory
        || to.ephemeral_storage < from.ephemeral_storage
        || from.scalar.iter().any(|&(k, v)| to.scalar(k) < v)
}

/// Well-known special events.
pub(crate) mod labels {
    pub(crate) const SCHEDULE_ATTEMPT_FAILURE: &str = "ScheduleAttemptFailure";
    pub(crate) const BACKOFF_COMPLETE: &str = "BackoffComplete";
    pub(crate) const POP_FROM_BACKOFF_Q: &str = "PopFromBackoffQ";
    pub(crate) const FORCE_ACTIVATE: &str = "ForceActivate";
    pub(crate) const UNSCHEDULABLE_TIMEOUT: &str = "UnschedulableTimeout";
    pub(crate) const UNSCHEDULED_POD_ADD: &str = "UnscheduledPodAdd";
    pub(crate) const UNSCHEDULED_POD_UPDATE: &str = "UnscheduledPodUpdate";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_follows_kube_rules() {
        let reg = ClusterEvent::new(EventResource::Pod, ActionType::DELETE);
        let ev = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
        assert!(reg.matches(&ev));
        assert!(!ev.matches(&ClusterEvent::new(EventResource::Node, ActionType::DELETE)));
        // A generic Update does not match a registration for one sub-update.
        let gates = ClusterEvent::new(
            EventResource::Pod,
            ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        );
        let generic = ClusterEvent::new(EventResource::UnscheduledPod, ActionType::UPDATE);
        assert!(!gates.matches(&generic));
        // ...but a specific update matches a generic Update registration.
        let reg_update = ClusterEvent::new(EventResource::Pod, ActionType::UPDATE);
        let specific = ClusterEvent::new(
            EventResource::UnscheduledPod,
            ActionType::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        );
        assert!(reg_update.matches(&specific));
        // Wildcards: a wildcard registration matches everything, an incoming wildcard only a
        // wildcard registration.
        let timeout = ClusterEvent::wildcard(labels::UNSCHEDULABLE_TIMEOUT);
        assert!(!gates.matches(&timeout));
        assert!(timeout.matches(&gates));
        assert_eq!(
            ClusterEvent::new(EventResource::Node, ActionType::ADD).label(),
            "NodeAdd"
        );
        // Every static label spells resource + action, as the derived ones do.
        let resources = [
            EventResource::Node,
            EventResource::AssignedPod,
            EventResource::UnscheduledPod,
        ];
        for r in resources {
            for bit in 0..15 {
                let ev = ClusterEvent::new(r, ActionType(1 << bit));
                let derived = format!("{}{}", r.as_str(), ev.action.as_str());
                assert_eq!(ev.label(), derived);
            }
        }
    }

    // provenance: pkg/scheduler/framework/events_test.go (Test_podSchedulingPropertiesChange:
    // "pod's resource request is scaled down", "... scaled up", "both pod's resource request
    // and label are updated"): the requests compared are the ones the scheduler counts,
    // status resources included.
    #[test]
    fn scale_down_and_up_compare_the_counted_requests() {
        use crate::api::{Labels, PodResize, PodSpecInfo, Resource};
        use std::sync::Arc;
        let with = |cpu: i64, labelled: bool| {
            let mut p = crate::api::Pod::new("ns", "p", Arc::new(PodSpecInfo::default()));
            let r = Resource {
                milli_cpu: cpu,
                ..Default::default()
            };
            p.resize = Some(Arc::new(PodResize {
                pending: None,
                requests: r.clone(),
                non_zero_requests: r,
            }));
            if labelled {
                p.labels = Arc::new(Labels::from_pairs([("foo", "bar")]));
            }
            p
        };
        let (big, small, small_labelled) = (with(101, false), with(100, false), with(100, true));
        let ev = |a| ClusterEvent::new(EventResource::UnscheduledPod, a);
        assert_eq!(
            pod_scheduling_properties_change(&big, &small),
            vec![ev(ActionType::UPDATE_POD_SCALE_DOWN)]
        );
        assert_eq!(
            pod_scheduling_properties_change(&small, &big),
            vec![ev(ActionType::UPDATE_POD_SCALE_UP)]
        );
        assert_eq!(
            pod_scheduling_properties_change(&big, &small_labelled),
            vec![
                ev(ActionType::UPDATE_POD_LABEL),
                ev(ActionType::UPDATE_POD_SCALE_DOWN)
            ]
        );
        // An assigned pod's scale-up is an AssignedPod event, labelled as kube labels it.
        let mut up = big.clone();
        up.node_name = Some(crate::api::Sym::new("n"));
        let mut down = small.clone();
        down.node_name = up.node_name;
        let got = pod_scheduling_properties_change(&down, &up);
        assert_eq!(got[0].label(), "AssignedPodUpdatePodScaleUp");
        // A registration for scale-downs does not match a scale-up.
        let reg = ClusterEvent::new(EventResource::Pod, ActionType::UPDATE_POD_SCALE_DOWN);
        assert!(!reg.matches(&got[0]));
        assert!(ClusterEvent::new(EventResource::Pod, ActionType::UPDATE).matches(&got[0]));
    }
}
