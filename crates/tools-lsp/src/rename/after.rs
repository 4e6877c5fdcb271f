//! What follows a written rename: the write's diagnostics (the observer) and the check of
//! the references under the new name (the `check` module), run as one task. The rename waits
//! for it only until its answer is due (`rename_answer_ms` from the call's start); a check
//! still running then is left to the observer's deferred slot, and its findings lead the
//! run's next answer, attributed to the rename.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsp_types::WorkspaceEdit;
use serde_json::{Value, json};
use tools_core::{CallCtx, PreImageHold, Run, Section};

use crate::client::LspClient;
use crate::diagnostics::deferred::CheckFindings;
use crate::diagnostics::observer::DiagnosticsOnWrite;
use crate::rename::check::{RenameVerified, verify_rename};
use crate::rename::references::ReferencesBefore;

/// Everything the check of one written rename needs, owned (it may outlive the call).
pub(crate) struct AfterRename {
    /// The call, for the observer (the run, its workspace and pre-write images).
    pub ctx: CallCtx,
    /// The diagnostics-on-write observer, if the run has one.
    pub observer: Option<Arc<DiagnosticsOnWrite>>,
    /// The server that renamed.
    pub client: Arc<LspClient>,
    /// The files written.
    pub touched: Vec<PathBuf>,
    /// The edit as written.
    pub edit: WorkspaceEdit,
    /// The references before the rename, when the server gave them.
    pub before: Option<ReferencesBefore>,
    /// The text of the file the rename started from, before it.
    pub origin_text: String,
    /// The new name.
    pub new_name: String,
    /// The other servers whose edits were merged into this one (`.vue` files), each held
    /// to its own references too.
    pub merged: Vec<MergedServer>,
    /// The written files' text from before the rename, kept for the write's diagnostics
    /// until they have taken it: this check may outlive the call, whose own share of it
    /// goes once the call's observers have run.
    pub pre_images: PreImageHold,
}

/// A server whose edit was merged into the rename, checked after writing as the first one.
pub(crate) struct MergedServer {
    /// The server.
    pub client: Arc<LspClient>,
    /// Its references before the rename.
    pub before: Option<ReferencesBefore>,
    /// The text of the file the rename started from, as it saw it.
    pub origin_text: String,
}

/// What the check found.
pub(crate) struct CheckOutcome {
    /// The line saying what the check after writing found.
    pub line: String,
    /// The same for programs.
    pub json: Value,
    /// The write's diagnostics.
    pub sections: Vec<Section>,
}

impl AfterRename {
    /// The write's diagnostics, then the references under the new name against those from
    /// before (asked once the server has the written files).
    pub(crate) async fn run(self) -> CheckOutcome {
        let started = Instant::now();
        let sections = match &self.observer {
            // The edit is the renamed symbol's references: its users are known.
            Some(obs) => {
                crate::diagnostics::dependents::USERS_COVERED
                    .scope((), obs.observe_now(&self.ctx, &self.touched))
                    .await
            }
            None => Vec::new(),
        };
        // The write's diagnostics have taken the text from before: this check no longer
        // keeps it from being released.
        drop(self.pre_images);
        tracing::debug!(
            phase = "diagnostics of the touched files",
            ms = started.elapsed().as_millis() as u64,
            "rename"
        );
        let started = Instant::now();
        let verified = match &self.before {
            Some(before) => Some(
                verify_rename(
                    self.ctx.run.workspace(),
                    &self.client,
                    &self.touched,
                    &self.edit,
                    before,
                    &self.origin_text,
                )
                .await,
            ),
            None => None,
        };
        tracing::debug!(
            phase = "references after",
            ms = started.elapsed().as_millis() as u64,
            "rename"
        );
        let (mut line, mut json) = describe_check(
            &self.ctx.run,
            &self.client.server,
            &self.new_name,
            self.before.as_ref(),
            verified,
        );
        // Each merged server's check line follows the first server's.
        let mut merged = Vec::new();
        for m in &self.merged {
            let verified = match &m.before {
                Some(b) => Some(
                    verify_rename(
                        self.ctx.run.workspace(),
                        &m.client,
                        &self.touched,
                        &self.edit,
                        b,
                        &m.origin_text,
                    )
                    .await,
                ),
                None => None,
            };
            let who = crate::queries::co_servers::named(&m.client);
            let (l, j) = describe_check(
                &self.ctx.run,
                &who,
                &self.new_name,
                m.before.as_ref(),
                verified,
            );
            line.push('\n');
            line.push_str(&l);
            merged.push(j);
        }
        if !merged.is_empty() {
            json["merged"] = Value::Array(merged);
        }
        CheckOutcome {
            line,
            json,
            sections,
        }
    }
}

/// How long a rename's answer waits for its check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckWait {
    /// When the answer is given, with the check or without it.
    pub due: Instant,
    /// Whether the wait was left out because the server's diagnostics of the last write
    /// took longer than the bound.
    pub skipped: bool,
}

impl CheckWait {
    /// The wait for a rename that began at `started`: until `bound` after it, or none when
    /// the server's diagnostics of its last write (`last_verdict`) took longer than `bound`
    /// — its check of the rename's files is then as slow (pyright re-checking importers,
    /// rust-analyzer running `cargo check`), and waiting would only delay the edits'
    /// answer by the whole bound. `now` is the moment the edits were written.
    pub(crate) fn new(
        started: Instant,
        now: Instant,
        bound: Duration,
        last_verdict: Option<Duration>,
    ) -> CheckWait {
        match last_verdict {
            Some(took) if took > bound => CheckWait {
                due: now,
                skipped: true,
            },
            _ => CheckWait {
                due: started + bound,
                skipped: false,
            },
        }
    }
}

/// The findings of a check that outlived its rename's answer, as they lead the next one:
/// the first line names the rename (`label`) and says the findings are its own.
pub(crate) fn late_findings(label: &str, outcome: CheckOutcome) -> CheckFindings {
    let mut text = vec![
        format!(
            "Check of the earlier {label}, still running when its answer was given — caused by that rename, not this call:"
        ),
        outcome.line,
    ];
    let mut diagnostics = Vec::new();
    for s in outcome.sections {
        text.push(s.body);
        diagnostics.push(s.structured.unwrap_or(Value::Null));
    }
    CheckFindings {
        text: text.join("\n"),
        structured: json!({"change": label, "checked_after_writing": outcome.json,
            "diagnostics": diagnostics}),
    }
}

/// The answer's line and structured form for the check after writing.
fn describe_check(
    run: &Run,
    server: &str,
    new_name: &str,
    before: Option<&ReferencesBefore>,
    verified: Option<Result<RenameVerified, String>>,
) -> (String, Value) {
    let places = |v: &[(PathBuf, u32)]| -> Vec<String> {
        v.iter()
            .map(|(p, l)| format!("{}:{}", run.workspace().display(p), l + 1))
            .collect()
    };
    let listed = |v: &[String]| {
        let capped = tools_core::text::cap_list(v.iter().cloned(), 20);
        let mut s = capped.shown.join(", ");
        if let Some(more) = capped.more_line() {
            s.push_str(&format!(" {more}"));
        }
        s
    };
    match (before, verified) {
        (Some(b), Some(Ok(v))) if v.is_clean() => (
            format!(
                "checked after writing: {server} links all {} reference(s) of `{}` from before to `{new_name}`",
                v.before, b.old_name
            ),
            json!({"clean": true, "before": v.before, "after": v.after}),
        ),
        (Some(b), Some(Ok(v))) => {
            let lost = places(&v.lost);
            let left = places(&v.old_name_left);
            let mut line = format!(
                "WARNING — checked after writing, the rename left places behind: {server} linked {} reference(s) to `{}` before and links {} to `{new_name}` now.",
                v.before, b.old_name, v.after
            );
            if !lost.is_empty() {
                line.push_str(&format!(" No longer linked: {}.", listed(&lost)));
            }
            if !left.is_empty() {
                line.push_str(&format!(
                    " Still spelt `{}`: {}.",
                    b.old_name,
                    listed(&left)
                ));
            }
            line.push_str(" Fix those places (see the diagnostics) or undo the rename.");
            (
                line,
                json!({"clean": false, "before": v.before, "after": v.after,
                    "no_longer_linked": lost, "old_name_left": left}),
            )
        }
        (_, Some(Err(why))) => (
            format!("not checked after writing: {why}"),
            json!({"clean": null, "why": why}),
        ),
        _ => (
            format!("not checked after writing: {server} gave no references to compare with"),
            json!({"clean": null, "why": "no references before the rename"}),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_left_out_only_after_a_write_slower_than_the_bound() {
        let started = Instant::now();
        let now = started + Duration::from_millis(30);
        let bound = Duration::from_millis(200);
        let waits = CheckWait {
            due: started + bound,
            skipped: false,
        };
        // No write seen yet: the bound.
        assert_eq!(CheckWait::new(started, now, bound, None), waits);
        // A server that answered the last write within the bound may again.
        let quick = Some(Duration::from_millis(120));
        assert_eq!(CheckWait::new(started, now, bound, quick), waits);
        assert_eq!(CheckWait::new(started, now, bound, Some(bound)), waits);
        // One that took longer will not: the answer is due at once.
        let slow = Some(Duration::from_millis(1_400));
        assert_eq!(
            CheckWait::new(started, now, bound, slow),
            CheckWait {
                due: now,
                skipped: true
            }
        );
    }
}
