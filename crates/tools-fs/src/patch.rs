//! `apply_patch`: the `*** Begin Patch` envelope coding models are trained on, applied all or
//! nothing.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (every following line starts with +)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional, right after Update File)
//! @@ optional anchor line
//!  context line
//! -removed line
//! +added line
//! *** End of File           (optional: the hunk ends at the end of the file)
//! *** End Patch
//! ```
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

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    /// Create a file with these lines.
    Add {
        /// Path as written in the patch.
        path: String,
        /// The new content.
        content: String,
    },
    /// Delete a file.
    Delete {
        /// Path as written in the patch.
        path: String,
    },
    /// Change a file (and maybe move it).
    Update {
        /// Path as written in the patch.
        path: String,
        /// New path, if moved.
        move_to: Option<String>,
        /// The hunks, in order.
        hunks: Vec<Hunk>,
    },
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    /// The text after `@@`, a line to seek to before matching.
    pub anchor: Option<String>,
    /// Lines the file must contain (context and removed lines).
    pub old: Vec<String>,
    /// Lines that replace them (context and added lines).
    pub new: Vec<String>,
    /// Whether the hunk must end at the end of the file.
    pub at_eof: bool,
    /// The 1-based line of the `@@` in the patch text, for messages.
    pub patch_line: usize,
}

fn perr(line: usize, msg: impl std::fmt::Display) -> ToolError {
    ToolError::invalid("patch", format!("patch line {line}: {msg}"))
}

/// Parses the envelope.
pub fn parse_patch(text: &str) -> Result<Vec<PatchOp>, ToolError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() && lines[i].trim().is_empty() {
        i += 1;
    }
    if lines.get(i).map(|l| l.trim()) != Some("*** Begin Patch") {
        return Err(perr(i + 1, "a patch must start with `*** Begin Patch`"));
    }
    i += 1;
    let mut ops = Vec::new();
    let mut ended = false;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "*** End Patch" {
            ended = true;
            break;
        }
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            i += 1;
            let mut content = String::new();
            while i < lines.len() && !lines[i].starts_with("*** ") {
                let Some(rest) = lines[i].strip_prefix('+') else {
                    return Err(perr(
                        i + 1,
                        "every line of an added file must start with `+`",
                    ));
                };
                content.push_str(rest);
                content.push('\n');
                i += 1;
            }
            ops.push(PatchOp::Add {
                path: p.trim().to_string(),
                content,
            });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            ops.push(PatchOp::Delete {
                path: p.trim().to_string(),
            });
            i += 1;
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            i += 1;
            let mut move_to = None;
            if let Some(m) = lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                move_to = Some(m.trim().to_string());
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while i < lines.len() {
                let l = lines[i];
                if l.trim() == "*** End of File" {
                    match hunks.last_mut() {
                        Some(h) => h.at_eof = true,
                        None => return Err(perr(i + 1, "`*** End of File` before any hunk")),
                    }
                    i += 1;
                    continue;
                }
                if l.starts_with("*** ") {
                    break;
                }
                if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    hunks.push(Hunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        patch_line: i + 1,
                        ..Default::default()
                    });
                    i += 1;
                    continue;
                }
                if hunks.is_empty() {
                    hunks.push(Hunk {
                        patch_line: i + 1,
                        ..Default::default()
                    });
                }
                let Some(h) = hunks.last_mut() else { break };
                match l.chars().next() {
                    Some(' ') => {
                        h.old.push(l[1..].to_string());
                        h.new.push(l[1..].to_string());
                    }
                    None => {
                        h.old.push(String::new());
                        h.new.push(String::new());
                    }
                    Some('-') => h.old.push(l[1..].to_string()),
                    Some('+') => h.new.push(l[1..].to_string()),
                    _ => {
                        return Err(perr(
                            i + 1,
                            format!(
                                "expected a line starting with ' ', '-', '+' or '@@', got {l:?}"
                            ),
                        ));
                    }
                }
                i += 1;
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err(perr(
                    i,
                    format!("`*** Update File: {}` has no hunks", p.trim()),
                ));
            }
            ops.push(PatchOp::Update {
                path: p.trim().to_string(),
                move_to,
                hunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(perr(
                i + 1,
                format!(
                    "expected `*** Add File:`, `*** Update File:`, `*** Delete File:` or `*** End Patch`, got {line:?}"
                ),
            ));
        }
    }
    if !ended {
        return Err(perr(
            lines.len(),
            "the patch does not end with `*** End Patch`",
        ));
    }
    if ops.is_empty() {
        return Err(ToolError::invalid("patch", "the patch changes no file"));
    }
    Ok(ops)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_malformed_envelopes() {
        assert!(parse_patch("*** Update File: a\n").is_err());
        assert!(parse_patch("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").is_err());
        assert!(parse_patch("*** Begin Patch\n*** Update File: a\n@@\n-x\n").is_err());
        assert!(parse_patch("*** Begin Patch\n*** End Patch").is_err());
    }
}
