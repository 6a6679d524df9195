//! `Resolve`: what an op type's resolve step reads (its fields as written, the workload's
//! params, the config for paths) and the helpers that read them. The op files use it; the
//! dispatch over the opcodes (`resolve.rs`) builds it, so that no op file depends on the
//! table that names every op.

use super::{Op, Unsupported};
use crate::error::{InputError, Pos};
use crate::workload::fields::Ctx;
use crate::workload::params::{lookup_param, mark_params, resolve_count, template_params};
use crate::workload::parse::{existing_file, parse_go_duration};
use crate::workload::yaml::{SNode, pos_of};
use crate::workload::{Config, ParamValue, RawOp, TestCase, Workload};
use serde_saphyr::Spanned;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What an op's resolve step reads: the op as written, its workload (params) and test case,
/// the config (for paths), the op's number and the params used so far.
pub(crate) struct Resolve<'a, 'w> {
    pub(crate) cfg: &'a Config,
    pub(crate) cx: &'a Ctx<'a>,
    pub(crate) tc: &'a TestCase,
    pub(crate) wl: &'w Workload,
    pub(crate) raw: &'a RawOp,
    /// The op's field path in errors (`<testCase>.workloadTemplate[<i>]`).
    pub(crate) of: String,
    /// The op's number once createPodSets is unrolled.
    pub(crate) index: usize,
    pub(crate) used: &'a RefCell<BTreeMap<String, bool>>,
}

impl<'a, 'w> Resolve<'a, 'w> {
    /// The field `name` of the op, as written.
    pub(crate) fn get(&self, name: &str) -> Option<&'a (Spanned<String>, SNode)> {
        self.raw.fields.iter().find(|(k, _)| k.value == name)
    }

    /// The path of the op's field `name` in errors.
    pub(crate) fn f(&self, name: &str) -> String {
        format!("{}.{name}", self.of)
    }

    pub(crate) fn err(&self, pos: Pos, field: &str, msg: impl Into<String>) -> InputError {
        self.cx.err(pos, field, msg)
    }

    /// The value of the `$name` param that `n` references, marked as used.
    pub(crate) fn param(&self, n: &SNode, field: &str) -> Result<ParamValue, InputError> {
        lookup_param(self.cx, self.wl, n, field, self.used)
    }

    /// `count` / `countParam` (required unless `default` is given).
    pub(crate) fn count(&self, default: Option<usize>) -> Result<usize, InputError> {
        match default {
            Some(d) if self.get("count").is_none() && self.get("countParam").is_none() => Ok(d),
            _ => resolve_count(self.cx, self.wl, self.raw, &self.of, self.used),
        }
    }

    /// The file the field `name` names, which must exist.
    pub(crate) fn path(&self, name: &str) -> Result<Option<PathBuf>, InputError> {
        self.get(name)
            .map(|(_, v)| {
                let s = self.cx.string(v, &self.f(name))?;
                existing_file(self.cx, self.cfg, &s, pos_of(v), &self.f(name))
            })
            .transpose()
    }

    /// A boolean field, false when absent.
    pub(crate) fn boolean(&self, name: &str) -> Result<bool, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.boolean(v, &self.f(name)))
            .transpose()
            .map(|b| b.unwrap_or(false))
    }

    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.string(v, &self.f(name)))
            .transpose()
    }

    /// A list of strings, empty when absent.
    pub(crate) fn strings(&self, name: &str) -> Result<Vec<String>, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.strings(v, &self.f(name)))
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// A number, 0 when absent, negatives read as 0.
    pub(crate) fn rate(&self, name: &str) -> Result<f64, InputError> {
        Ok(self
            .get(name)
            .map(|(_, v)| self.cx.number(v, &self.f(name)))
            .transpose()?
            .unwrap_or(0.0)
            .max(0.0))
    }

    /// A label selector (a map of strings), empty when absent.
    pub(crate) fn selector(&self, name: &str) -> Result<BTreeMap<String, String>, InputError> {
        self.get(name)
            .map(|(_, v)| self.cx.string_map(v, &self.f(name)))
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// `templateParams`, with `$name` values replaced by the workload's params.
    pub(crate) fn template_params(
        &self,
    ) -> Result<serde_json::Map<String, serde_json::Value>, InputError> {
        template_params(
            self.cx,
            self.get("templateParams"),
            &self.f("templateParams"),
            self.wl,
            &mut self.used.borrow_mut(),
        )
    }

    /// `duration` / `durationParam` (a Go duration), None when neither is given.
    pub(crate) fn duration(&self) -> Result<Option<Duration>, InputError> {
        let f = |name: &str| self.f(name);
        let cx = self.cx;
        let (text, pos, field) = match (self.get("duration"), self.get("durationParam")) {
            (None, None) => return Ok(None),
            (Some((_, v)), None) => (cx.string(v, &f("duration"))?, pos_of(v), f("duration")),
            (None, Some((_, v))) => match self.param(v, &f("durationParam"))? {
                ParamValue::Str(s) => (s, pos_of(v), f("durationParam")),
                other => {
                    return Err(cx.err(
                        pos_of(v),
                        &f("durationParam"),
                        format!("expected a duration string, got {other:?}"),
                    ));
                }
            },
            (Some(_), Some((k, _))) => {
                return Err(cx.err(
                    pos_of(k),
                    &f("durationParam"),
                    "duration and durationParam are mutually exclusive",
                ));
            }
        };
        parse_go_duration(&text).map(Some).ok_or_else(|| {
            cx.err(
                pos,
                &field,
                format!("invalid duration {text:?} (examples: 500ms, 2s, 1m30s)"),
            )
        })
    }

    /// Marks params referenced as `$name` anywhere inside `n` as used.
    pub(crate) fn mark_params(&self, n: &SNode) {
        mark_params(&n.value, self.wl, &mut self.used.borrow_mut());
    }

    /// Marks every param the op references as used.
    pub(crate) fn mark_all_params(&self) {
        for (_, v) in &self.raw.fields {
            self.mark_params(v);
        }
    }

    /// The op, skipped for `reason`.
    pub(crate) fn unsupported(&self, reason: String) -> Op {
        Op::Unsupported(Unsupported {
            opcode: self.raw.opcode.clone(),
            reason,
        })
    }

    /// The namespace of an op that names none: `namespace-<op number>`.
    pub(crate) fn default_namespace(&self) -> String {
        format!("namespace-{}", self.index)
    }
}
