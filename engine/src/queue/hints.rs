//! Queueing hints (kube's `isPodWorthRequeuing`, `movePodsToActiveOrBackoffQueue` and the
//! assigned-pod fast paths): a cluster event asks the hints of the plugins that rejected each
//! unschedulable pod whether the event may help it, and moves it by the answer's strategy.

use super::*;

/// kube's queueing strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Strategy {
    Skip,
    AfterBackoff,
    Immediately,
}

impl SchedulingQueue {
    /// kube's isPodWorthRequeuing: what `event` means for a pod rejected by its rejector
    /// plugins. Each hint call is timed.
    pub(super) fn worth_requeuing(
        &self,
        q: &QueuedPodInfo,
        event: &ClusterEvent,
        old: &EventObject,
        new: &EventObject,
    ) -> Strategy {
        if q.rejectors().next().is_none() || event.is_wildcard() {
            return Strategy::AfterBackoff;
        }
        let mut result = Strategy::Skip;
        for p in q.rejectors() {
            let registered = self
                .plugin_events
                .get(p)
                .is_some_and(|evs| evs.iter().any(|r| r.matches(event)));
            if !registered {
                continue;
            }
            let hint = match self.hints.get(p) {
                Some(ext) => {
                    let t = Instant::now();
                    let h = ext.queueing_hint(event, &q.pod, old, new);
                    self.metrics.observe(
                        Series::QueueingHint(p, *event, h.as_ref().ok().copied()),
                        t.elapsed().as_nanos() as u64,
                    );
                    h.unwrap_or(QueueingHint::Queue)
                }
                None => QueueingHint::Queue,
            };
            if hint == QueueingHint::QueueSkip {
                continue;
            }
            if q.pending_plugins.contains(&p) {
                return Strategy::Immediately;
            }
            result = Strategy::AfterBackoff;
            if q.pending_plugins.is_empty() {
                return result;
            }
        }
        result
    }

    /// kube's requeuePodWithQueueingStrategy.
    pub(super) fn requeue_with(
        &self,
        inner: &mut Inner,
        q: QueuedPodInfo,
        s: Strategy,
        event: &str,
        now: Time,
    ) {
        match s {
            Strategy::Skip => {
                self.metrics.inc_incoming("unschedulable", event);
                inner.unschedulable.insert(q);
            }
            Strategy::AfterBackoff if self.is_backing_off(&q, now) => {
                self.move_to_backoff(inner, q, event)
            }
            _ => {
                inner.unschedulable.remove(&q.pod.key);
                self.move_to_active(inner, q, event);
            }
        }
    }

    /// A cluster event: move the unschedulable pods it may help. Only pods filed under a
    /// plugin that registered a matching event are visited (plus pods without rejectors); gated
    /// pods are not in this pool at all.
    pub fn move_all_to_active_or_backoff(&self, event: ClusterEvent) {
        self.on_cluster_event(event, EventObject::None, EventObject::None);
    }

    /// A cluster event with the objects it carries (for QueueingHints).
    pub fn on_cluster_event(&self, event: ClusterEvent, old: EventObject, new: EventObject) {
        self.on_cluster_event_except(event, old, new, None);
    }

    /// An event of a kind only the plugins read (a PersistentVolume, a ResourceClaim, a
    /// PodGroup, …), as kube's `buildEvtResHandler` hands it to `MoveAllToActiveOrBackoffQueue`.
    /// kube starts an informer only for the resources some plugin registered, with the actions
    /// registered (`unionedGVKs`; a wildcard registration starts none): an event no plugin
    /// registered reaches no pod, not even the pods without rejectors that any other event
    /// moves.
    pub(crate) fn on_informer_event(
        &self,
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
    ) {
        let watched = self
            .plugin_events
            .values()
            .flatten()
            .any(|r| r.resource == event.resource && r.action.0 & event.action.0 != 0);
        if watched {
            self.on_cluster_event(event, old, new);
        }
    }

    /// [`SchedulingQueue::move_all_to_active_or_backoff`] for every pod but `except` (kube's
    /// precheck in `handleBindingCycleError`: the pod a Permit plugin rejected is not moved
    /// by the AssignedPodDelete its own forgetting raises).
    pub(crate) fn move_all_to_active_or_backoff_except(
        &self,
        event: ClusterEvent,
        except: &PodKey,
    ) {
        self.on_cluster_event_except(event, EventObject::None, EventObject::None, Some(except));
    }

    pub(super) fn on_cluster_event_except(
        &self,
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
        except: Option<&PodKey>,
    ) {
        let mut inner = self.inner.lock();
        let mut keys = if inner.unschedulable.is_empty() {
            Vec::new()
        } else if event.is_wildcard() {
            inner.unschedulable.keys()
        } else {
            inner
                .unschedulable
                .candidates(self.plugins_registered_for(&event))
        };
        if let Some(k) = except {
            keys.retain(|x| x != k);
        }
        if !inner.groups.is_empty() {
            self.move_groups_for_event(&mut inner, &event, &old, &new);
        }
        if !event.is_wildcard() {
            self.move_event_gated(&mut inner, &event, &old, &new, except);
        }
        self.move_candidates(&mut inner, keys, event, old, new);
    }

    /// The pods a plugin other than SchedulingGates gates (DynamicResources waiting for a
    /// claim) that `event` may release: as kube's unschedulable pods with a gating plugin,
    /// judged by that plugin's hint, then PreEnqueue again at activeQ's door (back to the
    /// gated set when it still refuses).
    fn move_event_gated(
        &self,
        inner: &mut Inner,
        event: &ClusterEvent,
        old: &EventObject,
        new: &EventObject,
        except: Option<&PodKey>,
    ) {
        if !self.gated.any_event_gated() {
            return;
        }
        let plugins: Vec<&'static str> = self.plugins_registered_for(event).collect();
        let now = self.clock.now();
        for p in plugins {
            for key in self.gated.gated_by(p) {
                if except == Some(&key) {
                    continue;
                }
                // Judged on a copy: a pod the hint skips stays where it is, so the pod's own
                // update (on another thread) always finds it there. One that may move is
                // taken out only then; if its own update took it first, it is gone here.
                let Some(q) = self.gated.get(&key) else {
                    continue;
                };
                let s = self.worth_requeuing(&q, event, old, new);
                if s == Strategy::Skip {
                    continue;
                }
                if let Some(q) = self.gated.remove(&key) {
                    self.requeue_with(inner, q, s, &event.label(), now);
                }
            }
        }
    }

    /// kube's `MoveAllToActiveOrBackoffQueue` for an assigned pod's add, update or delete
    /// (`old`/`new`: the pod before and after), as kube's event handlers call it (with
    /// QueueingHints on for adds and updates; always for deletes). The pods moved are exactly the full scan's ([`Self::on_cluster_event`]);
    /// the candidates of InterPodAffinity and PodTopologySpread, whose hints can only queue
    /// pods an event's pod is related to, come from the pool's indexes
    /// (`UnschedulablePods::pod_event_candidates`).
    pub fn assigned_pod_event(
        &self,
        event: ClusterEvent,
        old: Option<Arc<Pod>>,
        new: Option<Arc<Pod>>,
    ) {
        let obj = |p: Option<Arc<Pod>>| p.map_or(EventObject::None, EventObject::Pod);
        if !self.cfg.queueing_hints {
            // Without hints every registered plugin's pods move: no narrowing applies.
            return self.on_cluster_event(event, obj(old), obj(new));
        }
        let mut inner = self.inner.lock();
        let keys = if inner.unschedulable.is_empty() {
            Vec::new()
        } else {
            inner.unschedulable.pod_event_candidates(
                self.plugins_registered_for(&event),
                old.as_deref(),
                new.as_deref(),
            )
        };
        let (old, new) = (obj(old), obj(new));
        if !inner.groups.is_empty() {
            self.move_groups_for_event(&mut inner, &event, &old, &new);
        }
        if !event.is_wildcard() {
            self.move_event_gated(&mut inner, &event, &old, &new, None);
        }
        self.move_candidates(&mut inner, keys, event, old, new);
    }

    /// kube's `MoveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, nil,
    /// getLEPriorityPreCheck)` for an unassigned pod that held a nomination and let it go (its
    /// `nominatedNodeName` changed, or it was deleted): pods of lower or equal priority counted
    /// it on that node as if it were bound there, so its leaving may help them, the pod itself
    /// included. `pod`: the object that carried the nomination.
    pub(crate) fn nominated_pod_left(&self, pod: Arc<Pod>) {
        let event = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
        let priority = pod.priority();
        let mut inner = self.inner.lock();
        let mut keys = if inner.unschedulable.is_empty() {
            Vec::new()
        } else {
            inner
                .unschedulable
                .candidates(self.plugins_registered_for(&event))
        };
        keys.retain(|k| {
            inner
                .unschedulable
                .get(k)
                .is_some_and(|q| q.pod.priority() <= priority)
        });
        self.move_candidates(
            &mut inner,
            keys,
            event,
            EventObject::Pod(pod),
            EventObject::None,
        );
    }

    /// The plugins that registered an event matching `event`.
    pub(super) fn plugins_registered_for<'s>(
        &'s self,
        event: &'s ClusterEvent,
    ) -> impl Iterator<Item = &'static str> + 's {
        self.plugin_events
            .iter()
            .filter(move |(_, evs)| evs.iter().any(|r| r.matches(event)))
            .map(|(p, _)| *p)
    }

    /// Whether the `SchedulerQueueingHints` gate is on ([`QueueConfig::queueing_hints`]).
    pub fn queueing_hints(&self) -> bool {
        self.cfg.queueing_hints
    }

    /// kube's `AssignedPodAdded`: a pod appeared on a node (bound by us or by anyone). Only
    /// the pods it can help are visited: those rejected by PodTopologySpread in its namespace
    /// and those with a required affinity term that selects it (`ns_labels`: the labels of its
    /// namespace), found through the pool's anchor index; then each goes through
    /// `isPodWorthRequeuing` as for any event.
    pub fn assigned_pod_added(&self, pod: Arc<Pod>, ns_labels: Option<&Labels>) {
        let event = ClusterEvent::new(EventResource::AssignedPod, ActionType::ADD);
        let mut inner = self.inner.lock();
        let keys = inner
            .unschedulable
            .cross_topology_candidates(&pod, ns_labels);
        self.move_candidates(
            &mut inner,
            keys,
            event,
            EventObject::None,
            EventObject::Pod(pod),
        );
    }

    /// kube's `AssignedPodUpdated`, once per event of `PodSchedulingPropertiesChange`: a
    /// scale-down may help any pod (resources freed), so it goes to every pod whose rejector
    /// registered it; every other event only to the cross-topology candidates of the new pod,
    /// as for an add.
    pub(crate) fn assigned_pod_updated(
        &self,
        old: Arc<Pod>,
        new: Arc<Pod>,
        event: ClusterEvent,
        ns_labels: Option<&Labels>,
    ) {
        if event.action.0 & ActionType::UPDATE_POD_SCALE_DOWN.0 != 0 {
            self.on_cluster_event(event, EventObject::Pod(old), EventObject::Pod(new));
            return;
        }
        let mut inner = self.inner.lock();
        let keys = inner
            .unschedulable
            .cross_topology_candidates(&new, ns_labels);
        self.move_candidates(
            &mut inner,
            keys,
            event,
            EventObject::Pod(old),
            EventObject::Pod(new),
        );
    }

    /// Moves the candidate pods an event may help (`isPodWorthRequeuing` decides each), and
    /// records the event for the pods in flight.
    pub(super) fn move_candidates(
        &self,
        inner: &mut Inner,
        keys: Vec<PodKey>,
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
    ) {
        let now = self.clock.now();
        inner.move_request_cycle = inner.sched_cycle;
        if !keys.is_empty() {
            let label = event.label();
            for k in keys {
                let Some(q) = inner.unschedulable.get(&k) else {
                    continue;
                };
                let s = if self.cfg.queueing_hints {
                    self.worth_requeuing(q, &event, &old, &new)
                } else if self.registered_for(q, &event) {
                    Strategy::AfterBackoff
                } else {
                    Strategy::Skip
                };
                if s == Strategy::Skip {
                    continue;
                }
                if let Some(q) = inner.unschedulable.remove(&k) {
                    self.requeue_with(inner, q, s, &label, now);
                }
            }
        }
        self.record_in_flight_event(inner, event, old, new);
    }

    /// Without QueueingHints every registered event is a Queue: whether some rejector of the
    /// pod registered `event` (or it has none, or the event is a wildcard).
    pub(super) fn registered_for(&self, q: &QueuedPodInfo, event: &ClusterEvent) -> bool {
        event.is_wildcard()
            || q.rejectors().next().is_none()
            || q.rejectors().any(|p| {
                self.plugin_events
                    .get(p)
                    .is_some_and(|evs| evs.iter().any(|r| r.matches(event)))
            })
    }
}
