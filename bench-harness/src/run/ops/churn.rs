//! `churn`: objects created (and in recreate mode deleted again) in the background every
//! `intervalMilliseconds` until the workload ends.

use super::{Op, Prepared, Resolve, RunCx};
use crate::cluster::objects::{self, AnyObject};
use crate::cluster::store::Store;
use crate::error::{HarnessError, InputError};
use crate::run::pace::Step;
use crate::workload::manifest::ObjectTemplate;
use crate::workload::params::MAX_COUNT;
use crate::workload::parse::existing_file;
use crate::workload::yaml::{YNode, pos_of};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::clock::Time;

/// `churn`: objects created (and in recreate mode deleted again) in the background every
/// `interval` until the workload ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Churn {
    pub recreate: bool,
    /// create: stop after this many ticks (0 = never); recreate: slots per template.
    pub number: usize,
    pub interval: Duration,
    pub namespace: String,
    pub templates: Vec<PathBuf>,
}

impl Churn {
    pub const OPCODE: &'static str = "churn";
    pub const FIELDS: &'static [&'static str] = &[
        "opcode",
        "mode",
        "number",
        "intervalMilliseconds",
        "namespace",
        "templatePaths",
    ];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        let recreate = match r.string("mode")?.as_deref() {
            Some("create") => false,
            Some("recreate") => true,
            other => {
                let pos = r.get("mode").map_or(r.raw.pos, |(_, v)| pos_of(v));
                return Err(r.err(
                    pos,
                    &r.f("mode"),
                    format!("must be create or recreate, got {other:?}"),
                ));
            }
        };
        let number = int(r, "number")?.unwrap_or(0) as usize;
        if recreate && number == 0 {
            let pos = r.get("number").map_or(r.raw.pos, |(_, v)| pos_of(v));
            return Err(r.err(
                pos,
                &r.f("number"),
                "recreate mode needs a positive number of objects per template",
            ));
        }
        let interval_ms = int(r, "intervalMilliseconds")?
            .filter(|&m| m > 0)
            .unwrap_or(500);
        let templates = template_paths(r)?;
        if templates.is_empty() {
            return Err(r.err(
                r.raw.pos,
                &r.f("templatePaths"),
                "at least one template path is required",
            ));
        }
        Ok(Op::Churn(Churn {
            recreate,
            number,
            interval: Duration::from_millis(interval_ms as u64),
            namespace: r.string("namespace")?.unwrap_or(r.default_namespace()),
            templates,
        }))
    }

    /// Renders each template once: the objects churn creates.
    pub(crate) fn plan(
        &self,
        i: usize,
        prepared: &mut Prepared,
        unsupported: &mut Option<String>,
    ) -> Result<(), InputError> {
        let mut objs = vec![];
        for path in &self.templates {
            let t = ObjectTemplate::load(path)?;
            let r = t.render(0, 1, &Default::default())?;
            match objects::prepare(&r)? {
                Ok(o) => objs.push(o),
                Err(why) => {
                    unsupported.get_or_insert_with(|| format!("churn: {why}"));
                }
            }
        }
        prepared.churn.insert(i, objs);
        Ok(())
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let objs = cx
            .prepared
            .churn
            .get(&cx.index)
            .cloned()
            .unwrap_or_default();
        cx.store.ensure_namespace_exists(&self.namespace);
        let first = cx.pace.now() + self.interval;
        cx.pace.spawn(
            first,
            churn(
                cx.store.clone(),
                objs,
                self.recreate,
                self.number,
                self.interval,
                &self.namespace,
            ),
        );
        Ok(())
    }
}

/// A non-negative integer field up to [`MAX_COUNT`].
fn int(r: &Resolve, name: &str) -> Result<Option<i64>, InputError> {
    r.get(name)
        .map(|(_, v)| {
            let x = r.cx.number(v, &r.f(name))?;
            if x < 0.0 || x.fract() != 0.0 || x > MAX_COUNT as f64 {
                return Err(r.err(
                    pos_of(v),
                    &r.f(name),
                    format!("must be a non-negative integer up to {MAX_COUNT}, got {x}"),
                ));
            }
            Ok(x as i64)
        })
        .transpose()
}

/// `templatePaths`, each of which must exist.
fn template_paths(r: &Resolve) -> Result<Vec<PathBuf>, InputError> {
    let f = |name: &str| r.f(name);
    Ok(match r.get("templatePaths") {
        Some((_, v)) => {
            r.cx.strings(v, &f("templatePaths"))?
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let at = match &v.value {
                        YNode::Seq(items) => items.get(i).map_or(pos_of(v), pos_of),
                        _ => pos_of(v),
                    };
                    existing_file(r.cx, r.cfg, t, at, &format!("{}[{i}]", f("templatePaths")))
                })
                .collect::<Result<_, _>>()?
        }
        None => Vec::new(),
    })
}

/// The churn op's step (upstream's runChurnOp): every `interval`, for each template, create
/// an object (create mode, for `number` ticks, 0 = until the workload ends), or in recreate
/// mode delete the object in the template's current slot of `number` if there is one, else
/// create one there. Failures are skipped, as upstream logs and goes on.
fn churn(
    store: Arc<Store>,
    objs: Vec<AnyObject>,
    recreate: bool,
    number: usize,
    interval: Duration,
    namespace: &str,
) -> Step {
    let namespace = namespace.to_string();
    let mut slots: Vec<Vec<Option<String>>> = vec![vec![None; number.max(1)]; objs.len()];
    let mut tick: usize = 0;
    Box::new(move |now: Time| {
        tick += 1;
        for (o, slot) in objs.iter().zip(slots.iter_mut()) {
            if recreate {
                let s = &mut slot[(tick - 1) % number.max(1)];
                match s.take() {
                    Some(name) => {
                        store.delete_any(o.kind(), &namespace, &name);
                    }
                    None => *s = store.create_any(o, &namespace).ok(),
                }
            } else {
                let _ = store.create_any(o, &namespace);
            }
        }
        if !recreate && number > 0 && tick >= number {
            return None;
        }
        Some(now + interval)
    })
}
