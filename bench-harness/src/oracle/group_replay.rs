//! The replay's pod-group lines (the protocol is in [`super`]'s module doc, the judge's
//! checks in [`super::groups`]): a cycle's end (`podGroup`), kube's placement choice scored
//! with tidegate's PlacementScore plugins, a group preemption's victims compared with
//! tidegate's, and a group preemption's nominations.

use super::{Line, Replay, groups};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use tidegate_engine::api::{Pod, Sym, convert};

/// What followed a group preemption in kube's record (see [`group_deletions`]).
#[derive(Clone, Debug, Default)]
pub(super) struct AfterGroupPreemption {
    /// The pods deleted (a `deleted` line, or `assigned` with a deletion timestamp).
    deleted: BTreeSet<String>,
    /// The pods back in kube's snapshot alive (`assigned` without a deletion timestamp).
    returned: BTreeSet<String>,
    /// An attempt followed, so kube's snapshot was read again after the preemption.
    attempted: bool,
    /// The window ended at another preemption or at the end of the record, not at the
    /// group's next cycle: deletions of this preemption may still have been in flight.
    cut: bool,
}

impl AfterGroupPreemption {
    /// kube's victims among the pods its simulation took out (`None`: not known, no attempt
    /// read kube's snapshot again): those deleted, and those that never came back (deleted
    /// before the next snapshot, so no line says so: they had left it for the simulation).
    fn victims<'a>(&self, simulated: impl Iterator<Item = &'a str>) -> Option<BTreeSet<String>> {
        self.attempted.then(|| {
            simulated
                .filter(|k| self.deleted.contains(*k) || !self.returned.contains(*k))
                .map(str::to_string)
                .collect()
        })
    }
}

/// How kube's group victims (as its record shows them) compare with tidegate's.
#[derive(Debug, PartialEq)]
enum VictimsVerdict {
    /// The record cannot tell (its window was cut before every deletion could show).
    NotJudged,
    Same,
    Explained(String),
    Disagree(String),
}

/// Compares kube's group victims `kube` (the pods the record shows deleted, or never back,
/// before the group's next cycle) with tidegate's `ours` on kube's placement. `cut`: the
/// window ended before the group's next cycle. `message`: the cycle's status message, whose
/// count of victims ([`preempted_count`]) is exact where the record is not: a deletion may
/// reach kube's cache after the group's next cycle began (the victim shows back, alive,
/// until after it). So tidegate's victims, a superset of the shown ones and as many as kube
/// counted, are explained; a count that differs from tidegate's is a disagreement even
/// when the shown sets are equal.
fn compare_victims(
    kube: &BTreeSet<String>,
    ours: &BTreeSet<String>,
    cut: bool,
    message: &str,
) -> VictimsVerdict {
    if cut && kube.is_subset(ours) && kube != ours {
        return VictimsVerdict::NotJudged;
    }
    let counted = preempted_count(message);
    if kube == ours && counted.is_none_or(|n| n == ours.len()) {
        return VictimsVerdict::Same;
    }
    if kube.is_subset(ours) && counted == Some(ours.len()) {
        return VictimsVerdict::Explained(format!(
            "kube's group preemption preempted {} victims, as tidegate's {ours:?} on kube's \
             placement; the record shows {kube:?} leave before the group's next cycle (the \
             other deletions reached kube's cache after it began)",
            ours.len()
        ));
    }
    let counted = counted.map_or(String::new(), |n| format!(" (its message: {n} victims)"));
    VictimsVerdict::Disagree(format!(
        "kube's group preemption evicted {kube:?}{counted}; tidegate's on kube's placement evicts {ours:?}"
    ))
}

/// The number of victims kube's group preemption chose, from its status message ("found a
/// placement for podgroup, preempting N victims"; `None` when the message has no count).
fn preempted_count(message: &str) -> Option<usize> {
    let (_, rest) = message.split_once("preempting ")?;
    let (n, _) = rest.split_once(" victims")?;
    n.parse().ok()
}

/// For each `podGroup` line whose group preemption nominated (by seq): what the record
/// shows from then until the group's next `podGroup` line, another preemption's
/// nomination, or the end of the record. The simulation's potential victims come back into
/// kube's snapshot when it ends (`assigned` lines), unless the API deleted them first; the
/// evicted ones that came back leave it when the API deletes them (`deleted`).
pub(super) fn group_deletions(lines: &[(usize, Line)]) -> HashMap<u64, AfterGroupPreemption> {
    let mut open: Option<(String, u64)> = None;
    let mut out: HashMap<u64, AfterGroupPreemption> = HashMap::new();
    for (_, l) in lines {
        let key = || format!("{}/{}", l.namespace, l.name);
        if let Some(a) = open.as_ref().and_then(|(_, seq)| out.get_mut(seq)) {
            let gone = match l.kind.as_str() {
                "deleted" => Some(true),
                "assigned" => Some(
                    l.pod
                        .as_ref()
                        .is_some_and(|p| p.metadata.deletion_timestamp.is_some()),
                ),
                _ => None,
            };
            match gone {
                Some(true) => {
                    a.deleted.insert(key());
                }
                Some(false) => {
                    a.returned.insert(key());
                }
                None => a.attempted |= l.kind == "decision",
            }
        }
        if matches!(l.kind.as_str(), "deleted" | "assigned" | "decision") {
            continue;
        }
        let group = || {
            format!(
                "{}/{}",
                l.namespace,
                l.pod_group.as_deref().unwrap_or(&l.name)
            )
        };
        let preempting = l
            .group
            .as_ref()
            .is_some_and(|g| g.pods.values().any(|p| p.nominated.is_some()));
        let closes = match l.kind.as_str() {
            "podGroup" => preempting || open.as_ref().is_some_and(|(g, _)| *g == group()),
            "nominated" => {
                l.node.as_deref().is_some_and(|n| !n.is_empty())
                    && open
                        .as_ref()
                        .is_none_or(|(g, _)| l.pod_group.is_none() || *g != group())
            }
            _ => false,
        };
        if !closes {
            continue;
        }
        if let Some((g, seq)) = open.take() {
            out.get_mut(&seq).expect("opened").cut = !(l.kind == "podGroup" && g == group());
        }
        if l.kind == "podGroup" && preempting {
            open = Some((group(), l.seq));
            out.insert(l.seq, AfterGroupPreemption::default());
        }
    }
    if let Some((_, seq)) = open {
        out.get_mut(&seq).expect("opened").cut = true;
    }
    out
}

impl Replay {
    /// The end of a pod group cycle: judged ([`groups::judge_group`]), then kube's placement
    /// checked on tidegate's state: each member kube sent to binding fits on its node with
    /// the other members where kube put them.
    pub(super) fn group_end(&mut self, line: &Line) -> Result<(), String> {
        let group = line.pod_group.clone().unwrap_or_else(|| line.name.clone());
        let gkey = format!("{}/{group}", line.namespace);
        let attempts = self.cycles.remove(&gkey).unwrap_or_default();
        let g = line
            .group
            .as_ref()
            .ok_or_else(|| format!("podGroup {gkey}: no result recorded"))?;
        self.report.group_cycles += 1;
        let members: BTreeSet<&str> = g.pods.keys().map(String::as_str).collect();
        let before = self
            .bound
            .iter()
            .filter(|(k, p)| {
                k.split_once('/')
                    .is_some_and(|(ns, name)| ns == line.namespace && !members.contains(name))
                    && p.spec.scheduling_group.as_deref() == Some(group.as_str())
            })
            .count();
        let v = groups::judge_group(g, &attempts, before);
        self.report.groups_scheduled += usize::from(v.scheduled);
        self.report.group_preemptions += usize::from(v.preempting);
        let at = format!("#{} podGroup {gkey}", line.seq);
        for d in v.disagreements {
            self.report.disagreements.push(format!("{at}: {d}"));
        }
        if let Some(why) = v.error {
            self.report.explained.push(format!("{at}: {why}"));
        }
        let simulated_out = std::mem::take(&mut self.simulated_out);
        if v.preempting {
            self.judge_group_victims(&at, line, g, &attempts, &simulated_out);
        }
        // C (second half): kube's placement, on tidegate's state after the cycle, member by
        // member in the order kube's cycle placed them: each fits on its node beside the
        // members placed before it (a later member may change what an earlier one needed:
        // a required affinity the first pod of a series met by matching itself, a spread's
        // skew).
        let order = |name: &str| {
            attempts
                .iter()
                .rposition(|a| a.pod == name && g.pods[name].node.as_deref() == Some(&a.kube_node))
                .unwrap_or(usize::MAX)
        };
        let mut placed: Vec<(&String, &String)> = g
            .pods
            .iter()
            .filter_map(|(name, p)| p.node.as_ref().map(|n| (name, n)))
            .collect();
        placed.sort_by_key(|(name, _)| order(name));
        self.drop_undone_trials(&at, line, g)?;
        let mut held = Vec::new();
        // Out of tidegate's state first: kube scores the placements after undoing every
        // member (check E), and the members fit one by one after that (C).
        for (name, node) in &placed {
            let key = format!("{}/{name}", line.namespace);
            match self.bound.get(&key).cloned() {
                Some(bound) => {
                    self.sched.on_pod_delete(&bound);
                    held.push((name, node, key, bound));
                }
                None => self.report.disagreements.push(format!(
                    "{at}: kube sent {name} to binding on {node}; the record never placed it there"
                )),
            }
        }
        if let Some(choice) = groups::placement_choice(g, &attempts, before) {
            self.judge_placement(&at, line, g, &choice);
        }
        // kube's cycle ends by undoing every placement it made (`runRootSchedulingAlgorithm`
        // reverts all, last first), then commits each member it sends to binding by running
        // Reserve again on the state its evaluation left (`prepareForBindingCycle`). So a
        // member's volumes are undone even where the recorder saw no `reverted` line (the
        // member was back in kube's cache before the next snapshot): VolumeBinding's second
        // Reserve assumes no static binding anew (the volume it carries already names the
        // claim), and the volume is free in kube's assume cache until the API shows the
        // binding.
        for (_, _, key, _) in held.iter().rev() {
            if let Some(p) = self.pods.get(key).cloned() {
                self.volumes.unreserve(&self.sched, key, &p);
            }
        }
        // The members share one cycle's data, as in kube's cycle (DynamicResources: a
        // group claim's allocation in flight, reserved in kube's cycle, reused by all).
        let cycle = Arc::new(tidegate_engine::PodGroupCycleData::adopting_in_flight());
        for (name, node, key, bound) in held {
            self.report.group_placements_checked += 1;
            let pending = self
                .pods
                .get(&key)
                .cloned()
                .unwrap_or_else(|| bound.clone());
            let mut kept = self.volumes.undone_on(&key, Sym::new(node));
            let fits =
                self.sched
                    .fits_member(&pending, Sym::new(node), cycle.clone(), kept.as_mut());
            self.sched.on_pod_add(bound);
            if fits != Some(true) {
                self.report.disagreements.push(format!(
                    "{at}: kube placed {name} on {node}; tidegate finds it does not fit there beside the group's members placed before it ({fits:?})"
                ));
            }
        }
        Ok(())
    }

    /// The in-flight allocations of the placements kube tried and undid, recorded before
    /// the cycle's end, go ([`super::dra_replay::DraObjects::drop_undone_trials`]).
    fn drop_undone_trials(
        &mut self,
        at: &str,
        line: &Line,
        g: &groups::GroupLine,
    ) -> Result<(), String> {
        let ns = &line.namespace;
        let pod = |name: &str| self.pods.get(&format!("{ns}/{name}"));
        let sent: Vec<(&Pod, Option<&str>)> = (g.pods.iter())
            .filter_map(|(name, p)| Some((&**pod(name)?, p.node.as_deref())))
            .collect();
        let others: Vec<&Pod> = (self.bound.iter())
            .filter(|(k, _)| {
                k.split_once('/')
                    .is_some_and(|(n, name)| n == ns && !g.pods.contains_key(name))
            })
            .map(|(_, p)| &**p)
            .collect();
        let dropped = self
            .dra
            .drop_undone_trials(&self.sched, &self.nodes, &sent, &others)?;
        if !dropped.is_empty() {
            self.report.explained.push(format!(
                "{at}: {dropped:?} in flight for a placement kube tried and undid (recorded before the cycle's end): dropped"
            ));
        }
        Ok(())
    }

    /// Check E (`oracle/groups.rs`): tidegate's PlacementScore plugins over the feasible
    /// placements; the one kube kept must be top-scored.
    fn judge_placement(
        &mut self,
        at: &str,
        line: &Line,
        g: &groups::GroupLine,
        choice: &groups::PlacementChoice,
    ) {
        let Some(group) = self.group_object(g) else {
            return;
        };
        let pod = |name: &str| {
            self.pods
                .get(&format!("{}/{name}", line.namespace))
                .cloned()
        };
        let Some(placements) = choice
            .feasible
            .iter()
            .zip(&choice.nodes)
            .map(|(p, nodes)| {
                let members = p
                    .iter()
                    .map(|(name, node)| pod(name).map(|p| (p, Sym::new(node))))
                    .collect::<Option<Vec<_>>>()?;
                Some((nodes.iter().map(|n| Sym::new(n)).collect(), members))
            })
            .collect::<Option<Vec<(Vec<Sym>, Vec<_>)>>>()
        else {
            return;
        };
        let first = placements.iter().flat_map(|(_, m)| m).next();
        let Some(profile) = first.map(|(p, _)| p.clone()) else {
            return;
        };
        match self.sched.score_placements(group, &profile, &placements) {
            None => {}
            Some(Err(e)) => self
                .report
                .disagreements
                .push(format!("{at}: tidegate's PlacementScore failed: {e}")),
            Some(Ok(scores)) => {
                self.report.placements_scored += 1;
                if let Some(d) = groups::judge_placement_scores(choice, &scores) {
                    self.report.disagreements.push(format!("{at}: {d}"));
                }
            }
        }
    }

    /// Check F (`oracle/groups.rs`): kube's group preemption's victims are the pods its
    /// simulation took out that were deleted after it or never came back
    /// ([`AfterGroupPreemption::victims`]); tidegate's, on the state before the
    /// simulation with kube's simulated placement (the members' nominated nodes, in the order
    /// the simulation placed them), must be the same pods. When the record does not show
    /// every deletion (the window was cut: see [`group_deletions`]), fewer victims than
    /// tidegate's are not judged; kube's count in the cycle's message decides the rest
    /// ([`compare_victims`]).
    fn judge_group_victims(
        &mut self,
        at: &str,
        line: &Line,
        g: &groups::GroupLine,
        attempts: &[groups::Attempt],
        simulated_out: &[Arc<Pod>],
    ) {
        let Some(after) = self.group_deletions.get(&line.seq).cloned() else {
            return;
        };
        if simulated_out.is_empty() {
            return; // an ongoing preemption: nothing simulated, nothing evicted
        }
        let Some(group) = self.group_object(g) else {
            return;
        };
        let ns = &line.namespace;
        let members: Vec<Arc<Pod>> = g
            .pods
            .keys()
            .filter_map(|name| self.pods.get(&format!("{ns}/{name}")).cloned())
            .collect();
        let order = |name: &str, node: &str| {
            attempts
                .iter()
                .rposition(|a| a.simulation && a.pod == name && a.kube_node == node)
                .unwrap_or(usize::MAX)
        };
        let mut nominated: Vec<(&String, &String)> = g
            .pods
            .iter()
            .filter_map(|(name, p)| p.nominated.as_ref().map(|n| (name, n)))
            .collect();
        nominated.sort_by_key(|(name, node)| order(name, node));
        let placed: Vec<(Arc<Pod>, Sym)> = nominated
            .iter()
            .filter_map(|(name, node)| {
                self.pods
                    .get(&format!("{ns}/{name}"))
                    .map(|p| (p.clone(), Sym::new(node)))
            })
            .collect();
        let Some(mut kube) = after.victims(simulated_out.iter().map(|p| p.key.as_str())) else {
            return;
        };
        // A group preemption evicts only on the nodes its members are nominated to: a pod the
        // record shows deleted from another node in the same window (its simulation took
        // every lower-priority pod of every placement out) is another preemption's victim.
        let nominated_nodes: BTreeSet<&str> = nominated.iter().map(|(_, n)| n.as_str()).collect();
        let elsewhere: BTreeSet<String> = kube
            .iter()
            .filter(|k| {
                simulated_out
                    .iter()
                    .find(|p| p.key.as_str() == k.as_str())
                    .and_then(|p| p.node_name)
                    .is_some_and(|n| !nominated_nodes.contains(&*n.as_arc()))
            })
            .cloned()
            .collect();
        if !elsewhere.is_empty() {
            kube.retain(|k| !elsewhere.contains(k));
            self.report.explained.push(format!(
                "{at}: {elsewhere:?} left in the group preemption's window from nodes no member is nominated to: not its victims"
            ));
        }
        // The state kube's PostFilter started from: the simulated pods back, for the
        // evaluation only (those that return come back through their `assigned` lines).
        for p in simulated_out {
            self.sched.on_pod_add(p.clone());
        }
        let kept = |k: &tidegate_engine::api::PodKey| !kube.contains(k.as_str());
        let ours = self
            .sched
            .evaluate_pod_group_preemption(group, members, placed, &kept);
        for p in simulated_out {
            self.sched.on_pod_delete(p);
        }
        let ours = match ours {
            None => return,
            Some(Err(e)) => {
                self.report.disagreements.push(format!(
                    "{at}: kube's group preemption evicted {kube:?}; tidegate's on kube's placement fails: {e}"
                ));
                return;
            }
            Some(Ok(v)) => v
                .iter()
                .map(|p| p.key.as_str().to_string())
                .collect::<BTreeSet<_>>(),
        };
        match compare_victims(&kube, &ours, after.cut, &g.message) {
            VictimsVerdict::NotJudged => {}
            VictimsVerdict::Same => self.report.group_victims_checked += 1,
            VictimsVerdict::Explained(e) => {
                self.report.group_victims_checked += 1;
                self.report.explained.push(format!("{at}: {e}"));
            }
            VictimsVerdict::Disagree(d) => {
                self.report.group_victims_checked += 1;
                self.report.disagreements.push(format!("{at}: {d}"));
            }
        }
    }

    /// The cycle's PodGroup in tidegate's form (`None` when the line has none).
    fn group_object(&self, g: &groups::GroupLine) -> Option<Arc<tidegate_engine::api::PodGroup>> {
        convert::pod_group(g.pod_group.as_ref()?).ok().map(Arc::new)
    }

    /// kube's group preemption (PodGroupPostFilter) nominated a node for a member: held in
    /// tidegate's nominator as kube holds it. Not judged against a dry run: tidegate's
    /// preemption dry run is the single pod's; the victims still leave through `deleted`
    /// lines and the group's next cycle is judged as any.
    pub(super) fn group_nominated(&mut self, line: &Line) {
        let key = format!("{}/{}", line.namespace, line.name);
        let node = line.node.clone().unwrap_or_default();
        if let Some(pod) = self.pods.get(&key).cloned() {
            self.sched.hold_nomination(&pod, Sym::new(&node));
        }
        if !node.is_empty() {
            self.report.nominations += 1;
        }
    }
}

/// For each line of a record, the PodGroup object of the pod-group cycle it belongs to (a
/// member's decision, a reversal, a nomination, the cycle's end): the object the cycle's
/// `podGroup` line carries, read at the cycle's end, which is what the members' plugins read
/// (DynamicResources looks up a member's group for its claims). `None` for other lines.
pub(super) fn cycle_group_objects(
    lines: &[(usize, Line)],
) -> Vec<Option<Arc<tidegate_engine::api::PodGroup>>> {
    let mut next: HashMap<String, Arc<tidegate_engine::api::PodGroup>> = HashMap::new();
    let mut out = vec![None; lines.len()];
    for (i, (_, l)) in lines.iter().enumerate().rev() {
        if l.kind == "podGroup"
            && let Some(obj) = l.group.as_ref().and_then(|g| g.pod_group.as_ref())
            && let Ok(g) = tidegate_engine::api::convert::pod_group(obj)
        {
            next.insert(format!("{}/{}", l.namespace, l.name), Arc::new(g));
        }
        if let Some(g) = &l.pod_group {
            out[i] = next.get(&format!("{}/{g}", l.namespace)).cloned();
        }
    }
    out
}

impl Replay {
    /// Gives the scheduler the group object a cycle read, when it is new or changed.
    pub(super) fn know_pod_group(&mut self, g: Arc<tidegate_engine::api::PodGroup>) {
        let key = g.key.to_string();
        match self.groups.get(&key) {
            Some(old) if **old == *g => {}
            Some(old) => {
                self.sched.on_pod_group_update(old.clone(), g.clone());
                self.groups.insert(key, g);
            }
            None => {
                self.sched.on_pod_group_add(g.clone());
                self.groups.insert(key, g);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{VictimsVerdict, compare_victims, preempted_count};
    use std::collections::BTreeSet;

    fn set(pods: &[&str]) -> BTreeSet<String> {
        pods.iter().map(|p| p.to_string()).collect()
    }

    const ONE: &str = "pod group is unschedulable, pod group preemption: found a placement for podgroup, preempting 1 victims";

    #[test]
    fn kubes_count_of_victims_is_read_from_its_message() {
        assert_eq!(preempted_count(ONE), Some(1));
        assert_eq!(
            preempted_count(&ONE.replace("1 victims", "12 victims")),
            Some(12)
        );
        assert_eq!(
            preempted_count("ongoing preemption on nominated nodes"),
            None
        );
    }

    #[test]
    fn victims_compare_by_the_record_and_by_kubes_count() {
        let (a, ab) = (set(&["ns/a"]), set(&["ns/a", "ns/b"]));
        assert_eq!(compare_victims(&a, &a, false, ONE), VictimsVerdict::Same);
        assert_eq!(
            compare_victims(&a, &a, false, "no count"),
            VictimsVerdict::Same
        );
        // A deletion shown late: kube counted as many as tidegate evicts.
        let two = ONE.replace("1 victims", "2 victims");
        assert!(matches!(
            compare_victims(&a, &ab, false, &two),
            VictimsVerdict::Explained(_)
        ));
        assert!(matches!(
            compare_victims(&set(&[]), &a, false, ONE),
            VictimsVerdict::Explained(_)
        ));
        // Fewer counted, more shown, or a count that differs from equal sets: disagreements.
        assert!(matches!(
            compare_victims(&a, &ab, false, ONE),
            VictimsVerdict::Disagree(_)
        ));
        assert!(matches!(
            compare_victims(&a, &ab, false, "no count"),
            VictimsVerdict::Disagree(_)
        ));
        assert!(matches!(
            compare_victims(&ab, &a, false, ONE),
            VictimsVerdict::Disagree(_)
        ));
        assert!(matches!(
            compare_victims(&a, &a, false, &two),
            VictimsVerdict::Disagree(_)
        ));
        let zero = ONE.replace("1 victims", "0 victims");
        assert!(matches!(
            compare_victims(&set(&[]), &a, false, &zero),
            VictimsVerdict::Disagree(_)
        ));
        // A cut window with fewer shown is not judged.
        assert_eq!(
            compare_victims(&a, &ab, true, ONE),
            VictimsVerdict::NotJudged
        );
    }
}
