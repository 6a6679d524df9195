//! Loading a `KubeSchedulerConfiguration` file (a test case's `schedulerConfigPath`, or
//! `--scheduler-config`): YAML with positions, kube's decoding, defaulting and validation from
//! the engine, and a trial build of every profile's framework so that an unknown plugin or bad
//! plugin args stop the run before anything executes. Errors name file, line:column and field.

use crate::error::InputError;
use crate::yaml::{SNode, locate, parse};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tidegate_engine::api::{Pod, Sym};
use tidegate_engine::config::{FieldError, KubeSchedulerConfiguration, ResolvedConfig};
use tidegate_engine::framework::ClusterClient;
use tidegate_engine::framework::runtime::Framework;
use tidegate_engine::metrics::Metrics;
use tidegate_engine::plugins::{PluginContext, Registry};

/// A loaded scheduler configuration.
#[derive(Clone, Debug)]
pub struct SchedulerConfigFile {
    pub path: PathBuf,
    pub resolved: ResolvedConfig,
    /// Whether the file sets `parallelism` (then it is the Filter/Score thread count unless
    /// `--threads` says otherwise).
    pub explicit_parallelism: bool,
}

/// A client for the trial build: plugins only keep it, nothing is called.
struct TrialClient;
impl ClusterClient for TrialClient {
    fn bind(&self, _: &Pod, _: Sym) -> Result<(), String> {
        Ok(())
    }
    fn pod_exists_unassigned(&self, _: &Pod) -> bool {
        false
    }
}

fn at(file: &Path, root: &SNode, e: FieldError) -> InputError {
    InputError::new(file, Some(locate(root, &e.path)), e.path, e.message)
}

/// Reads, validates and trial-builds a scheduler config.
pub fn load(path: &Path, registry: &Registry) -> Result<SchedulerConfigFile, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        InputError::new(path, None, "", format!("cannot read scheduler config: {e}"))
    })?;
    let root = parse(path, &text)?;
    let json = root.value.to_json();
    let cfg = KubeSchedulerConfiguration::from_json(&json).map_err(|e| at(path, &root, e))?;
    let resolved = cfg.resolve().map_err(|e| at(path, &root, e))?;
    let ctx = PluginContext {
        client: Arc::new(TrialClient),
        waiting_pods: Default::default(),
        pool: None,
    };
    for (i, p) in resolved.profiles.iter().enumerate() {
        Framework::new(i, p, registry, &ctx, Arc::new(Metrics::new())).map_err(|e| {
            // Every framework error reads `path: detail`.
            let msg = e.to_string();
            let (field, detail) = msg.split_once(": ").unwrap_or(("", msg.as_str()));
            InputError::new(path, Some(locate(&root, field)), field, detail)
        })?;
    }
    Ok(SchedulerConfigFile {
        path: path.to_path_buf(),
        resolved,
        explicit_parallelism: cfg.parallelism.is_some(),
    })
}
