//! What a write changed, as the server names it: the items (functions, methods, traits,
//! classes) whose text the write touched, and the files that use or implement them.
//!
//! A server that diagnoses only open documents (rust-analyzer's own checks, tsserver,
//! clangd) never reports a caller or an implementor nobody opened, and even a server that
//! checks the whole workspace (pyright) re-checks a caller reached through a re-export only
//! when it gets to it. So before a write is synced, while the server still has the written
//! file at its old text, the items the change falls in are looked up in the server's
//! document symbols, and their references and implementations — computed by the server,
//! through re-exports and aliases — give the files whose errors the write may cause. Those
//! are opened before the write, so what the write breaks in them is its own news.
//!
//! Everything here is bounded: the number of items, of files, and the time the server may
//! take to answer (a server still loading its project answers late; what it has not
//! answered by then is left out, never waited for past the bound).

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_types::request::{DocumentSymbolRequest, GotoImplementation, References};
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, GotoDefinitionParams,
    GotoDefinitionResponse, Location, PartialResultParams, Position, ReferenceContext,
    ReferenceParams, SymbolKind, TextDocumentIdentifier, TextDocumentPositionParams,
    WorkDoneProgressParams,
};
use tokio::time::Instant;

use std::sync::Arc;
use tools_core::{SourceSymbol, SymbolSource};

use crate::client::position::{Encoding, to_lsp_character};
use crate::client::{LspClient, ask_again_later, uri_to_path};
use crate::error::LspError;

/// Most changed items looked up per written file.
pub const ITEMS_CAP: usize = 8;

/// The lines a change touched, 0-based, in the old text: `start..end` (empty for a pure
/// insertion before line `start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangedLines {
    /// First line that differs.
    pub start: u32,
    /// One past the last old line that differs (equal to `start` for an insertion).
    pub end: u32,
}

/// The old lines `new` differs in, found by the common prefix and suffix of lines; `None`
/// when the texts are equal.
pub fn changed_lines(old: &str, new: &str) -> Option<ChangedLines> {
    if old == new {
        return None;
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    // Only a final newline (or line ending) changed: the last line is the change.
    let (start, end) = if prefix == a.len() && prefix == b.len() {
        (prefix.saturating_sub(1), prefix)
    } else {
        (prefix, a.len() - suffix)
    };
    Some(ChangedLines {
        start: u32::try_from(start).unwrap_or(u32::MAX),
        end: u32::try_from(end).unwrap_or(u32::MAX),
    })
}

/// An item the change falls in: its name and where the server points at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedItem {
    /// Its name, as the server gives it.
    pub name: String,
    /// Its kind.
    pub kind: SymbolKind,
    /// The start of its name (where references are asked for).
    pub at: Position,
}

/// Whether a symbol of `kind` holds items of its own a change may fall in (a class's
/// methods, a trait's functions); a function's inner symbols are its locals, which no other
/// file can use, so a change inside a function is the function's.
fn holds_items(kind: SymbolKind) -> bool {
    !matches!(
        kind,
        SymbolKind::FUNCTION | SymbolKind::METHOD | SymbolKind::CONSTRUCTOR
    )
}

/// Whether a symbol spanning lines `first..=last` is touched by `changed`.
fn touched(first: u32, last: u32, changed: ChangedLines) -> bool {
    if changed.start == changed.end {
        // An insertion before line `start`: inside the symbol when it goes in past its
        // first line and no later than its last.
        first < changed.start && changed.start <= last
    } else {
        first < changed.end && changed.start <= last
    }
}

/// The innermost items of `symbols` that `changed` touches (at most [`ITEMS_CAP`]): a
/// change inside a function is that function's, one inside a trait or class but outside
/// its members is the trait's or class's.
pub fn changed_items(symbols: &DocumentSymbolResponse, changed: ChangedLines) -> Vec<ChangedItem> {
    let mut out = Vec::new();
    match symbols {
        DocumentSymbolResponse::Nested(v) => nested(v, changed, &mut out),
        DocumentSymbolResponse::Flat(v) => {
            // A flat list has no nesting to go by: the touched ones that contain no other
            // touched one.
            let hit: Vec<_> = v
                .iter()
                .filter(|s| {
                    touched(
                        s.location.range.start.line,
                        s.location.range.end.line,
                        changed,
                    )
                })
                .collect();
            for s in &hit {
                let r = s.location.range;
                let holds_another = holds_items(s.kind)
                    && hit.iter().any(|o| {
                        let q = o.location.range;
                        !std::ptr::eq(*o, *s)
                            && (r.start.line, r.start.character)
                                <= (q.start.line, q.start.character)
                            && (q.end.line, q.end.character) <= (r.end.line, r.end.character)
                    });
                if !holds_another {
                    out.push(ChangedItem {
                        name: s.name.clone(),
                        kind: s.kind,
                        at: r.start,
                    });
                }
            }
        }
    }
    out.truncate(ITEMS_CAP);
    out
}

fn nested(symbols: &[DocumentSymbol], changed: ChangedLines, out: &mut Vec<ChangedItem>) {
    for s in symbols {
        if !touched(s.range.start.line, s.range.end.line, changed) {
            continue;
        }
        let before = out.len();
        if holds_items(s.kind) {
            nested(s.children.as_deref().unwrap_or_default(), changed, out);
        }
        if out.len() == before {
            out.push(ChangedItem {
                name: s.name.clone(),
                kind: s.kind,
                at: s.selection_range.start,
            });
        }
    }
}

/// The items a change falls in, read from `text` (the written file as the server has it
/// before the write) with the bundled grammars, for a server whose outline question holds
/// its analysis back (see `republish::outline_holds_analysis`). Only a change that lies
/// wholly inside functions or methods is read so: a function's inner symbols are its
/// locals, so the outermost function touched is the item whoever draws the outline, and
/// its name is where the grammars put it. Anything else — a module variable, a class
/// attribute, an import — is the server's to name: `None` says to ask it.
pub async fn items_from_grammar(
    source: &Arc<dyn SymbolSource>,
    path: &Path,
    text: &str,
    changed: ChangedLines,
    enc: Encoding,
) -> Option<Vec<ChangedItem>> {
    let symbols = source.symbols(path, text).await.ok()??.symbols;
    // Counted in bytes: a range's last byte may sit inside a character.
    let line_of = |byte: usize| {
        let before = &text.as_bytes()[..byte.min(text.len())];
        u32::try_from(before.iter().filter(|b| **b == b'\n').count()).unwrap_or(u32::MAX)
    };
    // (first line, last line, symbol) of every function and method, outermost first.
    let callables: Vec<(u32, u32, &SourceSymbol)> = symbols
        .iter()
        .filter(|s| matches!(s.kind.as_str(), "function" | "method"))
        .map(|s| (line_of(s.range.start), line_of(s.range.end.max(1) - 1), s))
        .collect();
    // Not inside another function (a nested one is its container's local).
    let outermost = |&&(_, _, s): &&(u32, u32, &SourceSymbol)| {
        !callables.iter().any(|&(_, _, o)| {
            o.range != s.range && o.range.start <= s.range.start && s.range.end <= o.range.end
        })
    };
    let hit: Vec<&(u32, u32, &SourceSymbol)> = callables
        .iter()
        .filter(|&&(first, last, _)| touched(first, last, changed))
        .filter(outermost)
        .collect();
    let covered = match changed.start == changed.end {
        true => !hit.is_empty(),
        false => (changed.start..changed.end).all(|line| {
            hit.iter()
                .any(|&&(first, last, _)| first <= line && line <= last)
        }),
    };
    if !covered {
        return None;
    }
    let mut items = Vec::new();
    for &&(_, _, s) in hit.iter().take(ITEMS_CAP) {
        let name = s.path.last()?;
        let byte = crate::grammar_symbols::name_offset(text, s)?;
        let line = line_of(byte);
        let line_start = text[..byte].rfind('\n').map_or(0, |i| i + 1);
        let line_text = text[line_start..].split('\n').next().unwrap_or("");
        items.push(ChangedItem {
            name: name.clone(),
            kind: match s.kind.as_str() {
                "method" => SymbolKind::METHOD,
                _ => SymbolKind::FUNCTION,
            },
            at: Position::new(line, to_lsp_character(line_text, byte - line_start, enc)),
        });
    }
    Some(items)
}

/// The files that use or implement some changed items, as the server found them.
#[derive(Debug, Default)]
pub struct Users {
    /// The files, in path order.
    pub files: Vec<PathBuf>,
    /// Whether they are all of them: every question was answered in time, and neither the
    /// file cap nor the re-export cap was reached.
    pub complete: bool,
}

/// The files (other than `file` itself) that use or implement `items`, as `client` finds
/// them, within `workspace`, at most `cap`, asked before `deadline`.
pub async fn files_using(
    client: &LspClient,
    file: &Path,
    items: &[ChangedItem],
    workspace: &Path,
    cap: usize,
    deadline: Instant,
) -> Users {
    let Ok(uri) = crate::client::path_to_uri(file) else {
        return Users::default();
    };
    let mut complete = true;
    let doc = TextDocumentIdentifier { uri };
    let implementations = client.caps.implementation_provider.is_some();
    let mut found: Vec<PathBuf> = Vec::new();
    // Re-exports looked through so far (each costs one more request).
    let mut re_exports = 0;
    for item in items {
        let at = TextDocumentPositionParams {
            text_document: doc.clone(),
            position: item.at,
        };
        let Some(mut locations) = references(client, at.clone(), deadline).await else {
            complete = false;
            continue;
        };
        // A re-export (`export { f } from`, `pub use`) is a name of its own to some
        // servers (tsserver): the files that import the item through it are its
        // references, not the item's.
        let through: Vec<Location> = locations
            .iter()
            .filter(|l| uri_to_path(&l.uri).is_some_and(|p| p != file && names_again(&p, l)))
            .cloned()
            .collect();
        for l in through {
            if re_exports >= ITEMS_CAP {
                complete = false;
                break;
            }
            re_exports += 1;
            let again = TextDocumentPositionParams {
                text_document: TextDocumentIdentifier { uri: l.uri },
                position: l.range.start,
            };
            match references(client, again, deadline).await {
                Some(more) => locations.extend(more),
                None => complete = false,
            }
        }
        if implementations {
            let params = GotoDefinitionParams {
                text_document_position_params: at,
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            };
            match ask::<GotoImplementation>(client, params, deadline).await {
                Some(Some(r)) => locations.extend(implementation_locations(r)),
                Some(None) => {}
                None => complete = false,
            }
        }
        tracing::debug!(server = %client.server, item = %item.name, ?locations, "users of a changed item");
        for loc in locations {
            let Some(path) = uri_to_path(&loc.uri) else {
                continue;
            };
            if path != file && path.starts_with(workspace) && !found.contains(&path) {
                found.push(path);
            }
        }
        if found.len() >= cap {
            complete = false;
            break;
        }
    }
    found.sort();
    found.truncate(cap);
    Users {
        files: found,
        complete,
    }
}

/// The references at `at` (its declaration left out), asked before `deadline`; `None` when
/// the server gives no answer in time.
async fn references(
    client: &LspClient,
    at: TextDocumentPositionParams,
    deadline: Instant,
) -> Option<Vec<Location>> {
    let params = ReferenceParams {
        text_document_position: at,
        context: ReferenceContext {
            include_declaration: false,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    ask::<References>(client, params, deadline)
        .await
        .map(Option::unwrap_or_default)
}

/// Whether the reference at `l` in `path` sits on a line that exports names again
/// (`export … from`, `pub use`), where the item may be named under a name of its own. An
/// import is not: the servers that follow imports (pyright, rust-analyzer) already list
/// what goes through them.
fn names_again(path: &Path, l: &Location) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Some(line) = text.lines().nth(l.range.start.line as usize) else {
        return false;
    };
    let line = line.trim_start();
    ["export ", "pub use ", "pub(crate) use "]
        .iter()
        .any(|w| line.starts_with(w))
}

fn implementation_locations(r: GotoDefinitionResponse) -> Vec<Location> {
    match r {
        GotoDefinitionResponse::Scalar(l) => vec![l],
        GotoDefinitionResponse::Array(v) => v,
        GotoDefinitionResponse::Link(v) => v
            .into_iter()
            .map(|l| Location {
                uri: l.target_uri,
                range: l.target_selection_range,
            })
            .collect(),
    }
}

/// The document symbols of `file` as the server has it now, asked before `deadline`.
pub async fn document_symbols(
    client: &LspClient,
    file: &Path,
    deadline: Instant,
) -> Option<DocumentSymbolResponse> {
    let uri = crate::client::path_to_uri(file).ok()?;
    let params = DocumentSymbolParams {
        text_document: TextDocumentIdentifier { uri },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    ask::<DocumentSymbolRequest>(client, params, deadline)
        .await
        .flatten()
}

/// Sends `R` until it is answered or `deadline` passes; a server catching up with a change
/// ("content modified") is asked again after a short pause.
async fn ask<R>(client: &LspClient, params: R::Params, deadline: Instant) -> Option<R::Result>
where
    R: lsp_types::request::Request,
    R::Params: Clone,
{
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        if left.is_zero() {
            return None;
        }
        match client.request_with::<R>(params.clone(), left).await {
            Ok(r) => return Some(r),
            Err(LspError::Server { code, .. }) if ask_again_later(code) => {
                tokio::time::sleep(Duration::from_millis(100).min(left)).await;
            }
            Err(e) => {
                tracing::debug!(server = %client.server, "{}: {e}", R::METHOD);
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn lines(old: &str, new: &str) -> Option<(u32, u32)> {
        changed_lines(old, new).map(|c| (c.start, c.end))
    }

    #[test]
    fn changed_lines_are_the_old_lines_between_the_common_ends() {
        assert_eq!(lines("a\nb\nc\n", "a\nb\nc\n"), None);
        assert_eq!(lines("a\nb\nc\n", "a\nB\nc\n"), Some((1, 2)));
        // An insertion after line 1: nothing old changed, the new lines go before line 2.
        assert_eq!(lines("a\nb\nc\n", "a\nb\nx\ny\nc\n"), Some((2, 2)));
        assert_eq!(lines("a\nb\nc\n", "a\nc\n"), Some((1, 2)));
        assert_eq!(lines("a\nb", "a\nb\n"), Some((1, 2)));
        assert_eq!(lines("", "x\n"), Some((0, 0)));
    }

    fn sym(
        name: &str,
        kind: SymbolKind,
        first: u32,
        last: u32,
        children: Vec<DocumentSymbol>,
    ) -> DocumentSymbol {
        let range = Range::new(Position::new(first, 0), Position::new(last, 1));
        #[allow(deprecated)]
        DocumentSymbol {
            name: name.into(),
            detail: None,
            kind,
            tags: None,
            deprecated: None,
            range,
            selection_range: Range::new(Position::new(first, 4), Position::new(first, 8)),
            children: Some(children),
        }
    }

    #[test]
    fn a_change_is_its_innermost_item_never_a_local() {
        // 0: trait Shape {   1: fn area();   2: }   3: fn scaled() {   4: let k = 1;   5: }
        let syms = DocumentSymbolResponse::Nested(vec![
            sym(
                "Shape",
                SymbolKind::INTERFACE,
                0,
                2,
                vec![sym("area", SymbolKind::METHOD, 1, 1, vec![])],
            ),
            sym(
                "scaled",
                SymbolKind::FUNCTION,
                3,
                5,
                vec![sym("k", SymbolKind::VARIABLE, 4, 4, vec![])],
            ),
        ]);
        let names = |c: ChangedLines| -> Vec<String> {
            changed_items(&syms, c)
                .into_iter()
                .map(|i| i.name)
                .collect()
        };
        // A method added after `area`: the trait's.
        assert_eq!(names(ChangedLines { start: 2, end: 2 }), ["Shape"]);
        // `area`'s own line: the method's.
        assert_eq!(names(ChangedLines { start: 1, end: 2 }), ["area"]);
        // A local in a function's body: the function's.
        assert_eq!(names(ChangedLines { start: 4, end: 5 }), ["scaled"]);
        // A signature line and the trait's end at once: both.
        assert_eq!(
            names(ChangedLines { start: 2, end: 4 }),
            ["Shape", "scaled"]
        );
        // A new item after everything: nothing anyone uses yet.
        assert!(names(ChangedLines { start: 6, end: 6 }).is_empty());
    }

    /// A Python file: a decorated function with a nested one, a class with an attribute and
    /// a method, a module variable between them. Lines (0-based) in the comments.
    const MODULE: &str = "import os\n\
                          \n\
                          @cache\n\
                          def outer(a):\n\
                          \x20   def inner(b):\n\
                          \x20       return b\n\
                          \x20   return inner(a)\n\
                          \n\
                          LIMIT = 3\n\
                          \n\
                          class Box:\n\
                          \x20   size: int = 1\n\
                          \n\
                          \x20   def grow(self, by):\n\
                          \x20       self.size += by\n";

    async fn from_grammar(start: u32, end: u32) -> Option<Vec<(String, SymbolKind, u32, u32)>> {
        let source: Arc<dyn SymbolSource> = Arc::new(tools_ast::GrammarSymbols);
        let changed = ChangedLines { start, end };
        items_from_grammar(&source, Path::new("m.py"), MODULE, changed, Encoding::Utf16)
            .await
            .map(|v| {
                v.into_iter()
                    .map(|i| (i.name, i.kind, i.at.line, i.at.character))
                    .collect()
            })
    }

    #[tokio::test]
    async fn a_change_inside_functions_is_read_from_the_grammars() {
        // Inside the nested function: the outer one is the item, named on its `def` line.
        assert_eq!(
            from_grammar(5, 6).await,
            Some(vec![("outer".into(), SymbolKind::FUNCTION, 3, 4)])
        );
        // Its decorator belongs to it.
        assert_eq!(
            from_grammar(2, 3).await,
            Some(vec![("outer".into(), SymbolKind::FUNCTION, 3, 4)])
        );
        // A method's body: the method, not its class.
        assert_eq!(
            from_grammar(14, 15).await,
            Some(vec![("grow".into(), SymbolKind::METHOD, 13, 8)])
        );
        // A line inserted inside a function.
        assert_eq!(
            from_grammar(6, 6).await,
            Some(vec![("outer".into(), SymbolKind::FUNCTION, 3, 4)])
        );
    }

    #[tokio::test]
    async fn anything_outside_functions_is_left_to_the_server() {
        // A module variable, an import, a class attribute: the server names those.
        assert_eq!(from_grammar(8, 9).await, None);
        assert_eq!(from_grammar(0, 1).await, None);
        assert_eq!(from_grammar(11, 12).await, None);
        // A change running from a function into the module level.
        assert_eq!(from_grammar(6, 9).await, None);
        // A line inserted between two items.
        assert_eq!(from_grammar(9, 9).await, None);
    }
}
