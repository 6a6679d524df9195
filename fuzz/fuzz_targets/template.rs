//! `cargo fuzz run template`: see `tidegate_bench::fuzzing::template`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tidegate_bench::fuzzing::template(data));
