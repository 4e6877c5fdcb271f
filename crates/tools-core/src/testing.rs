//! Test support shared by every crate's suite: recording which real components a test
//! exercised or had to skip, so `cargo xtask test` can print one table and, under `CI=true`,
//! fail on a skip.
//!
//! Records go to the file named by `AGENT_TOOLS_COMPONENT_LOG` (set by `cargo xtask test`);
//! without it they only go to stderr.

use std::io::Write;
use std::path::PathBuf;

/// Finds `name` on `$PATH` (or as given, if it contains a `/`), as an executable file.
pub fn which(name: &str) -> Option<PathBuf> {
    crate::process::which(name)
}

/// The `node_modules` folder the npm-installed `program` (a path found on `$PATH`, often a
/// link into `node_modules/.bin`) lives in: where the packages installed beside it are.
/// Panics, naming the program, when it is not inside one.
pub fn node_modules_of(program: &std::path::Path) -> PathBuf {
    let real = program
        .canonicalize()
        .unwrap_or_else(|e| panic!("cannot resolve {program:?}: {e}"));
    real.ancestors()
        .find(|d| d.file_name().is_some_and(|n| n == "node_modules"))
        .unwrap_or_else(|| panic!("{real:?} is not inside a node_modules folder"))
        .to_path_buf()
}

fn record(line: &str) {
    eprintln!("[component] {line}");
    if let Some(path) = std::env::var_os("AGENT_TOOLS_COMPONENT_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Records that a test drove the real `component`.
pub fn exercised(component: &str) {
    record(&format!("exercised\t{component}\t-"));
}

/// Records that a test drove the real `component` for `took` (start, queries and writes):
/// the final component table shows it beside the component.
pub fn exercised_for(component: &str, took: std::time::Duration) {
    record(&format!(
        "exercised\t{component}\t{:.1} s",
        took.as_secs_f64()
    ));
}

/// Records that a test could not drive `component`, and why. Under `CI=true` this panics:
/// CI installs every component the suite promises, so a skip there is a failure.
pub fn skipped(component: &str, why: &str) {
    record(&format!("skipped\t{component}\t{why}"));
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!("component `{component}` was skipped under CI=true: {why}");
    }
}

/// Records a skip of a component that is best-effort everywhere (never fails CI).
pub fn skipped_optional(component: &str, why: &str) {
    record(&format!("optional-skip\t{component}\t{why}"));
}

/// Records that `component` (an entry of a built-in table) cannot be installed on this kind
/// of machine, and why: its table test stands in for a real run. Never fails CI.
pub fn not_installable(component: &str, why: &str) {
    record(&format!("not-installable\t{component}\t{why}"));
}

/// Looks up `binary`; records `component` as exercised when found, else as skipped.
/// Returns the path when found.
pub fn require_binary(component: &str, binary: &str) -> Option<PathBuf> {
    match which(binary) {
        Some(p) => {
            exercised(component);
            Some(p)
        }
        None => {
            skipped(
                component,
                &format!(
                    "`{binary}` is not on PATH (run `cargo xtask setup` and source .tools/env.sh)"
                ),
            );
            None
        }
    }
}

/// How one check of a component went, for [`checked`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// The component answered what the check expects.
    Passed,
    /// The component answered something else, or nothing.
    Failed,
    /// The check does not apply to this component (a server that publishes no diagnostics).
    NotApplicable,
}

impl CheckOutcome {
    fn word(self) -> &'static str {
        match self {
            CheckOutcome::Passed => "passed",
            CheckOutcome::Failed => "FAILED",
            CheckOutcome::NotApplicable => "n/a",
        }
    }
}

/// Records the checks a test ran on `component` for `took`, each by name (`start`, `hover`,
/// …). The component table shows them; it calls the component exercised only when every
/// applicable check passed, and a failed one fails CI.
pub fn checked(component: &str, took: std::time::Duration, checks: &[(&str, CheckOutcome)]) {
    let list: Vec<String> = checks
        .iter()
        .map(|(name, outcome)| format!("{name}:{}", outcome.word()))
        .collect();
    record(&format!(
        "checked\t{component}\t{:.1} s\t{}",
        took.as_secs_f64(),
        list.join(" ")
    ));
}

/// Records that `component`'s program is missing on a machine whose setup installs it: a
/// failure (the test that calls this fails too), never a skip.
pub fn missing(component: &str, why: &str) {
    record(&format!("missing\t{component}\t{why}"));
}
