//! kube's `framework.Status`: a code, the plugin that produced it, and reasons.
//!
//! Success carries no allocation (an empty `Vec` does not allocate), so returning
//! [`Status::success()`] from a per-node Filter costs nothing.

use std::borrow::Cow;
use std::fmt;

/// Status codes with kube's integer values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Code {
    Success = 0,
    Error = 1,
    Unschedulable = 2,
    UnschedulableAndUnresolvable = 3,
    Wait = 4,
    Skip = 5,
    Pending = 6,
}

impl Code {
    pub const ALL: [Code; 7] = [
        Code::Success,
        Code::Error,
        Code::Unschedulable,
        Code::UnschedulableAndUnresolvable,
        Code::Wait,
        Code::Skip,
        Code::Pending,
    ];

    /// The spelling kube uses in metric labels (`status="..."`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Wait => "Wait",
            Code::Skip => "Skip",
            Code::Pending => "Pending",
        }
    }
}

/// A reason: a static text (no allocation: most plugin reasons are constants) or one built
/// for the occasion.
pub(crate) type Reason = Cow<'static, str>;

/// The result of running a plugin.
///
/// Filter builds one per rejected node, so a status with one reason holds it inline (no
/// vector), and a constant reason is borrowed (no string): rejecting a node costs no
/// allocation for most plugins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    code: Code,
    plugin: &'static str,
    reasons: Reasons,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Reasons {
    None,
    One(Reason),
    Many(Vec<Reason>),
}

impl Reasons {
    fn as_slice(&self) -> &[Reason] {
        match self {
            Reasons::None => &[],
            Reasons::One(r) => std::slice::from_ref(r),
            Reasons::Many(v) => v,
        }
    }
}

impl Default for Status {
    fn default() -> Self {
        Status::success()
    }
}

impl Status {
    pub const fn success() -> Status {
        Status {
            code: Code::Success,
            plugin: "",
            reasons: Reasons::None,
        }
    }

    /// A status with one reason (a `&'static str` is kept without copying).
    pub fn new(code: Code, reason: impl Into<Reason>) -> Status {
        Status {
            code,
            plugin: "",
            reasons: Reasons::One(reason.into()),
        }
    }

    pub fn with_reasons(code: Code, mut reasons: Vec<Reason>) -> Status {
        let reasons = match reasons.len() {
            0 => Reasons::None,
            1 => Reasons::One(reasons.pop().expect("one")),
            _ => Reasons::Many(reasons),
        };
        Status {
            code,
            plugin: "",
            reasons,
        }
    }

    /// A bare code without reasons (Skip, Wait).
    pub const fn code_only(code: Code) -> Status {
        Status {
            code,
            plugin: "",
            reasons: Reasons::None,
        }
    }

    pub fn error(reason: impl Into<Reason>) -> Status {
        Status::new(Code::Error, reason)
    }

    pub fn skip() -> Status {
        Status::code_only(Code::Skip)
    }

    /// Records which plugin produced this status (the framework does this for every failure).
    pub fn with_plugin(mut self, plugin: &'static str) -> Status {
        self.plugin = plugin;
        self
    }

    pub fn code(&self) -> Code {
        self.code
    }
    pub fn plugin(&self) -> &'static str {
        self.plugin
    }
    pub fn reasons(&self) -> &[Reason] {
        self.reasons.as_slice()
    }
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }
    pub fn is_skip(&self) -> bool {
        self.code == Code::Skip
    }
    pub fn is_wait(&self) -> bool {
        self.code == Code::Wait
    }
    /// kube's `IsRejected`: Unschedulable, UnschedulableAndUnresolvable or Pending.
    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable | Code::Pending
        )
    }
    /// kube's `AsError` is nil for Success, Wait and Skip.
    pub fn is_error_like(&self) -> bool {
        !matches!(self.code, Code::Success | Code::Wait | Code::Skip)
    }
    /// kube's `Status.Message()`: the reasons joined with ", ".
    pub fn message(&self) -> String {
        self.reasons.as_slice().join(", ")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code.as_str())?;
        if !self.plugin.is_empty() {
            write!(f, " ({})", self.plugin)?;
        }
        if !self.reasons().is_empty() {
            write!(f, ": {}", self.message())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_kube_values_and_predicates() {
        assert_eq!(Code::Pending as u8, 6);
        assert!(Status::new(Code::Pending, "x").is_rejected());
        assert!(Status::new(Code::UnschedulableAndUnresolvable, "x").is_rejected());
        assert!(!Status::error("x").is_rejected());
        assert!(!Status::skip().is_error_like());
        assert!(Status::error("x").is_error_like());
        let s = Status::with_reasons(Code::Unschedulable, vec!["a".into(), "b".into()])
            .with_plugin("P");
        assert_eq!(s.message(), "a, b");
        assert_eq!(s.to_string(), "Unschedulable (P): a, b");
    }
}
