//! `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`): decoding, kube's v1
//! defaulting, the merge of user plugin sets into the default ones, and validation.
//!
//! Behaviour follows `pkg/scheduler/apis/config/v1/default_plugins.go` (`mergePlugins`,
//! `mergePluginSet`), `defaults.go` and `validation/validation.go`. The expansion of `multiPoint`
//! into the extension points happens when a framework is built
//! ([`crate::framework::runtime::Framework::new`]), as in kube's `NewFramework`.
//!
//! Errors are [`FieldError`]s: a field path (`profiles[0].plugins.score.enabled[1].name`) and
//! a message in kube's words, so a front end can point at the line of the YAML.

use crate::features::Features;
use crate::framework::runtime::{PluginSet, Plugins, Profile};
use crate::queue::QueueConfig;
use ahash::AHashMap;
use serde::Deserialize;
use std::time::Duration;

/// The API version this build reads.
pub(crate) const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
pub(crate) const KIND: &str = "KubeSchedulerConfiguration";
/// kube's `DefaultParallelism`.
pub(crate) const DEFAULT_PARALLELISM: i32 = 16;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeSchedulerConfiguration {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub parallelism: Option<i32>,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub pod_initial_backoff_seconds: Option<i64>,
    pub pod_max_backoff_seconds: Option<i64>,
    #[serde(default)]
    pub profiles: Vec<ProfileConfig>,
    #[serde(default)]
    pub extenders: Vec<serde_json::Value>,
    // Fields of the API with no effect on scheduling decisions here; accepted so that real
    // configs load unchanged.
    pub leader_election: Option<serde_json::Value>,
    pub client_connection: Option<serde_json::Value>,
    pub healthz_bind_address: Option<String>,
    pub metrics_bind_address: Option<String>,
    pub enable_profiling: Option<bool>,
    pub enable_contention_profiling: Option<bool>,
    pub delay_cache_until_active: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileConfig {
    pub scheduler_name: Option<String>,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub plugins: Option<PluginsConfig>,
    #[serde(default)]
    pub plugin_config: Vec<PluginConfig>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginsConfig {
    pub pre_enqueue: Option<PluginSetConfig>,
    pub queue_sort: Option<PluginSetConfig>,
    pub pre_filter: Option<PluginSetConfig>,
    pub filter: Option<PluginSetConfig>,
    pub post_filter: Option<PluginSetConfig>,
    pub pre_score: Option<PluginSetConfig>,
    pub score: Option<PluginSetConfig>,
    pub reserve: Option<PluginSetConfig>,
    pub permit: Option<PluginSetConfig>,
    pub pre_bind: Option<PluginSetConfig>,
    pub bind: Option<PluginSetConfig>,
    pub post_bind: Option<PluginSetConfig>,
    pub placement_generate: Option<PluginSetConfig>,
    pub placement_score: Option<PluginSetConfig>,
    pub pod_group_post_filter: Option<PluginSetConfig>,
    pub multi_point: Option<PluginSetConfig>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginSetConfig {
    #[serde(default)]
    pub enabled: Vec<PluginConfigEntry>,
    #[serde(default)]
    pub disabled: Vec<PluginConfigEntry>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginConfigEntry {
    pub name: String,
    pub weight: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginConfig {
    pub name: String,
    pub args: Option<serde_json::Value>,
}

/// A field that is wrong, in kube's `field.Error` form: `path: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The configuration after defaulting and validation, ready for [`crate::Scheduler::new`].
#[derive(Clone, Debug)]
pub struct ResolvedConfig {
    pub profiles: Vec<Profile>,
    /// `None` = adaptive (kube's 0).
    pub percentage_of_nodes_to_score: Option<u32>,
    pub parallelism: usize,
    pub queue: QueueConfig,
}

impl KubeSchedulerConfiguration {
    /// Decodes the JSON form of a config document (unknown fields refused, with their path).
    pub fn from_json(v: &serde_json::Value) -> Result<KubeSchedulerConfiguration, FieldError> {
        serde_path_to_error::deserialize(v).map_err(|e| {
            let path = e.path().to_string();
            FieldError::new(
                if path == "." { String::new() } else { path },
                e.inner().to_string(),
            )
        })
    }

    /// kube's defaulting, plugin merge and validation. `known_plugins` names the registered
    /// plugins (unknown names are reported when the framework is built, with the point).
    pub fn resolve(&self) -> Result<ResolvedConfig, FieldError> {
        self.resolve_with(&Features::default())
    }

    /// [`Self::resolve`] with the default plugins of these feature gates (kube's
    /// `applyFeatureGates` adds plugins to the defaults when their gate is on).
    pub fn resolve_with(&self, features: &Features) -> Result<ResolvedConfig, FieldError> {
        if let Some(v) = &self.api_version
            && v != API_VERSION
        {
            return Err(FieldError::new(
                "apiVersion",
                format!("Unsupported value: {v:?}: supported values: {API_VERSION:?}"),
            ));
        }
        if let Some(k) = &self.kind
            && k != KIND
        {
            return Err(FieldError::new(
                "kind",
                format!("Unsupported value: {k:?}: supported values: {KIND:?}"),
            ));
        }
        if !self.extenders.is_empty() {
            return Err(FieldError::new(
                "extenders",
                "unsupported: scheduler extenders (HTTP webhooks) are not part of tidegate",
            ));
        }
        let parallelism = self.parallelism.unwrap_or(DEFAULT_PARALLELISM);
        if parallelism <= 0 {
            return Err(FieldError::new(
                "parallelism",
                format!(
                    "Invalid value: {parallelism}: should be an integer value greater than zero"
                ),
            ));
        }
        let global_pct = pct(
            "percentageOfNodesToScore",
            self.percentage_of_nodes_to_score,
        )?;
        let initial = self.pod_initial_backoff_seconds.unwrap_or(1);
        if initial <= 0 {
            return Err(FieldError::new(
                "podInitialBackoffSeconds",
                format!("Invalid value: {initial}: must be greater than 0"),
            ));
        }
        let max = self.pod_max_backoff_seconds.unwrap_or(10);
        if max < initial {
            return Err(FieldError::new(
                "podMaxBackoffSeconds",
                format!(
                    "Invalid value: {max}: must be greater than or equal to PodInitialBackoffSeconds"
                ),
            ));
        }
        // kube: no profiles means one default profile; a lone profile gets the default name.
        let default_profiles = [ProfileConfig::default()];
        let profiles: &[ProfileConfig] = if self.profiles.is_empty() {
            &default_profiles
        } else {
            &self.profiles
        };
        let single = profiles.len() == 1;
        let mut out: Vec<Profile> = Vec::new();
        for (i, p) in profiles.iter().enumerate() {
            let profile = resolve_profile(p, i, single, &out, features)?;
            if out
                .iter()
                .any(|o| o.scheduler_name == profile.scheduler_name)
            {
                return Err(FieldError::new(
                    format!("profiles[{i}].schedulerName"),
                    format!("Duplicate value: {:?}", profile.scheduler_name),
                ));
            }
            out.push(profile);
        }
        // kube: every profile must use the same queue sort plugins.
        let qs = |p: &Profile| queue_sort_of(&p.plugins);
        if let Some(first) = out.first().map(qs) {
            for (i, p) in out.iter().enumerate().skip(1) {
                if qs(p) != first {
                    return Err(FieldError::new(
                        format!("profiles[{i}].plugins.queueSort"),
                        "Invalid value: must be the same for all profiles",
                    ));
                }
            }
        }
        Ok(ResolvedConfig {
            profiles: out,
            percentage_of_nodes_to_score: global_pct,
            parallelism: parallelism as usize,
            queue: QueueConfig {
                initial_backoff: Duration::from_secs(initial as u64),
                max_backoff: Duration::from_secs(max as u64),
                ..QueueConfig::default()
            },
        })
    }
}

/// One profile's defaulting and validation: its name (`default-scheduler` for a lone profile
/// without one), `percentageOfNodesToScore`, `pluginConfig` (no duplicates) and the plugins
/// merged over the defaults (kube's `mergePlugins`). `earlier`: the profiles before it (their
/// names must differ).
fn resolve_profile(
    p: &ProfileConfig,
    i: usize,
    single: bool,
    earlier: &[Profile],
    features: &Features,
) -> Result<Profile, FieldError> {
    let path = format!("profiles[{i}]");
    let name = match &p.scheduler_name {
        Some(n) if !n.is_empty() => n.clone(),
        None if single => "default-scheduler".to_string(),
        _ => {
            return Err(FieldError::new(
                format!("{path}.schedulerName"),
                "Required value",
            ));
        }
    };
    if earlier.iter().any(|o| o.scheduler_name == name) {
        return Err(FieldError::new(
            format!("{path}.schedulerName"),
            format!("Duplicate value: {name:?}"),
        ));
    }
    let profile_pct = pct(
        &format!("{path}.percentageOfNodesToScore"),
        p.percentage_of_nodes_to_score,
    )?;
    let mut plugin_args = AHashMap::new();
    for (j, c) in p.plugin_config.iter().enumerate() {
        if plugin_args.contains_key(&c.name) {
            return Err(FieldError::new(
                format!("{path}.pluginConfig[{j}].name"),
                format!("Duplicate value: {:?}", c.name),
            ));
        }
        if let Some(args) = &c.args {
            plugin_args.insert(c.name.clone(), strip_type_meta(args));
        }
    }
    let plugins = merge_plugins(&default_plugins_for(features), p.plugins.as_ref(), &path)?;
    Ok(Profile {
        scheduler_name: name,
        plugins,
        percentage_of_nodes_to_score: profile_pct,
        plugin_args,
    })
}

/// `percentageOfNodesToScore`: 0..=100; 0 and absent mean adaptive.
fn pct(path: &str, v: Option<i32>) -> Result<Option<u32>, FieldError> {
    match v {
        None | Some(0) => Ok(None),
        Some(n) if (1..=100).contains(&n) => Ok(Some(n as u32)),
        Some(n) => Err(FieldError::new(
            path,
            format!("Invalid value: {n}: not in valid range [0-100]"),
        )),
    }
}

/// Args may carry their own `apiVersion`/`kind` (typed args in kube's YAML); the plugins decode
/// the rest.
fn strip_type_meta(v: &serde_json::Value) -> serde_json::Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

/// The queue sort plugins a profile ends up with (specific set, else multiPoint's).
fn queue_sort_of(p: &Plugins) -> Vec<String> {
    let names: Vec<String> = p
        .queue_sort
        .enabled
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    if !names.is_empty() || p.queue_sort.disabled.iter().any(|d| d == "*") {
        return names;
    }
    p.multi_point
        .enabled
        .iter()
        .filter(|(n, _)| n == crate::plugins::priority_sort::NAME)
        .map(|(n, _)| n.clone())
        .collect()
}

impl Profile {
    /// kube's default profile (defaulting, `apis/config/v1/default_plugins.go`): the default plugins through `multiPoint` (restricted to the
    /// plugins of this build).
    pub fn default_profile() -> Profile {
        Profile::default_profile_for(&Features::default())
    }

    /// The default profile under these feature gates.
    pub fn default_profile_for(features: &Features) -> Profile {
        Profile {
            scheduler_name: "default-scheduler".into(),
            plugins: default_plugins_for(features),
            percentage_of_nodes_to_score: None,
            plugin_args: AHashMap::new(),
        }
    }
}

/// kube's default plugins under these feature gates: [`crate::plugins::DEFAULT_PLUGINS`],
/// then those a gate adds (`applyFeatureGates`: NodeDeclaredFeatures, GangScheduling under
/// GenericWorkload, TopologyPlacementGenerator and PodGroupPodsCount (weight 1) under
/// TopologyAwareWorkloadScheduling).
pub(crate) fn default_plugins_for(features: &Features) -> Plugins {
    let mut enabled: Vec<(String, i64)> = crate::plugins::DEFAULT_PLUGINS
        .iter()
        .map(|(n, w)| (n.to_string(), *w))
        .collect();
    if features.node_declared_features {
        enabled.push((crate::plugins::node_declared_features::NAME.to_string(), 0));
    }
    if features.generic_workload {
        enabled.push((crate::plugins::gang_scheduling::NAME.to_string(), 0));
    }
    // kube's applyTopologyAwareWorkloadScheduling.
    if features.topology_aware_workload_scheduling {
        enabled.push((crate::plugins::topology_placement::NAME.to_string(), 0));
        enabled.push((crate::plugins::podgroup_pods_count::NAME.to_string(), 1));
    }
    Plugins {
        multi_point: PluginSet {
            enabled,
            disabled: vec![],
        },
        ..Default::default()
    }
}

fn set_from(cfg: &PluginSetConfig, path: &str) -> Result<PluginSet, FieldError> {
    let mut s = PluginSet::default();
    for (i, e) in cfg.enabled.iter().enumerate() {
        let w = e.weight.unwrap_or(0);
        if w < 0 {
            return Err(FieldError::new(
                format!("{path}.enabled[{i}].weight"),
                format!("Invalid value: {w}: must be a non-negative integer"),
            ));
        }
        s.enabled.push((e.name.clone(), w as i64));
    }
    s.disabled = cfg.disabled.iter().map(|e| e.name.clone()).collect();
    Ok(s)
}

/// kube's `mergePluginSet`: defaults minus the disabled ones (`*` = all), a default that the
/// user enables again takes the user's entry in the default's place, then the user's other
/// plugins in their order.
pub(crate) fn merge_plugin_set(default: &PluginSet, custom: &PluginSet) -> PluginSet {
    let mut disabled: Vec<String> = custom.disabled.clone();
    disabled.extend(default.disabled.iter().cloned());
    let mut replaced = vec![false; custom.enabled.len()];
    let mut enabled = Vec::new();
    if !disabled.iter().any(|d| d == "*") {
        for d in &default.enabled {
            if disabled.contains(&d.0) {
                continue;
            }
            match custom.enabled.iter().position(|c| c.0 == d.0) {
                Some(i) => {
                    replaced[i] = true;
                    enabled.push(custom.enabled[i].clone());
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (i, c) in custom.enabled.iter().enumerate() {
        if !replaced[i] {
            enabled.push(c.clone());
        }
    }
    PluginSet { enabled, disabled }
}

/// kube's `mergePlugins`: each extension point merged with its default set.
pub(crate) fn merge_plugins(
    defaults: &Plugins,
    custom: Option<&PluginsConfig>,
    profile_path: &str,
) -> Result<Plugins, FieldError> {
    let Some(c) = custom else {
        return Ok(defaults.clone());
    };
    let path = format!("{profile_path}.plugins");
    let m =
        |d: &PluginSet, c: &Option<PluginSetConfig>, name: &str| -> Result<PluginSet, FieldError> {
            match c {
                None => Ok(d.clone()),
                Some(c) => Ok(merge_plugin_set(
                    d,
                    &set_from(c, &format!("{path}.{name}"))?,
                )),
            }
        };
    Ok(Plugins {
        pre_enqueue: m(&defaults.pre_enqueue, &c.pre_enqueue, "preEnqueue")?,
        queue_sort: m(&defaults.queue_sort, &c.queue_sort, "queueSort")?,
        pre_filter: m(&defaults.pre_filter, &c.pre_filter, "preFilter")?,
        filter: m(&defaults.filter, &c.filter, "filter")?,
        post_filter: m(&defaults.post_filter, &c.post_filter, "postFilter")?,
        pre_score: m(&defaults.pre_score, &c.pre_score, "preScore")?,
        score: m(&defaults.score, &c.score, "score")?,
        reserve: m(&defaults.reserve, &c.reserve, "reserve")?,
        permit: m(&defaults.permit, &c.permit, "permit")?,
        pre_bind: m(&defaults.pre_bind, &c.pre_bind, "preBind")?,
        bind: m(&defaults.bind, &c.bind, "bind")?,
        post_bind: m(&defaults.post_bind, &c.post_bind, "postBind")?,
        placement_generate: m(
            &defaults.placement_generate,
            &c.placement_generate,
            "placementGenerate",
        )?,
        placement_score: m(
            &defaults.placement_score,
            &c.placement_score,
            "placementScore",
        )?,
        pod_group_post_filter: m(
            &defaults.pod_group_post_filter,
            &c.pod_group_post_filter,
            "podGroupPostFilter",
        )?,
        multi_point: m(&defaults.multi_point, &c.multi_point, "multiPoint")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::NoopClient;
    use crate::framework::metrics::Metrics;
    use crate::framework::runtime::Framework;
    use crate::framework::{PluginContext, Registry};
    use std::sync::Arc;

    fn cfg(json: serde_json::Value) -> Result<ResolvedConfig, FieldError> {
        KubeSchedulerConfiguration::from_json(&json)?.resolve()
    }

    fn build(p: &Profile) -> Framework {
        let ctx = PluginContext {
            client: Arc::new(NoopClient),
            waiting_pods: Default::default(),
            pool: None,
            features: Default::default(),
            dra: Default::default(),
            volumes: Default::default(),
        };
        Framework::new(0, p, &Registry::in_tree(), &ctx, Arc::new(Metrics::new())).unwrap()
    }

    fn points(f: &Framework, point: &str) -> Vec<&'static str> {
        f.plugin_names()
            .into_iter()
            .find(|(p, _)| *p == point)
            .map(|(_, v)| v)
            .unwrap()
    }

    #[test]
    fn an_empty_config_is_the_default_profile() {
        let r = cfg(serde_json::json!({})).unwrap();
        assert_eq!(r.profiles.len(), 1);
        assert_eq!(r.profiles[0].scheduler_name, "default-scheduler");
        assert_eq!(r.parallelism, 16);
        assert_eq!(r.percentage_of_nodes_to_score, None);
        let f = build(&r.profiles[0]);
        let want: Vec<(&str, i64)> = crate::plugins::DEFAULT_PLUGINS
            .iter()
            .copied()
            .filter(|(n, _)| {
                Registry::in_tree().get(n).is_some_and(|fac| {
                    let ctx = PluginContext {
                        client: Arc::new(NoopClient),
                        waiting_pods: Default::default(),
                        pool: None,
                        features: Default::default(),
                        dra: Default::default(),
                        volumes: Default::default(),
                    };
                    fac(&ctx, None).unwrap().into_score().is_some()
                })
            })
            .map(|(n, w)| (n, w.max(1)))
            .collect();
        assert_eq!(f.score_weights(), want);
    }

    // Provenance: the merge cases follow pkg/scheduler/apis/config/v1/default_plugins_test.go
    // (TestMergePlugins) in kubernetes/kubernetes.
    #[test]
    fn merge_plugin_set_follows_kube() {
        let set = |e: &[(&str, i64)], d: &[&str]| PluginSet {
            enabled: e.iter().map(|(n, w)| (n.to_string(), *w)).collect(),
            disabled: d.iter().map(|s| s.to_string()).collect(),
        };
        let default = set(&[("DefaultPlugin1", 0), ("DefaultPlugin2", 0)], &[]);
        // Insert a custom plugin: appended after the defaults.
        assert_eq!(
            merge_plugin_set(&default, &set(&[("CustomPlugin", 0)], &[])).enabled,
            set(
                &[
                    ("DefaultPlugin1", 0),
                    ("DefaultPlugin2", 0),
                    ("CustomPlugin", 0)
                ],
                &[]
            )
            .enabled
        );
        // Disable one default and add a custom one.
        let m = merge_plugin_set(&default, &set(&[("CustomPlugin", 0)], &["DefaultPlugin2"]));
        assert_eq!(
            m.enabled,
            set(&[("DefaultPlugin1", 0), ("CustomPlugin", 0)], &[]).enabled
        );
        assert_eq!(m.disabled, vec!["DefaultPlugin2".to_string()]);
        // Disable all defaults with "*".
        assert_eq!(
            merge_plugin_set(&default, &set(&[("CustomPlugin", 0)], &["*"])).enabled,
            set(&[("CustomPlugin", 0)], &[]).enabled
        );
        // Re-enabling a default keeps its place with the user's weight.
        assert_eq!(
            merge_plugin_set(
                &default,
                &set(&[("CustomPlugin", 0), ("DefaultPlugin2", 5)], &[])
            )
            .enabled,
            set(
                &[
                    ("DefaultPlugin1", 0),
                    ("DefaultPlugin2", 5),
                    ("CustomPlugin", 0)
                ],
                &[]
            )
            .enabled
        );
        // Disable all, then re-enable one default: it comes where the user put it.
        assert_eq!(
            merge_plugin_set(
                &default,
                &set(&[("CustomPlugin", 0), ("DefaultPlugin1", 0)], &["*"])
            )
            .enabled,
            set(&[("CustomPlugin", 0), ("DefaultPlugin1", 0)], &[]).enabled
        );
    }

    #[test]
    fn a_point_disabled_for_a_multipoint_plugin_and_weights() {
        let r = cfg(serde_json::json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "profiles": [{
                "schedulerName": "s",
                "plugins": {
                    "score": {
                        "disabled": [{"name": "TaintToleration"}],
                        "enabled": [{"name": "NodeResourcesFit", "weight": 7}]
                    },
                    "filter": {"disabled": [{"name": "NodePorts"}]}
                }
            }]
        }))
        .unwrap();
        let f = build(&r.profiles[0]);
        let score = f.score_weights();
        assert!(
            !score.iter().any(|(n, _)| *n == "TaintToleration"),
            "{score:?}"
        );
        // The explicitly configured plugin comes first (kube's override order) with its weight.
        assert_eq!(score[0], ("NodeResourcesFit", 7));
        assert!(!points(&f, "filter").contains(&"NodePorts"));
        assert!(points(&f, "preFilter").contains(&"NodePorts"));
    }

    #[test]
    fn disabling_everything_at_a_point_with_star() {
        let r = cfg(serde_json::json!({
            "profiles": [{
                "plugins": {"score": {"disabled": [{"name": "*"}]}}
            }]
        }))
        .unwrap();
        let f = build(&r.profiles[0]);
        assert!(points(&f, "score").is_empty());
        assert!(!points(&f, "filter").is_empty());
    }

    #[test]
    fn validation_messages_name_the_field() {
        let e = |j| cfg(j).unwrap_err().to_string();
        assert_eq!(
            e(serde_json::json!({"percentageOfNodesToScore": 150})),
            "percentageOfNodesToScore: Invalid value: 150: not in valid range [0-100]"
        );
        assert_eq!(
            e(
                serde_json::json!({"profiles": [{"schedulerName": "a", "percentageOfNodesToScore": -1}]})
            ),
            "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"
        );
        assert_eq!(
            e(serde_json::json!({"parallelism": 0})),
            "parallelism: Invalid value: 0: should be an integer value greater than zero"
        );
        assert_eq!(
            e(serde_json::json!({"profiles": [{"schedulerName": "a"}, {}]})),
            "profiles[1].schedulerName: Required value"
        );
        assert_eq!(
            e(serde_json::json!({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]})),
            "profiles[1].schedulerName: Duplicate value: \"a\""
        );
        let unknown = e(serde_json::json!({"profiles": [{"plugins": {"scores": {}}}]}));
        assert!(
            unknown.starts_with("profiles[0].plugins.scores: unknown field `scores`"),
            "{unknown}"
        );
        assert_eq!(
            e(serde_json::json!({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"})),
            "apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta3\": supported values: \"kubescheduler.config.k8s.io/v1\""
        );
    }

    #[test]
    fn unknown_plugins_and_bad_args_fail_when_the_framework_is_built() {
        let r = cfg(serde_json::json!({
            "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]
        }))
        .unwrap();
        let ctx = PluginContext {
            client: Arc::new(NoopClient),
            waiting_pods: Default::default(),
            pool: None,
            features: Default::default(),
            dra: Default::default(),
            volumes: Default::default(),
        };
        let err = Framework::new(
            0,
            &r.profiles[0],
            &Registry::in_tree(),
            &ctx,
            Arc::new(Metrics::new()),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.starts_with("profiles[0].plugins.filter: plugin \"NoSuchPlugin\" does not exist"),
            "{err}"
        );
        let r = cfg(serde_json::json!({
            "profiles": [{"pluginConfig": [{"name": "NodeName", "args": {"x": 1}}]}]
        }))
        .unwrap();
        let err = Framework::new(
            0,
            &r.profiles[0],
            &Registry::in_tree(),
            &ctx,
            Arc::new(Metrics::new()),
        )
        .err()
        .unwrap()
        .to_string();
        assert_eq!(
            err,
            "profiles[0].pluginConfig[NodeName].args: plugin \"NodeName\" takes no args"
        );
    }

    /// `pluginConfig` args reach the plugin: NodeResourcesFit with MostAllocated prefers the
    /// fuller node where the default (LeastAllocated) prefers the emptier one.
    #[test]
    fn node_resources_fit_args_from_plugin_config_change_the_score() {
        use crate::framework::CycleState;
        use crate::plugins::resource_allocation::test_util::{node, node_infos, pod};
        let fit_score = |json: serde_json::Value| {
            let r = cfg(json).unwrap();
            let f = build(&r.profiles[0]);
            let (fit, _) = f
                .active_score_plugins(&CycleState::new())
                .into_iter()
                .find(|(p, _)| p.name() == "NodeResourcesFit")
                .unwrap();
            let nodes = [
                node("empty", &[("cpu", "4"), ("memory", "8Gi")]),
                node("half", &[("cpu", "4"), ("memory", "8Gi")]),
            ];
            let existing = [pod(
                "e",
                Some("half"),
                &[&[("cpu", "2"), ("memory", "4Gi")]],
            )];
            let p = pod("p", None, &[&[("cpu", "1"), ("memory", "1Gi")]]);
            node_infos(&nodes, &existing)
                .iter()
                .map(|ni| fit.score(&CycleState::new(), &p, ni).unwrap())
                .collect::<Vec<_>>()
        };
        // LeastAllocated: (75 + 87) / 2 = 81 and (25 + 37) / 2 = 31.
        assert_eq!(fit_score(serde_json::json!({})), [81, 31]);
        let most = fit_score(serde_json::json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "profiles": [{
                "pluginConfig": [{
                    "name": "NodeResourcesFit",
                    "args": {
                        "apiVersion": API_VERSION,
                        "kind": "NodeResourcesFitArgs",
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
                        }
                    }
                }]
            }]
        }));
        // MostAllocated: (25 + 12) / 2 = 18 and (75 + 62) / 2 = 68.
        assert_eq!(most, [18, 68]);
        // Bad args fail with kube's validation message when the framework is built.
        let r = cfg(serde_json::json!({"profiles": [{"pluginConfig": [{
            "name": "NodeResourcesFit",
            "args": {"scoringStrategy": {"type": "Bogus"}}
        }]}]}))
        .unwrap();
        let ctx = PluginContext {
            client: Arc::new(NoopClient),
            waiting_pods: Default::default(),
            pool: None,
            features: Default::default(),
            dra: Default::default(),
            volumes: Default::default(),
        };
        let err = Framework::new(
            0,
            &r.profiles[0],
            &Registry::in_tree(),
            &ctx,
            Arc::new(Metrics::new()),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.starts_with(
                "profiles[0].pluginConfig[NodeResourcesFit].args: scoringStrategy.type: Unsupported value: \"Bogus\""
            ),
            "{err}"
        );
    }
}
