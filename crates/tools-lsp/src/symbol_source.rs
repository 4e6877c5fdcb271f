//! The language servers as a symbol source for the run: a file's document symbols, for the
//! tools of other families that address code by name (symbol edits, breakpoints by name).
//!
//! Only a server that can run for the file is asked (its root marker and binary are
//! there); a file no server serves is left to the grammars. Ranges are turned from the
//! server's line and character (in its negotiated encoding) into byte offsets of the text
//! the caller holds, which is the text on disk the server is synced to.

use std::path::Path;
use std::sync::Arc;

use lsp_types::request::DocumentSymbolRequest;
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, PartialResultParams, Range,
    TextDocumentIdentifier, WorkDoneProgressParams,
};
use tools_core::ToolError;
use tools_core::{FileSymbols, SourceSymbol, SymbolSource, SymbolSourceKind};

use crate::answer::format::kind_name;
use crate::client::position::{Encoding, offset_of};
use crate::queries::query;
use crate::servers::supervisor::ServerSupervisor;

/// Document symbols of the servers of one run, as a [`SymbolSource`].
pub struct ServerSymbols {
    sup: Arc<ServerSupervisor>,
}

impl ServerSymbols {
    /// The source over `sup`'s servers.
    pub fn new(sup: Arc<ServerSupervisor>) -> Self {
        ServerSymbols { sup }
    }
}

#[tools_core::async_trait]
impl SymbolSource for ServerSymbols {
    fn kind(&self) -> SymbolSourceKind {
        SymbolSourceKind::LanguageServer
    }

    async fn symbols(&self, path: &Path, text: &str) -> Result<Option<FileSymbols>, ToolError> {
        // No server for this file (no marker, no binary, no language): the grammars answer.
        let Ok(loc) = self.sup.locate(path) else {
            return Ok(None);
        };
        let client = self.sup.client_at(&loc).await?;
        if client.caps.document_symbol_provider.is_none() {
            return Ok(None);
        }
        let doc = query::synced(&self.sup, &client, path).await?;
        let params = DocumentSymbolParams {
            text_document: TextDocumentIdentifier { uri: doc.uri },
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
        let resp = query::with_warmup(
            &client,
            |r: &Option<DocumentSymbolResponse>| r.is_none(),
            || client.request::<DocumentSymbolRequest>(params.clone()),
        )
        .await?;
        let mut symbols = Vec::new();
        match resp {
            None => {}
            Some(DocumentSymbolResponse::Nested(v)) => {
                nested(&v, &mut Vec::new(), text, client.encoding, &mut symbols)
            }
            Some(DocumentSymbolResponse::Flat(v)) => {
                for s in v {
                    let mut path: Vec<String> = s
                        .container_name
                        .iter()
                        .filter(|c| !c.is_empty())
                        .cloned()
                        .collect();
                    path.push(s.name.clone());
                    symbols.push(SourceSymbol {
                        path,
                        kind: kind_name(s.kind),
                        range: bytes(text, s.location.range, client.encoding),
                        body: None,
                    });
                }
            }
        }
        Ok(Some(FileSymbols {
            source: client.server.clone(),
            kind: SymbolSourceKind::LanguageServer,
            symbols,
        }))
    }
}

fn bytes(text: &str, r: Range, enc: Encoding) -> std::ops::Range<usize> {
    let start = offset_of(text, r.start.line, r.start.character, enc);
    let end = offset_of(text, r.end.line, r.end.character, enc).max(start);
    start..end
}

fn nested(
    syms: &[DocumentSymbol],
    path: &mut Vec<String>,
    text: &str,
    enc: Encoding,
    out: &mut Vec<SourceSymbol>,
) {
    for s in syms {
        path.push(s.name.clone());
        out.push(SourceSymbol {
            path: path.clone(),
            kind: kind_name(s.kind),
            range: bytes(text, s.range, enc),
            body: None,
        });
        if let Some(children) = &s.children {
            nested(children, path, text, enc, out);
        }
        path.pop();
    }
}
