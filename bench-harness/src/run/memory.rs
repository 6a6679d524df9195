//! The process's memory, from `/proc/self/status`: the resident set now and at its peak.

/// A `kB` field of `/proc/self/status` (`VmRSS:`, `VmHWM:`) in MB, or None where /proc is not
/// available.
fn proc_status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The process's resident set in MB (`VmRSS`), or None where /proc is not available.
pub fn rss_mb() -> Option<f64> {
    proc_status_mb("VmRSS:")
}

/// The process's peak resident set in MB (`VmHWM`), or None where /proc is not available.
pub fn peak_rss_mb() -> Option<f64> {
    proc_status_mb("VmHWM:")
}

/// Resets the peak resident set to the current one (Linux: `5` into `/proc/self/clear_refs`),
/// so that each workload reports its own peak. Where that is refused the peak is the
/// process's so far.
pub(crate) fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}
