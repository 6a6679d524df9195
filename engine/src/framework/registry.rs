//! The plugin registry (kube's `framework/runtime/registry.go`): plugin name → factory. The
//! in-tree plugins register themselves in [`crate::plugins`] (`Registry::in_tree`); plugins
//! written outside the engine register the same way.

use super::interface::{ClusterClient, Plugin};
use ahash::AHashMap;
use std::sync::Arc;

/// What a factory gets to build a plugin.
pub struct PluginContext {
    pub client: Arc<dyn ClusterClient>,
    /// Pods waiting at Permit: Permit plugins allow or reject them through this.
    pub waiting_pods: super::WaitingPods,
    /// The scheduler's Filter/Score pool (`parallelism` threads) for plugins that fan out
    /// over nodes in PreFilter/PreScore; `None`: work sequentially.
    pub pool: Option<Arc<rayon::ThreadPool>>,
    /// The feature gates plugins read (kube's `feature.Features`).
    pub features: crate::features::Features,
    /// The DRA objects the scheduler knows (DynamicResources reads them).
    pub(crate) dra: Arc<crate::framework::dra_manager::DraManager>,
    /// The volume objects the scheduler knows (the volume plugins read them).
    pub(crate) volumes: Arc<crate::framework::volume_listers::VolumeListers>,
}

impl PluginContext {
    /// A context with a DRA store of its own (a framework built outside a scheduler: trial
    /// builds, tests).
    pub fn new(
        client: Arc<dyn ClusterClient>,
        waiting_pods: super::WaitingPods,
        pool: Option<Arc<rayon::ThreadPool>>,
        features: crate::features::Features,
    ) -> PluginContext {
        PluginContext {
            client,
            waiting_pods,
            pool,
            features,
            dra: Arc::default(),
            volumes: Arc::default(),
        }
    }
}

/// Builds a plugin from the context and its `pluginConfig` args (`None`: none given, use the
/// defaults). An `Err` is the message of kube's args validation.
pub type PluginFactory = Arc<
    dyn Fn(&PluginContext, Option<&serde_json::Value>) -> Result<Arc<dyn Plugin>, String>
        + Send
        + Sync,
>;

/// Decodes a plugin's args (camelCase fields, unknown fields refused) over its defaults.
pub fn decode_args<T: serde::de::DeserializeOwned + Default>(
    args: Option<&serde_json::Value>,
) -> Result<T, String> {
    match args {
        None => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| e.to_string()),
    }
}

/// Plugin name → factory.
#[derive(Clone, Default)]
pub struct Registry {
    factories: AHashMap<String, PluginFactory>,
}

impl Registry {
    /// Registers a plugin that takes no args.
    pub fn register(
        &mut self,
        name: &str,
        f: impl Fn(&PluginContext) -> Arc<dyn Plugin> + Send + Sync + 'static,
    ) {
        let name_owned = name.to_string();
        self.factories.insert(
            name.to_string(),
            Arc::new(move |ctx, args| match args {
                Some(_) => Err(format!("plugin {name_owned:?} takes no args")),
                None => Ok(f(ctx)),
            }),
        );
    }

    /// Registers a plugin built from its args.
    pub fn register_with_args(
        &mut self,
        name: &str,
        f: impl Fn(&PluginContext, Option<&serde_json::Value>) -> Result<Arc<dyn Plugin>, String>
        + Send
        + Sync
        + 'static,
    ) {
        self.factories.insert(name.to_string(), Arc::new(f));
    }

    pub fn get(&self, name: &str) -> Option<&PluginFactory> {
        self.factories.get(name)
    }

    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.factories.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}
