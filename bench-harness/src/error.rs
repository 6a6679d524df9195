//! Errors of the harness. Bad input is reported as one line naming the file, the line:column
//! where there is one, and the field; the binary exits with code 2.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a file (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u64,
    pub column: u64,
}

/// Bad input: a config, template or manifest that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    pub pos: Option<Pos>,
    /// The field path, e.g. `SchedulingBasic.workloadTemplate[1].countParam`.
    pub field: String,
    pub message: String,
}

impl InputError {
    pub fn new(
        file: &Path,
        pos: Option<Pos>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> InputError {
        InputError {
            file: file.to_path_buf(),
            pos,
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(p) = self.pos {
            write!(f, ":{}:{}", p.line, p.column)?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": {}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for InputError {}

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// Bad input (exit code 2).
    #[error("{0}")]
    Input(#[from] InputError),
    /// A workload uses something this build cannot run (the workload is skipped).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The run itself failed (timeouts, lost pods, I/O).
    #[error("{0}")]
    Run(String),
}
