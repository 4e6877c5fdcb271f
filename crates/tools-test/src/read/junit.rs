//! pytest's JUnit XML (`--junitxml`, `-o junit_family=xunit1` so each case names its file
//! and line): one `testcase` per test; a `failure` or `error` child fails it (an `error`
//! is also what a collection or fixture error is), a `skipped` child skips it.

use std::path::Path;

use crate::report::Report;

/// Reads a pytest JUnit report. `root` is the folder pytest ran in (case files are relative
/// to it), `workspace` the root locations are shown relative to.
pub fn read(xml: &str, root: &Path, workspace: &Path) -> Result<Report, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("unreadable JUnit XML: {e}"))?;
    let mut report = Report::default();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let file = case.attribute("file").unwrap_or_default();
        let name = case.attribute("name").unwrap_or_default();
        let classname = case.attribute("classname").unwrap_or_default();
        let id = node_id(file, classname, name);
        let bad = case
            .children()
            .find(|c| c.has_tag_name("failure") || c.has_tag_name("error"));
        if let Some(bad) = bad {
            let text = bad.text().unwrap_or_default();
            let message = message_of(bad.attribute("message").unwrap_or_default(), text);
            // The failing line is the last `file:LINE:` of the traceback in the test's own
            // file; else the test's definition (pytest's `line` is 0-based).
            let own = (!file.is_empty())
                .then(|| {
                    text.lines().rev().find_map(|l| {
                        let rest = l.strip_prefix(file)?.strip_prefix(':')?;
                        let digits: String =
                            rest.chars().take_while(char::is_ascii_digit).collect();
                        digits.parse::<usize>().ok()
                    })
                })
                .flatten();
            let line = own.or_else(|| {
                case.attribute("line")
                    .and_then(|l| l.parse::<usize>().ok())
                    .map(|l| l + 1)
            });
            let location = match (file.is_empty(), line) {
                (false, Some(l)) => super::location(workspace, root, file, l),
                // A collection error names no file: its id is the module's path, and the
                // traceback's last line in it is where the module failed.
                _ => match super::find_last_location(text, &[id.as_str()])
                    .or_else(|| super::find_last_location(text, &[".py"]))
                {
                    Some((f, l)) => super::location(workspace, root, f, l),
                    None => String::new(),
                },
            };
            report.fail(location, id, message);
        } else if case.children().any(|c| c.has_tag_name("skipped")) {
            report.skipped += 1;
        } else {
            report.passed += 1;
        }
    }
    Ok(report)
}

/// The node id: `file::Class::name` from the case's file and its dotted class name.
fn node_id(file: &str, classname: &str, name: &str) -> String {
    if file.is_empty() {
        // A collection error names the module only by its dotted class name.
        return if classname.is_empty() {
            name.to_string()
        } else {
            format!("{}.py", classname.replace('.', "/"))
        };
    }
    let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    // A collection error is a case named after its module.
    if name == module || name.is_empty() {
        return file.to_string();
    }
    let class = classname
        .strip_prefix(&module)
        .and_then(|c| c.strip_prefix('.'))
        .filter(|c| !c.is_empty());
    match class {
        Some(c) => format!("{file}::{}::{name}", c.replace('.', "::")),
        None => format!("{file}::{name}"),
    }
}

/// The assertion: the report's message attribute unless it is a placeholder, else the last
/// `E   ` line of the traceback (the exception raised).
fn message_of(attr: &str, text: &str) -> String {
    let last_e = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("E ").map(str::trim))
        .filter(|l| !l.is_empty());
    let first = attr.lines().next().unwrap_or_default().trim();
    if first.is_empty() || first == "collection failure" || first.starts_with("failed on setup") {
        return last_e.unwrap_or(first).to_string();
    }
    first.to_string()
}
