//! The simulated cluster: the API server the scheduler watches and binds through
//! ([`store`]), the non-pod objects it holds ([`objects`]), controllers that run beside the
//! scheduler ([`controller`], kube's ResourceClaim controller in [`resource_claims`]) and the
//! faults `--inject` adds ([`inject`]).

pub mod controller;
pub mod inject;
pub mod objects;
pub mod resource_claims;
pub mod store;
