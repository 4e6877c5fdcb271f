//! `run`: choose the project and runner from what was asked, run it (see [`crate::exec`]),
//! read its report, answer counts first and failures after, and keep the answer so the same
//! call with an `offset` pages it without running the tests again.

use std::path::Path;
use std::time::Duration;

use tools_core::discovery::ProgramSearch;
use tools_core::{CallCtx, ToolError, ToolOutput};

use crate::TestShared;
use crate::answer::{failure_line, headline, paged};
use crate::args::TestArgs;
use crate::command::{Targets, plan, read};
use crate::exec::{Limits, Stopped, run_to_end};
use crate::listing::TestItem;
use crate::recorder::{Output, Recording};
use crate::report::Report;
use crate::runner::{Detected, LANGUAGES, Language, RunnerKind, detect, resolve};

/// The answer of the last run, kept for paging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LastRun {
    /// What was asked: file and ids.
    pub key: (Option<String>, Option<Vec<String>>),
    /// The first line.
    pub head: String,
    /// One line per failure.
    pub lines: Vec<String>,
}

/// The project an id list belongs to: the file part of the first id with one (pytest, go,
/// vitest/jest ids), else `file`'s, else the workspace root's (cargo's libtest names).
fn project_for_ids(
    ids: &[String],
    file: Option<&Path>,
    root: &Path,
) -> Result<Detected, ToolError> {
    let from_id = ids.iter().find_map(|id| {
        let (f, _) = id.split_once("::")?;
        let p = root.join(f);
        Language::of(&p).filter(|l| *l != Language::Rust).map(|_| p)
    });
    match from_id.as_deref().or(file) {
        Some(p) => crate::runner::project_of(p, root).map(|(_, d)| d),
        None => detect(root, root, Language::Rust).map_err(|why| {
            ToolError::invalid(
                "ids",
                format!("these ids name no test file, and there is no Cargo project: {why}; pass `file` with the ids"),
            )
        }),
    }
}

/// The project of the whole workspace: the first language whose runner is configured at
/// the workspace root.
fn project_at_root(root: &Path) -> Result<Detected, ToolError> {
    LANGUAGES
        .iter()
        .find_map(|l| detect(root, root, *l).ok().filter(|d| d.root == root))
        .ok_or_else(|| {
            ToolError::not_available(
                "no test runner is configured at the workspace root; pass `file` or `ids` (see `test status`)",
            )
        })
}

/// The tests the last write named; an error says why there are none to run.
fn affected_tests(shared: &TestShared) -> Result<Vec<TestItem>, ToolError> {
    let last = shared.last_write.lock().ok().and_then(|l| l.clone());
    let Some(last) = last else {
        return Err(ToolError::invalid(
            "affected",
            "no write of this run has named the tests it reaches yet (a write of a function in a file whose language has a test runner names them)",
        ));
    };
    if last.tests.is_empty() {
        let why = if last.complete {
            "no test reaches it (the search was complete)"
        } else {
            "the search named none, and was not complete (see that write's answer)"
        };
        return Err(ToolError::invalid(
            "affected",
            format!(
                "nothing to run: the last write changed {}; {why}",
                last.changed
            ),
        ));
    }
    Ok(last.tests)
}

/// `tests` (each with its file) by the project whose runner runs it, in order of first
/// appearance: in a Cargo workspace each package runs its own.
fn by_project(tests: Vec<TestItem>, root: &Path) -> Result<Vec<(Detected, Targets)>, ToolError> {
    let mut groups: Vec<(Detected, Vec<String>)> = Vec::new();
    for t in tests {
        let (_, detected) = crate::runner::project_of(&t.path, root)?;
        match groups.iter_mut().find(|(d, _)| d.root == detected.root) {
            Some((_, ids)) => {
                if !ids.contains(&t.id) {
                    ids.push(t.id);
                }
            }
            None => groups.push((detected, vec![t.id])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(d, ids)| (d, Targets::Ids(ids)))
        .collect())
}

/// What one runner reported for one project.
struct Ran {
    report: Report,
    elapsed: Duration,
    /// The output passed its cap and the run was stopped.
    cut: bool,
    runner: &'static str,
    /// Why the run recorded nothing though recording is on.
    unrecorded: Option<String>,
}

/// `run`.
pub async fn run(
    ctx: &CallCtx,
    shared: &TestShared,
    args: &TestArgs,
) -> Result<ToolOutput, ToolError> {
    let ws = ctx.run.workspace().clone();
    let root = ws.root().to_path_buf();
    let key = (
        args.file.clone().or_else(|| {
            if args.affected {
                return Some("affected by the last write".to_string());
            }
            args.changed_since
                .as_ref()
                .map(|r| format!("changed since {r}"))
        }),
        args.ids.clone(),
    );
    let offset = args.offset.unwrap_or(0);
    let budget = shared.config.answer_bytes;
    if offset > 0 {
        let last = shared.last.lock().ok().and_then(|l| l.clone());
        if let Some(last) = last.filter(|l| l.key == key) {
            return Ok(ToolOutput::text(paged(
                &last.head,
                &last.lines,
                offset,
                budget,
                "failures",
            )));
        }
    }
    let file = args.file.as_deref().map(|f| ws.resolve(f)).transpose()?;
    let ids = args.ids.clone().filter(|i| !i.is_empty());
    let mut chosen: Option<Vec<TestItem>> = None;
    if args.affected {
        if ids.is_some() || file.is_some() || args.changed_since.is_some() {
            return Err(ToolError::invalid(
                "affected",
                "`affected` runs the tests the last write named: pass it without `ids`, `file` or `changed_since`",
            ));
        }
        chosen = Some(affected_tests(shared)?);
    }
    if let (None, None, Some(rev)) = (&ids, &chosen, &args.changed_since) {
        let changed = crate::changes::changed_since(&ctx.run, rev).await?;
        let mut reach = crate::reach::reaching_all(&ctx.run, &changed).await?;
        crate::recorded::add_recorded(ctx, shared, &mut reach, &changed);
        if reach.tests.is_empty() {
            let why = if reach.gaps.is_empty() {
                "the search was complete".to_string()
            } else {
                format!("not complete: {}", reach.gaps.join("; "))
            };
            return Ok(ToolOutput::text(format!(
                "no test reaches the change since {rev} ({} function(s) changed); {why}",
                changed.len()
            )));
        }
        chosen = Some(reach.tests);
    }
    let (detected, targets) = match (&ids, &file) {
        _ if chosen.is_some() => {
            let groups = by_project(chosen.take().unwrap_or_default(), &root)?;
            return answer_runs(ctx, shared, args, groups, key, true).await;
        }
        (Some(ids), file) => (
            project_for_ids(ids, file.as_deref(), &root)?,
            Targets::Ids(ids.clone()),
        ),
        (None, Some(f)) => {
            if !f.is_file() {
                return Err(ToolError::invalid(
                    "file",
                    format!("`{}` is not a file in the workspace", ws.display(f)),
                ));
            }
            let (_, detected) = crate::runner::project_of(f, &root)?;
            let (items, _) = crate::list::tests_of_file(f, &root)?;
            let whole_file = crate::listing::is_test_file(f)
                && matches!(
                    detected.kind,
                    crate::runner::RunnerKind::Pytest
                        | crate::runner::RunnerKind::Vitest
                        | crate::runner::RunnerKind::Jest
                );
            if whole_file {
                (detected, Targets::File(f.clone(), items))
            } else if items.is_empty() {
                return Err(ToolError::invalid(
                    "file",
                    format!(
                        "no test found for `{}` (neither in it nor in a test file naming its module); pass `ids`",
                        ws.display(f)
                    ),
                ));
            } else if crate::listing::is_test_file(f) {
                (detected, Targets::File(f.clone(), items))
            } else {
                (
                    detected,
                    Targets::Ids(items.into_iter().map(|t| t.id).collect()),
                )
            }
        }
        (None, None) => (project_at_root(&root)?, Targets::All),
    };
    let asked_ids = ids.is_some();
    answer_runs(ctx, shared, args, vec![(detected, targets)], key, asked_ids).await
}

/// Runs each group in turn and answers their counts together, then one line per failure;
/// `by_id`: the tests were asked by id (an error when nothing ran names them).
async fn answer_runs(
    ctx: &CallCtx,
    shared: &TestShared,
    args: &TestArgs,
    groups: Vec<(Detected, Targets)>,
    key: (Option<String>, Option<Vec<String>>),
    by_id: bool,
) -> Result<ToolOutput, ToolError> {
    let mut all = Report::default();
    let mut elapsed = Duration::ZERO;
    let mut cut = false;
    let mut runners: Vec<&str> = Vec::new();
    let mut unrecorded: Vec<String> = Vec::new();
    for (detected, targets) in groups {
        let ran = run_one(ctx, shared, args, detected, &targets, by_id).await?;
        all.passed += ran.report.passed;
        all.failed += ran.report.failed;
        all.skipped += ran.report.skipped;
        all.failures.extend(ran.report.failures);
        elapsed += ran.elapsed;
        cut |= ran.cut;
        if !runners.contains(&ran.runner) {
            runners.push(ran.runner);
        }
        if let Some(why) = ran.unrecorded
            && !unrecorded.contains(&why)
        {
            unrecorded.push(why);
        }
    }
    let cap = shared.config.max_output_bytes;
    let mut head = headline(&all, elapsed, &runners.join(", "));
    if cut {
        head.push_str(&format!(
            " (the output passed the {cap}-byte cap and the run was stopped: the counts are partial)"
        ));
    }
    let lines: Vec<String> = all.failures.iter().map(failure_line).collect();
    let mut text = paged(
        &head,
        &lines,
        args.offset.unwrap_or(0),
        shared.config.answer_bytes,
        "failures",
    );
    for why in unrecorded {
        text.push_str(&format!(
            "\nnot recorded (later writes name only the tests a static walk finds): {why}"
        ));
    }
    if let Ok(mut last) = shared.last.lock() {
        *last = Some(LastRun { key, head, lines });
    }
    Ok(ToolOutput::text(text))
}

/// Runs `targets` of the project `detected` with its runner and reads its report
/// (`by_id`: see [`answer_runs`]).
async fn run_one(
    ctx: &CallCtx,
    shared: &TestShared,
    args: &TestArgs,
    detected: Detected,
    targets: &Targets,
    by_id: bool,
) -> Result<Ran, ToolError> {
    let ids = match targets {
        Targets::Ids(ids) if by_id => Some(ids.as_slice()),
        _ => None,
    };
    let root = ctx.run.root().to_path_buf();
    let search = ProgramSearch::for_run(&ctx.run);
    let runner_name = detected.kind.name();
    let resolved = resolve(detected, &search, shared.config.cargo)
        .map_err(|why| ToolError::not_available(format!("cannot run {runner_name}: {why}")))?;
    let runner_name = resolved.detected.kind.name();
    let state = ctx.run.state_dir()?.join("test");
    std::fs::create_dir_all(&state)
        .map_err(|e| ToolError::internal(format!("cannot create the run's test folder: {e}")))?;
    let n = shared
        .runs
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    // `prepare` makes none for a runner without a recorder.
    let (recording, mut unrecorded) = if shared.config.record {
        match Recording::prepare(&state, n, &resolved, shared.config.cargo, &search) {
            Ok(r) => (r, None),
            Err(why) => (None, Some(why)),
        }
    } else {
        (None, None)
    };
    let plan = plan(&resolved, targets, &state, n, recording.as_ref());
    let project_root = resolved.detected.root.clone();
    let mut cmd = tools_core::child_command(&ctx.run, &plan.argv[0]);
    cmd.args(&plan.argv[1..])
        .current_dir(&project_root)
        .env("PATH", search.child_path(&project_root));
    for (k, v) in &plan.env {
        cmd.env(k, v);
    }
    if let Some(r) = &recording {
        let std_cmd = cmd.as_std();
        let inherited = |name: &str| {
            std_cmd
                .get_envs()
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| v.map(std::ffi::OsStr::to_os_string))
        };
        let env = r.env(inherited, &project_root);
        cmd.envs(env);
    }
    if let Some(py) = search.project_pythons(&project_root).first()
        && let Some(venv) = py.path.parent().and_then(Path::parent)
    {
        cmd.env("VIRTUAL_ENV", venv);
    }
    let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(shared.config.timeout_ms));
    let limits = Limits {
        timeout,
        output_cap: shared.config.max_output_bytes,
        progress_every: Duration::from_millis(shared.config.progress_ms.max(100)),
    };
    ctx.progress
        .report(0.0, None, Some(format!("starting {runner_name}")));
    let finished = match run_to_end(ctx, cmd, runner_name, limits).await? {
        Ok(f) => f,
        Err(Stopped::TimedOut(t)) => {
            return Err(ToolError::timed_out(format!(
                "{runner_name} did not finish within {} s; its whole process tree was killed (raise `timeout_ms`, or run fewer tests)",
                t.as_secs_f64()
            )));
        }
        Err(Stopped::Cancelled) => {
            return Err(ToolError::rejected(format!(
                "the call was cancelled; {runner_name} and its whole process tree were killed"
            )));
        }
    };
    let report = read(&resolved, &plan, &finished, &root);
    if let Some(r) = recording {
        ctx.progress.report(
            1.0,
            None,
            Some(format!("reading what {runner_name}'s tests ran")),
        );
        let (detected, workspace) = (resolved.detected.clone(), root.clone());
        let outputs = tokio::task::spawn_blocking(move || r.take(&detected, &workspace))
            .await
            .unwrap_or_default();
        let failed: Vec<String> = match &report {
            Ok(r) => r.failures.iter().map(|f| f.id.clone()).collect(),
            Err(_) => Vec::new(),
        };
        // A passing test always runs a function of the project (itself, at least); a
        // failure may be a collection or build error that ran none.
        let ran_tests = report.as_ref().is_ok_and(|r| r.passed > 0);
        if outputs.is_empty() && ran_tests {
            unrecorded = Some(wrote_nothing(resolved.detected.kind));
        }
        keep_recorded(shared, &state, &root, &project_root, outputs, &failed);
    }
    {
        let project = crate::recorded::project_key(&root, &project_root);
        let mut unrecordable = tools_core::lock_unpoisoned(&shared.unrecordable);
        match &unrecorded {
            Some(why) => unrecordable.insert(project, why.clone()),
            None => unrecordable.remove(&project),
        };
    }
    if let Some(file) = &plan.report_file {
        // Read once; the run's folder should not grow with every run.
        let _ = std::fs::remove_file(file);
    }
    let cap = shared.config.max_output_bytes;
    let report = match report {
        Ok(r) if !r.is_empty() => r,
        _ if finished.cut => {
            return Err(ToolError::not_available(format!(
                "{runner_name}'s output passed the {cap}-byte cap ([test] max_output_bytes) before any result, and the run was stopped; run fewer tests"
            )));
        }
        other => {
            return Err(nothing_reported(
                runner_name,
                &finished,
                ids,
                other.err(),
                &project_root,
            ));
        }
    };
    Ok(Ran {
        report,
        elapsed: finished.elapsed,
        cut: finished.cut,
        runner: runner_name,
        unrecorded,
    })
}

/// Why a recorded run of `kind` that ran tests recorded nothing, as far as it can be told.
fn wrote_nothing(kind: RunnerKind) -> String {
    let runner = kind.name();
    match kind {
        RunnerKind::Vitest => format!(
            "{runner} ran the tests but its recorder wrote nothing (vitest 4 loads modules through Vite's module runner, which the recorder does not read; vitest 1 to 3 record)"
        ),
        RunnerKind::Nextest => format!(
            "{runner} ran the tests but they wrote no coverage profile (a `target.<triple>.rustflags` of the project's cargo configuration replaces the `build.rustflags` that instruments the build)"
        ),
        _ => format!("{runner} ran the tests but its recorder wrote nothing"),
    }
}

/// Adds what the run's tests were recorded running to the run's record (memory and
/// `recorded.json` in `state`; `failed`: the ids of the run's failures); a record that
/// cannot be saved stays in memory.
fn keep_recorded(
    shared: &TestShared,
    state: &Path,
    workspace: &Path,
    project_root: &Path,
    outputs: Vec<Output>,
    failed: &[String],
) {
    if outputs.is_empty() {
        return;
    }
    let project = crate::recorded::project_key(workspace, project_root);
    let mut recorded = tools_core::lock_unpoisoned(&shared.recorded);
    // A failure's id may name one parameter of the test recorded (`test_x[1]`).
    let failed = |id: &str| {
        failed
            .iter()
            .any(|f| f == id || f.strip_prefix(id).is_some_and(|rest| rest.starts_with('[')))
    };
    recorded.merge(&project, outputs, &failed);
    let _ = recorded.save(&state.join("recorded.json"));
}

/// The error when the runner reported no test at all: an unknown id, a missing runner in
/// the project's environment, or a runner that failed before running anything.
fn nothing_reported(
    runner: &str,
    finished: &crate::exec::Finished,
    ids: Option<&[String]>,
    read_error: Option<String>,
    project_root: &Path,
) -> ToolError {
    let said = format!("{}\n{}", finished.stderr, finished.stdout);
    if said.contains("No module named pytest") {
        return ToolError::not_available(
            "pytest is not installed in the project's environment (No module named pytest); install it there",
        );
    }
    // The runner's own error lines when it printed some, else its last words; paths in
    // the project shown relative to it.
    let said = said.replace(&format!("{}/", project_root.display()), "");
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("ERROR") || l.starts_with("error"))
        .collect();
    let tail = if errors.is_empty() {
        lines[lines.len().saturating_sub(3)..].join(" / ")
    } else {
        errors.join(" / ")
    };
    if let Some(ids) = ids {
        return ToolError::invalid(
            "ids",
            format!(
                "{runner} ran no test for {}: no such test (`list` with the file shows its ids){}",
                ids.iter()
                    .map(|i| format!("`{i}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                // A runner that only ran nothing has nothing to add (its summary and time).
                if errors.is_empty() {
                    String::new()
                } else {
                    format!("; it said: {}", crate::report::one_line(&tail))
                }
            ),
        );
    }
    let code = finished
        .code
        .map_or_else(|| "a signal".to_string(), |c| format!("code {c}"));
    ToolError::not_available(format!(
        "{runner} exited with {code} and reported no test{}: {}",
        read_error.map(|e| format!(" ({e})")).unwrap_or_default(),
        crate::report::one_line(&tail)
    ))
}
