//! The workload file: a scheduler_perf `performance-config.yaml`, read with positions
//! ([`yaml`]) into test cases, each with a workload template of ops and workloads (params,
//! labels, thresholds, feature gates): [`parse`]. Its ops are resolved per workload by the
//! ops layer; the `$name` params they reference are looked up by [`params`]. A test case
//! may name a scheduler configuration ([`scheduler_config`]) and object templates
//! ([`manifest`]).
//!
//! Parsing is strict, as scheduler_perf's is: unknown fields, wrong types, duplicate names,
//! undefined and unused params are errors that name the file, line:column and field. Paths in
//! the config resolve relative to the config file's folder.

pub(crate) mod fields;
pub mod manifest;
pub mod params;
pub mod parse;
pub mod scheduler_config;
pub mod shard;
pub mod yaml;

pub use params::ParamValue;
pub use parse::{label_filter_matches, load, parse_config, parse_go_duration};

use crate::error::Pos;
use crate::workload::yaml::SNode;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A parsed config file.
#[derive(Clone, Debug)]
pub struct Config {
    pub path: PathBuf,
    /// The folder that relative paths resolve against.
    pub dir: PathBuf,
    /// The topic used in output names (the config's folder name, as scheduler_perf's package).
    pub topic: String,
    pub test_cases: Vec<TestCase>,
}

#[derive(Clone, Debug)]
pub struct TestCase {
    pub name: String,
    pub pos: Pos,
    pub feature_gates: BTreeMap<String, bool>,
    pub ops: Vec<RawOp>,
    pub workloads: Vec<Workload>,
    pub scheduler_config_path: Option<String>,
    pub default_pod_template_path: Option<String>,
    /// Where `schedulerConfigPath` and `defaultPodTemplatePath` are written, for errors.
    pub path_pos: BTreeMap<&'static str, Pos>,
    pub labels: Vec<String>,
    pub default_threshold_metric_selector: Option<MetricSelector>,
    /// The test case's `metricsCollectorConfig`: the histogram metrics its windows report
    /// (None: every one, a superset of kube's default list).
    pub metrics_collector: Option<MetricsCollectorConfig>,
}

/// scheduler_perf's `metricsCollectorConfig.metrics`: metric name → the label values whose
/// combinations it is reported for (None: the whole family).
pub type MetricsCollectorConfig = BTreeMap<String, Option<Vec<(String, Vec<String>)>>>;

/// A threshold: one number, or one number per topic.
#[derive(Clone, Debug, PartialEq)]
pub enum Threshold {
    Value(f64),
    PerTopic(BTreeMap<String, f64>),
}

/// Which data item a threshold applies to.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSelector {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub data_bucket: String,
    pub expect_lower: bool,
}

impl Default for MetricSelector {
    fn default() -> Self {
        MetricSelector {
            name: "SchedulingThroughput".into(),
            labels: BTreeMap::new(),
            data_bucket: "Average".into(),
            expect_lower: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub pos: Pos,
    pub params: BTreeMap<String, (ParamValue, Pos)>,
    pub labels: Vec<String>,
    pub threshold: Option<Threshold>,
    pub threshold_metric_selector: Option<MetricSelector>,
    pub feature_gates: BTreeMap<String, bool>,
}

/// An op as written: resolved per workload (params substituted) by [`resolve_ops`](crate::run::ops::resolve_ops).
#[derive(Clone, Debug)]
pub struct RawOp {
    pub index: usize,
    pub pos: Pos,
    pub opcode: String,
    pub fields: Vec<(Spanned<String>, SNode)>,
}
