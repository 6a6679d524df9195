//! The differential oracle's tidegate side: replay the scheduling attempts the real
//! kube-scheduler made (recorded by `kube-reference`'s `-record DIR`, one JSON line each, in
//! kube's order) on the same cluster state, and judge each of kube's decisions with
//! tidegate's Filter and Score ([`tidegate_engine::Evaluation`]).
//!
//! The protocol, per recorded line:
//!
//! - `nodes`: node objects, new or changed (after a createNodes op, or seen changed before an
//!   attempt): added, or updated as an informer would.
//! - a `decision` carries `kube`: kube's own Filter and Score over every node on the snapshot
//!   that attempt used (`kube-reference/perf/evaluate.go`); in clusters of up to 64 nodes
//!   also the pods each node held, which must be those tidegate's state holds (else the
//!   state, not a plugin, differs, and that is reported instead). tidegate evaluates the same pod
//!   on the same state and must agree exactly: the PreFilter verdict, the feasible count,
//!   each rejected node's plugin (recorded for clusters of up to 64 nodes), the set of
//!   top-scored nodes and their total, and every plugin's score on each node kube kept
//!   scores for (every feasible node when there are at most 64). This is the check in both
//!   directions: tidegate's choice is always one of its top nodes, so equal top sets make
//!   every tidegate decision top-scored for kube, and every kube decision for tidegate.
//! - a `decision` with a node: kube bound the pod there. tidegate must find that node
//!   feasible. When kube saw every feasible node (its feasible count equals tidegate's), the
//!   node must also be among tidegate's highest total scores: kube's choice is its top among
//!   the nodes it scored, so the comparison is exact only then (with the adaptive
//!   `percentageOfNodesToScore`, kube stops Filter after enough feasible nodes and scores
//!   those alone; such decisions are checked for feasibility only and counted apart, the
//!   `kube` evaluation above still compares the whole cluster). Then the pod is bound in
//!   tidegate to kube's node, so both sides go on from the same state.
//! - a failed `decision` with a fit error: tidegate must find no feasible node either, and
//!   the same set of plugins must reject the pod. Another error is not judged.
//! - a `decision`'s `kube.nominated`: the nominated pods kube's nominator gave its Filter,
//!   node by node. kube's nominator keeps references (name, UID) and resolves each through
//!   its queues; a pod in none of them at that instant (being scheduled or bound, or between
//!   queues) comes back bare: no containers, priority 0, no labels, and Filter counts it so.
//!   tidegate's nominator must hold the same pods on the same nodes (the evaluated pod itself
//!   aside, which Filter skips). It is set to kube's before tidegate evaluates: a bare
//!   reference is held as such a bare pod (reported as explained: which pods kube finds in its
//!   queues is a matter of its goroutines' timing), any other difference is reported as a
//!   disagreement of state, and the plugins are judged on kube's state either way.
//! - `nominated`: kube's PostFilter (DefaultPreemption) nominated a node for the pod that
//!   just failed (an empty node: it cleared the pod's nomination, as tidegate then does). tidegate's dry run on the same state must count that node among its
//!   candidates, and rank it as high as its own pick by kube's deterministic criteria; the
//!   nomination is then held in tidegate's nominator, as kube's holds it. The victims kube
//!   deletes from that node (`deleted`, or `assigned` with a deletion timestamp: a victim
//!   with a grace period stays terminating; a deletion counts for every open nomination there still
//!   missing a victim of its priority: preemptors nominated before the victim is gone share
//!   it; a victim none expected goes to the latest one still short of victims) (the
//!   `deleted` lines that follow, up to the preemptor's binding) must have the priorities
//!   tidegate's dry run chose there. Judged at the binding, or at the end of the record when
//!   kube deleted at least as many pods there; a workload that also deletes pods by other
//!   means on a node with an open nomination would need the victims' names instead.
//! - `nominationLost`: kube's nominator dropped a pod's nomination because an API write removed
//!   its `status.nominatedNodeName` (the preemption executor clearing a lower-priority pod's,
//!   or a workload's `updateAny` replacing the status with its template's: scheduler_perf's
//!   op writes the status too). Written before the first attempt whose evaluation found it
//!   gone; tidegate's nominator drops it as well.
//! - `deleted`: an assigned pod that left kube's snapshot before the attempt that follows (a
//!   victim, deletePods, churn, a failed binding): removed from tidegate's state.
//! - `assigned`: an assigned pod that entered kube's snapshot without a recorded decision (a
//!   pod created with its node set), or whose labels, deletion or resources changed: added
//!   or updated. `nodeDeleted`: a node that left the snapshot.
//! - `nodes` lines come from kube's snapshot too, so every change is applied exactly before
//!   the first attempt that saw it.
//! - a decision's `pod`: the pod object on its first attempt and whenever it changed; a
//!   later attempt of an unchanged pod uses the last one.
//! - a decision's `namespaceLabels` and `namespaceServices` (with the first pod of each
//!   namespace): the labels namespaceSelector terms read, and the Service selectors
//!   PodTopologySpread's system default constraints read.
//!
//! - pod groups (`oracle/groups.rs`): a `decision` with `podGroup` is a member attempt inside a pod
//!   group cycle, judged as any attempt but within its `placementNodes` when it has them
//!   (its binding and fit error; the whole-cluster evaluation is compared whole), and kept
//!   for the cycle's verdict unless its `simulation` flag says PodGroupPostFilter's
//!   simulation made it; `reverted`: kube undid a member's placement (out of the state, no
//!   deletion, no victim); `simulated`: the simulation took a pod out of kube's snapshot (out
//!   of the state until its `assigned` line; no deletion, no victim); `podGroup`: the cycle's
//!   end, judged by `groups::judge_group`, then each member kube sent to binding must fit on
//!   its node in tidegate beside the others (a cycle that ended `Error` gave no verdict: its
//!   quorum and plugins are reported as explained, not judged), the placement kube kept must be top-scored by
//!   tidegate's PlacementScore plugins when there was a choice, and a group preemption's
//!   victims must be tidegate's (`group_replay.rs`; the record is read whole first, to see
//!   which simulated pods were deleted after); a `nominated` line with `podGroup` (group
//!   preemption) is held, not judged against the single-pod dry run.
//! - `op` and `outcome`: the marks of kube's op executor and the workload's outcome, which
//!   the outcome check reads ([`outcome`]); nothing to replay.
//!
//! Records written before deletions were recorded (no `kube` field): a decision after kube's
//! first fit error may rest on victims the record lacks, so disagreements from then on are
//! reported apart ("after a fit error") and not counted as unexplained. Namespace label
//! changes and updates of bound pods are not recorded. A record of random scenarios
//! (`tidegate kube-scenarios`) counts one scenario per `scenario-N` namespace; any other
//! record counts as one.

mod dra_replay;
mod group_replay;
mod groups;
mod judge;
pub mod outcome;
mod volume_replay;

mod draw;
pub mod scenarios;
pub mod scenarios_dra;
pub mod scenarios_volumes;
use crate::error::HarnessError;
use k8s_openapi::api::core::v1 as core;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use tidegate_engine::ClusterClient;
use tidegate_engine::Registry;
use tidegate_engine::api::LabelSelector;
use tidegate_engine::api::Labels;
use tidegate_engine::api::{Pod, Sym, convert};
use tidegate_engine::{CycleState, Evaluation, Scheduler, SchedulerConfig};

/// An attempt's evaluations ([`Replay::evaluations`]): as kube's recorder evaluated it, as
/// the pod's cycle saw it, and a pod-group member's cycle state after its Reserve.
type Evaluations = (Evaluation, Evaluation, Option<CycleState>);

/// One line of kube's record (`kube-reference/perf/record.go`, `Decision`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Line {
    kind: String,
    seq: u64,
    namespace: String,
    name: String,
    attempts: u32,
    node: Option<String>,
    evaluated_nodes: usize,
    feasible_nodes: usize,
    num_all_nodes: usize,
    unschedulable_plugins: Vec<String>,
    error: Option<String>,
    pod: Option<core::Pod>,
    nodes: Vec<core::Node>,
    namespace_labels: Option<std::collections::BTreeMap<String, String>>,
    kube: Option<KubeEval>,
    priority: Option<i32>,
    namespace_services: Option<Vec<BTreeMap<String, String>>>,
    /// The pod's group: on a decision inside a pod group cycle, a group preemption's
    /// nomination, a `reverted` or `podGroup` line.
    pod_group: Option<String>,
    /// A `podGroup` line's result.
    group: Option<groups::GroupLine>,
    /// A decision inside a pod group cycle that tried a placement narrower than the
    /// cluster: the placement's nodes (the attempt filtered and scored those alone).
    placement_nodes: Vec<String>,
    /// A decision made in PodGroupPostFilter's simulation (group preemption), on a state
    /// without the potential victims (`simulated` lines before it).
    simulation: bool,
    /// A `dra` line's DRA objects and in-flight allocations.
    dra: Option<dra_replay::DraLine>,
    /// A `volumes` line's volume objects.
    volumes: Option<volume_replay::VolumeLine>,
    /// The `gates` line: the feature gates the workload set to other than their defaults.
    gates: BTreeMap<String, bool>,
}

/// kube's own evaluation of every node for one attempt (`Evaluation` in
/// `kube-reference/perf/evaluate.go`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct KubeEval {
    pre_filter: Option<String>,
    feasible: usize,
    top: Vec<String>,
    top_score: i64,
    scores: BTreeMap<String, BTreeMap<String, i64>>,
    rejected: BTreeMap<String, String>,
    score_error: Option<String>,
    /// node -> the pods kube's NodeInfo holds (small clusters; Go writes none as null).
    pods: BTreeMap<String, Option<Vec<String>>>,
    /// node -> the nominated pods kube's nominator gave Filter there (`None`: a record
    /// written before kube-reference recorded them).
    nominated: Option<BTreeMap<String, Option<Vec<KubeNominated>>>>,
}

/// A nominated pod as kube's `NominatedPodsForNode` returned it (`NominatedPod` in
/// `kube-reference/perf/evaluate.go`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct KubeNominated {
    pod: String,
    priority: i32,
    /// A bare reference: the pod was in none of kube's queues at that instant.
    placeholder: bool,
}

/// The cluster as the record describes it: binds succeed (the pod then follows kube's
/// choice), and namespaces have the labels kube's API server gave them.
#[derive(Default)]
struct RecordedCluster {
    namespace_labels: parking_lot::RwLock<HashMap<Sym, Arc<Labels>>>,
    /// Per namespace, the selectors of its Services.
    services: parking_lot::RwLock<HashMap<Sym, Vec<BTreeMap<String, String>>>>,
}

impl ClusterClient for RecordedCluster {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        true
    }
    fn namespace_labels(&self, namespace: Sym) -> Option<Arc<Labels>> {
        self.namespace_labels.read().get(&namespace).cloned()
    }

    /// kube's `helper.DefaultSelector` over the recorded Services of the pod's namespace:
    /// the selectors of those that select the pod, merged.
    fn default_spread_selector(&self, pod: &Pod) -> Option<LabelSelector> {
        let services = self.services.read();
        let mut merged: BTreeMap<String, String> = BTreeMap::new();
        for sel in services.get(&pod.namespace)? {
            if sel
                .iter()
                .all(|(k, v)| pod.labels.get(Sym::new(k)) == Some(Sym::new(v)))
            {
                merged.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        if merged.is_empty() {
            return None;
        }
        crate::cluster::store::selector_of(merged).ok()
    }
}

/// What a replay found.
#[derive(Debug, Default)]
pub struct ReplayReport {
    /// Scenarios in the record: its `scenario-N` namespaces, else 1.
    pub scenarios: usize,
    /// Scheduling attempts read.
    pub decisions: usize,
    /// Attempts whose whole-cluster evaluation kube recorded and tidegate compared exactly.
    pub evaluations: usize,
    /// Bindings judged on feasibility and top score (kube saw every feasible node).
    pub top_checked: usize,
    /// Bindings judged on feasibility only (kube's adaptive window).
    pub feasibility_only: usize,
    /// Fit errors judged (no feasible node, the same rejecting plugins).
    pub fit_errors: usize,
    /// Attempts that failed with another error (not judged).
    pub other_errors: usize,
    /// Nominations judged against tidegate's preemption dry run.
    pub nominations: usize,
    /// Attempts of bound pods whose in-place resize is deferred, judged on their own node
    /// with NodeResourcesFit's delta (resize preemption).
    pub deferred: usize,
    /// Preemptions whose victims were judged (their priorities on the nominated node).
    pub victims_checked: usize,
    /// Pod deletions replayed.
    pub deletions: usize,
    /// Nominations kube dropped because an API write removed the pod's nominatedNodeName.
    pub nominations_lost: usize,
    /// Nominations kube's nominator gained from a binding cycle's nominatedNodeName
    /// (NominatedNodeNameForExpectation; "expectation" lines), held without judging.
    pub expectations: usize,
    /// Disagreements (unexplained).
    pub disagreements: Vec<String>,
    /// Differences explained as kube's own nondeterminism (each says why).
    pub explained: Vec<String>,
    /// Disagreements after a fit error in an old record without deletions (may rest on
    /// preemption victims the record lacks).
    pub after_fit_error: Vec<String>,
    /// Pod group cycles judged (`oracle/groups.rs`), those kube scheduled, those waiting on a group
    /// preemption (judged on all-or-nothing and kube's placement only), and the member
    /// placements kube undid within or at the end of a cycle.
    pub group_cycles: usize,
    pub groups_scheduled: usize,
    pub group_preemptions: usize,
    pub reverted: usize,
    /// Group members checked to fit on kube's node given the rest of kube's placement.
    pub group_placements_checked: usize,
    /// Pods PodGroupPostFilter's simulation took out of kube's snapshot for a while.
    pub simulated: usize,
    /// Cycles with a choice of feasible placements whose kept one was judged top-scored
    /// (check E of `oracle/groups.rs`).
    pub placements_scored: usize,
    /// Group preemptions whose victims were compared with tidegate's (check F).
    pub group_victims_checked: usize,
    /// Kube's claim allocations judged with tidegate's allocator (`oracle/dra_replay.rs`).
    pub dra_allocations: usize,
}

/// kube's `errClaimTrackerConcurrentModification`: its claim tracker changed while a plugin
/// gathered the allocated devices (an informer event between two reads), and the attempt
/// fails with this error.
const TRACKER_RACE: &str = "conflicting concurrent modification";

/// Why an attempt kube failed in PreScore on its claim tracker's race, where tidegate
/// scored, is not a disagreement; `None` for any other attempt.
fn tracker_race(kube: &KubeEval, eval: &tidegate_engine::Evaluation) -> Option<String> {
    let raced = kube
        .score_error
        .as_deref()
        .is_some_and(|e| e.contains(TRACKER_RACE))
        && eval.score_error.is_none();
    raced.then(|| {
        format!(
            "kube's DRA claim tracker changed while PreScore read it (\"{TRACKER_RACE}\"), a race inside kube that fails the attempt; tidegate reads one state"
        )
    })
}

/// Why an attempt whose recorded evaluation passes PreFilter, where tidegate's rejects, is
/// not a disagreement: kube's own cycle failed at that PreFilter with tidegate's message
/// (the recorded decision), so the state moved between the cycle and the recorder's
/// evaluation (an allocation in flight written and dropped meanwhile, say); tidegate
/// replays the state of the cycle. `None` for any other attempt.
fn evaluated_after_the_cycle(
    line: &Line,
    kube: &KubeEval,
    eval: &tidegate_engine::Evaluation,
) -> Option<String> {
    let ours = eval.pre_filter.as_ref()?;
    let same = kube.pre_filter.is_none()
        && line.node.is_none()
        && line.unschedulable_plugins == [ours.plugin()]
        && line
            .error
            .as_deref()
            .is_some_and(|e| e.contains(ours.message().as_str()));
    same.then(|| {
        format!(
            "kube's cycle failed at PreFilter as tidegate's does ({}: {}); kube's evaluation, recorded after the cycle, passed it: the state moved in between",
            ours.plugin(),
            ours.message()
        )
    })
}

/// kube bound the pod to a node that its own evaluation, recorded after the cycle, rejects,
/// and tidegate's evaluation of the recorded state rejects that node too: kube's cycle saw
/// another state (a pod group cycle's nominations and bindings move it fast; a volume the
/// API bound to another claim after the cycle found it free in VolumeBinding's assume
/// cache). The evaluation itself is judged whole against kube's (`judge::judge_evaluation`).
///
/// A small cluster's record names the plugin that rejected each node: it must be tidegate's.
/// A larger one (`kube-reference/perf/evaluate.go`, over 64 nodes) names none, but keeps the
/// scores of kube's chosen node whenever its evaluation found that node feasible: no scores
/// for it (with no PreFilter rejection or Score error) is a rejection by a plugin the record
/// does not name.
fn bound_where_its_evaluation_rejects(
    line: &Line,
    kube: &KubeEval,
    eval: &tidegate_engine::Evaluation,
) -> Option<String> {
    let node = line.node.as_deref()?;
    let small = !kube.pods.is_empty() || !kube.rejected.is_empty();
    let plugin = if small {
        kube.rejected
            .get(node)
            .filter(|p| *p != "PreFilterResult")?
            .as_str()
    } else {
        let rejected = kube.pre_filter.is_none()
            && kube.score_error.is_none()
            && !kube.scores.contains_key(node);
        rejected.then_some("")?
    };
    let n = Sym::new(node);
    let (_, ours) = eval.rejected.iter().find(|(m, _)| *m == n)?;
    if small && ours.plugin() != plugin {
        return None;
    }
    let kube_side = if small {
        format!("rejects that node ({plugin})")
    } else {
        format!(
            "keeps no scores for that node ({} feasible of a cluster too large for it to name the rejecting plugin)",
            kube.feasible
        )
    };
    Some(format!(
        "kube's cycle bound it to {node}; kube's evaluation, recorded after the cycle, {kube_side} and tidegate's rejects it ({}: {}): the state moved in between",
        ours.plugin(),
        ours.message()
    ))
}

/// On a state that moved between kube's cycle and its record ([`Replay::moved_state`]):
/// the disagreement when tidegate's Filter rejects kube's `node`. None when kube's own
/// Filter on the recorded state rejected every node, its own too (a volume the API bound
/// between kube's Filter and the record, say): the two sides agree on that state.
fn moved_state_rejects(
    line: &Line,
    node: &str,
    eval: &tidegate_engine::Evaluation,
) -> Option<String> {
    let n = Sym::new(node);
    let kube_rejects_all = line.kube.as_ref().is_some_and(|k| k.feasible == 0);
    (!kube_rejects_all && !eval.feasible.iter().any(|&(m, _)| m == n))
        .then(|| format!("kube bound it to {node}; tidegate's Filter rejects that node"))
}

/// The replay's scheduler when no configuration is given: kube v1.37.2's defaults with
/// GenericWorkload and TopologyAwareWorkloadScheduling on, as the random scenarios' group
/// test case runs (the pod-group plugins they add act on groups only: a record without
/// groups is judged as with the defaults; with them, PodGroupPodsCount scores placements),
/// and the gates the record's workload set (its `gates` line: DRAListTypeAttributes, ...).
fn group_config(recorded: &BTreeMap<String, bool>) -> Result<SchedulerConfig, HarnessError> {
    let mut gates = BTreeMap::from([
        ("GenericWorkload".to_string(), true),
        ("TopologyAwareWorkloadScheduling".to_string(), true),
    ]);
    gates.extend(recorded.iter().map(|(k, v)| (k.clone(), *v)));
    let features = tidegate_engine::features::FeatureGates::for_workload(&gates)
        .map(|g| tidegate_engine::features::Features::from_gates(&g))
        .map_err(|e| HarnessError::Run(format!("the record's feature gates: {e}")))?;
    Ok(SchedulerConfig {
        profiles: vec![tidegate_engine::Profile::default_profile_for(&features)],
        features,
        ..SchedulerConfig::default()
    })
}

/// Replays one record file (`path`) on a fresh tidegate scheduler with `config` (its
/// profiles, percentage and queue settings; [`group_config`] when `None`).
pub fn replay(path: &Path, config: Option<SchedulerConfig>) -> Result<ReplayReport, HarnessError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", path.display())))?;
    let lines = record_lines::<Line>(path, &text).collect::<Result<Vec<_>, _>>()?;
    let recorded = lines
        .iter()
        .find(|(_, l)| l.kind == "gates")
        .map(|(_, l)| l.gates.clone())
        .unwrap_or_default();
    let base = match config {
        Some(c) => c,
        None => group_config(&recorded)
            .map_err(|e| HarnessError::Run(format!("{}: {e}", path.display())))?,
    };
    let cfg = SchedulerConfig {
        parallelism: 1,
        ..base
    };
    let cluster = Arc::new(RecordedCluster::default());
    let sched = Scheduler::new(cfg, &Registry::in_tree(), cluster.clone(), None)
        .map_err(|e| HarnessError::Run(e.to_string()))?;
    let mut r = Replay {
        sched,
        cluster,
        pods: HashMap::new(),
        bound: HashMap::new(),
        nodes: HashMap::new(),
        preemptions: HashMap::new(),
        namespaces: BTreeSet::new(),
        cycles: HashMap::new(),
        simulated_out: Vec::new(),
        group_deletions: HashMap::new(),
        groups: HashMap::new(),
        group_cycles: HashMap::new(),
        report: ReplayReport::default(),
        dra: dra_replay::DraObjects::default(),
        volumes: volume_replay::VolumeObjects::default(),
        saw_fit_error: false,
        full_record: false,
    };
    r.group_deletions = group_replay::group_deletions(&lines);
    let group_objects = group_replay::cycle_group_objects(&lines);
    for ((n, line), group) in lines.into_iter().zip(group_objects) {
        if let Some(g) = group {
            r.know_pod_group(g);
        }
        r.step(line)
            .map_err(|e| HarnessError::Run(format!("{}:{}: {e}", path.display(), n)))?;
    }
    let open: Vec<String> = r.preemptions.keys().cloned().collect();
    for key in open {
        r.close_preemption(&key, true);
    }
    let scenarios = r
        .namespaces
        .iter()
        .filter(|n| n.starts_with("scenario-"))
        .count();
    r.report.scenarios = scenarios.max(1);
    Ok(r.report)
}

/// A nomination kube made, waiting for its victims' deletions.
struct Preemption {
    seq: u64,
    node: String,
    /// tidegate's victims' priorities on that node, sorted.
    expected: Vec<i32>,
    /// The priorities of the pods deleted from that node since, and those pods.
    deleted: Vec<i32>,
    victims: Vec<Arc<Pod>>,
}

struct Replay {
    sched: Arc<Scheduler>,
    cluster: Arc<RecordedCluster>,
    /// The pods seen, by namespace/name (later attempts carry no object).
    pods: HashMap<String, Arc<Pod>>,
    /// The bound pods, by namespace/name, as bound in tidegate.
    bound: HashMap<String, Arc<Pod>>,
    /// The nodes, by name, as last recorded.
    nodes: HashMap<String, Arc<tidegate_engine::api::Node>>,
    /// Open nominations, by the preemptor's namespace/name.
    preemptions: HashMap<String, Preemption>,
    namespaces: BTreeSet<String>,
    /// The member attempts of the pod group cycles in progress, by namespace/group.
    cycles: HashMap<String, Vec<groups::Attempt>>,
    /// The pods PodGroupPostFilter's simulation took out since the last `podGroup` line.
    simulated_out: Vec<Arc<Pod>>,
    /// Per `podGroup` line (its seq) whose group preemption nominated: the deletions that
    /// followed ([`group_replay::group_deletions`]).
    group_deletions: HashMap<u64, group_replay::AfterGroupPreemption>,
    /// The PodGroup objects the scheduler knows, by namespace/name.
    groups: HashMap<String, Arc<tidegate_engine::api::PodGroup>>,
    /// The data shared by the members of each pod-group cycle in progress, by
    /// namespace/group (dropped at the cycle's `podGroup` line).
    group_cycles: HashMap<String, Arc<tidegate_engine::PodGroupCycleData>>,
    report: ReplayReport,
    /// The DRA objects replayed so far.
    dra: dra_replay::DraObjects,
    /// The volume objects replayed so far.
    volumes: volume_replay::VolumeObjects,
    saw_fit_error: bool,
    /// The record carries kube's evaluations and deletions (a newer kube-reference).
    full_record: bool,
}

impl Replay {
    fn step(&mut self, line: Line) -> Result<(), String> {
        match line.kind.as_str() {
            "nodes" => {
                for n in &line.nodes {
                    let name = n.metadata.name.clone().unwrap_or_default();
                    let node = Arc::new(convert::node(n).map_err(|e| e.to_string())?);
                    match self.nodes.insert(name, node.clone()) {
                        None => self.sched.on_node_add(node),
                        Some(old) => self.sched.on_node_update(&old, node),
                    }
                }
                Ok(())
            }
            "decision" => self.decision(line),
            "volumes" => {
                let v = line.volumes.unwrap_or_default();
                for f in self.volumes.apply(&self.sched, v) {
                    self.report.explained.push(format!("#{} {f}", line.seq));
                }
                Ok(())
            }
            "dra" => {
                let d = line.dra.unwrap_or_default();
                let disagreements = self.dra.apply(&self.sched, &self.nodes, d)?;
                self.report.dra_allocations = self.dra.allocations_checked;
                self.report.disagreements.extend(disagreements);
                Ok(())
            }
            "deleted" => {
                self.deleted(&line);
                Ok(())
            }
            "nominated" if line.pod_group.is_some() => {
                self.group_nominated(&line);
                Ok(())
            }
            "nominated" => self.nominated(&line),
            "reverted" => self.reverted(&line),
            "simulated" => {
                // PodGroupPostFilter's simulation removed a potential victim from kube's
                // snapshot for its own attempts (an `assigned` line brings it back after).
                self.report.simulated += 1;
                let key = format!("{}/{}", line.namespace, line.name);
                if let Some(p) = self.bound.remove(&key) {
                    self.sched.on_pod_delete(&p);
                    self.simulated_out.push(p);
                }
                Ok(())
            }
            "podGroup" => {
                self.group_cycles
                    .remove(&format!("{}/{}", line.namespace, line.name));
                self.group_end(&line)
            }
            "expectation" => {
                // kube's binding cycle wrote the pod's node as its nominatedNodeName before
                // PreBind; the update reached kube's nominator after the pod was requeued
                // (its PreBind failed). Not a preemption: nothing to judge, only to hold.
                let key = format!("{}/{}", line.namespace, line.name);
                if let (Some(p), Some(node)) = (self.pods.get(&key), line.node.as_deref()) {
                    self.sched.hold_nomination(p, Sym::new(node));
                }
                self.report.expectations += 1;
                Ok(())
            }
            "nominationLost" => {
                // An API write removed the pod's nominatedNodeName; kube's nominator (and
                // tidegate's, on such an update) drops the nomination.
                let key = format!("{}/{}", line.namespace, line.name);
                if let Some(p) = self.pods.get(&key) {
                    self.sched.hold_nomination(p, Sym::EMPTY);
                }
                self.report.nominations_lost += 1;
                Ok(())
            }
            "assigned" => self.assigned(&line),
            "nodeDeleted" => {
                if self.nodes.remove(&line.name).is_some() {
                    self.sched.on_node_delete(Sym::new(&line.name));
                }
                Ok(())
            }
            // The executor's marks and the workload's outcome: the outcome check's
            // (`outcome`), nothing to replay.
            "op" | "outcome" => Ok(()),
            // Read before the scheduler was made (`replay`).
            "gates" => Ok(()),
            other => Err(format!("unknown record kind {other:?}")),
        }
    }

    fn disagree(&mut self, line: &Line, key: &str, what: String) {
        let msg = format!("#{} {key} (attempt {}): {what}", line.seq, line.attempts);
        if !self.full_record && self.saw_fit_error && line.node.is_some() {
            self.report.after_fit_error.push(msg);
        } else {
            self.report.disagreements.push(msg);
        }
    }

    /// The attempt's evaluations: as kube's recorder evaluated it (a fresh cycle state,
    /// compared with kube's evaluation), and as the pod's cycle saw it (for a member of a
    /// pod-group cycle, with the data the members before it left; judged for its binding,
    /// its fit error and the group).
    fn evaluations(&mut self, line: &Line, key: &str, pod: &Pod) -> Result<Evaluations, String> {
        // A member of a pod-group cycle shares the cycle's data with the members before it
        // (DynamicResources: the claims they reserved, whose allocation in flight it may
        // reuse), and is reserved where kube placed it for the members after it.
        let member = line.pod_group.as_ref().map(|g| {
            self.group_cycles
                .entry(format!("{}/{g}", line.namespace))
                .or_default()
                .clone()
        });
        let no_profile = || {
            format!(
                "pod {key}: no profile for scheduler {:?}",
                pod.spec.scheduler_name
            )
        };
        // kube's recorded evaluation ran outside the cycle (a fresh cycle state), so the
        // evaluations compare that way; the member's own verdict (its binding, its fit
        // error, the group's judge) is the one inside the cycle.
        let plain = self.sched.evaluate(pod).ok_or_else(no_profile)?;
        // In a placement (a topology domain kube's cycle assumed), kube's Filter, Score and
        // normalization saw only its nodes.
        let placement: Option<Vec<Sym>> = (!line.placement_nodes.is_empty())
            .then(|| line.placement_nodes.iter().map(|n| Sym::new(n)).collect());
        let (eval, reserved) = match member {
            Some(data) => self
                .sched
                .evaluate_member(
                    pod,
                    data,
                    line.node.as_deref().map(Sym::new),
                    placement.as_deref(),
                )
                .ok_or_else(no_profile)?,
            None => (plain.clone(), None),
        };
        Ok((plain, eval, reserved))
    }

    fn decision(&mut self, line: Line) -> Result<(), String> {
        self.report.decisions += 1;
        self.full_record |= line.kube.is_some();
        let key = format!("{}/{}", line.namespace, line.name);
        self.namespaces.insert(line.namespace.clone());
        if line.node.is_some() {
            // The preemptor is bound: its victims are gone from the state it was bound on.
            self.close_preemption(&key, false);
        }
        if let Some(services) = &line.namespace_services {
            self.cluster
                .services
                .write()
                .insert(Sym::new(&line.namespace), services.clone());
        }
        if let Some(labels) = &line.namespace_labels {
            let labels = Labels::from_pairs(labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            self.cluster
                .namespace_labels
                .write()
                .insert(Sym::new(&line.namespace), Arc::new(labels));
        }
        if let Some(p) = &line.pod {
            let pod = convert::pod(p).map_err(|e| format!("pod {key}: {e}"))?;
            self.pods.insert(key.clone(), Arc::new(pod));
        }
        let pod = self
            .pods
            .get(&key)
            .cloned()
            .ok_or_else(|| format!("pod {key}: no object recorded"))?;
        if let Some(de) = self.sched.evaluate_deferred_resize(&pod) {
            return self.deferred_decision(&line, &key, &pod, &de);
        }
        if let Some(view) = line.kube.as_ref().and_then(|k| k.nominated.as_ref()) {
            self.follow_nominator(&line, &key, view);
        }
        let (plain, eval, reserved) = self.evaluations(&line, &key, &pod)?;
        if let Some(kube) = &line.kube {
            self.report.evaluations += 1;
            let state = (!kube.pods.is_empty())
                .then(|| judge::judge_state(kube, &self.bound))
                .flatten();
            let explained = tracker_race(kube, &plain)
                .or_else(|| evaluated_after_the_cycle(&line, kube, &plain));
            if let Some(why) = explained {
                self.report.explained.push(format!(
                    "#{} {key} (attempt {}): {why}",
                    line.seq, line.attempts
                ));
            } else if let Some(what) = state.or_else(|| judge::judge_evaluation(kube, &plain)) {
                self.disagree(&line, &key, what);
            }
        }
        // An attempt in a placement (a pod group cycle's topology domain; only members have
        // one) chose among the placement's nodes: `eval` is already the placement's
        // (`evaluations`), and its binding or fit error is judged there; the whole-cluster
        // evaluation `plain` was compared whole above.
        let in_placement = !line.placement_nodes.is_empty();
        let all_nodes = if in_placement {
            line.placement_nodes.len()
        } else {
            self.nodes.len()
        };
        let judged = &eval;
        let verdict = self.verdict(&line, &key, &eval, judged, in_placement, all_nodes);
        if let Some(what) = verdict {
            self.disagree(&line, &key, what);
        }
        if let Some(group) = &line.pod_group {
            self.cycles
                .entry(format!("{}/{group}", line.namespace))
                .or_default()
                .push(groups::Attempt {
                    pod: line.name.clone(),
                    kube_node: line.node.clone().unwrap_or_default(),
                    feasible: judged.pre_filter.is_none() && !judged.feasible.is_empty(),
                    plugins: judged.rejecting_plugins(),
                    placement: line.placement_nodes.clone(),
                    pre_filter: judged.pre_filter.as_ref().map(|st| st.plugin()),
                    simulation: line.simulation,
                });
        }
        if let Some(node) = &line.node {
            // Follow kube: the pod is bound where kube put it (and nominated no more), its
            // volumes assumed there as kube's Reserve assumed them (until the API shows
            // the bindings, in a later `volumes` line).
            let member = line.pod_group.is_some();
            self.volumes
                .reserve(&self.sched, &key, &pod, Sym::new(node), member, reserved);
            self.sched.hold_nomination(&pod, Sym::EMPTY);
            let mut bound = (*pod).clone();
            bound.node_name = Some(Sym::new(node));
            let bound = Arc::new(bound);
            self.bound.insert(key, bound.clone());
            self.sched.on_pod_add(bound);
        }
        Ok(())
    }

    /// The verdict on a decision's outcome (its binding or fit error): `eval` is the whole
    /// cluster's evaluation, `judged` the part kube chose among (a placement's nodes, of
    /// `all_nodes`).
    fn verdict(
        &mut self,
        line: &Line,
        key: &str,
        eval: &tidegate_engine::Evaluation,
        judged: &tidegate_engine::Evaluation,
        in_placement: bool,
        all_nodes: usize,
    ) -> Option<String> {
        let rejected_by_kube = line
            .kube
            .as_ref()
            .and_then(|k| bound_where_its_evaluation_rejects(line, k, eval));
        if let Some(why) = rejected_by_kube {
            self.report.explained.push(format!(
                "#{} {key} (attempt {}): {why}",
                line.seq, line.attempts
            ));
            return None;
        }
        match &line.node {
            Some(node) if let Some(why) = self.moved_state(line, in_placement, eval) => {
                self.report.explained.push(format!(
                    "#{} {key} (attempt {}): {why}",
                    line.seq, line.attempts
                ));
                let v = moved_state_rejects(line, node, eval);
                let judged = line.kube.as_ref().is_some_and(|k| k.feasible > 0);
                self.report.feasibility_only += usize::from(judged && v.is_none());
                v
            }
            Some(node) => {
                let (v, top) = judge::judge_binding(line, node, judged, eval, all_nodes);
                if v.is_none() {
                    if top {
                        self.report.top_checked += 1;
                    } else {
                        self.report.feasibility_only += 1;
                    }
                }
                v
            }
            None if !line.unschedulable_plugins.is_empty() || line.num_all_nodes > 0 => {
                self.report.fit_errors += 1;
                let v = judge::judge_fit_error(line, judged);
                self.saw_fit_error = true;
                v
            }
            None => {
                self.report.other_errors += 1;
                None
            }
        }
    }

    /// Why a binding's feasible count is not judged against kube's cycle: kube's own Filter
    /// on the recorded state (every node) found another count than its cycle did, and
    /// tidegate's agrees with the recorded one. The state moved between kube's cycle and its
    /// record (a binding cycle's nomination, NominatedNodeNameForExpectation, reaching kube's
    /// nominator in between); `None` for any other attempt.
    fn moved_state(
        &self,
        line: &Line,
        in_placement: bool,
        eval: &tidegate_engine::Evaluation,
    ) -> Option<String> {
        let kube = line.kube.as_ref()?;
        let moved = !in_placement
            && kube.pre_filter.is_none()
            && line.evaluated_nodes == self.nodes.len()
            && line.feasible_nodes != kube.feasible
            && kube.feasible == eval.feasible.len();
        let node = if kube.feasible == 0 {
            "neither side keeps kube's node on it: not judged"
        } else {
            "kube's node judged feasible only"
        };
        moved.then(|| {
            format!(
                "kube's cycle found {} feasible nodes, its own Filter on the recorded state {} (as tidegate does): the state moved between them; {node}",
                line.feasible_nodes, kube.feasible
            )
        })
    }

    /// kube undid a group member's placement (another placement tried, or the group
    /// rejected): out of tidegate's state, still pending; neither a deletion nor a victim.
    fn reverted(&mut self, line: &Line) -> Result<(), String> {
        self.report.reverted += 1;
        let key = format!("{}/{}", line.namespace, line.name);
        if let Some(p) = self.bound.remove(&key) {
            self.sched.on_pod_delete(&p);
        }
        if let Some(p) = self.pods.get(&key) {
            self.volumes.unreserve(&self.sched, &key, p);
        }
        // kube's undo unreserved the member: what its Reserve put in flight is gone.
        self.dra.restore_pending(&self.sched)
    }

    /// Sets tidegate's nominator to the one kube's Filter saw at this attempt (`view`, node ->
    /// pods), the evaluated pod `key` aside; reports what differed from the nominations the
    /// record implies (see the module doc).
    fn follow_nominator(
        &mut self,
        line: &Line,
        key: &str,
        view: &BTreeMap<String, Option<Vec<KubeNominated>>>,
    ) {
        let kube: BTreeMap<&str, (&str, &KubeNominated)> = view
            .iter()
            .flat_map(|(n, ps)| {
                ps.iter()
                    .flatten()
                    .map(move |p| (p.pod.as_str(), (n.as_str(), p)))
            })
            .filter(|(k, _)| *k != key)
            .collect();
        let ours: BTreeMap<String, (Sym, Arc<Pod>)> = self
            .sched
            .nominations()
            .into_iter()
            .map(|(n, p)| (p.key.as_str().to_string(), (n, p)))
            .filter(|(k, _)| k != key)
            .collect();
        let (mut bare, mut other) = (Vec::new(), Vec::new());
        for (k, (node, p)) in &ours {
            if !kube.contains_key(k.as_str()) {
                other.push(format!("{k} on {node} (kube: not nominated)"));
                self.sched.hold_nomination(p, Sym::EMPTY);
            }
        }
        for (&k, &(node, kp)) in &kube {
            let Some(full) = self.pods.get(k).cloned() else {
                other.push(format!("{k} on {node}: no object recorded"));
                continue;
            };
            let held = ours.get(k).map(|(n, _)| n.to_string());
            if held.as_deref() != Some(node) {
                other.push(format!("{k}: kube on {node}, tidegate on {held:?}"));
            } else if kp.placeholder {
                bare.push(format!("{k} on {node}"));
            } else if kp.priority != full.priority() {
                other.push(format!(
                    "{k} on {node}: priority {} in kube, {} here",
                    kp.priority,
                    full.priority()
                ));
            }
            let pod = if kp.placeholder {
                let (ns, name) = full.key.split();
                Arc::new(Pod {
                    uid: full.uid.clone(),
                    ..Pod::new(ns, name, Arc::default())
                })
            } else {
                full
            };
            self.sched.hold_nomination(&pod, Sym::new(node));
        }
        let at = format!("#{} {key} (attempt {})", line.seq, line.attempts);
        if !other.is_empty() {
            self.disagree(
                line,
                key,
                format!(
                    "kube's nominator differs from the record's nominations: {}",
                    other.join("; ")
                ),
            );
        } else if !bare.is_empty() {
            self.report.explained.push(format!(
                "{at}: kube's nominator gave {} as a bare reference (the pod was in none of its queues then), which kube's Filter counts as a pod with no requests and priority 0; judged on that state",
                bare.join(", ")
            ));
        }
    }

    /// An attempt of a bound pod whose in-place resize is deferred (resize preemption):
    /// kube tries it on its own node only (DeferredPodScheduling) with NodeResourcesFit's
    /// delta, so kube's whole-cluster evaluation of it is not comparable (its other plugins
    /// skip or reject the pod) and is not judged. Judged: kube found it fitting (a "binding"
    /// to its node) exactly when tidegate's delta fit does.
    fn deferred_decision(
        &mut self,
        line: &Line,
        key: &str,
        pod: &Pod,
        de: &tidegate_engine::DeferredEvaluation,
    ) -> Result<(), String> {
        self.report.deferred += 1;
        let fits = de.node_found && de.reasons.is_empty();
        let own = pod.node_name.map(|n| n.as_arc().to_string());
        let verdict = match &line.node {
            Some(n) if own.as_deref() != Some(n.as_str()) => Some(format!(
                "kube placed the deferred-resize pod on {n}, not its own node {own:?}"
            )),
            Some(n) if !fits => Some(format!(
                "kube found the deferred resize fits on {n}; tidegate's delta fit: {:?}",
                de.reasons
            )),
            None if fits => Some(
                "kube found the deferred resize does not fit its node; tidegate's delta fit says it does"
                    .to_string(),
            ),
            _ => None,
        };
        if let Some(what) = verdict {
            self.disagree(line, key, what);
        }
        Ok(())
    }

    /// An assigned pod kube's state gained without a recorded decision.
    fn assigned(&mut self, line: &Line) -> Result<(), String> {
        let key = format!("{}/{}", line.namespace, line.name);
        let p = line
            .pod
            .as_ref()
            .ok_or_else(|| format!("assigned pod {key}: no object recorded"))?;
        let mut pod = convert::pod(p).map_err(|e| format!("pod {key}: {e}"))?;
        if let Some(n) = &line.node {
            pod.node_name = Some(Sym::new(n));
        }
        let pod = Arc::new(pod);
        self.volumes.settled(&key);
        match self.bound.insert(key, pod.clone()) {
            Some(old) => {
                if pod.deletion_timestamp && !old.deletion_timestamp {
                    let node = line.node.clone().unwrap_or_default();
                    self.credit_victim(&node, pod.priority(), Some(old.clone()));
                }
                self.sched.on_pod_update(&old, pod);
            }
            None => self.sched.on_pod_add(pod),
        }
        Ok(())
    }

    /// A pod deletion: out of tidegate's state; a victim of an open preemption on its node.
    fn deleted(&mut self, line: &Line) {
        self.report.deletions += 1;
        let key = format!("{}/{}", line.namespace, line.name);
        let victim = self.bound.remove(&key);
        self.volumes.forget(&key);
        if let Some(p) = &victim {
            self.sched.on_pod_delete(p);
        } else if let Some(p) = self.pods.get(&key) {
            self.sched.hold_nomination(p, Sym::EMPTY);
        }
        // The object is kept: kube's recorder also writes "deleted" for a pod whose binding
        // failed after it was assumed (kube forgets it: it left the snapshot while it still
        // exists), and such a pod is attempted again without its object recorded anew.
        self.preemptions.remove(&key);
        let node = line.node.clone().unwrap_or_default();
        self.credit_victim(&node, line.priority.unwrap_or(0), victim);
    }

    /// A pod on `node` was deleted or began terminating (a victim with a grace period stays,
    /// terminating, where no kubelet removes it). Every open nomination to that node still
    /// missing a victim of this priority takes it: two preemptors nominated to one node
    /// before its victim is gone both chose it (kube's second dry run still saw the victim,
    /// and deleting it twice is one deletion).
    fn credit_victim(&mut self, node: &str, prio: i32, victim: Option<Arc<Pod>>) {
        let mut taken = false;
        for p in self.preemptions.values_mut().filter(|p| p.node == node) {
            let want = p.expected.iter().filter(|&&x| x == prio).count();
            let have = p.deleted.iter().filter(|&&x| x == prio).count();
            if have < want {
                p.deleted.push(prio);
                p.victims.extend(victim.clone());
                taken = true;
            }
        }
        // A victim no nomination expected: the latest one there still short of victims
        // takes it, so that the difference shows.
        if !taken
            && let Some(p) = self
                .preemptions
                .values_mut()
                .filter(|p| p.node == node && p.deleted.len() < p.expected.len())
                .max_by_key(|p| p.seq)
        {
            p.deleted.push(prio);
            p.victims.extend(victim);
        }
    }

    /// kube's PostFilter nominated a node: judged against tidegate's dry run, then held.
    fn nominated(&mut self, line: &Line) -> Result<(), String> {
        let key = format!("{}/{}", line.namespace, line.name);
        let node = line.node.clone().unwrap_or_default();
        let pod = self
            .pods
            .get(&key)
            .cloned()
            .ok_or_else(|| format!("nominated pod {key}: no object recorded"))?;
        if node.is_empty() {
            // PostFilter found no candidate this time: kube clears the pod's nomination.
            self.sched.hold_nomination(&pod, Sym::EMPTY);
            return Ok(());
        }
        self.report.nominations += 1;
        if let Some(de) = self.sched.evaluate_deferred_resize(&pod) {
            // Resize preemption: victims on the pod's own node, chosen with the delta fit.
            let own = pod.node_name.map(|n| n.as_arc().to_string());
            if own.as_deref() != Some(node.as_str()) || de.victims.is_empty() {
                self.disagree(
                    line,
                    &key,
                    format!(
                        "kube nominated {node} for a deferred resize; tidegate's dry run on {own:?} finds victims {:?}",
                        de.victims.iter().map(|v| v.priority()).collect::<Vec<_>>()
                    ),
                );
                return Ok(());
            }
            let mut expected: Vec<i32> = de.victims.iter().map(|v| v.priority()).collect();
            expected.sort_unstable();
            self.open_preemption(key, line.seq, node, expected);
            return Ok(());
        }
        let pe = self.sched.evaluate_preemption(&pod).unwrap_or_default();
        let n = Sym::new(&node);
        if let Some(what) = judge::judge_nomination(&pe, n) {
            self.disagree(line, &key, what);
        }
        if let Some(expected) = judge::expected_victims(&pe, n) {
            self.open_preemption(key, line.seq, node, expected);
        }
        self.sched.hold_nomination(&pod, n);
        Ok(())
    }

    /// A preemption whose victims (their priorities, sorted) are judged when the preemptor
    /// tries again.
    fn open_preemption(&mut self, key: String, seq: u64, node: String, expected: Vec<i32>) {
        self.preemptions.insert(
            key,
            Preemption {
                seq,
                node,
                expected,
                deleted: Vec::new(),
                victims: Vec::new(),
            },
        );
    }

    /// The preemptor tries again (or the record ends): kube's victims on the nominated node
    /// must have the priorities tidegate's dry run chose. At the end of the record, fewer
    /// deletions than expected are deletions still in flight, not judged.
    fn close_preemption(&mut self, key: &str, at_end: bool) {
        let Some(mut p) = self.preemptions.remove(key) else {
            return;
        };
        p.deleted.sort_unstable();
        if at_end && p.deleted.len() < p.expected.len() {
            return;
        }
        self.report.victims_checked += 1;
        if p.deleted == p.expected {
            return;
        }
        let msg = format!(
            "#{} {key}: preemption on {}: kube deleted victims of priorities {:?}, tidegate's dry run evicts {:?}",
            p.seq, p.node, p.deleted, p.expected
        );
        if !at_end && self.valid_victims(key, &p) {
            self.report.explained.push(format!(
                "{msg}; kube's victims are a valid choice here too (the preemptor fits without them, and not with any one back): equal-priority pods without a start time are ordered by kube's MoreImportantPod calling time.Now() for each, so which of them are reprieved is kube's own nondeterminism"
            ));
        } else {
            self.report.disagreements.push(msg);
        }
    }

    /// kube's victims, judged on tidegate's state after their deletion: the preemptor fits on
    /// the node without them, and adding any one of them back makes it not fit (what a
    /// reprieve in some order of the equal-priority pods yields).
    fn valid_victims(&self, key: &str, p: &Preemption) -> bool {
        let (Some(pod), node) = (self.pods.get(key), Sym::new(&p.node)) else {
            return false;
        };
        if p.victims.len() != p.deleted.len() || self.sched.fits_with(pod, node, &[]) != Some(true)
        {
            return false;
        }
        p.victims
            .iter()
            .all(|v| self.sched.fits_with(pod, node, std::slice::from_ref(v)) == Some(false))
    }
}

/// The lines of a kube-reference record (blank ones skipped), each decoded as `T` with its
/// line number; a line that
/// is not one is an error naming the file and the line.
pub(crate) fn record_lines<'t, T: serde::de::DeserializeOwned>(
    path: &'t std::path::Path,
    text: &'t str,
) -> impl Iterator<Item = Result<(usize, T), HarnessError>> + 't {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(move |(i, l)| {
            let line = serde_json::from_str(l).map_err(|e| {
                HarnessError::Run(format!(
                    "{}:{}: not a kube record line: {e}",
                    path.display(),
                    i + 1
                ))
            })?;
            Ok((i + 1, line))
        })
}

#[cfg(test)]
mod explain_tests;
