//! The pages of a write's new diagnostics beyond what its result listed: the full list of
//! the last writes of a run is kept, in the order the result showed it, and `lsp` action
//! `diagnostics` with `write` (and `offset`) reads it a page at a time.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{Value, json};
use tools_core::ToolError;

use crate::diagnostics::findings::ON_WRITE_CAP;

/// How many writes' lists a run keeps (the newest).
pub const KEPT_WRITES: usize = 16;

/// The kept lists of a run's last writes.
#[derive(Default)]
pub struct WriteLists {
    lists: Mutex<VecDeque<(u64, Vec<String>)>>,
}

impl WriteLists {
    /// Keeps `lines`, write `number`'s new diagnostics in the order its result showed them;
    /// the oldest list goes when more than [`KEPT_WRITES`] are kept.
    pub fn keep(&self, number: u64, lines: Vec<String>) {
        let mut lists = match self.lists.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        lists.push_back((number, lines));
        while lists.len() > KEPT_WRITES {
            lists.pop_front();
        }
    }

    /// The page of write `number`'s new diagnostics from `offset` (0-based), at most
    /// [`ON_WRITE_CAP`] lines, ending with the `offset` of the next page when there is one.
    pub fn page(&self, number: u64, offset: usize) -> Result<(String, Value), ToolError> {
        let lists = match self.lists.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        let Some((_, lines)) = lists.iter().find(|(n, _)| *n == number) else {
            let kept: Vec<String> = lists.iter().map(|(n, _)| format!("#{n}")).collect();
            return Err(ToolError::invalid(
                "write",
                format!(
                    "write #{number} has no kept list of new diagnostics (kept: {}; the last {KEPT_WRITES} writes whose list was cut)",
                    match kept.is_empty() {
                        true => "none".to_string(),
                        false => kept.join(", "),
                    }
                ),
            ));
        };
        let total = lines.len();
        if offset >= total {
            return Err(ToolError::invalid(
                "offset",
                format!(
                    "`offset` {offset} is past the end of write #{number}'s {total} new diagnostic(s)"
                ),
            ));
        }
        let end = (offset + ON_WRITE_CAP).min(total);
        let mut text = vec![format!(
            "write #{number}: new diagnostics {}–{end} of {total}, in the order its result gave:",
            offset + 1
        )];
        text.extend(lines[offset..end].iter().cloned());
        let next = (end < total).then_some(end);
        if let Some(next) = next {
            text.push(format!(
                "… {} more: `offset: {next}` lists the next ones",
                total - end
            ));
        }
        Ok((
            text.join("\n"),
            json!({"write": number, "total_new": total, "offset": offset, "shown": end - offset, "next_offset": next}),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_end_with_the_next_offset_and_bad_requests_say_why() {
        let lists = WriteLists::default();
        let lines: Vec<String> = (1..=120).map(|i| format!("a.py:{i}:1 error x")).collect();
        lists.keep(3, lines);
        let (text, j) = lists.page(3, 50).unwrap();
        let shown: Vec<&str> = text.lines().collect();
        assert_eq!(
            shown[0],
            "write #3: new diagnostics 51–100 of 120, in the order its result gave:"
        );
        assert_eq!(shown[1], "a.py:51:1 error x");
        assert_eq!(shown[50], "a.py:100:1 error x");
        assert_eq!(shown[51], "… 20 more: `offset: 100` lists the next ones");
        assert_eq!(j["next_offset"], 100);
        let (text, j) = lists.page(3, 100).unwrap();
        assert_eq!(text.lines().count(), 21);
        assert_eq!(j["next_offset"], Value::Null);
        assert_eq!(
            lists.page(3, 120).unwrap_err().to_string(),
            ToolError::invalid(
                "offset",
                "`offset` 120 is past the end of write #3's 120 new diagnostic(s)"
            )
            .to_string()
        );
        let e = lists.page(4, 0).unwrap_err().to_string();
        assert_eq!(
            e,
            ToolError::invalid(
                "write",
                "write #4 has no kept list of new diagnostics (kept: #3; the last 16 writes whose list was cut)"
            )
            .to_string()
        );
        for n in 10..30 {
            lists.keep(n, vec!["b.py:1:1 error y".into()]);
        }
        assert!(lists.page(3, 0).is_err(), "the oldest list went");
        assert!(lists.page(29, 0).is_ok());
    }
}
