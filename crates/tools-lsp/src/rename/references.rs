//! References a rename's edit would leave behind.
//!
//! Some servers' rename misses uses the server itself knows about (pyright has left imports
//! in test files unrenamed), and the build breaks only later. So before anything is
//! written, the server's references to the symbol are compared with its edit: a reference
//! the edit does not cover and whose text *is* the old name is added to the same
//! all-or-nothing edit; one whose text is something else (an alias such as
//! `import area as surface_of`, which keeps working) is left alone, without a warning. A
//! reference that cannot be covered (outside the workspace, in a file that cannot be read)
//! refuses the whole rename, naming the file and line. When references are added, an
//! import the server renamed by aliasing it (`old as new`) takes the plain new name, since
//! the export is renamed too.

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_types::request::References;
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, Location, OneOf,
    OptionalVersionedTextDocumentIdentifier, PartialResultParams, Range, ReferenceContext,
    ReferenceParams, TextDocumentEdit, TextDocumentIdentifier, TextDocumentPositionParams,
    TextEdit, Uri, WorkDoneProgressParams, WorkspaceEdit,
};
use tools_core::{Run, ToolError};

use crate::client::position::{Encoding, offset_of};
use crate::client::{LspClient, uri_to_path};
use crate::queries::query::Prepared;

/// What the comparison added.
#[derive(Debug, Default)]
pub struct AddedReferences {
    /// `file:line` of each reference added to the edit.
    pub added: Vec<String>,
    /// The references as the server saw them before anything was written, for checking
    /// the renamed project against (`None` when the server gave none to compare).
    pub before: Option<ReferencesBefore>,
}

/// The symbol's references before the rename.
#[derive(Debug, Clone)]
pub struct ReferencesBefore {
    /// The old name, as written at the position asked about.
    pub old_name: String,
    /// The reference at the position asked about (the one the rename started from).
    pub origin: Location,
    /// Every reference's file and 0-based line (a rename of an identifier moves none
    /// to another line).
    pub lines: Vec<(PathBuf, u32)>,
}

/// Whether `inner` lies within `outer`.
pub(crate) fn contains(outer: &Range, inner: &Range) -> bool {
    (outer.start.line, outer.start.character) <= (inner.start.line, inner.start.character)
        && (inner.end.line, inner.end.character) <= (outer.end.line, outer.end.character)
}

/// The text `r` spans in `text`.
pub(crate) fn text_at(text: &str, r: &Range, enc: Encoding) -> String {
    let s = offset_of(text, r.start.line, r.start.character, enc);
    let e = offset_of(text, r.end.line, r.end.character, enc);
    text.get(s..e.max(s)).unwrap_or("").to_string()
}

/// The text edits of `edit` by URI (resource operations make it `None`: a rename that
/// moves files is left as the server planned it).
pub(crate) fn edits_by_uri(edit: &WorkspaceEdit) -> Option<HashMap<String, Vec<Range>>> {
    let mut out: HashMap<String, Vec<Range>> = HashMap::new();
    let mut push = |uri: &Uri, ranges: Vec<Range>| {
        out.entry(uri.as_str().to_string())
            .or_default()
            .extend(ranges);
    };
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => {
            for e in v {
                push(&e.text_document.uri, e.edits.iter().map(range_of).collect());
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(e) => {
                        push(&e.text_document.uri, e.edits.iter().map(range_of).collect())
                    }
                    DocumentChangeOperation::Op(_) => return None,
                }
            }
        }
        None => {
            for (uri, edits) in edit.changes.iter().flatten() {
                push(uri, edits.iter().map(|e| e.range).collect());
            }
        }
    }
    Some(out)
}

fn range_of(e: &OneOf<TextEdit, lsp_types::AnnotatedTextEdit>) -> Range {
    match e {
        OneOf::Left(t) => t.range,
        OneOf::Right(a) => a.text_edit.range,
    }
}

pub(crate) fn add_edit(edit: &mut WorkspaceEdit, uri: Uri, te: TextEdit) {
    match &mut edit.document_changes {
        Some(DocumentChanges::Edits(v)) => {
            if let Some(e) = v.iter_mut().find(|e| e.text_document.uri == uri) {
                e.edits.push(OneOf::Left(te));
            } else {
                v.push(TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
                    edits: vec![OneOf::Left(te)],
                });
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
                edits: vec![OneOf::Left(te)],
            }));
        }
        None => {
            edit.changes
                .get_or_insert_with(HashMap::new)
                .entry(uri)
                .or_default()
                .push(te);
        }
    }
}

/// The places `edit` changes, as locations: the references from before of a server whose
/// rename edits exactly its references (`None` when the edit moves files).
pub fn locations_of(edit: &WorkspaceEdit) -> Option<Vec<Location>> {
    let by_uri = edits_by_uri(edit)?;
    let mut out = Vec::new();
    for (uri, ranges) in by_uri {
        let Ok(uri) = uri.parse::<Uri>() else {
            continue;
        };
        out.extend(ranges.into_iter().map(|range| Location {
            uri: uri.clone(),
            range,
        }));
    }
    Some(out)
}

/// The server's references of the symbol at `p` (declaration included), `None` when it
/// gives none or has no references at all. Asked beside the rename itself, so the server
/// answers both in one go.
pub async fn ask_references(client: &LspClient, p: &Prepared) -> Option<Vec<Location>> {
    client.caps.references_provider.as_ref()?;
    let params = ReferenceParams {
        text_document_position: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier {
                uri: p.doc.uri.clone(),
            },
            position: p.pos,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: ReferenceContext {
            include_declaration: true,
        },
    };
    client.request::<References>(params).await.ok().flatten()
}

/// Adds to `edit` the references `refs` (the server's, asked before anything was written)
/// under the old name that it does not change (see the module doc).
pub fn cover_references(
    run: &Run,
    client: &LspClient,
    p: &Prepared,
    new_name: &str,
    edit: &mut WorkspaceEdit,
    refs: Option<Vec<Location>>,
) -> Result<AddedReferences, ToolError> {
    let mut out = AddedReferences::default();
    let Some(covered) = edits_by_uri(edit) else {
        return Ok(out);
    };
    let Some(refs) = refs else {
        return Ok(out);
    };
    // The old name: the text of the reference at the position asked about.
    let here = Range::new(p.pos, p.pos);
    let Some(origin) = refs
        .iter()
        .find(|l| l.uri == p.doc.uri && contains(&l.range, &here))
        .cloned()
    else {
        return Ok(out);
    };
    let old_name = text_at(&p.doc.text, &origin.range, client.encoding);
    if old_name.is_empty() {
        return Ok(out);
    }
    out.before = Some(ReferencesBefore {
        old_name: old_name.clone(),
        origin,
        lines: refs
            .iter()
            .filter_map(|l| Some((uri_to_path(&l.uri)?, l.range.start.line)))
            .collect(),
    });
    let mut texts: HashMap<PathBuf, String> = HashMap::new();
    let mut added: Vec<(Uri, TextEdit, String)> = Vec::new();
    for Location { uri, range } in refs {
        let is_covered = covered
            .get(uri.as_str())
            .is_some_and(|rs| rs.iter().any(|r| contains(r, &range)));
        if is_covered {
            continue;
        }
        let where_ = |path: &str| format!("{path}:{}", range.start.line + 1);
        let Some(path) = uri_to_path(&uri) else {
            return Err(ToolError::rejected(format!(
                "{} still refers to `{old_name}` at {} (not a file), which the rename would leave broken; nothing was changed",
                client.server,
                where_(uri.as_str())
            )));
        };
        let Ok(path) = run.workspace().resolve(&path.to_string_lossy()) else {
            return Err(ToolError::rejected(format!(
                "{} still refers to `{old_name}` at {}, outside the workspace, which the rename would leave broken; nothing was changed",
                client.server,
                where_(&path.display().to_string())
            )));
        };
        if !texts.contains_key(&path) {
            let read = tools_core::safe_write::read_file(
                run.workspace(),
                &path,
                tools_core::safe_write::MAX_UNDO_BYTES,
            )
            .ok()
            .and_then(|c| String::from_utf8(c.bytes).ok());
            let Some(t) = read else {
                return Err(ToolError::rejected(format!(
                    "{} still refers to `{old_name}` at {}, a file that cannot be read as text; nothing was changed",
                    client.server,
                    where_(&run.workspace().display(&path))
                )));
            };
            texts.insert(path.clone(), t);
        }
        let text = texts.get(&path).map(String::as_str).unwrap_or("");
        // Another text here is an alias or a re-export under its own name: it stays valid.
        if text_at(text, &range, client.encoding) != old_name {
            continue;
        }
        let disp = where_(&run.workspace().display(&path));
        added.push((
            uri,
            TextEdit {
                range,
                new_text: new_name.to_string(),
            },
            disp,
        ));
    }
    // A server that renames a use by aliasing its import (svelte-language-server answers
    // `import { old as new }` from a component) left the export alone; with the export
    // renamed too, the alias would import a name that is gone: it becomes the plain name.
    if !added.is_empty() {
        unalias(edit, &format!("{old_name} as {new_name}"), new_name);
    }
    // Listed as the reader reads them (a server may answer in any order).
    added.sort_by(|(u1, e1, _), (u2, e2, _)| {
        (u1.as_str(), e1.range.start.line, e1.range.start.character).cmp(&(
            u2.as_str(),
            e2.range.start.line,
            e2.range.start.character,
        ))
    });
    for (uri, te, disp) in added {
        add_edit(edit, uri, te);
        out.added.push(disp);
    }
    Ok(out)
}

/// Every text edit of `edit` that writes exactly `alias` writes `plain` instead.
fn unalias(edit: &mut WorkspaceEdit, alias: &str, plain: &str) {
    let fix = |t: &mut TextEdit| {
        if t.new_text == alias {
            t.new_text = plain.to_string();
        }
    };
    let fix_doc = |d: &mut TextDocumentEdit| {
        for e in &mut d.edits {
            match e {
                OneOf::Left(t) => fix(t),
                OneOf::Right(a) => fix(&mut a.text_edit),
            }
        }
    };
    for edits in edit.changes.iter_mut().flat_map(|c| c.values_mut()) {
        edits.iter_mut().for_each(fix);
    }
    match &mut edit.document_changes {
        Some(DocumentChanges::Edits(v)) => v.iter_mut().for_each(fix_doc),
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                if let DocumentChangeOperation::Edit(d) = op {
                    fix_doc(d);
                }
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aliased_import_takes_the_plain_name_and_other_edits_stay() {
        let te = |line: u32, text: &str| TextEdit {
            range: Range::new(
                lsp_types::Position::new(line, 11),
                lsp_types::Position::new(line, 20),
            ),
            new_text: text.into(),
        };
        let uri: Uri = "file:///w/src/lib/Clicker.svelte".parse().unwrap();
        let mut edit = WorkspaceEdit {
            changes: Some(HashMap::from([(
                uri.clone(),
                vec![te(1, "makeTally as makeCounter"), te(3, "makeCounter")],
            )])),
            ..WorkspaceEdit::default()
        };
        unalias(&mut edit, "makeTally as makeCounter", "makeCounter");
        assert_eq!(
            edit.changes.unwrap()[&uri],
            vec![te(1, "makeCounter"), te(3, "makeCounter")]
        );
        let mut docs = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: Some(2),
                },
                edits: vec![OneOf::Left(te(1, "a as b"))],
            }])),
            ..WorkspaceEdit::default()
        };
        unalias(&mut docs, "a as b", "b");
        let Some(DocumentChanges::Edits(v)) = docs.document_changes else {
            panic!("document changes lost");
        };
        assert_eq!(v[0].edits, vec![OneOf::Left(te(1, "b"))]);
    }
}
