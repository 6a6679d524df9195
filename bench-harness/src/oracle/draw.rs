//! The random draws the scenarios are made of (each from the scenario's own ChaCha8
//! stream).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A number in `lo..=hi`.
pub(super) fn between(rng: &mut ChaCha8Rng, (lo, hi): (u32, u32)) -> u32 {
    rng.random_range(lo..=hi)
}

/// True with `pct` percent.
pub(super) fn chance(rng: &mut ChaCha8Rng, pct: u32) -> bool {
    rng.random_ratio(pct.min(100), 100)
}

/// One of `from`.
pub(super) fn pick<T: Copy>(rng: &mut ChaCha8Rng, from: &[T]) -> T {
    from[rng.random_range(0..from.len() as u32) as usize]
}

/// One of `from`, by weight.
pub(super) fn pick_weighted<T: Copy>(rng: &mut ChaCha8Rng, from: &[(T, u32)]) -> T {
    let total: u32 = from.iter().map(|(_, w)| w).sum();
    let mut at = rng.random_range(0..total.max(1));
    for &(v, w) in from {
        if at < w {
            return v;
        }
        at -= w;
    }
    from[from.len() - 1].0
}
