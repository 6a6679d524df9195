//! The outcome check of the kube differential: for a workload both kube and tidegate ran,
//! whether each completed, and the pod counts at the end of each op (created, scheduled,
//! pending, deleted), kube's from its record (`kube-reference/perf/outcome.go`), tidegate's
//! from [`crate::run::outcome`]. The replay ([`super::replay`]) judges each attempt on kube's
//! own state; this judges where each side got to.
//!
//! Protocol:
//!
//! - kube's side: the record's `op` lines are the marks scheduler_perf's executor logs (an
//!   op's start: `createNamespaces`, `createPods`, `steadyState`, `startMetrics`,
//!   `stopMetrics`; a wait that passed: `scheduled`, `attempted`, `steadyStateEnd`; a
//!   failure: `failed`, whose text names the op), each with the counts of the executor's
//!   pod informer then; the `outcome` line says whether the workload completed, with the
//!   counts at its end. The recorder starts after the first createNodes op, so the ops up to
//!   it have no marks.
//! - Alignment: the ops of tidegate's plan are walked in order, each consuming the marks it
//!   logs in kube (a createPods: `startMetrics` if it collects, its start, one wait unless it
//!   skips waiting, `stopMetrics` if it collects; a barrier: one wait per namespace, as many
//!   as tidegate's barrier made; createNamespaces, startCollectingMetrics and
//!   stopCollectingMetrics: their mark; other ops none; `createPodSets` marks are skipped,
//!   its pod sets are createPods ops). kube's counts at an op's end are those of its last
//!   wait; for an op that does not wait, those of the next op's first mark when that op logs
//!   one at its start (nothing ran in between), or of the `outcome` line for the last op;
//!   otherwise kube's executor marks no end there and the op is not compared. Marks that do
//!   not follow the plan are a disagreement (the two sides did not run the same ops).
//! - Completion: kube completed and tidegate did not (or the reverse, or both failed at
//!   different ops) is a disagreement, except where timing explains it: kube failing a wait
//!   that tidegate passed only on the executor's lagging view (a view kube's first
//!   poll may or may not still read: a race, see `run::ops::wait`), and kube's run cut off
//!   with no outcome line.
//! - Counts: equal counts agree. Different counts are explained by timing where the op's
//!   end is not a settled point: pods pending on either side (being scheduled, waiting on a
//!   preemption whose victims may still be going), a time-driven op running (churn, a steady
//!   state), or a wait tidegate passed on its lagging view. Otherwise (every pod
//!   bound or deleted on both sides, and still different) a disagreement.

use crate::error::HarnessError;
use crate::run::ops::{CreatePods, Op};
use crate::run::outcome::{PodCounts, WorkloadOutcome};
use serde::Deserialize;
use std::path::Path;

/// One line of kube's record, as far as the outcome check reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Line {
    kind: String,
    op: Option<Mark>,
    completed: Option<bool>,
}

/// A mark of kube's executor with its informer's counts then.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Mark {
    pub event: String,
    pub text: String,
    pub counts: PodCounts,
}

/// What kube's record says of the outcome.
#[derive(Debug, Default)]
pub struct KubeOutcome {
    /// The executor's marks in order (`createPodSets` left out).
    pub marks: Vec<Mark>,
    /// The `outcome` line: completed, and the counts at the end. None: the run was cut off.
    pub end: Option<(bool, PodCounts)>,
    /// The op kube failed at (from the `failed` mark), and its message.
    pub failed: Option<(usize, String)>,
    /// The attempts and victim deletions the record holds.
    pub attempts: usize,
    pub deletions: usize,
}

/// Reads kube's record (every line; those of other kinds count attempts and deletions).
pub fn read_kube(path: &Path) -> Result<KubeOutcome, HarnessError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HarnessError::Run(format!("{}: {e}", path.display())))?;
    let mut k = KubeOutcome::default();
    for line in super::record_lines::<Line>(path, &text) {
        let (_, line) = line?;
        match (line.kind.as_str(), line.op) {
            ("decision", _) => k.attempts += 1,
            ("deleted", _) => k.deletions += 1,
            ("op", Some(m)) if m.event == "failed" => {
                k.failed = Some((failed_op(&m.text).unwrap_or(usize::MAX), m.text.clone()));
                k.marks.push(m);
            }
            ("op", Some(m)) if m.event != "createPodSets" => k.marks.push(m),
            ("outcome", Some(m)) => k.end = Some((line.completed.unwrap_or(false), m.counts)),
            _ => {}
        }
    }
    Ok(k)
}

/// The op number in scheduler_perf's "Error running workload W: op N: ...".
fn failed_op(text: &str) -> Option<usize> {
    let rest = &text[text.find("Error running workload ")?..];
    let at = rest.find(": op ")? + ": op ".len();
    let digits: String = rest[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// How one compared thing came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Same,
    /// Different, for a reason timing explains (the reason).
    Explained(String),
    /// Different, unexplained (what differs).
    Disagree(String),
}

/// kube's counts at an op's end and where they were taken (its wait, the next op's start,
/// the workload's end); None where kube's executor marks no end.
pub type KubeEnd = Option<(PodCounts, &'static str)>;

/// One op compared.
#[derive(Clone, Debug)]
pub struct OpRow {
    pub index: usize,
    pub opcode: &'static str,
    /// kube's counts at the op's end and where they were taken.
    pub kube: KubeEnd,
    pub tidegate: Option<PodCounts>,
    pub verdict: Option<Verdict>,
}

/// One workload judged.
#[derive(Clone, Debug)]
pub struct Judged {
    pub name: String,
    pub kube_completed: Option<bool>,
    /// The op kube failed at (see `kube_failed_at`).
    pub kube_failed_at: Option<usize>,
    pub tidegate_error: Option<String>,
    pub completion: Verdict,
    pub rows: Vec<OpRow>,
}

impl Judged {
    /// The disagreements: completion and counts.
    pub fn disagreements(&self) -> Vec<String> {
        let mut v = vec![];
        if let Verdict::Disagree(d) = &self.completion {
            v.push(format!("completion: {d}"));
        }
        for r in &self.rows {
            if let Some(Verdict::Disagree(d)) = &r.verdict {
                v.push(format!("op {} ({}): {d}", r.index, r.opcode));
            }
        }
        v
    }

    /// The differences timing explains.
    pub fn explained(&self) -> Vec<String> {
        let mut v = vec![];
        if let Verdict::Explained(d) = &self.completion {
            v.push(format!("completion: {d}"));
        }
        for r in &self.rows {
            if let Some(Verdict::Explained(d)) = &r.verdict {
                v.push(format!("op {} ({}): {d}", r.index, r.opcode));
            }
        }
        v
    }
}

/// The kinds of marks an op logs in kube, in order: a start or a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Start(&'static str),
    Wait,
}

fn expected(op: &Op, waits: usize) -> Vec<Expect> {
    match op {
        Op::CreateNamespaces(_) => vec![Expect::Start("createNamespaces")],
        Op::StartCollectingMetrics(_) => vec![Expect::Start("startMetrics")],
        Op::StopCollectingMetrics(_) => vec![Expect::Start("stopMetrics")],
        Op::Barrier(_) => vec![Expect::Wait; waits],
        Op::CreatePods(c) => create_pods_marks(c),
        _ => vec![],
    }
}

fn create_pods_marks(c: &CreatePods) -> Vec<Expect> {
    let mut v = vec![];
    if c.collect_metrics {
        v.push(Expect::Start("startMetrics"));
    }
    if c.steady.is_some() {
        v.extend([Expect::Start("steadyState"), Expect::Wait]);
    } else {
        v.push(Expect::Start("createPods"));
        if !c.skip_wait {
            v.push(Expect::Wait);
        }
    }
    if c.collect_metrics {
        v.push(Expect::Start("stopMetrics"));
    }
    v
}

fn matches(e: Expect, m: &Mark) -> bool {
    match e {
        Expect::Start(s) => m.event == s,
        Expect::Wait => matches!(
            m.event.as_str(),
            "scheduled" | "attempted" | "steadyStateEnd"
        ),
    }
}

/// kube's counts at each op's end (see the module doc), or the first op whose marks do not
/// follow the plan with what was expected and found; and the ops kube's failure may have
/// come at when its message names none (an op's own Fatalf, as updateAny's): after the last
/// op whose marks kube logged, up to the op whose expected mark the failure took the place
/// of.
fn kube_ends(
    t: &WorkloadOutcome,
    k: &KubeOutcome,
) -> (Vec<KubeEnd>, Option<String>, Option<(usize, usize)>) {
    let first = t.ops.iter().position(|o| matches!(o, Op::CreateNodes(_)));
    let mut ends = vec![None; t.ops.len()];
    let Some(first) = first else {
        return (ends, None, None);
    };
    let mut last_marked = first;
    let mut failed_in = None;
    let waits = |i: usize| t.ends.iter().find(|e| e.index == i).map_or(0, |e| e.waits);
    let mut j = 0;
    // (op, the counts of its last wait, whether it had all its marks)
    let mut per_op: Vec<(usize, Option<PodCounts>, bool)> = vec![];
    let mut diverged = None;
    'ops: for (i, op) in t.ops.iter().enumerate().skip(first + 1) {
        let mut last_wait = None;
        for e in expected(op, waits(i)) {
            match k.marks.get(j) {
                Some(m) if matches(e, m) => {
                    if e == Expect::Wait {
                        last_wait = Some(m.counts);
                    }
                    j += 1;
                    last_marked = i;
                }
                Some(m) if m.event != "failed" => {
                    diverged = Some(format!(
                        "kube's marks do not follow the plan at op {i} ({}): expected {e:?}, found {:?} ({})",
                        op.opcode(),
                        m.event,
                        m.text
                    ));
                    per_op.push((i, last_wait, false));
                    break 'ops;
                }
                m => {
                    if m.is_some() {
                        failed_in = Some((last_marked + 1, i));
                    }
                    per_op.push((i, last_wait, false));
                    break 'ops;
                }
            }
        }
        per_op.push((i, last_wait, true));
    }
    if failed_in.is_none() && k.marks.get(j).is_some_and(|m| m.event == "failed") {
        failed_in = Some((last_marked + 1, t.ops.len().saturating_sub(1)));
    }
    for (n, &(i, wait, complete)) in per_op.iter().enumerate() {
        if !complete {
            break;
        }
        ends[i] = if let Some(c) = wait {
            Some((c, "its wait"))
        } else if let Some(&(next, _, _)) = per_op.get(n + 1).filter(|(x, _, _)| *x == i + 1) {
            // The next op's first mark, if it logs one at its start.
            let first_mark = expected(&t.ops[next], waits(next)).first().copied();
            let at = per_op[..=n]
                .iter()
                .map(|&(x, _, _)| expected(&t.ops[x], waits(x)).len())
                .sum::<usize>();
            match (first_mark, k.marks.get(at)) {
                (Some(e @ Expect::Start(_)), Some(m)) if matches(e, m) => {
                    Some((m.counts, "the next op's start"))
                }
                _ => None,
            }
        } else if i + 1 == t.ops.len() {
            k.end
                .filter(|(done, _)| *done)
                .map(|(_, c)| (c, "the workload's end"))
        } else {
            None
        };
    }
    (ends, diverged, failed_in)
}

/// Whether a time-driven op (churn, a steady state) ran at or before op `i`.
fn time_driven_before(ops: &[Op], i: usize) -> bool {
    ops.iter()
        .take(i + 1)
        .any(|o| matches!(o, Op::Churn(_)) || matches!(o, Op::CreatePods(c) if c.steady.is_some()))
}

fn show(c: &PodCounts) -> String {
    format!(
        "created {} scheduled {} pending {} deleted {}",
        c.created, c.scheduled, c.pending, c.deleted
    )
}

/// Judges the counts at one op's end.
fn judge_counts(
    t: &WorkloadOutcome,
    i: usize,
    kube: &PodCounts,
    tg: &PodCounts,
    stale: bool,
) -> Verdict {
    if kube == tg {
        return Verdict::Same;
    }
    let diff = format!("kube {}, tidegate {}", show(kube), show(tg));
    let why = if stale {
        Some("tidegate's wait passed on the executor's lagging view (kube's informer may lag so)")
    } else if kube.pending > 0 || tg.pending > 0 {
        Some("pods still pending (being scheduled, or waiting on a preemption)")
    } else if kube.created < tg.created {
        // The ops create the same pods on both sides: kube's counts come from its informer,
        // which had not seen the op's last creations when the mark was taken.
        Some("kube's informer had not yet seen every pod the ops created")
    } else if time_driven_before(&t.ops, i) {
        Some("a time-driven op (churn, steady state) runs")
    } else {
        None
    };
    match why {
        Some(w) => Verdict::Explained(format!("{diff}: {w}")),
        None => Verdict::Disagree(format!("{diff}, every pod settled on both sides")),
    }
}

/// Judges completion (see the module doc).
fn judge_completion(
    t: &WorkloadOutcome,
    k: &KubeOutcome,
    failed: Option<&(usize, String)>,
) -> Verdict {
    let tg_failed_at = tidegate_failed_at(t);
    let stale_at = |i: usize| t.ends.iter().any(|e| e.index == i && e.stale);
    match (&k.end, failed, &t.error) {
        (None, _, _) if failed.is_none() => Verdict::Explained(
            "kube's run was cut off before the workload's end (no outcome line)".into(),
        ),
        (_, None, None) => Verdict::Same,
        (_, None, Some(e)) => Verdict::Disagree(format!(
            "kube completed, tidegate failed at op {}: {e}",
            tg_failed_at.unwrap_or(0)
        )),
        (_, Some((n, text)), None) if stale_at(*n) => Verdict::Explained(format!(
            "kube failed at op {n}, whose wait tidegate passed on the executor's lagging view: kube's first poll came after its informer saw the change (a race): {text}"
        )),
        (_, Some((n, text)), None) => {
            Verdict::Disagree(format!("kube failed at op {n}, tidegate completed: {text}"))
        }
        (_, Some((n, _)), Some(_)) if Some(*n) == tg_failed_at => Verdict::Same,
        (_, Some((n, text)), Some(e)) => Verdict::Disagree(format!(
            "kube failed at op {n} ({text}), tidegate at op {}: {e}",
            tg_failed_at.unwrap_or(0)
        )),
    }
}

/// The op tidegate's run failed at.
fn tidegate_failed_at(t: &WorkloadOutcome) -> Option<usize> {
    (t.error.as_ref()).and_then(|_| t.ends.last().map(|e| e.index))
}

/// The op kube failed at and its message: the one its message names, else (`failed_in`)
/// tidegate's failing op where it lies in the range the marks leave, else the range's first.
fn kube_failed_at(
    t: &WorkloadOutcome,
    k: &KubeOutcome,
    failed_in: Option<(usize, usize)>,
) -> Option<(usize, String)> {
    let (n, text) = k.failed.clone()?;
    if n != usize::MAX {
        return Some((n, text));
    }
    let (lo, hi) = failed_in?;
    let at = tidegate_failed_at(t).filter(|x| (lo..=hi).contains(x));
    Some((at.unwrap_or(lo), text))
}

/// Judges one workload.
pub fn judge(t: &WorkloadOutcome, k: &KubeOutcome) -> Judged {
    let (kube, diverged, failed_in) = kube_ends(t, k);
    let kube_failed = kube_failed_at(t, k, failed_in);
    let mut rows = vec![];
    for (i, op) in t.ops.iter().enumerate() {
        let end = t.ends.iter().find(|e| e.index == i);
        // A failed op's counts are not an end.
        let tg = end
            .filter(|_| t.error.is_none() || t.ends.last().map(|l| l.index) != Some(i))
            .map(|e| e.counts);
        let verdict = match (&kube[i], &tg) {
            (Some((kc, _)), Some(tc)) => {
                Some(judge_counts(t, i, kc, tc, end.is_some_and(|e| e.stale)))
            }
            _ => None,
        };
        rows.push(OpRow {
            index: i,
            opcode: op.opcode(),
            kube: kube[i],
            tidegate: tg,
            verdict,
        });
    }
    let mut completion = judge_completion(t, k, kube_failed.as_ref());
    if let Some(d) = diverged
        && !matches!(completion, Verdict::Disagree(_))
    {
        completion = Verdict::Disagree(d);
    }
    Judged {
        name: t.name.clone(),
        kube_completed: k.end.map(|(c, _)| c),
        kube_failed_at: kube_failed.map(|(n, _)| n),
        tidegate_error: t.error.clone(),
        completion,
        rows,
    }
}

/// One op's row as `tidegate outcomes` prints it.
pub fn row_text(r: &OpRow) -> String {
    let kube = r
        .kube
        .map_or("-".to_string(), |(c, at)| format!("{} (at {at})", show(&c)));
    let tg = r.tidegate.map_or("-".to_string(), |c| show(&c));
    let v = match &r.verdict {
        None => "not compared".to_string(),
        Some(Verdict::Same) => "same".to_string(),
        Some(Verdict::Explained(_)) => "explained (timing)".to_string(),
        Some(Verdict::Disagree(_)) => "DISAGREE".to_string(),
    };
    format!(
        "op {} {}: kube {kube}; tidegate {tg}: {v}",
        r.index, r.opcode
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(created: u64, scheduled: u64, pending: u64, deleted: u64) -> PodCounts {
        PodCounts {
            created,
            scheduled,
            pending,
            deleted,
        }
    }

    /// CI's run of 2026-11-30 (PreemptionMultiVictimWaveStress): kube's mark at the
    /// preemptors' wait counted 20 pods, all bound, before its informer saw the 5
    /// preemptors; tidegate had created 25 and deleted 15 victims. Settled counts with the
    /// same pods created stay a disagreement.
    #[test]
    fn kube_counting_fewer_pods_created_is_its_informer_lagging() {
        let t = WorkloadOutcome {
            name: "w".into(),
            ops: Vec::new(),
            ends: Vec::new(),
            error: None,
        };
        let v = judge_counts(&t, 3, &c(20, 20, 0, 0), &c(25, 10, 0, 15), false);
        assert!(
            matches!(&v, Verdict::Explained(w) if w.contains("informer had not yet seen")),
            "{v:?}"
        );
        let v = judge_counts(&t, 2, &c(20, 19, 0, 1), &c(20, 20, 0, 0), false);
        assert!(matches!(v, Verdict::Disagree(_)), "{v:?}");
    }
}
