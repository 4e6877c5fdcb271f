//! `diagnostics` with `"*"`: the project's own checker (`cargo check`, pyright or mypy,
//! `tsc --noEmit`, `go vet`, `dart analyze`, or what `[lsp.checkers]` says), run in each
//! project root with a timeout, its output parsed into `path:LINE:COL severity message`
//! where the format allows, capped. C and C++ projects are checked through the compile
//! commands they declare (the `c_checker` module).
//!
//! A checker must not stop at the first failing unit: `cargo check` runs with
//! `--workspace --keep-going`, so every crate whose dependencies build is reported; `go vet
//! ./...` already reports every package that fails on its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::text::{cap_list, cut_lines};
use tools_core::{Run, ToolError};

use crate::checkers::findings::{CHECKER_CAP, Finding, parse_line};
use crate::servers::companion_config::companion_wanted;
use crate::servers::discover::{self, Resolution};
use crate::servers::supervisor::ServerSupervisor;

/// Output bytes of one checker run that are read; past this the checker is stopped.
const CHECKER_OUTPUT_CAP: u64 = 4 * 1024 * 1024;

/// How long after a checker's exit the rest of its stderr may take to be read.
const STDERR_AFTER_EXIT: Duration = Duration::from_secs(2);

async fn run_one(
    run: &Arc<Run>,
    argv: &[String],
    program: &Path,
    root: &Path,
    timeout: Duration,
) -> Result<(Option<i32>, String), ToolError> {
    let mut cmd = tools_core::child_command(run, program);
    cmd.args(&argv[1..]).current_dir(root).env("NO_COLOR", "1");
    let mut child = ChildProcess::spawn(run, cmd, Pipes::StdoutOnly)?;
    let mut out = child.take_stdout();
    let read = async {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.take(CHECKER_OUTPUT_CAP + 1).read_to_end(&mut buf).await;
        }
        if buf.len() as u64 > CHECKER_OUTPUT_CAP {
            // Nobody reads the rest: a checker left running would block on its full pipe
            // until the timeout. What was read is enough to report on.
            buf.truncate(CHECKER_OUTPUT_CAP as usize);
            child.kill();
        }
        let status = child.wait().await.ok();
        // cargo and go vet write their findings to stderr: all of it, not what the reader
        // had drained when the exit was seen.
        child.stderr_read_to_end(STDERR_AFTER_EXIT).await;
        (status, buf)
    };
    match tokio::time::timeout(timeout, read).await {
        Ok((status, buf)) => {
            let mut text = String::from_utf8_lossy(&buf).into_owned();
            let err = child.stderr().text();
            if !err.trim().is_empty() {
                text.push('\n');
                text.push_str(&err);
            }
            child.kill();
            Ok((status.and_then(|s| s.code()), text))
        }
        Err(_) => {
            child.kill();
            Err(ToolError::timed_out(format!(
                "`{}` did not finish within {}s in {}; raise [lsp] checker_timeout_ms or check one file instead",
                argv.join(" "),
                timeout.as_secs(),
                root.display()
            )))
        }
    }
}

/// Runs the project's checker for every language that has a root in the workspace and a
/// resolvable checker. Text and structured.
pub async fn run_checkers(
    sup: &ServerSupervisor,
    run: &Arc<Run>,
) -> Result<(String, Value), ToolError> {
    let scan = discover::scan_workspace(sup.table(), sup.workspace());
    let ws = sup.workspace();
    let mut jobs: Vec<(String, Vec<String>, PathBuf, PathBuf)> = Vec::new();
    let mut missing = Vec::new();
    let search = sup.config().program_search(ws);
    let mut skipped_builds: Vec<String> = Vec::new();
    let c_projects =
        crate::checkers::c_checker::projects_without_configured_checker(sup.table(), &scan);
    if !search.trusted() {
        skipped_builds.extend(c_projects.iter().map(|p| p.build.command_shown()));
    }
    for spec in sup.table() {
        if spec.checkers.is_empty() {
            continue;
        }
        let roots = scan.roots.get(&spec.language).cloned().unwrap_or_default();
        if files_served(spec, sup.table(), &scan) == 0 {
            continue;
        }
        // The outermost roots only: a checker run at a root covers the folders below it.
        let mut outer: Vec<PathBuf> = Vec::new();
        for r in roots {
            if !outer.iter().any(|o| r.starts_with(o)) {
                outer.push(r);
            }
        }
        for root in outer.into_iter().take(4) {
            // A diagnostics-only companion (ruff) checks only where it runs on write: where
            // the project or the user configures it.
            let probe = root.join("pyproject.toml");
            if spec.companion && !companion_wanted(sup.config(), &spec.language, &probe, ws) {
                continue;
            }
            let checkers: Vec<crate::servers::table::Candidate> = spec
                .checkers
                .iter()
                .filter(|c| search.trusted() || !runs_project_code(c))
                .cloned()
                .collect();
            if checkers.is_empty() {
                let first = spec.checkers[0].command.join(" ");
                if !skipped_builds.contains(&first) {
                    skipped_builds.push(first);
                }
                continue;
            }
            match discover::resolve(&checkers, &root, &search) {
                Resolution::Found { candidate, path } => {
                    jobs.push((spec.language.clone(), candidate.command.clone(), path, root))
                }
                Resolution::Missing { looked_for, .. } => missing.push(format!(
                    "{}: no checker found for root {} (looked for {})",
                    spec.language,
                    tools_core::display_relative(ws, &root),
                    looked_for.join(", ")
                )),
            }
        }
    }
    let skipped_line = (!skipped_builds.is_empty()).then(|| {
        tools_core::trust::skipped_line(&format!(
            "the project's build was not run (`{}`)",
            skipped_builds.join("`, `")
        ))
    });
    let c_projects = if search.trusted() {
        c_projects
    } else {
        Vec::new()
    };
    if jobs.is_empty() && c_projects.is_empty() {
        if let Some(line) = skipped_line {
            return Err(ToolError::not_available(format!(
                "{line}; ask for one file's diagnostics instead"
            )));
        }
        let why = if missing.is_empty() {
            "no project root with a checker was found (markers such as Cargo.toml, pyproject.toml, tsconfig.json, go.mod, compile_commands.json, CMakeLists.txt)".to_string()
        } else {
            missing.join("; ")
        };
        return Err(ToolError::not_available(format!(
            "cannot run the project's checker: {why}; configure one under [lsp.checkers.<language>] or ask for one file's diagnostics"
        )));
    }
    let mut text = Vec::new();
    let mut structured = Vec::new();
    for (lang, argv, program, root) in jobs {
        let (code, out) =
            run_one(run, &argv, &program, &root, sup.config().checker_timeout()).await?;
        let rd = tools_core::display_relative(ws, &root);
        let findings: Vec<Finding> = out
            .lines()
            .filter_map(parse_line)
            .filter(|f| !f.path.starts_with("http"))
            .collect();
        let status = code
            .map(|c| format!("exit {c}"))
            .unwrap_or_else(|| "killed".into());
        text.push(format!(
            "{lang}: `{}` in {rd} ({status}): {} finding(s)",
            argv.join(" "),
            findings.len()
        ));
        let total = findings.len();
        let capped = cap_list(findings, CHECKER_CAP);
        for f in &capped.shown {
            let abs = root.join(&f.path);
            let shown = if abs.exists() {
                tools_core::display_relative(ws, &abs.canonicalize().unwrap_or(abs))
            } else {
                f.path.clone()
            };
            let col = f.col.map(|c| format!(":{c}")).unwrap_or_default();
            text.push(format!(
                "{shown}:{}{col} {} {}",
                f.line, f.severity, f.message
            ));
            structured.push(
                json!({"language": lang, "path": shown, "line": f.line, "col": f.col,
                "severity": f.severity, "message": f.message}),
            );
        }
        if let Some(more) = capped.more_line() {
            text.push(more);
        }
        if total == 0 && code != Some(0) {
            text.push(format!(
                "(no locations parsed; the checker's output:)\n{}",
                cut_lines(out.trim(), 40)
            ));
        }
    }
    let budget = sup.config().checker_timeout();
    for project in &c_projects {
        match crate::checkers::c_checker::check(run, project, ws, budget).await {
            Ok(report) => {
                text.extend(report.lines);
                structured.extend(report.findings);
            }
            Err(e) => text.push(format!("c: {e}")),
        }
    }
    text.extend(missing);
    text.extend(skipped_line.clone());
    Ok((
        text.join("\n"),
        json!({"findings": structured, "untrusted": skipped_line}),
    ))
}

/// How many of the workspace's files `spec` checks: its own, or for a diagnostics-only
/// companion (ruff beside the Python server), those of the entries it assists.
fn files_served(
    spec: &crate::servers::table::ServerSpec,
    table: &[crate::servers::table::ServerSpec],
    scan: &discover::WorkspaceScan,
) -> usize {
    if !spec.companion {
        return scan.files.get(&spec.language).copied().unwrap_or(0);
    }
    table
        .iter()
        .filter(|p| !p.companion && p.extensions.iter().any(|e| spec.extensions.contains(e)))
        .map(|p| scan.files.get(&p.language).copied().unwrap_or(0))
        .sum()
}

/// Whether a checker runs the project's own code: a build (`cargo check` runs build scripts
/// and proc macros, `go vet` runs cgo and may fetch a tool chain), mypy (its plugins are the
/// project's modules), `dart analyze` (analyzer plugins), package scripts. An untrusted run
/// skips these; pyright, `tsc --noEmit` and ruff only read the sources.
pub fn runs_project_code(candidate: &crate::servers::table::Candidate) -> bool {
    let program = candidate.program().rsplit('/').next().unwrap_or("");
    !matches!(program, "pyright" | "basedpyright" | "tsc" | "ruff")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_checkers_that_read_sources_run_untrusted() {
        let c = |argv: &[&str]| {
            crate::servers::table::Candidate::command(argv.iter().map(|s| s.to_string()).collect())
        };
        assert!(runs_project_code(&c(&["cargo", "check"])));
        assert!(runs_project_code(&c(&["go", "vet", "./..."])));
        assert!(runs_project_code(&c(&["mypy", "."])));
        assert!(runs_project_code(&c(&["npm", "run", "lint"])));
        assert!(!runs_project_code(&c(&["pyright"])));
        assert!(!runs_project_code(&c(&["/usr/bin/tsc", "--noEmit"])));
    }
}
