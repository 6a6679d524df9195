//! `CycleState`: per-scheduling-cycle data that plugins write in PreFilter/PreScore and read in
//! Filter/Score (shared read-only across the rayon workers).

use parking_lot::Mutex;
use std::any::Any;
use std::sync::Arc;

/// Data a plugin stores in the cycle state: any `Clone` value (kube's `StateData` with its
/// `Clone`), so the state can be copied for the nominated-pods pass and preemption's dry runs.
pub trait StateData: Any + Send + Sync {
    fn clone_data(&self) -> Box<dyn StateData>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Send + Sync + Clone> StateData for T {
    fn clone_data(&self) -> Box<dyn StateData> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[derive(Default)]
pub struct CycleState {
    /// A few entries (one per plugin with state): a list beats a hash map, and a key is
    /// usually the very same `&'static str` the plugin wrote with, so the address compares
    /// first (Filter and Score read per node).
    data: Vec<(&'static str, Box<dyn StateData>)>,
    /// Filter plugins whose PreFilter returned Skip.
    pub skip_filter_plugins: Vec<&'static str>,
    /// Score plugins whose PreScore returned Skip.
    pub skip_score_plugins: Vec<&'static str>,
    /// PreBind plugins whose PreBindPreFlight returned Skip (kube's `SkipPreBindPlugins`).
    pub skip_pre_bind_plugins: Vec<&'static str>,
    /// kube's `PodsToActivate`: pods a plugin wants moved to activeQ at the end of a
    /// successful scheduling cycle and again after a successful binding cycle.
    pub pods_to_activate: Vec<crate::api::PodKey>,
    /// kube's `recordPluginMetrics`: whether this cycle's per-plugin durations are recorded
    /// (drawn per cycle, `crate::framework::metrics::PLUGIN_METRICS_SAMPLE_PERCENT`). Off in a new
    /// state, as in kube's `NewCycleState`.
    pub record_plugin_metrics: bool,
    /// kube's `IsPodGroupSchedulingCycle`: this pod is scheduled as a member of a pod group
    /// (`scheduler/schedule_one_podgroup.rs`), not on its own.
    pub pod_group_cycle: bool,
    /// kube's `GetPodGroupSchedulingCycle` as plugins use it: the data shared by every
    /// member's cycle of one pod-group cycle and by the group's own state (which
    /// PodGroupPostFilter gets). `None` outside a group's synchronous cycle: the scheduler
    /// clears it before a member's Reserve for binding, as kube does.
    pub pod_group_data: Option<Arc<PodGroupCycleData>>,
}

/// What plugins share across one pod-group cycle, one entry per plugin key. Members are
/// scheduled one after another, so the lock is never contended; it is there because a
/// member's Filter runs on many threads.
#[derive(Default)]
pub struct PodGroupCycleData {
    data: Mutex<Vec<(&'static str, Arc<dyn Any + Send + Sync>)>>,
    adopts_in_flight: bool,
}

impl PodGroupCycleData {
    /// Data for a cycle replayed after the fact (the oracle's check of a group's placement
    /// on the state the cycle left): whatever is in flight now was reserved by this cycle's
    /// members, so plugins treat it as their own (DynamicResources shares a claim's
    /// allocation in flight as if an earlier member had reserved it).
    pub fn adopting_in_flight() -> PodGroupCycleData {
        PodGroupCycleData {
            adopts_in_flight: true,
            ..PodGroupCycleData::default()
        }
    }

    /// See [`PodGroupCycleData::adopting_in_flight`].
    pub fn adopts_in_flight(&self) -> bool {
        self.adopts_in_flight
    }

    /// The entry under `key`, made by `init` on first use.
    pub fn get_or_insert<T: Any + Send + Sync>(
        &self,
        key: &'static str,
        init: impl FnOnce() -> T,
    ) -> Arc<T> {
        let mut d = self.data.lock();
        if let Some((_, v)) = d.iter().find(|(k, _)| *k == key)
            && let Ok(t) = v.clone().downcast::<T>()
        {
            return t;
        }
        let t = Arc::new(init());
        d.retain(|(k, _)| *k != key);
        d.push((key, t.clone()));
        t
    }

    /// The entry under `key`, if a member's cycle made one.
    pub fn get<T: Any + Send + Sync>(&self, key: &'static str) -> Option<Arc<T>> {
        let d = self.data.lock();
        let (_, v) = d.iter().find(|(k, _)| *k == key)?;
        v.clone().downcast::<T>().ok()
    }
}

impl Clone for CycleState {
    /// kube's `CycleState.Clone`: every plugin's data cloned, the skip lists copied.
    fn clone(&self) -> CycleState {
        CycleState {
            data: self
                .data
                .iter()
                .map(|(k, v)| (*k, (**v).clone_data()))
                .collect(),
            skip_filter_plugins: self.skip_filter_plugins.clone(),
            skip_score_plugins: self.skip_score_plugins.clone(),
            skip_pre_bind_plugins: self.skip_pre_bind_plugins.clone(),
            pods_to_activate: self.pods_to_activate.clone(),
            record_plugin_metrics: self.record_plugin_metrics,
            pod_group_cycle: self.pod_group_cycle,
            pod_group_data: self.pod_group_data.clone(),
        }
    }
}

impl CycleState {
    pub fn new() -> CycleState {
        CycleState::default()
    }

    /// A pod-group cycle's own state (kube's `PodGroupCycleState`), with fresh shared data
    /// for its members' cycles.
    pub fn for_pod_group() -> CycleState {
        CycleState {
            pod_group_data: Some(Arc::default()),
            ..CycleState::default()
        }
    }

    pub fn write<T: Any + Send + Sync + Clone>(&mut self, key: &'static str, value: T) {
        match self.position(key) {
            Some(i) => self.data[i].1 = Box::new(value),
            None => self.data.push((key, Box::new(value))),
        }
    }

    #[inline]
    fn position(&self, key: &str) -> Option<usize> {
        self.data
            .iter()
            .position(|(k, _)| std::ptr::eq(k.as_ptr(), key.as_ptr()) && k.len() == key.len())
            .or_else(|| self.data.iter().position(|(k, _)| *k == key))
    }

    #[inline]
    pub fn read<T: Any + Send + Sync>(&self, key: &'static str) -> Option<&T> {
        let i = self.position(key)?;
        (*self.data[i].1).as_any().downcast_ref::<T>()
    }

    /// Mutable access, for PreFilterExtensions AddPod/RemovePod that update a plugin's
    /// pre-computed state in place.
    pub fn read_mut<T: Any + Send + Sync>(&mut self, key: &'static str) -> Option<&mut T> {
        let i = self.position(key)?;
        (*self.data[i].1).as_any_mut().downcast_mut::<T>()
    }

    pub fn delete(&mut self, key: &'static str) {
        if let Some(i) = self.position(key) {
            self.data.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Counts(Vec<u32>);

    #[test]
    fn a_clone_is_independent_of_the_original() {
        let mut s = CycleState::new();
        s.write("Counts", Counts(vec![1, 2]));
        s.skip_filter_plugins.push("X");
        let mut c = s.clone();
        c.read_mut::<Counts>("Counts").unwrap().0.push(3);
        assert_eq!(s.read::<Counts>("Counts"), Some(&Counts(vec![1, 2])));
        assert_eq!(c.read::<Counts>("Counts"), Some(&Counts(vec![1, 2, 3])));
        assert_eq!(c.skip_filter_plugins, vec!["X"]);
        assert!(c.read::<u32>("Counts").is_none());
    }
}
