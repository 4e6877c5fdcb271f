//! Turning a parsed patch into file changes, read and checked under the path locks.

use std::collections::HashSet;
use std::path::PathBuf;

use tools_core::safe_write::{self, FileChange, FileError, MAX_UNDO_BYTES};
use tools_core::{ToolError, Workspace};

use crate::hunks::apply_hunks;
use crate::patch_text::PatchOp;

/// Every path the patch may write or delete, as the jail resolves them: the set to lock.
pub(crate) fn targets(ops: &[PatchOp], ws: &Workspace) -> Result<Vec<PathBuf>, ToolError> {
    let mut out = Vec::new();
    for op in ops {
        match op {
            PatchOp::Add { path, .. } | PatchOp::Delete { path } => out.push(ws.resolve(path)?),
            PatchOp::Update { path, move_to, .. } => {
                out.push(ws.resolve(path)?);
                if let Some(dest) = move_to {
                    out.push(ws.resolve(dest)?);
                }
            }
        }
    }
    Ok(out)
}

fn twice(path: &str) -> ToolError {
    ToolError::invalid("patch", format!("`{path}` appears twice in the patch"))
}

/// Whether anything (a file, a folder, a link, a FIFO) is at `p`.
fn occupied(p: &std::path::Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// A file of the patch that cannot be read: the error, saying nothing was changed.
fn unreadable(e: FileError, what: &str, path: &str) -> ToolError {
    match e {
        FileError::NotFound => ToolError::invalid(
            "patch",
            format!("`{what}: {path}`: no such file; no file was changed"),
        ),
        other => ToolError::invalid(
            "patch",
            format!(
                "`{what}: {path}`: {}; no file was changed",
                other.for_file(path)
            ),
        ),
    }
}

/// Turns parsed operations into verified file changes (nothing written yet), with the
/// summary lines the answer shows. Called with the paths of [`targets`] locked.
pub(crate) fn plan(
    ops: &[PatchOp],
    ws: &Workspace,
) -> Result<(Vec<FileChange>, Vec<String>), ToolError> {
    let mut changes = Vec::new();
    let mut summary = Vec::new();
    let mut seen = HashSet::new();
    for op in ops {
        match op {
            PatchOp::Add { path, content } => {
                let p = ws.resolve(path)?;
                if occupied(&p) {
                    return Err(ToolError::invalid(
                        "patch",
                        format!(
                            "`*** Add File: {path}`: the file already exists; use `*** Update File`; no file was changed"
                        ),
                    ));
                }
                if !seen.insert(p.clone()) {
                    return Err(twice(path));
                }
                summary.push(format!("A {}", ws.display(&p)));
                changes.push(FileChange::Write {
                    path: p,
                    content: content.clone().into_bytes(),
                    mode: None,
                });
            }
            PatchOp::Delete { path } => {
                let p = ws.resolve(path)?;
                safe_write::read_file(ws, &p, MAX_UNDO_BYTES)
                    .map_err(|e| unreadable(e, "*** Delete File", path))?;
                if !seen.insert(p.clone()) {
                    return Err(twice(path));
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
                let current = safe_write::read_file(ws, &p, MAX_UNDO_BYTES)
                    .map_err(|e| unreadable(e, "*** Update File", path))?;
                let original = String::from_utf8(current.bytes).map_err(|_| {
                    ToolError::invalid(
                        "patch",
                        format!(
                            "`*** Update File: {path}`: it is not UTF-8 text; no file was changed"
                        ),
                    )
                })?;
                if !seen.insert(p.clone()) {
                    return Err(twice(path));
                }
                let updated = apply_hunks(&original, hunks, &shown)?;
                match move_to {
                    Some(dest) => {
                        let d = ws.resolve(dest)?;
                        if occupied(&d) && d != p {
                            return Err(ToolError::invalid(
                                "patch",
                                format!(
                                    "`*** Move to: {dest}`: the destination exists; no file was changed"
                                ),
                            ));
                        }
                        if !seen.insert(d.clone()) {
                            return Err(twice(dest));
                        }
                        summary.push(format!("M {shown} -> {}", ws.display(&d)));
                        // The moved file keeps its mode (an executable stays executable).
                        changes.push(FileChange::Write {
                            path: d,
                            content: updated.into_bytes(),
                            mode: Some(current.meta.mode),
                        });
                        changes.push(FileChange::Delete { path: p });
                    }
                    None => {
                        summary.push(format!("M {shown} ({} hunks)", hunks.len()));
                        changes.push(FileChange::Write {
                            path: p,
                            content: updated.into_bytes(),
                            mode: None,
                        });
                    }
                }
            }
        }
    }
    Ok((changes, summary))
}
