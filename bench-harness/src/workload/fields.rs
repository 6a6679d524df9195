//! Typed readers of positioned YAML nodes: each names the file, line:column and field of
//! what it rejects.

use crate::error::{InputError, Pos};
use crate::workload::MetricSelector;
use crate::workload::yaml::{SNode, YNode, pos_of};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::path::Path;

/// The file being read (named in errors).
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a Path,
}

impl Ctx<'_> {
    pub(crate) fn err(&self, pos: Pos, field: &str, msg: impl Into<String>) -> InputError {
        InputError::new(self.file, Some(pos), field, msg)
    }

    pub(crate) fn map<'n>(
        &self,
        n: &'n SNode,
        field: &str,
    ) -> Result<&'n [(Spanned<String>, SNode)], InputError> {
        match &n.value {
            YNode::Map(m) => Ok(m),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a map, found {}", other.kind()),
            )),
        }
    }

    pub(crate) fn seq<'n>(&self, n: &'n SNode, field: &str) -> Result<&'n [SNode], InputError> {
        match &n.value {
            YNode::Seq(v) => Ok(v),
            YNode::Null => Ok(&[]),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a list, found {}", other.kind()),
            )),
        }
    }

    pub(crate) fn string(&self, n: &SNode, field: &str) -> Result<String, InputError> {
        match &n.value {
            YNode::Str(s) => Ok(s.clone()),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a string, found {}", other.kind()),
            )),
        }
    }

    pub(crate) fn boolean(&self, n: &SNode, field: &str) -> Result<bool, InputError> {
        match &n.value {
            YNode::Bool(b) => Ok(*b),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected true or false, found {}", other.kind()),
            )),
        }
    }

    pub(crate) fn number(&self, n: &SNode, field: &str) -> Result<f64, InputError> {
        match &n.value {
            YNode::Int(i) => Ok(*i as f64),
            YNode::Float(f) => Ok(*f),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected a number, found {}", other.kind()),
            )),
        }
    }

    pub(crate) fn int(&self, n: &SNode, field: &str) -> Result<i64, InputError> {
        match &n.value {
            YNode::Int(i) => Ok(*i),
            other => Err(self.err(
                pos_of(n),
                field,
                format!("expected an integer, found {}", other.kind()),
            )),
        }
    }

    pub(crate) fn strings(&self, n: &SNode, field: &str) -> Result<Vec<String>, InputError> {
        self.seq(n, field)?
            .iter()
            .enumerate()
            .map(|(i, x)| self.string(x, &format!("{field}[{i}]")))
            .collect()
    }

    pub(crate) fn string_map(
        &self,
        n: &SNode,
        field: &str,
    ) -> Result<BTreeMap<String, String>, InputError> {
        let mut out = BTreeMap::new();
        if matches!(n.value, YNode::Null) {
            return Ok(out);
        }
        for (k, v) in self.map(n, field)? {
            let s = match &v.value {
                YNode::Str(s) => s.clone(),
                YNode::Int(i) => i.to_string(),
                YNode::Bool(b) => b.to_string(),
                other => {
                    return Err(self.err(
                        pos_of(v),
                        &format!("{field}.{}", k.value),
                        format!("expected a string, found {}", other.kind()),
                    ));
                }
            };
            out.insert(k.value.clone(), s);
        }
        Ok(out)
    }

    pub(crate) fn gates(
        &self,
        n: &SNode,
        field: &str,
    ) -> Result<BTreeMap<String, bool>, InputError> {
        let mut out = BTreeMap::new();
        if matches!(n.value, YNode::Null) {
            return Ok(out);
        }
        for (k, v) in self.map(n, field)? {
            out.insert(
                k.value.clone(),
                self.boolean(v, &format!("{field}.{}", k.value))?,
            );
        }
        Ok(out)
    }

    pub(crate) fn unknown(&self, k: &Spanned<String>, field: &str, known: &[&str]) -> InputError {
        self.err(
            pos_of(k),
            &format!("{field}.{}", k.value),
            format!("unknown field {:?} (known: {})", k.value, known.join(", ")),
        )
    }

    pub(crate) fn selector(&self, n: &SNode, field: &str) -> Result<MetricSelector, InputError> {
        let mut s = MetricSelector::default();
        const KNOWN: &[&str] = &["name", "labels", "dataBucket", "expectLower"];
        for (k, v) in self.map(n, field)? {
            let f = format!("{field}.{}", k.value);
            match k.value.as_str() {
                "name" => s.name = self.string(v, &f)?,
                "labels" => s.labels = self.string_map(v, &f)?,
                "dataBucket" => s.data_bucket = self.string(v, &f)?,
                "expectLower" => s.expect_lower = self.boolean(v, &f)?,
                _ => return Err(self.unknown(k, field, KNOWN)),
            }
        }
        Ok(s)
    }
}
