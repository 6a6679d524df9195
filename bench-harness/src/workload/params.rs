//! Workload params: the `$name` values a workload gives its ops (`countParam: $nodes`,
//! `templateParams: {key: $value}`). Every param must be used by some op.

use crate::error::InputError;
use crate::workload::RawOp;
use crate::workload::Workload;
use crate::workload::fields::Ctx;
use crate::workload::yaml::{SNode, YNode, pos_of};
use serde_saphyr::Spanned;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The most objects one op (or one workload in all) may create.
pub const MAX_COUNT: i64 = 100_000_000;

/// A param's value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A list or map (scheduler_perf's params are `map[string]any`; templates read them).
    Json(serde_json::Value),
}

impl ParamValue {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ParamValue::Int(i) => (*i).into(),
            ParamValue::Float(f) => serde_json::Number::from_f64(*f)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            ParamValue::Str(s) => s.clone().into(),
            ParamValue::Bool(b) => (*b).into(),
            ParamValue::Json(v) => v.clone(),
        }
    }
}

/// The value of the `$name` param that `n` references, marked as used.
pub(crate) fn lookup_param(
    cx: &Ctx,
    wl: &Workload,
    n: &SNode,
    field: &str,
    used: &RefCell<BTreeMap<String, bool>>,
) -> Result<ParamValue, InputError> {
    let s = cx.string(n, field)?;
    let name = s.strip_prefix('$').ok_or_else(|| {
        cx.err(
            pos_of(n),
            field,
            format!("must reference a param as $name, got {s:?}"),
        )
    })?;
    let (key, (v, _)) = wl.params.get_key_value(name).ok_or_else(|| {
        cx.err(
            pos_of(n),
            field,
            format!("parameter {name} is undefined in workload {}", wl.name),
        )
    })?;
    if let Some(u) = used.borrow_mut().get_mut(key.as_str()) {
        *u = true;
    }
    Ok(v.clone())
}

/// `count` / `countParam` of a raw op (required).
pub(crate) fn resolve_count(
    cx: &Ctx,
    wl: &Workload,
    raw: &RawOp,
    of: &str,
    used: &RefCell<BTreeMap<String, bool>>,
) -> Result<usize, InputError> {
    let get = |name: &str| raw.fields.iter().find(|(k, _)| k.value == name);
    let (v, pos, field) = match (get("count"), get("countParam")) {
        (Some(_), Some((k, _))) => {
            return Err(cx.err(
                pos_of(k),
                &format!("{of}.countParam"),
                "count and countParam are mutually exclusive",
            ));
        }
        (Some((_, n)), None) => (
            ParamValue::Int(cx.number(n, &format!("{of}.count"))? as i64),
            pos_of(n),
            format!("{of}.count"),
        ),
        (None, Some((_, n))) => {
            let field = format!("{of}.countParam");
            (lookup_param(cx, wl, n, &field, used)?, pos_of(n), field)
        }
        (None, None) => {
            return Err(cx.err(
                raw.pos,
                &format!("{of}.count"),
                "count or countParam is required",
            ));
        }
    };
    let c = match v {
        ParamValue::Int(i) => i,
        ParamValue::Float(x) if x.fract() == 0.0 => x as i64,
        other => {
            return Err(cx.err(pos, &field, format!("expected an integer, got {other:?}")));
        }
    };
    if c < 0 {
        return Err(cx.err(pos, &field, format!("must not be negative, got {c}")));
    }
    if c > MAX_COUNT {
        return Err(cx.err(
            pos,
            &field,
            format!("{c} exceeds the limit of {MAX_COUNT} objects per op"),
        ));
    }
    Ok(c as usize)
}

/// Marks params referenced as `$name` anywhere inside `n` as used.
pub(crate) fn mark_params(n: &YNode, wl: &Workload, used: &mut BTreeMap<String, bool>) {
    match n {
        YNode::Str(s) => {
            if let Some(name) = s.strip_prefix('$')
                && let Some((k, _)) = wl.params.get_key_value(name)
                && let Some(u) = used.get_mut(k.as_str())
            {
                *u = true;
            }
        }
        YNode::Seq(v) => v.iter().for_each(|x| mark_params(&x.value, wl, used)),
        YNode::Map(m) => m.iter().for_each(|(_, x)| mark_params(&x.value, wl, used)),
        _ => {}
    }
}

/// `templateParams`, with `$name` values replaced by the workload's params.
pub(crate) fn template_params(
    cx: &Ctx,
    n: Option<&(Spanned<String>, SNode)>,
    field: &str,
    wl: &Workload,
    used: &mut BTreeMap<String, bool>,
) -> Result<serde_json::Map<String, serde_json::Value>, InputError> {
    let mut out = serde_json::Map::new();
    let Some((_, n)) = n else { return Ok(out) };
    for (k, v) in cx.map(n, field)? {
        let value = match &v.value {
            YNode::Str(s) if s.starts_with('$') => {
                // `$name|default`: the default (YAML) when the workload has no such param.
                let (name, default) = match s[1..].find('|') {
                    Some(i) if i > 0 => (&s[1..1 + i], Some(&s[2 + i..])),
                    _ => (&s[1..], None),
                };
                let f = || format!("{field}.{}", k.value);
                match (wl.params.get_key_value(name), default) {
                    (Some((key, (pv, _))), _) => {
                        if let Some(u) = used.get_mut(key.as_str()) {
                            *u = true;
                        }
                        pv.to_json()
                    }
                    (None, Some(d)) => {
                        serde_saphyr::from_str::<serde_json::Value>(d).map_err(|e| {
                            cx.err(
                                pos_of(v),
                                &f(),
                                format!("decoding parameter {name:?} default {d:?} as YAML: {e}"),
                            )
                        })?
                    }
                    (None, None) => {
                        return Err(cx.err(
                            pos_of(v),
                            &f(),
                            format!("parameter {name} is undefined in workload {}", wl.name),
                        ));
                    }
                }
            }
            other => other.to_json(),
        };
        out.insert(k.value.clone(), value);
    }
    Ok(out)
}
