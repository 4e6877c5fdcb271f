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

/// A frame's location as `path:LINE:COL` (relative inside the workspace), or the frame's
/// source name when it has no path.
pub fn frame_location(ws: &Workspace, frame: &dap_types::StackFrame) -> Option<String> {
    let src = frame.source.as_ref()?;
    let path = match &src.path {
        Some(p) => ws.display(Path::new(p)),
        None => src.name.clone()?,
    };
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
        "line": frame.line,
        "column": frame.column,
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
