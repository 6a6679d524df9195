//! The `tidegate` subcommands, one file each: [`run`] (and [`serve`], a run with a
//! `/metrics` endpoint), [`list`], [`compare`], [`report`], [`replay`], [`outcomes`] and [`scenarios`]
//! (`kube-scenarios`). Each parses its flags and calls the library; what a run prints and
//! writes is the library's (`tidegate_bench::output::sink`).

pub(crate) mod compare;
pub(crate) mod list;
pub(crate) mod merge;
pub(crate) mod outcomes;
pub(crate) mod queue_dump;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod scenarios;
pub(crate) mod serve;
