//! `cargo fuzz run manifest`: see `tidegate_bench::fuzzing::manifest`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tidegate_bench::fuzzing::manifest(data));
