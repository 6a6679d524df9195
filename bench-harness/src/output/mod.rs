//! Outputs: what a run gives back ([`results`]), perf-dash data items and thresholds
//! ([`report`]), what `tidegate run` prints and writes for any caller of the library (the
//! results table: [`table`]; the files: [`files`]; both driven by a run's reports:
//! [`sink`]), the flamegraph ([`flame`]), comparing two runs ([`compare`], its statistics in
//! [`stats`] and its resolution rule in [`resolution`], and in Go's benchmark format for
//! benchstat: [`benchstat`]), the Prometheus text exposition ([`prom`]) and the HTML report
//! ([`html`]).

pub mod benchstat;
pub mod compare;
pub mod files;
pub mod flame;
pub mod html;
pub mod merge;
pub mod prom;
pub mod report;
pub mod resolution;
pub mod results;
pub mod sink;
pub mod stats;
pub mod table;
