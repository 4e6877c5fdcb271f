//! The runner's command line for what is asked (the whole suite, a file, some ids), with
//! its machine-readable report sent to a file in the run's state folder (outside the
//! checkout), and the reading of that report afterwards.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::exec::Finished;
use crate::listing::TestItem;
use crate::recorder::Recording;
use crate::report::Report;
use crate::runner::{Resolved, RunnerKind};

/// What to run.
#[derive(Debug, Clone)]
pub enum Targets {
    /// The project's whole suite.
    All,
    /// Every test of one test file (absolute path), with the tests read from it.
    File(PathBuf, Vec<TestItem>),
    /// These ids (as `list` names them).
    Ids(Vec<String>),
}

/// A command ready to start and where its report will be.
#[derive(Debug)]
pub struct Plan {
    /// Program and arguments.
    pub argv: Vec<OsString>,
    /// Environment variables set for the runner.
    pub env: Vec<(&'static str, &'static str)>,
    /// The report file the runner writes (JUnit XML, JSON), if it writes one.
    pub report_file: Option<PathBuf>,
    /// The ids asked for by name (vitest, jest): the other tests of their files are
    /// filtered out by the runner, which reports them skipped; they are not counted.
    pub asked: Option<Vec<String>>,
}

/// The command for `targets` with `resolved`; reports go into `state` (a folder of the
/// run's own, created by the caller). With `recording`, pytest, vitest and nextest also
/// record which functions each test (vitest: each test file) runs (see [`crate::recorder`]).
pub fn plan(
    resolved: &Resolved,
    targets: &Targets,
    state: &Path,
    n: usize,
    recording: Option<&Recording>,
) -> Plan {
    let root = &resolved.detected.root;
    let mut argv: Vec<OsString> = resolved.argv.iter().map(|p| p.clone().into()).collect();
    let mut env = vec![("NO_COLOR", "1")];
    let mut report_file = None;
    let mut asked = None;
    let rel = |p: &Path| tools_core::display_relative(root, p);
    match resolved.detected.kind {
        RunnerKind::Pytest => {
            let xml = state.join(format!("junit-{n}.xml"));
            argv.extend(
                ["-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit1"].map(OsString::from),
            );
            argv.push(format!("--junitxml={}", xml.display()).into());
            if let Some(r) = recording {
                argv.extend(r.args());
            }
            report_file = Some(xml);
            match targets {
                Targets::All => {}
                Targets::File(f, _) => argv.push(rel(f).into()),
                Targets::Ids(ids) => argv.extend(ids.iter().map(OsString::from)),
            }
        }
        RunnerKind::Cargo | RunnerKind::Nextest => {
            env.extend([("CARGO_TERM_COLOR", "never"), ("RUST_BACKTRACE", "0")]);
            argv.push("--no-fail-fast".into());
            if resolved.detected.kind == RunnerKind::Nextest {
                // Its libtest-shaped JSON lines are still behind this switch.
                env.push(("NEXTEST_EXPERIMENTAL_LIBTEST_JSON", "1"));
                argv.extend(["--message-format".into(), "libtest-json".into()]);
                if let Some(r) = recording {
                    argv.extend(r.args());
                }
            }
            let ids: Vec<String> = match targets {
                Targets::All => {
                    // The whole suite of a workspace's root is every member's, as for a
                    // root without a package of its own (cargo's default there).
                    if is_workspace_root(root) {
                        argv.push("--workspace".into());
                    }
                    Vec::new()
                }
                Targets::File(f, items) => {
                    // An integration test file is a test binary of its own.
                    let r = rel(f);
                    if let Some(stem) = r
                        .strip_prefix("tests/")
                        .and_then(|s| s.strip_suffix(".rs"))
                        .filter(|s| !s.contains('/'))
                    {
                        argv.extend(["--test".into(), stem.into()]);
                    }
                    items.iter().map(|t| t.id.clone()).collect()
                }
                Targets::Ids(ids) => ids.clone(),
            };
            if !ids.is_empty() {
                argv.extend(["--".into(), "--exact".into()]);
                argv.extend(ids.into_iter().map(OsString::from));
            }
        }
        RunnerKind::Go => {
            argv.push("-json".into());
            let (dirs, names) = match targets {
                Targets::All => (vec!["./...".to_string()], Vec::new()),
                Targets::File(f, items) => (
                    vec![go_dir(&rel(f))],
                    items.iter().filter_map(|t| name_part(&t.id)).collect(),
                ),
                Targets::Ids(ids) => {
                    let mut dirs: Vec<String> = Vec::new();
                    for id in ids {
                        let d = go_dir(id.split_once("::").map_or(".", |(f, _)| f));
                        if !dirs.contains(&d) {
                            dirs.push(d);
                        }
                    }
                    (dirs, ids.iter().filter_map(|i| name_part(i)).collect())
                }
            };
            argv.extend(dirs.into_iter().map(OsString::from));
            if !names.is_empty() {
                argv.push("-run".into());
                argv.push(format!("^({})$", names.join("|")).into());
            }
        }
        RunnerKind::Vitest | RunnerKind::Jest => {
            let is_vitest = resolved.detected.kind == RunnerKind::Vitest;
            let json = state.join(format!("report-{n}.json"));
            if is_vitest {
                argv.push("--reporter=json".into());
                argv.push("--includeTaskLocation".into());
            } else {
                argv.extend(["--json".into(), "--testLocationInResults".into()]);
            }
            argv.push(format!("--outputFile={}", json.display()).into());
            if let Some(r) = recording {
                argv.extend(r.args());
            }
            report_file = Some(json);
            match targets {
                Targets::All => {}
                Targets::File(f, _) => argv.push(rel(f).into()),
                Targets::Ids(ids) => {
                    let mut files: Vec<String> = Vec::new();
                    let mut names: Vec<String> = Vec::new();
                    for id in ids {
                        let (f, name) = id.split_once("::").unwrap_or((id, ""));
                        if !files.iter().any(|x| x == f) {
                            files.push(f.to_string());
                        }
                        if !name.is_empty() {
                            // The runners match the full name, its parts joined by spaces.
                            names.push(regex_escape(&name.replace(" > ", " ")));
                        }
                    }
                    argv.extend(files.into_iter().map(OsString::from));
                    if !names.is_empty() {
                        argv.push("-t".into());
                        argv.push(format!("^({})$", names.join("|")).into());
                        asked = Some(ids.clone());
                    }
                }
            }
        }
    }
    Plan {
        argv,
        env,
        report_file,
        asked,
    }
}

/// Whether the manifest in `root` declares a workspace.
fn is_workspace_root(root: &Path) -> bool {
    std::fs::read_to_string(root.join("Cargo.toml"))
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|manifest| manifest.contains_key("workspace"))
}

fn name_part(id: &str) -> Option<String> {
    id.rsplit_once("::").map(|(_, n)| n.to_string())
}

/// The package folder `go test` takes for a file or folder id part.
fn go_dir(part: &str) -> String {
    let dir = if part.ends_with(".go") {
        Path::new(part)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        part.to_string()
    };
    let dir = dir.trim_start_matches("./").trim_end_matches('/');
    if dir.is_empty() || dir == "." {
        ".".into()
    } else {
        format!("./{dir}")
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Reads the runner's results. `Err` when the runner wrote no readable report.
pub fn read(
    resolved: &Resolved,
    plan: &Plan,
    done: &Finished,
    workspace: &Path,
) -> Result<Report, String> {
    let root = &resolved.detected.root;
    let report_text = || -> Result<String, String> {
        let Some(file) = &plan.report_file else {
            return Ok(String::new());
        };
        std::fs::read_to_string(file).map_err(|_| "wrote no report".to_string())
    };
    match resolved.detected.kind {
        RunnerKind::Pytest => crate::read::junit::read(&report_text()?, root, workspace),
        RunnerKind::Nextest => Ok(crate::read::libtest::read_json(
            &done.stdout,
            &done.stderr,
            root,
            workspace,
        )),
        RunnerKind::Cargo => Ok(crate::read::libtest::read(
            &done.stdout,
            &done.stderr,
            root,
            workspace,
        )),
        RunnerKind::Go => {
            let gomod = std::fs::read_to_string(root.join("go.mod")).unwrap_or_default();
            let module = gomod
                .lines()
                .find_map(|l| l.trim().strip_prefix("module "))
                .unwrap_or_default()
                .trim()
                .trim_matches('"');
            Ok(crate::read::gojson::read(
                &done.stdout,
                &done.stderr,
                root,
                module,
                workspace,
            ))
        }
        RunnerKind::Vitest | RunnerKind::Jest => {
            crate::read::jsjson::read(&report_text()?, root, workspace, plan.asked.as_deref())
        }
    }
}
