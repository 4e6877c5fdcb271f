//! `write`: replace or create a whole file, atomically, optionally only if it is still the
//! version the model read.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::safe_write;
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::locked::{sha256_hex, with_path_locks, write_failed};

/// The largest file `write` reads to compare with `expected_sha256`.
const MAX_COMPARE_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// File to write, relative to the workspace root. Parent folders are created.
    path: String,
    /// The complete new content.
    content: String,
    /// Write only if the file's current content has this SHA-256 (hex), as `read` reported
    /// it: a file changed since it was read is then refused instead of overwritten.
    #[serde(default)]
    expected_sha256: Option<String>,
    /// Write nothing: stage the change, predict its diagnostics, and answer with a
    /// `change_id` for `resolve` (accept or discard).
    #[serde(default)]
    preview: bool,
}

pub(crate) struct WriteTool;

fn check_hash_arg(h: &str) -> Result<String, ToolError> {
    let h = h.trim().to_ascii_lowercase();
    if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ToolError::invalid(
            "expected_sha256",
            "expected_sha256 must be 64 hex digits (the sha256 that `read` reports)",
        ));
    }
    Ok(h)
}

#[tools_core::async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Write a whole file inside the workspace (created if absent, replaced if present), atomically. \
         A replaced file keeps its permissions. With expected_sha256 (from `read`), the write happens only \
         if the file is still exactly what was read. New diagnostics from the language server are \
         appended to the result. With preview: true nothing is written: the answer predicts the diagnostics \
         the write would bring and gives a change_id for `resolve` (accept or discard)."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<WriteArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: WriteArgs = parse_args(args)?;
        let expected = a
            .expected_sha256
            .as_deref()
            .map(check_hash_arg)
            .transpose()?;
        let path = ctx.run.workspace().resolve(&a.path)?;
        let shown = ctx.run.workspace().display(&path);
        let content = a.content;
        if a.preview {
            return preview(ctx, path, shown, content, expected).await;
        }
        let (written, content) = {
            let (path, shown) = (path.clone(), shown.clone());
            with_path_locks(ctx, vec![path.clone()], move |ws, _guard| {
                if let Some(expected) = expected {
                    let current = safe_write::read_file_if_exists(ws, &path, MAX_COMPARE_BYTES)
                        .map_err(|e| e.for_file(&shown))?;
                    let Some(current) = current else {
                        return Err(ToolError::rejected(format!(
                            "`{shown}` does not exist, so it is not the version with SHA-256 {expected}; \
                             nothing was written"
                        )));
                    };
                    let actual = sha256_hex(&current.bytes);
                    if actual != expected {
                        return Err(ToolError::rejected(format!(
                            "`{shown}` changed since it was read: its SHA-256 is now {actual}, not the expected \
                             {expected}; nothing was written — read it again and redo the change"
                        )));
                    }
                }
                let w = safe_write::write_file(ws, &path, content.as_bytes()).map_err(|e| write_failed(e, &shown))?;
                Ok((w, content))
            })
            .await?
        };
        let lines = content.lines().count();
        let verb = if written.created {
            "Created"
        } else {
            "Replaced"
        };
        Ok(ToolOutput::text(format!(
            "{verb} {shown} ({lines} lines, {} bytes).",
            content.len()
        ))
        .with_structured(json!({
            "path": shown, "created": written.created, "bytes": content.len(), "lines": lines,
            "sha256": sha256_hex(content.as_bytes()),
        }))
        .with_touched([path]))
    }
}

/// `write` with `preview: true`: what is there now (hash, or absent) under the path's lock,
/// then staged with the new content and predicted.
async fn preview(
    ctx: &CallCtx,
    path: std::path::PathBuf,
    shown: String,
    content: String,
    expected: Option<String>,
) -> Result<ToolOutput, ToolError> {
    let hash = {
        let (path, shown) = (path.clone(), shown.clone());
        with_path_locks(ctx, vec![path.clone()], move |ws, _guard| {
            let current = safe_write::read_file_if_exists(ws, &path, MAX_COMPARE_BYTES)
                .map_err(|e| e.for_file(&shown))?;
            let hash = current.map(|c| sha256_hex(&c.bytes));
            if let Some(expected) = expected
                && hash.as_deref() != Some(expected.as_str())
            {
                return Err(ToolError::rejected(format!(
                    "`{shown}` is not the version with SHA-256 {expected} (it changed since it was read, or is gone); \
                     nothing was staged — read it again and redo the change"
                )));
            }
            Ok(hash)
        })
        .await?
    };
    let lines = content.lines().count();
    let verb = if hash.is_none() { "create" } else { "replace" };
    let summary = format!(
        "would {verb} {shown} ({lines} lines, {} bytes).",
        content.len()
    );
    let structured = json!({
        "path": shown, "created": hash.is_none(), "bytes": content.len(), "lines": lines,
        "sha256": sha256_hex(content.as_bytes()),
    });
    let file = tools_core::StagedFile {
        path,
        hash,
        new_text: Some(content),
        replacements: 0,
        mode: None,
    };
    crate::preview::stage_and_predict(ctx, "write", vec![file], summary, structured).await
}
