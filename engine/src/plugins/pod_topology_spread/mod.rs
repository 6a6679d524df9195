//! PodTopologySpread: `spec.topologySpreadConstraints` (and the cluster's default
//! constraints), kube-scheduler 1.34 behaviour.
//! Source of behaviour: `pkg/scheduler/framework/plugins/podtopologyspread/` (`plugin.go`,
//! `common.go`, `filtering.go`, `scoring.go`).
//!
//! # Constraints
//!
//! A pod's constraints are split by `whenUnsatisfiable`: the `DoNotSchedule` ones are hard
//! (PreFilter/Filter), the `ScheduleAnyway` ones soft (PreScore/Score). A pod without any
//! constraint gets the default ones instead: with `defaultingType: System` (the default)
//! those are `maxSkew 3` on `kubernetes.io/hostname` and `maxSkew 5` on
//! `topology.kubernetes.io/zone`, both `ScheduleAnyway`; with `List`, the configured
//! `defaultConstraints`. Default constraints select pods with the selector of the Services,
//! ReplicationControllers, ReplicaSets and StatefulSets that select the pod
//! ([`ClusterClient::default_spread_selector`]); when there is none they do not apply. Each
//! constraint is resolved per pod into a [`common::Constraint`]: its selector with
//! `matchLabelKeys` merged in, `minDomains` defaulted to 1.
//!
//! # Domains and eligible nodes
//!
//! A domain is one value of a constraint's topology key. A node counts toward a constraint
//! only if it carries *every* topology key of the pod's constraints (of the same kind) and
//! passes the constraint's inclusion policies: `nodeAffinityPolicy: Honor` (the default)
//! requires the pod's nodeSelector and required node affinity to match the node;
//! `nodeTaintsPolicy: Honor` (default Ignore) requires every NoSchedule/NoExecute taint to
//! be tolerated. Matching pods are the node's pods in the incoming pod's namespace, not
//! terminating, that the selector matches.
//!
//! # Filter data ([`filtering::PreFilterState`])
//!
//! PreFilter scans every node of the snapshot once and keeps, per hard constraint:
//! - `tp_value_to_match_num`: domain → matching pods. Every eligible domain has an entry, even
//!   with 0 pods, so its length is the number of eligible domains (for `minDomains`).
//! - `critical_paths`: two domains, `[0]` holding the minimum count (the global minimum).
//! - `self_match`: whether the incoming pod matches its own selector.
//!
//! Filter is then a few lookups per node and allocates nothing on success: a node without a
//! topology key fails `UnschedulableAndUnresolvable`; a node whose domain would exceed
//! `matchNum + selfMatch - globalMin > maxSkew` fails `Unschedulable`. The global minimum is 0
//! while there are fewer eligible domains than `minDomains`.
//!
//! AddPod/RemovePod (preemption, nominated pods) adjust the counts and critical paths of the
//! node's domains in place, as kube's `updateWithPod`.
//!
//! # Score data ([`scoring::PreScoreState`])
//!
//! PreScore keeps the soft constraints, the feasible nodes missing a key (ignored, score 0),
//! per non-hostname constraint the domains of the feasible nodes with their matching pods
//! counted over all eligible nodes, and a weight `ln(domains + 2)` per constraint (hostname:
//! the number of non-ignored feasible nodes). Score sums `count * weight + maxSkew - 1`
//! (hostname constraints count the node's own pods), rounded; NormalizeScore maps the raw
//! scores so that fewer matching pods score higher: `100 * (max + min - s) / max`.
//! With system defaults, nodes need not carry every key: a missing label reads as `""`.

pub(crate) mod common;
pub(crate) mod filtering;
pub(crate) mod scoring;
#[cfg(test)]
mod tests;

use crate::api::validation::{ErrorType, FieldError, is_qualified_name};
use crate::api::{
    NodeInclusionPolicy, Pod, Sym, TopologySpreadConstraint, UnsatisfiableConstraintAction,
};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::events::{
    ActionType, ClusterEvent, EventObject, EventResource, QueueingHint,
};
use crate::framework::interface::{
    ClusterClient, EnqueueExtensions, FilterPlugin, Plugin, PreFilterExtensions, PreFilterPlugin,
    PreFilterResult, PreScorePlugin, ScorePlugin,
};
use crate::framework::node_info::NodeInfo;
use crate::framework::signature::SignFragments;
use crate::framework::status::Status;
use crate::plugins::kept::Kept;
use common::{
    Constraint, LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, any_constraint_selects, filter_constraints,
    node_has_all_keys, topology_labels_changed,
};
use serde::Deserialize;
use std::sync::Arc;

pub(crate) const NAME: &str = "PodTopologySpread";
/// Filter's reason when a domain would exceed `maxSkew`.
pub(crate) const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
/// Filter's reason when the node lacks a topology key.
pub(crate) const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// `defaultingType` of [`PodTopologySpreadArgs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DefaultingType {
    /// kube's built-in defaults (hostname 3, zone 5, ScheduleAnyway).
    System,
    /// `defaultConstraints` as given.
    List,
}

/// One entry of `defaultConstraints` (a `v1.TopologySpreadConstraint`), fields kept raw so
/// that validation reports what kube reports.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub(crate) struct DefaultConstraintArgs {
    pub max_skew: i32,
    pub topology_key: String,
    pub when_unsatisfiable: String,
    pub label_selector: Option<serde_json::Value>,
    pub min_domains: Option<i32>,
    pub node_affinity_policy: Option<String>,
    pub node_taints_policy: Option<String>,
    pub match_label_keys: Vec<String>,
}

/// kube's `PodTopologySpreadArgs` (v1): `defaultingType` defaults to `System`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub(crate) struct PodTopologySpreadArgs {
    pub(crate) default_constraints: Vec<DefaultConstraintArgs>,
    /// `System` (also when empty) or `List`.
    pub(crate) defaulting_type: String,
}

use crate::api::go_quote as quote;

fn field_error(kind: ErrorType, field: String, bad: Option<String>, detail: &str) -> String {
    FieldError {
        kind,
        field,
        bad_value: bad,
        detail: detail.to_string(),
    }
    .to_string()
}

impl PodTopologySpreadArgs {
    /// kube's `ValidatePodTopologySpreadArgs` (with a nil root path), messages aggregated as
    /// `utilerrors.Aggregate` prints them. Returns the defaulting type.
    pub(crate) fn validate(&self) -> Result<DefaultingType, String> {
        let mut errs: Vec<String> = Vec::new();
        let dt = match self.defaulting_type.as_str() {
            "" | "System" => Some(DefaultingType::System),
            "List" => Some(DefaultingType::List),
            _ => None,
        };
        match dt {
            None => errs.push(field_error(
                ErrorType::NotSupported,
                "defaultingType".into(),
                Some(quote(&self.defaulting_type)),
                "supported values: \"System\", \"List\"",
            )),
            Some(DefaultingType::System) if !self.default_constraints.is_empty() => {
                errs.push(field_error(
                    ErrorType::Invalid,
                    "defaultingType".into(),
                    Some(quote("System")),
                    "when .defaultConstraints are not empty",
                ))
            }
            _ => {}
        }
        for (i, c) in self.default_constraints.iter().enumerate() {
            let p = format!("defaultConstraints[{i}]");
            if c.max_skew <= 0 {
                errs.push(field_error(
                    ErrorType::Invalid,
                    format!("{p}.maxSkew"),
                    Some(c.max_skew.to_string()),
                    "not in valid range (0, inf)",
                ));
            }
            if c.topology_key.is_empty() {
                errs.push(field_error(
                    ErrorType::Required,
                    format!("{p}.topologyKey"),
                    None,
                    "can not be empty",
                ));
            } else {
                for msg in is_qualified_name(&c.topology_key) {
                    errs.push(field_error(
                        ErrorType::Invalid,
                        format!("{p}.topologyKey"),
                        Some(quote(&c.topology_key)),
                        &msg,
                    ));
                }
            }
            match c.when_unsatisfiable.as_str() {
                "" => errs.push(field_error(
                    ErrorType::Required,
                    format!("{p}.whenUnsatisfiable"),
                    None,
                    "can not be empty",
                )),
                "DoNotSchedule" | "ScheduleAnyway" => {}
                o => errs.push(field_error(
                    ErrorType::NotSupported,
                    format!("{p}.whenUnsatisfiable"),
                    Some(quote(o)),
                    "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                )),
            }
            if c.label_selector.is_some() {
                errs.push(field_error(
                    ErrorType::Forbidden,
                    format!("{p}.labelSelector"),
                    None,
                    "constraint must not define a selector, as they deduced for each pod",
                ));
            }
            let repeated = self.default_constraints[..i].iter().any(|o| {
                o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
            });
            if repeated {
                errs.push(field_error(
                    ErrorType::Duplicate,
                    format!("defaultConstraints[{i}]"),
                    Some(quote(&format!(
                        "{{{}, {}}}",
                        c.topology_key, c.when_unsatisfiable
                    ))),
                    "",
                ));
            }
        }
        // utilerrors.Aggregate: duplicates removed, one message alone, else `[a, b]`.
        let mut seen = Vec::new();
        errs.retain(|e| {
            if seen.contains(e) {
                false
            } else {
                seen.push(e.clone());
                true
            }
        });
        match errs.len() {
            0 => Ok(dt.unwrap_or(DefaultingType::System)),
            1 => Err(errs.remove(0)),
            _ => Err(format!("[{}]", errs.join(", "))),
        }
    }
}

fn policy(p: Option<&str>, default: NodeInclusionPolicy) -> NodeInclusionPolicy {
    match p {
        None => default,
        Some("Honor") => NodeInclusionPolicy::Honor,
        Some(_) => NodeInclusionPolicy::Ignore,
    }
}

fn action(s: &str) -> UnsatisfiableConstraintAction {
    if s == "ScheduleAnyway" {
        UnsatisfiableConstraintAction::ScheduleAnyway
    } else {
        UnsatisfiableConstraintAction::DoNotSchedule
    }
}

/// kube's `systemDefaultConstraints`.
fn system_default_constraints() -> Vec<TopologySpreadConstraint> {
    [(LABEL_HOSTNAME, 3), (LABEL_TOPOLOGY_ZONE, 5)]
        .into_iter()
        .map(|(key, skew)| TopologySpreadConstraint {
            max_skew: skew,
            topology_key: Sym::new(key),
            when_unsatisfiable: UnsatisfiableConstraintAction::ScheduleAnyway,
            label_selector: None,
            min_domains: None,
            node_affinity_policy: NodeInclusionPolicy::Honor,
            node_taints_policy: NodeInclusionPolicy::Ignore,
            match_label_keys: Vec::new(),
        })
        .collect()
}

/// The plugin. Stateless between cycles; everything per pod lives in the cycle state.
pub(crate) struct PodTopologySpread {
    system_defaulted: bool,
    /// The default constraints (selectors unset: they come from the client per pod).
    default_constraints: Vec<TopologySpreadConstraint>,
    client: Option<Arc<dyn ClusterClient>>,
    /// `kubernetes.io/hostname`, interned once.
    hostname: Sym,
    /// PreFilter's domain counts, kept between cycles.
    pub(crate) kept_filter: Kept<common::SpreadKey, common::DomainTally>,
    /// PreScore's domain counts, kept between cycles.
    pub(crate) kept_score: Kept<common::SpreadKey, common::DomainTally>,
}

impl std::fmt::Debug for PodTopologySpread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PodTopologySpread")
            .field("system_defaulted", &self.system_defaulted)
            .field("default_constraints", &self.default_constraints)
            .finish()
    }
}

impl PodTopologySpread {
    /// Builds the plugin from validated args. `client` gives the default selectors; without
    /// one, default constraints never apply.
    pub(crate) fn new(
        args: &PodTopologySpreadArgs,
        client: Option<Arc<dyn ClusterClient>>,
    ) -> Result<PodTopologySpread, String> {
        let dt = args.validate()?;
        let (system_defaulted, default_constraints) = match dt {
            DefaultingType::System => (true, system_default_constraints()),
            DefaultingType::List => (
                false,
                args.default_constraints
                    .iter()
                    .map(|c| TopologySpreadConstraint {
                        max_skew: c.max_skew,
                        topology_key: Sym::new(&c.topology_key),
                        when_unsatisfiable: action(&c.when_unsatisfiable),
                        label_selector: None,
                        min_domains: c.min_domains,
                        node_affinity_policy: policy(
                            c.node_affinity_policy.as_deref(),
                            NodeInclusionPolicy::Honor,
                        ),
                        node_taints_policy: policy(
                            c.node_taints_policy.as_deref(),
                            NodeInclusionPolicy::Ignore,
                        ),
                        match_label_keys: c.match_label_keys.iter().map(|k| Sym::new(k)).collect(),
                    })
                    .collect(),
            ),
        };
        Ok(PodTopologySpread {
            system_defaulted,
            default_constraints,
            client,
            hostname: Sym::new(LABEL_HOSTNAME),
            kept_filter: Kept::default(),
            kept_score: Kept::default(),
        })
    }

    /// kube's `buildDefaultConstraints`.
    fn build_default_constraints(
        &self,
        pod: &Pod,
        action: UnsatisfiableConstraintAction,
    ) -> Vec<Constraint> {
        let mut cs = filter_constraints(&self.default_constraints, &pod.labels, action);
        if cs.is_empty() {
            return cs;
        }
        let selector = self
            .client
            .as_ref()
            .and_then(|c| c.default_spread_selector(pod))
            .filter(|s| !s.requirements.is_empty());
        let Some(selector) = selector else {
            return Vec::new();
        };
        for c in &mut cs {
            c.selector = Some(selector.clone());
        }
        cs
    }

    /// kube's `getConstraints` (for `DoNotSchedule`) and the soft counterpart: the pod's own
    /// constraints of that kind, or the default ones when the pod has none at all.
    pub(crate) fn get_constraints(
        &self,
        pod: &Pod,
        action: UnsatisfiableConstraintAction,
    ) -> Vec<Constraint> {
        if !pod.spec.topology_spread_constraints.is_empty() {
            filter_constraints(&pod.spec.topology_spread_constraints, &pod.labels, action)
        } else {
            self.build_default_constraints(pod, action)
        }
    }

    /// kube's `isSchedulableAfterPodChange`.
    fn hint_after_pod_change(
        &self,
        pod: &Pod,
        old: Option<&Pod>,
        new: Option<&Pod>,
    ) -> QueueingHint {
        use QueueingHint::{Queue, QueueSkip};
        // Involved: the pod itself, or an assigned pod of its namespace.
        let involved =
            |p: &Pod| p.uid == pod.uid || (p.is_assigned() && p.namespace == pod.namespace);
        if new.is_some_and(|p| !involved(p)) || old.is_some_and(|p| !involved(p)) {
            return QueueSkip;
        }
        let constraints = self.get_constraints(pod, UnsatisfiableConstraintAction::DoNotSchedule);
        match (old, new) {
            (Some(o), Some(n)) => {
                if pod.uid == n.uid
                    && o.spec.tolerations != n.spec.tolerations
                    && constraints
                        .iter()
                        .any(|c| c.node_taints_policy == NodeInclusionPolicy::Honor)
                {
                    return Queue;
                }
                if o.labels == n.labels {
                    return QueueSkip;
                }
                if constraints
                    .iter()
                    .any(|c| c.selects(&o.labels) != c.selects(&n.labels))
                {
                    Queue
                } else {
                    QueueSkip
                }
            }
            (None, Some(p)) | (Some(p), None) => {
                if any_constraint_selects(&constraints, &p.labels) {
                    Queue
                } else {
                    QueueSkip
                }
            }
            // No object to judge by.
            (None, None) => Queue,
        }
    }

    /// kube's `isSchedulableAfterNodeChange`.
    fn hint_after_node_change(
        &self,
        pod: &Pod,
        old: Option<&crate::api::Node>,
        new: Option<&crate::api::Node>,
    ) -> QueueingHint {
        use QueueingHint::{Queue, QueueSkip};
        let constraints = self.get_constraints(pod, UnsatisfiableConstraintAction::DoNotSchedule);
        let old_match = old.is_some_and(|n| node_has_all_keys(&n.labels, &constraints));
        let new_match = new.is_some_and(|n| node_has_all_keys(&n.labels, &constraints));
        match (old, new) {
            (Some(o), Some(n)) => {
                if old_match != new_match {
                    return Queue;
                }
                if new_match
                    && (topology_labels_changed(&o.labels, &n.labels, &constraints)
                        || o.taints != n.taints)
                {
                    return Queue;
                }
                QueueSkip
            }
            (None, Some(_)) => {
                if new_match {
                    Queue
                } else {
                    QueueSkip
                }
            }
            (Some(_), None) => {
                if old_match {
                    Queue
                } else {
                    QueueSkip
                }
            }
            (None, None) => Queue,
        }
    }
}

impl Plugin for PodTopologySpread {
    fn signs_pods(&self) -> bool {
        true
    }
    fn sign_pod(
        &self,
        pod: &crate::api::Pod,
        _sig: &mut SignFragments,
    ) -> Result<(), &'static str> {
        // kube: spreading depends on every node of a domain, not on one node.
        if !pod.spec.topology_spread_constraints.is_empty() {
            return Err("pods with topology constraints are not signable");
        }
        if self.system_defaulted || !self.default_constraints.is_empty() {
            return Err("pods with default topology constraints are not signable");
        }
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_filter(self: Arc<Self>) -> Option<Arc<dyn PreFilterPlugin>> {
        Some(self)
    }
    fn into_filter(self: Arc<Self>) -> Option<Arc<dyn FilterPlugin>> {
        Some(self)
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl PreFilterPlugin for PodTopologySpread {
    fn pre_filter(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        snapshot: &Snapshot,
    ) -> (Option<PreFilterResult>, Status) {
        let s = self.cal_pre_filter_state(pod, snapshot);
        if s.constraints.is_empty() {
            return (None, Status::skip());
        }
        state.write(filtering::PRE_FILTER_STATE_KEY, s);
        (None, Status::success())
    }
    fn pre_filter_extensions(&self) -> Option<&dyn PreFilterExtensions> {
        Some(self)
    }
}

impl PreFilterExtensions for PodTopologySpread {
    fn add_pod(&self, state: &mut CycleState, pod: &Pod, to_add: &Pod, node: &NodeInfo) -> Status {
        self.add_or_remove(state, pod, to_add, node, 1)
    }
    fn remove_pod(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        to_remove: &Pod,
        node: &NodeInfo,
    ) -> Status {
        self.add_or_remove(state, pod, to_remove, node, -1)
    }
}

impl FilterPlugin for PodTopologySpread {
    fn filter(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Status {
        self.filter_node(state, node)
    }
}

impl PreScorePlugin for PodTopologySpread {
    /// The feasible nodes give the domains and the normalizing weights of the soft
    /// constraints: read only when the pod has some (none: PreScore skips).
    fn pre_score_reads_nodes(&self, pod: &Pod, _: &Snapshot) -> bool {
        !self
            .get_constraints(pod, UnsatisfiableConstraintAction::ScheduleAnyway)
            .is_empty()
    }
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        nodes: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status {
        self.pre_score_impl(state, pod, nodes, snapshot)
    }
}

impl ScorePlugin for PodTopologySpread {
    fn score(&self, state: &CycleState, pod: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        self.score_impl(state, pod, node)
    }
    fn has_normalize(&self) -> bool {
        true
    }
    fn normalize_score(&self, state: &CycleState, _: &Pod, scores: &mut [i64]) -> Status {
        self.normalize_impl(state, scores)
    }
}

impl EnqueueExtensions for PodTopologySpread {
    /// kube 1.34 with QueueingHints: any pod's Add, UpdatePodLabel, UpdatePodToleration and
    /// Delete (the hint keeps the relevant ones), and Node Add, Delete, UpdateNodeLabel and
    /// UpdateNodeTaint.
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![
            ClusterEvent::new(
                EventResource::Pod,
                ActionType::ADD
                    .union(ActionType::UPDATE_POD_LABEL)
                    .union(ActionType::UPDATE_POD_TOLERATIONS)
                    .union(ActionType::DELETE),
            ),
            ClusterEvent::new(
                EventResource::Node,
                ActionType::ADD
                    .union(ActionType::DELETE)
                    .union(ActionType::UPDATE_NODE_LABEL)
                    .union(ActionType::UPDATE_NODE_TAINT),
            ),
        ]
    }

    fn queueing_hint(
        &self,
        event: &ClusterEvent,
        pod: &Pod,
        old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        fn node(o: &EventObject) -> Option<&crate::api::Node> {
            match o {
                EventObject::Node(n) => Some(n),
                _ => None,
            }
        }
        Ok(match event.resource {
            EventResource::Node => self.hint_after_node_change(pod, node(old), node(new)),
            EventResource::Pod | EventResource::AssignedPod | EventResource::UnscheduledPod => {
                self.hint_after_pod_change(pod, old.pod(), new.pod())
            }
            _ => QueueingHint::Queue,
        })
    }
}
