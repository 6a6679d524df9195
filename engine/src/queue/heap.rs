//! A binary heap keyed by pod, with O(log n) update and delete by key (kube's `heap.Heap`).
//!
//! Invariant: `index[items[i].0] == i` for every slot `i`, and the heap property
//! `!less(items[child], items[parent])` holds for every edge.

use ahash::AHashMap;
use std::hash::Hash;
use std::sync::Arc;

pub(crate) type LessFn<V> = Arc<dyn Fn(&V, &V) -> bool + Send + Sync>;

pub struct KeyedHeap<K, V> {
    items: Vec<(K, V)>,
    index: AHashMap<K, usize>,
    less: LessFn<V>,
}

impl<K: Hash + Eq + Clone, V> KeyedHeap<K, V> {
    pub fn new(less: LessFn<V>) -> Self {
        KeyedHeap {
            items: Vec::new(),
            index: AHashMap::new(),
            less,
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn contains(&self, k: &K) -> bool {
        self.index.contains_key(k)
    }
    pub fn get(&self, k: &K) -> Option<&V> {
        self.index.get(k).map(|&i| &self.items[i].1)
    }
    pub fn peek(&self) -> Option<&V> {
        self.items.first().map(|(_, v)| v)
    }
    pub fn iter(&self) -> impl Iterator<Item = &V> {
        self.items.iter().map(|(_, v)| v)
    }

    /// Inserts or replaces the value for `k`.
    pub fn push(&mut self, k: K, v: V) {
        if let Some(&i) = self.index.get(&k) {
            self.items[i].1 = v;
            self.fix(i);
            return;
        }
        let i = self.items.len();
        self.index.insert(k.clone(), i);
        self.items.push((k, v));
        self.up(i);
    }

    pub fn pop(&mut self) -> Option<V> {
        if self.items.is_empty() {
            return None;
        }
        Some(self.remove_at(0))
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        let i = *self.index.get(k)?;
        Some(self.remove_at(i))
    }

    /// Pops while `pred(top)` holds.
    pub(crate) fn pop_while(&mut self, mut pred: impl FnMut(&V) -> bool) -> Vec<V> {
        let mut out = Vec::new();
        while self.peek().is_some_and(&mut pred) {
            if let Some(v) = self.pop() {
                out.push(v);
            }
        }
        out
    }

    fn remove_at(&mut self, i: usize) -> V {
        let last = self.items.len() - 1;
        self.swap(i, last);
        let (k, v) = self.items.pop().expect("non-empty");
        self.index.remove(&k);
        if i < self.items.len() {
            self.fix(i);
        }
        v
    }

    fn fix(&mut self, i: usize) {
        if !self.down(i) {
            self.up(i);
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        self.items.swap(a, b);
        *self.index.get_mut(&self.items[a].0).expect("indexed") = a;
        *self.index.get_mut(&self.items[b].0).expect("indexed") = b;
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if !(self.less)(&self.items[i].1, &self.items[p].1) {
                break;
            }
            self.swap(i, p);
            i = p;
        }
    }

    /// Returns whether the element moved.
    fn down(&mut self, start: usize) -> bool {
        let n = self.items.len();
        let mut i = start;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let mut c = l;
            if l + 1 < n && (self.less)(&self.items[l + 1].1, &self.items[l].1) {
                c = l + 1;
            }
            if !(self.less)(&self.items[c].1, &self.items[i].1) {
                break;
            }
            self.swap(i, c);
            i = c;
        }
        i > start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 3 } else { 256 },
            ..ProptestConfig::default()
        })]
        #[test]
        fn behaves_like_a_sorted_map(ops in proptest::collection::vec((0u8..3, 0u32..50, 0i64..100), 1..300)) {
            let mut h: KeyedHeap<u32, (i64, u32)> = KeyedHeap::new(Arc::new(|a: &(i64, u32), b: &(i64, u32)| a < b));
            let mut model: std::collections::BTreeMap<u32, i64> = Default::default();
            for (op, k, v) in ops {
                match op {
                    0 => { h.push(k, (v, k)); model.insert(k, v); }
                    1 => { prop_assert_eq!(h.remove(&k).map(|x| x.0), model.remove(&k)); }
                    _ => {
                        let want = model.iter().map(|(k, v)| (*v, *k)).min();
                        let got = h.pop();
                        prop_assert_eq!(got, want);
                        if let Some((_, k)) = want { model.remove(&k); }
                    }
                }
                prop_assert_eq!(h.len(), model.len());
            }
        }
    }
}
