//! PrioritySort: higher `spec.priority` first, then earlier enqueue time.
//! Source of behaviour: `pkg/scheduler/framework/plugins/queuesort/priority_sort.go`.

use crate::framework::QueuedPodInfo;
use crate::framework::interface::{Plugin, QueueSortPlugin};
use std::sync::Arc;

pub(crate) const NAME: &str = "PrioritySort";

#[derive(Debug, Default)]
pub struct PrioritySort;

impl Plugin for PrioritySort {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_queue_sort(self: Arc<Self>) -> Option<Arc<dyn QueueSortPlugin>> {
        Some(self)
    }
}

impl QueueSortPlugin for PrioritySort {
    fn less(&self, a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
        let (pa, pb) = (a.pod.priority(), b.pod.priority());
        pa > pb || (pa == pb && a.timestamp < b.timestamp)
    }
}
