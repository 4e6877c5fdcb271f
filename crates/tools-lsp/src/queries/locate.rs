//! The location requests of the `lsp` tool: the definition-like requests (`definition`,
//! `declaration`, `typeDefinition`, `implementation`) and `references`, each asked with a
//! warm-up while the server is young and answered as a sorted list of locations.

use std::path::Path;

use lsp_types::request::{
    GotoDeclaration, GotoDefinition, GotoImplementation, GotoTypeDefinition, References, Request,
};
use lsp_types::{
    GotoDefinitionParams, GotoDefinitionResponse, Location, PartialResultParams, ReferenceContext,
    ReferenceParams, ServerCapabilities, TextDocumentIdentifier, TextDocumentPositionParams,
    WorkDoneProgressParams,
};
use tools_core::ToolError;

use crate::answer::format::{self, Renderer};
use crate::client::LspClient;
use crate::queries::query::{self, Prepared};

/// The error for a request `client`'s server does not offer.
pub(crate) fn unsupported(client: &LspClient, what: &str) -> ToolError {
    ToolError::not_available(format!(
        "{} (the {} server) does not support {what}",
        client.server, client.language
    ))
}

/// The position of the symbol asked about, as requests take it.
pub(crate) fn tdpp(p: &Prepared) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier {
            uri: p.doc.uri.clone(),
        },
        position: p.pos,
    }
}

/// A definition-like request: `textDocument/definition`, `declaration`, `typeDefinition`
/// or `implementation`, which share their parameters and answer.
pub(crate) trait GotoRequest:
    Request<Params = GotoDefinitionParams, Result = Option<GotoDefinitionResponse>>
{
    /// What the answer lists, in words.
    const WHAT: &'static str;
    /// Whether `caps` announce the request.
    fn supported(caps: &ServerCapabilities) -> bool;
}

impl GotoRequest for GotoDefinition {
    const WHAT: &'static str = "definition";
    fn supported(caps: &ServerCapabilities) -> bool {
        caps.definition_provider.is_some()
    }
}

impl GotoRequest for GotoDeclaration {
    const WHAT: &'static str = "declaration";
    fn supported(caps: &ServerCapabilities) -> bool {
        caps.declaration_provider.is_some()
    }
}

impl GotoRequest for GotoTypeDefinition {
    const WHAT: &'static str = "type definition";
    fn supported(caps: &ServerCapabilities) -> bool {
        caps.type_definition_provider.is_some()
    }
}

impl GotoRequest for GotoImplementation {
    const WHAT: &'static str = "implementation";
    fn supported(caps: &ServerCapabilities) -> bool {
        caps.implementation_provider.is_some()
    }
}

/// Asks a definition-like request at the symbol; the locations it names.
pub(crate) async fn goto<R: GotoRequest>(
    p: &Prepared,
    root: &Path,
) -> Result<Vec<Location>, ToolError> {
    let c = &p.client;
    if !R::supported(&c.caps) {
        return Err(unsupported(c, R::WHAT));
    }
    let params = GotoDefinitionParams {
        text_document_position_params: tdpp(p),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let resp = query::with_warmup(
        c,
        |v: &Option<GotoDefinitionResponse>| {
            // A server still loading its project answers with the import line itself
            // (tsserver); that is as good as empty while it is young.
            let locs = format::locations(v.clone());
            let mut r = Renderer::new(root, c.encoding);
            locs.is_empty()
                || locs.iter().all(|l| {
                    r.location(l).is_some_and(|p| {
                        p.text.starts_with("import ") || p.text.starts_with("from ")
                    })
                })
        },
        || c.request::<R>(params.clone()),
    )
    .await?;
    Ok(format::locations(resp))
}

/// Every use of the symbol, declaration included, sorted and without duplicates.
pub(crate) async fn references(p: &Prepared) -> Result<Vec<Location>, ToolError> {
    let c = &p.client;
    if c.caps.references_provider.is_none() {
        return Err(unsupported(c, "references"));
    }
    let params = ReferenceParams {
        text_document_position: tdpp(p),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: ReferenceContext {
            include_declaration: true,
        },
    };
    // Until pyright has found its project's files, its program holds only the open
    // documents: Django's `import_string` had 1 reference, the declaration, instead of 78.
    c.wait_project_files_found().await;
    // Even after it says it found them, a young pyright may still answer from the open
    // documents alone: the declaration and nothing else is asked again while it is young.
    let only_open = c.answers_before_analysis();
    let resp = query::with_warmup(
        c,
        |v: &Option<Vec<Location>>| {
            v.as_ref()
                .is_none_or(|v| v.is_empty() || (only_open && v.len() == 1))
        },
        || c.request::<References>(params.clone()),
    )
    .await?;
    let mut v = resp.unwrap_or_default();
    v.sort_by(|a, b| {
        (a.uri.as_str(), a.range.start.line, a.range.start.character).cmp(&(
            b.uri.as_str(),
            b.range.start.line,
            b.range.start.character,
        ))
    });
    v.dedup();
    Ok(v)
}
