//! The answer budget of `lsp`: what the model reads of a list answer (references,
//! hierarchies, symbols, definitions) is held to a size — about 4 KB by default, set by
//! `[lsp] answer_bytes` — the first entries first, and a cut always ends with the line that
//! says how to get the rest (`offset`, `max_results`, a filter). A model pays for every
//! byte in its context; a list of 600 symbols buries the ten it wanted.
//!
//! Rules:
//! - an entry goes in whole or not at all, except the first one shown, which is cut to fit,
//!   so that an answer is never empty;
//! - what is shown is always a prefix of the window, so `offset` of the next page is exact;
//! - a cut marker is only written where it is shorter than what it replaces;
//! - room for the closing line is held back, so it always fits.

use serde_json::{Value, json};
pub use tools_core::text::shorten;

/// Default text budget of an `lsp` answer, in bytes.
pub const DEFAULT_ANSWER_BYTES: usize = 4096;
/// Smallest budget a configuration may set: below it not even one entry and the closing
/// line fit.
pub const MIN_ANSWER_BYTES: usize = 512;
/// Room held back for the closing "more" line.
const CLOSING_RESERVE: usize = 200;
/// Most entries one answer may be asked to cover (`max_results`).
pub const MAX_RESULTS_LIMIT: usize = 1000;

/// Most locations listed for definition-like answers and diagnostics of one file.
pub const LIST_CAP: usize = 100;

/// Which entries of a list an answer covers: `offset` skipped, then at most `max_results`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Entries skipped from the start (0-based index of the first shown).
    pub offset: usize,
    /// Most entries shown after the offset.
    pub max_results: usize,
}

impl Window {
    /// The window asked for, `default_max` entries when `max_results` is not given.
    pub fn new(offset: Option<usize>, max_results: Option<usize>, default_max: usize) -> Self {
        Window {
            offset: offset.unwrap_or(0),
            max_results: max_results
                .unwrap_or(default_max)
                .clamp(1, MAX_RESULTS_LIMIT),
        }
    }
}

/// One page of a list answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The text: head, the entries shown, and the closing line when some are left.
    pub text: String,
    /// Index of the first entry shown.
    pub first: usize,
    /// How many entries are shown.
    pub shown: usize,
    /// How many entries there are in all.
    pub total: usize,
    /// The `offset` of the next page, when there is one.
    pub next_offset: Option<usize>,
}

impl Page {
    /// The paging facts for the structured result.
    pub fn json(&self) -> Value {
        json!({
            "offset": self.first,
            "shown": self.shown,
            "total": self.total,
            "next_offset": self.next_offset,
        })
    }
}

/// Renders `head` and the entries of `window` within `budget` bytes. `narrow` names what else
/// the caller may pass to see less (`kinds`, `depth`, …), for the closing line.
pub fn page(head: &str, entries: &[String], window: Window, budget: usize, narrow: &str) -> Page {
    let limit = budget.max(MIN_ANSWER_BYTES);
    let total = entries.len();
    let mut text = head.to_string();
    if window.offset >= total && total > 0 {
        text.push_str(&format!(
            "\n`offset` {} is past the last entry; there are {total}, numbered from 0 to {}",
            window.offset,
            total - 1
        ));
        return Page {
            text,
            first: window.offset,
            shown: 0,
            total,
            next_offset: None,
        };
    }
    let end = total.min(window.offset.saturating_add(window.max_results));
    let mut shown = 0;
    for entry in &entries[window.offset.min(total)..end] {
        let room = limit
            .saturating_sub(CLOSING_RESERVE)
            .saturating_sub(text.len() + 1);
        if shown == 0 && entry.len() > room {
            text.push('\n');
            text.push_str(&shorten(entry, room.max(80)));
        } else if entry.len() <= room {
            text.push('\n');
            text.push_str(entry);
        } else {
            break;
        }
        shown += 1;
    }
    let next = window.offset + shown;
    let next_offset = (next < total).then_some(next);
    if next_offset.is_some() {
        let left = total - next;
        text.push_str(&format!(
            "\n… {left} more (of {total}) — pass `offset: {next}` for the next ones, \
             `max_results` for more at once{narrow}"
        ));
    }
    Page {
        text,
        first: window.offset,
        shown,
        total,
        next_offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize, width: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("{i:04} {}", "x".repeat(width)))
            .collect()
    }

    #[test]
    fn a_page_stays_within_its_budget_and_names_the_next_offset() {
        let all = entries(300, 60);
        let p = page(
            "300 things:",
            &all,
            Window::new(None, Some(1000), 50),
            4096,
            "",
        );
        assert!(p.text.len() <= 4096, "{}", p.text.len());
        assert!(p.shown > 10 && p.shown < 300, "{}", p.shown);
        let next = p.next_offset.unwrap();
        assert_eq!(next, p.shown);
        assert!(p.text.contains(&format!("`offset: {next}`")), "{}", p.text);
        // The pages together are every entry, once, in order.
        let mut seen = p.shown;
        let mut offset = Some(next);
        while let Some(o) = offset {
            let q = page("", &all, Window::new(Some(o), Some(1000), 50), 4096, "");
            assert!(q.text.starts_with(&format!("\n{o:04} ")), "{}", q.text);
            seen += q.shown;
            offset = q.next_offset;
        }
        assert_eq!(seen, 300);
    }

    #[test]
    fn max_results_and_past_the_end() {
        let all = entries(10, 5);
        let p = page(
            "h",
            &all,
            Window::new(Some(2), Some(3), 50),
            4096,
            ", or `kinds`",
        );
        assert_eq!((p.first, p.shown, p.next_offset), (2, 3, Some(5)));
        assert!(p.text.ends_with("or `kinds`"), "{}", p.text);
        let p = page("h", &all, Window::new(Some(10), None, 50), 4096, "");
        assert_eq!(p.shown, 0);
        assert!(p.text.contains("past the last entry"), "{}", p.text);
        let p = page("h", &all, Window::new(None, None, 50), 4096, "");
        assert_eq!((p.shown, p.next_offset), (10, None));
        assert!(!p.text.contains("more"), "{}", p.text);
    }

    #[test]
    fn an_oversized_first_entry_is_cut_not_dropped() {
        let all = vec!["y".repeat(10_000), "z".into()];
        let p = page("h", &all, Window::new(None, None, 50), 1024, "");
        assert!(p.text.len() <= 1024, "{}", p.text.len());
        assert_eq!(p.shown, 1);
        assert_eq!(p.next_offset, Some(1));
    }

    #[test]
    fn a_marker_never_outgrows_what_it_cuts() {
        assert_eq!(shorten("Selection of nine", 8), "Selection of nine");
        let cut = shorten(&"x".repeat(500), 100);
        assert!(cut.ends_with("… [400 more chars]"), "{cut}");
    }
}
