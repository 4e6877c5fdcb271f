//! `diagnostics "*"` for C and C++: the build the project declares, checked without building.
//!
//! A root with a `compile_commands.json` (at the root or in `build/`) gets a syntax-only
//! compile of each entry with the entry's own compiler, flags and folder; a root with only a
//! `CMakeLists.txt` is first configured into a private build folder (see
//! [`crate::checkers::cmake_configure`]) to get one. Both run the project's build configuration and
//! compilers, so they run only in a trusted run; the caller adds the one "skipped" line
//! otherwise. Everything is bounded: files checked, time (the checker timeout shared by all
//! files), and output read per compile.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::discovery::ProgramSearch;
use tools_core::text::{cap_list, cut_lines};
use tools_core::{Run, ToolError};

use crate::checkers::capture::run_capturing_stderr;
use crate::checkers::compile_db::{self, SyntaxCheck};
use crate::checkers::findings::{CHECKER_CAP, Finding, parse_line};
use crate::servers::discover::WorkspaceScan;

/// Most source files compiled per project.
pub const MAX_CHECKED_FILES: usize = 200;

/// Most C projects checked in one workspace.
const MAX_PROJECTS: usize = 4;

/// How a C or C++ project declares its build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclaredBuild {
    /// A compilation database at this path.
    CompileDb(PathBuf),
    /// A `CMakeLists.txt` and no compilation database.
    CMake,
}

impl DeclaredBuild {
    /// The command this build runs, as the untrusted "skipped" line names it.
    pub fn command_shown(&self) -> String {
        match self {
            DeclaredBuild::CompileDb(_) => "cc -fsyntax-only per compile_commands.json entry",
            DeclaredBuild::CMake => "cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
        }
        .to_string()
    }
}

/// One C or C++ project root and how it declares its build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CProject {
    /// The root folder.
    pub root: PathBuf,
    /// Its declared build.
    pub build: DeclaredBuild,
}

/// The C and C++ projects of a scanned workspace: the outermost `c` roots that hold a
/// compilation database or a `CMakeLists.txt` (roots with only a Makefile or
/// `compile_flags.txt` declare no compile commands and are left out). Empty when the
/// workspace has no C or C++ file.
pub fn projects(scan: &WorkspaceScan) -> Vec<CProject> {
    if scan.files.get("c").copied().unwrap_or(0) == 0 {
        return Vec::new();
    }
    let mut found: Vec<CProject> = Vec::new();
    for root in scan.roots.get("c").into_iter().flatten() {
        if found.iter().any(|p| root.starts_with(&p.root)) {
            continue;
        }
        let db = ["compile_commands.json", "build/compile_commands.json"]
            .iter()
            .map(|rel| root.join(rel))
            .find(|p| p.is_file());
        let build = match db {
            Some(db) => DeclaredBuild::CompileDb(db),
            None if root.join("CMakeLists.txt").is_file() => DeclaredBuild::CMake,
            None => continue,
        };
        found.push(CProject {
            root: root.clone(),
            build,
        });
        if found.len() == MAX_PROJECTS {
            break;
        }
    }
    found
}

/// [`projects`], unless `[lsp.checkers.c]` names a checker of its own (which then runs as
/// every configured checker does).
pub fn projects_without_configured_checker(
    table: &[crate::servers::table::ServerSpec],
    scan: &WorkspaceScan,
) -> Vec<CProject> {
    match table.iter().find(|s| s.language == "c") {
        Some(spec) if spec.checkers.is_empty() => projects(scan),
        _ => Vec::new(),
    }
}

/// What checking one project gave: text lines (a header line, then findings) and the same
/// findings structured.
#[derive(Debug, Default)]
pub struct ProjectReport {
    /// Lines for the answer.
    pub lines: Vec<String>,
    /// One JSON object per finding shown.
    pub findings: Vec<Value>,
}

/// Checks one project within `budget`. Only called in a trusted run.
pub async fn check(
    run: &Arc<Run>,
    project: &CProject,
    workspace: &Path,
    budget: Duration,
) -> Result<ProjectReport, ToolError> {
    let deadline = Instant::now() + budget;
    let shown_root = tools_core::display_relative(workspace, &project.root);
    match &project.build {
        DeclaredBuild::CompileDb(db_path) => {
            let label = format!(
                "c: syntax-only compile of the entries of {} in {shown_root}",
                tools_core::display_relative(&project.root, db_path)
            );
            let db = compile_db::read(db_path).map_err(|why| {
                ToolError::not_available(format!("cannot check the C project: {why}"))
            })?;
            syntax_pass(run, &db, workspace, deadline, label).await
        }
        DeclaredBuild::CMake => {
            let configured = crate::checkers::cmake_configure::configure(
                run,
                &project.root,
                workspace,
                deadline,
            )
            .await?;
            let label = format!(
                "c: `cmake` configure, then a syntax-only compile of each entry, in {shown_root}"
            );
            let Some(db) = configured.db else {
                let mut report = ProjectReport::default();
                report.lines.push(format!(
                    "c: `cmake` configure in {shown_root} failed: {} finding(s)",
                    configured.findings.len()
                ));
                push_findings(&mut report, configured.findings, workspace, &project.root);
                report.lines.extend(configured.output_tail);
                return Ok(report);
            };
            let mut report = syntax_pass(run, &db, workspace, deadline, label).await?;
            push_findings(&mut report, configured.findings, workspace, &project.root);
            drop(configured.build_dir);
            Ok(report)
        }
    }
}

/// Compiles every check of `db` with `-fsyntax-only` until the deadline and reports.
async fn syntax_pass(
    run: &Arc<Run>,
    db: &compile_db::CompileDb,
    workspace: &Path,
    deadline: Instant,
    label: String,
) -> Result<ProjectReport, ToolError> {
    let search = ProgramSearch::for_run(run);
    let mut findings: Vec<(PathBuf, Finding)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut missing_compilers: BTreeSet<String> = BTreeSet::new();
    let mut missing_files = 0usize;
    let mut compiled = 0usize;
    let mut out_of_time = 0usize;
    let mut failed_unlocated: Vec<String> = Vec::new();
    let checks: Vec<&SyntaxCheck> = db.checks.iter().take(MAX_CHECKED_FILES).collect();
    for check in &checks {
        if !check.file.is_file() || !check.directory.is_dir() {
            missing_files += 1;
            continue;
        }
        let Some(remaining) = deadline.checked_duration_since(Instant::now()) else {
            out_of_time += 1;
            continue;
        };
        let compiler = match search.find(&check.compiler, &check.directory) {
            Ok(found) => found.path,
            Err(_) => {
                missing_compilers.insert(check.compiler.clone());
                continue;
            }
        };
        let mut cmd = tools_core::child_command(run, &compiler);
        cmd.args(&check.args).current_dir(&check.directory);
        match run_capturing_stderr(run, cmd, remaining).await? {
            Some((code, text)) => {
                compiled += 1;
                let before = findings.len();
                for finding in text.lines().filter_map(compiler_finding) {
                    findings.push((check.directory.clone(), finding));
                }
                let located_error = findings[before..]
                    .iter()
                    .any(|(_, f)| f.severity == "error");
                // A failure the compiler does not locate (an option it does not know, a
                // missing response file) must not read as a clean file.
                if code != Some(0) && !located_error {
                    failed_unlocated.push(format!(
                        "{}: `{}` exited {} without a located error: {}",
                        tools_core::display_relative(workspace, &check.file),
                        check.compiler,
                        code.map(|c| c.to_string())
                            .unwrap_or_else(|| "on a signal".into()),
                        cut_lines(text.trim(), 3).replace('\n', " | ")
                    ));
                }
            }
            None => out_of_time += 1,
        }
    }
    // A header's error repeats for every file that includes it: once is enough.
    let mut seen = BTreeSet::new();
    let mut unique = Vec::new();
    for (dir, f) in findings {
        let abs = dir.join(&f.path);
        let key = (
            abs.canonicalize().unwrap_or(abs),
            f.line,
            f.col,
            f.message.clone(),
        );
        if seen.insert(key) {
            unique.push((dir, f));
        }
    }
    let errors = unique.iter().filter(|(_, f)| f.severity == "error").count();
    let mut report = ProjectReport::default();
    report.lines.push(format!(
        "{label}: {compiled} file(s) compiled, {} finding(s), {errors} error(s)",
        unique.len()
    ));
    if unique.is_empty() && compiled > 0 && failed_unlocated.is_empty() {
        report
            .lines
            .push("no errors or warnings: every compiled file is clean".into());
    }
    let capped = cap_list(unique, CHECKER_CAP);
    for (dir, f) in &capped.shown {
        push_finding(&mut report, f, workspace, dir);
    }
    report.lines.extend(capped.more_line());
    let failures = cap_list(failed_unlocated, 10);
    report.lines.extend(failures.shown.iter().cloned());
    report.lines.extend(failures.more_line());
    if db.checks.len() > MAX_CHECKED_FILES {
        notes.push(format!(
            "{} more file(s) not checked (at most {MAX_CHECKED_FILES} per project)",
            db.checks.len() - MAX_CHECKED_FILES
        ));
    }
    if out_of_time > 0 {
        notes.push(format!(
            "{out_of_time} file(s) not checked: the time budget ([lsp] checker_timeout_ms) ran out"
        ));
    }
    if missing_files > 0 {
        notes.push(format!(
            "{missing_files} {} a file or folder that does not exist (a database from another checkout?)",
            if missing_files == 1 { "entry names" } else { "entries name" }
        ));
    }
    if !missing_compilers.is_empty() {
        notes.push(format!(
            "compiler not found, its entries not checked: {}",
            missing_compilers.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if !db.skipped.is_empty() {
        notes.push(format!(
            "{} malformed {} skipped ({})",
            db.skipped.len(),
            if db.skipped.len() == 1 {
                "entry"
            } else {
                "entries"
            },
            db.skipped
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    report.lines.extend(notes);
    Ok(report)
}

/// A compiler diagnostic line (`path:L:C: error: …`, `warning`, `fatal error`), not the
/// context lines around it (`In file included from …`, notes, caret lines).
fn compiler_finding(line: &str) -> Option<Finding> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("In file included from") || trimmed.starts_with("from ") {
        return None;
    }
    let finding = parse_line(line)?;
    let explicit = ["error:", "warning:", "fatal error:"]
        .iter()
        .any(|sev| line.contains(&format!(" {sev}")));
    explicit.then_some(finding)
}

/// Adds findings whose paths are relative to `base` to `report`.
pub(crate) fn push_findings(
    report: &mut ProjectReport,
    findings: Vec<Finding>,
    workspace: &Path,
    base: &Path,
) {
    for f in &findings {
        push_finding(report, f, workspace, base);
    }
}

fn push_finding(report: &mut ProjectReport, f: &Finding, workspace: &Path, base: &Path) {
    let abs = base.join(&f.path);
    let shown = if abs.exists() {
        tools_core::display_relative(workspace, &abs.canonicalize().unwrap_or(abs))
    } else {
        f.path.clone()
    };
    let col = f.col.map(|c| format!(":{c}")).unwrap_or_default();
    report.lines.push(format!(
        "{shown}:{}{col} {} {}",
        f.line, f.severity, f.message
    ));
    report
        .findings
        .push(json!({"language": "c", "path": shown, "line": f.line,
        "col": f.col, "severity": f.severity, "message": f.message}));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_lines_become_findings_and_context_lines_do_not() {
        let f = compiler_finding(
            "src/list.c:12:5: error: 'nope' undeclared (first use in this function)",
        )
        .unwrap();
        assert_eq!(
            (f.path.as_str(), f.line, f.col, f.severity.as_str()),
            ("src/list.c", 12, Some(5), "error")
        );
        let f = compiler_finding(
            "include/list.h:3:10: fatal error: missing.h: No such file or directory",
        )
        .unwrap();
        assert_eq!(f.severity, "error");
        assert!(compiler_finding("In file included from src/list.c:1:").is_none());
        assert!(compiler_finding("                 from src/a.c:2:").is_none());
        assert!(compiler_finding("src/list.c: In function 'list_push':").is_none());
        assert!(compiler_finding("src/list.c:3:7: note: declared here").is_none());
        assert!(compiler_finding("   12 |     nope = 1;").is_none());
    }

    #[test]
    fn projects_are_the_outermost_roots_that_declare_compile_commands() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let mut scan = WorkspaceScan::default();
        scan.files.insert("c".into(), 3);
        for (sub, marker) in [
            ("db", "build/compile_commands.json"),
            ("db/inner", "CMakeLists.txt"),
            ("cm", "CMakeLists.txt"),
            ("mk", "Makefile"),
        ] {
            let p = ws.join(sub).join(marker);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        scan.roots.insert(
            "c".into(),
            ["cm", "db", "db/inner", "mk"]
                .iter()
                .map(|s| ws.join(s))
                .collect(),
        );
        assert_eq!(
            projects(&scan),
            vec![
                CProject {
                    root: ws.join("cm"),
                    build: DeclaredBuild::CMake
                },
                CProject {
                    root: ws.join("db"),
                    build: DeclaredBuild::CompileDb(ws.join("db/build/compile_commands.json"))
                },
            ]
        );
        scan.files.insert("c".into(), 0);
        assert!(projects(&scan).is_empty());
    }
}
