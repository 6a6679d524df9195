//! Labels as sorted `(key, value)` symbol pairs, and the selectors that match them:
//! label selectors (`matchLabels` + `matchExpressions`) and node selector requirements
//! (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`).

use super::intern::Sym;

/// A label set, sorted by key. Lookups are binary searches over integers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels(Vec<(Sym, Sym)>);

impl Labels {
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Labels {
        let mut v: Vec<(Sym, Sym)> = pairs
            .into_iter()
            .map(|(k, v)| (Sym::new(k), Sym::new(v)))
            .collect();
        v.sort_unstable_by_key(|&(k, _)| k);
        v.dedup_by_key(|&mut (k, _)| k);
        Labels(v)
    }

    pub fn get(&self, key: Sym) -> Option<Sym> {
        self.0
            .binary_search_by_key(&key, |&(k, _)| k)
            .ok()
            .map(|i| self.0[i].1)
    }

    pub fn has(&self, key: Sym) -> bool {
        self.get(key).is_some()
    }

    pub fn iter(&self) -> impl Iterator<Item = (Sym, Sym)> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Operators of label-selector and node-selector requirements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    /// Node selectors only: the label value parsed as an integer is greater than the one value.
    Gt,
    /// Node selectors only: less than.
    Lt,
}

impl Operator {
    pub fn parse(s: &str) -> Option<Operator> {
        Some(match s {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            "Lt" => Operator::Lt,
            _ => return None,
        })
    }

    /// The operator as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::In => "In",
            Operator::NotIn => "NotIn",
            Operator::Exists => "Exists",
            Operator::DoesNotExist => "DoesNotExist",
            Operator::Gt => "Gt",
            Operator::Lt => "Lt",
        }
    }
}

/// One requirement: `key op values`. For `Gt`/`Lt`, `int_value` holds the parsed operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: Sym,
    pub op: Operator,
    pub values: Vec<Sym>,
    pub int_value: i64,
}

impl Requirement {
    /// Whether a value lookup result satisfies this requirement (kube's `labels.Requirement.Matches`).
    pub fn matches_value(&self, value: Option<Sym>) -> bool {
        match self.op {
            Operator::In => value.is_some_and(|v| self.values.contains(&v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(&v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::Gt | Operator::Lt => {
                let Some(v) = value else { return false };
                let Ok(n) = v.as_arc().parse::<i64>() else {
                    return false;
                };
                if self.op == Operator::Gt {
                    n > self.int_value
                } else {
                    n < self.int_value
                }
            }
        }
    }

    pub fn matches(&self, labels: &Labels) -> bool {
        self.matches_value(labels.get(self.key))
    }
}

/// A label selector: all requirements must hold (`matchLabels` become `In` requirements).
/// `None` at the use site means "selects nothing" where kube says so; an empty selector selects
/// everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    pub requirements: Vec<Requirement>,
}

impl LabelSelector {
    pub fn matches(&self, labels: &Labels) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

/// One `nodeSelectorTerms` entry: expressions over labels AND expressions over fields
/// (only `metadata.name` is supported by kube).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSelectorTerm {
    pub match_expressions: Vec<Requirement>,
    pub match_fields: Vec<Requirement>,
}

impl NodeSelectorTerm {
    /// kube: an empty term matches no objects.
    pub fn matches(&self, node_name: Sym, labels: &Labels) -> bool {
        if self.match_expressions.is_empty() && self.match_fields.is_empty() {
            return false;
        }
        self.match_expressions.iter().all(|r| r.matches(labels))
            && self.match_fields.iter().all(|r| {
                // matchFields supports only metadata.name.
                r.matches_value(Some(node_name))
            })
    }
}

/// `requiredDuringSchedulingIgnoredDuringExecution` of node affinity: terms are ORed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSelector {
    pub terms: Vec<NodeSelectorTerm>,
}

impl NodeSelector {
    pub fn matches(&self, node_name: Sym, labels: &Labels) -> bool {
        self.terms.iter().any(|t| t.matches(node_name, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: Sym::new(key),
            op,
            values: values.iter().map(|v| Sym::new(v)).collect(),
            int_value: values.first().and_then(|v| v.parse().ok()).unwrap_or(0),
        }
    }

    #[test]
    fn requirement_operators() {
        let l = Labels::from_pairs([("zone", "a"), ("n", "7")]);
        assert!(req("zone", Operator::In, &["a", "b"]).matches(&l));
        assert!(!req("zone", Operator::In, &["b"]).matches(&l));
        assert!(req("zone", Operator::NotIn, &["b"]).matches(&l));
        assert!(req("missing", Operator::NotIn, &["b"]).matches(&l));
        assert!(req("zone", Operator::Exists, &[]).matches(&l));
        assert!(req("missing", Operator::DoesNotExist, &[]).matches(&l));
        assert!(req("n", Operator::Gt, &["6"]).matches(&l));
        assert!(!req("n", Operator::Gt, &["7"]).matches(&l));
        assert!(req("n", Operator::Lt, &["8"]).matches(&l));
        assert!(!req("zone", Operator::Lt, &["8"]).matches(&l));
    }

    #[test]
    fn empty_term_matches_nothing_and_fields_match_name() {
        let l = Labels::default();
        let name = Sym::new("node-1");
        assert!(!NodeSelectorTerm::default().matches(name, &l));
        let t = NodeSelectorTerm {
            match_expressions: vec![],
            match_fields: vec![req("metadata.name", Operator::In, &["node-1"])],
        };
        assert!(t.matches(name, &l));
        assert!(!t.matches(Sym::new("node-2"), &l));
    }
}
