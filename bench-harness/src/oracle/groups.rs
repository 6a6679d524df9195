//! The differential oracle's judge of pod group scheduling cycles (KEP-4671, kube v1.37.2's
//! `podGroupCycle`), against kube's record (`kube-reference/perf/group.go`).
//!
//! kube schedules a group's queued members in one cycle: for each placement it tries (the
//! whole cluster, or with TopologyAwareWorkloadScheduling one per topology domain), it runs
//! the ordinary per-pod algorithm on each member in turn, assuming the feasible ones in its
//! snapshot, and stops early when the group's PlacementFeasible plugins (GangScheduling: the
//! quorum) say it cannot succeed; the group succeeds when some placement schedules at least
//! `minCount` members counting those already scheduled (a gang), or at least one (`basic`);
//! otherwise nothing of the cycle binds. The record has each member attempt as an ordinary
//! `decision` line (with `podGroup`), judged per pod like any other, and the cycle's end as
//! one `podGroup` line: the root status and, per member, the node it went to binding on or
//! the status it went back to the queue with.
//!
//! Protocol of this judge, at each `podGroup` line:
//!
//! - the cycle's attempts are split into passes (a pass ends when a member is attempted a
//!   second time: kube's next placement, or its PodGroupPostFilter's simulation);
//! - A. all or nothing: a rejected cycle (any code but Success) binds no member;
//! - B. the group's verdict: tidegate's per-pod verdicts (feasible or not, on the same state
//!   as kube's attempt) meet the policy's quorum in some pass exactly when kube's cycle
//!   succeeded. A cycle that ended `Error` gave no verdict (a member's plugin failed, e.g.
//!   VolumeBinding's Reserve finding its volume `out of sync` because the informer delivered
//!   an earlier binding's write mid-cycle: a matter of kube's goroutines' timing), so B and D
//!   are not judged there and the cycle is reported as explained, as the replay does for a
//!   single pod's error other than a fit error. A cycle where kube's group preemption nominated nodes is judged on A alone
//!   (its simulation's passes run with victims removed; group preemption has no tidegate
//!   dry run to compare with yet, see `docs/feature-gates.md`);
//! - C. kube's placement: each member kube sent to binding went to a node one of its attempts
//!   in this cycle chose, and (in [`super`], on tidegate's state after the cycle) fits there
//!   given the other members where kube put them;
//! - D. the same plugins: each member kube sent back with a fit error names the plugins
//!   that rejected it in one of its attempts of the cycle (kube reports one placement's
//!   status, not always the last one's), and tidegate rejects that attempt with the same.
//! - E. kube's placement is top-scored: when the cycle tried several placements (one pass
//!   each) and more than one meets the policy by tidegate's verdicts, tidegate's
//!   PlacementScore plugins score each such pass's proposed assignments (the members
//!   tidegate finds feasible there, on kube's nodes), and the pass kube's bindings come from
//!   must have the top total ([`placement_choice`] here, scored in [`super`]);
//! - F. the same victims (in [`super`]): when kube's group preemption nominated nodes, the
//!   pods its simulation took out of the snapshot that were deleted after it, or never came
//!   back, are its victims;
//!   tidegate's group preemption, run on the state before the simulation with kube's
//!   simulated placement, must evict the same pods (kube's start-time ties broken kube's
//!   way: see `Scheduler::evaluate_pod_group_preemption`), and as many as the cycle's
//!   message counts ("preempting N victims"). A deletion may reach kube's cache after the
//!   group's next cycle began: fewer shown than tidegate's, with kube's count equal to
//!   tidegate's, is explained (`compare_victims`).
//!
//! The per-pod checks (feasible nodes, scores, rejecting plugins of each attempt) are the
//! replay's ordinary ones; this adds what only the group has: the quorum, all-or-nothing and
//! the final placement.

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// A `podGroup` line's result (`GroupResult` in `kube-reference/perf/record.go`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct GroupLine {
    pub code: String,
    pub message: String,
    pub plugin: String,
    pub pods: BTreeMap<String, GroupPodLine>,
    #[serde(rename = "podGroupObject")]
    pub pod_group: Option<k8s_openapi::api::scheduling::v1beta1::PodGroup>,
}

/// One member's end of the cycle (`GroupPod`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct GroupPodLine {
    pub node: Option<String>,
    pub plugins: Vec<String>,
    pub message: String,
    pub nominated: Option<String>,
}

/// One member attempt of a cycle, as both sides saw it.
#[derive(Clone, Debug)]
pub(super) struct Attempt {
    pub pod: String,
    /// kube's node ("" when the attempt failed).
    pub kube_node: String,
    /// tidegate found a feasible node, and the plugins that rejected it where it did not.
    pub feasible: bool,
    pub plugins: Vec<&'static str>,
    /// The nodes of the placement kube's cycle assumed for the attempt (empty: every node).
    pub placement: Vec<String>,
    /// The PreFilter plugin that rejected the pod in tidegate's evaluation, if one did (the
    /// PreFilter plugins after it did not run).
    pub pre_filter: Option<&'static str>,
    /// Made in PodGroupPostFilter's simulation (victims removed): not one of the cycle's
    /// own passes.
    pub simulation: bool,
}

/// The group's policy as the judge needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Policy {
    Basic,
    Gang { min_count: i32 },
}

impl Policy {
    pub(super) fn of(line: &GroupLine) -> Policy {
        match line
            .pod_group
            .as_ref()
            .and_then(|g| g.spec.scheduling_policy.gang.as_ref())
        {
            Some(g) => Policy::Gang {
                min_count: g.min_count,
            },
            None => Policy::Basic,
        }
    }

    /// Whether `scheduled` members (this pass's and those scheduled before) meet the policy.
    fn met(self, this_pass: usize, before: usize) -> bool {
        match self {
            Policy::Basic => this_pass >= 1,
            Policy::Gang { min_count } => {
                this_pass >= 1 && (this_pass + before) as i64 >= min_count as i64
            }
        }
    }
}

/// The cycle's attempts split into passes: a pass ends before a member's second attempt.
pub(super) fn passes(attempts: &[Attempt]) -> Vec<&[Attempt]> {
    let mut out = Vec::new();
    let (mut start, mut seen) = (0, BTreeSet::new());
    for (i, a) in attempts.iter().enumerate() {
        if !seen.insert(a.pod.as_str()) {
            out.push(&attempts[start..i]);
            start = i;
            seen = BTreeSet::from([a.pod.as_str()]);
        }
    }
    if start < attempts.len() {
        out.push(&attempts[start..]);
    }
    out
}

/// What the judge found for one cycle.
#[derive(Debug, Default)]
pub(super) struct GroupVerdict {
    /// kube's cycle succeeded.
    pub scheduled: bool,
    /// kube's group preemption nominated nodes (checks B and D not made).
    pub preempting: bool,
    /// kube's cycle ended `Error` (checks B and D not made): why, as a sentence.
    pub error: Option<String>,
    /// The disagreements (A to D), each a sentence.
    pub disagreements: Vec<String>,
}

/// Judges one cycle (checks A, B, C's first half and D of the module doc); `before` is the
/// count of the group's members already bound outside this cycle.
pub(super) fn judge_group(line: &GroupLine, all: &[Attempt], before: usize) -> GroupVerdict {
    let own: Vec<Attempt> = all.iter().filter(|a| !a.simulation).cloned().collect();
    let attempts = own.as_slice();
    let scheduled = line.code == "Success";
    let preempting = line.pods.values().any(|p| p.nominated.is_some());
    let mut out = GroupVerdict {
        scheduled,
        preempting,
        ..GroupVerdict::default()
    };
    let bound: Vec<(&str, &str)> = line
        .pods
        .iter()
        .filter_map(|(n, p)| p.node.as_deref().map(|node| (n.as_str(), node)))
        .collect();
    // A. All or nothing.
    if !scheduled && !bound.is_empty() {
        out.disagreements.push(format!(
            "kube's cycle ended {} yet sent {} to binding",
            line.code,
            fmt_pairs(&bound)
        ));
    }
    // C (first half). Each member bound where one of its attempts placed it.
    for &(pod, node) in &bound {
        if !attempts.iter().any(|a| a.pod == pod && a.kube_node == node) {
            out.disagreements.push(format!(
                "kube sent {pod} to binding on {node}, where none of its attempts in the cycle placed it"
            ));
        }
    }
    if preempting {
        return out;
    }
    if line.code == "Error" {
        out.error = Some(format!(
            "kube's cycle ended Error ({}): an error, not a verdict; the quorum and the plugins are not judged",
            line.message
        ));
        return out;
    }
    // B. The quorum, from tidegate's per-pod verdicts.
    let policy = Policy::of(line);
    let passes = passes(attempts);
    let feasible: Vec<usize> = passes
        .iter()
        .map(|p| p.iter().filter(|a| a.feasible).count())
        .collect();
    let ours = feasible.iter().any(|&f| policy.met(f, before));
    if ours != scheduled && !attempts.is_empty() {
        out.disagreements.push(format!(
            "kube's cycle ended {} ({}), tidegate's per-pod verdicts {} the {policy:?} quorum ({before} scheduled before; feasible per pass {feasible:?})",
            line.code,
            line.message,
            if ours { "meet" } else { "do not meet" }
        ));
    }
    // D. The same plugins. kube sends each member back with the status of one of its
    // attempts (with several placements, the one kube reports: not always the last), so
    // each member's plugins must be those tidegate found rejecting it in one of its
    // attempts of the cycle. A member sent back because the group (not the pod) failed
    // carries the group's status, which names no plugin or the PlacementFeasible one.
    if !scheduled {
        for (pod, p) in &line.pods {
            // A PodGroupPostFilter plugin's error is every member's status (kube's
            // `applyPodGroupPostFilterResult`), not one of its attempts'.
            if let Some(plugin) = post_filter_error(&p.message) {
                if let Some(d) = judge_post_filter_error(plugin, &p.message, attempts) {
                    out.disagreements
                        .push(format!("kube sent {pod} back with {d}"));
                }
                continue;
            }
            let kube: BTreeSet<&str> = p
                .plugins
                .iter()
                .map(String::as_str)
                .filter(|x| *x != line.plugin)
                .collect();
            if kube.is_empty() {
                continue;
            }
            let ours: Vec<BTreeSet<&str>> = attempts
                .iter()
                .filter(|a| a.pod == *pod && !a.feasible)
                .map(|a| a.plugins.iter().copied().collect())
                .collect();
            if !ours.contains(&kube) {
                out.disagreements.push(format!(
                    "kube sent {pod} back rejected by {kube:?}; tidegate's rejections of its attempts in the cycle: {ours:?}"
                ));
            }
        }
    }
    out
}

/// The plugin whose PodGroupPostFilter error a member's message is (the framework's
/// `error in "<plugin>" PodGroupPostFilter plugins: <error>`).
fn post_filter_error(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("error in \"")?;
    let (plugin, tail) = rest.split_once('"')?;
    tail.starts_with(" PodGroupPostFilter plugins: ")
        .then_some(plugin)
}

/// A PodGroupPostFilter error kube's cycle ended with, against tidegate's attempts.
/// DynamicResources' `not found` is the plugin finding no state of its own in the group's
/// cycle: no member's PreFilter reached it (an earlier PreFilter plugin rejected each).
fn judge_post_filter_error(plugin: &str, message: &str, attempts: &[Attempt]) -> Option<String> {
    const DRA: &str = "DynamicResources";
    if plugin != DRA || !message.ends_with(": not found") {
        return Some(format!(
            "the PodGroupPostFilter error {message:?}, which tidegate's judge does not model"
        ));
    }
    let reached = attempts
        .iter()
        .find(|a| a.pre_filter.is_none_or(|p| p == DRA))?;
    Some(format!(
        "{message:?} (no member's PreFilter reached {DRA}), yet tidegate's PreFilter of {} reached it",
        reached.pod
    ))
}

/// Check E's input: the cycle's passes as tidegate judges them.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct PlacementChoice {
    /// Per feasible pass (one meeting the policy by tidegate's verdicts): the members tidegate
    /// finds feasible there, with kube's node.
    pub feasible: Vec<Vec<(String, String)>>,
    /// Per feasible pass, its placement's nodes (empty: every node).
    pub nodes: Vec<Vec<String>>,
    /// Which of those kube's bindings come from (`feasible`'s indexes).
    pub chosen: Vec<usize>,
}

/// Check E's input (module doc), when there is a choice to judge: kube's cycle succeeded
/// without preemption and at least two passes meet the policy.
pub(super) fn placement_choice(
    line: &GroupLine,
    all: &[Attempt],
    before: usize,
) -> Option<PlacementChoice> {
    if line.code != "Success" || line.pods.values().any(|p| p.nominated.is_some()) {
        return None;
    }
    let own: Vec<Attempt> = all.iter().filter(|a| !a.simulation).cloned().collect();
    let policy = Policy::of(line);
    let feasible: Vec<&[Attempt]> = passes(&own)
        .into_iter()
        .filter(|p| policy.met(p.iter().filter(|a| a.feasible).count(), before))
        .collect();
    if feasible.len() < 2 {
        return None;
    }
    let bound: Vec<(&str, &str)> = line
        .pods
        .iter()
        .filter_map(|(n, p)| p.node.as_deref().map(|node| (n.as_str(), node)))
        .collect();
    let chosen = feasible
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            bound
                .iter()
                .all(|&(pod, node)| p.iter().any(|a| a.pod == pod && a.kube_node == node))
        })
        .map(|(i, _)| i)
        .collect();
    Some(PlacementChoice {
        feasible: feasible
            .iter()
            .map(|p| {
                p.iter()
                    .filter(|a| a.feasible)
                    .map(|a| (a.pod.clone(), a.kube_node.clone()))
                    .collect()
            })
            .collect(),
        nodes: feasible
            .iter()
            .map(|p| p.first().map(|a| a.placement.clone()).unwrap_or_default())
            .collect(),
        chosen,
    })
}

/// Check E's verdict on tidegate's `scores` of `choice.feasible`: a sentence when no pass
/// kube's bindings come from has the top total.
pub(super) fn judge_placement_scores(choice: &PlacementChoice, scores: &[i64]) -> Option<String> {
    let top = scores.iter().copied().max()?;
    if choice.chosen.iter().any(|&i| scores.get(i) == Some(&top)) {
        return None;
    }
    let picked: Vec<i64> = choice
        .chosen
        .iter()
        .filter_map(|&i| scores.get(i).copied())
        .collect();
    Some(format!(
        "kube kept a placement tidegate scores {picked:?} of the feasible placements' {scores:?} (top {top}; members placed per placement {:?})",
        choice.feasible.iter().map(Vec::len).collect::<Vec<_>>()
    ))
}

fn fmt_pairs(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(p, n)| format!("{p} on {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(pod: &str, kube_node: &str, feasible: bool, plugins: &[&'static str]) -> Attempt {
        Attempt {
            pod: pod.into(),
            kube_node: kube_node.into(),
            feasible,
            plugins: plugins.to_vec(),
            placement: Vec::new(),
            pre_filter: None,
            simulation: false,
        }
    }

    fn line(code: &str, gang: Option<i32>, pods: &[(&str, Option<&str>, &[&str])]) -> GroupLine {
        let json = serde_json::json!({
            "code": code,
            "pods": pods.iter().map(|(n, node, plugins)| (n.to_string(), serde_json::json!({"node": node, "plugins": plugins}))).collect::<serde_json::Map<_, _>>(),
            "podGroupObject": {
                "metadata": {"name": "pg-0", "namespace": "scenario-0"},
                "spec": {"schedulingPolicy": match gang {
                    Some(m) => serde_json::json!({"gang": {"minCount": m}}),
                    None => serde_json::json!({"basic": {}}),
                }}
            }
        });
        serde_json::from_value(json).unwrap()
    }

    /// kube v1.37.2 (`DynamicResources.PodGroupPostFilter` in
    /// pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go) errors with
    /// `not found` when no member's PreFilter reached it; every member carries that error.
    #[test]
    fn a_dynamic_resources_post_filter_error_is_judged_by_where_prefilter_stopped() {
        let mut l = line(
            "Unschedulable",
            Some(2),
            &[("a", None, &["DynamicResources"])],
        );
        l.pods.get_mut("a").unwrap().message =
            "error in \"DynamicResources\" PodGroupPostFilter plugins: not found".into();
        let stopped = |plugin| Attempt {
            pre_filter: Some(plugin),
            ..at("a", "", false, &["VolumeBinding"])
        };
        // VolumeBinding's PreFilter rejected the only attempt: DynamicResources' never ran.
        let v = judge_group(&l, &[stopped("VolumeBinding")], 1);
        assert!(v.disagreements.is_empty(), "{:?}", v.disagreements);
        // Its own PreFilter ran (and rejected): its state exists, so no such error.
        let v = judge_group(&l, &[stopped("DynamicResources")], 1);
        assert_eq!(v.disagreements.len(), 1, "{:?}", v.disagreements);
        assert!(v.disagreements[0].contains("reached it"));
        // A member whose PreFilter passed reached it too.
        let v = judge_group(&l, &[at("a", "", false, &["NodeResourcesFit"])], 1);
        assert_eq!(v.disagreements.len(), 1, "{:?}", v.disagreements);
    }

    /// kube v1.37.2 (`podGroupSchedulingDefaultAlgorithm` in
    /// pkg/scheduler/schedule_one_podgroup.go) ends the cycle `Error` when a member's
    /// algorithm errors (here VolumeBinding's Reserve, `passive_assume_cache.go`'s
    /// `out of sync`): no verdict to judge B or D against, yet A still holds.
    #[test]
    fn a_cycle_that_ended_error_is_explained_not_judged() {
        let mut l = line("Error", None, &[("a", None, &[]), ("b", None, &[])]);
        l.message = "failed to schedule other pod from a pod group: running Reserve plugin \"VolumeBinding\": \"pv-0\" is out of sync (stored: 1710, assume: 506)".into();
        let attempts = [at("a", "n1", true, &[]), at("b", "n1", true, &[])];
        let v = judge_group(&l, &attempts, 3);
        assert!(v.disagreements.is_empty(), "{:?}", v.disagreements);
        assert!(
            v.error
                .as_deref()
                .is_some_and(|e| e.contains("out of sync"))
        );
        // The same cycle ended Unschedulable is a verdict, and tidegate's disagrees with it.
        l.code = "Unschedulable".into();
        let v = judge_group(&l, &attempts, 3);
        assert!(v.error.is_none());
        assert_eq!(v.disagreements.len(), 1, "{:?}", v.disagreements);
        // An Error cycle still binds nothing (A).
        l.code = "Error".into();
        l.pods.get_mut("a").unwrap().node = Some("n1".into());
        let v = judge_group(&l, &attempts, 3);
        assert_eq!(v.disagreements.len(), 1, "{:?}", v.disagreements);
        assert!(v.disagreements[0].contains("sent a on n1 to binding"));
    }

    #[test]
    fn a_pass_ends_where_a_member_comes_again() {
        let a = [
            at("a", "n1", true, &[]),
            at("b", "n1", true, &[]),
            at("a", "n2", true, &[]),
            at("b", "", false, &["NodeResourcesFit"]),
        ];
        let p = passes(&a);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].len(), 2);
        assert_eq!(p[1][0].kube_node, "n2");
    }

    #[test]
    fn a_gang_that_meets_its_quorum_agrees_and_one_that_misses_it_disagrees() {
        let attempts = [at("a", "n1", true, &[]), at("b", "n2", true, &[])];
        let ok = line(
            "Success",
            Some(2),
            &[("a", Some("n1"), &[]), ("b", Some("n2"), &[])],
        );
        assert!(judge_group(&ok, &attempts, 0).disagreements.is_empty());
        // kube rejected the gang although tidegate finds both members feasible.
        let rejected = line(
            "Unschedulable",
            Some(2),
            &[("a", None, &[]), ("b", None, &[])],
        );
        let v = judge_group(&rejected, &attempts, 0);
        assert_eq!(v.disagreements.len(), 1, "{:?}", v.disagreements);
        assert!(v.disagreements[0].contains("meet"));
    }

    #[test]
    fn a_rejected_gang_that_binds_a_member_breaks_all_or_nothing() {
        let attempts = [
            at("a", "n1", true, &[]),
            at("b", "", false, &["TaintToleration"]),
        ];
        let l = line(
            "Unschedulable",
            Some(2),
            &[("a", Some("n1"), &[]), ("b", None, &["TaintToleration"])],
        );
        let v = judge_group(&l, &attempts, 0);
        assert!(
            v.disagreements.iter().any(|d| d.contains("sent a on n1")),
            "{:?}",
            v.disagreements
        );
    }

    #[test]
    fn members_scheduled_before_count_toward_the_quorum() {
        let attempts = [at("c", "n1", true, &[])];
        let l = line("Success", Some(3), &[("c", Some("n1"), &[])]);
        assert!(judge_group(&l, &attempts, 2).disagreements.is_empty());
        assert!(!judge_group(&l, &attempts, 1).disagreements.is_empty());
    }

    #[test]
    fn the_rejecting_plugins_of_a_rejected_group_are_compared() {
        let attempts = [
            at("a", "", false, &["NodeAffinity"]),
            at("b", "n1", true, &[]),
        ];
        let same = line(
            "Unschedulable",
            Some(2),
            &[("a", None, &["NodeAffinity"]), ("b", None, &[])],
        );
        assert!(judge_group(&same, &attempts, 0).disagreements.is_empty());
        let other = line(
            "Unschedulable",
            Some(2),
            &[("a", None, &["NodeResourcesFit"]), ("b", None, &[])],
        );
        let v = judge_group(&other, &attempts, 0);
        assert!(
            v.disagreements.iter().any(|d| d.contains("rejected by")),
            "{:?}",
            v.disagreements
        );
    }

    #[test]
    fn a_member_bound_where_no_attempt_placed_it_disagrees() {
        let attempts = [at("a", "n1", true, &[])];
        let l = line("Success", None, &[("a", Some("n2"), &[])]);
        let v = judge_group(&l, &attempts, 0);
        assert!(
            v.disagreements
                .iter()
                .any(|d| d.contains("none of its attempts"))
        );
    }

    #[test]
    fn the_attempts_of_a_preemption_simulation_are_not_the_cycles_own() {
        let mut sim = at("a", "n1", true, &[]);
        sim.simulation = true;
        let attempts = [at("a", "", false, &["NodeResourcesFit"]), sim];
        let l = line(
            "Unschedulable",
            Some(1),
            &[("a", None, &["NodeResourcesFit"])],
        );
        assert!(judge_group(&l, &attempts, 0).disagreements.is_empty());
    }

    #[test]
    fn kube_keeping_a_placement_with_fewer_members_than_another_disagrees() {
        // Two placements: the first places a and b, the second only a; a basic group.
        let attempts = [
            at("a", "n1", true, &[]),
            at("b", "n1", true, &[]),
            at("a", "n2", true, &[]),
            at("b", "", false, &["NodeResourcesFit"]),
        ];
        let best = line(
            "Success",
            None,
            &[("a", Some("n1"), &[]), ("b", Some("n1"), &[])],
        );
        let c = placement_choice(&best, &attempts, 0).expect("two feasible placements");
        assert_eq!(c.chosen, vec![0]);
        assert_eq!(
            c.feasible.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![2, 1]
        );
        // tidegate's PodGroupPodsCount, normalised: 100 for two members, 50 for one.
        assert_eq!(judge_placement_scores(&c, &[100, 50]), None);
        let worse = line(
            "Success",
            None,
            &[("a", Some("n2"), &[]), ("b", None, &["NodeResourcesFit"])],
        );
        let c = placement_choice(&worse, &attempts, 0).expect("two feasible placements");
        assert_eq!(c.chosen, vec![1]);
        let d = judge_placement_scores(&c, &[100, 50]).expect("a disagreement");
        assert!(d.contains("[50]"), "{d}");
        // A tie is kube's random pick, never a disagreement.
        assert_eq!(judge_placement_scores(&c, &[100, 100]), None);
    }

    #[test]
    fn one_feasible_placement_leaves_nothing_to_choose() {
        let attempts = [
            at("a", "n1", true, &[]),
            at("b", "n1", true, &[]),
            at("a", "", false, &["NodeAffinity"]),
            at("b", "", false, &["NodeAffinity"]),
        ];
        let l = line(
            "Success",
            Some(2),
            &[("a", Some("n1"), &[]), ("b", Some("n1"), &[])],
        );
        assert_eq!(placement_choice(&l, &attempts, 0), None);
    }

    #[test]
    fn a_basic_group_succeeds_with_any_member() {
        let attempts = [at("a", "", false, &["NodePorts"]), at("b", "n1", true, &[])];
        let l = line(
            "Success",
            None,
            &[("a", None, &["NodePorts"]), ("b", Some("n1"), &[])],
        );
        assert!(judge_group(&l, &attempts, 0).disagreements.is_empty());
    }
}
