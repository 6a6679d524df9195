//! The functions templates may call: text/template's builtins and scheduler_perf's own
//! (`getTemplateFuncs()` upstream), with their argument counts and semantics.

use std::borrow::Cow;

use super::printf::{sprint, sprintf};
use super::values::V;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Func {
    And,
    Or,
    Not,
    Len,
    Index,
    Print,
    Printf,
    Println,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    AddInt,
    SubtractInt,
    MultiplyInt,
    DivideInt,
    Mod,
    AddFloat,
    SubtractFloat,
    MultiplyFloat,
    DivideFloat,
    Int,
    Json,
}

const FUNCS: &[(&str, Func)] = &[
    ("and", Func::And),
    ("or", Func::Or),
    ("not", Func::Not),
    ("len", Func::Len),
    ("index", Func::Index),
    ("print", Func::Print),
    ("printf", Func::Printf),
    ("println", Func::Println),
    ("eq", Func::Eq),
    ("ne", Func::Ne),
    ("lt", Func::Lt),
    ("le", Func::Le),
    ("gt", Func::Gt),
    ("ge", Func::Ge),
    ("AddInt", Func::AddInt),
    ("SubtractInt", Func::SubtractInt),
    ("MultiplyInt", Func::MultiplyInt),
    ("DivideInt", Func::DivideInt),
    ("Mod", Func::Mod),
    ("AddFloat", Func::AddFloat),
    ("SubtractFloat", Func::SubtractFloat),
    ("MultiplyFloat", Func::MultiplyFloat),
    ("DivideFloat", Func::DivideFloat),
    ("Int", Func::Int),
    ("JSON", Func::Json),
];

impl Func {
    pub(super) fn lookup(name: &str) -> Option<Func> {
        FUNCS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    pub(super) fn name(self) -> &'static str {
        FUNCS
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// (minimum, maximum) argument count; None = variadic.
    pub(super) fn arity(self) -> (usize, Option<usize>) {
        match self {
            Func::And | Func::Or | Func::Index | Func::Printf | Func::Eq => (1, None),
            Func::Not | Func::Len | Func::Int | Func::Json => (1, Some(1)),
            Func::Print
            | Func::Println
            | Func::AddInt
            | Func::MultiplyInt
            | Func::AddFloat
            | Func::MultiplyFloat => (0, None),
            Func::Ne
            | Func::Lt
            | Func::Le
            | Func::Gt
            | Func::Ge
            | Func::SubtractInt
            | Func::DivideInt
            | Func::Mod
            | Func::SubtractFloat
            | Func::DivideFloat => (2, Some(2)),
        }
    }
}

/// Go's `int(float64)` as on amd64: out-of-range and NaN give i64::MIN.
fn float_to_int(f: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// scheduler_perf's toFloat64.
fn to_float(v: &V<'_>) -> Result<f64, String> {
    match v {
        V::Int(i) => Ok(*i as f64),
        V::Float(f) => Ok(*f),
        V::Str(s) => parse_go_float(s).ok_or_else(|| format!("cannot cast {s} to float64")),
        other => Err(format!("cannot cast {} to float64", other.go_string())),
    }
}

/// strconv.ParseFloat(s, 64) for the decimal forms (plus inf/nan).
fn parse_go_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    let ok = matches!(lower.as_str(), "inf" | "infinity" | "nan")
        || (!lower.is_empty()
            && lower
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')));
    if !ok {
        return None;
    }
    s.parse().ok()
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum BasicKind {
    Bool,
    Int,
    Float,
    Str,
}

fn basic_kind(v: &V<'_>) -> Option<BasicKind> {
    match v {
        V::Bool(_) => Some(BasicKind::Bool),
        V::Int(_) => Some(BasicKind::Int),
        V::Float(_) => Some(BasicKind::Float),
        V::Str(_) => Some(BasicKind::Str),
        _ => None,
    }
}

const ERR_BAD_COMPARISON: &str = "incompatible types for comparison";
const ERR_BAD_COMPARISON_TYPE: &str = "invalid type for comparison";

fn eq2(a: &V<'_>, b: &V<'_>) -> Result<bool, String> {
    if a.is_nilish() || b.is_nilish() {
        return Ok(a.is_nilish() && b.is_nilish());
    }
    for v in [a, b] {
        if matches!(v, V::Arr(_) | V::Map(_)) {
            return Err(format!(
                "non-comparable type {}: {}",
                v.go_string(),
                v.type_name()
            ));
        }
    }
    Ok(match (a, b) {
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Int(x), V::Int(y)) => x == y,
        (V::Float(x), V::Float(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        _ => return Err(ERR_BAD_COMPARISON.into()),
    })
}

fn lt2(a: &V<'_>, b: &V<'_>) -> Result<bool, String> {
    let k1 = basic_kind(a).ok_or(ERR_BAD_COMPARISON_TYPE)?;
    let k2 = basic_kind(b).ok_or(ERR_BAD_COMPARISON_TYPE)?;
    if k1 != k2 {
        return Err(ERR_BAD_COMPARISON.into());
    }
    Ok(match (a, b) {
        (V::Int(x), V::Int(y)) => x < y,
        (V::Float(x), V::Float(y)) => x < y,
        (V::Str(x), V::Str(y)) => x < y,
        _ => return Err(ERR_BAD_COMPARISON_TYPE.into()),
    })
}

fn index_of<'a>(item: &V<'a>, idx: &V<'a>) -> Result<V<'a>, String> {
    match item {
        V::Missing | V::Nil => Err("index of untyped nil".into()),
        V::Arr(a) => {
            let i = match idx {
                V::Int(i) => *i,
                V::Missing | V::Nil => return Err("cannot index slice/array with nil".into()),
                other => {
                    return Err(format!(
                        "cannot index slice/array with type {}",
                        other.type_name()
                    ));
                }
            };
            usize::try_from(i)
                .ok()
                .and_then(|u| a.get(u))
                .map(V::from_json)
                .ok_or_else(|| format!("index out of range: {i}"))
        }
        V::Str(s) => {
            let i = match idx {
                V::Int(i) => *i,
                other => {
                    return Err(format!(
                        "cannot index slice/array with type {}",
                        other.type_name()
                    ));
                }
            };
            usize::try_from(i)
                .ok()
                .and_then(|u| s.as_bytes().get(u))
                .map(|b| V::Int(i64::from(*b)))
                .ok_or_else(|| format!("index out of range: {i}"))
        }
        V::Map(m) => match idx {
            V::Str(k) => Ok(m.get(k.as_ref()).map_or(V::Nil, V::from_json)),
            other => Err(format!(
                "value has type {}; should be string",
                other.type_name()
            )),
        },
        other => Err(format!("can't index item of type {}", other.type_name())),
    }
}

/// Applies a non-short-circuit function to evaluated arguments.
pub(super) fn apply<'a>(f: Func, args: &[V<'a>]) -> Result<V<'a>, String> {
    let int = |r: Result<f64, String>| r.map(|x| V::Int(float_to_int(x)));
    match f {
        Func::And | Func::Or => Ok(args.last().cloned().unwrap_or(V::Nil)),
        Func::Not => Ok(V::Bool(!args[0].truth())),
        Func::Len => match &args[0] {
            V::Str(s) => Ok(V::Int(s.len() as i64)),
            V::Arr(a) => Ok(V::Int(a.len() as i64)),
            V::Map(m) => Ok(V::Int(m.len() as i64)),
            V::Missing | V::Nil => Err("len of nil pointer".into()),
            other => Err(format!("len of type {}", other.type_name())),
        },
        Func::Index => {
            let mut cur = args[0].clone();
            for i in &args[1..] {
                cur = index_of(&cur, i)?;
            }
            Ok(cur)
        }
        Func::Print => Ok(V::Str(Cow::Owned(sprint(args, false)))),
        Func::Println => Ok(V::Str(Cow::Owned(sprint(args, true)))),
        Func::Printf => match &args[0] {
            V::Str(fmt) => Ok(V::Str(Cow::Owned(sprintf(fmt, &args[1..])))),
            V::Missing | V::Nil => Err("invalid value; expected string".into()),
            other => Err(format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            )),
        },
        Func::Eq => {
            if args.len() < 2 {
                return Err("missing argument for comparison".into());
            }
            for b in &args[1..] {
                if eq2(&args[0], b)? {
                    return Ok(V::Bool(true));
                }
            }
            Ok(V::Bool(false))
        }
        Func::Ne => Ok(V::Bool(!eq2(&args[0], &args[1])?)),
        Func::Lt => Ok(V::Bool(lt2(&args[0], &args[1])?)),
        Func::Le => Ok(V::Bool(
            lt2(&args[0], &args[1])? || eq2(&args[0], &args[1])?,
        )),
        Func::Gt => Ok(V::Bool(
            !(lt2(&args[0], &args[1])? || eq2(&args[0], &args[1])?),
        )),
        Func::Ge => Ok(V::Bool(!lt2(&args[0], &args[1])?)),
        Func::AddFloat => add_float(args).map(V::Float),
        Func::AddInt => int(add_float(args)),
        Func::MultiplyFloat => mul_float(args).map(V::Float),
        Func::MultiplyInt => int(mul_float(args)),
        Func::SubtractFloat => sub_float(args).map(V::Float),
        Func::SubtractInt => int(sub_float(args)),
        Func::DivideFloat => div_float(args).map(V::Float),
        Func::DivideInt => int(div_float(args)),
        Func::Mod => {
            let a = float_to_int(to_float(&args[0])?);
            let b = float_to_int(to_float(&args[1])?);
            if b == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(V::Int(a.wrapping_rem(b)))
        }
        Func::Int => to_int(&args[0]).map(V::Int),
        Func::Json => to_json(&args[0]).map(|s| V::Str(s.into())),
    }
}

/// scheduler_perf's `Int` (`toInt`): numbers converted as Go converts them (floats
/// truncated), strings through `strconv.Atoi`; anything else cannot be cast.
fn to_int(v: &V<'_>) -> Result<i64, String> {
    match v {
        V::Int(i) => Ok(*i),
        V::Float(f) => Ok(float_to_int(*f)),
        V::Str(s) => {
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("cannot cast {s} to int"));
            }
            s.parse::<i64>()
                .map_err(|_| format!("cannot cast {s} to int"))
        }
        other => Err(format!("cannot cast {} to int", other.go_string())),
    }
}

/// scheduler_perf's `JSON` (`toJSON`): `encoding/json` with HTML escaping off, trimmed.
/// Maps come out with sorted keys and floats in Go's JSON form (`1e+21`, `1e-7`).
fn to_json(v: &V<'_>) -> Result<String, String> {
    fn value(v: &serde_json::Value, out: &mut String) -> Result<(), String> {
        match v {
            serde_json::Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
                out.push_str(&go_json_float(n.as_f64().unwrap_or(f64::NAN))?)
            }
            serde_json::Value::Array(a) => {
                out.push('[');
                for (i, e) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    value(e, out)?;
                }
                out.push(']');
            }
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&go_json_string(k));
                    out.push(':');
                    value(&m[k], out)?;
                }
                out.push('}');
            }
            serde_json::Value::String(s) => out.push_str(&go_json_string(s)),
            other => out.push_str(&other.to_string()),
        }
        Ok(())
    }
    let mut out = String::new();
    match v {
        V::Missing | V::Nil => out.push_str("null"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) => out.push_str(&i.to_string()),
        V::Float(f) => out.push_str(&go_json_float(*f)?),
        V::Str(s) => out.push_str(&go_json_string(s)),
        V::Arr(a) => value(&serde_json::Value::Array(a.to_vec()), &mut out)?,
        V::Map(m) => value(&serde_json::Value::Object((*m).clone()), &mut out)?,
    }
    Ok(out)
}

/// A JSON string as Go writes it without HTML escaping: serde_json's escapes, plus
/// U+2028 and U+2029, which Go always escapes.
fn go_json_string(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_default()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A float as Go's `encoding/json` writes it: shortest digits, positional between 1e-6 and
/// 1e21, else exponent form with a signed two-digit-minimum-free exponent (`1e+21`).
fn go_json_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!("json: unsupported value: {}", go_float_name(f)));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let e = format!("{f:e}");
        let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let exp = if exp.starts_with('-') {
            exp.to_string()
        } else {
            format!("+{exp}")
        };
        return Ok(format!("{mant}e{exp}"));
    }
    Ok(format!("{f}"))
}

fn go_float_name(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "+Inf"
    } else {
        "-Inf"
    }
}

fn add_float(args: &[V<'_>]) -> Result<f64, String> {
    args.iter().try_fold(0.0, |acc, v| Ok(acc + to_float(v)?))
}

fn mul_float(args: &[V<'_>]) -> Result<f64, String> {
    args.iter().try_fold(1.0, |acc, v| Ok(acc * to_float(v)?))
}

fn sub_float(args: &[V<'_>]) -> Result<f64, String> {
    Ok(to_float(&args[0])? - to_float(&args[1])?)
}

fn div_float(args: &[V<'_>]) -> Result<f64, String> {
    let a = to_float(&args[0])?;
    let b = to_float(&args[1])?;
    if b == 0.0 {
        return Err("division by zero".into());
    }
    Ok(a / b)
}
