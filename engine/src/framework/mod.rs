//! The scheduling framework (KEP-624): extension-point traits, Status, CycleState, NodeInfo,
//! cluster events, and the runtime that runs a profile's plugins.

pub(crate) mod cycle_state;
pub(crate) mod dra_manager;
pub(crate) mod events;
pub(crate) mod extended_resource_cache;
pub(crate) mod interface;
pub mod metrics;
pub(crate) mod node_info;
pub(crate) mod node_memo;
pub(crate) mod one_plugin;
pub(crate) mod parallelize;
pub(crate) mod pod_group;
pub(crate) mod pod_group_points;
pub(crate) mod pod_group_runtime;
pub(crate) mod pod_group_state;
pub(crate) mod registry;
pub(crate) mod runtime;
pub(crate) mod signature;
pub(crate) mod snapshot;
pub(crate) mod status;
pub(crate) mod types;
pub(crate) mod volume_listers;
pub(crate) mod waiting_pods;
pub(crate) mod warm_pool;

pub(crate) use cycle_state::CycleState;
pub(crate) use interface::*;
pub(crate) use node_info::{NodeInfo, NodeRow};
#[allow(unused_imports)]
pub(crate) use pod_group::*;
pub(crate) use registry::{PluginContext, Registry};
pub(crate) use runtime::Framework;
pub(crate) use snapshot::Snapshot;
pub(crate) use status::{Code, Status};
pub(crate) use types::{Nominating, QueuedPodInfo};
pub(crate) use waiting_pods::WaitingPods;
