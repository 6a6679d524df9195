//! `CycleState`: per-scheduling-cycle data that plugins write in PreFilter/PreScore and read in
//! Filter/Score (shared read-only across the rayon workers).

use ahash::AHashMap;
use std::any::Any;

/// Data a plugin stores in the cycle state.
pub type StateData = Box<dyn Any + Send + Sync>;

#[derive(Default)]
pub struct CycleState {
    data: AHashMap<&'static str, StateData>,
    /// Filter plugins whose PreFilter returned Skip.
    pub skip_filter_plugins: Vec<&'static str>,
    /// Score plugins whose PreScore returned Skip.
    pub skip_score_plugins: Vec<&'static str>,
    /// kube's `PodsToActivate`: pods a plugin wants moved to activeQ at the end of a
    /// successful scheduling cycle and again after a successful binding cycle.
    pub pods_to_activate: Vec<crate::api::PodKey>,
}

impl CycleState {
    pub fn new() -> CycleState {
        CycleState::default()
    }

    pub fn write<T: Any + Send + Sync>(&mut self, key: &'static str, value: T) {
        self.data.insert(key, Box::new(value));
    }

    pub fn read<T: Any + Send + Sync>(&self, key: &'static str) -> Option<&T> {
        self.data.get(key).and_then(|b| b.downcast_ref::<T>())
    }

    /// Mutable access, for PreFilterExtensions AddPod/RemovePod that update a plugin's
    /// pre-computed state in place.
    pub fn read_mut<T: Any + Send + Sync>(&mut self, key: &'static str) -> Option<&mut T> {
        self.data.get_mut(key).and_then(|b| b.downcast_mut::<T>())
    }

    pub fn delete(&mut self, key: &'static str) {
        self.data.remove(key);
    }
}
