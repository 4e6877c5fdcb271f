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
//! Hunks are located in order, each searched from where the previous one ended: exact
//! match first, then ignoring trailing whitespace, then ignoring surrounding whitespace.
//! Every hunk of every file is located before the first byte is written.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, Workspace, parse_args, schema_for};

use crate::atomic::{FileChange, apply_with_injected_failure};

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

fn find_block(lines: &[String], needle: &[String], start: usize, at_eof: bool) -> Option<usize> {
    if needle.is_empty() {
        return Some(if at_eof { lines.len() } else { start });
    }
    if needle.len() > lines.len() {
        return None;
    }
    let norms: [fn(&str) -> &str; 3] = [|s| s, |s| s.trim_end(), |s| s.trim()];
    for norm in norms {
        let fits = |at: usize| (0..needle.len()).all(|k| norm(&lines[at + k]) == norm(&needle[k]));
        if at_eof {
            let at = lines.len() - needle.len();
            if at >= start && fits(at) {
                return Some(at);
            }
            continue;
        }
        if let Some(at) = (start..=lines.len() - needle.len()).find(|&at| fits(at)) {
            return Some(at);
        }
    }
    None
}

/// Applies `hunks` to `original`, or says which hunk does not apply.
fn apply_hunks(original: &str, hunks: &[Hunk], shown: &str) -> Result<String, ToolError> {
    let trailing_newline = original.ends_with('\n') || original.is_empty();
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let mut cursor = 0;
    for (n, h) in hunks.iter().enumerate() {
        if let Some(anchor) = &h.anchor {
            match (cursor..lines.len())
                .find(|&k| lines[k].trim() == anchor.trim())
                .or_else(|| (cursor..lines.len()).find(|&k| lines[k].contains(anchor.trim())))
            {
                Some(k) => cursor = k + 1,
                None => {
                    return Err(ToolError::invalid(
                        "patch",
                        format!(
                            "hunk {} of `{shown}` (patch line {}): the anchor `@@ {anchor}` is not in the file after line {cursor}; no file was changed",
                            n + 1,
                            h.patch_line
                        ),
                    ));
                }
            }
        }
        let Some(at) = find_block(&lines, &h.old, cursor, h.at_eof) else {
            let first = h.old.first().map(|s| s.as_str()).unwrap_or("");
            return Err(ToolError::invalid(
                "patch",
                format!(
                    "hunk {} of `{shown}` (patch line {}) does not apply: its {} context/removed lines (starting {:?}) \
                     are not in the file after line {cursor}; re-read the file and regenerate the hunk; no file was changed",
                    n + 1,
                    h.patch_line,
                    h.old.len(),
                    first
                ),
            ));
        };
        lines.splice(at..at + h.old.len(), h.new.iter().cloned());
        cursor = at + h.new.len();
    }
    let mut out = lines.join("\n");
    if trailing_newline && !lines.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// Turns parsed operations into verified file changes (nothing written yet).
fn plan(ops: &[PatchOp], ws: &Workspace) -> Result<(Vec<FileChange>, Vec<String>), ToolError> {
    let mut changes = Vec::new();
    let mut summary = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for op in ops {
        match op {
            PatchOp::Add { path, content } => {
                let p = ws.resolve(path)?;
                if p.exists() {
                    return Err(ToolError::invalid(
                        "patch",
                        format!(
                            "`*** Add File: {path}`: the file already exists; use `*** Update File`; no file was changed"
                        ),
                    ));
                }
                if !seen.insert(p.clone()) {
                    return Err(ToolError::invalid(
                        "patch",
                        format!("`{path}` appears twice in the patch"),
                    ));
                }
                summary.push(format!("A {}", ws.display(&p)));
                changes.push(FileChange::Write {
                    path: p,
                    content: content.clone().into_bytes(),
                });
            }
            PatchOp::Delete { path } => {
                let p = ws.resolve(path)?;
                if !p.is_file() {
                    return Err(ToolError::invalid(
                        "patch",
                        format!("`*** Delete File: {path}`: no such file; no file was changed"),
                    ));
                }
                if !seen.insert(p.clone()) {
                    return Err(ToolError::invalid(
                        "patch",
                        format!("`{path}` appears twice in the patch"),
                    ));
                }
                summary.push(format!("D {}", ws.display(&p)));
                changes.push(FileChange::Delete { path: p });
            }
            PatchOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let p = ws.resolve(path)?;
                let shown = ws.display(&p);
                let original = std::fs::read_to_string(&p).map_err(|e| {
                    ToolError::invalid(
                        "patch",
                        format!(
                            "`*** Update File: {path}`: cannot read it ({e}); no file was changed"
                        ),
                    )
                })?;
                if !seen.insert(p.clone()) {
                    return Err(ToolError::invalid(
                        "patch",
                        format!("`{path}` appears twice in the patch"),
                    ));
                }
                let updated = apply_hunks(&original, hunks, &shown)?;
                match move_to {
                    Some(dest) => {
                        let d = ws.resolve(dest)?;
                        if d.exists() && d != p {
                            return Err(ToolError::invalid(
                                "patch",
                                format!(
                                    "`*** Move to: {dest}`: the destination exists; no file was changed"
                                ),
                            ));
                        }
                        if !seen.insert(d.clone()) {
                            return Err(ToolError::invalid(
                                "patch",
                                format!("`{dest}` appears twice in the patch"),
                            ));
                        }
                        summary.push(format!("M {shown} -> {}", ws.display(&d)));
                        changes.push(FileChange::Write {
                            path: d,
                            content: updated.into_bytes(),
                        });
                        changes.push(FileChange::Delete { path: p });
                    }
                    None => {
                        summary.push(format!("M {shown} ({} hunks)", hunks.len()));
                        changes.push(FileChange::Write {
                            path: p,
                            content: updated.into_bytes(),
                        });
                    }
                }
            }
        }
    }
    Ok((changes, summary))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    patch: String,
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
         All or nothing: every hunk is verified before anything is written."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<PatchArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: PatchArgs = parse_args(args)?;
        let ops = parse_patch(&a.patch)?;
        let ws = ctx.run.workspace();
        let (changes, summary) = plan(&ops, ws)?;
        let touched = apply_with_injected_failure(&changes, injected_failure())?;
        let touched: Vec<_> = touched.into_iter().filter(|p| p.exists()).collect();
        Ok(ToolOutput::text(format!(
            "Applied the patch to {} files:\n{}",
            summary.len(),
            summary.join("\n")
        ))
        .with_structured(json!({"files": summary}))
        .with_touched(touched))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_applies_with_fuzz_and_anchors() {
        let p = "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1  \n+    return 2\n*** End Patch\n";
        let ops = parse_patch(p).unwrap();
        let PatchOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        let src = "def g():\n    return 1\ndef f():\n    return 1\n";
        let out = apply_hunks(src, hunks, "a.py").unwrap();
        assert_eq!(out, "def g():\n    return 1\ndef f():\n    return 2\n");
    }

    #[test]
    fn rejects_malformed_envelopes() {
        assert!(parse_patch("*** Update File: a\n").is_err());
        assert!(parse_patch("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").is_err());
        assert!(parse_patch("*** Begin Patch\n*** Update File: a\n@@\n-x\n").is_err());
        assert!(parse_patch("*** Begin Patch\n*** End Patch").is_err());
    }

    #[test]
    fn end_of_file_hunks_match_the_end() {
        let p =
            "*** Begin Patch\n*** Update File: a\n@@\n x\n+tail\n*** End of File\n*** End Patch";
        let ops = parse_patch(p).unwrap();
        let PatchOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(
            apply_hunks("x\ny\nx\n", hunks, "a").unwrap(),
            "x\ny\nx\ntail\n"
        );
    }
}
