//! PreEnqueue at the queue's door (kube's `runPreEnqueuePlugins`): the pod's PreEnqueue
//! plugins decide whether it may enter activeQ or stays in the gated set.

use super::*;

impl SchedulingQueue {
    /// Runs the PreEnqueue plugins (the one that gated the pod last time first). Returns
    /// whether the pod may enter activeQ; on rejection sets `gating_plugin` and records the
    /// plugin among the pod's rejectors. Every run is timed for the extension-point series;
    /// the per-plugin series is recorded for a 10 % sample of runs, as kube's
    /// `runPreEnqueuePlugins` does.
    pub(super) fn run_pre_enqueue(&self, q: &mut QueuedPodInfo) -> bool {
        let record_plugins = crate::framework::metrics::sample_plugin_metrics();
        // Plugins are timed back to back (one clock read per boundary) and recorded after the
        // run, so neither figure includes the cost of recording the other.
        const MAX_TIMED: usize = 8;
        let mut timed: [(&'static str, Code, u64); MAX_TIMED] = [("", Code::Success, 0); MAX_TIMED];
        let mut n_timed = 0;
        let mut rejected: Option<(&'static str, Code)> = None;
        let first = q.gating_plugin;
        let plugins: &[Arc<dyn PreEnqueuePlugin>] = self
            .pre_enqueue
            .get(&q.pod.spec.scheduler_name)
            .map_or(&[], Vec::as_slice);
        let order = first
            .and_then(|f| plugins.iter().find(|p| p.name() == f))
            .into_iter()
            .chain(plugins.iter().filter(|p| Some(p.name()) != first));
        let start = Instant::now();
        let mut last = start;
        for p in order {
            let st = p.pre_enqueue(&q.pod);
            let now = Instant::now();
            let d = (now - last).as_nanos() as u64;
            last = now;
            if record_plugins {
                if n_timed < MAX_TIMED {
                    timed[n_timed] = (p.name(), st.code(), d);
                    n_timed += 1;
                } else {
                    self.metrics.observe(
                        Series::Plugin(p.name(), ExtensionPoint::PreEnqueue, st.code()),
                        d,
                    );
                }
            }
            if !st.is_success() {
                rejected = Some((p.name(), st.code()));
                break;
            }
        }
        let total = (last - start).as_nanos() as u64;
        for &(name, code, d) in &timed[..n_timed] {
            self.metrics
                .observe(Series::Plugin(name, ExtensionPoint::PreEnqueue, code), d);
        }
        let code = rejected.map_or(Code::Success, |(_, c)| c);
        self.metrics.observe(
            Series::ExtensionPoint(ExtensionPoint::PreEnqueue, code),
            total,
        );
        match rejected {
            None => {
                q.gating_plugin = None;
                true
            }
            Some((name, _)) => {
                if !q.unschedulable_plugins.contains(&name) {
                    q.unschedulable_plugins.push(name);
                    self.metrics.add_unschedulable(name, 1);
                }
                q.gating_plugin = Some(name);
                false
            }
        }
    }
}
