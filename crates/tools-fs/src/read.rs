//! `read`: line-numbered text with offset and limit, capped.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, safe_write, schema_for};

use crate::locked::{off_the_runtime, sha256_hex};

/// Lines returned when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 2000;
/// The most lines one call returns.
pub const MAX_LIMIT: usize = 5000;
/// Longer lines are cut at this many characters.
pub const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this are refused whole; read them in slices of lines instead.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// File to read, relative to the workspace root.
    path: String,
    /// First line to show, 1-based (default 1).
    offset: Option<usize>,
    /// How many lines to show (default 2000, at most 5000).
    limit: Option<usize>,
}

pub(crate) struct ReadTool;

#[tools_core::async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Read a text file inside the workspace. Lines are numbered (1-based); use offset and limit \
         to page through long files. Long lines are cut visibly. The structured result carries the \
         whole file's sha256, which `write` accepts as expected_sha256."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<ReadArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: ReadArgs = parse_args(args)?;
        let path = ctx.run.workspace().resolve(&a.path)?;
        let shown = ctx.run.workspace().display(&path);
        // A FIFO, socket or device is refused before it is opened, so a read never blocks
        // on one and never streams from one without end.
        let read_shown = shown.clone();
        let bytes = off_the_runtime(ctx, move |ws| {
            safe_write::read_file(ws, &path, MAX_FILE_BYTES)
                .map(|c| c.bytes)
                .map_err(|e| e.for_file(&read_shown))
        })
        .await?;
        if bytes.iter().take(8192).any(|b| *b == 0) {
            return Err(ToolError::invalid(
                "path",
                format!("`{shown}` looks binary (it contains NUL bytes)"),
            ));
        }
        let sha256 = sha256_hex(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let offset = a.offset.unwrap_or(1);
        if offset == 0 {
            return Err(ToolError::invalid(
                "offset",
                "offset is 1-based; use 1 for the first line",
            ));
        }
        let limit = a.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(ToolError::invalid(
                "limit",
                format!("limit must be between 1 and {MAX_LIMIT}"),
            ));
        }
        let total = text.lines().count();
        if total > 0 && offset > total {
            return Err(ToolError::invalid(
                "offset",
                format!("`{shown}` has only {total} lines"),
            ));
        }
        let mut out = String::new();
        let mut last = offset.saturating_sub(1);
        for (i, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
            out.push_str(&format!(
                "{:>6}\t{}\n",
                i + 1,
                tools_core::text::cut_text(line, MAX_LINE_CHARS)
            ));
            last = i + 1;
        }
        if total == 0 {
            out.push_str("(empty file)\n");
        } else if last < total {
            out.push_str(&format!(
                "… {} more lines not shown (of {total}); continue with offset {}\n",
                total - last,
                last + 1
            ));
        }
        Ok(ToolOutput::text(out).with_structured(json!({
            "path": shown, "first_line": offset, "last_line": last, "total_lines": total,
            "sha256": sha256,
        })))
    }
}
