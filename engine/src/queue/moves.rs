//! Moves between the sub-queues with the queue's lock held (kube's `moveToActiveQ`,
//! `moveToBackoffQ`, `requeuePodViaQueueingHint`'s targets), backoff timing, and the
//! periodic flushes of backoffQ and of pods left unschedulable too long.

use super::*;

impl SchedulingQueue {
    /// kube's moveToActiveQ: PreEnqueue at the door; a gated pod goes to the gated set.
    pub(super) fn move_to_active(
        &self,
        inner: &mut Inner,
        mut q: QueuedPodInfo,
        event: &str,
    ) -> bool {
        if !self.run_pre_enqueue(&mut q) {
            self.metrics.inc_incoming("unschedulable", event);
            self.gated.insert(q);
            return false;
        }
        self.push_active(inner, q, event);
        true
    }

    /// Pushes a pod that already passed PreEnqueue.
    pub(super) fn push_active(&self, inner: &mut Inner, mut q: QueuedPodInfo, event: &str) {
        if q.initial_attempt_timestamp.is_none() {
            q.initial_attempt_timestamp = Some(self.clock.now());
        }
        let key = q.pod.key.clone();
        inner.unschedulable.remove(&key);
        inner.backoff.remove(&key);
        self.active.push(q);
        self.metrics.inc_incoming("active", event);
        // The lock is held: a popper is either waiting (and gets this) or not yet checking.
        self.cond.notify_one();
    }

    /// Wakes a blocked `pop` after a push made without the queue lock.
    pub(super) fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) {
            let _g = self.inner.lock();
            self.cond.notify_one();
        }
    }

    pub(super) fn move_to_backoff(&self, inner: &mut Inner, mut q: QueuedPodInfo, event: &str) {
        inner.unschedulable.remove(&q.pod.key);
        // With PopFromBackoffQ, PreEnqueue runs at the door of backoffQ (the pod may leave it
        // for a Pop at any time), and a pod it gates goes to the gated set.
        if self.cfg.pop_from_backoff && !self.run_pre_enqueue(&mut q) {
            self.metrics.inc_incoming("unschedulable", event);
            self.gated.insert(q);
            return;
        }
        let expiry = self.backoff_expiry(&q);
        inner.backoff.push(expiry, q);
        self.metrics.inc_incoming("backoff", event);
        if self.cfg.pop_from_backoff {
            // A popper waiting on an empty activeQ may take it now (the lock is held).
            self.cond.notify_one();
        }
    }

    /// Backoff: `initial × 2^(attempts−1)`, capped at max; zero attempts means no backoff.
    pub(crate) fn backoff_duration(&self, q: &QueuedPodInfo) -> Duration {
        if q.attempts == 0 {
            return Duration::ZERO;
        }
        let shift = (q.attempts - 1).min(30);
        let d = self.cfg.initial_backoff.saturating_mul(1u32 << shift);
        d.min(self.cfg.max_backoff)
    }

    /// When the pod's backoff ends: its timestamp plus the backoff duration, truncated to the
    /// 1 s ordering window with PopFromBackoffQ.
    pub(super) fn backoff_expiry(&self, q: &QueuedPodInfo) -> Time {
        let e = q.timestamp + self.backoff_duration(q);
        if self.cfg.pop_from_backoff {
            align_to_window(e)
        } else {
            e
        }
    }

    /// Whether a pod that failed is still waiting for its backoff: its expiry is after now
    /// (with PopFromBackoffQ: its expiry window is not before now's window).
    pub(super) fn is_backing_off(&self, q: &QueuedPodInfo, now: Time) -> bool {
        if q.attempts == 0 {
            return false;
        }
        if self.cfg.pop_from_backoff {
            self.backoff_expiry(q) >= align_to_window(now)
        } else {
            self.backoff_expiry(q) > now
        }
    }

    pub(super) fn requeue(&self, inner: &mut Inner, q: QueuedPodInfo, event: &str, now: Time) {
        if self.is_backing_off(&q, now) {
            self.move_to_backoff(inner, q, event);
        } else {
            let key = q.pod.key.clone();
            inner.unschedulable.remove(&key);
            self.move_to_active(inner, q, event);
        }
    }

    pub(super) fn run_due_flushes(&self, inner: &mut Inner) {
        let now = self.clock.now();
        if now >= inner.next_backoff_flush {
            self.flush_groups(inner, now);
            if self.cfg.pop_from_backoff {
                // kube ticks on whole windows (its ticker starts at the next window).
                inner.next_backoff_flush = align_to_window(now) + BACKOFF_WINDOW;
                // Pods whose window is before now's; PreEnqueue already ran when they entered.
                for q in inner.backoff.pop_expired_before(align_to_window(now)) {
                    self.push_active(inner, q, labels::BACKOFF_COMPLETE);
                }
            } else {
                inner.next_backoff_flush = now + self.cfg.backoff_flush_period;
                let done = inner
                    .backoff
                    .pop_expired_before(now + Duration::from_nanos(1));
                for q in done {
                    self.move_to_active(inner, q, labels::BACKOFF_COMPLETE);
                }
            }
        }
        if now >= inner.next_unschedulable_flush {
            inner.next_unschedulable_flush = now + self.cfg.unschedulable_flush_period;
            let stale: Vec<PodKey> = inner
                .unschedulable
                .values()
                .filter(|q| now.saturating_sub(q.timestamp) > self.cfg.max_in_unschedulable)
                .map(|q| q.pod.key.clone())
                .collect();
            for k in stale {
                if let Some(q) = inner.unschedulable.remove(&k) {
                    self.requeue(inner, q, labels::UNSCHEDULABLE_TIMEOUT, now);
                }
            }
        }
    }

    /// Runs the periodic flushes that are due now (backoff completion every second, the
    /// unschedulable leftover every 30 s). `pop` does this by itself.
    pub fn flush(&self) {
        let mut inner = self.inner.lock();
        self.run_due_flushes(&mut inner);
    }

    /// When the next periodic flush that can move a pod is due: the backoff flush while
    /// backoffQ holds pods or a pod group awaits a flush, the unschedulable flush while the
    /// pool holds pods (`None`: no flush can move anything). A driver of a virtual clock advances it to this time.
    pub(crate) fn next_flush_due(&self) -> Option<Time> {
        let inner = self.inner.lock();
        // Group entities move at the backoff flush (`flush_groups`), for both backoff and
        // the unschedulable timeout.
        let backoff = (!inner.backoff.is_empty() || inner.groups.awaits_flush())
            .then_some(inner.next_backoff_flush);
        let unsched = (!inner.unschedulable.is_empty()).then_some(inner.next_unschedulable_flush);
        backoff.into_iter().chain(unsched).min()
    }
}
