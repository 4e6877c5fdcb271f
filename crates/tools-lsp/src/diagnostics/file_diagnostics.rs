//! `lsp` action `diagnostics` for one file: the file's diagnostics once its server has
//! settled (see [`crate::diagnostics::settle`]), never a half-finished answer presented as final.
//!
//! Before answering: files changed outside the tools are brought up to date, the file is
//! opened or updated, and the server is given until it is quiet (bounded by
//! `index_wait_ms`). An answer given while the server is still loading or checking says so
//! in its first line.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::text::cap_list;
use tools_core::{CallCtx, ToolError, ToolOutput};

use crate::answer::budget::LIST_CAP;
use crate::answer::format::{self, Renderer};
use crate::client::LspClient;
use crate::diagnostics::settle::{SettleGoal, settle};
use crate::error::LspError;
use crate::servers::supervisor::ServerSupervisor;

/// The shortest bound on settling before answering, whatever `index_wait_ms` says.
const MIN_WAIT: Duration = Duration::from_secs(2);

/// What one server said about the file.
struct ServerFindings {
    client: Arc<LspClient>,
    items: Vec<lsp_types::Diagnostic>,
    /// Why the answer may not be final, if it may not be.
    caveat: Option<String>,
    /// What the run's trust keeps this server from seeing (see
    /// [`crate::servers::trust_limits`]).
    limit: Option<String>,
}

/// The diagnostics of `path`: its server's, merged with those of its diagnostics-only
/// companions (ruff, eslint), each finding tagged with its server when there are several.
pub async fn file_diagnostics(
    sup: &ServerSupervisor,
    path: &std::path::Path,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let mut clients = vec![sup.client_for(path).await?];
    let mut notes = Vec::new();
    for loc in sup.companions(path) {
        match sup.client_at(&loc).await {
            Ok(c) => clients.push(c),
            Err(e) => notes.push(format!("({} left out: {e})", loc.spec.language)),
        }
    }
    let answers =
        futures::future::join_all(clients.iter().map(|c| server_findings(sup, c, path, ctx))).await;
    let mut found = Vec::new();
    for (i, answer) in answers.into_iter().enumerate() {
        match answer {
            Ok(f) => found.push(f),
            // The primary server's failure is the answer; a companion's is a note.
            Err(e) if i == 0 => return Err(e),
            Err(e) => notes.push(format!("({} left out: {e})", clients[i].server)),
        }
    }
    render(found, notes, path, ctx)
}

/// The settled diagnostics of `path` from one server.
async fn server_findings(
    sup: &ServerSupervisor,
    client: &Arc<LspClient>,
    path: &std::path::Path,
    ctx: &CallCtx,
) -> Result<ServerFindings, ToolError> {
    let client = Arc::clone(client);
    let ready = client.wait_ready().await;
    let wait = sup.config().index_wait().max(MIN_WAIT);
    client.catch_up_diagnostics().await;
    let since = client.publish_seq();
    let mut publishes = Vec::new();
    let mut likely = Vec::new();
    publishes.extend(client.flush_external(&[]).await?);
    let was_open = client.is_open(path).await;
    let known = client.published(path).is_some();
    if !was_open {
        // The server may have read this file from disk earlier: tell it the disk is what
        // counts now.
        let _ = client
            .files_changed(&[(path.to_path_buf(), lsp_types::FileChangeType::CHANGED)])
            .await;
    }
    if !was_open {
        publishes.extend(
            crate::diagnostics::dependents::open_importers(sup, &client, &[path.to_path_buf()])
                .await
                .opened,
        );
    }
    let doc = client.sync_file(path).await?;
    client.settle_after_first_open(&doc).await;
    if doc.changed {
        if was_open || !known {
            publishes.push((path.to_path_buf(), doc.version));
        } else {
            likely.push((path.to_path_buf(), doc.version));
        }
    } else if !known && !client.pulls_diagnostics() {
        // Open and unchanged, but never published: the first publish is still to come.
        publishes.push((path.to_path_buf(), doc.version));
    }
    let complete =
        crate::diagnostics::republish::refine(&client, &mut publishes, &mut likely).await;
    let goal = SettleGoal {
        publishes,
        likely,
        since_seq: since,
        changed_at: Some(Instant::now()),
        saved: None,
        complete,
        quiet: sup.config().diagnostics_quiet(),
        // A server still on its first analysis answers for this file once that is over.
        first_analysis: !client.first_analysis_done(),
        deadline: Instant::now() + wait,
    };
    let settled = settle(&client, &goal).await;
    if !client.is_alive() {
        return Err(LspError::Died {
            server: client.server.clone(),
            method: "textDocument/publishDiagnostics".into(),
            detail: client.exit_detail().await,
        }
        .into());
    }
    let disp = ctx.run.workspace().display(path);
    let items = if client.pulls_diagnostics() {
        client.pull_diagnostics(&doc).await?
    } else {
        match client.published(path) {
            Some(p) => p.items,
            None => {
                return Err(ToolError::timed_out(format!(
                    "{} published no diagnostics for {disp} within {}s{}",
                    client.server,
                    wait.as_secs(),
                    if client.indexing() {
                        " (it is still indexing; try again shortly)"
                    } else {
                        ""
                    }
                )));
            }
        }
    };
    // The first line says when the answer may not be final.
    let caveat = match (&settled, ready) {
        (Err(what), _) => Some(format!(
            "(not final: {} had not settled after {}s — still waiting for {what}; ask again shortly)",
            client.server,
            wait.as_secs()
        )),
        (Ok(()), false) => Some(format!(
            "(not final: {} is still indexing; ask again shortly)",
            client.server
        )),
        _ => None,
    };
    let limit = crate::servers::trust_limits::diagnostics_limit(&client, &ctx.run, path);
    Ok(ServerFindings {
        client,
        items,
        caveat,
        limit,
    })
}

/// The merged answer: every server's findings sorted by position, caveats first.
fn render(
    found: Vec<ServerFindings>,
    notes: Vec<String>,
    path: &std::path::Path,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let disp = ctx.run.workspace().display(path);
    let several = found.len() > 1;
    let caveats: Vec<&String> = found.iter().filter_map(|f| f.caveat.as_ref()).collect();
    let final_answer = caveats.is_empty();
    let servers: Vec<&str> = found.iter().map(|f| f.client.server.as_str()).collect();
    let mut text = String::new();
    // What trust hides leads: it changes what every line below means.
    let limits = found.iter().filter_map(|f| f.limit.as_ref());
    for c in limits.chain(caveats.iter().copied()).chain(notes.iter()) {
        text.push_str(c);
        text.push('\n');
    }
    let mut rows = Vec::new();
    for f in &found {
        let mut r = Renderer::new(ctx.run.root(), f.client.encoding);
        for d in &f.items {
            let (pt, line) = r.diagnostic(path, d);
            let line = match several {
                true => format!("{line} ({})", f.client.server),
                false => line,
            };
            let key = (d.range.start.line, d.range.start.character);
            rows.push((
                key,
                line,
                json!({"path": pt.path, "line": pt.line, "col": pt.col,
                "severity": format::severity_name(d.severity), "code": format::diagnostic_code(d),
                "message": d.message, "source": f.client.server}),
            ));
        }
    }
    rows.sort_by_key(|(key, _, _)| *key);
    let total = rows.len();
    if total == 0 {
        text.push_str(&format!(
            "no diagnostics in {disp} ({})",
            servers.join(", ")
        ));
        return Ok(ToolOutput::text(text)
            .with_structured(json!({"diagnostics": [], "total": 0, "final": final_answer})));
    }
    let (lines, mut structured): (Vec<String>, Vec<serde_json::Value>) =
        rows.into_iter().map(|(_, l, j)| (l, j)).unzip();
    let capped = cap_list(lines, LIST_CAP);
    text.push_str(&format!(
        "{total} diagnostic(s) in {disp}:\n{}",
        capped.shown.join("\n")
    ));
    if let Some(m) = capped.more_line() {
        text.push('\n');
        text.push_str(&m);
    }
    structured.truncate(LIST_CAP);
    Ok(ToolOutput::text(text)
        .with_structured(json!({"diagnostics": structured, "total": total, "final": final_answer})))
}
