//! The extension points of the scheduling framework (KEP-624), as traits.
//!
//! A plugin is one value that implements [`Plugin`] plus the extension-point traits it takes
//! part in. It advertises them through the `into_*` methods (a `self: Arc<Self>` receiver keeps
//! the trait object-safe), so the runtime can hold one typed list per extension point, in the
//! configured order, without downcasts on the hot path.

use super::cycle_state::CycleState;
use super::events::{ClusterEvent, EventObject, QueueingHint};
use super::node_info::{NodeInfo, NodeRow, NodeTraits};
use super::pod_group::{
    GeneratePlacementsResult, Placement, PlacementCycleState, PlacementProgress, PlacementScore,
    PodGroupAssignments, PodGroupCycleState, PodGroupInfo, PodGroupPostFilterResult,
};
use super::snapshot::Snapshot;
use super::status::Status;
use super::types::{Nominating, QueuedPodInfo};
use super::waiting_pods::WaitingPods;
use crate::api::{LabelSelector, Labels, Pod, PodKey, Sym};
use std::sync::Arc;
use std::time::Duration;

/// kube's `MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
/// kube's `MinNodeScore`.
pub const MIN_NODE_SCORE: i64 = 0;

/// The root trait. Implement the `into_*` methods for the extension points the plugin serves.
pub trait Plugin: Send + Sync + 'static {
    fn name(&self) -> &'static str;

    fn into_pre_enqueue(self: Arc<Self>) -> Option<Arc<dyn PreEnqueuePlugin>> {
        None
    }
    fn into_queue_sort(self: Arc<Self>) -> Option<Arc<dyn QueueSortPlugin>> {
        None
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        None
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        None
    }
    fn into_post_filter(self: Arc<Self>) -> Option<Arc<dyn PostFilterPlugin>> {
        None
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        None
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        None
    }
    fn into_reserve(self: Arc<Self>) -> Option<Arc<dyn ReservePlugin>> {
        None
    }
    fn into_permit(self: Arc<Self>) -> Option<Arc<dyn PermitPlugin>> {
        None
    }
    fn into_pre_bind(self: Arc<Self>) -> Option<Arc<dyn PreBindPlugin>> {
        None
    }
    fn into_bind(self: Arc<Self>) -> Option<Arc<dyn BindPlugin>> {
        None
    }
    fn into_post_bind(self: Arc<Self>) -> Option<Arc<dyn PostBindPlugin>> {
        None
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        None
    }
    fn into_placement_generate(self: Arc<Self>) -> Option<Arc<dyn PlacementGeneratePlugin>> {
        None
    }
    fn into_placement_feasible(self: Arc<Self>) -> Option<Arc<dyn PlacementFeasiblePlugin>> {
        None
    }
    fn into_placement_score(self: Arc<Self>) -> Option<Arc<dyn PlacementScorePlugin>> {
        None
    }
    fn into_pod_group_post_filter(self: Arc<Self>) -> Option<Arc<dyn PodGroupPostFilterPlugin>> {
        None
    }

    /// The plugin as `Any`, for the oracle hooks that reach one plugin's own state
    /// ([`Framework::reserve_plugin`](super::Framework::reserve_plugin)); `None` (the
    /// default): not reachable so.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Whether the plugin signs pods (kube: implements `SignPlugin`). A profile running a
    /// plugin that does not at PreFilter, Filter, PreScore or Score signs no pod, and so never
    /// batches (`framework/signature.rs`).
    fn signs_pods(&self) -> bool {
        false
    }

    /// Whether this plugin's PreFilter, Filter, PreScore and Score results for `pod` on a node
    /// depend only on the profile's configuration, the pod's
    /// [`NodeLocalInputs`](crate::framework::node_memo::NodeLocalInputs), that node's
    /// `NodeInfo`, and the snapshot's node count and image states: then the node memo
    /// (`framework/node_memo.rs`) may answer for it on nodes that did not change. Say true
    /// only when that holds; the default, false, keeps every cycle that runs the plugin off
    /// the memo.
    fn node_local(&self, _pod: &Pod) -> bool {
        false
    }

    /// kube's `SignPod`: writes what of `pod` this plugin's PreFilter, Filter, PreScore and
    /// Score depend on into `sig`, or refuses the pod (`Err(reason)`: kube's Unschedulable
    /// status, the pod has no signature). Called only when [`Plugin::signs_pods`].
    fn sign_pod(
        &self,
        _pod: &Pod,
        _sig: &mut crate::framework::signature::SignFragments,
    ) -> Result<(), &'static str> {
        Err("the plugin does not sign pods")
    }
}

/// Runs before a pod may enter activeQ. Non-success keeps the pod out (gated).
pub trait PreEnqueuePlugin: Plugin {
    fn pre_enqueue(&self, pod: &Pod) -> Status;
}

/// An integer key in a QueueSort plugin's order ([`QueueSortPlugin::sort_key`]).
pub type SortKeyFn = fn(&QueuedPodInfo) -> u128;

/// Orders activeQ.
pub trait QueueSortPlugin: Plugin {
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool;
    /// An integer key in `less`'s order, if the plugin has one: for every pair,
    /// `less(a, b) == (key(a) < key(b))`. activeQ's heaps then compare keys held inline
    /// instead of calling `less` on the pods (`queue/active.rs`). `None`: they call `less`.
    fn sort_key(&self) -> Option<SortKeyFn> {
        None
    }
}

/// What PreFilter may return besides a status: the only nodes worth filtering.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreFilterResult {
    /// `None` = all nodes.
    pub node_names: Option<Vec<Sym>>,
}

/// Adds/removes a pod to/from the PreFilter state (preemption, nominated pods).
pub trait PreFilterExtensions: Send + Sync {
    fn add_pod(&self, state: &mut CycleState, pod: &Pod, to_add: &Pod, node: &NodeInfo) -> Status;
    fn remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status;
}

pub trait PreFilterPlugin: Plugin {
    /// Skip means the coupled Filter of this plugin is not run for this pod.
    /// `snapshot` is the cluster this cycle sees (all nodes, the nodes with affinity pods…).
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Option<PreFilterResult>, Status);
    fn pre_filter_extensions(&self) -> Option<&dyn PreFilterExtensions> {
        None
    }
}

/// Per-node feasibility. Runs concurrently on many nodes: `&CycleState` is shared.
pub trait FilterPlugin: Plugin {
    fn filter(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status;
    /// Filter over a block of consecutive nodes: for every offset `o` with `pass[o]` set,
    /// the outcome of [`FilterPlugin::filter`] on `nodes[o]`; on a non-success, clear
    /// `pass[o]` and hand the status to `reject(o, status)`. Nodes already cleared are not
    /// looked at. `rows[o]` is `nodes[o]`'s [`NodeRow`]. It must agree with `filter` node by
    /// node; the default calls it. A plugin overrides it to judge the block in a tight loop
    /// from the rows and build statuses only for rejections (NodeResourcesFit).
    fn filter_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[Arc<NodeInfo>],
        rows: &[NodeRow],
        pass: &mut [bool],
        reject: &mut dyn FnMut(usize, Status),
    ) {
        let _ = rows;
        for (o, (n, p)) in nodes.iter().zip(pass.iter_mut()).enumerate() {
            if !*p {
                continue;
            }
            let s = self.filter(state, pod, n);
            if !s.is_success() {
                *p = false;
                reject(o, s);
            }
        }
    }
    /// True when Filter returns Success on every node for `pod`, whatever the node holds (say
    /// NodeName for a pod without `spec.nodeName`). The cycle then leaves the plugin out of
    /// its per-node loop: the outcome is the same, and nothing observable changes (Filter
    /// plugins' durations are recorded for the phase, not per node). Default: false.
    fn passes_every_node(&self, _pod: &Pod) -> bool {
        false
    }
    /// The nodes this plugin can reject for `pod`: Filter returns Success on every node that
    /// has none of these traits, whatever else the node holds (NodeUnschedulable passes every
    /// schedulable node; TaintToleration every node without taints). The per-node loop then
    /// calls the plugin only on nodes with one of them. Default: [`NodeTraits::ANY`] (every
    /// node).
    fn needs_nodes_with(&self, _pod: &Pod) -> NodeTraits {
        NodeTraits::ANY
    }
    /// True when [`FilterPlugin::filter_nodes`] reads only the rows for `pod` on the nodes it
    /// passes (it may read a NodeInfo to explain a rejection). When every plugin of a cycle
    /// says so, the block runner does not fetch the NodeInfos ahead. A hint for speed only:
    /// the outcome is the same either way. Default: false.
    fn filters_from_rows(&self, _pod: &Pod) -> bool {
        false
    }
}

/// The Filter plugins that run in a cycle, each with the nodes it needs to see
/// ([`FilterPlugin::needs_nodes_with`]).
pub type ActiveFilters<'a> = Vec<(&'a dyn FilterPlugin, NodeTraits)>;

/// Why nodes failed, handed to PostFilter.
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    /// `(node, status)` for every node that was rejected.
    pub node_statuses: Vec<(Sym, Status)>,
    pub unschedulable_plugins: Vec<&'static str>,
    pub pending_plugins: Vec<&'static str>,
    pub pre_filter_msg: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostFilterResult {
    pub nominated_node_name: Option<Sym>,
}

/// kube's `framework.Handle` as PostFilter sees it: what a plugin may read and run of the
/// scheduler in one cycle, without the runtime's concrete type. The cycle's snapshot (kube's
/// `SnapshotSharedLister`), the nominator (the `PodNominator` kube's handle embeds), Permit's
/// waiting pods (`GetWaitingPod`, `RejectWaitingPod` through [`WaitingPod::reject`]), and the
/// plugin runner for dry runs (kube's `PluginsRunner`: PreFilter's AddPod/RemovePod extensions,
/// Filter with the nominated pods). The runtime implements it per cycle
/// (`framework::runtime::CycleHandle`). kube's handle also hands out the `ClientSet` and the
/// `Parallelizer`; a plugin here gets those once, at construction, in its
/// [`PluginContext`](super::registry::PluginContext) (`client`, `pool`).
///
/// `Sync`: a plugin may fan its dry runs out over a thread pool with one handle.
///
/// [`WaitingPod::reject`]: super::waiting_pods::WaitingPod::reject
pub trait Handle: Sync {
    /// The nodes and pods this cycle sees.
    fn snapshot(&self) -> &Snapshot;
    /// Which pods are nominated to which node.
    fn nominator(&self) -> &dyn PodNominator;
    /// The pods waiting at Permit.
    fn waiting_pods(&self) -> &WaitingPods;
    /// The Filter plugins that run for `pod` in this cycle (those whose PreFilter did not
    /// Skip), for [`Handle::run_filter_plugins_with_nominated_pods`].
    fn active_filter_plugins(&self, state: &CycleState, pod: &Pod) -> ActiveFilters<'_>;
    /// kube's `RunFilterPluginsWithNominatedPods` with `filters` on `node`, `nominated` being
    /// the pods of at least `pod`'s priority nominated there.
    fn run_filter_plugins_with_nominated_pods(
        &self,
        filters: &[(&dyn FilterPlugin, NodeTraits)],
        state: &CycleState,
        pod: &Pod,
        node: &NodeInfo,
        nominated: &[Arc<Pod>],
    ) -> Status;
    /// kube's `RunPreFilterExtensionAddPod`: `to_add` is now on `node`.
    fn run_pre_filter_extension_add_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_add: &Pod,
        node: &NodeInfo,
    ) -> Status;
    /// kube's `RunPreFilterExtensionRemovePod`: `to_remove` left `node`.
    fn run_pre_filter_extension_remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status;
}

/// The nominator as the framework sees it (kube's `PodNominator` in `framework/interface.go`):
/// which pods are nominated to which node. The scheduling queue owns the implementation
/// (`crate::queue::nominator::Nominator`).
pub trait PodNominator: Send + Sync {
    /// Nominates `pod` (replacing its old nomination; an assigned pod or an empty node
    /// nominates nothing).
    fn add_nominated_pod(&self, pod: &Arc<Pod>, how: Nominating);
    fn delete_nominated_pod_if_exists(&self, key: &PodKey);
    /// A pod object changed: keeps an in-memory nomination when neither object carries one.
    fn update_nominated_pod(&self, old: &Pod, new: &Arc<Pod>);
    fn nominated_pods_for_node(&self, node: Sym) -> Vec<Arc<Pod>>;
    /// Per node, the pods nominated there with priority at least `pod`'s, other than `pod`
    /// (kube's `addGENominatedPods` input).
    fn nominated_at_least(&self, pod: &Pod) -> ahash::AHashMap<Sym, Vec<Arc<Pod>>>;
}

pub trait PostFilterPlugin: Plugin {
    fn post_filter(
        &self,
        handle: &dyn Handle,
        state: &mut CycleState,
        pod: &Pod,
        diagnosis: &Diagnosis,
    ) -> (Option<PostFilterResult>, Status);
}

/// kube's `PlacementGeneratePlugin`: candidate placements for a group within the parent
/// placement (every node of the snapshot, for a group without a parent). At most one per
/// profile.
pub trait PlacementGeneratePlugin: Plugin {
    fn generate_placements(
        &self,
        state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
        parent: &Placement,
    ) -> (GeneratePlacementsResult, Status);
}

/// kube's `PlacementFeasiblePlugin`: called before the first member and after each member of
/// a group is evaluated in a placement. Success: the group can be scheduled with what is
/// placed so far (and must stay Success for the rest); Wait: not yet, more members may make
/// it; Unschedulable: give the placement up. kube uses the GangScheduling plugin as the only
/// one (when GenericWorkload is on).
pub trait PlacementFeasiblePlugin: Plugin {
    fn placement_feasible(
        &self,
        group_state: &PodGroupCycleState,
        state: &mut PlacementCycleState,
        pod_group: &PodGroupInfo,
        progress: PlacementProgress,
    ) -> Status;
}

/// kube's `PlacementScorePlugin` with its `PlacementScoreExtensions`: scores a feasible
/// placement's assignments (higher is better); `normalize_placement_score` rescales one
/// plugin's scores over all placements into `[MIN_NODE_SCORE, MAX_NODE_SCORE]`.
pub trait PlacementScorePlugin: Plugin {
    fn score_placement(
        &self,
        group_state: &PodGroupCycleState,
        state: &PlacementCycleState,
        pod_group: &PodGroupInfo,
        assignments: &PodGroupAssignments,
    ) -> (i64, Status);
    /// Whether `normalize_placement_score` does anything (kube's extensions != nil).
    fn has_normalize(&self) -> bool {
        false
    }
    fn normalize_placement_score(
        &self,
        _state: &PodGroupCycleState,
        _pod_group: &PodGroupInfo,
        _scores: &mut [PlacementScore],
    ) -> Status {
        Status::success()
    }
}

/// What a PodGroupPostFilter plugin sees of the scheduler (kube's `Handle` with its
/// `MutableSnapshotSharedLister`, and the group's `PodGroupSchedulingFunc`): the cycle's
/// snapshot, which only this extension point may change (inside a mutation session that
/// `end_mutations` undoes), and the rerun of the group's algorithm on it.
pub trait PodGroupHandle: Handle {
    /// kube's `StartMutations`: changes from now on are undone by `end_mutations`.
    fn start_mutations(&mut self);
    /// kube's `EndMutations`: the snapshot as it was at `start_mutations`.
    fn end_mutations(&mut self);
    /// kube's mutable lister `AddPod`: `pod` is now on `node` in the snapshot.
    fn add_pod_to_snapshot(&mut self, pod: &Arc<Pod>, node: Sym) -> Result<(), String>;
    /// kube's mutable lister `RemovePod`: `pod` left `node` in the snapshot.
    fn remove_pod_from_snapshot(&mut self, pod: &Pod, node: Sym) -> Result<(), String>;
    /// kube's `PodGroupSchedulingFunc`: reruns the group's scheduling algorithm on the
    /// snapshot as it stands; the assignments and the group's status (nothing is kept).
    fn schedule_pod_group(&mut self) -> (PodGroupAssignments, Status);
}

/// kube's `PodGroupPostFilterPlugin`: called when a group's cycle ends Unschedulable.
/// Success (the group can be made schedulable: later plugins are skipped), Unschedulable,
/// UnschedulableAndUnresolvable (no other plugin can help), or an error.
pub trait PodGroupPostFilterPlugin: Plugin {
    fn pod_group_post_filter(
        &self,
        handle: &mut dyn PodGroupHandle,
        state: &mut PodGroupCycleState,
        pod_group: &PodGroupInfo,
    ) -> (Option<PodGroupPostFilterResult>, Status);
}

pub trait PreScorePlugin: Plugin {
    /// Skip means the coupled Score of this plugin is not run for this pod.
    /// `nodes` are the feasible nodes; `snapshot` is the whole cluster of this cycle.
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status;
    /// Whether this pod's PreScore may depend on which nodes are feasible, beyond there
    /// being at least one. When no plugin's does, the window path (`scheduler/window.rs`)
    /// hands PreScore the first feasible node alone instead of listing every one. The
    /// default: it may.
    fn pre_score_reads_nodes(&self, _pod: &Pod, _snapshot: &Snapshot) -> bool {
        true
    }
}

pub trait ScorePlugin: Plugin {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status>;
    /// Scores a block of nodes into `scores` (one per node, same length): kube's Score for
    /// each. `rows[o]` is `nodes[o]`'s [`NodeRow`]. The scheduler calls this rather than
    /// [`ScorePlugin::score`] so that a plugin can read its PreScore state once per block
    /// instead of once per node, and score from the rows; the default calls `score` for each
    /// node (statically dispatched) and stops at the first error.
    fn score_nodes(
        &self,
        state: &CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        rows: &[NodeRow],
        scores: &mut [i64],
    ) -> Result<(), Status> {
        let _ = rows;
        for (s, n) in scores.iter_mut().zip(nodes) {
            *s = self.score(state, pod, n)?;
        }
        Ok(())
    }
    /// True when [`ScorePlugin::score_nodes`] reads only the rows in this cycle (it may read
    /// the NodeInfo of an uncommon node, a tainted one say). When every active Score plugin
    /// says so, the scheduler does not fetch the NodeInfos ahead. A hint for speed only.
    /// Default: false.
    fn scores_from_rows(&self, _state: &CycleState) -> bool {
        false
    }
    /// True when, in this cycle, every node's score is 0 after [`ScorePlugin::normalize_score`]
    /// too (DynamicResources for a pod without a `firstAvailable` claim). The cycle then
    /// leaves the plugin out of Score: kube runs it, but a column of zeros changes no total.
    /// Default: false.
    fn scores_nothing(&self, _state: &CycleState) -> bool {
        false
    }
    /// Whether [`ScorePlugin::normalize_score`] does anything (kube's ScoreExtensions != nil).
    fn has_normalize(&self) -> bool {
        false
    }
    /// `Some(reverse)` when [`ScorePlugin::normalize_score`] is exactly kube's
    /// `DefaultNormalizeScore(MaxNodeScore, reverse)` (scale by the maximum over all feasible
    /// nodes, taken from 0; with `reverse`, subtract from `MaxNodeScore`). The scheduler then
    /// normalizes block by block from the cluster-wide maximum, on the pool, instead of
    /// handing the plugin the whole column. `None` (the default): `normalize_score` is called.
    fn default_normalize(&self) -> Option<bool> {
        None
    }
    /// Rescales the raw scores of all feasible nodes into `[0, MAX_NODE_SCORE]`.
    fn normalize_score(&self, _state: &CycleState, _pod: &Pod, _scores: &mut [i64]) -> Status {
        Status::success()
    }
}

pub trait ReservePlugin: Plugin {
    fn reserve(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status;
    fn unreserve(&self, state: &mut CycleState, pod: &Pod, node: Sym);
}

pub trait PermitPlugin: Plugin {
    /// Success, Wait (with a timeout) or a rejection.
    fn permit(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> (Status, Duration);
}

pub trait PreBindPlugin: Plugin {
    /// kube's `PreBindPreFlight`: whether PreBind has work to do for this pod on `node`.
    /// Success: it has (the scheduler then writes the pod's `status.nominatedNodeName`
    /// before PreBind, NominatedNodeNameForExpectation); Skip: nothing to do, and PreBind is
    /// not called; Error fails the binding cycle. Runs at the binding cycle's start, before
    /// WaitOnPermit.
    fn pre_bind_pre_flight(&self, state: &CycleState, pod: &Pod, node: Sym) -> Status;
    fn pre_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status;
}

pub trait BindPlugin: Plugin {
    /// Skip passes the pod to the next bind plugin.
    fn bind(&self, state: &mut CycleState, pod: &Pod, node: Sym) -> Status;
}

pub trait PostBindPlugin: Plugin {
    fn post_bind(&self, state: &mut CycleState, pod: &Pod, node: Sym);
}

/// The cluster events that may make a pod rejected by this plugin schedulable.
pub trait EnqueueExtensions: Send + Sync {
    fn events_to_register(&self) -> Vec<ClusterEvent>;

    /// The QueueingHint for one registered event and one pod this plugin rejected. The default
    /// (kube: a registration without a hint function) is Queue; an `Err` counts as Queue.
    fn queueing_hint(
        &self,
        _event: &ClusterEvent,
        _pod: &Pod,
        _old: &EventObject,
        _new: &EventObject,
    ) -> Result<QueueingHint, String> {
        Ok(QueueingHint::Queue)
    }
}

/// A [`ClusterClient`] with nothing behind it: every bind succeeds and records nothing, every
/// pod still exists unassigned, and the rest are the trait's defaults (tests, benchmarks,
/// frameworks built only to be inspected).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopClient;

impl ClusterClient for NoopClient {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
}

/// What the engine needs from the API server: the harness (or a real client) implements it.
pub trait ClusterClient: Send + Sync {
    /// POST pods/binding. Errors are messages (a 409 Conflict for a gated pod, for example).
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String>;
    /// Records a `PodScheduled=False` condition with `reason` and `message` after a failed
    /// attempt (kube's status patch). Default: ignored.
    fn set_unschedulable(&self, _pod: &Pod, _reason: &str, _message: &str) {}
    /// Sets the PodGroup's `PodGroupInitiallyScheduled` condition (`scheduled`: status True)
    /// with `reason` and `message`, `observedGeneration` the group's generation (kube's
    /// `updatePodGroupCondition`; the scheduler never sends False over a True one).
    /// Default: ignored.
    fn set_pod_group_scheduled(
        &self,
        _group: &crate::api::PodGroup,
        _scheduled: bool,
        _reason: &str,
        _message: &str,
    ) {
    }
    /// Whether the pod still exists and is still unassigned (kube asks its informer's lister
    /// before putting a failed pod back in the queue).
    fn pod_exists_unassigned(&self, pod: &Pod) -> bool;
    /// The labels of a namespace (kube's namespace lister, for `namespaceSelector` in pod
    /// affinity terms). `None` when the namespace does not exist. Default: none exist.
    fn namespace_labels(&self, _namespace: Sym) -> Option<Arc<Labels>> {
        None
    }
    /// kube's `helper.DefaultSelector`: the selectors of the Services, ReplicationControllers,
    /// ReplicaSets and StatefulSets that own or select the pod, merged into one (PodTopologySpread
    /// uses it for system default constraints). `None` when nothing selects the pod (the default
    /// constraints then do not apply). Default: `None`.
    fn default_spread_selector(&self, _pod: &Pod) -> Option<LabelSelector> {
        None
    }
    /// DELETE a pod (preemption's victims). Default: not supported.
    fn delete_pod(&self, pod: &Pod) -> Result<(), String> {
        Err(format!("this client cannot delete pod {}", pod.key))
    }
    /// Patches `status.nominatedNodeName` (`None` clears it). Default: ignored.
    fn set_nominated_node_name(&self, _pod: &Pod, _node: Option<Sym>) {}
    /// Every PodDisruptionBudget (kube's PDB lister), read once per preemption attempt.
    /// Default: none.
    fn pod_disruption_budgets(&self) -> Vec<Arc<crate::api::PodDisruptionBudget>> {
        Vec::new()
    }
    /// VolumeBinding's PreBind (kube's `bindAPIUpdate` with `GetBindVolumeToClaim`): the
    /// volume's update that sets `spec.claimRef` to `claim` (with its UID), and the annotation
    /// `pv.kubernetes.io/bound-by-controller: "yes"` unless the volume was pre-bound to the
    /// claim. `pv` is the scheduler's copy: its `resourceVersion` must still be the stored
    /// one. Errors are messages. Default: not supported.
    fn bind_volume_to_claim(
        &self,
        pv: &crate::api::volume::PersistentVolume,
        claim: &crate::api::volume::PersistentVolumeClaim,
    ) -> Result<(), String> {
        let _ = claim;
        Err(format!(
            "this client cannot update persistentvolume {:?}",
            pv.name.as_arc()
        ))
    }
    /// VolumeBinding's PreBind for a claim to provision: the claim's update that sets the
    /// annotation `volume.kubernetes.io/selected-node: <node>`. Default: not supported.
    fn set_claim_selected_node(
        &self,
        claim: &crate::api::volume::PersistentVolumeClaim,
        node: Sym,
    ) -> Result<(), String> {
        let _ = node;
        Err(format!(
            "this client cannot update persistentvolumeclaim {:?}",
            claim.name
        ))
    }
    /// DynamicResources' PreBind (kube's `bindClaim`): the claim's `/status` update that
    /// sets `allocation` (when given; the claim must have none yet, and gets kube's
    /// `resource.kubernetes.io/delete-protection` finalizer) and appends `consumer` (the pod,
    /// or its PodGroup) to `reservedFor`. Errors are messages. Default: not supported.
    fn reserve_resource_claim(
        &self,
        claim: &crate::api::dra::ResourceClaim,
        allocation: Option<&crate::api::dra::Allocation>,
        consumer: &crate::api::dra::ClaimConsumer,
    ) -> Result<(), String> {
        let _ = (allocation, consumer);
        Err(format!(
            "this client cannot update ResourceClaim {}/{}",
            claim.namespace, claim.name
        ))
    }
    /// DynamicResources' Unreserve: removes `pod` from the claim's `reservedFor` (a
    /// strategic merge patch in kube; a failure is logged there, so it returns nothing).
    /// Default: ignored.
    fn unreserve_resource_claim(&self, _claim: &crate::api::dra::ResourceClaim, _pod: &Pod) {}
    /// DynamicResources' PreBind for extended resources backed by DRA: creates `claim`
    /// (kube's `Create`, with `generateName`) and returns it as stored. Default: not
    /// supported.
    fn create_resource_claim(
        &self,
        claim: k8s_openapi::api::resource::v1::ResourceClaim,
    ) -> Result<Arc<crate::api::dra::ResourceClaim>, String> {
        let _ = claim;
        Err("this client cannot create ResourceClaims".into())
    }
    /// DynamicResources' PreBind: sets the pod's `status.extendedResourceClaimStatus` (a
    /// status patch in kube). Default: not supported.
    fn set_extended_resource_claim_status(
        &self,
        pod: &Pod,
        status: k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus,
    ) -> Result<(), String> {
        let _ = status;
        Err(format!(
            "this client cannot update pod {}/{}",
            pod.namespace, pod.name
        ))
    }
    /// DynamicResources' Unreserve of a claim it created for extended resources (kube's
    /// `deleteClaim`): the scheduler's finalizer removed, then the claim deleted. Default:
    /// not supported.
    fn delete_resource_claim(&self, claim: &crate::api::dra::ResourceClaim) -> Result<(), String> {
        Err(format!(
            "this client cannot delete ResourceClaim {}/{}",
            claim.namespace, claim.name
        ))
    }
    /// DynamicResources' PodGroupPostFilter: takes the entry with `uid` (a PodGroup's) out
    /// of the claim's `reservedFor` (kube's strategic merge patch). Default: not supported.
    fn unreserve_resource_claim_for(
        &self,
        claim: &crate::api::dra::ResourceClaim,
        uid: &str,
    ) -> Result<(), String> {
        let _ = uid;
        Err(format!(
            "this client cannot update ResourceClaim {}/{}",
            claim.namespace, claim.name
        ))
    }
    /// DynamicResources' PostFilter: clears the claim's `allocation`, `reservedFor` and
    /// `devices` (kube's `UpdateStatus`). Default: not supported.
    fn deallocate_resource_claim(
        &self,
        claim: &crate::api::dra::ResourceClaim,
    ) -> Result<(), String> {
        Err(format!(
            "this client cannot update ResourceClaim {}/{}",
            claim.namespace, claim.name
        ))
    }
}
