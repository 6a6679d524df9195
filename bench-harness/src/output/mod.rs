//! Outputs: perf-dash data items and thresholds ([`report`]), comparing two runs
//! ([`compare`]), the Prometheus text exposition ([`prom`]) and the HTML report ([`html`]).

pub mod compare;
pub mod html;
pub mod prom;
pub mod report;
pub mod stats;
