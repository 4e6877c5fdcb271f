//! A rename's workspace edit as a plan: every file's final state computed in memory from
//! the content it has when planned (text edits applied back to front, file creations,
//! renames and deletions, every path through the workspace jail), then committed all or
//! nothing — re-checked against what was planned under the run's write locks, written
//! through the safe writer, restored if a write fails part-way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
#[cfg(feature = "testing")]
use std::sync::atomic::{AtomicUsize, Ordering};

use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, ResourceOp, TextEdit, WorkspaceEdit,
};
use tools_core::safe_write::{self, FileChange, MAX_UNDO_BYTES};
use tools_core::{PathLocks, Run, ToolError, Workspace};

use crate::client::position::{Encoding, offset_of};
use crate::client::{LspClient, uri_to_path};

/// Test hook: when set in the run's state to N > 0, the N-th file write of a rename fails,
/// so the restore path can be exercised against a real server's edit. Only with the
/// `testing` feature, which the crate's own integration tests turn on.
#[cfg(feature = "testing")]
#[derive(Debug, Default)]
pub struct InjectWriteFailure(pub AtomicUsize);

/// One file's planned end state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Final {
    Text(String),
    Absent,
}

/// A rename's change as planned: what every file it touches held when planned and will
/// hold after it.
pub(crate) struct Plan {
    /// The workspace the files are read through.
    ws: Workspace,
    /// Path → content when planned (None = absent), to re-check before writing.
    pub(crate) original: BTreeMap<PathBuf, Option<String>>,
    /// Path → final state.
    pub(crate) finals: BTreeMap<PathBuf, Final>,
    /// Path → number of text edits.
    pub(crate) edits: BTreeMap<PathBuf, usize>,
    /// Files the edit creates.
    pub(crate) created: Vec<PathBuf>,
    /// Files the edit deletes.
    pub(crate) deleted: Vec<PathBuf>,
}

/// The text of `p` through the safe reader: never through a link, never from a FIFO or
/// device (a server's edit may name anything), `None` when absent.
fn read_opt(ws: &Workspace, p: &Path) -> Result<Option<String>, ToolError> {
    let shown = ws.display(p);
    match safe_write::read_file_if_exists(ws, p, MAX_UNDO_BYTES) {
        Ok(None) => Ok(None),
        Ok(Some(c)) => String::from_utf8(c.bytes).map(Some).map_err(|_| {
            ToolError::rejected(format!("{shown} is not UTF-8 text; nothing was changed"))
        }),
        Err(e) => Err(ToolError::rejected(format!(
            "the server's edit names `{shown}`, which {e}; nothing was changed"
        ))),
    }
}

fn jail(run: &Run, uri: &lsp_types::Uri) -> Result<PathBuf, ToolError> {
    let p = uri_to_path(uri).ok_or_else(|| {
        ToolError::rejected(format!(
            "the server's edit names a non-file URI {}; nothing was changed",
            uri.as_str()
        ))
    })?;
    // The path as the URI's bytes say, not a lossy text copy: a name that is not UTF-8
    // must reach the same file.
    run.workspace().resolve_path(&p).map_err(|_| {
        ToolError::rejected(format!(
            "the server's edit touches {}, outside the workspace; nothing was changed",
            p.display()
        ))
    })
}

fn apply_text_edits(text: &str, edits: &[TextEdit], enc: Encoding) -> Result<String, String> {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            let s = offset_of(text, e.range.start.line, e.range.start.character, enc);
            let t = offset_of(text, e.range.end.line, e.range.end.character, enc);
            (s, t.max(s), e.new_text.as_str())
        })
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err("the server sent overlapping edits".into());
        }
    }
    let mut out = text.to_string();
    for (s, t, new) in spans.into_iter().rev() {
        out.replace_range(s..t, new);
    }
    Ok(out)
}

impl Plan {
    fn state(&mut self, p: &Path) -> Result<Option<String>, ToolError> {
        if let Some(f) = self.finals.get(p) {
            return Ok(match f {
                Final::Text(t) => Some(t.clone()),
                Final::Absent => None,
            });
        }
        let cur = read_opt(&self.ws, p)?;
        self.original
            .entry(p.to_path_buf())
            .or_insert_with(|| cur.clone());
        Ok(cur)
    }
    fn set(&mut self, p: &Path, f: Final) -> Result<(), ToolError> {
        self.state(p)?;
        self.finals.insert(p.to_path_buf(), f);
        Ok(())
    }
    fn edit(&mut self, p: &Path, edits: &[TextEdit], enc: Encoding) -> Result<(), ToolError> {
        let Some(text) = self.state(p)? else {
            return Err(ToolError::rejected(format!(
                "the server's edit changes {}, which does not exist; nothing was changed",
                self.ws.display(p)
            )));
        };
        let new = apply_text_edits(&text, edits, enc).map_err(|m| {
            ToolError::rejected(format!(
                "{m} for {}; nothing was changed",
                self.ws.display(p)
            ))
        })?;
        *self.edits.entry(p.to_path_buf()).or_default() += edits.len();
        self.set(p, Final::Text(new))
    }
}

/// The plan of the server's `edit` (`changes` or `documentChanges`, file operations
/// included), applied in memory to the files' current content, every path through the
/// workspace jail.
pub(crate) async fn plan_edit(
    run: &Run,
    client: &LspClient,
    edit: &WorkspaceEdit,
) -> Result<Plan, ToolError> {
    let mut plan = Plan {
        ws: run.workspace().clone(),
        original: BTreeMap::new(),
        finals: BTreeMap::new(),
        edits: BTreeMap::new(),
        created: Vec::new(),
        deleted: Vec::new(),
    };
    let enc = client.encoding;
    let unwrap = |v: &[OneOf<TextEdit, lsp_types::AnnotatedTextEdit>]| -> Vec<TextEdit> {
        v.iter()
            .map(|e| match e {
                OneOf::Left(t) => t.clone(),
                OneOf::Right(a) => a.text_edit.clone(),
            })
            .collect()
    };
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => {
            for e in v {
                let p = jail(run, &e.text_document.uri)?;
                plan.edit(&p, &unwrap(&e.edits), enc)?;
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(e) => {
                        let p = jail(run, &e.text_document.uri)?;
                        plan.edit(&p, &unwrap(&e.edits), enc)?;
                    }
                    DocumentChangeOperation::Op(ResourceOp::Create(c)) => {
                        let p = jail(run, &c.uri)?;
                        let exists = plan.state(&p)?.is_some();
                        let o = c.options.as_ref();
                        if exists && !o.and_then(|o| o.overwrite).unwrap_or(false) {
                            if o.and_then(|o| o.ignore_if_exists).unwrap_or(false) {
                                continue;
                            }
                            return Err(ToolError::rejected(format!(
                                "the server's edit creates {}, which exists; nothing was changed",
                                run.workspace().display(&p)
                            )));
                        }
                        plan.set(&p, Final::Text(String::new()))?;
                        plan.created.push(p);
                    }
                    DocumentChangeOperation::Op(ResourceOp::Rename(r)) => {
                        let from = jail(run, &r.old_uri)?;
                        let to = jail(run, &r.new_uri)?;
                        if from.is_dir() {
                            return Err(ToolError::rejected(
                                "the server's edit renames a folder, which this tool does not apply; nothing was changed",
                            ));
                        }
                        let Some(text) = plan.state(&from)? else {
                            return Err(ToolError::rejected(format!(
                                "the server's edit renames {}, which does not exist; nothing was changed",
                                run.workspace().display(&from)
                            )));
                        };
                        let o = r.options.as_ref();
                        if plan.state(&to)?.is_some()
                            && !o.and_then(|o| o.overwrite).unwrap_or(false)
                        {
                            if o.and_then(|o| o.ignore_if_exists).unwrap_or(false) {
                                continue;
                            }
                            return Err(ToolError::rejected(format!(
                                "the server's edit renames onto {}, which exists; nothing was changed",
                                run.workspace().display(&to)
                            )));
                        }
                        plan.set(&from, Final::Absent)?;
                        plan.set(&to, Final::Text(text))?;
                        plan.deleted.push(from);
                        plan.created.push(to);
                    }
                    DocumentChangeOperation::Op(ResourceOp::Delete(d)) => {
                        let p = jail(run, &d.uri)?;
                        if p.is_dir() {
                            return Err(ToolError::rejected(
                                "the server's edit deletes a folder, which this tool does not apply; nothing was changed",
                            ));
                        }
                        if plan.state(&p)?.is_none() {
                            if d.options
                                .as_ref()
                                .and_then(|o| o.ignore_if_not_exists)
                                .unwrap_or(false)
                            {
                                continue;
                            }
                            return Err(ToolError::rejected(format!(
                                "the server's edit deletes {}, which does not exist; nothing was changed",
                                run.workspace().display(&p)
                            )));
                        }
                        plan.set(&p, Final::Absent)?;
                        plan.deleted.push(p);
                    }
                }
            }
        }
        None => {
            if let Some(changes) = &edit.changes {
                let mut sorted: Vec<_> = changes.iter().collect();
                sorted.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
                for (uri, edits) in sorted {
                    let p = jail(run, uri)?;
                    plan.edit(&p, edits, enc)?;
                }
            }
        }
    }
    Ok(plan)
}

/// Writes the plan under the run's write locks of every file it read or writes: each
/// path is re-resolved through the workspace jail and re-checked against what was planned
/// (any change since rejects the whole rename), then every file is written all or nothing
/// through the safe writer, which restores the files already written (modes included) if
/// a write fails part-way. The lock wait is bounded, and the lock is never held across an
/// await.
pub(crate) fn commit(run: &Run, plan: &Plan) -> Result<(), ToolError> {
    let ws = run.workspace();
    let locked = plan.original.keys().chain(plan.finals.keys()).cloned();
    let guard = PathLocks::for_run(run).lock(locked)?;
    for (p, orig) in &plan.original {
        ws.confirm_resolved(p)?;
        let now = safe_write::read_file_if_exists(ws, p, MAX_UNDO_BYTES)
            .map_err(|e| e.for_file(&ws.display(p)))?;
        if now.as_ref().map(|c| c.bytes.as_slice()) != orig.as_ref().map(|t| t.as_bytes()) {
            return Err(ToolError::rejected(format!(
                "{} changed while the rename was being prepared; nothing was changed — try again",
                ws.display(p)
            )));
        }
    }
    #[cfg(feature = "testing")]
    let fail_at = run
        .state(InjectWriteFailure::default)
        .0
        .load(Ordering::SeqCst);
    #[cfg(not(feature = "testing"))]
    let fail_at = 0;
    let changes: Vec<FileChange> = plan
        .finals
        .iter()
        .filter(|(p, f)| {
            plan.original.get(*p).map(|o| o.as_deref())
                != Some(match f {
                    Final::Text(t) => Some(t.as_str()),
                    Final::Absent => None,
                })
        })
        .map(|(p, f)| match f {
            Final::Text(t) => FileChange::Write {
                path: p.clone(),
                content: t.clone().into_bytes(),
                mode: None,
            },
            Final::Absent => FileChange::Delete { path: p.clone() },
        })
        .collect();
    let fault = |i: usize, _: &FileChange| {
        if fail_at == i + 1 {
            Err(std::io::Error::other("injected write failure"))
        } else {
            Ok(())
        }
    };
    safe_write::apply_all_or_nothing(ws, &guard, &changes, Some(&fault)).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    #[test]
    fn text_edits_apply_back_to_front_and_refuse_overlaps() {
        let t = "héllo old\nold again\n";
        let e = |l, a, b, s: &str| TextEdit {
            range: Range::new(Position::new(l, a), Position::new(l, b)),
            new_text: s.into(),
        };
        let out =
            apply_text_edits(t, &[e(1, 0, 3, "new"), e(0, 6, 9, "new")], Encoding::Utf16).unwrap();
        assert_eq!(out, "héllo new\nnew again\n");
        assert!(apply_text_edits(t, &[e(0, 0, 5, "x"), e(0, 3, 6, "y")], Encoding::Utf16).is_err());
    }
}
