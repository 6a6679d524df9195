//! The API boundary: Kubernetes objects in, compact internal forms out.
//!
//! - [`Quantity`]: resource quantities with the full Kubernetes grammar.
//! - [`validation`]: the API server's rules for `spec.schedulingGates` and the scheduling
//!   directives that may change while a pod is gated.
//! - [`convert`]: k8s-openapi types to [`Pod`]/[`Node`] (interned, integer resources).

pub(crate) mod affinity;
pub(crate) mod attribute_set;
pub mod capacity_policy;
pub mod convert;
pub mod csi_translation;
pub mod dra;
pub mod dra_taint_rule;
pub(crate) mod extended_requests;
pub(crate) mod intern;
pub(crate) mod labels;
pub(crate) mod node;
pub(crate) mod node_features;
pub(crate) mod pdb;
pub(crate) mod pod;
pub(crate) mod pod_group;
pub(crate) mod quantity;
pub(crate) mod quote;
pub(crate) mod resource;
pub mod resource_names;
pub mod validation;
pub mod volume;
pub mod volume_convert;

pub use affinity::{
    NodeInclusionPolicy, PodAffinity, PodAffinityTerm, TopologySpreadConstraint,
    UnsatisfiableConstraintAction, WeightedPodAffinityTerm,
};
pub use intern::Sym;
pub use labels::{LabelSelector, Labels, NodeSelector, NodeSelectorTerm, Operator, Requirement};
pub use node::{Node, Taint};
pub use pdb::PodDisruptionBudget;
pub use pod::{
    ClaimSource, ClaimStatus, HostPort, Pod, PodKey, PodResize, PodResourceClaim, PodSpecInfo,
    ResizePending, TaintEffect, Toleration, WeightedTerm,
};
pub use pod_group::{DisruptionMode, PodGroup, PodGroupKey, PodGroupPolicy};
pub use quantity::Quantity;
pub use quote::{go_quote, go_quote_with};
pub use resource::Resource;
