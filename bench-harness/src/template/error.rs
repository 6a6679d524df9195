//! The template error (where it happened, Go's message) and the line and column of a byte
//! offset. A leaf: the parser and the executor import it, it imports nothing of theirs.

/// A template error: where it happened (1-based line and column within the template text) and
/// Go's message for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The text is not a valid template.
    #[error("template: {line}:{column}: {message}")]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    /// Rendering failed (bad function argument, limit reached, ...).
    #[error("template: {line}:{column}: {message}")]
    Exec {
        line: usize,
        column: usize,
        message: String,
    },
}

impl TemplateError {
    pub fn line(&self) -> Option<usize> {
        match self {
            TemplateError::Parse { line, .. } | TemplateError::Exec { line, .. } => Some(*line),
        }
    }

    pub fn column(&self) -> Option<usize> {
        match self {
            TemplateError::Parse { column, .. } | TemplateError::Exec { column, .. } => {
                Some(*column)
            }
        }
    }

    /// The message without the `template: L:C: ` prefix.
    pub fn message(&self) -> &str {
        match self {
            TemplateError::Parse { message, .. } | TemplateError::Exec { message, .. } => message,
        }
    }
}

/// 1-based line and column (in characters) of byte offset `pos` in `src`.
pub(super) fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(src.len());
    while !src.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &src[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}
