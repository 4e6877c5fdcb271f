//! `lsp` action `diagnostics` for one file: the file's diagnostics once its server has
//! settled (see [`crate::settle`]), never a half-finished answer presented as final.
//!
//! Before answering: files changed outside the tools are brought up to date, the file is
//! opened or updated, and the server is given until it is quiet (bounded by
//! `index_wait_ms`). An answer given while the server is still loading or checking says so
//! in its first line.

use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::text::cap_list;
use tools_core::{CallCtx, ToolError, ToolOutput};

use crate::error::LspError;
use crate::format::{self, Renderer};
use crate::lsp_tool::LIST_CAP;
use crate::settle::{SettleGoal, settle};
use crate::supervisor::ServerSupervisor;

/// The shortest bound on settling before answering, whatever `index_wait_ms` says.
const MIN_WAIT: Duration = Duration::from_secs(2);

/// The diagnostics of `path`.
pub async fn file_diagnostics(
    sup: &ServerSupervisor,
    path: &std::path::Path,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let client = sup.client_for(path).await?;
    let ready = client.wait_ready().await;
    let wait = sup.config().index_wait().max(MIN_WAIT);
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
            crate::dependents::open_importers(sup, &client, &[path.to_path_buf()])
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
    let goal = SettleGoal {
        publishes,
        likely,
        since_seq: since,
        changed_at: Some(Instant::now()),
        saved: None,
        quiet: sup.config().diagnostics_quiet(),
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
    let mut r = Renderer::new(ctx.run.root(), client.encoding);
    let mut sorted = items;
    sorted.sort_by_key(|d| (d.range.start.line, d.range.start.character));
    let total = sorted.len();
    let mut text = String::new();
    if let Some(c) = &caveat {
        text.push_str(c);
        text.push('\n');
    }
    if total == 0 {
        text.push_str(&format!("no diagnostics in {disp} ({})", client.server));
        return Ok(ToolOutput::text(text)
            .with_structured(json!({"diagnostics": [], "total": 0, "final": caveat.is_none()})));
    }
    let mut lines = Vec::new();
    let mut structured = Vec::new();
    for d in &sorted {
        let (pt, line) = r.diagnostic(path, d);
        lines.push(line);
        structured.push(json!({"path": pt.path, "line": pt.line, "col": pt.col,
            "severity": format::severity_name(d.severity), "code": format::diagnostic_code(d), "message": d.message}));
    }
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
    Ok(ToolOutput::text(text).with_structured(
        json!({"diagnostics": structured, "total": total, "final": caveat.is_none()}),
    ))
}
