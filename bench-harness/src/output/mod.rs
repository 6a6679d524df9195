//! Outputs: perf-dash data items and thresholds ([`report`]), comparing two runs
//! ([`compare`], and in Go's benchmark format for benchstat: [`benchstat`]), the Prometheus text exposition ([`prom`]) and the HTML report ([`html`]).

pub mod benchstat;
pub mod compare;
pub mod html;
pub mod prom;
pub mod report;
pub mod stats;
