//! `cargo fuzz run quantity`: see `tidegate_bench::fuzzing::quantity`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tidegate_bench::fuzzing::quantity(data));
