//! The API boundary: Kubernetes objects in, compact internal forms out.
//!
//! - [`quantity`]: resource quantities with the full Kubernetes grammar.
//! - [`validation`]: the API server's rules for `spec.schedulingGates` and the scheduling
//!   directives that may change while a pod is gated.
//! - [`convert`]: k8s-openapi types to [`Pod`]/[`Node`] (interned, integer resources).

pub mod affinity;
pub mod convert;
pub mod intern;
pub mod labels;
pub mod node;
pub mod node_features;
pub mod pdb;
pub mod pod;
pub mod quantity;
pub mod quote;
pub mod resource;
pub mod validation;

pub use affinity::{
    NodeInclusionPolicy, PodAffinity, PodAffinityTerm, TopologySpreadConstraint,
    UnsatisfiableConstraintAction, WeightedPodAffinityTerm,
};
pub use intern::Sym;
pub use labels::{LabelSelector, Labels, NodeSelector, NodeSelectorTerm, Operator, Requirement};
pub use node::{Node, Taint};
pub use pdb::PodDisruptionBudget;
pub use pod::{
    HostPort, Pod, PodKey, PodResize, PodSpecInfo, ResizePending, TaintEffect, Toleration,
    WeightedTerm,
};
pub use quote::{go_quote, go_quote_with};
pub use resource::Resource;
