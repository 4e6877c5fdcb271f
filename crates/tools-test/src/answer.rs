//! The text of a `run` answer: the counts first (`3 passed, 1 failed, 0 skipped in 2.1 s —
//! pytest`), then one line per failure, `path:line test-id — message`, within a byte budget;
//! past it, the last line says which `offset` shows the rest. A `list` answer likewise:
//! `path:line test-id` per test.

use std::time::Duration;

use crate::report::{Failure, Report};

/// The first line: counts, time and runner.
pub fn headline(report: &Report, elapsed: Duration, runner: &str) -> String {
    format!(
        "{} passed, {} failed, {} skipped in {:.1} s — {runner}",
        report.passed,
        report.failed,
        report.skipped,
        elapsed.as_secs_f64()
    )
}

/// One failure as a line.
pub fn failure_line(f: &Failure) -> String {
    match f.location.is_empty() {
        true => format!("{} — {}", f.id, f.message),
        false => format!("{} {} — {}", f.location, f.id, f.message),
    }
}

/// `head`, then `lines` from `offset` on, as many as fit `budget` bytes; when some do not,
/// a last line names the `offset` that continues. `noun` names what the lines are.
pub fn paged(head: &str, lines: &[String], offset: usize, budget: usize, noun: &str) -> String {
    let mut text = head.to_string();
    let mut shown = 0;
    for line in lines.iter().skip(offset) {
        // Always one line per page, so paging always moves on.
        if shown > 0 && text.len() + line.len() + 1 > budget {
            break;
        }
        text.push('\n');
        text.push_str(line);
        shown += 1;
    }
    let next = offset + shown;
    if next < lines.len() {
        text.push_str(&format!(
            "\n… {} more {noun} (of {}): call again with offset {next}",
            lines.len() - next,
            lines.len()
        ));
    }
    text
}
