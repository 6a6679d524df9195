//! `createPodSets`: `count` createPods ops (the `createPodsOp` given) in namespaces
//! `<namespacePrefix>-<i>`, unrolled before anything runs, as upstream does. It has no run
//! step of its own: each pod set runs as a [`CreatePods`].

use super::{CreatePods, Op, Resolve};
use crate::error::InputError;
use crate::workload::RawOp;
use crate::workload::params::MAX_COUNT;
use crate::workload::yaml::pos_of;

pub const OPCODE: &str = "createPodSets";
pub(crate) const FIELDS: &[&str] = &[
    "opcode",
    "count",
    "countParam",
    "namespacePrefix",
    "createPodsOp",
];
/// Most pod sets one createPodSets op may unroll into (each becomes an op).
const MAX_POD_SETS: usize = 1_000_000;

/// The createPods ops the pod sets unroll into.
pub(crate) fn resolve(r: &Resolve) -> Result<Vec<Op>, InputError> {
    let (cx, raw, of) = (r.cx, r.raw, &r.of);
    for (k, _) in &raw.fields {
        if !FIELDS.contains(&k.value.as_str()) {
            return Err(cx.unknown(k, of, FIELDS));
        }
    }
    let count = r.count(None)?;
    let prefix = r
        .get("namespacePrefix")
        .map(|(_, v)| cx.string(v, &r.f("namespacePrefix")))
        .transpose()?
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            cx.err(
                raw.pos,
                &r.f("namespacePrefix"),
                "namespacePrefix is required",
            )
        })?;
    let inner_field = r.f("createPodsOp");
    let (_, inner) = r
        .get("createPodsOp")
        .ok_or_else(|| cx.err(raw.pos, &inner_field, "createPodsOp is required"))?;
    let fields = cx.map(inner, &inner_field)?.to_vec();
    let opcode = match fields.iter().find(|(k, _)| k.value == "opcode") {
        Some((_, v)) => cx.string(v, &format!("{inner_field}.opcode"))?,
        None => CreatePods::OPCODE.to_string(),
    };
    if opcode != CreatePods::OPCODE {
        return Err(cx.err(
            pos_of(inner),
            &format!("{inner_field}.opcode"),
            format!("must be createPods, got {opcode:?}"),
        ));
    }
    let inner_raw = RawOp {
        index: raw.index,
        pos: pos_of(inner),
        opcode,
        fields,
    };
    let op = Resolve {
        raw: &inner_raw,
        of: inner_field,
        ..*r
    }
    .resolve()?;
    if let Op::CreatePods(CreatePods { count: per_set, .. }) = &op
        && (count as i64).saturating_mul(*per_set as i64) > MAX_COUNT
    {
        return Err(cx.err(
            raw.pos,
            of,
            format!(
                "{count} pod sets of {per_set} pods exceed the limit of {MAX_COUNT} objects per op"
            ),
        ));
    }
    if count > MAX_POD_SETS {
        return Err(cx.err(
            raw.pos,
            &r.f("count"),
            format!("{count} pod sets exceed the limit of {MAX_POD_SETS}"),
        ));
    }
    Ok((0..count)
        .map(|i| {
            let mut o = op.clone();
            if let Op::CreatePods(CreatePods { namespace, .. }) = &mut o {
                *namespace = format!("{prefix}-{i}");
            }
            o
        })
        .collect())
}
