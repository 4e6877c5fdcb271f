//! The answer budget: what the model reads of an `ast_grep` or `ast_edit` answer is held to a
//! size (about 4 KB by default), the most useful part first, and every cut says how to get
//! the rest. A model pays for every byte of an answer in its context; a list of 50 matches
//! whose `$$$BODY` captures print whole functions buries the locations it asked for.
//!
//! Rules kept here for both tools:
//! - a block (one match, one file's diff) goes in whole or not at all, except the first, which
//!   is cut to fit so that an answer is never empty;
//! - a cut marker is only written where it is shorter than what it replaces;
//! - the closing line that says how to get more always fits: room for it is held back;
//! - the structured result holds the same page as the text (the same matches or diffs,
//!   captures trimmed the same way), within [`structured_budget`] bytes of JSON, and keeps
//!   the counters a program may want.

pub use tools_core::text::shorten;

/// Default text budget of an answer, in bytes.
pub const DEFAULT_ANSWER_BYTES: usize = 4096;
/// Smallest budget a configuration may set: below it not even one match and the closing
/// line fit.
pub const MIN_ANSWER_BYTES: usize = 512;
/// Room held back for the closing "more" line.
const CLOSING_RESERVE: usize = 300;
/// Room held back in the structured result for the figures filled in last (counts, the
/// next offset).
const JSON_RESERVE: usize = 200;

/// Bytes of JSON the structured result of an answer with a text budget of `text_budget`
/// may take: twice the text's, since JSON repeats its field names for every item.
pub fn structured_budget(text_budget: usize) -> usize {
    2 * text_budget.max(MIN_ANSWER_BYTES)
}

/// Bytes of a value as serialised JSON.
pub fn json_len(value: &serde_json::Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// The room left in a structured result while its items are added.
#[derive(Debug)]
pub struct JsonRoom {
    left: usize,
}

impl JsonRoom {
    /// The room `limit` leaves once `skeleton` (everything but the items) is paid for.
    pub fn new(limit: usize, skeleton: &serde_json::Value) -> Self {
        JsonRoom {
            left: limit
                .saturating_sub(json_len(skeleton))
                .saturating_sub(JSON_RESERVE),
        }
    }

    /// Whether `item` (plus its separating comma) still fits.
    pub fn fits(&self, item: &serde_json::Value) -> bool {
        json_len(item) < self.left
    }

    /// Pays for `item`, whether it fits or not (the first item of an answer always goes in).
    pub fn take(&mut self, item: &serde_json::Value) {
        self.left = self.left.saturating_sub(json_len(item) + 1);
    }
}

/// Text being filled up to a byte budget.
#[derive(Debug)]
pub struct BudgetedText {
    text: String,
    limit: usize,
    /// Blocks left out because they did not fit.
    left_out: usize,
}

impl BudgetedText {
    /// Starts with `head` (always kept) and a budget of `limit` bytes in all.
    pub fn new(head: String, limit: usize) -> Self {
        BudgetedText {
            text: head,
            limit: limit.max(MIN_ANSWER_BYTES),
            left_out: 0,
        }
    }

    fn room(&self) -> usize {
        self.limit
            .saturating_sub(CLOSING_RESERVE)
            .saturating_sub(self.text.len())
    }

    /// Adds `block` when it fits in what is left (after the closing reserve); otherwise counts
    /// it as left out. Once one block was left out, every later one is too, so what is shown
    /// is always a prefix (and "the next ones" are well defined).
    pub fn push_block(&mut self, block: &str) -> bool {
        if self.left_out == 0 && block.len() <= self.room() {
            self.text.push_str(block);
            true
        } else {
            self.left_out += 1;
            false
        }
    }

    /// Adds `block` cut (by lines, then characters) to the room left; for the first block of
    /// an answer, which is shown even when it is larger than the budget. Returns what was
    /// added.
    pub fn push_cut(&mut self, block: &str) -> String {
        let room = self.room().max(200);
        if block.len() <= room {
            self.text.push_str(block);
            return block.to_string();
        }
        let mut kept = String::new();
        let lines: Vec<&str> = block.split_inclusive('\n').collect();
        let mut used = 0;
        for line in &lines {
            if kept.len() + line.len() > room.saturating_sub(40) {
                break;
            }
            kept.push_str(line);
            used += 1;
        }
        if used == 0 {
            kept = shorten(block, room.saturating_sub(40));
        } else if used < lines.len() {
            if !kept.ends_with('\n') {
                kept.push('\n');
            }
            kept.push_str(&format!("… [{} more lines]", lines.len() - used));
        }
        self.text.push_str(&kept);
        kept
    }

    /// Adds a line that must be shown whatever the budget (the closing line, a hint).
    pub fn push_always(&mut self, line: &str) {
        self.text.push_str(line);
    }

    /// How many blocks did not fit.
    #[cfg(test)]
    pub fn left_out(&self) -> usize {
        self.left_out
    }

    /// The text.
    pub fn finish(self) -> String {
        self.text
    }
}

/// A code text on one line: its first line, and for a longer text its last line too, with
/// how many lines are between (`fn f() { … [12 lines] … }`). Each kept line is cut to
/// `line_chars`.
pub fn first_and_last_line(text: &str, line_chars: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.as_slice() {
        [] => String::new(),
        [only] => shorten(only.trim(), line_chars),
        [first, last] => format!(
            "{} {}",
            shorten(first.trim(), line_chars),
            shorten(last.trim(), line_chars)
        ),
        [first, between @ .., last] => format!(
            "{} … [{} line{}] … {}",
            shorten(first.trim(), line_chars),
            between.len(),
            if between.len() == 1 { "" } else { "s" },
            shorten(last.trim(), line_chars)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_never_outgrows_what_it_cuts() {
        let s = "Selection of nine";
        assert_eq!(
            shorten(s, 8),
            s,
            "cutting 9 chars would cost a longer marker"
        );
        let long = "x".repeat(500);
        let cut = shorten(&long, 100);
        assert!(cut.starts_with(&"x".repeat(100)));
        assert!(cut.ends_with("… [400 more chars]"), "{cut}");
        assert!(cut.len() < long.len());
    }

    #[test]
    fn long_code_keeps_its_first_and_last_line() {
        let body = "fn f() {\n    a();\n\n    b();\n    c();\n}\n";
        assert_eq!(first_and_last_line(body, 80), "fn f() { … [3 lines] … }");
        assert_eq!(first_and_last_line("x + 1", 80), "x + 1");
        assert_eq!(first_and_last_line("a\nb", 80), "a b");
        assert_eq!(first_and_last_line("a\nb\nc", 80), "a … [1 line] … c");
    }

    #[test]
    fn blocks_fill_the_budget_as_a_prefix() {
        let mut t = BudgetedText::new("head\n".into(), 1000);
        let block = "b".repeat(300);
        assert!(t.push_block(&block));
        assert!(t.push_block(&block));
        assert!(!t.push_block(&block));
        assert!(!t.push_block("small"), "after a cut, later blocks stay out");
        assert_eq!(t.left_out(), 2);
        t.push_always("\nmore: …");
        let text = t.finish();
        assert!(text.len() <= 1000, "{}", text.len());
    }

    #[test]
    fn json_room_counts_items_and_their_commas() {
        let skeleton = serde_json::json!({"items": []});
        let limit = json_len(&skeleton) + JSON_RESERVE + 20;
        let mut room = JsonRoom::new(limit, &skeleton);
        let item = serde_json::json!("123456789");
        assert!(room.fits(&item));
        room.take(&item);
        assert!(
            !room.fits(&item),
            "9 + 2 quotes + a comma, twice, is over 20"
        );
        assert_eq!(structured_budget(4096), 8192);
    }

    #[test]
    fn an_oversized_first_block_is_cut_to_fit() {
        let mut t = BudgetedText::new(String::new(), 1000);
        let block: String = (0..200).map(|i| format!("line {i}\n")).collect();
        t.push_cut(&block);
        let text = t.finish();
        assert!(text.len() <= 1000, "{}", text.len());
        assert!(text.contains("more lines]"), "{text}");
    }
}
