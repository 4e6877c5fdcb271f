//! Files one server alone cannot answer for: in a project with single-file components, a
//! `.ts` file's own tsserver never reads the `.vue` files that import it, and a `.vue`
//! file's own server answers from its side only. So definitions, references and renames
//! also ask the tsserver that carries the framework's plugin
//! ([`crate::servers::framework_tsserver`]), and the answers are merged: locations without
//! duplicates (same file and range), rename edits as their union — one range edited two
//! different ways refuses the rename, naming the file.

use std::collections::BTreeMap;
use std::sync::Arc;

use lsp_types::request::Rename;
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, Location, OneOf, Position, RenameParams,
    TextDocumentIdentifier, TextDocumentPositionParams, TextEdit, Uri, WorkDoneProgressParams,
    WorkspaceEdit,
};
use tools_core::{Run, ToolError};

use crate::client::LspClient;
use crate::client::position::{from_lsp_character, line_of, to_lsp_character};
use crate::error::LspError;
use crate::queries::query::{self, Prepared};
use crate::servers::supervisor::ServerSupervisor;

/// The other servers asked about a prepared query's file.
pub(crate) struct CoServers {
    /// The query as each of them sees it (the file synced into it, the position in its
    /// encoding).
    pub prepared: Vec<Prepared>,
    /// Why a server that should have been asked was not, one line each (these lead the
    /// answer: without them its uses in those files are missing).
    pub missing: Vec<String>,
}

/// The servers beside `p.client` that answer for `p`'s file, started and synced.
pub(crate) async fn others(sup: &ServerSupervisor, p: &Prepared) -> CoServers {
    let mut out = CoServers {
        prepared: Vec::new(),
        missing: Vec::new(),
    };
    let loc = match crate::servers::framework_tsserver::locate(sup, &p.path) {
        Ok(Some(loc)) => loc,
        Ok(None) => return out,
        Err(why) => {
            out.missing.push(format!("({why})"));
            return out;
        }
    };
    if loc.spec.language == p.client.language && loc.root == p.client.root {
        return out;
    }
    let client = match sup.client_at(&loc).await {
        Ok(c) => c,
        Err(e) => {
            out.missing.push(format!(
                "(the {} server did not start, so files only it reads were not searched: {e})",
                loc.spec.language
            ));
            return out;
        }
    };
    match prepared_for(sup, p, client).await {
        Ok(q) => out.prepared.push(q),
        Err(e) => out.missing.push(format!(
            "(the {} server could not open {}: {e})",
            loc.spec.language,
            tools_core::display_relative(sup.workspace(), &p.path)
        )),
    }
    out
}

/// `p` as `client` sees it: the file synced into it and the same place in its encoding.
pub(crate) async fn prepared_for(
    sup: &ServerSupervisor,
    p: &Prepared,
    client: Arc<LspClient>,
) -> Result<Prepared, ToolError> {
    let doc = query::synced(sup, &client, &p.path).await?;
    // Its part is what the first server cannot see at all, so an answer from a project it
    // has not loaded yet (tsserver's syntax-only answers, the file itself) is no part: it
    // is waited for, up to the indexing bound, and the answer says if that ran out.
    client.wait_ready().await;
    let pos = same_place(&p.doc.text, p.pos, p.client.encoding, client.encoding);
    let ready = !client.indexing();
    Ok(Prepared {
        path: p.path.clone(),
        client,
        doc,
        pos,
        symbol: p.symbol.clone(),
        ready,
    })
}

/// A co-server as answers name it: its program and the languages it was started for
/// (`typescript-language-server (typescript+svelte)`), since it is often the same program
/// as the file's own server.
pub(crate) fn named(client: &LspClient) -> String {
    format!("{} ({})", client.server, client.language)
}

/// `pos` (in `from`'s encoding) in the encoding `to`.
fn same_place(
    text: &str,
    pos: Position,
    from: crate::client::position::Encoding,
    to: crate::client::position::Encoding,
) -> Position {
    let Some(line) = line_of(text, pos.line as usize) else {
        return pos;
    };
    let byte = from_lsp_character(line, pos.character, from);
    Position {
        line: pos.line,
        character: to_lsp_character(line, byte, to),
    }
}

/// `locs` (the answer of `p`'s own server) merged with what `ask` gets from every other
/// server of `p`'s file; with the servers asked, and the lines that lead the answer (a
/// server not asked or failing, one still indexing).
pub(crate) async fn merged<F>(
    sup: &ServerSupervisor,
    p: &Prepared,
    mut locs: Vec<Location>,
    ask: F,
) -> (Vec<Location>, Vec<String>, Vec<String>)
where
    F: for<'a> Fn(&'a Prepared) -> BoxFuture<'a, Result<Vec<Location>, ToolError>>,
{
    let co = others(sup, p).await;
    let mut asked = vec![p.client.server.clone()];
    let mut leads = co.missing;
    for q in &co.prepared {
        asked.push(named(&q.client));
        match ask(q).await {
            Ok(more) => {
                locs = merge_locations(locs, more);
                // Still indexing once it answered: its part may be incomplete.
                leads.extend(query::indexing_caveat(&q.client));
            }
            Err(e) => leads.push(format!(
                "({} was asked too and failed, so files only it reads may be missing: {e})",
                named(&q.client)
            )),
        }
    }
    (locs, asked, leads)
}

/// A future borrowed from a prepared query.
pub(crate) type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// `a` and `b` as one list: sorted by file and position, each place once.
pub(crate) fn merge_locations(a: Vec<Location>, b: Vec<Location>) -> Vec<Location> {
    let mut v: Vec<Location> = a.into_iter().chain(b).collect();
    v.sort_by(|x, y| {
        (
            x.uri.as_str(),
            x.range.start.line,
            x.range.start.character,
            x.range.end.line,
            x.range.end.character,
        )
            .cmp(&(
                y.uri.as_str(),
                y.range.start.line,
                y.range.start.character,
                y.range.end.line,
                y.range.end.character,
            ))
    });
    v.dedup_by(|x, y| x.uri == y.uri && x.range == y.range);
    v
}

/// What the other servers added to a rename.
#[derive(Default)]
pub(crate) struct RenameUnion {
    /// The servers whose edits were merged in.
    pub servers: Vec<String>,
    /// `file:line` of each edit they added that the first server's edit did not have.
    pub added: Vec<String>,
    /// Lines that lead the answer (a server that should have been asked and was not).
    pub missing: Vec<String>,
    /// The other servers' views of the query, for checking after writing.
    pub prepared: Vec<Prepared>,
}

/// Asks every other server of `p`'s file for the same rename and merges its edits into
/// `edit`. A server that refuses, or whose edit changes one range of a file differently,
/// refuses the whole rename (nothing is written): the union must be what every server
/// agrees on.
pub(crate) async fn union_rename(
    sup: &ServerSupervisor,
    run: &Run,
    p: &Prepared,
    new_name: &str,
    here: &str,
    edit: &mut WorkspaceEdit,
) -> Result<RenameUnion, ToolError> {
    let co = others(sup, p).await;
    let mut union = RenameUnion {
        missing: co.missing,
        ..RenameUnion::default()
    };
    for q in co.prepared {
        let c = &q.client;
        if c.encoding != p.client.encoding {
            return Err(ToolError::rejected(format!(
                "{} and {} count columns differently, so their edits for renaming {here} cannot be merged; nothing was changed",
                p.client.server,
                named(c)
            )));
        }
        let params = RenameParams {
            text_document_position: TextDocumentPositionParams {
                text_document: TextDocumentIdentifier {
                    uri: q.doc.uri.clone(),
                },
                position: q.pos,
            },
            new_name: new_name.to_string(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        };
        let theirs = match query::with_warmup(
            c,
            |e: &Option<WorkspaceEdit>| e.is_none(),
            || c.request::<Rename>(params.clone()),
        )
        .await
        {
            Ok(Some(e)) => e,
            Ok(None) => {
                return Err(ToolError::rejected(format!(
                    "{} (which reads the files {} does not) returned no edit for renaming {here}, so uses only it sees would be left behind; nothing was changed",
                    named(c),
                    p.client.server
                )));
            }
            Err(LspError::Server { message, .. }) => {
                return Err(ToolError::rejected(format!(
                    "{} (which reads the files {} does not) refused to rename {here}: {message}; nothing was changed",
                    named(c),
                    p.client.server
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let added = merge_edits(edit, &theirs).map_err(|file| {
            let shown = crate::client::uri_to_path(&file)
                .map(|f| run.workspace().display(&f))
                .unwrap_or_else(|| file.as_str().to_string());
            ToolError::rejected(format!(
                "{} and {} edit the same place of {shown} differently for renaming {here}; nothing was changed",
                p.client.server,
                named(c)
            ))
        })?;
        // Listed as the reader reads them (a server may answer in any order).
        let mut added = added;
        added.sort_by(|(u1, e1), (u2, e2)| {
            (u1.as_str(), e1.range.start.line, e1.range.start.character).cmp(&(
                u2.as_str(),
                e2.range.start.line,
                e2.range.start.character,
            ))
        });
        for (uri, e) in added {
            let shown = crate::client::uri_to_path(&uri)
                .map(|f| run.workspace().display(&f))
                .unwrap_or_else(|| uri.as_str().to_string());
            union
                .added
                .push(format!("{shown}:{}", e.range.start.line + 1));
        }
        union.servers.push(named(c));
        union.prepared.push(q);
    }
    Ok(union)
}

/// The text edits of `edit` by file, in order (resource operations are not text edits).
fn text_edits(edit: &WorkspaceEdit) -> BTreeMap<String, (Uri, Vec<TextEdit>)> {
    let mut out: BTreeMap<String, (Uri, Vec<TextEdit>)> = BTreeMap::new();
    let mut push = |uri: &Uri, edits: Vec<TextEdit>| {
        out.entry(uri.as_str().to_string())
            .or_insert_with(|| (uri.clone(), Vec::new()))
            .1
            .extend(edits);
    };
    let plain = |e: &OneOf<TextEdit, lsp_types::AnnotatedTextEdit>| match e {
        OneOf::Left(t) => t.clone(),
        OneOf::Right(a) => a.text_edit.clone(),
    };
    if let Some(changes) = &edit.changes {
        for (uri, edits) in changes {
            push(uri, edits.clone());
        }
    }
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => {
            for e in v {
                push(&e.text_document.uri, e.edits.iter().map(plain).collect());
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                if let DocumentChangeOperation::Edit(e) = op {
                    push(&e.text_document.uri, e.edits.iter().map(plain).collect());
                }
            }
        }
        None => {}
    }
    out
}

/// Whether two edits of one file touch overlapping text (two insertions at one point
/// count as overlapping: their order would be a guess).
fn overlap(a: &TextEdit, b: &TextEdit) -> bool {
    let (s1, e1) = (a.range.start, a.range.end);
    let (s2, e2) = (b.range.start, b.range.end);
    let key = |p: Position| (p.line, p.character);
    if key(s1) == key(s2) {
        return true;
    }
    key(s1) < key(e2) && key(s2) < key(e1)
}

/// Adds to `ours` every edit of `theirs` it lacks; the edits added, by file. An edit of
/// `theirs` that overlaps one of `ours` without being the same edit makes it `Err` with
/// that file, and `ours` is left as it was.
// `WorkspaceEdit::changes` is keyed by `Uri` (lsp-types' own type): its interior cache
// never changes the key's hash, which is what the lint fears.
#[allow(clippy::mutable_key_type)]
fn merge_edits(
    ours: &mut WorkspaceEdit,
    theirs: &WorkspaceEdit,
) -> Result<Vec<(Uri, TextEdit)>, Uri> {
    let mine = text_edits(ours);
    let mut added: Vec<(Uri, TextEdit)> = Vec::new();
    for (key, (uri, edits)) in text_edits(theirs) {
        let have: &[TextEdit] = mine.get(&key).map(|(_, e)| e.as_slice()).unwrap_or(&[]);
        for e in edits {
            if have.contains(&e) || added.iter().any(|(u, a)| u == &uri && a == &e) {
                continue;
            }
            let clash = have.iter().any(|h| overlap(h, &e))
                || added.iter().any(|(u, a)| u == &uri && overlap(a, &e));
            if clash {
                return Err(uri);
            }
            added.push((uri.clone(), e));
        }
    }
    if added.is_empty() {
        return Ok(added);
    }
    // The additions go where the edit keeps its text edits: beside `changes`, or as one
    // more document edit of each file when the server answered with `documentChanges`.
    match &mut ours.document_changes {
        None => {
            let changes = ours.changes.get_or_insert_with(Default::default);
            for (uri, e) in &added {
                changes.entry(uri.clone()).or_default().push(e.clone());
            }
        }
        Some(dc) => {
            let mut by_file: BTreeMap<String, (Uri, Vec<TextEdit>)> = BTreeMap::new();
            for (uri, e) in &added {
                by_file
                    .entry(uri.as_str().to_string())
                    .or_insert_with(|| (uri.clone(), Vec::new()))
                    .1
                    .push(e.clone());
            }
            let docs = by_file
                .into_values()
                .map(|(uri, edits)| lsp_types::TextDocumentEdit {
                    text_document: lsp_types::OptionalVersionedTextDocumentIdentifier {
                        uri,
                        version: None,
                    },
                    edits: edits.into_iter().map(OneOf::Left).collect(),
                });
            match dc {
                DocumentChanges::Edits(v) => v.extend(docs),
                DocumentChanges::Operations(ops) => {
                    ops.extend(docs.map(DocumentChangeOperation::Edit))
                }
            }
        }
    }
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }
    fn te(line: u32, from: u32, to: u32, text: &str) -> TextEdit {
        TextEdit {
            range: Range {
                start: Position::new(line, from),
                end: Position::new(line, to),
            },
            new_text: text.into(),
        }
    }
    fn changes(files: &[(&str, Vec<TextEdit>)]) -> WorkspaceEdit {
        WorkspaceEdit {
            changes: Some(files.iter().map(|(u, e)| (uri(u), e.clone())).collect()),
            ..WorkspaceEdit::default()
        }
    }

    #[test]
    fn the_union_adds_only_edits_the_first_lacks() {
        let mut ours = changes(&[("file:///w/a.ts", vec![te(5, 16, 26, "useTally")])]);
        let theirs = changes(&[
            ("file:///w/a.ts", vec![te(5, 16, 26, "useTally")]),
            (
                "file:///w/B.vue",
                vec![te(1, 9, 19, "useTally"), te(3, 14, 24, "useTally")],
            ),
        ]);
        let added = merge_edits(&mut ours, &theirs).unwrap();
        assert_eq!(
            added,
            vec![
                (uri("file:///w/B.vue"), te(1, 9, 19, "useTally")),
                (uri("file:///w/B.vue"), te(3, 14, 24, "useTally")),
            ]
        );
        let all = text_edits(&ours);
        assert_eq!(all["file:///w/a.ts"].1, vec![te(5, 16, 26, "useTally")]);
        assert_eq!(all["file:///w/B.vue"].1.len(), 2);
    }

    #[test]
    fn one_range_edited_two_ways_is_refused_with_the_file_and_nothing_merged() {
        let mut ours = changes(&[("file:///w/a.ts", vec![te(5, 16, 26, "useTally")])]);
        let before = ours.clone();
        let theirs = changes(&[
            ("file:///w/B.vue", vec![te(1, 9, 19, "useTally")]),
            (
                "file:///w/a.ts",
                vec![te(5, 16, 26, "useTally as useCounter")],
            ),
        ]);
        assert_eq!(merge_edits(&mut ours, &theirs), Err(uri("file:///w/a.ts")));
        assert_eq!(ours, before);
        // An overlap that is not the same range is a conflict too.
        let theirs = changes(&[("file:///w/a.ts", vec![te(5, 20, 30, "x")])]);
        assert!(merge_edits(&mut ours, &theirs).is_err());
    }

    #[test]
    fn additions_to_document_changes_become_document_edits() {
        let mut ours = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Edits(vec![lsp_types::TextDocumentEdit {
                text_document: lsp_types::OptionalVersionedTextDocumentIdentifier {
                    uri: uri("file:///w/a.vue"),
                    version: Some(3),
                },
                edits: vec![OneOf::Left(te(0, 0, 3, "new"))],
            }])),
            ..WorkspaceEdit::default()
        };
        let theirs = changes(&[("file:///w/b.ts", vec![te(2, 0, 3, "new")])]);
        merge_edits(&mut ours, &theirs).unwrap();
        assert!(ours.changes.is_none());
        let all = text_edits(&ours);
        assert_eq!(all.len(), 2);
        assert_eq!(all["file:///w/b.ts"].1, vec![te(2, 0, 3, "new")]);
    }

    #[test]
    fn merged_locations_are_sorted_and_each_place_once() {
        let l = |u: &str, line: u32, c: u32| Location {
            uri: uri(u),
            range: Range {
                start: Position::new(line, c),
                end: Position::new(line, c + 3),
            },
        };
        let merged = merge_locations(
            vec![l("file:///w/b.vue", 3, 1), l("file:///w/a.ts", 1, 1)],
            vec![l("file:///w/a.ts", 1, 1), l("file:///w/a.ts", 0, 4)],
        );
        assert_eq!(
            merged,
            vec![
                l("file:///w/a.ts", 0, 4),
                l("file:///w/a.ts", 1, 1),
                l("file:///w/b.vue", 3, 1)
            ]
        );
    }
}
