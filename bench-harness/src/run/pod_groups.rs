//! Planning's census of pod groups: bad input that kube would accept and then hang on, found
//! over the expanded workload before anything runs.
//!
//! kube's API server validates each PodGroup and pod alone (`cluster/store/scheduling.rs` does
//! the same), but a pod waits in the scheduler's PreEnqueue until its group exists and, for a
//! gang, until `minCount` of the group's pods exist; scheduler_perf's `createPods` then waits
//! for them to be scheduled until its timeout. So when the workload's `GenericWorkload` gate is
//! on (off, kube drops `spec.schedulingGroup` and no pod joins a group), every object the ops
//! create is rendered (each PodGroup also decoded and validated, so a bad one is reported at
//! its own index) and these are refused, each as one line with the template's file, line and
//! column and the field:
//!
//! - a pod naming a group that no op creates in the pod's namespace (a group lives in its
//!   pod's namespace: one only in another namespace is named as such);
//! - a gang whose `minCount` is above the number of pods that name it (where at least one
//!   does; a churn or steady-state op that makes pods of the group counts as unbounded), and a
//!   composite gang whose `minGroupCount` is above the number of its child groups;
//! - a cycle of `parentCompositePodGroupName` links.
//!
//! What is counted: `createPodGroups`, `createCompositePodGroups` and `createAny` objects of
//! either kind (a `generateName` group, whose name is not known before it exists, is
//! skipped); the pods of `createPods`, `createAny` and `churn`.

use crate::cluster::objects::{self, AnyObject};
use crate::cluster::store::KubeObject;
use crate::error::{InputError, Pos};
use crate::run::ops::{Op, Prepared};
use crate::workload::Config;
use crate::workload::manifest::{self, Rendered};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The note every census error ends with.
const HANG: &str = "kube's API server accepts this, but the workload would hang; tidegate \
     refuses it when planning";

/// A group some op creates.
struct Decl {
    composite: bool,
    /// The gang's quorum: `minCount` (pods) or `minGroupCount` (child groups).
    min: Option<i64>,
    parent: Option<String>,
    /// Where the object is written, for errors: file, position of the quorum field, of the
    /// parent field.
    file: PathBuf,
    min_pos: Pos,
    parent_pos: Pos,
}

/// What pods name a group: how many (None: unbounded), and the first one's place.
struct Members {
    count: Option<usize>,
    file: PathBuf,
    pos: Option<Pos>,
}

type Key = (String, String);

#[derive(Default)]
struct Census {
    groups: BTreeMap<Key, Decl>,
    /// Pods by the group they name, in the order first named.
    members: BTreeMap<Key, Members>,
    /// The order in which groups were first named by a pod.
    named: Vec<Key>,
}

impl Census {
    fn add_group(&mut self, ns: &str, obj: &Arc<dyn KubeObject>, composite: bool, r: &Rendered) {
        let Some(name) = obj.meta().name.clone().filter(|n| !n.is_empty()) else {
            return;
        };
        let json = obj.to_json();
        let field = if composite {
            "minGroupCount"
        } else {
            "minCount"
        };
        let min = json
            .pointer(&format!("/spec/schedulingPolicy/gang/{field}"))
            .and_then(|v| v.as_i64());
        let parent = json
            .pointer("/spec/parentCompositePodGroupName")
            .and_then(|v| v.as_str())
            .map(str::to_string);
        self.groups.insert(
            (ns.to_string(), name),
            Decl {
                composite,
                min,
                parent,
                file: r.file.clone(),
                min_pos: manifest::position_of(r, &format!("spec.schedulingPolicy.gang.{field}")),
                parent_pos: manifest::position_of(r, "spec.parentCompositePodGroupName"),
            },
        );
    }

    /// `n` pods (None: unbounded) of namespace `ns` name group `name`; the first is written
    /// at `file`, `pos`.
    fn add_members(
        &mut self,
        ns: &str,
        name: &str,
        n: Option<usize>,
        file: &Path,
        pos: Option<Pos>,
    ) {
        let key = (ns.to_string(), name.to_string());
        match self.members.get_mut(&key) {
            Some(m) => m.count = m.count.zip(n).map(|(a, b)| a.saturating_add(b)),
            None => {
                self.named.push(key.clone());
                self.members.insert(
                    key,
                    Members {
                        count: n,
                        file: file.to_path_buf(),
                        pos,
                    },
                );
            }
        }
    }
}

/// Runs the census over the planned ops (see the module doc).
pub(crate) fn check(
    cfg: &Config,
    ops: &[Op],
    prepared: &Prepared,
    gates: &BTreeMap<String, bool>,
) -> Result<(), InputError> {
    if gates.get("GenericWorkload") != Some(&true) {
        return Ok(());
    }
    let mut c = Census::default();
    for (i, op) in ops.iter().enumerate() {
        count_op(&mut c, cfg, i, op, prepared)?;
    }
    check_members(&c)?;
    check_quorums(&c)?;
    check_cycles(&c)
}

/// Adds what op `i` creates to the census.
fn count_op(
    c: &mut Census,
    cfg: &Config,
    i: usize,
    op: &Op,
    prepared: &Prepared,
) -> Result<(), InputError> {
    match op {
        Op::CreatePodGroups(o) => {
            let Some(t) = prepared.templates.get(&i) else {
                return Ok(());
            };
            for (j, params) in o.renderings() {
                let r = t.render(j, o.count, &params)?;
                let obj = o.decode(&r, &prepared.api_gates)?;
                c.add_group(&o.namespace, &obj, o.composite, &r);
            }
        }
        Op::CreateAny(o) => {
            let Some(t) = prepared.templates.get(&i) else {
                return Ok(());
            };
            for j in 0..o.count {
                let r = t.render(j, o.count, &o.template_params)?;
                let Ok(obj) = objects::prepare(&r)? else {
                    continue;
                };
                let ns = o
                    .namespace
                    .clone()
                    .or_else(|| {
                        r.json
                            .pointer("/metadata/namespace")
                            .and_then(|v| v.as_str())
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| "default".into());
                match &obj {
                    AnyObject::Object(s) if s.kind.kind == "PodGroup" => {
                        c.add_group(&ns, &s.obj, false, &r)
                    }
                    AnyObject::Object(s) if s.kind.kind == "CompositePodGroup" => {
                        c.add_group(&ns, &s.obj, true, &r)
                    }
                    AnyObject::Pod { spec, .. } => {
                        if let Some(g) = &spec.scheduling_group {
                            let pos = Some(manifest::position_of(&r, MEMBER_FIELD));
                            c.add_members(&ns, g, Some(1), &r.file, pos);
                        }
                    }
                    _ => {}
                }
            }
        }
        Op::CreatePods(o) => {
            let Some(src) = prepared.pods.get(&i) else {
                return Ok(());
            };
            let file = src
                .path()
                .map_or_else(|| PathBuf::from("<default pod>"), Path::to_path_buf);
            let unbounded = o.steady.is_some();
            let n = |k: usize| (!unbounded).then_some(k);
            if src.is_fixed() {
                if let Some(g) = src.group_name(0, o.count, &o.template_params)? {
                    let pos = member_pos(src.rendered(0, o.count, &o.template_params));
                    c.add_members(&o.namespace, &g, n(o.count), &file, pos);
                }
                return Ok(());
            }
            for j in 0..o.count {
                if let Some(g) = src.group_name(j, o.count, &o.template_params)? {
                    let key = (o.namespace.clone(), g);
                    let pos = if c.members.contains_key(&key) {
                        None
                    } else {
                        member_pos(src.rendered(j, o.count, &o.template_params))
                    };
                    c.add_members(&key.0, &key.1, n(1), &file, pos);
                }
            }
        }
        Op::Churn(o) => {
            for obj in prepared.churn.get(&i).into_iter().flatten() {
                if let AnyObject::Pod { spec, .. } = obj
                    && let Some(g) = &spec.scheduling_group
                {
                    c.add_members(&o.namespace, g, None, &cfg.path, None);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Where a pod names its group.
const MEMBER_FIELD: &str = "spec.schedulingGroup.podGroupName";

fn member_pos(r: Option<Rendered>) -> Option<Pos> {
    r.map(|r| manifest::position_of(&r, MEMBER_FIELD))
}

/// Every group a pod names exists in the pod's namespace.
fn check_members(c: &Census) -> Result<(), InputError> {
    for key in &c.named {
        if c.groups.contains_key(key) {
            continue;
        }
        let (ns, name) = key;
        let m = &c.members[key];
        let elsewhere: Vec<&str> = c
            .groups
            .keys()
            .filter(|(_, n)| n == name)
            .map(|(other, _)| other.as_str())
            .collect();
        let why = if elsewhere.is_empty() {
            format!(
                "pods of namespace {ns:?} name PodGroup {name:?}, which no op of the workload creates: \
                 a pod waits for its group to exist before it is scheduled"
            )
        } else {
            format!(
                "pods of namespace {ns:?} name PodGroup {name:?}, which exists only in namespace {}: \
                 a pod's group is looked up in the pod's own namespace",
                elsewhere
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(InputError::new(
            &m.file,
            m.pos,
            MEMBER_FIELD,
            format!("{why}; {HANG}"),
        ));
    }
    Ok(())
}

/// Every gang some pod names can reach its quorum.
fn check_quorums(c: &Census) -> Result<(), InputError> {
    for (key, d) in &c.groups {
        let Some(min) = d.min else {
            continue;
        };
        let (ns, name) = key;
        if d.composite {
            let children = c
                .groups
                .iter()
                .filter(|((cns, _), g)| cns == ns && g.parent.as_deref() == Some(name.as_str()))
                .count();
            if children > 0 && (children as i64) < min {
                return Err(InputError::new(
                    &d.file,
                    Some(d.min_pos),
                    "spec.schedulingPolicy.gang.minGroupCount",
                    format!(
                        "CompositePodGroup {name:?} (namespace {ns:?}) is a gang of minGroupCount {min}, but only \
                         {children} groups of the workload name it as their parent, so its quorum is never met; {HANG}"
                    ),
                ));
            }
            continue;
        }
        let Some(Members { count: Some(n), .. }) = c.members.get(key) else {
            continue;
        };
        if (*n as i64) < min {
            return Err(InputError::new(
                &d.file,
                Some(d.min_pos),
                "spec.schedulingPolicy.gang.minCount",
                format!(
                    "PodGroup {name:?} (namespace {ns:?}) is a gang of minCount {min}, but only {n} pods of the \
                     workload name it, so its quorum is never met and none of them is scheduled; {HANG}"
                ),
            ));
        }
    }
    Ok(())
}

/// No composite group is its own ancestor.
fn check_cycles(c: &Census) -> Result<(), InputError> {
    for ((ns, name), d) in &c.groups {
        if !d.composite {
            continue;
        }
        let mut path = vec![name.clone()];
        let mut at = d;
        while let Some(p) = &at.parent {
            if p == name {
                path.push(p.clone());
                return Err(InputError::new(
                    &d.file,
                    Some(d.parent_pos),
                    "spec.parentCompositePodGroupName",
                    format!(
                        "CompositePodGroup {name:?} (namespace {ns:?}) is its own ancestor ({}): no group in a cycle \
                         of parents can ever be scheduled; {HANG}",
                        path.join(" → ")
                    ),
                ));
            }
            if path.contains(p) {
                // A cycle further up, reported from one of its own members.
                break;
            }
            let Some(next) = c.groups.get(&(ns.clone(), p.clone())) else {
                break;
            };
            path.push(p.clone());
            at = next;
        }
    }
    Ok(())
}
