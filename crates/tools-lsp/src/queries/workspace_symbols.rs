//! Workspace symbol search (`symbols` with `query`): asks every server that may know the
//! name — the one of `file`, or those the workspace's roots allow, started on demand — and
//! shows one page of the matches. A server without the request is named in a note, not an
//! error, unless no server could answer at all.

use std::sync::Arc;

use lsp_types::request::WorkspaceSymbolRequest;
use lsp_types::{
    PartialResultParams, WorkDoneProgressParams, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};
use serde_json::json;
use tools_core::{CallCtx, ToolError, ToolOutput};

use crate::answer::budget::{self, Window};
use crate::answer::format::{self, Renderer};
use crate::client::{LspClient, uri_to_path};
use crate::error::LspError;
use crate::queries::query;
use crate::servers::projects::Loaded;
use crate::servers::supervisor::ServerSupervisor;

/// Opens one file of every project of `client`'s language under its root (see
/// `servers::projects`).
pub(crate) async fn load_projects(sup: &ServerSupervisor, client: &LspClient) -> Loaded {
    crate::servers::projects::load_projects(client, &sup.extensions_of(&client.language)).await
}

/// Searches the workspace's symbols with every relevant server (the one of `file`, or those
/// the workspace's roots allow), and shows a page of the matches within the budget.
pub async fn workspace_symbols(
    sup: &ServerSupervisor,
    ctx: &CallCtx,
    q: &str,
    file: Option<&str>,
    window: Window,
    budget_bytes: usize,
) -> Result<ToolOutput, ToolError> {
    let clients: Vec<Arc<LspClient>> = match file {
        Some(_) => {
            let path = query::resolve_file(&ctx.run, file)?;
            vec![sup.client_for(&path).await?]
        }
        None => {
            let mut v = sup.running();
            if v.is_empty() {
                // Start the servers the conjunction rule allows for the workspace's roots.
                let scan = crate::servers::discover::scan_workspace(sup.table(), sup.workspace());
                let mut errors = Vec::new();
                for spec in sup.table() {
                    if scan.files.get(&spec.language).copied().unwrap_or(0) == 0 {
                        continue;
                    }
                    if spec.offers_no_workspace_symbols() {
                        errors.push(format!(
                            "{} ({} files) offers no workspace symbol search",
                            spec.candidates
                                .first()
                                .map(|c| c.program())
                                .unwrap_or_default(),
                            spec.language
                        ));
                        continue;
                    }
                    for root in scan.roots.get(&spec.language).into_iter().flatten().take(2) {
                        match sup
                            .client_for(&root.join(format!(
                                "_.{}",
                                spec.extensions.first().map(String::as_str).unwrap_or("x")
                            )))
                            .await
                        {
                            // Several marker folders may share one workspace server.
                            Ok(c) if v.iter().any(|o| Arc::ptr_eq(o, &c)) => {}
                            Ok(c) => v.push(c),
                            Err(e) => errors.push(e.to_string()),
                        }
                    }
                }
                if v.is_empty() {
                    return Err(ToolError::not_available(format!(
                        "no language server can run for a workspace symbol search{}",
                        if errors.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", errors.join("; "))
                        }
                    )));
                }
            }
            v
        }
    };
    let mut lines = Vec::new();
    let mut items = Vec::new();
    let mut notes = Vec::new();
    let mut caveats = Vec::new();
    for c in &clients {
        if c.caps.workspace_symbol_provider.is_none() {
            notes.push(format!(
                "{} does not support workspace symbol search",
                c.server
            ));
            continue;
        }
        // tsserver answers "No Project" and clangd nothing until a file of each project is
        // open.
        let loaded = load_projects(sup, c).await;
        // It limits every line below, so it leads the answer.
        caveats.extend(loaded.left_out_line(&c.server, "pass `file` to search from one of them"));
        if !c.wait_ready().await
            && let Some(note) = query::indexing_caveat(c)
        {
            caveats.push(note);
        }
        let _ = c.flush_external(&[]).await;
        let params = WorkspaceSymbolParams {
            query: q.to_string(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
        let resp = match query::with_warmup(
            c,
            |v: &Option<WorkspaceSymbolResponse>| match v {
                None => true,
                Some(WorkspaceSymbolResponse::Flat(f)) => f.is_empty(),
                Some(WorkspaceSymbolResponse::Nested(n)) => n.is_empty(),
            },
            || c.request::<WorkspaceSymbolRequest>(params.clone()),
        )
        .await
        {
            Ok(r) => r,
            Err(LspError::Server { code: -32601, .. }) => {
                notes.push(format!(
                    "{} does not support workspace symbol search",
                    c.server
                ));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut r = Renderer::new(ctx.run.root(), c.encoding);
        match resp {
            None => {}
            Some(WorkspaceSymbolResponse::Flat(v)) => {
                for s in &v {
                    let (l, j) = format::symbol_info_line(&mut r, s);
                    lines.push(l);
                    items.push(j);
                }
            }
            Some(WorkspaceSymbolResponse::Nested(v)) => {
                for s in &v {
                    let (loc, pj) = match &s.location {
                        lsp_types::OneOf::Left(l) => {
                            let p = r.location(l);
                            (
                                p.as_ref().map(|p| p.loc()).unwrap_or_default(),
                                p.map(|p| p.json()),
                            )
                        }
                        lsp_types::OneOf::Right(w) => (
                            uri_to_path(&w.uri)
                                .map(|p| r.display(&p))
                                .unwrap_or_default(),
                            None,
                        ),
                    };
                    let container = s
                        .container_name
                        .as_ref()
                        .map(|c| format!(" (in {c})"))
                        .unwrap_or_default();
                    lines.push(format!(
                        "{} {}{container}  {loc}",
                        format::kind_name(s.kind),
                        s.name
                    ));
                    items.push(json!({"name": s.name, "kind": format::kind_name(s.kind), "container": s.container_name, "location": pj}));
                }
            }
        }
    }
    let total = lines.len();
    let mut text = if total == 0 {
        format!("no workspace symbols match `{q}`")
    } else {
        let head = format!("{total} workspace symbol(s) match `{q}`:");
        let page = budget::page(&head, &lines, window, budget_bytes, ", or a longer `query`");
        items = items
            .into_iter()
            .skip(page.first)
            .take(page.shown)
            .collect();
        page.text
    };
    for n in &notes {
        text.push_str(&format!("\n(note: {n})"));
    }
    if !caveats.is_empty() {
        text = format!("{}\n{text}", caveats.join("\n"));
    }
    if total == 0 && !notes.is_empty() && notes.len() == clients.len() {
        return Err(ToolError::not_available(notes.join("; ")));
    }
    Ok(ToolOutput::text(text).with_structured(json!({"symbols": items, "total": total})))
}
