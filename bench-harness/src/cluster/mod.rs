//! The simulated cluster: the API server the scheduler watches and binds through
//! ([`store`]), the non-pod objects it holds ([`objects`]), controllers that run beside the
//! scheduler ([`controller`]) and the faults `--inject` adds ([`inject`]).

pub mod controller;
pub mod inject;
pub mod objects;
pub mod store;
