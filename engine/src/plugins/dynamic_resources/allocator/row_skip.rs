//! The overlap-row skip of the allocator's search: under a list-attribute matchAttribute,
//! the devices outside the first device's overlap row are passed over unseen, where kube
//! would see nothing at them either (the conditions are on [`Search::refused_row`]).

use super::{Constraint, RequestKey, Search};
use crate::api::attribute_set::Overlaps;
use crate::api::dra::ResourceSlice;
use std::sync::Arc;

impl Search<'_, '_> {
    /// A list-attribute matchAttribute constraint of the request whose first device is in
    /// `slice`: that device's overlap row, outside which every device is refused. `None`
    /// unless passing those devices over unseen changes nothing kube would see: each of them
    /// would be skipped for the refusal (and before it for being in use, or not selected),
    /// provided its selectors and capacity check cannot fail first ([`Self::settle`]).
    pub(super) fn refused_row(
        &mut self,
        key: RequestKey,
        pool: usize,
        slice: &Arc<ResourceSlice>,
    ) -> Option<(usize, Arc<Overlaps>)> {
        let data = &self.requests[&key];
        let name = &data.alt.name;
        let base = data.parent.as_deref().unwrap_or(name);
        let row = self.constraints[key.0].iter().find_map(|k| match k {
            Constraint::Match(m) => m.row(name, Some(base), slice).map(|(f, o)| (f, o.clone())),
            Constraint::Distinct(_) => None,
        });
        if row.is_none() || !self.settle(key, pool, slice) {
            return None;
        }
        row
    }

    /// Whether every device of `slice` has its selector result for the request's group (each
    /// evaluated now if not yet: selectors are pure, so this changes no result, and a
    /// failure is left for the search to meet in kube's order) and none can fail its
    /// capacity check.
    fn settle(&mut self, key: RequestKey, pool: usize, slice: &Arc<ResourceSlice>) -> bool {
        let group = self.requests[&key].selector_group;
        let at = (group, Arc::as_ptr(slice));
        if let Some(settled) = self.settled.get(&at) {
            return *settled;
        }
        let mut settled = !self.a.features.consumable_capacity
            || slice.devices.iter().all(|d| d.capacities.is_empty());
        for index in 0..slice.devices.len() {
            if !settled {
                break;
            }
            let c = self.candidate(pool, slice, index);
            if self.matches.contains_key(&(group, c.id)) {
                continue;
            }
            match self.selectable(key.0, &self.requests[&key], &c) {
                Ok(m) => {
                    self.matches.insert((group, c.id), m);
                }
                Err(_) => settled = false,
            }
        }
        self.settled.insert(at, settled);
        settled
    }
}
