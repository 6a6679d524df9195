//! The statistics of `tidegate compare`, as Go's benchstat does them: the Mann–Whitney U test
//! (two-sided) on the runs of each side, significance at α = 0.05.
//!
//! The p-value is the one benchstat prints (go-moremath's `MannWhitneyUTest`): exact, by
//! counting the arrangements of the two samples, up to 50 runs a side without ties and up to
//! 9 a side with ties (the distribution of the midrank sum given the tie groups, as Klotz
//! 1966); beyond, the normal approximation with the tie and continuity corrections. When
//! the two U statistics are equal the exact p is 1. One run on a side can never be
//! significant (p = 1), nor can 3 against 3 (the smallest two-sided p is 0.1): benchstat's
//! rule that a change needs enough runs to be told from noise.

/// benchstat's default significance level.
pub const ALPHA: f64 = 0.05;

/// The two-sided p-value of the Mann–Whitney U test of samples `x` and `y`.
pub fn mann_whitney_p(x: &[f64], y: &[f64]) -> f64 {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    // Ranks over the pooled sample, ties sharing their mean rank.
    let mut all: Vec<(f64, usize)> = x
        .iter()
        .map(|&v| (v, 0))
        .chain(y.iter().map(|&v| (v, 1)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = all.len();
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for rank in &mut ranks[i..=j] {
            *rank = r;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let r1: f64 = (0..n).filter(|&k| all[k].1 == 0).map(|k| ranks[k]).sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u = u1.min((n1 * n2) as f64 - u1);
    let ties = tie_term != 0.0;
    if !ties && n1 <= 50 && n2 <= 50 || ties && n1 <= 9 && n2 <= 9 {
        if ranks.iter().all(|r| *r == ranks[0]) || 2.0 * u == (n1 * n2) as f64 {
            // All equal, or U at the centre of its symmetric distribution.
            return 1.0;
        }
        if !ties {
            return exact_p(n1, n2, u.round() as usize);
        }
        let groups: Vec<usize> = tie_groups(&all);
        return exact_ties_p(n1, &groups, (2.0 * u).round() as usize);
    }
    let (nf, n1f, n2f) = (n as f64, n1 as f64, n2 as f64);
    let mu = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u1 - mu).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}

/// Exact two-sided p: 2·P(U ≤ u) under the null hypothesis, by counting the arrangements
/// of the two samples with each U (`count[n1][n2][u]`, built up from smaller samples).
fn exact_p(n1: usize, n2: usize, u: usize) -> f64 {
    let max_u = n1 * n2;
    // ways[a][b] = counts of U for samples of a and b, as vectors over U.
    let mut ways: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n2 + 1]; n1 + 1];
    for a in 0..=n1 {
        for b in 0..=n2 {
            ways[a][b] = if a == 0 || b == 0 {
                vec![1.0]
            } else {
                // The largest value is in x (it is above all b values of y: U grows by b)
                // or in y (U unchanged).
                let mut v = vec![0.0; a * b + 1];
                for (k, w) in ways[a - 1][b].iter().enumerate() {
                    v[k + b] += w;
                }
                for (k, w) in ways[a][b - 1].iter().enumerate() {
                    v[k] += w;
                }
                v
            };
        }
    }
    let dist = &ways[n1][n2];
    let total: f64 = dist.iter().sum();
    let below: f64 = dist[..=u.min(max_u)].iter().sum();
    (2.0 * below / total).min(1.0)
}

/// The sizes of the runs of equal values in sorted `all`.
fn tie_groups(all: &[(f64, usize)]) -> Vec<usize> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let j = all[i..].iter().take_while(|v| v.0 == all[i].0).count();
        groups.push(j);
        i += j;
    }
    groups
}

/// Exact two-sided p with ties: 2·P(U ≤ u) where `u2` is 2U. Under the null hypothesis
/// every choice of the first sample's n1 positions among the pooled values is equally
/// likely; taking k of a tie group of size t (ways: C(t, k)) adds k times the group's
/// midrank to the rank sum. The distribution of twice the rank sum (an integer: midranks
/// are halves) is built group by group.
fn exact_ties_p(n1: usize, groups: &[usize], u2: usize) -> f64 {
    let n: usize = groups.iter().sum();
    let max2r = n * (n + 1);
    // dist[k][s]: weighted ways to pick k values with twice their rank sum s.
    let mut dist = vec![vec![0.0f64; max2r + 1]; n1 + 1];
    dist[0][0] = 1.0;
    let mut start = 0; // values before this group
    for &t in groups {
        // Twice the midrank of ranks start+1 ..= start+t.
        let mid2 = 2 * start + t + 1;
        let mut next = vec![vec![0.0f64; max2r + 1]; n1 + 1];
        for k in 0..=n1 {
            for s in 0..=max2r {
                let w = dist[k][s];
                if w == 0.0 {
                    continue;
                }
                for take in 0..=t.min(n1 - k) {
                    next[k + take][s + take * mid2] += w * binomial(t, take);
                }
            }
        }
        dist = next;
        start += t;
    }
    let total: f64 = dist[n1].iter().sum();
    // 2U = 2R − n1(n1+1).
    let offset = n1 * (n1 + 1);
    let below: f64 = dist[n1]
        .iter()
        .enumerate()
        .filter(|(s, _)| *s >= offset && s - offset <= u2)
        .map(|(_, w)| w)
        .sum();
    2.0 * below / total
}

/// C(n, k) as a float.
fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// P(Z > z) for a standard normal Z (Abramowitz–Stegun 7.1.26 for erfc, |error| < 1.5e-7).
fn normal_sf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    erfc / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from R's wilcox.test(x, y, exact = TRUE / correct = TRUE) and
    // benchstat's documented minimum p-values.
    #[test]
    fn exact_p_values() {
        // Completely separated samples: the smallest p for their sizes.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]);
        assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Interleaved: nothing to see.
        let p = mann_whitney_p(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]);
        assert!((p - 0.7).abs() < 1e-12, "{p}");
        // One run on a side never reaches significance.
        assert_eq!(mann_whitney_p(&[1.0], &[2.0]), 1.0);
        assert!(mann_whitney_p(&[1.0, 2.0, 3.0], &[10.0]) >= 0.5);
    }

    /// Up to 9 runs a side, ties get the exact distribution, as benchstat. The expected
    /// p-values are what benchstat (golang.org/x/perf/cmd/benchstat, go-moremath's
    /// MannWhitneyUTest) printed for these samples, `benchstat -col side` over
    /// `tidegate compare --format benchstat` of two sides of 3 runs.
    #[test]
    fn ties_are_exact_up_to_nine_runs_a_side_as_benchstat() {
        // p50 pods/s of SchedulingBasic/500Nodes: benchstat `~ (p=0.200 n=3)`.
        let p = mann_whitney_p(
            &[12500.0, 14000.0, 14000.0],
            &[1166.666667, 12500.0, 11500.0],
        );
        assert!((p - 0.2).abs() < 1e-12, "{p}");
        // PreEnqueue p90 in ns: benchstat `~ (p=0.800 n=3)`.
        let p = mann_whitney_p(&[79.0, 78.0, 74.0], &[80.0, 76.0, 78.0]);
        assert!((p - 0.8).abs() < 1e-12, "{p}");
        // Two separated groups of 5 equal values: the only arrangement as extreme is this
        // one and its mirror, 2 of C(10, 5) = 252.
        let p = mann_whitney_p(&[30.0; 5], &[40.0; 5]);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // All values equal: no evidence at all.
        assert_eq!(mann_whitney_p(&[5.0; 4], &[5.0; 4]), 1.0);
    }

    #[test]
    fn beyond_nine_runs_ties_use_the_normal_approximation() {
        // The normal approximation with the tie and continuity corrections (what R's
        // wilcox.test does with ties): U = 0, σ² = 100/12·(21 − 1980/380), z = 49.5/σ.
        let p = mann_whitney_p(&[30.0; 10], &[40.0; 10]);
        let sigma = (100.0 / 12.0 * (21.0 - 1980.0 / 380.0_f64)).sqrt();
        assert!((p - 2.0 * normal_sf(49.5 / sigma)).abs() < 1e-12, "{p}");
        assert!(p < 1e-4, "{p}");
    }

    #[test]
    fn normal_tail() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_sf(1.959_963_985) - 0.025).abs() < 1e-6);
        assert!((normal_sf(-1.0) - 0.841_344_746).abs() < 1e-6);
    }
}
