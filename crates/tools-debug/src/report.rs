//! How a stop, a frame, a variable and a location read for the model: `path:LINE:COL`
//! relative to the workspace root, the source line, capped lists, values cut visibly.

use std::path::Path;

use serde_json::{Value, json};
use tools_core::Workspace;
use tools_core::text::cut_text;

/// Longest value shown (the spec's cap).
pub const VALUE_CAP: usize = 400;
/// Most frames shown by `stack` (the spec's cap).
pub const STACK_CAP: usize = 30;
/// Frames shown with a stop.
pub const STOP_FRAMES: usize = 5;
/// Most children shown by `variables` (the spec's cap).
pub const VARIABLES_CAP: usize = 50;
/// Most threads listed.
pub const THREADS_CAP: usize = 100;
/// Lines of output shown with a termination or a "still running".
pub const OUTPUT_TAIL_LINES: usize = 20;
/// The answer budget of a listing (`stack`, `variables`, `output`), in bytes of text: a
/// model pays for every byte, so long listings page with `offset`.
pub const ANSWER_BYTES: usize = 4096;
/// Room held back for the closing "more" line.
const CLOSING_RESERVE: usize = 200;

/// `lines` after `head`, as many as fit [`ANSWER_BYTES`] (the first one always), and how
/// many went in. The caller says how to get the rest.
pub fn fill_lines(head: &str, lines: &[String]) -> (String, usize) {
    let mut text = head.to_string();
    let mut shown = 0;
    for line in lines {
        let needed = text.len() + 1 + line.len() + CLOSING_RESERVE;
        if shown > 0 && needed > ANSWER_BYTES {
            break;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
        shown += 1;
    }
    (text, shown)
}

/// The closing line of a listing that left items out: how many, and the `offset` that
/// shows the next ones. `None` when nothing is left.
pub fn more_line(what: &str, next: usize, total: usize) -> Option<String> {
    (next < total).then(|| {
        format!(
            "… {} more {what} not shown (of {total}): pass `offset: {next}` for the next ones",
            total - next
        )
    })
}

/// Whether the frame stands before its source's first line: debugpy reports line 0 for a
/// module paused before its first statement ran.
fn before_first_line(frame: &dap_types::StackFrame) -> bool {
    frame.line == 0
}

/// A frame's location as `path:LINE:COL` (relative inside the workspace), or the frame's
/// source name when it has no path. A frame before its first line is shown at line 1 and
/// says so (never `path:0`).
pub fn frame_location(ws: &Workspace, frame: &dap_types::StackFrame) -> Option<String> {
    let src = frame.source.as_ref()?;
    let path = match &src.path {
        Some(p) => ws.display(Path::new(p)),
        None => src.name.clone()?,
    };
    if before_first_line(frame) {
        return Some(format!("{path}:1:1 (before the first line)"));
    }
    Some(if frame.column > 0 {
        format!("{path}:{}:{}", frame.line, frame.column)
    } else {
        format!("{path}:{}", frame.line)
    })
}

/// The text of 1-based `line` of the frame's source file, trimmed and cut.
pub fn source_line(frame: &dap_types::StackFrame) -> Option<String> {
    let path = frame.source.as_ref()?.path.as_ref()?;
    let text = std::fs::read_to_string(path).ok()?;
    let idx = usize::try_from(frame.line).ok()?.checked_sub(1)?;
    let line = text.lines().nth(idx)?;
    Some(cut_text(line.trim_end(), 200))
}

/// One frame line: `#0 compute at app.py:7:5 (frame_id 3)`.
pub fn frame_line(ws: &Workspace, i: usize, frame: &dap_types::StackFrame) -> String {
    match frame_location(ws, frame) {
        Some(loc) => format!("#{i} {} at {loc} (frame_id {})", frame.name, frame.id),
        None => format!("#{i} {} (no source) (frame_id {})", frame.name, frame.id),
    }
}

/// The frame as JSON.
pub fn frame_json(ws: &Workspace, frame: &dap_types::StackFrame) -> Value {
    json!({
        "frame_id": frame.id,
        "function": frame.name,
        "path": frame.source.as_ref().and_then(|s| s.path.as_ref()).map(|p| ws.display(Path::new(p))),
        "line": frame.line.max(1),
        "column": frame.column.max(1),
        "before_first_line": before_first_line(frame),
    })
}

/// One variable line: `name: type = value` plus how to expand it.
pub fn variable_line(variable: &dap_types::Variable) -> String {
    let mut line = variable.name.clone();
    if let Some(type_name) = variable.type_.as_ref().filter(|t| !t.is_empty()) {
        line.push_str(&format!(": {type_name}"));
    }
    line.push_str(" = ");
    line.push_str(&cut_text(&variable.value, VALUE_CAP));
    if variable.variables_reference > 0 {
        line.push_str(&format!("  (reference {})", variable.variables_reference));
    }
    line
}

/// The variable as JSON (value cut like the text).
pub fn variable_json(variable: &dap_types::Variable) -> Value {
    json!({
        "name": variable.name,
        "type": variable.type_,
        "value": cut_text(&variable.value, VALUE_CAP),
        "reference": variable.variables_reference,
    })
}

/// The last lines of the output, or `None` when empty.
pub fn output_tail(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    let start = lines.len().saturating_sub(OUTPUT_TAIL_LINES);
    let mut tail = String::new();
    if start > 0 {
        tail.push_str(&format!(
            "… [{start} earlier lines not shown; `output` has more]\n"
        ));
    }
    tail.push_str(&cut_text(&lines[start..].join("\n"), 4000));
    Some(tail)
}

/// Characters of output in one `output` answer.
const OUTPUT_PAGE_CHARS: usize = 3600;

/// One page of a debuggee's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPage {
    /// The page's text with a line before or after it saying where the rest is.
    pub text: String,
    /// The page's text alone.
    pub shown: String,
    /// Its first character's offset.
    pub start: usize,
    /// The offset of the next page, if any.
    pub next: Option<usize>,
    /// Characters of output in all.
    pub total: usize,
}

/// The page of `output` from character `offset`, or its last page (the latest output,
/// what a stop is usually about) when `offset` is `None`.
pub fn output_page(output: &str, offset: Option<usize>) -> OutputPage {
    let total = output.chars().count();
    let start = offset
        .unwrap_or_else(|| total.saturating_sub(OUTPUT_PAGE_CHARS))
        .min(total);
    let shown: String = output.chars().skip(start).take(OUTPUT_PAGE_CHARS).collect();
    let end = start + shown.chars().count();
    let mut text = String::new();
    if start > 0 {
        text.push_str(&format!(
            "… [{start} earlier characters not shown: pass `offset: {}` for the ones before]\n",
            start.saturating_sub(OUTPUT_PAGE_CHARS)
        ));
    }
    text.push_str(&shown);
    let next = (end < total).then_some(end);
    if let Some(next) = next {
        text.push_str(&format!(
            "\n… [{} more characters: pass `offset: {next}` for the next ones]",
            total - end
        ));
    }
    OutputPage {
        text,
        shown,
        start,
        next,
        total,
    }
}

/// A duration as `12 s`, `4 min 3 s`.
pub fn human(duration: std::time::Duration) -> String {
    let secs = duration.as_secs();
    if secs < 60 {
        format!("{secs} s")
    } else {
        format!("{} min {} s", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_before_the_first_line_is_not_at_line_0() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let path = ws.root().join("spin.py");
        let frame: dap_types::StackFrame = serde_json::from_value(json!({
            "id": 1, "name": "<module>", "line": 0, "column": 0,
            "source": {"path": path.to_string_lossy()},
        }))
        .unwrap();
        assert_eq!(
            frame_location(&ws, &frame).as_deref(),
            Some("spin.py:1:1 (before the first line)")
        );
        let j = frame_json(&ws, &frame);
        assert_eq!(
            (&j["line"], &j["before_first_line"]),
            (&json!(1), &json!(true))
        );
        let mut at_5 = frame.clone();
        at_5.line = 5;
        at_5.column = 3;
        assert_eq!(frame_location(&ws, &at_5).as_deref(), Some("spin.py:5:3"));
        assert_eq!(frame_json(&ws, &at_5)["before_first_line"], false);
    }

    #[test]
    fn listings_fill_the_budget_and_name_the_next_offset() {
        let lines: Vec<String> = (0..100)
            .map(|i| format!("{i}: {}", "v".repeat(100)))
            .collect();
        let (text, shown) = fill_lines("head:", &lines);
        assert!(text.len() + 200 <= ANSWER_BYTES, "{}", text.len());
        assert!((30..40).contains(&shown), "{shown}");
        assert_eq!(
            more_line("variables", 35, 100).unwrap(),
            "… 65 more variables not shown (of 100): pass `offset: 35` for the next ones"
        );
        assert_eq!(more_line("frames", 100, 100), None);
        let out: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let last = output_page(&out, None);
        assert!(last.text.len() <= ANSWER_BYTES, "{}", last.text.len());
        assert!(last.shown.ends_with("line 1999\n"));
        assert_eq!(last.next, None);
        let first = output_page(&out, Some(0));
        assert!(first.shown.starts_with("line 0\n"));
        assert_eq!(first.next, Some(3600));
        assert!(
            first
                .text
                .ends_with("pass `offset: 3600` for the next ones]"),
            "{}",
            first.text
        );
        let huge = vec!["x".repeat(10_000)];
        assert_eq!(fill_lines("", &huge).1, 1, "the first line always goes in");
    }

    #[test]
    fn variables_are_cut_and_say_how_to_expand() {
        let v = dap_types::Variable {
            name: "data".into(),
            value: "x".repeat(1000),
            type_: Some("str".into()),
            presentation_hint: None,
            evaluate_name: None,
            variables_reference: 7,
            named_variables: None,
            indexed_variables: None,
            memory_reference: None,
        };
        let line = variable_line(&v);
        assert!(line.starts_with("data: str = xxx"));
        assert!(line.contains("[cut: 600 more characters]"));
        assert!(line.ends_with("(reference 7)"));
        assert_eq!(output_tail(" \n"), None);
        let many: String = (0..50).map(|i| format!("l{i}\n")).collect();
        let t = output_tail(&many).unwrap();
        assert!(t.starts_with("… [30 earlier lines"));
        assert!(t.ends_with("l49"));
        assert_eq!(human(std::time::Duration::from_secs(243)), "4 min 3 s");
    }
}
