//! `apply_patch`: the `*** Begin Patch` envelope coding models are trained on (read by
//! `patch_text`), applied all or nothing.
//!
//! Every path of the patch is locked first; then every hunk of every file is located
//! (see `hunks`) against what is on disk under those locks, and only then is the first byte
//! written, all files or none (the undo restores content and mode). A moved file keeps its
//! mode; a CRLF file stays CRLF.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::StagedFile;
use tools_core::safe_write::{
    FileChange, MAX_UNDO_BYTES, apply_all_or_nothing, read_file_if_exists,
};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::locked::{sha256_hex, with_path_locks};
use crate::patch_plan::{plan, targets};
use crate::patch_text::{PatchOp, parse_patch};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    patch: String,
    /// Write nothing: stage the change, predict its diagnostics, and answer with a
    /// `change_id` for `resolve` (accept or discard).
    #[serde(default)]
    preview: bool,
}

pub(crate) struct ApplyPatchTool;

/// Environment variable that makes the n-th file write of `apply_patch` fail (0-based), so
/// the end-to-end suite can check the rollback through the real binary. Only honoured in
/// debug builds.
pub const FAIL_AT_ENV: &str = "AGENT_TOOLS_TEST_FAIL_WRITE_AT";

fn injected_failure() -> Option<usize> {
    if cfg!(debug_assertions) {
        std::env::var(FAIL_AT_ENV).ok()?.parse().ok()
    } else {
        None
    }
}

#[tools_core::async_trait]
impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        "apply_patch"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Apply a multi-file patch in the `*** Begin Patch` format (`*** Add File:`, `*** Update File:` with \
         optional `*** Move to:`, `*** Delete File:`, `@@` hunks of ' ', '-', '+' lines, `*** End Patch`). \
         All or nothing: every hunk is verified before anything is written. With preview: true nothing is \
         written: the answer predicts the diagnostics the patch would bring and gives a change_id for \
         `resolve` (accept or discard)."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<PatchArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: PatchArgs = parse_args(args)?;
        let ops = parse_patch(&a.patch)?;
        let locked = targets(&ops, ctx.run.workspace())?;
        if a.preview {
            return preview(ctx, ops, locked).await;
        }
        let fail_at = injected_failure();
        let (touched, summary) = with_path_locks(ctx, locked, move |ws, guard| {
            let (changes, summary) = plan(&ops, ws)?;
            let fault = |i: usize, _: &FileChange| match fail_at {
                Some(n) if n == i => Err(std::io::Error::other("injected write failure")),
                _ => Ok(()),
            };
            let written = apply_all_or_nothing(ws, guard, &changes, Some(&fault))?;
            // Deleted files (and the old names of moved ones) are not reported as touched.
            let deleted: Vec<_> = changes
                .iter()
                .filter_map(|c| match c {
                    FileChange::Delete { path } => Some(path.clone()),
                    FileChange::Write { .. } => None,
                })
                .collect();
            let touched: Vec<_> = written
                .into_iter()
                .filter(|p| !deleted.contains(p))
                .collect();
            Ok((touched, summary))
        })
        .await?;
        Ok(ToolOutput::text(format!(
            "Applied the patch to {} files:\n{}",
            summary.len(),
            summary.join("\n")
        ))
        .with_structured(json!({"files": summary}))
        .with_touched(touched))
    }
}

/// `apply_patch` with `preview: true`: planned under the locks exactly as it would be
/// applied, each file's current content hashed, then staged and predicted.
async fn preview(
    ctx: &CallCtx,
    ops: Vec<PatchOp>,
    locked: Vec<std::path::PathBuf>,
) -> Result<ToolOutput, ToolError> {
    let (files, summary) = with_path_locks(ctx, locked, move |ws, _guard| {
        let (changes, summary) = plan(&ops, ws)?;
        let mut files = Vec::new();
        for c in &changes {
            let shown = ws.display(c.path());
            let current = read_file_if_exists(ws, c.path(), MAX_UNDO_BYTES)
                .map_err(|e| e.for_file(&shown))?;
            let (new_text, mode) = match c {
                FileChange::Write { content, mode, .. } => (
                    Some(String::from_utf8(content.clone()).map_err(|_| {
                        ToolError::invalid("patch", format!("the patched `{shown}` is not UTF-8"))
                    })?),
                    *mode,
                ),
                FileChange::Delete { .. } => (None, None),
            };
            files.push(StagedFile {
                path: c.path().to_path_buf(),
                hash: current.map(|c| sha256_hex(&c.bytes)),
                new_text,
                replacements: 0,
                mode,
            });
        }
        Ok((files, summary))
    })
    .await?;
    crate::preview::stage_and_predict(
        ctx,
        "apply_patch",
        files,
        format!(
            "the patch would change {} files:\n{}",
            summary.len(),
            summary.join("\n")
        ),
        json!({"files": summary}),
    )
    .await
}
