//! Loading a `KubeSchedulerConfiguration` file (a test case's `schedulerConfigPath`, or
//! `--scheduler-config`): YAML with positions, kube's decoding, defaulting and validation from
//! the engine, and a trial build of every profile's framework so that an unknown plugin or bad
//! plugin args stop the run before anything executes. Errors name file, line:column and field.

use crate::error::InputError;
use crate::workload::yaml::{SNode, YNode, locate, parse};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tidegate_engine::ClusterClient;
use tidegate_engine::api::{Pod, Sym};
use tidegate_engine::config::{FieldError, KubeSchedulerConfiguration, ResolvedConfig};
use tidegate_engine::features::Features;
use tidegate_engine::metrics::Metrics;
use tidegate_engine::{Framework, FrameworkError};
use tidegate_engine::{PluginContext, Registry};

/// A loaded scheduler configuration.
#[derive(Clone, Debug)]
pub struct SchedulerConfigFile {
    pub path: PathBuf,
    /// Resolved under kube v1.37.2's default gates.
    pub resolved: ResolvedConfig,
    /// The file as decoded, to resolve again under a workload's gates.
    pub config: KubeSchedulerConfiguration,
    /// Whether the file sets `parallelism` (then it is the Filter/Score thread count unless
    /// `--threads` says otherwise).
    pub explicit_parallelism: bool,
}

impl SchedulerConfigFile {
    /// Puts the file's profiles, `percentageOfNodesToScore` and queue settings into `cfg`
    /// (its thread count and the rest stay the caller's), the profiles' default plugins as
    /// `cfg.features` has them.
    pub fn apply_to(&self, cfg: &mut tidegate_engine::SchedulerConfig) -> Result<(), FieldError> {
        let again;
        let r = if cfg.features == Features::default() {
            &self.resolved
        } else {
            again = self.config.resolve_with(&cfg.features)?;
            &again
        };
        cfg.profiles = r.profiles.clone();
        cfg.percentage_of_nodes_to_score = r.percentage_of_nodes_to_score;
        cfg.queue = r.queue.clone();
        Ok(())
    }
}

/// The field path of the first `enabled` entry naming plugin `name` in profile `profile`
/// (`profiles[0].plugins.filter.enabled[1].name`), searching every extension point and
/// `multiPoint` in file order.
fn enabled_entry(root: &SNode, profile: usize, name: &str) -> Option<String> {
    let profiles = match &root.value.get("profiles")?.value {
        YNode::Seq(v) => v,
        _ => return None,
    };
    let YNode::Map(points) = &profiles.get(profile)?.value.get("plugins")?.value else {
        return None;
    };
    points.iter().find_map(|(point, set)| {
        let YNode::Seq(enabled) = &set.value.get("enabled")?.value else {
            return None;
        };
        enabled.iter().position(|p| {
            matches!(p.value.get("name").map(|n| &n.value), Some(YNode::Str(s)) if s == name)
        })
        .map(|j| format!("profiles[{profile}].plugins.{}.enabled[{j}].name", point.value))
    })
}

/// A plugin context for trial builds of a framework (nothing it holds is ever called).
pub fn trial_context() -> PluginContext {
    PluginContext::new(
        Arc::new(TrialClient),
        Default::default(),
        None,
        Default::default(),
    )
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
    parse_text(path, &text, registry)
}

/// [`load`] on text already read (`path` names it in errors).
pub fn parse_text(
    path: &Path,
    text: &str,
    registry: &Registry,
) -> Result<SchedulerConfigFile, InputError> {
    let root = parse(path, text)?;
    let json = root.value.to_json();
    let cfg = KubeSchedulerConfiguration::from_json(&json).map_err(|e| at(path, &root, e))?;
    let resolved = cfg.resolve().map_err(|e| at(path, &root, e))?;
    let ctx = PluginContext::new(
        Arc::new(TrialClient),
        Default::default(),
        None,
        Default::default(),
    );
    for (i, p) in resolved.profiles.iter().enumerate() {
        Framework::new(i, p, registry, &ctx, Arc::new(Metrics::new())).map_err(|e| {
            // Every framework error reads `path: detail`.
            let msg = e.to_string();
            let (field, detail) = msg.split_once(": ").unwrap_or(("", msg.as_str()));
            // A plugin name is reported where the file writes it, when it does.
            let field = match &e {
                FrameworkError::UnknownPlugin { profile, name, .. }
                | FrameworkError::WrongExtensionPoint { profile, name, .. } => {
                    enabled_entry(&root, *profile, name).unwrap_or_else(|| field.to_string())
                }
                _ => field.to_string(),
            };
            InputError::new(path, Some(locate(&root, &field)), field, detail)
        })?;
    }
    Ok(SchedulerConfigFile {
        path: path.to_path_buf(),
        resolved,
        config: cfg.clone(),
        explicit_parallelism: cfg.parallelism.is_some(),
    })
}
