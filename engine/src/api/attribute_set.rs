//! Device attributes as sets of values (DRAListTypeAttributes).
//!
//! With the gate on, kube's experimental allocator reads every attribute as a set: a scalar
//! is a set of one, a list (`ints`, `bools`, `strings`, `versions`) the set of its
//! elements (`attributeAsSet` in
//! `staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/allocator_experimental.go`).
//! `matchAttribute` then asks that the devices' sets have a common element: it keeps the
//! running intersection, narrowed by each device added and restored when the search backs
//! out of one. Elements of different types never meet (an int 1 is not the string "1";
//! versions compare as written, as kube's `sets.Set[string]` of them does).
//!
//! kube builds hash sets for every device it tries, which is most of its time on
//! `listattributes/`. Here each device's list attributes carry a sorted index of element
//! hashes, built once when the slice is converted ([`ListIndex`]); a membership test is a
//! binary search on that index and a typed comparison on a hash hit, so hashes only speed
//! the search and never decide a match. The running intersection is a list of positions
//! in the first device's index: it is always a subset of that set.

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

/// A device attribute's typed value (`DeviceAttribute`: exactly one of its fields; the list
/// forms are DRAListTypeAttributes'). Versions stay text (semantic versions, compared by
/// the selector's `semver` functions and by `matchAttribute` as values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeValue {
    Bool(bool),
    Int(i64),
    String(Arc<str>),
    Version(Arc<str>),
    Bools(Arc<[bool]>),
    Ints(Arc<[i64]>),
    Strings(Arc<[Arc<str>]>),
    Versions(Arc<[Arc<str>]>),
}

/// Fixed seeds: an index built at conversion is read by every later search.
const SEEDS: ahash::RandomState = ahash::RandomState::with_seeds(
    0x7469_6465_6761_7465,
    0x6c69_7374_2d61_7474,
    0x7273_2d73_6574_7321,
    0x6b75_6265_2d76_3137,
);

/// A list attribute's elements by hash: `(hash, position)`, sorted.
pub(crate) type ListIndex = Box<[(u64, u32)]>;

/// The number of elements `v` has as a set (before de-duplication: a list may repeat one).
pub(crate) fn len(v: &AttributeValue) -> usize {
    use AttributeValue as V;
    match v {
        V::Bool(_) | V::Int(_) | V::String(_) | V::Version(_) => 1,
        V::Bools(l) => l.len(),
        V::Ints(l) => l.len(),
        V::Strings(l) | V::Versions(l) => l.len(),
    }
}

/// The hash of element `i` of `v`, with its type (so that `1` and `"1"` differ).
fn hash(v: &AttributeValue, i: usize) -> u64 {
    use AttributeValue as V;
    let mut h = SEEDS.build_hasher();
    match v {
        V::Bool(b) => (0u8, *b).hash(&mut h),
        V::Bools(l) => (0u8, l[i]).hash(&mut h),
        V::Int(x) => (1u8, *x).hash(&mut h),
        V::Ints(l) => (1u8, l[i]).hash(&mut h),
        V::String(s) => (2u8, &**s).hash(&mut h),
        V::Strings(l) => (2u8, &*l[i]).hash(&mut h),
        V::Version(s) => (3u8, &**s).hash(&mut h),
        V::Versions(l) => (3u8, &*l[i]).hash(&mut h),
    }
    h.finish()
}

/// Whether element `i` of `a` is element `j` of `b` (same type, same value).
fn same(a: &AttributeValue, i: usize, b: &AttributeValue, j: usize) -> bool {
    use AttributeValue as V;
    match (a, b) {
        (V::Bool(_) | V::Bools(_), V::Bool(_) | V::Bools(_)) => bool_at(a, i) == bool_at(b, j),
        (V::Int(_) | V::Ints(_), V::Int(_) | V::Ints(_)) => int_at(a, i) == int_at(b, j),
        (V::String(_) | V::Strings(_), V::String(_) | V::Strings(_))
        | (V::Version(_) | V::Versions(_), V::Version(_) | V::Versions(_)) => {
            str_at(a, i) == str_at(b, j)
        }
        _ => false,
    }
}

fn bool_at(v: &AttributeValue, i: usize) -> Option<bool> {
    match v {
        AttributeValue::Bool(b) => Some(*b),
        AttributeValue::Bools(l) => Some(l[i]),
        _ => None,
    }
}

fn int_at(v: &AttributeValue, i: usize) -> Option<i64> {
    match v {
        AttributeValue::Int(x) => Some(*x),
        AttributeValue::Ints(l) => Some(l[i]),
        _ => None,
    }
}

fn str_at(v: &AttributeValue, i: usize) -> Option<&str> {
    match v {
        AttributeValue::String(s) | AttributeValue::Version(s) => Some(s),
        AttributeValue::Strings(l) | AttributeValue::Versions(l) => Some(&l[i]),
        _ => None,
    }
}

/// The index of a list attribute (none for a scalar: its one hash is computed when asked).
pub(crate) fn index(v: &AttributeValue) -> Option<ListIndex> {
    use AttributeValue as V;
    if matches!(v, V::Bool(_) | V::Int(_) | V::String(_) | V::Version(_)) {
        return None;
    }
    let mut ix: Vec<(u64, u32)> = (0..len(v))
        .map(|i| (hash(v, i), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    ix.sort_unstable();
    Some(ix.into_boxed_slice())
}

/// One device's attribute as a set: its value and, for a list, its index.
#[derive(Clone, Copy)]
pub(crate) struct SetView<'a> {
    value: &'a AttributeValue,
    index: Option<&'a [(u64, u32)]>,
}

impl<'a> SetView<'a> {
    /// A value and, for a list, its index ([`index`]).
    pub(crate) fn new(value: &'a AttributeValue, index: Option<&'a [(u64, u32)]>) -> Self {
        SetView { value, index }
    }

    /// The attribute's value.
    pub(crate) fn value(&self) -> &'a AttributeValue {
        self.value
    }

    /// Whether element `i` of `other` is in this set.
    pub(crate) fn contains(&self, other: &AttributeValue, i: usize) -> bool {
        let h = hash(other, i);
        match self.index {
            None => hash(self.value, 0) == h && same(self.value, 0, other, i),
            Some(ix) => {
                let start = ix.partition_point(|&(x, _)| x < h);
                ix[start..]
                    .iter()
                    .take_while(|&&(x, _)| x == h)
                    .any(|&(_, j)| same(self.value, j as usize, other, i))
            }
        }
    }

    /// Whether this set and `other` have no element in common (distinctAttribute's test).
    pub(crate) fn disjoint(&self, other: &AttributeValue) -> bool {
        !(0..len(other)).any(|i| self.contains(other, i))
    }
}

/// Whether two sets have an element in common (a merge of their indexes): the pairwise
/// test [`Overlaps::build`] must agree with.
#[cfg(test)]
fn meets(a: SetView<'_>, b: SetView<'_>) -> bool {
    let (sa, sb);
    let ia: &[(u64, u32)] = match a.index {
        Some(ix) => ix,
        None => {
            sa = [(hash(a.value, 0), 0)];
            &sa
        }
    };
    let ib: &[(u64, u32)] = match b.index {
        Some(ix) => ix,
        None => {
            sb = [(hash(b.value, 0), 0)];
            &sb
        }
    };
    let mut j = 0;
    for &(h, p) in ia {
        while j < ib.len() && ib[j].0 < h {
            j += 1;
        }
        let hit = ib[j..]
            .iter()
            .take_while(|&&(x, _)| x == h)
            .any(|&(_, q)| same(a.value, p as usize, b.value, q as usize));
        if hit {
            return true;
        }
    }
    false
}

/// Which devices of one slice share an element of one attribute: a symmetric bit matrix.
/// matchAttribute's intersection is always within its first device's set, so a device
/// that does not meet the first device is refused without a merge.
pub(crate) struct Overlaps {
    words: usize,
    bits: Vec<u64>,
}

impl Overlaps {
    /// From the slice's devices' sets, in device order (`None`: no such attribute). The
    /// elements are grouped by hash first, so only devices with an element of the same hash
    /// are compared (by value: a hash never decides a match); a device meets itself when its
    /// set has an element.
    fn build(sets: &[Option<SetView<'_>>]) -> Overlaps {
        let n = sets.len();
        let words = n.div_ceil(64);
        let mut bits = vec![0u64; n * words];
        let mut by_hash: ahash::AHashMap<u64, Vec<(usize, usize)>> = ahash::AHashMap::new();
        for (i, set) in sets.iter().enumerate() {
            let Some(set) = set else { continue };
            match set.index {
                Some(ix) => {
                    for &(h, p) in ix {
                        by_hash.entry(h).or_default().push((i, p as usize));
                    }
                }
                None => by_hash.entry(hash(set.value, 0)).or_default().push((i, 0)),
            }
        }
        for entries in by_hash.values() {
            for (x, &(i, p)) in entries.iter().enumerate() {
                for &(j, q) in &entries[x..] {
                    let (Some(a), Some(b)) = (sets[i], sets[j]) else {
                        continue;
                    };
                    if same(a.value, p, b.value, q) {
                        bits[i * words + j / 64] |= 1 << (j % 64);
                        bits[j * words + i / 64] |= 1 << (i % 64);
                    }
                }
            }
        }
        Overlaps { words, bits }
    }

    /// Whether devices `i` and `j` of the slice share an element.
    pub(crate) fn meet(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.words + j / 64] & (1 << (j % 64)) != 0
    }
}

/// A slice's [`Overlaps`] by attribute, built on first use and kept with the slice (which
/// never changes: an update is a new slice), so every later cycle on the node reuses them.
#[derive(Default)]
pub struct OverlapCache(Mutex<Vec<(Arc<str>, Arc<Overlaps>)>>);

impl OverlapCache {
    /// The overlaps of `attribute`, built from `sets` (the devices' sets of it, in order)
    /// the first time.
    pub(crate) fn get<'s>(
        &self,
        attribute: &Arc<str>,
        sets: impl FnOnce() -> Vec<Option<SetView<'s>>>,
    ) -> Arc<Overlaps> {
        let mut cache = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, o)) = cache.iter().find(|(a, _)| a == attribute) {
            return o.clone();
        }
        let o = Arc::new(Overlaps::build(&sets()));
        cache.push((attribute.clone(), o.clone()));
        o
    }
}

impl Clone for OverlapCache {
    /// A copy starts empty (it is a cache).
    fn clone(&self) -> Self {
        OverlapCache::default()
    }
}

impl PartialEq for OverlapCache {
    /// A cache never makes two slices differ.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for OverlapCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OverlapCache")
    }
}

/// matchAttribute's running intersection under DRAListTypeAttributes: positions in the
/// first device's index, in hash order, one list per device added (kube's
/// `intersectionStack`). Narrowing merges that list with the new device's index, so a
/// check costs one pass over both, with no hashing and, once warm, no allocation.
#[derive(Default)]
pub(crate) struct Intersection {
    first: Option<AttributeValue>,
    /// The first device's `(hash, position)` pairs, sorted.
    first_ix: Vec<(u64, u32)>,
    /// `stack[..depth]` are live; later entries are kept for their buffers.
    stack: Vec<Vec<u32>>,
    depth: usize,
}

impl Intersection {
    /// Adds a device's set: `false` (and nothing changes) when nothing would be left.
    pub(crate) fn add(&mut self, set: SetView<'_>) -> bool {
        let single;
        let ix: &[(u64, u32)] = match set.index {
            Some(ix) => ix,
            None => {
                single = [(hash(set.value, 0), 0)];
                &single
            }
        };
        if self.depth == self.stack.len() {
            self.stack.push(Vec::new());
        }
        let Some(first) = &self.first else {
            if ix.is_empty() {
                return false;
            }
            self.first = Some(set.value.clone());
            self.first_ix.clear();
            self.first_ix.extend_from_slice(ix);
            let level = &mut self.stack[0];
            level.clear();
            level.extend(0..u32::try_from(ix.len()).unwrap_or(u32::MAX));
            self.depth = 1;
            return true;
        };
        let (live, rest) = self.stack.split_at_mut(self.depth);
        let current = &live[self.depth - 1];
        let narrowed = &mut rest[0];
        narrowed.clear();
        let mut j = 0;
        for &p in current {
            let (h, pos) = self.first_ix[p as usize];
            while j < ix.len() && ix[j].0 < h {
                j += 1;
            }
            let hit = ix[j..]
                .iter()
                .take_while(|&&(x, _)| x == h)
                .any(|&(_, q)| same(first, pos as usize, set.value, q as usize));
            if hit {
                narrowed.push(p);
            }
        }
        if narrowed.is_empty() {
            return false;
        }
        self.depth += 1;
        true
    }

    /// Backs out of the last device added.
    pub(crate) fn remove(&mut self) {
        self.depth -= 1;
        if self.depth == 0 {
            self.first = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> AttributeValue {
        AttributeValue::Strings(v.iter().map(|s| Arc::from(*s)).collect())
    }

    fn view(v: &AttributeValue) -> (AttributeValue, Option<ListIndex>) {
        (v.clone(), index(v))
    }

    fn set<'a>(v: &'a (AttributeValue, Option<ListIndex>)) -> SetView<'a> {
        SetView {
            value: &v.0,
            index: v.1.as_deref(),
        }
    }

    #[test]
    fn the_intersection_narrows_and_backs_out() {
        let a = view(&strings(&["x", "y", "z"]));
        let b = view(&strings(&["y", "z", "w"]));
        let c = view(&strings(&["z"]));
        let d = view(&AttributeValue::String("y".into()));
        let mut m = Intersection::default();
        assert!(m.add(set(&a)));
        assert!(m.add(set(&b)));
        assert_eq!(m.stack[m.depth - 1].len(), 2);
        assert!(m.add(set(&c)));
        // {z} and {y} share nothing: refused, the intersection stays {z}.
        assert!(!m.add(set(&d)));
        let z =
            a.1.as_ref()
                .unwrap()
                .iter()
                .position(|&(_, i)| i == 2)
                .unwrap();
        assert_eq!(m.stack[m.depth - 1], vec![z as u32]);
        m.remove();
        // Back to {y, z}: the scalar "y" is in it.
        assert!(m.add(set(&d)));
        m.remove();
        m.remove();
        m.remove();
        assert!(m.first.is_none());
        assert!(m.add(set(&d)), "an empty intersection takes any device");
    }

    #[test]
    fn elements_of_different_types_never_meet() {
        let ints = view(&AttributeValue::Ints(vec![1, 2].into()));
        let text = view(&strings(&["1", "2"]));
        let version = view(&AttributeValue::Version("1.0.0".into()));
        let version_text = view(&AttributeValue::String("1.0.0".into()));
        assert!(set(&ints).disjoint(&text.0));
        assert!(set(&version).disjoint(&version_text.0));
        assert!(!set(&ints).disjoint(&AttributeValue::Int(2)));
        let bools = view(&AttributeValue::Bools(vec![true].into()));
        assert!(!set(&bools).disjoint(&AttributeValue::Bool(true)));
        assert!(set(&bools).disjoint(&AttributeValue::Bool(false)));
    }

    #[test]
    fn a_list_with_many_elements_finds_each_one() {
        let names: Vec<String> = (0..48).map(|i| format!("device-7-value-{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let big = view(&strings(&refs));
        for n in &names {
            assert!(set(&big).contains(&AttributeValue::String(n.as_str().into()), 0));
        }
        assert!(!set(&big).contains(&AttributeValue::String("device-7-value-48".into()), 0));
    }

    /// One generated attribute: a scalar or a list over a small universe, so that devices
    /// share elements often; `None`: the device lacks the attribute.
    fn value() -> impl proptest::strategy::Strategy<Value = Option<AttributeValue>> {
        use proptest::prelude::*;
        let word = prop::sample::select(vec!["a", "b", "c", "1", "2"]);
        prop_oneof![
            Just(None),
            word.clone()
                .prop_map(|w| Some(AttributeValue::String(w.into()))),
            (0i64..3).prop_map(|x| Some(AttributeValue::Int(x))),
            prop::collection::vec(word, 0..4).prop_map(|v| Some(strings(&v))),
            prop::collection::vec(0i64..3, 0..4).prop_map(|v| Some(AttributeValue::Ints(v.into()))),
        ]
    }

    proptest::proptest! {
        /// The matrix built by hash groups is the pairwise test's, for every pair.
        #[test]
        fn overlaps_agree_with_the_pairwise_test(values in proptest::collection::vec(value(), 0..70)) {
            let views: Vec<Option<(AttributeValue, Option<ListIndex>)>> =
                values.iter().map(|v| v.as_ref().map(view)).collect();
            let sets: Vec<Option<SetView<'_>>> = views.iter().map(|v| v.as_ref().map(set)).collect();
            let o = Overlaps::build(&sets);
            for i in 0..sets.len() {
                for j in 0..sets.len() {
                    let want = matches!((sets[i], sets[j]), (Some(a), Some(b)) if meets(a, b));
                    proptest::prop_assert_eq!(o.meet(i, j), want, "devices {} and {}", i, j);
                }
            }
        }
    }
}
