//! A rename checked after it was written.
//!
//! The check before writing (the `rename_refs` module) trusts the server's view of the
//! project as it was. After the files are written and the server has them, the symbol is
//! asked for its references again, now under the new name, and compared with the
//! references from before, place by place (file and line: renaming an identifier moves
//! nothing to another line). A place the server linked to the symbol before and no longer
//! does is one the rename left behind — typically a use still spelt the old way, now
//! pointing at nothing — and so is a reference whose text is still the old name. Both are
//! named in the answer, next to the write's diagnostics, instead of passing for success.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_types::request::References;
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, PartialResultParams, Position,
    ReferenceContext, ReferenceParams, TextDocumentIdentifier, TextDocumentPositionParams,
    TextEdit, Uri, WorkDoneProgressParams, WorkspaceEdit,
};

use tools_core::{Workspace, safe_write};

use crate::client::position::{Encoding, from_lsp_character, line_of, to_lsp_character};
use crate::client::{LspClient, ask_again_later, uri_to_path};
use crate::error::LspError;
use crate::rename::references::{ReferencesBefore, text_at};

/// How long the references under the new name are asked again while the server answers
/// "content modified" (it is still taking in the written files).
const ASK_AGAIN_FOR: Duration = Duration::from_secs(20);

/// What the check after writing found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenameVerified {
    /// References before the rename.
    pub before: usize,
    /// References under the new name after it.
    pub after: usize,
    /// Places (file, 0-based line) the server linked to the symbol before and no longer
    /// does, once per missing reference.
    pub lost: Vec<(PathBuf, u32)>,
    /// References after the rename whose text is still the old name.
    pub old_name_left: Vec<(PathBuf, u32)>,
}

impl RenameVerified {
    /// Whether every reference from before is a reference under the new name.
    pub fn is_clean(&self) -> bool {
        self.lost.is_empty() && self.old_name_left.is_empty()
    }
}

/// The text edits of `edit` for `uri`; `None` when the edit moves, creates or deletes
/// files (positions from before no longer name the same places).
fn edits_for(edit: &WorkspaceEdit, uri: &Uri) -> Option<Vec<TextEdit>> {
    let unwrap = |e: &OneOf<TextEdit, lsp_types::AnnotatedTextEdit>| match e {
        OneOf::Left(t) => t.clone(),
        OneOf::Right(a) => a.text_edit.clone(),
    };
    let mut out = Vec::new();
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => {
            for e in v.iter().filter(|e| e.text_document.uri == *uri) {
                out.extend(e.edits.iter().map(unwrap));
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(e) if e.text_document.uri == *uri => {
                        out.extend(e.edits.iter().map(unwrap));
                    }
                    DocumentChangeOperation::Edit(_) => {}
                    DocumentChangeOperation::Op(_) => return None,
                }
            }
        }
        None => {
            if let Some(v) = edit.changes.as_ref().and_then(|c| c.get(uri)) {
                out.extend(v.iter().cloned());
            }
        }
    }
    Some(out)
}

/// Whether every text edit of `edit` stays on one line (so lines keep their numbers).
fn keeps_lines(edit: &WorkspaceEdit) -> bool {
    let one_line =
        |t: &TextEdit| t.range.start.line == t.range.end.line && !t.new_text.contains('\n');
    let all = |v: &[OneOf<TextEdit, lsp_types::AnnotatedTextEdit>]| {
        v.iter().all(|e| match e {
            OneOf::Left(t) => one_line(t),
            OneOf::Right(a) => one_line(&a.text_edit),
        })
    };
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => v.iter().all(|e| all(&e.edits)),
        Some(DocumentChanges::Operations(ops)) => ops.iter().all(|op| match op {
            DocumentChangeOperation::Edit(e) => all(&e.edits),
            DocumentChangeOperation::Op(_) => false,
        }),
        None => edit
            .changes
            .iter()
            .flatten()
            .all(|(_, v)| v.iter().all(one_line)),
    }
}

/// Where the start of `at` (a position in `old`) is in the text after `edits` were applied
/// to `old`: only edits earlier on the same line move it.
pub fn position_after(old: &str, edits: &[TextEdit], at: Position, enc: Encoding) -> Position {
    let line = line_of(old, at.line as usize).unwrap_or("");
    let start = from_lsp_character(line, at.character, enc);
    let mut before_start: Vec<&TextEdit> = edits
        .iter()
        .filter(|e| e.range.start.line == at.line && e.range.end.line == at.line)
        .filter(|e| from_lsp_character(line, e.range.end.character, enc) <= start)
        .collect();
    before_start.sort_by_key(|e| e.range.start.character);
    let mut new_line = String::new();
    let mut copied = 0;
    for e in before_start {
        let s = from_lsp_character(line, e.range.start.character, enc);
        let t = from_lsp_character(line, e.range.end.character, enc);
        if s < copied {
            continue;
        }
        new_line.push_str(&line[copied..s]);
        new_line.push_str(&e.new_text);
        copied = t.max(s);
    }
    new_line.push_str(&line[copied.min(start)..start]);
    Position::new(at.line, to_lsp_character(&new_line, new_line.len(), enc))
}

/// Asks `client` for the references at `at` in `path` (declaration included), asking
/// again while it answers "content modified".
async fn references_at(
    client: &LspClient,
    uri: &Uri,
    at: Position,
) -> Result<Vec<lsp_types::Location>, LspError> {
    let params = ReferenceParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            position: at,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: ReferenceContext {
            include_declaration: true,
        },
    };
    let until = Instant::now() + ASK_AGAIN_FOR;
    loop {
        match client.request::<References>(params.clone()).await {
            Err(LspError::Server { code, .. })
                if ask_again_later(code) && Instant::now() < until =>
            {
                tokio::time::sleep(Duration::from_millis(300)).await;
                client.wait_ready().await;
            }
            other => return other.map(Option::unwrap_or_default),
        }
    }
}

/// Checks a written rename against `before` (see the module doc). The written files are
/// synced to `client` first (already done when diagnostics on write observed them).
/// `Err` says why the check could not be made.
pub async fn verify_rename(
    ws: &Workspace,
    client: &LspClient,
    written: &[PathBuf],
    edit: &WorkspaceEdit,
    before: &ReferencesBefore,
    old_origin_text: &str,
) -> Result<RenameVerified, String> {
    if !keeps_lines(edit) {
        return Err("the server's edit moves files or changes lines".into());
    }
    let Some(origin_edits) = edits_for(edit, &before.origin.uri) else {
        return Err("the server's edit moves files".into());
    };
    // Only its own files: a file of another server's language opened in it (a `.svelte`
    // component in tsserver) would be read as its language and report nonsense.
    for p in written.iter().filter(|p| p.exists() && client.reads(p)) {
        client
            .sync_file(p)
            .await
            .map_err(|e| format!("cannot sync {}: {e}", p.display()))?;
    }
    // Asked at once, not after the server's analysis of the renamed project: servers take
    // in the synced files before the next request and compute references on demand (pyright
    // re-checking the whole workspace answers them in the meantime); one still catching up
    // says "content modified" and is asked again.
    let at = position_after(
        old_origin_text,
        &origin_edits,
        before.origin.range.start,
        client.encoding,
    );
    let refs = references_at(client, &before.origin.uri, at)
        .await
        .map_err(|e| e.to_string())?;
    let after: Vec<(PathBuf, u32)> = refs
        .iter()
        .filter_map(|l| Some((uri_to_path(&l.uri)?, l.range.start.line)))
        .collect();
    let mut texts: HashMap<PathBuf, String> = HashMap::new();
    let mut old_name_left = Vec::new();
    for l in &refs {
        let Some(path) = uri_to_path(&l.uri) else {
            continue;
        };
        if !texts.contains_key(&path) {
            texts.insert(path.clone(), read_text(ws, &path));
        }
        let text = texts.get(&path).map(String::as_str).unwrap_or("");
        if text_at(text, &l.range, client.encoding) == before.old_name {
            old_name_left.push((path, l.range.start.line));
        }
    }
    Ok(RenameVerified {
        before: before.lines.len(),
        after: after.len(),
        lost: missing_places(&before.lines, &after),
        old_name_left,
    })
}

/// The text of `path` through the safe reader (a reference the server names may be
/// outside the workspace, a link or a FIFO: those read as empty).
fn read_text(ws: &Workspace, path: &Path) -> String {
    safe_write::read_file(ws, path, safe_write::MAX_UNDO_BYTES)
        .map(|c| String::from_utf8_lossy(&c.bytes).into_owned())
        .unwrap_or_default()
}

/// The places of `before` that `after` has fewer of (once per missing reference), sorted.
pub fn missing_places(before: &[(PathBuf, u32)], after: &[(PathBuf, u32)]) -> Vec<(PathBuf, u32)> {
    let mut left: HashMap<&(PathBuf, u32), usize> = HashMap::new();
    for p in after {
        *left.entry(p).or_default() += 1;
    }
    let mut lost = Vec::new();
    for p in before {
        match left.get_mut(p) {
            Some(n) if *n > 0 => *n -= 1,
            _ => lost.push(p.clone()),
        }
    }
    lost.sort();
    lost
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn edit(line: u32, a: u32, b: u32, t: &str) -> TextEdit {
        TextEdit {
            range: Range::new(Position::new(line, a), Position::new(line, b)),
            new_text: t.into(),
        }
    }

    #[test]
    fn a_position_moves_by_the_edits_before_it_on_its_line_only() {
        let old = "x\nf(área, área)\n";
        let edits = [edit(1, 2, 6, "surface"), edit(1, 8, 12, "surface")];
        // The second `área` (UTF-16 column 8) is after the first edit: +3.
        let at = position_after(old, &edits, Position::new(1, 8), Encoding::Utf16);
        assert_eq!(at, Position::new(1, 11));
        // The first is not moved; neither is anything on another line.
        assert_eq!(
            position_after(old, &edits, Position::new(1, 2), Encoding::Utf16),
            Position::new(1, 2)
        );
        assert_eq!(
            position_after(old, &edits, Position::new(0, 0), Encoding::Utf16),
            Position::new(0, 0)
        );
        // In UTF-8 columns, `á` counts two.
        let edits8 = [edit(1, 2, 7, "surface")];
        assert_eq!(
            position_after(old, &edits8, Position::new(1, 9), Encoding::Utf8),
            Position::new(1, 11)
        );
    }

    #[test]
    fn places_missing_after_are_counted_per_reference() {
        let p = |f: &str, l| (PathBuf::from(f), l);
        let before = vec![p("a", 1), p("a", 1), p("b", 3), p("c", 0)];
        let after = vec![p("a", 1), p("c", 0), p("d", 9)];
        assert_eq!(missing_places(&before, &after), vec![p("a", 1), p("b", 3)]);
        assert!(missing_places(&before, &before).is_empty());
    }
}
