//! The JSON report vitest (`--reporter=json`) and jest (`--json`) both write, in jest's
//! shape: per test file its `assertionResults` (status `passed`, `failed`, `skipped`,
//! `pending`, `todo`); a file that failed with no results (it did not load or compile) is
//! counted as one failure.

use std::path::Path;

use serde::Deserialize;

use crate::report::Report;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsReport {
    #[serde(default)]
    test_results: Vec<FileResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
    #[serde(default)]
    failure_messages: Vec<String>,
    #[serde(default)]
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    line: usize,
}

/// Reads a vitest or jest JSON report; `root` is the folder the runner ran in. With
/// `asked` (the ids a run asked for by name), a skipped test neither asked for nor in a
/// file asked for whole is not counted: the runner's name filter left it out.
pub fn read(
    json: &str,
    root: &Path,
    workspace: &Path,
    asked: Option<&[String]>,
) -> Result<Report, String> {
    let parsed: JsReport =
        serde_json::from_str(json).map_err(|e| format!("unreadable JSON report: {e}"))?;
    let mut report = Report::default();
    for file in parsed.test_results {
        let rel = tools_core::display_relative(root, Path::new(&file.name));
        if file.assertion_results.is_empty() && file.status == "failed" {
            let location = super::find_location(&file.message, &[&rel])
                .map(|(f, l)| super::location(workspace, root, f, l))
                .unwrap_or_default();
            let message = file
                .message
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("the file failed to load")
                .to_string();
            report.fail(location, rel, message);
            continue;
        }
        let whole_file = asked.is_none_or(|ids| ids.contains(&rel));
        for a in file.assertion_results {
            let id = || {
                let mut full = a.ancestor_titles.clone();
                full.push(a.title.clone());
                format!("{rel}::{}", full.join(" > "))
            };
            match a.status.as_str() {
                "passed" => report.passed += 1,
                "failed" => {
                    let id = id();
                    let text = a.failure_messages.join("\n");
                    let file_name = Path::new(&file.name)
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or_default();
                    let line = super::find_location(&text, &[file_name])
                        .map(|(_, l)| l)
                        .or(a.location.as_ref().map(|l| l.line));
                    let location = line
                        .map(|l| super::location(workspace, root, &rel, l))
                        .unwrap_or_default();
                    // The message is everything above the stack (jest puts the expected
                    // and received values on lines of their own).
                    let message: Vec<&str> = text
                        .lines()
                        .take_while(|l| !l.trim_start().starts_with("at "))
                        .collect();
                    let message = message.join("\n");
                    let message = if message.trim().is_empty() {
                        "failed".into()
                    } else {
                        message
                    };
                    report.fail(location, id, message);
                }
                _ if whole_file || asked.is_some_and(|ids| ids.contains(&id())) => {
                    report.skipped += 1;
                }
                _ => {}
            }
        }
    }
    Ok(report)
}
