//! The one rendering of what a change found, for a write's result and for a preview's:
//! the bounds that were hit first (what follows is incomplete, and they say what to call),
//! then the new diagnostics, then the gone ones, one line counting the hidden ones (no longer
//! reported while the new errors stand, see the `state_diff` module), the late arrivals of earlier writes
//! and the other notes; and the structured form beside the text.
//!
//! New diagnostics are all listed when they fit the cap ([`ON_WRITE_CAP`] lines). Past it,
//! a big break is summarised: how many in each affected file, the written file's package
//! first and then by import distance (the `file_order` module), then the first lines in that
//! order, alike ones of a file on one line naming their places (the `alike` module), and how
//! to page the rest (`lsp` action `diagnostics` with the write's number and an `offset`,
//! served from the write's kept list, see the `pages` module).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tools_core::text::more_not_shown;

use crate::diagnostics::alike;
use crate::diagnostics::baseline::is_bound_note;
use crate::diagnostics::file_order::{Place, order};
use crate::diagnostics::findings::{Finding, Findings, GONE_CAP, ON_WRITE_CAP};

/// Most files counted one by one in a summary; the rest are counted together.
pub const SUMMARY_FILES: usize = 30;

/// Which change is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// A write, by its number in the run.
    Write(u64),
    /// A preview of a change not written.
    Preview,
}

impl Change {
    fn new_head(self, total: usize) -> String {
        match self {
            Change::Write(_) => format!("{total} new diagnostic(s) after this write"),
            Change::Preview => {
                format!("predicted: {total} new diagnostic(s) if this change is written")
            }
        }
    }
    fn none(self) -> &'static str {
        match self {
            Change::Write(_) => "no new diagnostics after this write.",
            Change::Preview => "predicted: no new diagnostics if this change is written.",
        }
    }
    fn gone_head(self, gone: usize) -> String {
        match self {
            Change::Write(_) => {
                format!("{gone} earlier diagnostic(s) are gone after this write:")
            }
            Change::Preview => format!("predicted: {gone} earlier diagnostic(s) would be gone:"),
        }
    }
    /// The one line about what the change hid: a count, not a list (they are not fixed,
    /// and not worth the agent's attention until the code builds again).
    fn hidden_line(self, hidden: usize) -> String {
        match self {
            Change::Write(_) => format!(
                "{hidden} earlier diagnostic(s) not reported while the new errors stand (hidden, not fixed)."
            ),
            Change::Preview => format!(
                "predicted: {hidden} earlier diagnostic(s) would not be reported while the new errors stand (hidden, not fixed)."
            ),
        }
    }
    /// The closing line of a cut list: what to call for the rest.
    fn more(self, rest: usize, next: usize) -> String {
        match self {
            Change::Write(n) => format!(
                "… {rest} more: `lsp` action `diagnostics` with `write: {n}` and `offset: {next}` lists the next ones"
            ),
            Change::Preview => format!(
                "… {rest} more: the write's own result pages them (`lsp` action `diagnostics` with its `write` number and an `offset`)"
            ),
        }
    }
}

/// What goes into one report.
pub(crate) struct Parts<'a> {
    /// The change reported.
    pub change: Change,
    /// What it found.
    pub findings: Findings,
    /// The files it wrote (or would write), for the order of a summary.
    pub written: &'a [PathBuf],
    /// Every note; those saying a bound was hit lead.
    pub notes: &'a [String],
    /// Blocks naming earlier writes' late arrivals, after the gone ones.
    pub late_blocks: Vec<String>,
    /// Whether every server settled, so an empty list may be called "no new diagnostics".
    pub settled: bool,
    /// How a file is named in the answer.
    pub display: &'a dyn Fn(&Path) -> String,
}

/// A rendered report.
pub(crate) struct Report {
    /// The answer's text.
    pub text: String,
    /// The structured form: `new` (capped as the text), `total_new`, `files` (per-file
    /// counts in the order shown), `gone`, `gone_list`, `hidden`, `hidden_list`.
    pub json: Value,
    /// Every new diagnostic's line, in the order shown (the pages of a summary).
    pub ordered: Vec<String>,
    /// How many of `ordered` the text shows (the first ones); the rest are paged.
    pub shown: usize,
}

/// Renders `parts`.
pub(crate) fn render_report(parts: Parts<'_>) -> Report {
    let Parts {
        change,
        findings,
        written,
        notes,
        late_blocks,
        settled,
        display,
    } = parts;
    let Findings { new, gone, hidden } = findings;
    let total = new.len();
    let (bounds, rest): (Vec<&String>, Vec<&String>) = notes.iter().partition(|n| is_bound_note(n));
    let mut body: Vec<String> = bounds.into_iter().cloned().collect();
    let (ordered, files, shown) = if total > ON_WRITE_CAP {
        summarise(change, new, written, display, &mut body)
    } else {
        if total > 0 {
            body.push(format!("{}:", change.new_head(total)));
            body.extend(new.iter().map(|f| f.line.clone()));
        } else if settled {
            body.push(change.none().into());
        }
        (new, Vec::new(), total)
    };
    let gone_count = gone.len();
    if gone_count > GONE_CAP {
        // Too many to list one a line: alike ones share one (an undone big break).
        body.push(change.gone_head(gone_count));
        let groups = alike::gather(gone.clone());
        let (lines, shown) = alike::lines(&groups, GONE_CAP, alike::SHOWN_PLACES_CAP);
        body.extend(lines.into_iter().map(|l| format!("  {l}")));
        body.extend(more_not_shown(shown, gone_count));
    } else if gone_count > 0 {
        body.push(change.gone_head(gone_count));
        body.extend(gone.iter().map(|f| format!("  {}", f.line)));
    }
    if !hidden.is_empty() {
        body.push(change.hidden_line(hidden.len()));
    }
    body.extend(late_blocks);
    body.extend(rest.into_iter().cloned());
    let json = json!({
        "new": ordered.iter().take(shown).map(|f| f.json.clone()).collect::<Vec<_>>(),
        "total_new": total,
        "files": files,
        "gone": gone_count,
        "gone_list": gone.iter().take(ON_WRITE_CAP).map(|f| f.json.clone()).collect::<Vec<_>>(),
        "hidden": hidden.len(),
        "hidden_list": hidden.iter().take(ON_WRITE_CAP).map(|f| f.json.clone()).collect::<Vec<_>>(),
    });
    Report {
        text: body.join("\n"),
        json,
        ordered: ordered.into_iter().map(|f| f.line).collect(),
        shown,
    }
}

/// The summary of a big break into `body`: per-file counts in order, the first lines in
/// that order (alike ones of a file on one line), and what to call for the rest. Returns the
/// findings in the order shown, the per-file counts and how many of the findings the text
/// shows.
fn summarise(
    change: Change,
    new: Vec<Finding>,
    written: &[PathBuf],
    display: &dyn Fn(&Path) -> String,
    body: &mut Vec<String>,
) -> (Vec<Finding>, Vec<Value>, usize) {
    let total = new.len();
    let mut files: Vec<PathBuf> = new.iter().map(|f| f.file.clone()).collect();
    files.sort();
    files.dedup();
    let placed: Vec<(PathBuf, Place)> = order(written, &files);
    let mut groups: Vec<Vec<Finding>> = Vec::new();
    let mut counts = Vec::new();
    let mut file_lines = Vec::new();
    for (i, (file, place)) in placed.iter().enumerate() {
        let mine: Vec<Finding> = new.iter().filter(|f| &f.file == file).cloned().collect();
        let name = display(file);
        if i < SUMMARY_FILES {
            file_lines.push(format!("  {name}: {} ({})", mine.len(), place.label()));
        }
        counts.push(json!({"path": name, "new": mine.len(), "place": place.label()}));
        groups.extend(alike::gather(mine));
    }
    let (lines, shown) = alike::lines(&groups, ON_WRITE_CAP, alike::SHOWN_PLACES_CAP);
    let ordered: Vec<Finding> = groups.into_iter().flatten().collect();
    let any_alike = lines.len() < shown;
    let (bound, listed) = match (any_alike, shown < total) {
        (false, _) => (
            format!(" — more than the {ON_WRITE_CAP} listed here;"),
            format!("The first {ON_WRITE_CAP}, in that order:"),
        ),
        (true, true) => (
            " — more than fit here;".to_string(),
            format!("The first {shown} in that order, alike ones on one line:"),
        ),
        (true, false) => (
            ";".to_string(),
            "All of them in that order, alike ones on one line:".to_string(),
        ),
    };
    body.push(format!(
        "{}, in {} file(s){bound} per file, the written file's package first, then by import distance:",
        change.new_head(total),
        placed.len()
    ));
    body.extend(file_lines);
    if placed.len() > SUMMARY_FILES {
        let left: usize = counts[SUMMARY_FILES..]
            .iter()
            .filter_map(|c| c["new"].as_u64())
            .sum::<u64>() as usize;
        body.push(format!(
            "  … {} more file(s) with {left} diagnostic(s)",
            placed.len() - SUMMARY_FILES
        ));
    }
    body.push(listed);
    body.extend(lines);
    if shown < total {
        body.push(change.more(total - shown, shown));
    }
    (ordered, counts, shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(line: u32, what: &str) -> Finding {
        Finding {
            file: PathBuf::from("/p/src/defs.rs"),
            line: format!("src/defs.rs:{line}:6 {what}"),
            json: json!({"path": "src/defs.rs", "line": line, "col": 6}),
        }
    }

    /// The report of write #4 that found `new` and made `gone` go away.
    fn report(new: Vec<Finding>, gone: Vec<Finding>) -> Report {
        render_report(Parts {
            change: Change::Write(4),
            findings: Findings {
                new,
                gone,
                hidden: Vec::new(),
            },
            written: &[PathBuf::from("/p/src/lib.rs")],
            notes: &[],
            late_blocks: Vec::new(),
            settled: true,
            display: &|p: &Path| p.strip_prefix("/p").unwrap().display().to_string(),
        })
    }

    #[test]
    fn a_big_break_whose_alike_lines_hold_it_all_is_shown_whole() {
        let missing = "error [E0046] not all trait items implemented, missing: `fn group`";
        let mut new: Vec<Finding> = (1..=60).map(|i| finding(i * 10, missing)).collect();
        new.insert(3, finding(35, "error [E0308] mismatched types"));
        let r = report(new, Vec::new());
        let places: Vec<String> = (1..=60).map(|i| format!("{}:6", i * 10)).collect();
        assert_eq!(
            r.text.lines().collect::<Vec<_>>(),
            vec![
                "61 new diagnostic(s) after this write, in 1 file(s); per file, the written file's package first, then by import distance:".to_string(),
                "  src/defs.rs: 61 (the written file's package)".into(),
                "All of them in that order, alike ones on one line:".into(),
                format!("src/defs.rs, 60 times: {missing} — at {}", places.join(", ")),
                "src/defs.rs:35:6 error [E0308] mismatched types".into(),
            ]
        );
        assert_eq!(r.shown, 61);
        assert_eq!(r.json["new"].as_array().map(Vec::len), Some(61));
        // The kept order is the shown one: the alike ones together, then the other.
        assert_eq!(r.ordered[59], format!("src/defs.rs:600:6 {missing}"));
        assert_eq!(
            r.ordered[60],
            "src/defs.rs:35:6 error [E0308] mismatched types"
        );
    }

    #[test]
    fn a_long_list_of_gone_ones_puts_alike_ones_on_one_line() {
        let gone = |line: u32, what: &str| Finding {
            file: PathBuf::from("/p/src/defs.rs"),
            line: format!("src/defs.rs:{line} {what}"),
            json: json!({"path": "src/defs.rs", "line": line}),
        };
        let missing = "error [E0046] not all trait items implemented, missing: `fn group`";
        let mut all: Vec<Finding> = (1..=12).map(|i| gone(i * 10, missing)).collect();
        all.extend((1..=11).map(|i| gone(200 + i, &format!("error e{i}"))));
        let r = report(Vec::new(), all);
        let places: Vec<String> = (1..=12).map(|i| (i * 10).to_string()).collect();
        let mut want = vec![
            "no new diagnostics after this write.".to_string(),
            "23 earlier diagnostic(s) are gone after this write:".into(),
            format!(
                "  src/defs.rs, 12 times: {missing} — at {}",
                places.join(", ")
            ),
        ];
        want.extend((1..=9).map(|i| format!("  src/defs.rs:{} error e{i}", 200 + i)));
        want.push("… 2 more not shown (of 23)".into());
        assert_eq!(r.text.lines().collect::<Vec<_>>(), want);
    }

    #[test]
    fn a_big_break_of_distinct_lines_lists_the_first_fifty() {
        let new: Vec<Finding> = (1..=55)
            .map(|i| finding(i, &format!("error e{i}")))
            .collect();
        let r = report(new, Vec::new());
        let lines: Vec<&str> = r.text.lines().collect();
        assert_eq!(
            lines[..3],
            [
                "55 new diagnostic(s) after this write, in 1 file(s) — more than the 50 listed here; per file, the written file's package first, then by import distance:",
                "  src/defs.rs: 55 (the written file's package)",
                "The first 50, in that order:",
            ]
        );
        assert_eq!(lines[3], "src/defs.rs:1:6 error e1");
        assert_eq!(lines[52], "src/defs.rs:50:6 error e50");
        assert_eq!(
            lines[53],
            "… 5 more: `lsp` action `diagnostics` with `write: 4` and `offset: 50` lists the next ones"
        );
        assert_eq!(lines.len(), 54);
        assert_eq!(r.shown, 50);
    }
}
