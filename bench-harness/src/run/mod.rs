//! The run: selecting and planning workloads, executing their ops against a fresh cluster
//! and scheduler ([`runner`]), on real or virtual time ([`pace`]), with a progress line
//! ([`progress`]).

pub mod pace;
pub mod progress;
pub mod runner;
