//! The limits that make a hostile template an error, not a hang or a crash (see the module
//! doc's Deviations). A leaf: every other file may import it.

/// Nesting depth of controls and parentheses (and of printed values).
pub(super) const MAX_DEPTH: usize = 100;
/// `range` iterations per render.
pub(super) const MAX_RANGE_ITERATIONS: u64 = 1_000_000;
/// Bytes of output per render.
pub(super) const MAX_OUTPUT: usize = 64 << 20;
/// printf width and precision.
pub(super) const MAX_FMT_WIDTH: usize = 1_000_000;
