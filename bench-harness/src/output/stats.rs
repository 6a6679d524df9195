//! The statistics of `tidegate compare`, as Go's benchstat does them: the Mann–Whitney U test
//! (two-sided) on the runs of each side, significance at α = 0.05.
//!
//! Without ties the p-value is exact (the distribution of U by counting, as benchstat's
//! `MannWhitneyUTest` does for small samples); with ties it is the normal approximation with
//! the tie correction and a continuity correction. One run on a side can never be
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
    if tie_term == 0.0 && n1 * n2 <= 2500 {
        return exact_p(n1, n2, u.round() as usize);
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

    #[test]
    fn ties_use_the_normal_approximation() {
        // The normal approximation with the tie and continuity corrections (what R's
        // wilcox.test does with ties): U = 0, σ² = 25/12·(11 − 240/90), z = 12/σ = 2.88.
        let p = mann_whitney_p(&[30.0; 5], &[40.0; 5]);
        assert!((p - 0.003_977).abs() < 1e-5, "{p}");
        // All values equal: no evidence at all.
        assert_eq!(mann_whitney_p(&[5.0; 4], &[5.0; 4]), 1.0);
    }

    #[test]
    fn normal_tail() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_sf(1.959_963_985) - 0.025).abs() < 1e-6);
        assert!((normal_sf(-1.0) - 0.841_344_746).abs() < 1e-6);
    }
}
