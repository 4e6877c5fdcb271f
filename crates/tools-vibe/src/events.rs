//! Reading a worker CLI's JSON event stream: which event carries the final message, and which
//! event ends the work. Known CLIs exit 0 while work is still running or 1 after an error they
//! recovered from, so the terminal event, when there is one, decides the status — not the exit
//! code.
//!
//! Built-in shapes (used when a tier sets no `result_field`):
//! - `claude -p --output-format stream-json`: `{"type":"result","result":"…","is_error":false}`
//!   is both the message and the terminal event (`is_error: true` or an `error…` subtype → failed).
//! - `codex exec --json`: `{"type":"item.completed","item":{"type":"agent_message","text":"…"}}`
//!   carries the message; `turn.completed` ends it, `turn.failed` ends it as failed.
//! - `opencode run --format json`: `{"type":"text","part":{"text":"…"}}` carries the message;
//!   `step_finish` ends it, unless its `part.reason` is `tool-calls` (more steps follow).

use std::collections::BTreeMap;

use serde_json::Value;

/// How a terminal event ended the work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Terminal {
    /// The work finished.
    Done,
    /// The work failed; the event's error message if it had one.
    Failed(Option<String>),
}

/// What one event line means.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventMeaning {
    /// The final-message candidate this event carries.
    pub message: Option<String>,
    /// Whether (and how) this event ends the work.
    pub terminal: Option<Terminal>,
    /// Whether the line was a JSON event at all (a later event means the work went on).
    pub is_event: bool,
}

/// Reads events with the tier's extraction rule.
#[derive(Debug, Clone, Default)]
pub struct EventReader {
    field: Option<Vec<String>>,
    filter: Vec<(Vec<String>, String)>,
}

fn split_path(p: &str) -> Vec<String> {
    p.split('.').map(str::to_string).collect()
}

/// The value at a dotted path.
fn at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k.as_str()))
}

fn str_at<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
}

impl EventReader {
    /// A reader taking the message from `field` (dotted path) in events matching `filter`;
    /// with no `field`, the built-in shapes.
    pub fn new(field: Option<&str>, filter: &BTreeMap<String, String>) -> Self {
        EventReader {
            field: field.map(split_path),
            filter: filter
                .iter()
                .map(|(k, v)| (split_path(k), v.clone()))
                .collect(),
        }
    }

    /// Interprets one stdout line. Lines that are not JSON objects mean nothing.
    pub fn read_line(&self, line: &[u8]) -> EventMeaning {
        let line = trim_ascii(line);
        if line.first() != Some(&b'{') {
            return EventMeaning::default();
        }
        let Ok(event) = serde_json::from_slice::<Value>(line) else {
            return EventMeaning::default();
        };
        self.read_event(&event)
    }

    /// Interprets one parsed event.
    pub fn read_event(&self, event: &Value) -> EventMeaning {
        let message = match &self.field {
            Some(path) => {
                let matches = self
                    .filter
                    .iter()
                    .all(|(p, want)| at(event, p).and_then(Value::as_str) == Some(want.as_str()));
                if matches {
                    at(event, path).and_then(Value::as_str).map(str::to_string)
                } else {
                    None
                }
            }
            None => builtin_message(event),
        };
        EventMeaning {
            message,
            terminal: terminal(event),
            is_event: true,
        }
    }
}

fn builtin_message(event: &Value) -> Option<String> {
    let text = match str_at(event, "type")? {
        "result" => str_at(event, "result"),
        "item.completed" if str_at(event, "item.type") == Some("agent_message") => {
            str_at(event, "item.text")
        }
        "text" => str_at(event, "part.text"),
        _ => None,
    };
    text.map(str::to_string)
}

fn terminal(event: &Value) -> Option<Terminal> {
    match str_at(event, "type")? {
        "result" => {
            let is_error = event.get("is_error").and_then(Value::as_bool) == Some(true);
            let subtype_error = str_at(event, "subtype").is_some_and(|s| s.starts_with("error"));
            if is_error || subtype_error {
                let why = str_at(event, "result")
                    .or_else(|| str_at(event, "subtype"))
                    .map(str::to_string);
                Some(Terminal::Failed(why))
            } else {
                Some(Terminal::Done)
            }
        }
        "turn.completed" => Some(Terminal::Done),
        "turn.failed" => Some(Terminal::Failed(
            str_at(event, "error.message").map(str::to_string),
        )),
        "step_finish" => match str_at(event, "part.reason") {
            Some("tool-calls") | Some("tool_calls") => None,
            _ => Some(Terminal::Done),
        },
        _ => None,
    }
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map(|e| e + 1)
        .unwrap_or(start);
    &b[start..end.max(start)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> EventReader {
        EventReader::new(None, &BTreeMap::new())
    }

    #[test]
    fn claude_result_events() {
        let r = builtin();
        let m = r.read_line(
            br#"{"type":"result","subtype":"success","is_error":false,"result":"all good"}"#,
        );
        assert_eq!(m.message.as_deref(), Some("all good"));
        assert_eq!(m.terminal, Some(Terminal::Done));
        let m = r.read_line(br#"{"type":"result","subtype":"error_max_turns","is_error":true}"#);
        assert_eq!(
            m.terminal,
            Some(Terminal::Failed(Some("error_max_turns".into())))
        );
    }

    #[test]
    fn codex_events() {
        let r = builtin();
        let reasoning = r.read_line(
            br#"{"type":"item.completed","item":{"type":"reasoning","text":"thinking"}}"#,
        );
        assert_eq!((reasoning.message, reasoning.terminal), (None, None));
        assert!(reasoning.is_event);
        let msg = r.read_line(
            br#"{"type":"item.completed","item":{"type":"agent_message","text":"done it"}}"#,
        );
        assert_eq!(msg.message.as_deref(), Some("done it"));
        assert_eq!(msg.terminal, None);
        assert_eq!(
            r.read_line(br#"{"type":"turn.completed","usage":{}}"#)
                .terminal,
            Some(Terminal::Done)
        );
        assert_eq!(
            r.read_line(br#"{"type":"turn.failed","error":{"message":"quota"}}"#)
                .terminal,
            Some(Terminal::Failed(Some("quota".into())))
        );
        // A retry notice is not terminal.
        assert_eq!(
            r.read_line(br#"{"type":"error","message":"Reconnecting 1/5"}"#)
                .terminal,
            None
        );
    }

    #[test]
    fn opencode_events() {
        let r = builtin();
        assert_eq!(
            r.read_line(br#"{"type":"text","part":{"text":"hi"}}"#)
                .message
                .as_deref(),
            Some("hi")
        );
        assert_eq!(
            r.read_line(br#"{"type":"step_finish","part":{"reason":"tool-calls"}}"#)
                .terminal,
            None
        );
        assert_eq!(
            r.read_line(br#"{"type":"step_finish","part":{"reason":"stop"}}"#)
                .terminal,
            Some(Terminal::Done)
        );
    }

    #[test]
    fn configured_field_and_filter() {
        let mut filter = BTreeMap::new();
        filter.insert("kind".to_string(), "final".to_string());
        let r = EventReader::new(Some("data.answer"), &filter);
        assert_eq!(
            r.read_line(br#"{"kind":"final","data":{"answer":"42"}}"#)
                .message
                .as_deref(),
            Some("42")
        );
        assert_eq!(
            r.read_line(br#"{"kind":"draft","data":{"answer":"41"}}"#)
                .message,
            None
        );
        assert!(!r.read_line(b"not json").is_event);
        assert_eq!(r.read_line(b"  {broken").message, None);
        assert_eq!(r.read_line(b"").message, None);
    }
}
