//! Pod groups in the scheduling queue (kube v1.37.2's `scheduling_queue.go` pod-group parts,
//! `pod_group_member_pods.go`, `workload_forest.go` with v1.38's composite trees): with the
//! GenericWorkload gate on, a pod with `spec.schedulingGroup` is never queued on its own;
//! its group's [`QueuedPodGroupInfo`] is, and is popped as one entity.
//!
//! # Protocol (all under the queue lock)
//!
//! - A member whose PodGroup object is unknown waits in `incomplete` (kube's
//!   `incompletePodGroupPods`); the group's add moves its members in.
//! - A member whose group entity is queued joins it (`add_pod`, kube's
//!   `addToPodGroupIfExists`): the entity is taken out of its place and requeued with that
//!   place's strategy (activeQ: PreEnqueue again; backoffQ; unschedulable: stays).
//! - A member whose group was the last entity popped waits in `pending` (kube's
//!   `pendingPodGroupPods`) until the group's attempt ends (`add_attempted_pod_group`).
//! - Otherwise a new entity is made for it (timestamp: the pod's) and goes through
//!   PreEnqueue: every member runs the PreEnqueue plugins; one gated member gates the whole
//!   group (`gating_plugin`), which then waits in the unschedulable place until an event its
//!   gating plugin registered (the gang's quorum: UnscheduledPod/Add, PodGroup/Add) comes.
//! - Pop: the best active group (priority, then timestamp, as PrioritySort orders) competes
//!   with activeQ's best pod; each member is recorded in flight (no in-flight event marker:
//!   kube requeues a group by its status, not by hints).
//! - `add_attempted_pod_group` (kube's `AddAttemptedPodGroupIfNeeded`): members that failed
//!   come back through `add_unschedulable_if_not_present` into `pending`; then the group is
//!   rebuilt from `pending`: success → activeQ (timestamp kept when some member failed),
//!   rejection → unschedulable count +1, error → error count +1; backoffQ while backing off,
//!   else activeQ (PreEnqueue).
//! - Events: a group in the unschedulable place is requeued when any member is worth it
//!   (`isEntityWorthRequeuing`); a gated group only by an event its gating plugin registered.
//!
//! Invariant: every member pod the queue holds is in exactly one of: a queued entity's
//! members, `pending`, `incomplete`, or in flight; [`Groups::counts`] adds them up by place.

use super::hints::Strategy;
use super::*;
use crate::api::{PodGroup, PodGroupKey};
use crate::framework::pod_group::{PodGroupInfo, QueuedPodGroupInfo};
use crate::framework::pod_group_state::{ParentLinks, group_of};
use ahash::AHashSet;
use std::cmp::Reverse;
use std::collections::BTreeSet;

/// Where a queued group entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    Active,
    Backoff(Time),
    /// Unschedulable (gated when the entity's `gating_plugin` is set).
    Unschedulable,
}

/// What the queue hands the scheduler: a pod, or a pod group (kube's `QueuedEntityInfo`).
#[derive(Debug)]
pub enum QueuedEntity {
    Pod(QueuedPodInfo),
    PodGroup(Box<QueuedPodGroupInfo>),
}

type ActiveKey = (Reverse<i32>, Time, PodGroupKey);

#[derive(Default)]
pub(super) struct Groups {
    /// The PodGroup objects the queue has seen (kube's workload forest: these, the
    /// composite groups and the parent links).
    objects: AHashMap<PodGroupKey, Arc<PodGroup>>,
    composites: AHashMap<PodGroupKey, Arc<PodGroup>>,
    /// Parent composite group → its observed children (kind, name).
    children: ParentLinks,
    entities: AHashMap<PodGroupKey, (QueuedPodGroupInfo, Place)>,
    /// Member pod → its entity in `entities`: a lookup by the pod's key alone (`Activate`,
    /// `locate`) without a walk over every queued member. Kept where a member joins or
    /// leaves an entity (not by `take` and `put`, which requeue an entity with the same
    /// members: a large group requeued on every arrival would cost a pass over its members
    /// each time); a stale entry (a member now pending or incomplete) names an entity that
    /// no longer holds it, which every reader checks.
    member_of: AHashMap<PodKey, PodGroupKey>,
    /// Entities in the unschedulable place that no PreEnqueue plugin gates, and those gated,
    /// by gating plugin (kept by `put` and `take`): an event looks only at the entities it
    /// can move (the ungated ones, and those gated by a plugin that registered the event),
    /// not at every gated group.
    unschedulable: AHashSet<PodGroupKey>,
    gated_by: AHashMap<&'static str, AHashSet<PodGroupKey>>,
    /// Entities backing off (kept by `put` and `take`).
    backing_off: usize,
    active: BTreeSet<ActiveKey>,
    pending: AHashMap<PodGroupKey, Vec<QueuedPodInfo>>,
    incomplete: AHashMap<PodGroupKey, Vec<QueuedPodInfo>>,
    /// The last group popped (kube's `activeQ.isLastPoppedEntity`).
    popped: Option<PodGroupKey>,
}

/// Member pods per place, for [`PendingCounts`].
#[derive(Default)]
pub(super) struct GroupCounts {
    pub active: usize,
    pub backoff: usize,
    pub unschedulable: usize,
    pub gated: usize,
    pub pending: usize,
    pub incomplete: usize,
}

fn active_key(g: &QueuedPodGroupInfo) -> ActiveKey {
    (Reverse(g.priority()), g.timestamp, g.key().clone())
}

impl Groups {
    pub(super) fn is_empty(&self) -> bool {
        self.entities.is_empty() && self.pending.is_empty() && self.incomplete.is_empty()
    }

    pub(super) fn counts(&self) -> GroupCounts {
        let mut c = GroupCounts::default();
        for (g, place) in self.entities.values() {
            let n = g.size();
            match place {
                Place::Active => c.active += n,
                Place::Backoff(_) => c.backoff += n,
                Place::Unschedulable if g.gated() => c.gated += n,
                Place::Unschedulable => c.unschedulable += n,
            }
        }
        c.pending = self.pending.values().map(Vec::len).sum();
        c.incomplete = self.incomplete.values().map(Vec::len).sum();
        c
    }

    /// kube's `getRootLookupInfo`: the root of PodGroup `leaf`'s hierarchy (the group itself
    /// without a parent); None while the group or an ancestor is unknown, or on a cycle.
    fn root_of(&self, leaf: &PodGroupKey) -> Option<Arc<PodGroup>> {
        let mut g = self.objects.get(leaf)?.clone();
        let mut depth = 0;
        while let Some(pk) = g.parent_key() {
            depth += 1;
            if depth > 64 {
                return None;
            }
            g = self.composites.get(&pk)?.clone();
        }
        Some(g)
    }

    /// The root of a group of either kind.
    fn root_of_any(&self, g: &PodGroup) -> Option<Arc<PodGroup>> {
        if g.composite {
            let mut g = self.composites.get(&g.key)?.clone();
            let mut depth = 0;
            while let Some(pk) = g.parent_key() {
                depth += 1;
                if depth > 64 {
                    return None;
                }
                g = self.composites.get(&pk)?.clone();
            }
            Some(g)
        } else {
            self.root_of(&g.key)
        }
    }

    /// kube's `buildPodGroupInfo`: the tree under `g` as the forest knows it.
    fn build_info(&self, g: &Arc<PodGroup>) -> PodGroupInfo {
        self.build_info_guarded(g, &mut Vec::new())
    }

    fn build_info_guarded(&self, g: &Arc<PodGroup>, path: &mut Vec<PodGroupKey>) -> PodGroupInfo {
        if !g.composite {
            return PodGroupInfo::new(g.key.clone(), Some(g.clone()));
        }
        path.push(g.key.clone());
        let mut children = Vec::new();
        for (c, name) in self.children.of(&g.key) {
            let ck = PodGroupKey {
                namespace: g.key.namespace,
                name: name.clone(),
            };
            let child = if *c {
                self.composites.get(&ck)
            } else {
                self.objects.get(&ck)
            };
            if let Some(child) = child
                && !path.contains(&ck)
            {
                children.push(self.build_info_guarded(child, path));
            }
        }
        path.pop();
        PodGroupInfo::with_children(g.key.clone(), Some(g.clone()), children)
    }

    /// A PodGroup or CompositePodGroup added or updated: the object kept, its parent link
    /// recorded.
    fn record(&mut self, pg: &Arc<PodGroup>) {
        let map = if pg.composite {
            &mut self.composites
        } else {
            &mut self.objects
        };
        if let Some(old) = map.insert(pg.key.clone(), pg.clone()) {
            self.children.unlink(&old);
        }
        self.children.link(pg);
    }

    /// Takes an entity out of its place.
    fn take(&mut self, key: &PodGroupKey) -> Option<(QueuedPodGroupInfo, Place)> {
        let (g, place) = self.entities.remove(key)?;
        if place == Place::Active {
            self.active.remove(&active_key(&g));
        }
        match (place, g.gating_plugin) {
            (Place::Unschedulable, None) => {
                self.unschedulable.remove(key);
            }
            (Place::Unschedulable, Some(gp)) => {
                if let Some(set) = self.gated_by.get_mut(gp) {
                    set.remove(key);
                    if set.is_empty() {
                        self.gated_by.remove(gp);
                    }
                }
            }
            (Place::Backoff(_), _) => self.backing_off -= 1,
            (Place::Active, _) => {}
        }
        Some((g, place))
    }

    fn put(&mut self, g: QueuedPodGroupInfo, place: Place) {
        if place == Place::Active {
            self.active.insert(active_key(&g));
        }
        match (place, g.gating_plugin) {
            (Place::Unschedulable, None) => {
                self.unschedulable.insert(g.key().clone());
            }
            (Place::Unschedulable, Some(gp)) => {
                self.gated_by.entry(gp).or_default().insert(g.key().clone());
            }
            (Place::Backoff(_), _) => self.backing_off += 1,
            (Place::Active, _) => {}
        }
        self.entities.insert(g.key().clone(), (g, place));
    }

    /// The entity holding member `key`, if one does.
    fn entity_of(&self, key: &PodKey) -> Option<&PodGroupKey> {
        self.member_of.get(key)
    }

    /// Whether a group entity waits for a flush to move it: one backing off, or one
    /// unschedulable and not gated (the unschedulable-timeout flush moves it; a gated one
    /// only a gate's removal moves).
    pub(super) fn awaits_flush(&self) -> bool {
        self.backing_off > 0 || !self.unschedulable.is_empty()
    }

    pub(super) fn has_active(&self) -> bool {
        !self.active.is_empty()
    }

    /// The member with this key wherever the groups hold it (not in flight).
    pub(super) fn find_member(&self, key: &PodKey) -> Option<Arc<Pod>> {
        self.entity_of(key)
            .and_then(|g| self.entities.get(g))
            .into_iter()
            .flat_map(|(g, _)| g.pods.iter())
            .chain(self.pending.values().flatten())
            .chain(self.incomplete.values().flatten())
            .find(|p| p.pod.key == *key)
            .map(|p| p.pod.clone())
    }

    /// Where a member is, by its key alone.
    pub(super) fn locate(&self, key: &PodKey) -> Option<&'static str> {
        let pod = self.find_member(key)?;
        self.locate_in(key, &group_of(&pod)?)
    }

    /// The key of the entity that holds (or would hold) members of PodGroup `leaf`: its
    /// root's, or its own while the root is unknown.
    fn entity_key(&self, leaf: &PodGroupKey) -> PodGroupKey {
        self.root_of(leaf)
            .map_or_else(|| leaf.clone(), |r| r.key.clone())
    }

    /// The best active group's priority and timestamp.
    fn best_active(&self) -> Option<&ActiveKey> {
        self.active.first()
    }

    fn locate_in(&self, key: &PodKey, group: &PodGroupKey) -> Option<&'static str> {
        if let Some((g, place)) = self.entity_of(key).and_then(|e| self.entities.get(e))
            && g.pods.iter().any(|p| p.pod.key == *key)
        {
            return Some(match place {
                Place::Active => "active",
                Place::Backoff(_) => "backoff",
                Place::Unschedulable if g.gated() => "gated",
                Place::Unschedulable => "unschedulable",
            });
        }
        let has = |m: &AHashMap<PodGroupKey, Vec<QueuedPodInfo>>| {
            m.get(group)
                .is_some_and(|v| v.iter().any(|p| p.pod.key == *key))
        };
        if has(&self.pending) {
            Some("pending")
        } else if has(&self.incomplete) {
            Some("incomplete")
        } else {
            None
        }
    }
}

impl SchedulingQueue {
    /// Whether `pod` is queued as a member of its group (kube's `isPodGroupMember`).
    #[inline]
    pub(super) fn is_group_member(&self, pod: &Pod) -> bool {
        self.generic_workload
            && pod.spec.scheduling_group.is_some()
            && !(pod.is_assigned() && pod.is_resize_deferred())
    }

    /// kube's `runPreEnqueuePlugins` for an entity: every member runs them; one gated member
    /// gates the group.
    fn pre_enqueue_group(&self, g: &mut QueuedPodGroupInfo) -> bool {
        let mut gating = None;
        for p in &mut g.pods {
            if !self.run_pre_enqueue(p) {
                gating = p.gating_plugin;
            }
        }
        g.gating_plugin = gating;
        if let Some(pl) = gating
            && !g.unschedulable_plugins.contains(&pl)
        {
            g.unschedulable_plugins.push(pl);
        }
        gating.is_none()
    }

    /// kube's `moveToActiveQ` for a group: PreEnqueue; a gated group stays unschedulable.
    fn group_to_active(&self, inner: &mut Inner, mut g: QueuedPodGroupInfo, event: &str) -> bool {
        if !self.pre_enqueue_group(&mut g) {
            self.metrics.inc_incoming("unschedulable", event);
            inner.groups.put(g, Place::Unschedulable);
            return false;
        }
        let now = self.clock.now();
        g.set_initial_attempt_timestamp(now);
        self.metrics.inc_incoming("active", event);
        inner.groups.put(g, Place::Active);
        self.cond.notify_one();
        true
    }

    fn group_backoff_expiry(&self, g: &QueuedPodGroupInfo) -> Time {
        let d = if g.attempts == 0 {
            Duration::ZERO
        } else {
            let shift = (g.attempts - 1).min(30);
            self.cfg
                .initial_backoff
                .saturating_mul(1u32 << shift)
                .min(self.cfg.max_backoff)
        };
        let e = g.timestamp + d;
        if self.cfg.pop_from_backoff {
            align_to_window(e)
        } else {
            e
        }
    }

    fn group_backing_off(&self, g: &QueuedPodGroupInfo, now: Time) -> bool {
        if g.attempts == 0 {
            return false;
        }
        let e = self.group_backoff_expiry(g);
        if self.cfg.pop_from_backoff {
            e >= align_to_window(now)
        } else {
            e > now
        }
    }

    fn group_to_backoff(&self, inner: &mut Inner, mut g: QueuedPodGroupInfo, event: &str) {
        if self.cfg.pop_from_backoff && !self.pre_enqueue_group(&mut g) {
            self.metrics.inc_incoming("unschedulable", event);
            inner.groups.put(g, Place::Unschedulable);
            return;
        }
        let e = self.group_backoff_expiry(&g);
        g.backoff_expiration = Some(e);
        self.metrics.inc_incoming("backoff", event);
        inner.groups.put(g, Place::Backoff(e));
    }

    /// kube's `requeueEntityWithQueueingStrategy`.
    fn requeue_group(&self, inner: &mut Inner, g: QueuedPodGroupInfo, s: Strategy, event: &str) {
        let now = self.clock.now();
        match s {
            Strategy::Skip => {
                self.metrics.inc_incoming("unschedulable", event);
                inner.groups.put(g, Place::Unschedulable);
            }
            Strategy::AfterBackoff if self.group_backing_off(&g, now) => {
                self.group_to_backoff(inner, g, event)
            }
            _ => {
                self.group_to_active(inner, g, event);
            }
        }
    }

    /// kube's `addPodGroupMember`.
    pub(super) fn add_group_member(&self, inner: &mut Inner, q: QueuedPodInfo, event: &str) {
        let Some(leaf) = group_of(&q.pod) else { return };
        let Some(object) = inner.groups.root_of(&leaf) else {
            inner.groups.member_of.remove(&q.pod.key);
            inner.groups.incomplete.entry(leaf).or_default().push(q);
            return;
        };
        let key = object.key.clone();
        if let Some((mut g, place)) = inner.groups.take(&key) {
            inner
                .groups
                .member_of
                .insert(q.pod.key.clone(), key.clone());
            g.add_pod(q);
            let s = match place {
                Place::Active => Strategy::Immediately,
                Place::Backoff(_) => Strategy::AfterBackoff,
                Place::Unschedulable => Strategy::Skip,
            };
            self.requeue_group(inner, g, s, event);
            return;
        }
        if inner.groups.popped.as_ref() == Some(&key) {
            inner.groups.member_of.remove(&q.pod.key);
            inner.groups.pending.entry(leaf).or_default().push(q);
            return;
        }
        inner
            .groups
            .member_of
            .insert(q.pod.key.clone(), key.clone());
        let mut g = QueuedPodGroupInfo::new(inner.groups.build_info(&object), q.timestamp);
        g.initial_attempt_timestamp = q.initial_attempt_timestamp;
        g.add_pod(q);
        self.group_to_active(inner, g, event);
    }

    /// An update of a queued member (not in flight).
    pub(super) fn update_group_member(&self, inner: &mut Inner, old: &Pod, new: Arc<Pod>) {
        let Some(key) = group_of(&new) else { return };
        let entity = inner.groups.entity_key(&key);
        let mut found = false;
        if let Some((g, _)) = inner.groups.entities.get_mut(&entity) {
            found = g.update_pod(new.clone());
        }
        for m in [&mut inner.groups.pending, &mut inner.groups.incomplete] {
            if let Some(v) = m.get_mut(&key)
                && let Some(p) = v.iter_mut().find(|p| p.pod.key == new.key)
            {
                p.pod = new.clone();
                found = true;
            }
        }
        if !found {
            let now = self.clock.now();
            self.add_group_member(
                inner,
                QueuedPodInfo::new(new, now),
                labels::UNSCHEDULED_POD_UPDATE,
            );
            return;
        }
        // A gated group whose member lost its last gate: PreEnqueue again.
        if old.is_gated()
            && !new.is_gated()
            && let Some((g, Place::Unschedulable)) = inner.groups.entities.get(&entity)
            && g.gated()
            && let Some((g, _)) = inner.groups.take(&entity)
        {
            self.group_to_active(inner, g, labels::UNSCHEDULED_POD_UPDATE);
            return;
        }
        // kube's Update of a member of an unschedulable entity: each of the update's events
        // (a generated ResourceClaim recorded in the status, …) through the hints, a gated
        // entity only for an event its gating plugin registered.
        let Some((g, Place::Unschedulable)) = inner.groups.entities.get(&entity) else {
            return;
        };
        let (o, n) = (
            EventObject::Pod(Arc::new(old.clone())),
            EventObject::Pod(new.clone()),
        );
        let found = pod_scheduling_properties_change(old, &new)
            .into_iter()
            .find_map(|ev| {
                let registered = g.gating_plugin.is_none_or(|gp| {
                    self.plugin_events
                        .get(gp)
                        .is_some_and(|evs| evs.iter().any(|r| r.matches(&ev)))
                });
                let best = g
                    .pods
                    .iter()
                    .map(|p| self.worth_requeuing(p, &ev, &o, &n))
                    .max()
                    .unwrap_or(Strategy::Skip);
                (registered && best != Strategy::Skip).then(|| (best, ev.label()))
            });
        if let Some((best, label)) = found
            && let Some((g, _)) = inner.groups.take(&entity)
        {
            self.requeue_group(inner, g, best, &label);
        }
    }

    /// kube's `deletePodGroupMember`.
    pub(super) fn delete_group_member(&self, inner: &mut Inner, pod: &Pod) {
        let Some(key) = group_of(pod) else { return };
        for m in [&mut inner.groups.pending, &mut inner.groups.incomplete] {
            if let Some(v) = m.get_mut(&key) {
                v.retain(|p| p.pod.key != pod.key);
                if v.is_empty() {
                    m.remove(&key);
                }
            }
        }
        let entity = inner.groups.entity_key(&key);
        let Some((mut g, place)) = inner.groups.take(&entity) else {
            return;
        };
        inner.groups.member_of.remove(&pod.key);
        if let Some(q) = g.remove_pod(&pod.key) {
            for p in q.rejectors() {
                self.metrics.add_unschedulable(p, -1);
            }
        }
        if g.pods.is_empty() {
            return;
        }
        let s = match place {
            Place::Active => Strategy::Immediately,
            Place::Backoff(_) => Strategy::AfterBackoff,
            Place::Unschedulable => Strategy::Skip,
        };
        self.requeue_group(inner, g, s, labels::UNSCHEDULED_POD_ADD);
    }

    /// kube's `AddGenericPodGroup`: a PodGroup or CompositePodGroup is known; the tree it
    /// joins is rebuilt if queued, and the members waiting for any group under its root
    /// come in.
    pub fn add_pod_group(&self, pg: Arc<PodGroup>) {
        let mut inner = self.inner.lock();
        inner.groups.record(&pg);
        let Some(root) = inner.groups.root_of_any(&pg) else {
            return;
        };
        self.rebuild_entity(&mut inner, &root);
        let leaves: Vec<PodGroupKey> = inner
            .groups
            .build_info(&root)
            .leaves()
            .into_iter()
            .map(|l| l.key.clone())
            .collect();
        for leaf in leaves {
            for q in inner.groups.incomplete.remove(&leaf).unwrap_or_default() {
                self.add_group_member(&mut inner, q, labels::UNSCHEDULED_POD_ADD);
            }
        }
    }

    /// The queued entity of `root`, if any, with its tree rebuilt from the forest (its
    /// place kept; members no longer under it go back through `add_group_member`).
    fn rebuild_entity(&self, inner: &mut Inner, root: &Arc<PodGroup>) {
        let Some((mut g, place)) = inner.groups.take(&root.key) else {
            return;
        };
        let members = std::mem::take(&mut g.pods);
        g.info = inner.groups.build_info(root);
        let mut stray = Vec::new();
        for q in members {
            let in_tree = group_of(&q.pod).is_some_and(|k| g.info.leaf(&k).is_some());
            if in_tree {
                g.add_pod(q);
            } else {
                stray.push(q);
            }
        }
        // Nothing left under this root: the entity goes.
        if !g.pods.is_empty() {
            inner.groups.put(g, place);
        }
        for q in stray {
            self.add_group_member(inner, q, labels::UNSCHEDULED_POD_UPDATE);
        }
    }

    /// kube's `UpdateGenericPodGroup`.
    pub fn update_pod_group(&self, pg: Arc<PodGroup>) {
        let mut inner = self.inner.lock();
        inner.groups.record(&pg);
        // The entity's order may change with its priority; its tree holds the new object.
        if let Some(root) = inner.groups.root_of_any(&pg) {
            self.rebuild_entity(&mut inner, &root);
        }
    }

    /// kube's `DeleteGenericPodGroup`: the members of the groups no longer under a known
    /// root go back to `incomplete`; the rest of a queued tree stays queued.
    pub fn delete_pod_group(&self, pg: &PodGroup) {
        let mut inner = self.inner.lock();
        let root = inner.groups.root_of_any(pg);
        let map = if pg.composite {
            &mut inner.groups.composites
        } else {
            &mut inner.groups.objects
        };
        let Some(old) = map.remove(&pg.key) else {
            return;
        };
        inner.groups.children.unlink(&old);
        let key = pg.key.clone();
        if !pg.composite {
            // A member of this group waiting for its tree's attempt to end has no group now.
            let moved = inner.groups.pending.remove(&key).unwrap_or_default();
            if !moved.is_empty() {
                inner
                    .groups
                    .incomplete
                    .entry(key.clone())
                    .or_default()
                    .extend(moved);
            }
        }
        let Some(root) = root else { return };
        if root.key == key && root.composite == pg.composite {
            // The root itself: every member waits for a root again.
            if let Some((g, _)) = inner.groups.take(&key) {
                for q in g.pods {
                    self.add_group_member(&mut inner, q, labels::UNSCHEDULED_POD_UPDATE);
                }
            }
        } else {
            self.rebuild_entity(&mut inner, &root);
        }
    }

    /// Pops the best active group if it beats `pod` (priority, then timestamp); otherwise
    /// hands `pod` back.
    pub(super) fn pop_group_if_better(
        &self,
        inner: &mut Inner,
        pod: Option<QueuedPodInfo>,
    ) -> Result<QueuedPodGroupInfo, Option<QueuedPodInfo>> {
        let Some((Reverse(prio), ts, key)) = inner.groups.best_active().cloned() else {
            return Err(pod);
        };
        if let Some(p) = &pod
            && (p.pod.priority() > prio || (p.pod.priority() == prio && p.timestamp <= ts))
        {
            return Err(pod);
        }
        let (mut g, _) = inner
            .groups
            .take(&key)
            .expect("an active group is an entity");
        if let Some(p) = pod {
            self.active.push(p);
        }
        g.inc_attempts();
        inner.sched_cycle += 1;
        for p in g.rejectors() {
            self.metrics.add_unschedulable(p, -1);
        }
        g.unschedulable_plugins.clear();
        g.pending_plugins.clear();
        for p in &mut g.pods {
            inner.groups.member_of.remove(&p.pod.key);
            p.unschedulable_plugins.clear();
            p.pending_plugins.clear();
            inner.in_flight.insert(
                p.pod.key.clone(),
                InFlight {
                    latest: None,
                    deleted: false,
                    updated: false,
                },
            );
        }
        inner.groups.popped = Some(key);
        Ok(g)
    }

    /// A member's failed attempt (kube's `addUnschedulablePodGroupMember`): back through
    /// `add_group_member`, into `pending` while its group is the one popped.
    pub(super) fn add_unschedulable_group_member(&self, inner: &mut Inner, mut q: QueuedPodInfo) {
        let key = q.pod.key.clone();
        if let Some(f) = inner.in_flight.remove(&key) {
            if f.deleted {
                return;
            }
            if let Some(latest) = f.latest {
                q.pod = latest;
            }
        }
        for p in q.rejectors() {
            self.metrics.add_unschedulable(p, 1);
        }
        self.add_group_member(inner, q, labels::SCHEDULE_ATTEMPT_FAILURE);
    }

    /// kube's `AddAttemptedPodGroupIfNeeded`: the group's attempt ended with `status` (its
    /// failed members already handed back); the members waiting in `pending` make the group
    /// again.
    pub fn add_attempted_pod_group(
        &self,
        g: &QueuedPodGroupInfo,
        status: &crate::framework::Status,
    ) -> Result<(), String> {
        let mut inner = self.inner.lock();
        let key = g.key().clone();
        if inner.groups.entities.contains_key(&key) {
            return Err(format!(
                "pod group {key} is already present in the scheduling queue"
            ));
        }
        inner.groups.popped = None;
        // The leaves of the tree popped and of the tree as it is now (a group may have
        // joined or left it during the attempt).
        let mut leaves: Vec<PodGroupKey> =
            g.info.leaves().into_iter().map(|l| l.key.clone()).collect();
        let object = if g.info.is_composite() {
            inner.groups.composites.get(&key).cloned()
        } else {
            inner.groups.objects.get(&key).cloned()
        };
        let current = object
            .as_ref()
            .filter(|o| o.parent.is_none())
            .map(|o| inner.groups.build_info(o));
        if let Some(c) = &current {
            leaves.extend(c.leaves().into_iter().map(|l| l.key.clone()));
        }
        leaves.sort_unstable();
        leaves.dedup();
        let mut pending = Vec::new();
        for l in &leaves {
            pending.extend(inner.groups.pending.remove(l).unwrap_or_default());
        }
        if pending.is_empty() {
            return Ok(());
        }
        let failed_before = pending
            .iter()
            .any(|p| g.pods.iter().any(|m| m.pod.key == p.pod.key));
        let Some(info) = current else {
            // The root is gone (or is a root no more): each member finds its place anew.
            for q in pending {
                self.add_group_member(&mut inner, q, labels::SCHEDULE_ATTEMPT_FAILURE);
            }
            return Ok(());
        };
        let (pending, stray): (Vec<_>, Vec<_>) = pending
            .into_iter()
            .partition(|q| group_of(&q.pod).is_some_and(|k| info.leaf(&k).is_some()));
        for q in stray {
            self.add_group_member(&mut inner, q, labels::SCHEDULE_ATTEMPT_FAILURE);
        }
        if pending.is_empty() {
            return Ok(());
        }
        let mut rebuilt = QueuedPodGroupInfo::new(info, g.timestamp);
        rebuilt.attempts = g.attempts;
        rebuilt.unschedulable_count = g.unschedulable_count;
        rebuilt.consecutive_errors_count = g.consecutive_errors_count;
        rebuilt.initial_attempt_timestamp = g.initial_attempt_timestamp;
        rebuilt.unschedulable_plugins = g.unschedulable_plugins.clone();
        rebuilt.pending_plugins = g.pending_plugins.clone();
        for q in pending {
            inner
                .groups
                .member_of
                .insert(q.pod.key.clone(), key.clone());
            rebuilt.add_pod(q);
        }
        let now = self.clock.now();
        let (without_backoff, keep_timestamp) = if status.is_success() {
            rebuilt.consecutive_errors_count = 0;
            rebuilt.unschedulable_count = 0;
            (true, failed_before)
        } else if status.is_rejected() {
            rebuilt.unschedulable_count += 1;
            rebuilt.consecutive_errors_count = 0;
            rebuilt.backoff_expiration = None;
            (false, false)
        } else {
            rebuilt.consecutive_errors_count += 1;
            rebuilt.backoff_expiration = None;
            (false, false)
        };
        if !keep_timestamp {
            rebuilt.timestamp = now;
        }
        for p in rebuilt.rejectors() {
            self.metrics.add_unschedulable(p, 1);
        }
        if !without_backoff && self.group_backing_off(&rebuilt, now) {
            self.group_to_backoff(&mut inner, rebuilt, labels::SCHEDULE_ATTEMPT_FAILURE);
        } else {
            self.group_to_active(&mut inner, rebuilt, labels::SCHEDULE_ATTEMPT_FAILURE);
        }
        Ok(())
    }

    /// kube's `moveEntitiesToActiveOrBackoffQueue` for group entities in the unschedulable
    /// place: a gated one only for an event its gating plugin registered; then the best
    /// strategy over its members.
    pub(super) fn move_groups_for_event(
        &self,
        inner: &mut Inner,
        event: &ClusterEvent,
        old: &EventObject,
        new: &EventObject,
    ) {
        let groups = &inner.groups;
        if groups.unschedulable.is_empty() && groups.gated_by.is_empty() {
            return;
        }
        // The ungated entities, then those gated by a plugin that registered the event (any
        // plugin, for a wildcard event).
        let mut keys: Vec<PodGroupKey> = groups.unschedulable.iter().cloned().collect();
        for (gp, set) in &groups.gated_by {
            if event.is_wildcard()
                || self
                    .plugin_events
                    .get(gp)
                    .is_some_and(|evs| evs.iter().any(|r| r.matches(event)))
            {
                keys.extend(set.iter().cloned());
            }
        }
        // Hash-set order is arbitrary: the entities are looked at in key order, so that a run
        // is reproducible.
        keys.sort_unstable();
        for key in keys {
            let (g, _) = &inner.groups.entities[&key];
            let mut best = Strategy::Skip;
            for p in &g.pods {
                best = best.max(self.worth_requeuing(p, event, old, new));
                if best == Strategy::Immediately {
                    break;
                }
            }
            if best == Strategy::Skip {
                continue;
            }
            let (g, _) = inner.groups.take(&key).expect("listed above");
            self.requeue_group(inner, g, best, &event.label());
        }
    }

    /// The group flushes: backoff completed; unschedulable for too long.
    pub(super) fn flush_groups(&self, inner: &mut Inner, now: Time) {
        if inner.groups.entities.is_empty() {
            return;
        }
        let limit = if self.cfg.pop_from_backoff {
            align_to_window(now)
        } else {
            now + Duration::from_nanos(1)
        };
        let due: Vec<PodGroupKey> = inner
            .groups
            .entities
            .iter()
            .filter(|(_, (g, place))| match place {
                Place::Backoff(e) => *e < limit,
                Place::Unschedulable => {
                    now.saturating_sub(g.timestamp) > self.cfg.max_in_unschedulable
                }
                Place::Active => false,
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in due {
            let Some((g, place)) = inner.groups.take(&key) else {
                continue;
            };
            match place {
                Place::Backoff(_) if self.cfg.pop_from_backoff => {
                    inner.groups.put(g, Place::Active);
                    self.metrics
                        .inc_incoming("active", labels::BACKOFF_COMPLETE);
                }
                Place::Backoff(_) => {
                    self.group_to_active(inner, g, labels::BACKOFF_COMPLETE);
                }
                _ => self.requeue_group(
                    inner,
                    g,
                    Strategy::AfterBackoff,
                    labels::UNSCHEDULABLE_TIMEOUT,
                ),
            }
        }
    }

    /// Activates a member's group (kube's `Activate` of a pod-group member: its root).
    pub(super) fn activate_group_of(&self, inner: &mut Inner, pod_key: &PodKey) -> bool {
        let Some(key) = inner.groups.entity_of(pod_key).cloned() else {
            return false;
        };
        if inner
            .groups
            .entities
            .get(&key)
            .is_none_or(|(_, place)| *place == Place::Active)
        {
            return false;
        }
        let (g, _) = inner.groups.take(&key).expect("found above");
        self.group_to_active(inner, g, labels::FORCE_ACTIVATE);
        true
    }
}
