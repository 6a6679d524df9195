//! PrioritySort: higher `spec.priority` first, then earlier enqueue time.
//! Source of behaviour: `pkg/scheduler/framework/plugins/queuesort/priority_sort.go`.

use crate::framework::QueuedPodInfo;
use crate::framework::interface::{Plugin, QueueSortPlugin, SortKeyFn};
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
    fn sort_key(&self) -> Option<SortKeyFn> {
        Some(sort_key)
    }
}

/// `less`'s order as one integer: the priority, highest first, in bits 94..126; the
/// timestamp's seconds in bits 30..94 and its nanoseconds (below 10^9 < 2^30) in bits 0..30.
fn sort_key(q: &QueuedPodInfo) -> u128 {
    let rank = (i64::from(i32::MAX) - i64::from(q.pod.priority())) as u128; // < 2^32
    (rank << 94)
        | (u128::from(q.timestamp.as_secs()) << 30)
        | u128::from(q.timestamp.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Pod, PodSpecInfo};
    use proptest::prelude::*;
    use std::time::Duration;

    fn queued(priority: i32, secs: u64, nanos: u32) -> QueuedPodInfo {
        let spec = Arc::new(PodSpecInfo {
            priority,
            ..Default::default()
        });
        QueuedPodInfo::new(
            Arc::new(Pod::new("ns", "p", spec)),
            Duration::new(secs, nanos),
        )
    }

    proptest! {
        /// The key's contract: `less(a, b) == (key(a) < key(b))`, over the whole range of
        /// priorities and timestamps (the corners included).
        #[test]
        fn the_key_orders_as_less_does(
            pa in prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(0), any::<i32>()],
            pb in prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(0), any::<i32>()],
            sa in prop_oneof![Just(0u64), Just(u64::MAX), 0u64..4], sb in prop_oneof![Just(0u64), Just(u64::MAX), 0u64..4],
            na in prop_oneof![Just(0u32), Just(999_999_999), 0u32..3], nb in prop_oneof![Just(0u32), Just(999_999_999), 0u32..3],
        ) {
            let (a, b) = (queued(pa, sa, na), queued(pb, sb, nb));
            let p = PrioritySort;
            prop_assert_eq!(p.less(&a, &b), sort_key(&a) < sort_key(&b));
            prop_assert_eq!(p.less(&b, &a), sort_key(&b) < sort_key(&a));
        }
    }
}
