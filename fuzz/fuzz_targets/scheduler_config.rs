//! `cargo fuzz run scheduler_config`: see `tidegate_bench::fuzzing::scheduler_config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tidegate_bench::fuzzing::scheduler_config(data));
