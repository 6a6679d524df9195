//! The scheduling framework (KEP-624): extension-point traits, Status, CycleState, NodeInfo,
//! cluster events, and the runtime that runs a profile's plugins.

pub mod cycle_state;
pub mod events;
pub mod interface;
pub mod metrics;
pub mod node_info;
pub mod parallelize;
pub mod registry;
pub mod runtime;
pub mod signature;
pub mod snapshot;
pub mod status;
pub mod types;
pub mod waiting_pods;
pub(crate) mod warm_pool;

pub use cycle_state::CycleState;
pub use interface::*;
pub use node_info::{NodeInfo, NodeRow};
pub use registry::{PluginContext, Registry};
pub use runtime::Framework;
pub use snapshot::Snapshot;
pub use status::{Code, Status};
pub use types::{Nominating, QueuedPodInfo};
pub use waiting_pods::WaitingPods;
