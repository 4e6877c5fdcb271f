//! The closing table of `cargo xtask test`: per real component, what the tests did with it,
//! read from the component log the test suites append to (see `tools_core::testing`).
//!
//! A component with named checks (a language server: start, hover, definition, diagnostic,
//! fix) is "exercised" only when every check that applies to it passed; one failed check,
//! or a program missing where setup installs it, is a failure and is counted as such.

use std::collections::BTreeMap;
use std::path::Path;

/// What the log says about one component.
#[derive(Default)]
struct Entry {
    /// The longest time a test reported driving it.
    took: Option<f64>,
    /// Some test recorded it as exercised (without named checks).
    exercised: bool,
    /// Named checks and their outcome words (`passed`, `FAILED`, `n/a`), in test order.
    checks: Vec<(String, String)>,
    /// Why its program was missing, when it was.
    missing: Option<String>,
    /// Why a test skipped it, when one did.
    skipped: Option<String>,
    /// Why a best-effort test skipped it.
    optional: Option<String>,
    /// Why it cannot be installed on this kind of machine.
    not_here: Option<String>,
}

impl Entry {
    fn note_time(&mut self, took: Option<&str>) {
        let secs = took.and_then(|t| t.strip_suffix(" s")?.parse::<f64>().ok());
        self.took = match (self.took, secs) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    fn failed_checks(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|(_, outcome)| outcome == "FAILED")
            .map(|(name, _)| name.as_str())
            .collect()
    }

    fn time(&self) -> String {
        self.took
            .map(|s| format!(" ({s:.1} s)"))
            .unwrap_or_default()
    }
}

/// Reads the component log's lines into one entry per component.
fn read(text: &str) -> BTreeMap<String, Entry> {
    let mut table: BTreeMap<String, Entry> = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.splitn(4, '\t').collect();
        let (Some(kind), Some(component)) = (fields.first(), fields.get(1)) else {
            continue;
        };
        let entry = table.entry(component.to_string()).or_default();
        let rest = fields.get(2).copied();
        match *kind {
            "exercised" => {
                entry.exercised = true;
                entry.note_time(rest);
            }
            "checked" => {
                entry.note_time(rest);
                for check in fields.get(3).copied().unwrap_or_default().split(' ') {
                    if let Some((name, outcome)) = check.split_once(':') {
                        entry.checks.push((name.to_string(), outcome.to_string()));
                    }
                }
            }
            "missing" => entry.missing = rest.map(str::to_string),
            "skipped" => entry.skipped = rest.map(str::to_string),
            "optional-skip" => entry.optional = rest.map(str::to_string),
            "not-installable" => entry.not_here = rest.map(str::to_string),
            _ => {}
        }
    }
    table
}

/// Prints the table; returns how many components failed (a failed check, a missing
/// program, or a skip of a component that no test exercised).
pub fn print(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let table = read(&text);
    let mut failures = 0;
    eprintln!("\nReal components\n{:<32} result", "component");
    for (c, e) in &table {
        let line = if let Some(why) = &e.missing {
            failures += 1;
            format!("MISSING: {why}")
        } else if !e.failed_checks().is_empty() {
            failures += 1;
            format!(
                "FAILED {}{}; checks: {}",
                e.failed_checks().join(", "),
                e.time(),
                checks_line(e)
            )
        } else if !e.checks.is_empty() {
            format!("exercised{}: {}", e.time(), checks_line(e))
        } else if e.exercised {
            format!("exercised{}", e.time())
        } else if let Some(why) = &e.skipped {
            failures += 1;
            format!("SKIPPED: {why}")
        } else if let Some(why) = &e.optional {
            format!("skipped (best effort): {why}")
        } else if let Some(why) = &e.not_here {
            format!("not installable here: {why}")
        } else {
            continue;
        };
        eprintln!("{c:<32} {line}");
    }
    failures
}

/// `start hover definition(n/a) …`: the checks a component passed, and those that do not
/// apply to it marked so.
fn checks_line(e: &Entry) -> String {
    let words: Vec<String> = e
        .checks
        .iter()
        .map(|(name, outcome)| match outcome.as_str() {
            "passed" => name.clone(),
            other => format!("{name}({other})"),
        })
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_exercised_only_when_every_applicable_check_passed() {
        let log = "checked\tpyright\t9.5 s\tstart:passed hover:passed definition:passed diagnostic:passed fix:passed\n\
                   checked\tnginx\t2.0 s\tstart:passed hover:passed definition:n/a diagnostic:n/a fix:n/a\n\
                   checked\ttaplo\t1.0 s\tstart:FAILED hover:FAILED definition:n/a diagnostic:FAILED fix:FAILED\n\
                   missing\tjdtls\t`jdtls` is not on PATH\n\
                   exercised\tdebugpy\t-\n";
        let table = read(log);
        assert_eq!(
            checks_line(&table["nginx"]),
            "start hover definition(n/a) diagnostic(n/a) fix(n/a)"
        );
        assert!(table["pyright"].failed_checks().is_empty());
        assert_eq!(
            table["taplo"].failed_checks(),
            ["start", "hover", "diagnostic", "fix"]
        );
        assert_eq!(
            table["jdtls"].missing.as_deref(),
            Some("`jdtls` is not on PATH")
        );
        assert!(table["debugpy"].exercised && table["debugpy"].took.is_none());
        let dir = std::env::temp_dir().join(format!("component-table-{}", std::process::id()));
        std::fs::write(&dir, log).unwrap();
        assert_eq!(print(&dir), 2);
        let _ = std::fs::remove_file(&dir);
    }
}
