//! A write whose server had not settled when its result was given, and what arrived for it
//! afterwards: its late arrivals, named as that write's in the result of whatever change to
//! the same server comes next — a write, or a preview (which shows them without recording
//! them, so the write after it names them again).

use std::path::PathBuf;

use serde_json::{Value, json};
use tools_core::text::cap_list;

use crate::answer::format::Renderer;
use crate::diagnostics::findings::{ON_WRITE_CAP, render};
use crate::diagnostics::ledger::DiagnosticsLedger;
use crate::diagnostics::settle::SettleGoal;
use crate::diagnostics::state_diff::{DiagnosticState, Transition, diff_states};

/// A write whose server had not settled when its result was given.
#[derive(Debug, Clone)]
pub(crate) struct PendingWrite {
    /// The write's number in this run.
    pub number: u64,
    /// The files it wrote, for naming it.
    pub label: String,
    /// The server process it waited on.
    pub pid: i32,
    /// The state its result was computed from.
    pub after: DiagnosticState,
    /// With the server's first analysis unfinished before the write, the files it
    /// touched that the server had reported findings on before it: late arrivals in
    /// every other file are baseline, not the write's.
    pub only_touched: Option<Vec<PathBuf>>,
    /// What its settle was still waiting for — with the files found depending on the
    /// written ones sure to be published again where the server republishes them all —:
    /// the next change's state before waits for it.
    pub goal: SettleGoal,
    /// Whether its own state before was settled: a server that did not settle before it
    /// either (hung, or buried in work) is not waited for at length again.
    pub before_settled: bool,
}

impl PendingWrite {
    /// What the next change's state before waits for, as `state_before` takes it: this
    /// write's number and goal, unless its own state before was not settled either.
    pub(crate) fn wait_for(&self) -> Option<(u64, &SettleGoal)> {
        self.before_settled.then_some((self.number, &self.goal))
    }
}

/// The late arrivals of `earlier` in the settled state `now`, judged against `ledger`
/// (the run's, for a write; a copy, for a preview): the block that names them as that
/// write's, and each new one's structured form. `None` when nothing arrived.
pub(crate) fn late_block(
    ledger: &mut DiagnosticsLedger,
    r: &mut Renderer,
    earlier: &PendingWrite,
    now: &DiagnosticState,
) -> Option<(String, Vec<Value>)> {
    // With its server's first analysis unfinished, only the files the write touched can
    // be told apart from what the analysis was still finding.
    let baseline: Vec<PathBuf> = match &earlier.only_touched {
        Some(touched) => now
            .keys()
            .filter(|p| !touched.contains(p))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    let changes = diff_states(
        ledger,
        Transition {
            before: &earlier.after,
            after: now,
            touched: &[],
            deleted: &[],
            baseline: &baseline,
            before_settled: true,
        },
    );
    let mut lines = Vec::new();
    let mut structured = Vec::new();
    for ch in &changes {
        for d in &ch.new {
            let (l, j) = render(r, &ch.path, d);
            lines.push(l);
            structured.push(json!({"write": earlier.number, "diagnostic": j}));
        }
    }
    let gone: usize = changes.iter().map(|c| c.gone.len()).sum();
    if lines.is_empty() && gone == 0 {
        return None;
    }
    let mut block = vec![format!(
        "Late diagnostics of the earlier write #{} ({}), still pending when its result was given — caused by that write, not this one: {} new, {gone} gone.",
        earlier.number,
        earlier.label,
        lines.len()
    )];
    let capped = cap_list(lines, ON_WRITE_CAP);
    block.extend(capped.shown.iter().cloned());
    block.extend(capped.more_line());
    Some((block.join("\n"), structured))
}
