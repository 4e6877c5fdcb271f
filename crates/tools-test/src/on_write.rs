//! The tests a write reaches, named at the end of the write's own answer: the functions
//! that THIS write changed (its files' text from before the call, kept by the safe writer
//! and shared by the call's observers, against their text now), followed to the tests
//! that reach them (see [`crate::reach`]) within a time bound, beside diagnostics on
//! write's wait for the servers' verdict (see [`tools_core::WritePass`]). On by default
//! in a trusted workspace, for files whose language has a test runner here; `[test]
//! on_write = false` turns it off. The tests named are remembered: `test run` with
//! `affected` runs them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tools_core::discovery::ProgramSearch;
use tools_core::{CallCtx, PreImage, Section, WriteObserver, WritePass};

use crate::TestShared;
use crate::changes::{ChangedSymbol, LineDiff, functions_at};
use crate::listing::TestItem;
use crate::reach::{Bound, Reach};
use crate::recorded::{ChangedFile, digest, keys_of};
use crate::runner::Detected;

/// Time past the walk's bound for the name search in the tests' text and the answer.
const GRACE: Duration = Duration::from_secs(2);

/// The last line of a section for a project whose tests' runs are not recorded yet.
const UNRECORDED: &str = "\nnot recorded yet: which functions each test runs (a `test run` records it; later writes then also name the tests a static walk misses, such as those running a command through a test runner)";

/// The tests the last write reached, for `test run` with `affected`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LastWrite {
    /// The tests, by path then line.
    pub tests: Vec<TestItem>,
    /// The changed functions, as the answer names them (`` `sub` ``).
    pub changed: String,
    /// Whether the search was complete.
    pub complete: bool,
}

/// Appends a `tests` section to the answer of every write that changed a function.
pub struct ReachingOnWrite {
    /// Time the walk may take per write.
    pub budget: Duration,
    /// Time the walk may go on once the rest of the answer is ready.
    pub hold: Duration,
    pub(crate) shared: Arc<TestShared>,
}

/// What a write changed, ready to be followed.
#[derive(Default)]
struct Changes {
    functions: Vec<ChangedSymbol>,
    /// Why the changes are not all followed (a file whose old text is unknown, lines
    /// outside any function).
    gaps: Vec<String>,
    /// The tests an earlier `test run` saw running what changed.
    recorded: Vec<TestItem>,
    /// A written file's project records what its tests run, and nothing is recorded yet.
    unrecorded: bool,
    /// Why the last recorded run of a written file's project recorded nothing.
    unrecordable: Option<String>,
}

/// The functions `touched` changed in this call, for the files whose language has a runner.
async fn changes_of(ctx: &CallCtx, touched: &[PathBuf], shared: &TestShared) -> Changes {
    let run = &ctx.run;
    let root = run.root();
    let ws = run.workspace();
    let search = ProgramSearch::for_run(run);
    let mut out = Changes::default();
    let mut seen: Vec<&Path> = Vec::new();
    for path in touched {
        if seen.contains(&path.as_path()) {
            continue;
        }
        seen.push(path);
        let Ok((_, detected)) = crate::runner::project_of(path, root) else {
            continue;
        };
        if crate::runner::resolve(detected.clone(), &search, shared.config.cargo).is_err() {
            continue;
        }
        // A deleted file runs no more: what used it fails to import, which diagnostics say.
        let Ok(new) = std::fs::read_to_string(path) else {
            continue;
        };
        let file = ws.display(path);
        let (old_text, ranges) = match ws.pre_write_images().before(path).as_deref() {
            Some(PreImage::Content(old)) => {
                let old = String::from_utf8_lossy(old).into_owned();
                let diff = LineDiff::of(&old, &new);
                let ranges = diff.changed_in_new();
                (Some((old, diff)), ranges)
            }
            Some(PreImage::Absent) => (None, vec![(1, new.lines().count().max(1))]),
            None => {
                out.gaps.push(format!(
                    "{file}: its text before this write was not kept (too large, or changed by something else), so its changes were not followed; `test list` with `changed_since` follows a git diff"
                ));
                continue;
            }
        };
        if ranges.is_empty() {
            continue;
        }
        match functions_at(run, path, &new, &ranges).await {
            Some(found) => {
                for (a, b) in found.outside {
                    let lines = if a == b {
                        format!("{a}")
                    } else {
                        format!("{a}-{b}")
                    };
                    out.gaps.push(format!(
                        "{file}:{lines} changed outside any function (not followed)"
                    ));
                }
                if let Some((old, diff)) = &old_text
                    && shared.config.record
                    && crate::recorder::records(detected.kind, shared.config.cargo)
                {
                    let names: Vec<String> = found.functions.iter().map(|f| f.name.clone()).collect();
                    let change = Written {
                        path,
                        old,
                        new: &new,
                        diff,
                    };
                    recorded_reaching(shared, root, &detected, &change, &names, &mut out);
                }
                for f in found.functions {
                    if !out.functions.contains(&f) {
                        out.functions.push(f);
                    }
                }
            }
            None => out.gaps.push(format!(
                "{file}: nothing here lists its functions (no language server or grammar), so its changes were not followed"
            )),
        }
    }
    out
}

/// One file a write changed: its texts before and after, and their diff.
struct Written<'a> {
    path: &'a Path,
    old: &'a str,
    new: &'a str,
    diff: &'a LineDiff,
}

/// Adds to `out` the tests an earlier `test run` of the run saw running the lines
/// `change` changed (`names`: the functions changed), and carries the recorded lines over
/// to the new text.
fn recorded_reaching(
    shared: &TestShared,
    root: &Path,
    detected: &Detected,
    change: &Written,
    names: &[String],
    out: &mut Changes,
) {
    let (project, file) = keys_of(root, detected, change.path);
    let mut recorded = tools_core::lock_unpoisoned(&shared.recorded);
    if !recorded.has(&project) && !recorded.has_file(&file) {
        match tools_core::lock_unpoisoned(&shared.unrecordable).get(&project) {
            Some(why) => out.unrecordable = Some(why.clone()),
            None => out.unrecorded = true,
        }
        return;
    }
    let old_digest = digest(change.old.as_bytes());
    let old_lines = change.diff.changed_in_old();
    let found = recorded.reaching(&ChangedFile {
        file: &file,
        old_digest: &old_digest,
        old_lines: &old_lines,
        names,
    });
    let new_digest = digest(change.new.as_bytes());
    recorded.carry_over(&file, (&old_digest, &new_digest), change.diff.ops());
    drop(recorded);
    let Some(lang) = crate::runner::Language::of(change.path) else {
        return;
    };
    for t in crate::recorded::as_items(found, root, detected, lang) {
        if !out
            .recorded
            .iter()
            .any(|i| i.id == t.id && i.path == t.path)
        {
            out.recorded.push(t);
        }
    }
}

/// The section's text: the count and what was followed first, one `path:line id` per
/// test (those using a changed symbol themselves first, then by file and line) within
/// `budget` bytes, then what was not searched.
fn section_text(
    ctx: &CallCtx,
    names: &str,
    reach: &Reach,
    gaps: &[String],
    budget: usize,
) -> String {
    let n = reach.tests.len();
    let via = reach.how();
    let mut text = if n == 0 && gaps.is_empty() {
        format!("no test reaches this change to {names}: the search was complete{via}")
    } else if n == 0 {
        format!("no test found for this change to {names}, but the search was not complete{via}")
    } else {
        format!(
            "{n} {} this change to {names}{via}; `test run` with `affected: true` runs them",
            if n == 1 {
                "test reaches"
            } else {
                "tests reach"
            }
        )
    };
    let ws = ctx.run.workspace();
    let tail = if gaps.is_empty() {
        String::new()
    } else {
        format!("\nnot complete: {}", gaps.join("; "))
    };
    let room = budget.saturating_sub(tail.len());
    for (i, t) in reach.tests.iter().enumerate() {
        let line = format!("\n{}:{} {}", ws.display(&t.path), t.line, t.id);
        if i > 0 && text.len() + line.len() > room {
            text.push_str(&format!(
                "\n… {} more (all run with `test run` and `affected: true`)",
                n - i
            ));
            break;
        }
        text.push_str(&line);
    }
    text.push_str(&tail);
    text
}

#[tools_core::async_trait]
impl WriteObserver for ReachingOnWrite {
    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        self.after_write_in(ctx, touched, &WritePass::detached())
            .await
    }

    async fn after_write_in(
        &self,
        ctx: &CallCtx,
        touched: &[PathBuf],
        pass: &WritePass,
    ) -> Vec<Section> {
        // Naming tests that cannot be run, or from a runner the workspace may not use,
        // would only mislead.
        if touched.is_empty() || !ctx.run.trusted() {
            return Vec::new();
        }
        // The servers are asked about the written text only once diagnostics on write has
        // shown them the text from before; the walk then runs beside its wait.
        pass.wait_servers_synced().await;
        let start = Instant::now();
        // The walk ends at its budget, or soon after the rest of the answer is ready
        // (diagnostics on write has its verdict; a rename checks in the background): what
        // it found by then is named, and where it stopped.
        let stop = CancellationToken::new();
        let bound = async {
            tokio::select! {
                () = tokio::time::sleep_until(start + self.budget) => {}
                () = async {
                    pass.wait_others_done().await;
                    tokio::time::sleep(self.hold).await;
                } => {}
            }
            stop.cancel();
            std::future::pending::<()>().await;
        };
        let work = async {
            let changes = changes_of(ctx, touched, &self.shared).await;
            if changes.functions.is_empty() {
                return (changes, Ok(Reach::default()));
            }
            let bound = if pass.answers_at_once() {
                Bound::NotWaited
            } else {
                Bound::Until(&stop)
            };
            let reach = crate::reach::reaching_all_until(&ctx.run, &changes.functions, bound).await;
            (changes, reach)
        };
        let walk = async {
            tokio::select! {
                done = work => done,
                () = bound => unreachable!("the bound never ends"),
            }
        };
        let (changes, reach) = match tokio::time::timeout(self.budget + GRACE, walk).await {
            Ok(done) => {
                tracing::debug!(
                    elapsed_ms = start.elapsed().as_millis() as u64,
                    followed = done.1.as_ref().map_or(0, |r| r.followed),
                    cut = done.1.as_ref().is_ok_and(|r| r.cut),
                    "tests walk of a write ended"
                );
                done
            }
            Err(_) => {
                // `affected` must not run an earlier write's tests for this one.
                if let Ok(mut last) = self.shared.last_write.lock() {
                    *last = Some(LastWrite {
                        tests: Vec::new(),
                        changed: "functions not found in time".to_string(),
                        complete: false,
                    });
                }
                return vec![Section::new(
                    "tests",
                    format!(
                        "not searched: finding what this write changed took more than {} s ([test] on_write_ms); `test list` with `file`, `line` and `symbol` follows a function to its tests",
                        self.budget.as_secs_f64()
                    ),
                )];
            }
        };
        if changes.functions.is_empty() && changes.gaps.is_empty() {
            return Vec::new();
        }
        let mut reach = match reach {
            Ok(r) => r,
            Err(e) => Reach {
                gaps: vec![format!("the uses could not be asked: {e}")],
                ..Reach::default()
            },
        };
        reach.add_recorded(changes.recorded);
        // The changed lines were matched against the record above; the users of a changed
        // value are matched here.
        crate::recorded::add_recorded(ctx, &self.shared, &mut reach, &[]);
        let mut gaps = changes.gaps;
        gaps.append(&mut reach.gaps);
        let names: Vec<String> = changes
            .functions
            .iter()
            .map(|c| format!("`{}`", c.name))
            .collect();
        let names = if names.is_empty() {
            "the written files".to_string()
        } else {
            names.join(", ")
        };
        let mut text = section_text(ctx, &names, &reach, &gaps, self.shared.config.answer_bytes);
        if let Some(why) = &changes.unrecordable {
            text.push_str(&format!("\nnot recorded: {why}"));
        } else if changes.unrecorded {
            text.push_str(UNRECORDED);
        }
        if let Ok(mut last) = self.shared.last_write.lock() {
            *last = Some(LastWrite {
                tests: reach.tests.clone(),
                changed: if changes.functions.is_empty() {
                    "no function (only lines outside any function)".to_string()
                } else {
                    names
                },
                complete: gaps.is_empty(),
            });
        }
        vec![Section::new("tests", text)]
    }
}
