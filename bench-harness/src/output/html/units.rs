//! Human units for the report: durations as ns/µs/ms/s and counts as 1k/10k/1.2M with three
//! significant digits, rates with thousands grouping, and the axis ticks ("nice" steps of 1,
//! 2, 2.5 and 5, integers only for pod counts, decades on a log axis). Never scientific
//! notation.

/// `v` with `digits` significant digits, in plain decimal notation; `trim` drops trailing
/// zeros after the point (`20` rather than `20.0`).
fn significant(v: f64, digits: i32, trim: bool) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() { "-".into() } else { "0".into() };
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let mut s = format!("{v:.decimals$}");
    // Rounding may add a digit (9.996 → "10.00"): one decimal fewer then.
    let int_digits = s
        .trim_start_matches('-')
        .split('.')
        .next()
        .map_or(0, str::len) as i32;
    if decimals > 0 && int_digits > magnitude + 1 {
        let d = decimals - 1;
        s = format!("{v:.d$}");
    }
    if trim && s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    s
}

/// The scaled value and unit of a duration in seconds, the unit chosen after rounding to
/// three significant digits (999.7 µs is `1.00 ms`, not `1000 µs`).
fn duration_parts(secs: f64) -> (f64, &'static str) {
    const UNITS: [(f64, &str); 4] = [(1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms"), (1.0, "s")];
    let a = secs.abs();
    let mut pick = UNITS[0];
    for u in UNITS {
        if a >= u.0 * 0.9995 {
            pick = u;
        }
    }
    (secs / pick.0, pick.1)
}

/// A duration (seconds) with three significant digits: `850 ns`, `20.5 µs`, `1.23 ms`,
/// `12.0 s`.
pub fn duration(secs: f64) -> String {
    if secs == 0.0 {
        return "0".into();
    }
    let (v, unit) = duration_parts(secs);
    format!("{} {unit}", significant(v, 3, false))
}

/// A duration tick label: as [`duration`] without trailing zeros (`250 ms`, `1 s`).
pub fn duration_tick(secs: f64) -> String {
    if secs.abs() < 1e-15 {
        return "0".into();
    }
    let (v, unit) = duration_parts(secs);
    format!("{} {unit}", significant(v, 3, true))
}

/// A count with at most three significant digits: `950`, `1.5k`, `10k`, `1.2M`.
pub fn count(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 0.9995e9 {
        (v / 1e9, "G")
    } else if a >= 0.9995e6 {
        (v / 1e6, "M")
    } else if a >= 999.5 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if a < 1e-12 {
        return "0".into();
    }
    format!("{}{suffix}", significant(scaled, 3, true))
}

/// A rate with thousands grouping (`18,365`), three significant digits below 1,000
/// (`540`, `54.2`).
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() < 999.5 {
        return significant(v, 3, false);
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

/// Megabytes: `110 MB`, `1.25 GB`.
pub fn megabytes(mb: f64) -> String {
    if mb.abs() >= 999.5 {
        format!("{} GB", significant(mb / 1024.0, 3, false))
    } else {
        format!("{} MB", significant(mb, 3, false))
    }
}

/// A step of 1, 2, 2.5 or 5 × 10^k near `raw`; at least 1 and whole for `integer` axes.
fn nice_step(raw: f64, integer: bool) -> f64 {
    let raw = if raw > 0.0 && raw.is_finite() {
        raw
    } else {
        1.0
    };
    let base = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * base)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * base);
    if integer {
        // 2.5 is not whole: 5 then.
        let s = step.max(1.0);
        if s.fract() != 0.0 { s * 2.0 } else { s }
    } else {
        step
    }
}

/// Evenly spaced ticks over `[lo, hi]`, about `target` of them, on multiples of a nice step.
pub fn linear_ticks(lo: f64, hi: f64, target: usize, integer: bool) -> Vec<f64> {
    let step = nice_step((hi - lo) / target.max(1) as f64, integer);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            // Multiples like 0.30000000000000004 print as 0.3 anyway; keep exact zero.
            if v.abs() < step * 1e-9 { 0.0 } else { v }
        })
        .collect()
}

/// Ticks on a log axis over `[lo, hi]` (both > 0): the decades, with 2× and 5× between them
/// when fewer than three decades fit.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades: Vec<f64> = (a..=b)
        .map(|e| 10f64.powi(e))
        .filter(|v| *v >= lo * 0.999 && *v <= hi * 1.001)
        .collect();
    if decades.len() >= 3 {
        return decades;
    }
    (a..=b)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .filter(|v| *v >= lo * 0.999 && *v <= hi * 1.001)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::output::html::tests::scientific_text as scientific;

    #[test]
    fn durations_take_their_unit_with_three_significant_digits() {
        assert_eq!(duration(8.5e-7), "850 ns");
        assert_eq!(duration(2.05e-5), "20.5 µs");
        assert_eq!(duration(2e-5), "20.0 µs");
        assert_eq!(duration(0.0825), "82.5 ms");
        assert_eq!(duration(0.0012345), "1.23 ms");
        assert_eq!(duration(12.0), "12.0 s");
        assert_eq!(
            duration(0.0009997),
            "1.00 ms",
            "rounding moves to the next unit"
        );
        assert_eq!(duration(0.0), "0");
        assert_eq!(duration_tick(0.25), "250 ms");
        assert_eq!(duration_tick(1.0), "1 s");
        assert_eq!(duration_tick(1e-5), "10 µs");
    }

    #[test]
    fn counts_and_rates_read_as_people_write_them() {
        assert_eq!(count(950.0), "950");
        assert_eq!(count(1500.0), "1.5k");
        assert_eq!(count(10_000.0), "10k");
        assert_eq!(count(1_234_567.0), "1.23M");
        assert_eq!(count(0.0), "0");
        assert_eq!(count(2.5), "2.5");
        assert_eq!(grouped(18_365.38), "18,365");
        assert_eq!(grouped(1_234_567.0), "1,234,567");
        assert_eq!(grouped(540.0), "540");
        assert_eq!(grouped(54.23), "54.2");
        assert_eq!(megabytes(110.4), "110 MB");
    }

    #[test]
    fn ticks_are_nice_and_never_scientific() {
        assert_eq!(
            linear_ticks(0.0, 20_000.0, 5, false),
            [0.0, 5000.0, 10_000.0, 15_000.0, 20_000.0]
        );
        // Few pods: whole numbers only, never 0.5 of a pod.
        let t = linear_ticks(-0.1, 2.0, 5, true);
        assert_eq!(t, [0.0, 1.0, 2.0]);
        assert!(
            linear_ticks(0.0, 7.0, 5, true)
                .iter()
                .all(|v| v.fract() == 0.0)
        );
        assert_eq!(log_ticks(1e-6, 1e-3), [1e-6, 1e-5, 1e-4, 1e-3]);
        assert_eq!(log_ticks(1.5e-5, 9e-5), [2e-5, 5e-5]);
        let mut labels = vec![];
        for (lo, hi) in [(0.0, 0.0825), (0.0, 3e-6), (0.0, 1234.0), (0.0, 2e7)] {
            for v in linear_ticks(lo, hi, 5, false) {
                labels.push(duration_tick(v));
                labels.push(count(v));
            }
        }
        for v in log_ticks(1e-9, 100.0) {
            labels.push(duration_tick(v));
        }
        assert!(
            labels.iter().any(|l| l == "82.5 ms" || l == "80 ms"),
            "{labels:?}"
        );
        for l in &labels {
            assert!(!scientific(l), "{l} in scientific notation");
        }
    }
}
