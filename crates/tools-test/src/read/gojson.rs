//! `go test -json`: one JSON event per line (`run`, `output`, `pass`, `fail`, `skip`) per
//! package and test. Top-level tests are counted (subtests fold into their parent); a failed
//! test's message is the first `file.go:LINE: message` its output (or its subtests') holds,
//! or a panic. A package that fails with no failed test did not build: its compiler errors
//! (on stderr) are counted as one failure each.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::report::Report;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: String,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    output: Option<String>,
}

/// Reads `go test -json` output. `module_root` is the folder holding `go.mod` (the runner's
/// folder), `module` its module path, `stderr` the runner's stderr (build errors).
pub fn read(
    stdout: &str,
    stderr: &str,
    module_root: &Path,
    module: &str,
    workspace: &Path,
) -> Report {
    let mut report = Report::default();
    let mut output: HashMap<(String, String), Vec<String>> = HashMap::new();
    let mut failed_packages: Vec<String> = Vec::new();
    let mut packages_with_failed_tests: Vec<String> = Vec::new();
    let mut package_output: HashMap<String, Vec<String>> = HashMap::new();
    for line in stdout.lines() {
        let Ok(ev) = serde_json::from_str::<Event>(line) else {
            // Before Go 1.24 a package that does not build is only a plain line.
            if let Some(rest) = line.strip_prefix("FAIL\t")
                && let Some((pkg, _)) = rest.split_once(" [")
            {
                failed_packages.push(pkg.to_string());
            }
            continue;
        };
        let dir = package_dir(&ev.package, module);
        match (ev.action.as_str(), &ev.test) {
            ("output", Some(t)) => {
                let top = t.split('/').next().unwrap_or(t).to_string();
                output
                    .entry((ev.package.clone(), top))
                    .or_default()
                    .push(ev.output.unwrap_or_default());
            }
            ("output", None) => package_output
                .entry(ev.package.clone())
                .or_default()
                .push(ev.output.unwrap_or_default()),
            (_, Some(t)) if t.contains('/') => {}
            ("pass", Some(_)) => report.passed += 1,
            ("skip", Some(_)) => report.skipped += 1,
            ("fail", Some(t)) => {
                packages_with_failed_tests.push(ev.package.clone());
                let lines = output
                    .get(&(ev.package.clone(), t.clone()))
                    .cloned()
                    .unwrap_or_default();
                let (location, message) = failure_of(&lines, module_root, &dir, workspace);
                let id = test_file_of(&lines, &dir)
                    .map_or_else(|| format!("{dir}::{t}"), |f| format!("{f}::{t}"));
                report.fail(location, id, message);
            }
            ("fail", None) => failed_packages.push(ev.package.clone()),
            _ => {}
        }
    }
    for pkg in failed_packages {
        if packages_with_failed_tests.contains(&pkg) {
            continue;
        }
        let dir = package_dir(&pkg, module);
        let mut text = stderr.to_string();
        for l in package_output.get(&pkg).into_iter().flatten() {
            text.push_str(l);
        }
        let errors: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| {
                let (path, line) = super::find_location(l, &[".go"])?;
                let rest = l.splitn(4, ':').nth(3).unwrap_or_default().trim();
                Some((
                    super::location(workspace, module_root, path, line),
                    rest.to_string(),
                ))
            })
            .collect();
        if errors.is_empty() {
            let why = text
                .lines()
                .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .unwrap_or("the package failed without a failed test");
            report.fail(String::new(), format!("{dir} (build)"), why.to_string());
        }
        for (location, message) in errors {
            report.fail(location, format!("{dir} (build)"), message);
        }
    }
    report
}

/// The package folder relative to the module root, as `go test` accepts it: `./calc`, `.`.
fn package_dir(package: &str, module: &str) -> String {
    match package.strip_prefix(module) {
        Some("") => ".".into(),
        Some(rest) => format!(".{rest}"),
        None => package.to_string(),
    }
}

/// The test's file, from the first `file_test.go:LINE` its output names.
fn test_file_of(lines: &[String], dir: &str) -> Option<String> {
    let joined = lines.concat();
    let (file, _) = super::find_location(&joined, &["_test.go"])?;
    let name = Path::new(file).file_name()?.to_str()?;
    let dir = dir.strip_prefix("./").unwrap_or(dir);
    Some(if dir == "." {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    })
}

fn failure_of(lines: &[String], root: &Path, dir: &str, workspace: &Path) -> (String, String) {
    let base = root.join(dir.strip_prefix("./").unwrap_or(dir));
    for l in lines {
        let t = l.trim();
        if let Some(panic) = t.strip_prefix("panic: ") {
            // The first frame in a test file says where.
            let joined = lines.concat();
            let location = super::find_location(&joined, &["_test.go"])
                .map(|(f, n)| super::location(workspace, &base, f, n))
                .unwrap_or_default();
            return (location, format!("panic: {panic}"));
        }
        if let Some((file, line)) = super::find_location(t, &[".go"])
            && t.starts_with(file)
        {
            let message = t[file.len()..].splitn(3, ':').nth(2).unwrap_or("").trim();
            return (
                super::location(workspace, &base, file, line),
                message.to_string(),
            );
        }
    }
    let message = lines
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with("=== ") && !l.starts_with("--- "))
        .unwrap_or("failed")
        .to_string();
    (String::new(), message)
}
