//! cargo test's libtest output: `test NAME ... ok|FAILED|ignored` per test on stdout, then a
//! `---- NAME stdout ----` section per failure with the panic (`panicked at FILE:LINE:COL:`
//! and the message on the following lines). A build that fails runs no test: each
//! `error…` with its `--> FILE:LINE:COL` on stderr is counted as a failure.

use std::path::Path;

use crate::report::Report;

/// Reads cargo test's output; `root` is the folder cargo ran in.
pub fn read(stdout: &str, stderr: &str, root: &Path, workspace: &Path) -> Report {
    let mut report = Report::default();
    let mut failed: Vec<String> = Vec::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, outcome)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        match outcome.split(',').next().unwrap_or_default().trim() {
            "ok" => report.passed += 1,
            "FAILED" => failed.push(name.to_string()),
            o if o.starts_with("ignored") => report.skipped += 1,
            _ => {}
        }
    }
    for name in failed {
        let section = section_of(stdout, &name);
        let (location, message) = panic_of(&section)
            .map(|(f, l, m)| (super::location(workspace, root, f, l), m))
            .unwrap_or_else(|| (String::new(), "failed".into()));
        report.fail(location, name, message);
    }
    if report.is_empty() {
        add_build_errors(&mut report, stderr, root, workspace);
    }
    report
}

/// Reads nextest's libtest-shaped JSON lines (`{"type":"test","event":"failed","name":
/// "crate::binary$path::to::test","stdout":…}`); ids are the libtest names (after the `$`).
pub fn read_json(stdout: &str, stderr: &str, root: &Path, workspace: &Path) -> Report {
    let mut report = Report::default();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["type"] != "test" {
            continue;
        }
        let name = v["name"].as_str().unwrap_or_default();
        let name = name.split_once('$').map_or(name, |(_, n)| n).to_string();
        match v["event"].as_str().unwrap_or_default() {
            "ok" => report.passed += 1,
            "ignored" => report.skipped += 1,
            "failed" | "timeout" => {
                let out = v["stdout"].as_str().unwrap_or_default();
                let (location, message) = panic_of(out)
                    .map(|(f, l, m)| (super::location(workspace, root, f, l), m))
                    .unwrap_or_else(|| (String::new(), "failed".into()));
                report.fail(location, name, message);
            }
            _ => {}
        }
    }
    if report.is_empty() {
        add_build_errors(&mut report, stderr, root, workspace);
    }
    report
}

fn add_build_errors(report: &mut Report, stderr: &str, root: &Path, workspace: &Path) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for (message, place) in build_errors(stderr) {
        let location = place
            .map(|(f, l)| super::location(workspace, root, f, l))
            .unwrap_or_default();
        // The same error comes once per target that compiles the file (lib, lib test).
        if seen.contains(&(location.clone(), message.clone())) {
            continue;
        }
        seen.push((location.clone(), message.clone()));
        report.fail(location, "(build)".into(), message);
    }
}

/// The lines of `---- NAME stdout ----` up to the next section or the summary.
fn section_of(stdout: &str, name: &str) -> String {
    let head = format!("---- {name} stdout ----");
    let Some(start) = stdout.find(&head) else {
        return String::new();
    };
    stdout[start + head.len()..]
        .lines()
        .take_while(|l| !l.starts_with("---- ") && *l != "failures:")
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(file, line, message)` of the panic in a failure's section.
fn panic_of(section: &str) -> Option<(&str, usize, String)> {
    let mut lines = section.lines();
    let at = lines.find(|l| l.contains(" panicked at "))?;
    let place = at.split(" panicked at ").nth(1)?;
    let (file, line) = super::find_location(place, &[".rs"])?;
    // Since Rust 1.73 the message follows on the next lines, up to the `note:`.
    let message: Vec<&str> = lines
        .take_while(|l| !l.starts_with("note: ") && !l.starts_with("stack backtrace:"))
        .collect();
    Some((file, line, message.join("\n")))
}

fn build_errors(stderr: &str) -> Vec<(String, Option<(&str, usize)>)> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        // nextest's "no tests to run" (its filters matched nothing) is no build error: the
        // run reported no test, which the caller says as such.
        if !(l.starts_with("error[") || l.starts_with("error: "))
            || l.starts_with("error: could not compile")
            || l.starts_with("error: no tests to run")
        {
            continue;
        }
        let place = lines
            .iter()
            .skip(i + 1)
            .take(3)
            .find_map(|n| n.trim_start().strip_prefix("--> "))
            .and_then(|p| super::find_location(p, &[".rs"]));
        out.push((l.to_string(), place));
    }
    out
}
