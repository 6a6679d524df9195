//! The claim constraints the allocator's search keeps (kube's `constraint` implementations
//! in the allocators of `k8s.io/dynamic-resource-allocation/structured/internal/`):
//! `matchAttribute` and `distinctAttribute`, each told of every device the search takes
//! for a request it names (`add`, refusing a device that would break it) and of every
//! device it gives back (`remove`).

use super::Candidate;
use crate::api::attribute_set::{Intersection, Overlaps};
use crate::api::dra::{AttributeValue, ResourceSlice};
use std::sync::Arc;

/// kube's `matchAttributeConstraint`: devices of the named requests share one value, or
/// under DRAListTypeAttributes one element of their values' sets (`sets`).
pub(super) struct MatchAttribute {
    pub(super) requests: Vec<Arc<str>>,
    pub(super) attribute: Arc<str>,
    pub(super) value: Option<AttributeValue>,
    pub(super) devices: usize,
    /// DRAListTypeAttributes: the running intersection (kube's experimental allocator).
    pub(super) sets: Option<Intersection>,
    /// With `sets`: the first device's slice, its index there, and that slice's overlaps.
    pub(super) first: Option<(Arc<ResourceSlice>, usize, Arc<Overlaps>)>,
}

impl MatchAttribute {
    pub(super) fn add(&mut self, request: &str, parent: Option<&str>, c: &Candidate) -> bool {
        if !applies(&self.requests, request, parent) {
            return true;
        }
        let device = c.device();
        if let Some(sets) = &mut self.sets {
            let Some(set) = device.attribute_set(&self.attribute) else {
                return false;
            };
            if !sets.add(set) {
                return false;
            }
            if self.devices == 0 {
                let devices = &c.slice.devices;
                let overlaps = c.slice.overlaps.get(&self.attribute, || {
                    devices
                        .iter()
                        .map(|d| d.attribute_set(&self.attribute))
                        .collect()
                });
                self.first = Some((c.slice.clone(), c.index, overlaps));
            }
            self.devices += 1;
            return true;
        }
        let Some(v) = device.attributes.get(&self.attribute) else {
            return false;
        };
        if self.devices == 0 {
            self.value = Some(v.clone());
        } else if !scalar_equal(self.value.as_ref(), v) {
            return false;
        }
        self.devices += 1;
        true
    }

    /// Whether the kept overlap matrix of the first device's slice already refuses `c`: it
    /// shares no element with the first device, so no intersection can hold it.
    pub(super) fn refuses(&self, request: &str, parent: Option<&str>, c: &Candidate) -> bool {
        self.row(request, parent, &c.slice)
            .is_some_and(|(first, overlaps)| !overlaps.meet(first, c.index))
    }

    /// When the constraint covers the request and its first device is in `slice`: that
    /// device's index and its slice's overlaps (the devices [`Self::refuses`] lets through).
    pub(super) fn row(
        &self,
        request: &str,
        parent: Option<&str>,
        slice: &Arc<ResourceSlice>,
    ) -> Option<(usize, &Arc<Overlaps>)> {
        let (first_slice, first, overlaps) = self.first.as_ref()?;
        (Arc::ptr_eq(first_slice, slice) && applies(&self.requests, request, parent))
            .then_some((*first, overlaps))
    }

    pub(super) fn remove(&mut self, request: &str, parent: Option<&str>) {
        if applies(&self.requests, request, parent) {
            self.devices -= 1;
            if let Some(sets) = &mut self.sets {
                sets.remove();
                if self.devices == 0 {
                    self.first = None;
                }
            }
        }
    }
}

/// kube's `distinctAttributeConstraint`: devices of the named requests all differ in the
/// attribute (under DRAListTypeAttributes: their value sets are pairwise disjoint).
pub(super) struct DistinctAttribute {
    pub(super) requests: Vec<Arc<str>>,
    pub(super) attribute: Arc<str>,
    /// The values of the devices added, in order.
    pub(super) values: Vec<AttributeValue>,
    pub(super) list_type_attributes: bool,
}

impl DistinctAttribute {
    pub(super) fn add(&mut self, request: &str, parent: Option<&str>, c: &Candidate) -> bool {
        if !applies(&self.requests, request, parent) {
            return true;
        }
        let Some(set) = c.device().attribute_set(&self.attribute) else {
            return false;
        };
        let v = set.value();
        let distinct = if self.list_type_attributes {
            self.values.iter().all(|p| set.disjoint(p))
        } else {
            self.values.iter().all(|p| scalar_distinct(v, p))
        };
        if distinct {
            self.values.push(v.clone());
        }
        distinct
    }

    pub(super) fn remove(&mut self, request: &str, parent: Option<&str>) {
        if applies(&self.requests, request, parent) {
            self.values.pop();
        }
    }
}

/// kube's scalar test: a value differs from a previous one of its type; a list (or a type
/// kube does not know) is never distinct from anything.
pub(super) fn scalar_distinct(new: &AttributeValue, old: &AttributeValue) -> bool {
    use AttributeValue as V;
    match (new, old) {
        (V::String(x), V::String(y)) | (V::Version(x), V::Version(y)) => x != y,
        (V::Int(x), V::Int(y)) => x != y,
        (V::Bool(x), V::Bool(y)) => x != y,
        (V::String(_) | V::Version(_) | V::Int(_) | V::Bool(_), _) => true,
        _ => false,
    }
}

/// A claim's constraint (`DeviceConstraint`).
pub(super) enum Constraint {
    Match(MatchAttribute),
    Distinct(DistinctAttribute),
}

impl Constraint {
    pub(super) fn add(&mut self, request: &str, parent: Option<&str>, c: &Candidate) -> bool {
        match self {
            Constraint::Match(m) => m.add(request, parent, c),
            Constraint::Distinct(d) => d.add(request, parent, c),
        }
    }

    pub(super) fn remove(&mut self, request: &str, parent: Option<&str>) {
        match self {
            Constraint::Match(m) => m.remove(request, parent),
            Constraint::Distinct(d) => d.remove(request, parent),
        }
    }
}

/// Whether a constraint naming `requests` (none: all) covers `request` (`request/sub` for a
/// sub-request, which a constraint may name by its parent).
pub(super) fn applies(requests: &[Arc<str>], request: &str, parent: Option<&str>) -> bool {
    requests.is_empty()
        || requests
            .iter()
            .any(|r| &**r == request || parent.is_some_and(|p| &**r == p))
}

/// kube's stable allocator compares the scalar forms only (a list attribute never matches).
pub(super) fn scalar_equal(a: Option<&AttributeValue>, b: &AttributeValue) -> bool {
    use AttributeValue as V;
    match (a, b) {
        (Some(V::String(x)), V::String(y)) | (Some(V::Version(x)), V::Version(y)) => x == y,
        (Some(V::Int(x)), V::Int(y)) => x == y,
        (Some(V::Bool(x)), V::Bool(y)) => x == y,
        _ => false,
    }
}
