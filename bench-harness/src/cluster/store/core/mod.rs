//! The core group's kinds (kube's `pkg/registry/core/...`): pods, nodes and namespaces with
//! their own stores (converted for the scheduler), and the plain kinds stored through the
//! generic shape (Services, volumes, and the kinds nothing reads).

pub mod config;
mod namespace;
mod node;
mod pod;
mod pv_binding;
pub mod service;
pub mod volume;
