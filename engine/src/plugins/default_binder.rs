//! DefaultBinder: binds through the API (`pods/binding`), here the [`ClusterClient`].
//! Source of behaviour: `pkg/scheduler/framework/plugins/defaultbinder/default_binder.go`.

use crate::api::{Pod, Sym};
use crate::framework::cycle_state::CycleState;
use crate::framework::interface::{BindPlugin, ClusterClient, Plugin};
use crate::framework::status::Status;
use std::sync::Arc;

pub(crate) const NAME: &str = "DefaultBinder";

pub(crate) struct DefaultBinder {
    client: Arc<dyn ClusterClient>,
}

impl DefaultBinder {
    pub(crate) fn new(client: Arc<dyn ClusterClient>) -> DefaultBinder {
        DefaultBinder { client }
    }
}

impl Plugin for DefaultBinder {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_bind(self: Arc<Self>) -> Option<Arc<dyn BindPlugin>> {
        Some(self)
    }
}

impl BindPlugin for DefaultBinder {
    fn bind(&self, _: &mut CycleState, pod: &Pod, node: Sym) -> Status {
        match self.client.bind(pod, node) {
            Ok(()) => Status::success(),
            Err(e) => Status::error(e),
        }
    }
}
