//! `cargo fuzz run workload_config`: see `tidegate_bench::fuzzing::workload_config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tidegate_bench::fuzzing::workload_config(data));
