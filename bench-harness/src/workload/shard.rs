//! `--shard I/N`: a deterministic share of the selected workloads, so that a sweep can run
//! on N machines (or N processes) and `tidegate merge` joins their data-items files.
//!
//! Protocol: the selection (`--workload`, `--label-filter`, in the config's order) is the
//! same on every shard; shard I of N (1-based) runs the workloads at positions k with
//! `k mod N == I - 1`. Round robin over the file order spreads a test case's sizes (small
//! to large) over the shards. Each shard's data-items file records its index, N and the
//! whole selection (`tidegateRun.shard`), which is what `merge` checks: every index of
//! 1..=N once, the same selection, the same commit, seed and clock, no workload twice.

use serde::{Deserialize, Serialize};

/// One shard of N, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` with 1 ≤ I ≤ N.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?}: a shard is I/N with 1 <= I <= N (e.g. 2/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the workload at position `k` of the selection is this shard's.
    pub fn owns(self, k: usize) -> bool {
        k % self.count == self.index - 1
    }

    /// This shard's part of `items` (the whole selection, in order).
    pub fn share<T: Clone>(self, items: &[T]) -> Vec<T> {
        items
            .iter()
            .enumerate()
            .filter(|(k, _)| self.owns(*k))
            .map(|(_, x)| x.clone())
            .collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What a shard's data-items file records of its share (`tidegateRun.shard`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShardRecord {
    pub index: usize,
    pub count: usize,
    /// The whole selection (`TestCase/Workload`, in the config's order), on every shard.
    pub selected: Vec<String>,
}

impl ShardRecord {
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_selection_round_robin_without_overlap_or_gap() {
        let items: Vec<usize> = (0..10).collect();
        let shares: Vec<Vec<usize>> = (1..=3)
            .map(|i| Shard { index: i, count: 3 }.share(&items))
            .collect();
        assert_eq!(shares[0], vec![0, 3, 6, 9]);
        assert_eq!(shares[1], vec![1, 4, 7]);
        assert_eq!(shares[2], vec![2, 5, 8]);
        let mut all: Vec<usize> = shares.concat();
        all.sort();
        assert_eq!(all, items);
    }

    #[test]
    fn a_shard_is_i_of_n_from_one() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse("1/1"), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "", "/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
