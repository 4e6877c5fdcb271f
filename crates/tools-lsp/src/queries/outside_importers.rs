//! Importers of a name in the Python files a narrowed pyright program leaves out.
//!
//! With `include = ["src/pkg"]` (psf/requests has exactly that), pyright's references and
//! renames search only the program: `tests/test_utils.py`, which does
//! `from requests.utils import to_native_string`, is never seen, and a rename leaves it
//! importing a name that no longer exists. Here the files outside the program that mention
//! the name are read for `from MODULE import …` statements whose module is one of the files
//! the symbol is bound in (where the rename edits, or the references lie); the server then
//! gives each imported name's uses in that file (`documentHighlight`, which works on any
//! open file). A use through the module imported whole (`import pkg.utils` and
//! `pkg.utils.NAME`, as click's tests call its helpers) is found in the text.

use std::path::PathBuf;

use lsp_types::request::DocumentHighlightRequest;
use lsp_types::{
    DocumentHighlightParams, Location, PartialResultParams, Position, Range,
    TextDocumentIdentifier, TextDocumentPositionParams, Uri, WorkDoneProgressParams,
};

use crate::client::position::{Encoding, to_lsp_character};
use crate::client::{LspClient, uri_to_path};
use crate::queries::query::Prepared;
use crate::servers::python_imports::is_ident_char;
use crate::servers::python_program::importing_files;
use crate::servers::supervisor::ServerSupervisor;

/// One way a file outside the server's program reaches the name: a `from MODULE import NAME`,
/// or a use of it as an attribute of the module imported whole (then `import` is that use).
#[derive(Debug, Clone)]
pub(crate) struct OutsideImporter {
    /// The importing file.
    pub path: PathBuf,
    /// Its URI, as the server knows it (the file is open).
    pub uri: Uri,
    /// The imported name in the import statement.
    pub import: Range,
    /// Whether it is imported under another name (`NAME as other`): only the import names it.
    pub aliased: bool,
    /// Every use of the imported name in the file, the import included, as the server
    /// highlights them; empty when the server gave none that includes the import.
    pub uses: Vec<Range>,
}

/// The importers of `name` outside `client`'s program whose module is one of `modules`
/// (files that bind or use the name), each opened in the server with its uses.
pub(crate) async fn find(
    client: &LspClient,
    extensions: &[String],
    name: &str,
    modules: &[PathBuf],
) -> Vec<OutsideImporter> {
    let mut out = Vec::new();
    for (path, reach) in importing_files(client, extensions, name, modules).await {
        let Ok(doc) = client.sync_file(&path).await else {
            continue;
        };
        // A use through the module imported whole (`pkg.utils.NAME`) names the symbol by
        // its own text: it is its own import and its own use.
        for at in reach.attribute_uses {
            let range = range_at(&doc.text, at, name.len(), client.encoding);
            out.push(OutsideImporter {
                path: path.clone(),
                uri: doc.uri.clone(),
                import: range,
                aliased: false,
                uses: vec![range],
            });
        }
        for i in reach.imports {
            let import = range_at(&doc.text, i.at, name.len(), client.encoding);
            let uses = if i.aliased {
                Vec::new()
            } else {
                highlights(client, &doc.uri, import.start).await
            };
            let uses = if uses.contains(&import) {
                uses
            } else {
                Vec::new()
            };
            out.push(OutsideImporter {
                path: path.clone(),
                uri: doc.uri.clone(),
                import,
                aliased: i.aliased,
                uses,
            });
        }
    }
    out
}

/// `refs` (the server's references of the symbol at `p`) with the uses in the importers
/// outside the server's program of the files they lie in, merged in order.
pub(crate) async fn with_uses_outside(
    sup: &ServerSupervisor,
    p: &Prepared,
    refs: Vec<Location>,
) -> Vec<Location> {
    let Some(name) = last_identifier(&p.symbol) else {
        return refs;
    };
    let mut modules: Vec<PathBuf> = refs.iter().filter_map(|l| uri_to_path(&l.uri)).collect();
    modules.sort();
    modules.dedup();
    let extensions = sup.extensions_of(&p.client.language);
    let importers = find(&p.client, &extensions, name, &modules).await;
    let outside: Vec<Location> = importers
        .into_iter()
        .flat_map(|i| {
            let ranges = if i.uses.is_empty() {
                vec![i.import]
            } else {
                i.uses
            };
            let uri = i.uri;
            ranges.into_iter().map(move |range| Location {
                uri: uri.clone(),
                range,
            })
        })
        .collect();
    if outside.is_empty() {
        return refs;
    }
    crate::queries::co_servers::merge_locations(refs, outside)
}

/// The last identifier of a symbol as given (`Session.send` → `send`).
pub(crate) fn last_identifier(symbol: &str) -> Option<&str> {
    symbol
        .rsplit(|c: char| !is_ident_char(c))
        .find(|part| !part.is_empty())
}

/// The server's highlights of the symbol at `pos` in the open document `uri`.
async fn highlights(client: &LspClient, uri: &Uri, pos: Position) -> Vec<Range> {
    if client.caps.document_highlight_provider.is_none() {
        return Vec::new();
    }
    let params = DocumentHighlightParams {
        text_document_position_params: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            position: pos,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let mut ranges: Vec<Range> = client
        .request::<DocumentHighlightRequest>(params)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .map(|h| h.range)
        .collect();
    ranges.sort_by_key(|r| (r.start.line, r.start.character));
    ranges.dedup();
    ranges
}

/// The server range of `len` bytes at byte `at` of `text` (on one line).
fn range_at(text: &str, at: usize, len: usize, enc: Encoding) -> Range {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let n = text[..line_start].matches('\n').count() as u32;
    Range::new(
        Position::new(n, to_lsp_character(line, at - line_start, enc)),
        Position::new(n, to_lsp_character(line, at - line_start + len, enc)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_of_a_qualified_symbol_is_its_last_identifier() {
        assert_eq!(last_identifier("Session.send"), Some("send"));
        assert_eq!(last_identifier("to_native"), Some("to_native"));
        assert_eq!(last_identifier("..."), None);
    }

    #[test]
    fn ranges_are_in_the_servers_columns() {
        let text = "x = 'é'\nfrom m import (é, to_native)\n";
        let at = text.find("to_native").unwrap();
        let r = range_at(text, at, "to_native".len(), Encoding::Utf16);
        assert_eq!(r, Range::new(Position::new(1, 18), Position::new(1, 27)));
    }
}
