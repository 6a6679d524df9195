//! Object templates: Go-template text rendered per object, parsed as YAML, typed as a
//! Kubernetes object (k8s-openapi), and converted to the engine's compact form.
//!
//! A template without actions is parsed and converted once and then stamped out per object,
//! so creating pods costs a clone, not a parse. A template whose actions only change plain
//! string values at the ends of lines (`name: pod-{{.Index}}`, the common case) is parsed
//! once too: each later rendering is compared line by line with the first, and where every
//! changed line differs only in such a value, the first tree is patched instead of parsing
//! the text (see [`Base`]); anything else is parsed in full. Errors point at the template
//! file, the line:column of the offending field, and its API path.

use crate::error::{InputError, Pos};
use crate::template::Template;
use crate::workload::yaml::{SNode, YNode, locate, parse, pos_of};
use k8s_openapi::api::core::v1 as core;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tidegate_engine::api::convert;
use tidegate_engine::api::{Node, PodSpecInfo};

/// A parsed object: its positioned tree (for error locations) and its JSON form.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub file: PathBuf,
    pub tree: SNode,
    pub json: serde_json::Value,
}

impl Rendered {
    pub fn kind(&self) -> &str {
        self.json.get("kind").and_then(|k| k.as_str()).unwrap_or("")
    }

    pub fn error_at(&self, path: &str, message: impl Into<String>) -> InputError {
        InputError::new(&self.file, Some(locate(&self.tree, path)), path, message)
    }

    /// Deserializes as a Kubernetes type; a type error names the field path.
    pub fn typed<T: DeserializeOwned>(&self, want_kind: &str) -> Result<T, InputError> {
        if self.kind() != want_kind {
            return Err(self.error_at(
                "kind",
                format!("expected kind {want_kind:?}, found {:?}", self.kind()),
            ));
        }
        serde_path_to_error::deserialize(&self.json).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            self.error_at(&path, e.inner().to_string())
        })
    }
}

/// A template file.
pub struct ObjectTemplate {
    pub path: PathBuf,
    template: Template,
    /// The parsed object when the template has no actions.
    fixed: Option<Rendered>,
    /// The first rendering, parsed, to patch later ones from (templates with actions).
    base: OnceLock<Base>,
}

/// A rendering parsed in full: its lines and its tree. A later rendering with as many lines,
/// each changed line the same as this one's up to a plain string value that ends the line
/// in both, is this tree with those values replaced: the same tree the parser would build,
/// because the values are kept to text that YAML reads as a plain string whatever the schema
/// (a letter, then letters, digits and `-._/`, and not a boolean or null word) and nothing
/// else on the line or around it changed.
struct Base {
    lines: Vec<String>,
    tree: SNode,
}

/// Whether YAML reads `v`, unquoted at the end of a line, as exactly the string `v`.
fn plain_string(v: &str) -> bool {
    let mut chars = v.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '/'))
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null"
        )
}

impl Base {
    /// `text` as this tree patched, if every line that differs differs only in a plain
    /// string value ending it.
    fn patch(&self, text: &str) -> Option<SNode> {
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() != self.lines.len() {
            return None;
        }
        let mut changes: Vec<(usize, bool, &str)> = Vec::new();
        for (i, (new, old)) in lines.iter().zip(&self.lines).enumerate() {
            if new != old {
                changes.push((i + 1, false, new));
            }
        }
        let mut tree = self.tree.clone();
        let mut left = changes.len();
        replace_values(&mut tree, &self.lines, &mut changes, &mut left);
        (left == 0).then_some(tree)
    }
}

/// Replaces, in `node`, each string value that ends a changed line (1-based line, whether
/// it is patched yet, the line's new text) with the new line's tail, where the tails are plain strings and the
/// text before them is unchanged; counts the lines so patched down from `left`.
fn replace_values(
    node: &mut SNode,
    old_lines: &[String],
    changes: &mut [(usize, bool, &str)],
    left: &mut usize,
) {
    match &mut node.value {
        YNode::Seq(items) => {
            for n in items {
                replace_values(n, old_lines, changes, left);
            }
        }
        YNode::Map(entries) => {
            for (_, n) in entries {
                replace_values(n, old_lines, changes, left);
            }
        }
        YNode::Str(old) => {
            let line = node.referenced.line() as usize;
            let Some(change) = changes.iter_mut().find(|c| c.0 == line && !c.1) else {
                return;
            };
            let (Some(old_line), Some(col)) = (
                old_lines.get(line - 1),
                (node.referenced.column() as usize).checked_sub(1),
            ) else {
                return;
            };
            let new_line = change.2;
            if !old_line.is_ascii()
                || !new_line.is_ascii()
                || old_line.len() < col
                || new_line.len() < col
                || old_line[..col] != new_line[..col]
            {
                return;
            }
            let (old_tail, new_tail) = (old_line[col..].trim_end(), new_line[col..].trim_end());
            if old_tail == old.as_str() && plain_string(old_tail) && plain_string(new_tail) {
                *old = new_tail.to_string();
                change.1 = true;
                *left -= 1;
            }
        }
        _ => {}
    }
}

impl ObjectTemplate {
    pub fn load(path: &Path) -> Result<ObjectTemplate, InputError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| InputError::new(path, None, "", format!("cannot read template: {e}")))?;
        ObjectTemplate::from_text(path, &text)
    }

    /// [`ObjectTemplate::load`] on text already read (`path` names it in errors).
    pub fn from_text(path: &Path, text: &str) -> Result<ObjectTemplate, InputError> {
        let template = Template::parse(text).map_err(|e| {
            let pos = e.line().map(|l| Pos {
                line: l as u64,
                column: e.column().unwrap_or(1) as u64,
            });
            // The position is the error's own; the message says what kind of error it is.
            let msg = match pos {
                Some(_) => format!("template syntax: {}", e.message()),
                None => e.to_string(),
            };
            InputError::new(path, pos, "", msg)
        })?;
        let fixed = if template.is_static() {
            Some(Rendered {
                file: path.to_path_buf(),
                tree: parse(path, text)?,
                json: serde_json::Value::Null,
            })
            .map(|mut r| {
                r.json = r.tree.value.to_json();
                r
            })
        } else {
            None
        };
        Ok(ObjectTemplate {
            path: path.to_path_buf(),
            template,
            fixed,
            base: OnceLock::new(),
        })
    }

    pub fn is_static(&self) -> bool {
        self.fixed.is_some()
    }

    /// Renders the object for `index` of `count` with `params`.
    pub fn render(
        &self,
        index: usize,
        count: usize,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Rendered, InputError> {
        if let Some(f) = &self.fixed {
            return Ok(f.clone());
        }
        let mut data = params.clone();
        data.insert("Index".into(), index.into());
        data.insert("Count".into(), count.into());
        let text = self.template.render(&data).map_err(|e| {
            InputError::new(
                &self.path,
                None,
                "",
                format!("rendering object {index}: {e}"),
            )
        })?;
        let patched = self.base.get().and_then(|b| b.patch(&text));
        let tree = match patched {
            Some(tree) => tree,
            None => {
                let tree = parse(&self.path, &text).map_err(|mut e| {
                    e.message = format!("{} (in object {index} as rendered)", e.message);
                    e
                })?;
                // Anchors and aliases would copy a value the patch changes: no base.
                if self.base.get().is_none() && !text.contains('&') {
                    let _ = self.base.set(Base {
                        lines: text.lines().map(str::to_string).collect(),
                        tree: tree.clone(),
                    });
                }
                tree
            }
        };
        Ok(Rendered {
            file: self.path.clone(),
            json: tree.value.to_json(),
            tree,
        })
    }
}

/// kube's default pod when a createPods op names no template.
pub fn default_pod() -> core::Pod {
    let json = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": "pod-"},
        "spec": {"containers": [{
            "name": "pause", "image": "registry.k8s.io/pause:3.10",
            "ports": [{"containerPort": 80}],
            "resources": {
                "limits": {"cpu": "100m", "memory": "500Mi"},
                "requests": {"cpu": "100m", "memory": "500Mi"}
            }
        }]}
    });
    serde_json::from_value(json).expect("the default pod is valid")
}

/// kube's default node when a createNodes op names no template.
pub fn default_node(op_index: usize) -> core::Node {
    let json = serde_json::json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"generateName": format!("node-{op_index}-")},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running"
        }
    });
    serde_json::from_value(json).expect("the default node is valid")
}

/// Converts a pod's spec, mapping a conversion error to the template position.
pub fn pod_spec_info(r: Option<&Rendered>, pod: &core::Pod) -> Result<PodSpecInfo, InputError> {
    let spec = pod.spec.clone().unwrap_or_default();
    convert::pod_spec_info(&spec).map_err(|e| match r {
        Some(r) => r.error_at(
            &e.field,
            format!("Invalid value: {:?}: {}", e.value, e.detail),
        ),
        None => InputError::new(Path::new("<default pod>"), None, e.field, e.detail),
    })
}

/// Converts a node, mapping a conversion error to the template position.
pub fn node(r: Option<&Rendered>, n: &core::Node) -> Result<Node, InputError> {
    convert::node(n).map_err(|e| match r {
        Some(r) => r.error_at(
            &e.field,
            format!("Invalid value: {:?}: {}", e.value, e.detail),
        ),
        None => InputError::new(Path::new("<default node>"), None, e.field, e.detail),
    })
}

/// A pod made from a template: the object, its converted spec (shared for static templates),
/// and the rendered tree for error locations (None when shared).
pub type MadePod = (Arc<core::Pod>, Arc<PodSpecInfo>, Option<Rendered>);

/// A pod template, typed and converted once where possible.
pub struct PodSource {
    template: Option<ObjectTemplate>,
    /// `status.nominatedNodeName` given to every pod (createPods' `nominatedNodeName`).
    nominated: Option<String>,
    /// For static templates (and the default pod): the object and its shared spec.
    fixed: Option<(Arc<core::Pod>, Arc<PodSpecInfo>)>,
}

impl PodSource {
    pub fn new(path: Option<&Path>) -> Result<PodSource, InputError> {
        let Some(path) = path else {
            let pod = default_pod();
            let spec = pod_spec_info(None, &pod)?;
            return Ok(PodSource {
                template: None,
                nominated: None,
                fixed: Some((Arc::new(pod), Arc::new(spec))),
            });
        };
        let t = ObjectTemplate::load(path)?;
        let mut src = PodSource {
            template: Some(t),
            nominated: None,
            fixed: None,
        };
        if src.template.as_ref().is_some_and(ObjectTemplate::is_static) {
            let (pod, spec, _) = src.make(0, 1, &serde_json::Map::new())?;
            src.fixed = Some((pod, spec));
        }
        Ok(src)
    }

    /// Every pod made from now on carries `status.nominatedNodeName: node`.
    pub fn with_nominated_node_name(mut self, node: Option<String>) -> PodSource {
        if node.is_none() {
            return self;
        }
        self.nominated = node;
        if let Some((p, _)) = &mut self.fixed {
            Arc::make_mut(p)
                .status
                .get_or_insert_with(Default::default)
                .nominated_node_name = self.nominated.clone();
        }
        self
    }

    /// The pod for `index`: the object, its converted spec (shared for static templates), and
    /// the rendered tree for error locations (None when shared).
    pub fn make(
        &self,
        index: usize,
        count: usize,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<MadePod, InputError> {
        if let Some((p, s)) = &self.fixed {
            return Ok((p.clone(), s.clone(), None));
        }
        let t = self.template.as_ref().expect("template or fixed");
        let r = t.render(index, count, params)?;
        let mut pod: core::Pod = r.typed("Pod")?;
        if self.nominated.is_some() {
            pod.status
                .get_or_insert_with(Default::default)
                .nominated_node_name = self.nominated.clone();
        }
        let spec = pod_spec_info(Some(&r), &pod)?;
        Ok((Arc::new(pod), Arc::new(spec), Some(r)))
    }

    pub fn path(&self) -> Option<&Path> {
        self.template.as_ref().map(|t| t.path.as_path())
    }

    /// Whether every pod is the same object (a static template, or the default pod).
    pub fn is_fixed(&self) -> bool {
        self.fixed.is_some()
    }

    /// The PodGroup pod `index` names (`spec.schedulingGroup.podGroupName`), read from the
    /// rendered template without converting the pod (planning's census of pod groups).
    pub fn group_name(
        &self,
        index: usize,
        count: usize,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Option<String>, InputError> {
        if let Some((p, _)) = &self.fixed {
            return Ok(p
                .spec
                .as_ref()
                .and_then(|s| s.scheduling_group.as_ref())
                .and_then(|g| g.pod_group_name.clone()));
        }
        let t = self.template.as_ref().expect("template or fixed");
        let r = t.render(index, count, params)?;
        Ok(r.json
            .pointer("/spec/schedulingGroup/podGroupName")
            .and_then(|v| v.as_str())
            .map(str::to_string))
    }

    /// The ResourceClaims and ResourceClaimTemplates pod `index` names
    /// (`spec.resourceClaims[].resourceClaimName` / `resourceClaimTemplateName`), read
    /// without converting the pod (planning's census of device classes).
    pub fn claim_refs(
        &self,
        index: usize,
        count: usize,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<String>, InputError> {
        let json = match &self.fixed {
            Some((p, _)) => serde_json::to_value(p.spec.as_ref()).unwrap_or_default(),
            None => {
                let t = self.template.as_ref().expect("template or fixed");
                let r = t.render(index, count, params)?;
                r.json.get("spec").cloned().unwrap_or_default()
            }
        };
        Ok(claim_refs_of_spec(&json))
    }

    /// Pod `index` as rendered (None for the default pod), for an error's position.
    pub fn rendered(
        &self,
        index: usize,
        count: usize,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<Rendered> {
        self.template.as_ref()?.render(index, count, params).ok()
    }
}

/// Positions of a rendered object's fields, for errors raised after parsing.
pub fn position_of(r: &Rendered, path: &str) -> Pos {
    locate(&r.tree, path)
}

/// The position of the object itself.
pub fn object_pos(r: &Rendered) -> Pos {
    pos_of(&r.tree)
}

/// The claim and claim-template names a pod spec (JSON) names.
pub fn claim_refs_of_spec(spec: &serde_json::Value) -> Vec<String> {
    spec.get("resourceClaims")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .flat_map(|c| {
            ["resourceClaimName", "resourceClaimTemplateName"]
                .into_iter()
                .filter_map(move |k| c.get(k).and_then(|v| v.as_str()))
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node's value and position, depth first.
    fn nodes(n: &SNode, out: &mut Vec<(u64, u64, String)>) {
        out.push((
            n.referenced.line(),
            n.referenced.column(),
            n.value.to_json().to_string(),
        ));
        match &n.value {
            YNode::Seq(items) => items.iter().for_each(|x| nodes(x, out)),
            YNode::Map(entries) => entries.iter().for_each(|(_, x)| nodes(x, out)),
            _ => {}
        }
    }

    /// Renderings patched from the first one are the trees a full parse gives, positions
    /// included, whether the patch applies (plain string values at line ends) or not
    /// (numbers, booleans, quoted values, flow collections, changed keys, line counts,
    /// anchors).
    #[test]
    fn patched_renderings_are_what_the_parser_builds() {
        let templates = [
            "kind: Pod\nmetadata:\n  name: pod-{{.Index}}\n  labels:\n    g: gang-{{DivideInt .Index 2}}\nspec: {}\n",
            "kind: Pod\nmetadata:\n  name: p\nspec:\n  priority: {{.Index}}\n",
            "kind: Pod\nmetadata:\n  name: \"q-{{.Index}}\"\n",
            "kind: Pod\nmetadata:\n  name: {{if eq .Index 1}}true{{else}}x{{.Index}}{{end}}\n",
            "kind: Pod\nmetadata:\n  name: {{if eq .Index 2}}null{{else}}n{{.Index}}{{end}}   # c\n",
            "kind: Pod\nspec:\n  args: [a{{.Index}}, b]\n",
            "kind: Pod\nmetadata:\n  labels:\n    k{{.Index}}: v{{.Index}}\n",
            "kind: Pod\nmetadata:\n  name: a\n{{if eq .Index 3}}  uid: u\n{{end}}",
            "kind: Pod\nmetadata:\n  name: &n n{{.Index}}\n  generateName: *n\n",
            "kind: Pod\nmetadata:\n  name: n{{.Index}}\n  namespace: {{if eq .Index 2}}1e3{{else}}ns{{end}}\n",
        ];
        let path = Path::new("t.yaml");
        let params = serde_json::Map::new();
        for text in templates {
            let shared = ObjectTemplate::from_text(path, text).unwrap();
            for j in 0..5 {
                let got = shared.render(j, 5, &params).unwrap();
                let fresh = ObjectTemplate::from_text(path, text).unwrap();
                let want = fresh.render(j, 5, &params).unwrap();
                assert_eq!(got.json, want.json, "{text} at {j}");
                let (mut a, mut b) = (vec![], vec![]);
                nodes(&got.tree, &mut a);
                nodes(&want.tree, &mut b);
                assert_eq!(a, b, "{text} at {j}");
            }
        }
        // The patch applies where it should: the first template's later renderings.
        let shared = ObjectTemplate::from_text(path, templates[0]).unwrap();
        shared.render(0, 2, &params).unwrap();
        let base = shared.base.get().expect("a base after the first rendering");
        assert!(
            base.patch("kind: Pod\nmetadata:\n  name: pod-7\n  labels:\n    g: gang-3\nspec: {}\n")
                .is_some()
        );
        assert!(
            base.patch("kind: Pod\nmetadata:\n  name: 7\n  labels:\n    g: gang-3\nspec: {}\n")
                .is_none()
        );
    }
}
