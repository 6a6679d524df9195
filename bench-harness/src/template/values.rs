//! Runtime values (borrowed from the JSON data) and their Go `%v` printing.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::limits::MAX_DEPTH;

/// A literal of the template text (`true`, `1`, `1.5`, `'c'`, `"s"`), as the parser reads it
/// and the executor turns it into a [`V`].
#[derive(Debug, Clone)]
pub(super) enum Const {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

/// A runtime value. `Missing` is Go's invalid reflect.Value (a missing map key).
#[derive(Debug, Clone)]
pub(super) enum V<'a> {
    Missing,
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Arr(&'a [Value]),
    Map(&'a Map<String, Value>),
}

impl<'a> V<'a> {
    pub(super) fn from_json(v: &'a Value) -> V<'a> {
        match v {
            Value::Null => V::Nil,
            Value::Bool(b) => V::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => V::Int(i),
                None => V::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => V::Str(Cow::Borrowed(s)),
            Value::Array(a) => V::Arr(a),
            Value::Object(m) => V::Map(m),
        }
    }

    pub(super) fn from_const(c: &'a Const) -> V<'a> {
        match c {
            Const::Bool(b) => V::Bool(*b),
            Const::Int(i) => V::Int(*i),
            Const::Float(f) => V::Float(*f),
            Const::Str(s) => V::Str(Cow::Borrowed(s)),
        }
    }

    pub(super) fn is_nilish(&self) -> bool {
        matches!(self, V::Missing | V::Nil)
    }

    pub(super) fn truth(&self) -> bool {
        match self {
            V::Missing | V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i) => *i != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::Arr(a) => !a.is_empty(),
            V::Map(m) => !m.is_empty(),
        }
    }

    pub(super) fn type_name(&self) -> &'static str {
        match self {
            V::Missing | V::Nil => "<nil>",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::Arr(_) => "[]interface {}",
            V::Map(_) => "map[string]interface {}",
        }
    }

    /// Go's `%v`.
    pub(super) fn go_string(&self) -> String {
        let mut s = String::new();
        write_v(&mut s, self, 0);
        s
    }
}

/// Appends Go's `%v` rendering of `v` (nil as `<nil>`).
pub(super) fn write_v(out: &mut String, v: &V<'_>, depth: usize) {
    match v {
        V::Missing | V::Nil => out.push_str("<nil>"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) => {
            let _ = write!(out, "{i}");
        }
        V::Float(f) => out.push_str(&fmt_float_g(*f, None, false)),
        V::Str(s) => out.push_str(s),
        V::Arr(a) => {
            if depth > MAX_DEPTH {
                out.push_str("[...]");
                return;
            }
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, &V::from_json(e), depth + 1);
            }
            out.push(']');
        }
        V::Map(m) => {
            if depth > MAX_DEPTH {
                out.push_str("map[...]");
                return;
            }
            out.push_str("map[");
            for (i, (k, e)) in sorted(m).into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, &V::from_json(e), depth + 1);
            }
            out.push(']');
        }
    }
}

pub(super) fn sorted(m: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_unstable_by(|a, b| a.0.cmp(b.0));
    v
}

/// Decimal digits (no trailing zeros, at least "0") and the decimal exponent of `f` (finite,
/// non-negative): `f = 0.D * 10^dp`. `sig` rounds to that many significant digits.
fn decimal_digits(f: f64, sig: Option<usize>) -> (String, i32) {
    let s = match sig {
        None => format!("{f:e}"),
        Some(p) => format!("{:.*e}", p.max(1) - 1, f),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if digits == "0" {
        return (digits, 1);
    }
    (digits, exp + 1)
}

fn exp_suffix(out: &mut String, exp: i32, upper: bool) {
    out.push(if upper { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
}

pub(super) fn non_finite(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// Go's `%g` (shortest when `prec` is None), including the sign.
pub(super) fn fmt_float_g(f: f64, prec: Option<usize>, upper: bool) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_string();
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let (digits, dp) = decimal_digits(f.abs(), prec);
    let nd = digits.len() as i32;
    let eprec = match prec {
        None => 6,
        Some(p) => {
            let p = p.max(1) as i32;
            if p > nd && nd >= dp { nd } else { p }
        }
    };
    let exp = dp - 1;
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        exp_suffix(&mut out, exp, upper);
    } else if dp <= 0 {
        out.push_str("0.");
        for _ in 0..-dp {
            out.push('0');
        }
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        for _ in 0..dp - nd {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// Go's `%e` with `prec` digits after the point, including the sign.
pub(super) fn fmt_float_e(f: f64, prec: usize, upper: bool) -> String {
    if let Some(s) = non_finite(f) {
        return s.to_string();
    }
    let s = format!("{:.*e}", prec, f);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mut out = mant.to_string();
    exp_suffix(&mut out, exp.parse().unwrap_or(0), upper);
    out
}
