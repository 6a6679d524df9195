//! Shared scoring helpers (kube's `pkg/scheduler/framework/plugins/helper`).

use crate::framework::interface::MAX_NODE_SCORE;

/// kube's `DefaultNormalizeScore`: scale to `[0, MAX_NODE_SCORE]` by the maximum; with
/// `reverse`, higher raw scores become lower. All-zero input stays 0 (or MAX when reversed).
pub(crate) fn default_normalize_score(scores: &mut [i64], reverse: bool) {
    // From 0, as kube's loop starts its maximum (all-negative scores count as all 0).
    let max = scores.iter().copied().fold(0, i64::max);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = MAX_NODE_SCORE);
        }
        return;
    }
    for s in scores.iter_mut() {
        *s = MAX_NODE_SCORE * *s / max;
        if reverse {
            *s = MAX_NODE_SCORE - *s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/helper/normalize_score_test.go
    #[test]
    fn normalize_table() {
        let cases: &[(&[i64], bool, &[i64])] = &[
            (&[10, 20, 30], false, &[33, 66, 100]),
            (&[10, 20, 30], true, &[67, 34, 0]),
            (&[0, 0, 0], false, &[0, 0, 0]),
            (&[0, 0, 0], true, &[100, 100, 100]),
            (&[1000, 0, 500], false, &[100, 0, 50]),
        ];
        for (input, reverse, want) in cases {
            let mut s = input.to_vec();
            default_normalize_score(&mut s, *reverse);
            assert_eq!(&s, want, "input {input:?} reverse {reverse}");
        }
    }
}
