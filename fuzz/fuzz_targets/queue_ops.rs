//! `cargo fuzz run queue_ops`: an operation sequence (two bytes per operation; the first byte
//! of the input turns SchedulerPopFromBackoffQ on when odd) run on the real scheduling queue
//! and on the sequential reference model side by side. Any disagreement is a crash.
#![no_main]

#[path = "../../engine/tests/model/queue_model.rs"]
mod queue_model;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(e) = queue_model::check_bytes(data) {
        panic!("{e}");
    }
});
