//! The messages between the host and a kernel driver. They travel as `Content-Length`
//! framed JSON (tools-core's [`framing`](tools_core::framing)) over two pipes that exist only
//! for this: on Unix fd 3 (host → kernel) and fd 4 (kernel → host), on Windows two named
//! pipes only the kernel may open. Nothing a cell prints, and no subprocess it starts, can
//! write to them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Display data: MIME type → data (text, or base64 for `image/png`).
pub type MimeBundle = BTreeMap<String, String>;

/// A message from the kernel.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromKernel {
    /// The driver is up.
    Ready {
        /// `python` or `javascript`.
        language: String,
        /// The interpreter's version.
        version: String,
        /// The interpreter actually running.
        executable: String,
        /// Whether IPython is importable in this interpreter (Python only): then cells keep
        /// their IPython syntax and the driver runs it through IPython's own machinery.
        #[serde(default)]
        ipython: bool,
    },
    /// Output of the running cell. `cut_before` counts characters the driver dropped before
    /// this chunk (head and tail are kept, the middle is counted).
    Stream {
        /// `stdout` or `stderr`.
        name: String,
        /// The text (empty for a heartbeat).
        text: String,
        /// Characters dropped before this chunk.
        #[serde(default)]
        cut_before: u64,
    },
    /// `display(...)` or a figure.
    Display {
        /// The rendered object.
        data: MimeBundle,
    },
    /// The value of the cell's last expression.
    Result {
        /// The rendered value.
        data: MimeBundle,
    },
    /// The cell raised.
    Error {
        /// Exception class name.
        ename: String,
        /// Its message.
        evalue: String,
        /// The traceback, trimmed to the user's frames.
        traceback: String,
    },
    /// `tool(name, args)` from inside the cell.
    ToolCall {
        /// Call id, echoed in the result.
        id: u64,
        /// The tool.
        name: String,
        /// Its arguments.
        #[serde(default)]
        args: Value,
    },
    /// The cell finished.
    Done {
        /// The request id of the cell's [`ToKernel::Execute`], so a late completion of a
        /// cell the host gave up on is never taken for the next cell's.
        #[serde(default)]
        id: Option<u64>,
        /// `ok`, `error` or `interrupted`.
        status: String,
        /// Characters of output the cell produced.
        #[serde(default)]
        output_chars: u64,
        /// Characters the driver dropped.
        #[serde(default)]
        cut_chars: u64,
    },
}

/// A message to the kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToKernel {
    /// Run a cell.
    Execute {
        /// Request id.
        id: u64,
        /// The cell number (names the cell in tracebacks: `<cell N>`).
        cell: u64,
        /// The code: magics already rewritten into plain Python, or (with `ipython`) as the
        /// model wrote it.
        code: String,
        /// The code keeps its IPython syntax (`%magic`, `!cmd`, `%%cell`): the driver turns
        /// it into plain Python with IPython's own transformers.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        ipython: bool,
        /// Output characters forwarded from the start of the cell.
        head: usize,
        /// Output characters kept from the end of the cell.
        tail: usize,
    },
    /// The answer to a [`FromKernel::ToolCall`]. A call the host gave up on (the eval call was
    /// cancelled) is answered with `ok: false` and kind `cancelled`, so the cell never waits
    /// on it.
    ToolResult {
        /// The call id.
        id: u64,
        /// Whether the tool succeeded.
        ok: bool,
        /// Its text (when ok).
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Its structured result (when ok).
        #[serde(skip_serializing_if = "Option::is_none")]
        structured: Option<Value>,
        /// How many images it returned (when ok).
        #[serde(skip_serializing_if = "Option::is_none")]
        images: Option<usize>,
        /// The error message (when not ok).
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The error kind (when not ok).
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
    },
    /// Exit cleanly.
    Shutdown,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip_as_the_drivers_write_them() {
        let m: FromKernel =
            serde_json::from_value(json!({"type":"stream","name":"stdout","text":"hi"})).unwrap();
        assert_eq!(
            m,
            FromKernel::Stream {
                name: "stdout".into(),
                text: "hi".into(),
                cut_before: 0
            }
        );
        let m: FromKernel = serde_json::from_value(
            json!({"type":"tool_call","id":3,"name":"read","args":{"path":"a"}}),
        )
        .unwrap();
        assert!(matches!(m, FromKernel::ToolCall { id: 3, .. }));
        let m: FromKernel =
            serde_json::from_value(json!({"type":"done","id":5,"status":"ok"})).unwrap();
        assert!(matches!(m, FromKernel::Done { id: Some(5), .. }));
        let out = serde_json::to_value(ToKernel::ToolResult {
            id: 3,
            ok: false,
            text: None,
            structured: None,
            images: None,
            error: Some("no".into()),
            kind: Some("rejected".into()),
        })
        .unwrap();
        assert_eq!(
            out,
            json!({"type":"tool_result","id":3,"ok":false,"error":"no","kind":"rejected"})
        );
        assert_eq!(
            serde_json::to_value(ToKernel::Shutdown).unwrap(),
            json!({"type":"shutdown"})
        );
    }
}
