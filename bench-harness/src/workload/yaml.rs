//! YAML with positions: every node of the document carries the line:column where it starts, so
//! any later check (an unknown field, a bad quantity deep inside a pod template) can point at
//! the exact place. Parsing is done by serde-saphyr; the tree converts to `serde_json::Value`
//! for typed deserialization of Kubernetes objects.

use crate::error::{InputError, Pos};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;
use std::path::Path;

/// A YAML node.
#[derive(Clone, Debug, PartialEq)]
pub enum YNode {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<SNode>),
    Map(Vec<(Spanned<String>, SNode)>),
}

/// A node with its position.
pub type SNode = Spanned<YNode>;

pub fn pos_of<T>(s: &Spanned<T>) -> Pos {
    Pos {
        line: s.referenced.line(),
        column: s.referenced.column(),
    }
}

impl<'de> Deserialize<'de> for YNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = YNode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E>(self) -> Result<YNode, E> {
                Ok(YNode::Null)
            }
            fn visit_none<E>(self) -> Result<YNode, E> {
                Ok(YNode::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YNode, D::Error> {
                YNode::deserialize(d)
            }
            fn visit_bool<E>(self, v: bool) -> Result<YNode, E> {
                Ok(YNode::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<YNode, E> {
                Ok(YNode::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<YNode, E> {
                i64::try_from(v)
                    .map(YNode::Int)
                    .or(Ok(YNode::Float(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<YNode, E> {
                Ok(YNode::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<YNode, E> {
                Ok(YNode::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<YNode, E> {
                Ok(YNode::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<YNode, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element::<SNode>()? {
                    v.push(x);
                }
                Ok(YNode::Seq(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<YNode, A::Error> {
                let mut v: Vec<(Spanned<String>, SNode)> = Vec::new();
                while let Some(k) = a.next_key::<Spanned<String>>()? {
                    let val = a.next_value::<SNode>()?;
                    if v.iter().any(|(x, _)| x.value == k.value) {
                        return Err(de::Error::custom(format!("duplicate key {:?}", k.value)));
                    }
                    v.push((k, val));
                }
                Ok(YNode::Map(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl YNode {
    pub fn kind(&self) -> &'static str {
        match self {
            YNode::Null => "null",
            YNode::Bool(_) => "bool",
            YNode::Int(_) => "integer",
            YNode::Float(_) => "number",
            YNode::Str(_) => "string",
            YNode::Seq(_) => "list",
            YNode::Map(_) => "map",
        }
    }

    pub fn get(&self, key: &str) -> Option<&SNode> {
        match self {
            YNode::Map(m) => m.iter().find(|(k, _)| k.value == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Converts to JSON (for typed deserialization). Map keys keep their order.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            YNode::Null => Value::Null,
            YNode::Bool(b) => Value::Bool(*b),
            YNode::Int(i) => Value::from(*i),
            YNode::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            YNode::Str(s) => Value::String(s.clone()),
            YNode::Seq(v) => Value::Array(v.iter().map(|x| x.value.to_json()).collect()),
            YNode::Map(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.value.clone(), v.value.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Finds the position of a dotted/indexed path such as `spec.containers[0].resources` in a
/// document: the deepest node of the path that exists.
pub fn locate(root: &SNode, path: &str) -> Pos {
    let mut cur = root;
    let mut best = pos_of(root);
    for seg in split_path(path) {
        let next = match (&cur.value, seg) {
            (YNode::Map(m), PathSeg::Key(k)) => {
                m.iter().find(|(key, _)| key.value == k).map(|(key, v)| {
                    best = pos_of(key);
                    v
                })
            }
            (YNode::Seq(v), PathSeg::Index(i)) => v.get(i).inspect(|n| best = pos_of(n)),
            // `requests[cpu]`: a map entry written in index form.
            (YNode::Map(m), PathSeg::Bracket(k)) => {
                m.iter().find(|(key, _)| key.value == k).map(|(key, v)| {
                    best = pos_of(key);
                    v
                })
            }
            _ => None,
        };
        match next {
            Some(n) => {
                cur = n;
                if !matches!(cur.value, YNode::Map(_) | YNode::Seq(_)) {
                    best = pos_of(cur);
                }
            }
            None => break,
        }
    }
    best
}

enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
    Bracket(&'a str),
}

fn split_path(path: &str) -> Vec<PathSeg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(PathSeg::Key(name));
        }
        for b in rest.split('[').filter(|s| !s.is_empty()) {
            let inner = b.trim_end_matches(']');
            match inner.parse::<usize>() {
                Ok(i) => out.push(PathSeg::Index(i)),
                Err(_) => out.push(PathSeg::Bracket(inner)),
            }
        }
    }
    out
}

/// Parses YAML text into a positioned tree. Syntax errors name the file and line:column.
pub fn parse(file: &Path, text: &str) -> Result<SNode, InputError> {
    serde_saphyr::from_str::<SNode>(text).map_err(|e| {
        let pos = e.location().map(|l| Pos {
            line: l.line(),
            column: l.column(),
        });
        let msg = e.to_string();
        // serde-saphyr renders a snippet after the first line; keep the first line only.
        let first = clean_message(msg.lines().next().unwrap_or("invalid YAML"));
        let msg = match first.strip_prefix("budget breached: ") {
            // An alias bomb, or simply too big: refused before it is built.
            Some(limit) => format!(
                "YAML too large: exceeds the parser's budget ({limit}); \
                 aliases that multiply content count in full"
            ),
            None => format!("YAML syntax: {first}"),
        };
        InputError::new(file, pos, "", msg)
    })
}

/// Drops serde-saphyr's `error: line N column M: ` prefix (we print the position ourselves)
/// and its tuning hints.
fn clean_message(m: &str) -> String {
    let mut m = m.trim().trim_start_matches("error:").trim();
    if let Some(rest) = m.strip_prefix("line ")
        && let Some(i) = rest.find(": ")
        && rest[..i].contains("column")
    {
        m = &rest[i + 2..];
    }
    let m = m.split(", set ").next().unwrap_or(m);
    m.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_lookup() {
        let text = "a: 1\nb:\n  - x: \"s\"\n    y: [1, 2]\n";
        let n = parse(Path::new("t.yaml"), text).unwrap();
        let b = n.value.get("b").unwrap();
        assert_eq!(pos_of(b).line, 3);
        let p = locate(&n, "b[0].y");
        assert_eq!((p.line, p.column), (4, 5));
        let p = locate(&n, "b[0].x");
        assert_eq!(p.line, 3);
        assert_eq!(
            n.value.to_json(),
            serde_json::json!({"a": 1, "b": [{"x": "s", "y": [1, 2]}]})
        );
    }

    #[test]
    fn alias_bombs_are_refused_with_a_position() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in ["a", "b", "c", "d", "e", "f", "g"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g", "h"])
        {
            text.push_str(&format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 10].join(", ")
            ));
        }
        let e = parse(Path::new("bomb.yaml"), &text).unwrap_err();
        assert!(e.pos.is_some(), "{e}");
        assert!(
            e.message
                .starts_with("YAML too large: exceeds the parser's budget"),
            "{e}"
        );
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let e = parse(Path::new("bad.yaml"), "a: [1, 2\nb: c\n").unwrap_err();
        assert!(e.pos.is_some(), "{e}");
        assert!(e.to_string().starts_with("bad.yaml:"), "{e}");
        let dup = parse(Path::new("d.yaml"), "a: 1\na: 2\n").unwrap_err();
        assert_eq!(
            dup.to_string(),
            "d.yaml:2:1: YAML syntax: duplicate mapping key: a"
        );
    }
}
