//! In-flight pods and events (kube's `inFlightPods` and `inFlightEvents`): while a pod is
//! being scheduled, the cluster events that arrive are kept, so that when its attempt fails
//! `add_unschedulable_if_not_present` can ask the rejector plugins' hints about each of them
//! and requeue the pod at once if one may have made it schedulable.

use super::*;

pub(super) enum InFlightItem {
    Popped(PodKey),
    Event(ClusterEvent, EventObject, EventObject),
}

/// An in-flight pod: popped, not yet Done.
pub(super) struct InFlight {
    /// The latest object seen while in flight (kube refreshes it from the informer).
    pub(super) latest: Option<Arc<Pod>>,
    pub(super) deleted: bool,
    /// The pod itself was updated while in flight. Without QueueingHints kube's `Update` puts
    /// such a pod in activeQ at once, so a failure brings it straight back there.
    pub(super) updated: bool,
}

impl SchedulingQueue {
    /// Keeps a cluster event for the pods in flight, which see it when they come back (with
    /// QueueingHints; without them nothing reads the events).
    pub(super) fn record_in_flight_event(
        &self,
        inner: &mut Inner,
        event: ClusterEvent,
        old: EventObject,
        new: EventObject,
    ) {
        if self.cfg.queueing_hints && !inner.in_flight.is_empty() {
            inner
                .in_flight_events
                .push_back(InFlightItem::Event(event, old, new));
        }
    }

    /// Drops a popped pod's marker and the events no remaining in-flight pod needs.
    pub(super) fn forget_in_flight(&self, inner: &mut Inner, key: &PodKey) {
        if let Some(i) = inner
            .in_flight_events
            .iter()
            .position(|it| matches!(it, InFlightItem::Popped(k) if k == key))
        {
            inner.in_flight_events.remove(i);
        }
        while matches!(
            inner.in_flight_events.front(),
            Some(InFlightItem::Event(..))
        ) {
            inner.in_flight_events.pop_front();
        }
    }

    /// Puts back a pod whose attempt failed (kube's AddUnschedulableIfNotPresent, with
    /// QueueingHints off: backoffQ if a move request arrived during its cycle or it failed with
    /// an error, else the unschedulable pool). A pod deleted while in flight is dropped.
    pub fn add_unschedulable_if_not_present(
        &self,
        mut q: QueuedPodInfo,
        pod_sched_cycle: i64,
    ) -> Result<(), QueueError> {
        let now = self.clock.now();
        let mut inner = self.inner.lock();
        if self.is_group_member(&q.pod) {
            self.add_unschedulable_group_member(&mut inner, q);
            return Ok(());
        }
        let key = q.pod.key.clone();
        // With QueueingHints: what the events that arrived while the pod was in flight say.
        let mut strategy = None;
        if self.cfg.queueing_hints {
            let mut s = if q.rejectors().next().is_none() {
                Strategy::AfterBackoff
            } else {
                Strategy::Skip
            };
            let mut after_marker = false;
            for it in &inner.in_flight_events {
                match it {
                    InFlightItem::Popped(k) if *k == key => after_marker = true,
                    InFlightItem::Event(ev, old, new)
                        if after_marker && s != Strategy::Immediately =>
                    {
                        s = s.max(self.worth_requeuing(&q, ev, old, new));
                    }
                    _ => {}
                }
            }
            strategy = Some(s);
        }
        self.forget_in_flight(&mut inner, &key);
        let mut updated = false;
        if let Some(f) = inner.in_flight.remove(&key) {
            if f.deleted {
                return Ok(());
            }
            if let Some(latest) = f.latest {
                q.pod = latest;
            }
            updated = f.updated;
        }
        if self.active.contains(&key)
            || inner.backoff.contains(&key)
            || inner.unschedulable.contains(&key)
            || self.gated.contains(&key)
        {
            return Err(QueueError::AlreadyPresent(key));
        }
        let has_rejectors = q.rejectors().next().is_some();
        if has_rejectors {
            q.unschedulable_count += 1;
            q.consecutive_errors_count = 0;
        } else {
            q.consecutive_errors_count += 1;
        }
        q.timestamp = now;
        for p in q.rejectors() {
            self.metrics.add_unschedulable(p, 1);
        }
        match strategy {
            Some(s) => self.requeue_with(&mut inner, q, s, labels::SCHEDULE_ATTEMPT_FAILURE, now),
            // Without hints, kube's Update already put the updated pod back in activeQ.
            None if updated => {
                self.move_to_active(&mut inner, q, labels::UNSCHEDULED_POD_UPDATE);
            }
            None if inner.move_request_cycle >= pod_sched_cycle || !has_rejectors => {
                self.move_to_backoff(&mut inner, q, labels::SCHEDULE_ATTEMPT_FAILURE)
            }
            None => {
                self.metrics
                    .inc_incoming("unschedulable", labels::SCHEDULE_ATTEMPT_FAILURE);
                inner.unschedulable.insert(q);
            }
        }
        Ok(())
    }

    /// Items in the in-flight event list (kube's `scheduler_inflight_events`): markers of
    /// popped pods plus events received while they were in flight.
    #[cfg(test)]
    pub(crate) fn in_flight_events(&self) -> usize {
        self.inner.lock().in_flight_events.len()
    }
}
