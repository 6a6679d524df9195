//! String interning for the hot path.
//!
//! Label keys and values, node names, namespaces and taint keys are compared millions of times per
//! second inside Filter and Score. They are interned once, at the API boundary, into a [`Sym`]: a
//! `u32` that compares and hashes as an integer. The interner is process-wide and append-only;
//! symbols are never freed (the set of distinct label keys/values and node names is small and
//! bounded by the cluster, not by the number of pods: pod names are *not* interned).

use ahash::AHashMap;
use parking_lot::RwLock;
use std::fmt;
use std::sync::{Arc, LazyLock};

/// An interned string. `Sym::EMPTY` is the empty string.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(u32);

struct Interner {
    ids: AHashMap<Arc<str>, u32>,
    strings: Vec<Arc<str>>,
}

static INTERNER: LazyLock<RwLock<Interner>> = LazyLock::new(|| {
    let empty: Arc<str> = Arc::from("");
    let mut ids = AHashMap::new();
    ids.insert(empty.clone(), 0);
    RwLock::new(Interner {
        ids,
        strings: vec![empty],
    })
});

impl Sym {
    /// The empty string.
    pub const EMPTY: Sym = Sym(0);

    /// Interns `s`, returning its symbol.
    pub fn new(s: &str) -> Sym {
        if let Some(&id) = INTERNER.read().ids.get(s) {
            return Sym(id);
        }
        let mut w = INTERNER.write();
        if let Some(&id) = w.ids.get(s) {
            return Sym(id);
        }
        let id = u32::try_from(w.strings.len()).expect("more than 2^32 interned strings");
        let arc: Arc<str> = Arc::from(s);
        w.strings.push(arc.clone());
        w.ids.insert(arc, id);
        Sym(id)
    }

    /// Looks `s` up without interning it: `None` when it was never interned (so nothing can
    /// carry it).
    pub fn lookup(s: &str) -> Option<Sym> {
        INTERNER.read().ids.get(s).map(|&id| Sym(id))
    }

    /// The string this symbol stands for.
    pub fn as_arc(self) -> Arc<str> {
        INTERNER.read().strings[self.0 as usize].clone()
    }

    /// The string, as an owned `String` (for messages and output; not for the hot path).
    pub fn to_string_lossy(self) -> String {
        self.as_arc().to_string()
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.as_arc())
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_arc())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_distinct() {
        let a = Sym::new("zone-a");
        let b = Sym::new("zone-b");
        assert_ne!(a, b);
        assert_eq!(a, Sym::new("zone-a"));
        assert_eq!(&*a.as_arc(), "zone-a");
        assert_eq!(Sym::new(""), Sym::EMPTY);
        assert_eq!(Sym::lookup("zone-a"), Some(a));
        assert_eq!(Sym::lookup("never-interned-string-xyz"), None);
    }
}
