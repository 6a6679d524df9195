//! Deferred in-place resizes and resize preemption (kube v1.37's alpha
//! `InPlacePodVerticalScalingSchedulerPreemption`, [`SchedulerConfig::resize_preemption`],
//! off by default as in kube).
//!
//! ## Protocol (after kube's `eventhandlers.go`, `schedule_one.go`, the `DeferredPodScheduling`
//! plugin and NodeResourcesFit's `adjustDeltasToAccomodateCacheDiscrepancy`)
//!
//! - A pod whose status carries `PodResizePending` with reason `Deferred` (the kubelet could
//!   not grant a resize yet) is *deferred*. With the gate on, an assigned pod that becomes
//!   deferred is added to the scheduling queue, one that stops being deferred is removed from
//!   it, an update while deferred updates it there, and a deferred pod's delete removes it
//!   (`Scheduler::on_pod_*`). The cache keeps counting it on its node, at
//!   `max(spec, actuated, allocated)` ([`crate::api::Pod::requests`]).
//! - Popped, a deferred pod is judged against its own node only (kube: DeferredPodScheduling
//!   rejects every other node as unresolvable, and the other in-tree filters skip deferred
//!   pods). NodeResourcesFit asks for the *delta*: the pod's spec requests minus what the node
//!   already counts for it, never below 0; so with the desired resources already counted the
//!   question is whether the node is over-committed (`delta > allocatable - requested`), and
//!   the pod-count check counts the pod once more, as kube's `fitsRequest` does.
//! - It fits: kube goes on to assume the pod, which fails (the pod is in the cache already),
//!   and the attempt ends as an error: the pod goes to backoff and is tried again after it.
//!   (DeferredPodScheduling's Permit rejection, "pod resize fits, waiting for Kubelet
//!   actuation", sits behind that assume and is never reached in v1.37.2.)
//! - It does not fit: PostFilter is DefaultPreemption's victim selection on that one node:
//!   no victims unless the pod may preempt (`preemptionPolicy: Never` may not) and lower
//!   priority pods run there; all of them are removed, the delta fit re-checked, then the pods
//!   whose eviction would violate a PodDisruptionBudget are reprieved first, the others next,
//!   each group most important first, while the fit holds. The remaining victims are evicted
//!   (a victim waiting at Permit is rejected instead), lower-priority pods nominated to the node
//!   lose their nomination, and the attempt ends unschedulable with NodeResourcesFit as the
//!   rejector: its hint requeues the pod when a pod of the same node is deleted or scales
//!   down (victims gone), or the node grows.
//! - A deferred pod's failure is never written to its status and never nominates it (kube's
//!   `handleSchedulingFailure` returns early): it is bound and running.
//!
//! ## Invariants
//!
//! 1. Only assigned, deferred pods take this path, and only with the gate on; every other pod
//!    takes `schedule_popped`'s ordinary cycle, untouched by this module.
//! 2. Nothing here binds, assumes or moves a pod: the only cluster writes are evictions.
//! 3. The node's counts are never changed here: the victim search works on a copy.
//!
//! Not modelled: `NodePodPreemptionPolicy.disableResizePreemption` (no such node field in
//! this build's API objects, so resize preemption is never disabled on a node), and
//! DeferredPodScheduling's own queueing hints (node add and preemption-policy changes of the
//! pod's node), which only that field or a node's re-creation trigger.
//!
//! [`SchedulerConfig::resize_preemption`]: super::SchedulerConfig::resize_preemption

use crate::api::pdb::split_by_pdb_violation;
use crate::api::{Pod, Resource};
use crate::framework::NodeInfo;
use crate::framework::QueuedPodInfo;
use crate::framework::interface::PodNominator;
use crate::framework::metrics::{AttemptResult, Series};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::Scheduler;

/// NodeResourcesFit's plugin name, the rejector of a deferred pod that does not fit.
const FIT: &str = "NodeResourcesFit";
/// kube's DeferredPodScheduling, the rejector when the pod's node is gone (no plugin of that
/// name here registers events: such a pod waits for the unschedulable flush).
const DEFERRED: &str = "DeferredPodScheduling";

/// What NodeResourcesFit finds missing on `ni` for the deferred pod `pod` (kube's
/// `fitsRequest` with the deferred-resize delta): the reasons, and whether any is
/// unresolvable (the pod asks for more than the node has at all). Empty: it fits.
pub(crate) fn deferred_fit(ni: &NodeInfo, pod: &Pod) -> (Vec<&'static str>, bool) {
    let mut reasons = Vec::new();
    let alloc = ni.allocatable();
    if ni.pod_count + 1 > alloc.allowed_pod_number {
        reasons.push("Too many pods");
    }
    let want = &pod.spec.requests;
    // What the node already counts for the pod (kube finds it by UID among the node's pods).
    let counted = ni.pods.iter().find(|p| p.key == pod.key);
    let delta = |w: i64, c: fn(&Resource) -> i64| match counted {
        Some(p) => (w - c(p.requests())).max(0),
        None => w,
    };
    let used = &ni.requested;
    let mut unresolvable = false;
    let mut check = |w: i64, d: i64, a: i64, u: i64, reason: &'static str| {
        if w > 0 && d > a - u {
            reasons.push(reason);
            unresolvable |= w > a;
        }
    };
    check(
        want.milli_cpu,
        delta(want.milli_cpu, |r| r.milli_cpu),
        alloc.milli_cpu,
        used.milli_cpu,
        "Insufficient cpu",
    );
    check(
        want.memory,
        delta(want.memory, |r| r.memory),
        alloc.memory,
        used.memory,
        "Insufficient memory",
    );
    check(
        want.ephemeral_storage,
        delta(want.ephemeral_storage, |r| r.ephemeral_storage),
        alloc.ephemeral_storage,
        used.ephemeral_storage,
        "Insufficient ephemeral-storage",
    );
    for &(name, w) in &want.scalar {
        let d = match counted {
            Some(p) => (w - p.requests().scalar(name)).max(0),
            None => w,
        };
        if d != 0 && d > alloc.scalar(name) - used.scalar(name) {
            reasons.push("Insufficient scalar resource");
            unresolvable |= w > alloc.scalar(name);
        }
    }
    (reasons, unresolvable)
}

/// DefaultPreemption's `SelectVictimsOnNode` for a deferred pod on its own node, with the
/// delta fit: the victims (most important first), or why there are none.
pub(crate) fn select_resize_victims(
    ni: &NodeInfo,
    pod: &Pod,
    pdbs: &[Arc<crate::api::PodDisruptionBudget>],
) -> Result<Vec<Arc<Pod>>, &'static str> {
    let mut ni = ni.clone();
    let mut potential: Vec<Arc<Pod>> = ni
        .pods
        .iter()
        .filter(|p| p.priority() < pod.priority() && p.key != pod.key)
        .cloned()
        .collect();
    if potential.is_empty() {
        return Err("No preemption victims found for incoming pod");
    }
    for v in &potential {
        ni.remove_pod(v);
    }
    if !deferred_fit(&ni, pod).0.is_empty() {
        return Err("Insufficient resources even without lower-priority pods");
    }
    potential.sort_by(|a, b| crate::plugins::default_preemption::more_important(a, b));
    let (violating, non_violating) = split_by_pdb_violation(potential, pdbs);
    let mixed = !violating.is_empty() && !non_violating.is_empty();
    let mut victims = Vec::new();
    for p in violating.into_iter().chain(non_violating) {
        ni.add_pod(&p);
        if !deferred_fit(&ni, pod).0.is_empty() {
            ni.remove_pod(&p);
            victims.push(p);
        }
    }
    if mixed {
        victims.sort_by(|a, b| crate::plugins::default_preemption::more_important(a, b));
    }
    Ok(victims)
}

/// A deferred-resize pod judged on its own node without acting (the oracle's dry run).
#[derive(Clone, Debug, Default)]
pub struct DeferredEvaluation {
    /// Its node is still in the cluster.
    pub node_found: bool,
    /// NodeResourcesFit's reasons (with the delta): empty when it fits.
    pub reasons: Vec<&'static str>,
    /// When it does not fit: the victims preemption would evict there (most important
    /// first), empty when there are none or the pod may not preempt.
    pub victims: Vec<Arc<Pod>>,
}

impl Scheduler {
    /// What `Scheduler::schedule_deferred_resize` would find for the bound pod `pod`
    /// whose resize is deferred, on the current cluster state, evicting nothing: `None` when
    /// the pod is not such a pod.
    pub fn evaluate_deferred_resize(&self, pod: &Pod) -> Option<DeferredEvaluation> {
        let node = pod.node_name?;
        if !pod.is_resize_deferred() {
            return None;
        }
        let mut snap = self.snapshot.lock();
        self.cache.update_snapshot(&mut snap);
        let mut out = DeferredEvaluation::default();
        let Some(ni) = snap.get(node).cloned() else {
            return Some(out);
        };
        out.node_found = true;
        let (reasons, unresolvable) = deferred_fit(&ni, pod);
        if !reasons.is_empty() && !unresolvable && !pod.spec.preempt_never {
            let pdbs = self.client.pod_disruption_budgets();
            out.victims = select_resize_victims(&ni, pod, &pdbs).unwrap_or_default();
        }
        out.reasons = reasons;
        Some(out)
    }

    /// One scheduling attempt of a deferred-resize pod (see the module doc).
    pub(super) fn schedule_deferred_resize(&self, mut qpi: QueuedPodInfo) {
        let pod = qpi.pod.clone();
        self.stats.attempts.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let cycle = self.queue.scheduling_cycle();
        let outcome = {
            let mut snap = self.snapshot.lock();
            self.cache.update_snapshot(&mut snap);
            let node = pod.node_name.and_then(|n| snap.get(n).cloned());
            match node {
                // Every node unresolvable for it (DeferredPodScheduling): a fit error.
                None => Some((DEFERRED, "node not found".to_string())),
                Some(ni) => {
                    let (reasons, unresolvable) = deferred_fit(&ni, &pod);
                    if reasons.is_empty() {
                        None
                    } else {
                        let mut msg = format!("0/1 nodes are available: {}.", reasons.join(", "));
                        if !unresolvable {
                            msg.push_str(&format!(" {}", self.preempt_for_resize(&ni, &pod)));
                        }
                        Some((FIT, msg))
                    }
                }
            }
        };
        // It fit (no outcome): kube's assume fails, an error with no rejector.
        let result = match outcome {
            Some((rejector, _)) => {
                self.stats.unschedulable.fetch_add(1, Ordering::Relaxed);
                qpi.unschedulable_plugins = vec![rejector];
                AttemptResult::Unschedulable
            }
            None => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                AttemptResult::Error
            }
        };
        self.metrics.inc_attempt(result);
        self.metrics.observe(
            Series::AttemptDuration(result),
            start.elapsed().as_nanos() as u64,
        );
        // An error here means the pod was re-added by an update meanwhile: nothing is lost.
        let _ = self.queue.add_unschedulable_if_not_present(qpi, cycle);
    }

    /// PostFilter for a deferred pod that does not fit its node: the victims evicted, and
    /// the preemption message.
    fn preempt_for_resize(&self, ni: &NodeInfo, pod: &Pod) -> String {
        if pod.spec.preempt_never {
            return "not eligible due to preemptionPolicy=Never.".into();
        }
        let pdbs = self.client.pod_disruption_budgets();
        let victims = match select_resize_victims(ni, pod, &pdbs) {
            Ok(v) if !v.is_empty() => v,
            Ok(_) => return "preemption: expected at least one victim pod on the node.".into(),
            Err(why) => return format!("preemption: 0/1 nodes are available: 1 {why}."),
        };
        for v in &victims {
            if let Some(wp) = self.waiting_pods.get(&v.key) {
                wp.reject("DefaultPreemption", "preempted");
                continue;
            }
            let _ = self.client.delete_pod(v);
        }
        for p in self.queue.nominator.nominated_pods_for_node(ni.name()) {
            if p.priority() < pod.priority() {
                self.queue.nominator.add_nominated_pod(
                    &p,
                    crate::framework::Nominating::Override(crate::api::Sym::EMPTY),
                );
                self.client.set_nominated_node_name(&p, None);
            }
        }
        format!("preemption: evicted {} pods.", victims.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Node, PodResize, PodSpecInfo, ResizePending, Sym};

    fn node(cpu: i64) -> NodeInfo {
        let mut n = Node::named("n");
        n.allocatable.milli_cpu = cpu;
        n.allocatable.allowed_pod_number = 110;
        NodeInfo::new(Arc::new(n))
    }

    fn pod(name: &str, priority: i32, cpu: i64) -> Pod {
        let spec = PodSpecInfo {
            priority,
            requests: Resource {
                milli_cpu: cpu,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut p = Pod::new("ns", name, Arc::new(spec));
        p.node_name = Some(Sym::new("n"));
        p
    }

    /// A deferred pod that asks for `want` while holding `held`: the node counts `want`.
    fn deferred(want: i64, held: i64) -> Arc<Pod> {
        let mut p = pod("resizer", 1000, want);
        let counted = Resource {
            milli_cpu: want.max(held),
            ..Default::default()
        };
        p.resize = Some(Arc::new(PodResize {
            pending: Some(ResizePending::Deferred),
            requests: counted.clone(),
            non_zero_requests: counted,
        }));
        Arc::new(p)
    }

    // provenance: pkg/scheduler/framework/plugins/noderesources/fit_test.go (the deferred
    // resize cases of TestEnoughRequests / adjustDeltasToAccomodateCacheDiscrepancy): the pod
    // already counted at its desired size fits while the node is not over-committed.
    #[test]
    fn a_deferred_pod_fits_unless_its_node_is_over_committed() {
        let mut ni = node(4000);
        let p = deferred(3000, 200);
        ni.add_pod(&p);
        assert!(deferred_fit(&ni, &p).0.is_empty());
        ni.add_pod(&Arc::new(pod("v", 100, 900)));
        ni.add_pod(&Arc::new(pod("w", 100, 900)));
        assert_eq!(deferred_fit(&ni, &p), (vec!["Insufficient cpu"], false));
        // Asking for more than the node has at all is unresolvable.
        let mut small = node(2000);
        let big = deferred(3000, 200);
        small.add_pod(&big);
        assert_eq!(deferred_fit(&small, &big), (vec!["Insufficient cpu"], true));
    }

    // provenance: test/integration/scheduler/preemption/deferred_resize_preemption_test.go
    // (TestDeferredResizePodPreemption: "preempts a single low-priority victim", "preempts
    // multiple victims", "no preemption of higher priority pods") and
    // pkg/scheduler/framework/preemption (SelectVictimsOnNode's reprieve order).
    #[test]
    fn victims_are_the_fewest_lower_priority_pods_least_important_first() {
        let mut ni = node(4000);
        let p = deferred(3000, 200);
        ni.add_pod(&p);
        for (name, prio) in [("a", 100), ("b", 200), ("c", 100), ("d", 100)] {
            ni.add_pod(&Arc::new(pod(name, prio, 900)));
        }
        // 3000 + 4 × 900 = 6600 on 4000: three must go; "b" (priority 200) is reprieved first.
        let v = select_resize_victims(&ni, &p, &[]).unwrap();
        let names: Vec<&str> = v.iter().map(|p| &*p.name).collect();
        assert_eq!(v.len(), 3);
        assert!(!names.contains(&"b"), "{names:?}");
        // Only higher-priority pods beside it: no victims.
        let mut ni = node(4000);
        ni.add_pod(&p);
        ni.add_pod(&Arc::new(pod("h", 2000, 1500)));
        assert_eq!(
            select_resize_victims(&ni, &p, &[]).err(),
            Some("No preemption victims found for incoming pod")
        );
    }
}
