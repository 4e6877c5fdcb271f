//! A name search's first answer, confirmed by the server's outline of the files it names.
//!
//! While a server's workspace search is still on its way, the first answer is what a scan
//! of the files' declarations found (`declaration_scan`). The server can often say at once
//! whether those declarations are what it sees: rust-analyzer's first workspace search
//! resolves the names of every crate, the standard library's included (2.7 s on a small
//! workspace here), while its outline of one file (`textDocument/documentSymbol`, read from
//! the file's syntax tree) answers in milliseconds. A match counts as confirmed when the
//! outline of its file lists a symbol of the same name on the same line; the answer's first
//! line then says so, and still says that the workspace search goes on (it may find what no
//! file spells out, such as items a macro makes).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

use lsp_types::{DocumentSymbol, DocumentSymbolResponse};

use crate::client::LspClient;
use crate::queries::declaration_scan::Declaration;

/// How long the outlines may take: they answer in milliseconds when the server has the
/// files loaded; one that takes longer is busy, and the scan's answer is not held for it.
pub const CONFIRM_BOUND: Duration = Duration::from_millis(400);

/// The most files whose outlines are asked for; a name declared in more files than this is
/// left unconfirmed (the scan's answer keeps its caveat).
const MAX_FILES: usize = 8;

/// A symbol of an outline: its name, and the first and last line (0-based) its name may be on.
type NamedLines = (String, u32, u32);

/// Each file asked about, with its outline's symbols when it came in time.
type Outlines = [(PathBuf, Option<Vec<NamedLines>>)];

/// Whether `client`'s outlines of their files list every one of `found` (same name, same
/// line), asked within [`CONFIRM_BOUND`]. False when any is missing, a file's outline did
/// not come in time, or the matches span more than a few files — as soon as one outline
/// leaves a match out, without waiting for the others (pyright answers an empty outline
/// for a file it has not found yet, in its first second).
pub async fn all_confirmed(client: &LspClient, found: &[Declaration]) -> bool {
    use futures::StreamExt;
    let mut files: Vec<&Path> = found.iter().map(|d| d.path.as_path()).collect();
    files.sort();
    files.dedup();
    if found.is_empty() || files.len() > MAX_FILES || client.caps.document_symbol_provider.is_none()
    {
        return false;
    }
    let deadline = Instant::now() + CONFIRM_BOUND;
    let mut outlines: futures::stream::FuturesUnordered<_> = files
        .iter()
        .map(|f| async move {
            let symbols =
                crate::diagnostics::changed_items::document_symbols(client, f, deadline).await;
            (f.to_path_buf(), symbols.map(|s| named_lines(&s)))
        })
        .collect();
    while let Some(outline) = outlines.next().await {
        let one = [outline];
        let in_file = |d: &&Declaration| d.path == one[0].0;
        if !found.iter().filter(in_file).all(|d| listed(&one, d)) {
            return false;
        }
    }
    true
}

/// Whether the outline of `d`'s file holds a symbol named as `d` whose name is on `d`'s line.
fn listed(outlines: &Outlines, d: &Declaration) -> bool {
    let line = d.line.saturating_sub(1) as u32;
    outlines
        .iter()
        .find(|(p, _)| *p == d.path)
        .and_then(|(_, o)| o.as_ref())
        .is_some_and(|symbols| {
            symbols
                .iter()
                .any(|(name, first, last)| bare(name) == d.name && (*first..=*last).contains(&line))
        })
}

/// A symbol's name without the parameters some servers print after it (`greet()`).
fn bare(name: &str) -> &str {
    name.split('(').next().unwrap_or(name).trim()
}

/// Every symbol of an outline as its name and the lines its name may be on: the selection
/// range of a nested symbol (the name itself), the whole range of a flat one (which carries
/// no selection range).
fn named_lines(outline: &DocumentSymbolResponse) -> Vec<NamedLines> {
    fn walk(symbols: &[DocumentSymbol], out: &mut Vec<NamedLines>) {
        for s in symbols {
            let r = s.selection_range;
            out.push((s.name.clone(), r.start.line, r.end.line));
            if let Some(children) = &s.children {
                walk(children, out);
            }
        }
    }
    let mut out = Vec::new();
    match outline {
        DocumentSymbolResponse::Nested(v) => walk(v, &mut out),
        DocumentSymbolResponse::Flat(v) => {
            for s in v {
                let r = s.location.range;
                out.push((s.name.clone(), r.start.line, r.end.line));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range, SymbolKind};

    fn decl(name: &str, path: &str, line: usize) -> Declaration {
        Declaration {
            name: name.into(),
            kind: "function".into(),
            container: None,
            path: PathBuf::from(path),
            line,
            col: 8,
        }
    }

    fn range(first: u32, last: u32) -> Range {
        Range::new(Position::new(first, 0), Position::new(last, 10))
    }

    #[allow(deprecated)]
    fn symbol(
        name: &str,
        whole: Range,
        name_at: Range,
        children: Vec<DocumentSymbol>,
    ) -> DocumentSymbol {
        DocumentSymbol {
            name: name.into(),
            detail: None,
            kind: SymbolKind::FUNCTION,
            tags: None,
            deprecated: None,
            range: whole,
            selection_range: name_at,
            children: Some(children),
        }
    }

    #[test]
    fn a_match_is_confirmed_by_a_symbol_of_its_name_on_its_line_nested_or_not() {
        let method = symbol("area()", range(11, 13), range(11, 11), Vec::new());
        let outline = DocumentSymbolResponse::Nested(vec![
            symbol("scaled", range(8, 11), range(9, 9), Vec::new()),
            symbol("Shape", range(10, 14), range(10, 10), vec![method]),
        ]);
        let outlines = vec![(PathBuf::from("/w/lib.rs"), Some(named_lines(&outline)))];
        // Lines are 1-based in a declaration, 0-based in an outline.
        assert!(listed(&outlines, &decl("scaled", "/w/lib.rs", 10)));
        assert!(listed(&outlines, &decl("area", "/w/lib.rs", 12)));
        // The name on another line (the symbol's body, not its name) is not it.
        assert!(!listed(&outlines, &decl("scaled", "/w/lib.rs", 11)));
        // Another name, another file, a file whose outline did not come.
        assert!(!listed(&outlines, &decl("scale", "/w/lib.rs", 10)));
        assert!(!listed(&outlines, &decl("scaled", "/w/main.rs", 10)));
        let missing = vec![(PathBuf::from("/w/lib.rs"), None)];
        assert!(!listed(&missing, &decl("scaled", "/w/lib.rs", 10)));
    }
}
