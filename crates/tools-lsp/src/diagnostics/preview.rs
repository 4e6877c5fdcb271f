//! Preview diagnostics: what a change would add and remove, asked before it is written.
//!
//! Per server, holding its observation lock (a write's observation of the same server
//! waits, and so does another preview):
//! 1. The settled state before, exactly as a write takes it (external changes, importers
//!    opened as baseline observers, the same settle rules) — including, when an earlier
//!    write's result was given before the server had settled on it, the wait for what that
//!    write was still waiting for (bounded by `index_wait_ms`, said first when the bound is
//!    hit): its late arrivals are that write's, never part of the prediction. The preview
//!    shows them as that write's; they stay pending, so the next write names them again.
//! 2. The proposed texts go to the server as *unsaved* changes: `didChange` for open
//!    documents, `didOpen` for the others; no `didSave`, and the disk is never touched.
//!    The server settles again with the same rules; pull servers are pulled.
//! 3. The difference is judged like a write's, against a *copy* of the run's ledger: the
//!    ledger, the pending-write bookkeeping and the write counter stay as they were.
//! 4. The answer is sent, and then every document gets back the text it had before (the
//!    disk's; what was opened only for the preview is closed) and the server settles on it
//!    once more. The old text is put back rather than the disk re-read, so a write that
//!    raced the preview is still a change when its own observation syncs it.
//!    Until that restore has settled the observation lock is still held and syncs from
//!    the disk wait, so a following write, query or `diagnostics` sees the disk's state.
//!    The whole sequence runs as its own task: a caller that gives up half-way never leaves
//!    a server with proposed texts in it.
//!
//! What cannot be previewed is named in the answer: checks that run only on saved files
//! (rust-analyzer's `cargo check`, the project checkers of `diagnostics "*"`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tools_core::{CallCtx, PreviewReport, ProposedFile, Section};
use tools_core::{MAX_PREVIEW_FILE_BYTES, PreImage};

use crate::answer::format::Renderer;
use crate::client::LspClient;
use crate::diagnostics::baseline::{
    Before, ON_WRITE_FILES, pull_open, state_before, within_workspace,
};
use crate::diagnostics::findings::Findings;
use crate::diagnostics::grouping::{by_server, display};
use crate::diagnostics::late::{PendingWrite, late_block};
use crate::diagnostics::ledger::DiagnosticsLedger;
use crate::diagnostics::report::{Change, Parts, render_report};
use crate::diagnostics::settle::{SettleGoal, checks_on_save, settle};
use crate::diagnostics::state_diff::{DiagnosticState, Transition, diff_states};
use crate::servers::supervisor::ServerSupervisor;

/// What one server showed of one proposed change.
struct Predicted {
    client: Arc<LspClient>,
    /// An earlier write's late arrivals: that write and the state they arrived in.
    late: Option<(PendingWrite, DiagnosticState)>,
    before: DiagnosticState,
    before_settled: bool,
    observers: Vec<PathBuf>,
    after: DiagnosticState,
    touched: Vec<PathBuf>,
    pending: Option<String>,
    notes: Vec<String>,
}

/// The [`tools_core::WriteObserver::preview`] of diagnostics on write.
///
/// `ledger_copy` gives a copy of the run's ledger; it is asked once the servers have
/// answered, so the prediction is judged against the ledger as it is then. `pending` holds
/// the run's writes whose servers had not settled when their results were given, by
/// (language, root): the state before waits for them first.
pub(crate) async fn predict(
    sup: &Arc<ServerSupervisor>,
    pending: &HashMap<(String, PathBuf), PendingWrite>,
    ledger_copy: impl FnOnce() -> DiagnosticsLedger,
    ctx: &CallCtx,
    proposed: &[ProposedFile],
) -> PreviewReport {
    let mut notes = Vec::new();
    let mut files: Vec<ProposedFile> = Vec::new();
    for f in proposed {
        if files.iter().any(|g| g.path == f.path) {
            continue;
        }
        if f.text.len() > MAX_PREVIEW_FILE_BYTES {
            notes.push(format!(
                "{}: not previewed (its proposed text is over {MAX_PREVIEW_FILE_BYTES} bytes)",
                display(sup, &f.path)
            ));
            continue;
        }
        files.push(f.clone());
    }
    if files.len() > ON_WRITE_FILES {
        notes.push(format!(
            "{} more file(s) of this change were not previewed (at most {ON_WRITE_FILES} per preview, as after a write)",
            files.len() - ON_WRITE_FILES
        ));
        files.truncate(ON_WRITE_FILES);
    }
    let (groups, unreachable) =
        by_server(sup, files.iter().map(|f| f.path.clone()).collect()).await;
    let mut report = PreviewReport {
        not_covered: unreachable,
        ..Default::default()
    };
    if groups.is_empty() {
        if !notes.is_empty() {
            report.not_covered.extend(notes);
        }
        return report;
    }
    for (client, paths) in &groups {
        let header = paths.iter().any(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "h" | "hh" | "hpp" | "hxx" | "inc"))
        });
        if header
            && client.server.starts_with("clangd")
            && !client.args.iter().any(|a| a == "--use-dirty-headers")
        {
            report.not_covered.push(
                "clangd's view of files that include a previewed header (it reads included headers from the disk; \
                 start it with --use-dirty-headers, clangd 15 or later, in [lsp.servers.c] command to cover them)"
                    .into(),
            );
        }
        if checks_on_save(client) {
            report.not_covered.push(format!(
                "{}'s `cargo check` (it runs on saved files only; the prediction is {}'s own analysis of the unsaved text)",
                client.server, client.server
            ));
        }
    }
    report.not_covered.push(
        "the project checkers of `lsp` diagnostics \"*\" (they read saved files only)".into(),
    );
    let runs = groups.into_iter().map(|(client, paths)| {
        let mine: Vec<ProposedFile> = files
            .iter()
            .filter(|f| paths.contains(&f.path))
            .cloned()
            .collect();
        let earlier = pending
            .get(&(client.language.clone(), client.root.clone()))
            .filter(|e| e.pid == client.pid())
            .cloned();
        preview_on(Arc::clone(sup), client, mine, earlier)
    });
    let predicted: Vec<Predicted> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();

    let mut ledger = ledger_copy();
    let mut findings = Findings::default();
    let mut pending_json = Vec::new();
    let mut late_blocks = Vec::new();
    let mut late_json = Vec::new();
    // Several servers (a type checker and its linter): each finding says which one, as a
    // write's result does.
    let several = predicted.len() > 1;
    for p in &predicted {
        notes.extend(p.notes.iter().cloned());
        let mut r = Renderer::new(ctx.run.root(), p.client.encoding);
        if let Some((earlier, now)) = &p.late
            && let Some((block, structured)) = late_block(&mut ledger, &mut r, earlier, now)
        {
            late_blocks.push(block);
            late_json.extend(structured);
        }
        let changes = diff_states(
            &mut ledger,
            Transition {
                before: &p.before,
                after: &p.after,
                touched: &p.touched,
                deleted: &[],
                baseline: &p.observers,
                before_settled: p.before_settled,
            },
        );
        findings.add(&mut r, &changes, &p.client.server, several);
        if let Some(what) = &p.pending {
            let waited = sup.config().diagnostics_wait_ms;
            notes.push(format!(
                "prediction incomplete — {} had not settled after {waited} ms (still waiting for {what})",
                p.client.server
            ));
            pending_json.push(json!({"server": p.client.server, "waiting_for": what}));
        }
    }
    let written: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let rendered = render_report(Parts {
        change: Change::Preview,
        findings,
        written: &written,
        notes: &notes,
        late_blocks,
        settled: predicted.iter().all(|p| p.pending.is_none()),
        display: &|p: &Path| display(sup, p),
    });
    let servers: Vec<&str> = predicted.iter().map(|p| p.client.server.as_str()).collect();
    let mut structured = rendered.json;
    structured["preview"] = json!(true);
    structured["servers"] = json!(servers);
    structured["pending"] = json!(pending_json);
    structured["late"] = json!(late_json);
    structured["notes"] = json!(notes);
    report
        .sections
        .push(Section::new("diagnostics", rendered.text).with_structured(structured));
    report
}

/// Steps 1–4 of the module doc on one server, as a task of its own; `earlier` is the
/// run's write to it still pending, if any. `None` only when the task itself failed.
async fn preview_on(
    sup: Arc<ServerSupervisor>,
    client: Arc<LspClient>,
    files: Vec<ProposedFile>,
    earlier: Option<PendingWrite>,
) -> Option<Predicted> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let observing = client.observation().await;
        let cfg = sup.config().clone();
        let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        // 1. The state before, as a write takes it.
        let Before {
            state: mut before,
            settled: before_settled,
            first_analysis_unfinished,
            mut observers,
            open_importers,
            users: _,
            judged,
            unconfirmed: _,
            mut notes,
        } = state_before(
            &sup,
            &client,
            &paths,
            &disk_texts(&paths),
            earlier.as_ref().and_then(PendingWrite::wait_for),
            // A preview's texts go over as changes, never as reopened documents.
            false,
        )
        .await;
        let late = earlier.map(|e| (e, before.clone()));
        for p in &paths {
            if !client.is_open(p).await {
                before.remove(p);
            }
        }
        // 2. The proposed texts, unsaved (once no query reads the server's view).
        client.begin_preview().await;
        let since = client.publish_seq();
        let mut opened_now = Vec::new();
        let mut previous = Vec::new();
        let mut expect = Vec::new();
        let mut likely = Vec::new();
        for f in files {
            let was_open = client.is_open(&f.path).await;
            if let Some(doc) = client.open_doc_state(&f.path).await {
                previous.push((f.path.clone(), doc.text));
            }
            let known = client.published(&f.path).is_some();
            match client.propose_text(&f.path, f.text).await {
                Ok(doc) => {
                    if !was_open {
                        opened_now.push(f.path.clone());
                    }
                    if doc.changed && (was_open || !known) {
                        expect.push((f.path, doc.version));
                    } else if doc.changed {
                        likely.push((f.path, doc.version));
                    }
                }
                Err(e) => notes.push(format!("{}: {e}", f.path.display())),
            }
        }
        recheck_importers(&client, &open_importers, &mut likely).await;
        let complete =
            crate::diagnostics::republish::refine(&client, &mut expect, &mut likely).await;
        let goal = SettleGoal {
            publishes: expect,
            likely,
            since_seq: since,
            changed_at: Some(Instant::now()),
            saved: None,
            complete,
            quiet: cfg.diagnostics_quiet(),
            first_analysis: false,
            deadline: Instant::now() + cfg.diagnostics_wait(),
        };
        let pending = settle(&client, &goal).await.err();
        if client.pulls_diagnostics() {
            pull_open(&client, &[]).await;
        }
        let after = within_workspace(&sup, client.snapshot());
        if first_analysis_unfinished {
            observers.extend(
                after
                    .keys()
                    .filter(|p| !paths.contains(p) && !judged.contains(p))
                    .cloned(),
            );
        }
        // 3. The answer goes out now; the restore follows.
        let _ = tx.send(Predicted {
            client: Arc::clone(&client),
            late,
            before,
            before_settled,
            observers,
            after,
            touched: paths.clone(),
            pending,
            notes,
        });
        restore(&client, &previous, &opened_now, &open_importers, &cfg).await;
        client.set_previewing(false);
        drop(observing);
    });
    rx.await.ok()
}

/// What the previewed files hold on disk: the text from before the change, for a server
/// that has to be shown it first (see [`crate::diagnostics::dependents::open_before_write`]).
fn disk_texts(paths: &[PathBuf]) -> HashMap<PathBuf, PreImage> {
    paths
        .iter()
        .filter_map(|p| {
            std::fs::read(p)
                .ok()
                .map(|b| (p.clone(), PreImage::Content(b)))
        })
        .collect()
}

/// The open importers of the changed files, as publishes likely to follow the change.
/// A server that would not re-check them on its own for an unsaved change (clangd) is
/// handed them again under a new version first.
async fn recheck_importers(
    client: &LspClient,
    open_importers: &[PathBuf],
    likely: &mut Vec<(PathBuf, i32)>,
) {
    let nudge = matches!(client.language.as_str(), "c" | "cpp");
    for dep in open_importers {
        let version = if nudge {
            client.recheck(dep).await.ok().flatten()
        } else {
            client.open_version(dep).await
        };
        if let Some(v) = version {
            likely.push((dep.clone(), v));
        }
    }
}

/// Step 4: the server back on the texts it had before the preview (the disk's then), and
/// its settled state on them. Documents are put back to that text rather than re-read: a
/// write that raced the preview then still looks like a change to its own observation.
async fn restore(
    client: &LspClient,
    previous: &[(PathBuf, String)],
    opened_now: &[PathBuf],
    open_importers: &[PathBuf],
    cfg: &crate::servers::config::LspConfig,
) {
    let since = client.publish_seq();
    let mut expect = Vec::new();
    let mut likely = Vec::new();
    for p in opened_now {
        if let Err(e) = client.close_file(p).await {
            tracing::warn!("restoring {} after a preview: {e}", p.display());
        }
        // A server that diagnoses the workspace republishes it from the disk.
        likely.push((p.clone(), 0));
    }
    for (p, text) in previous {
        match client.withdraw_proposal(p, text.clone()).await {
            Ok(doc) if doc.changed => expect.push((p.clone(), doc.version)),
            Ok(_) => {}
            Err(e) => {
                // The server must not keep the proposal: closed, it reads the disk.
                tracing::warn!("restoring {} after a preview: {e}", p.display());
                let _ = client.close_file(p).await;
            }
        }
    }
    recheck_importers(client, open_importers, &mut likely).await;
    let complete = crate::diagnostics::republish::refine(client, &mut expect, &mut likely).await;
    let goal = SettleGoal {
        publishes: expect,
        likely,
        since_seq: since,
        changed_at: Some(Instant::now()),
        saved: None,
        complete,
        quiet: cfg.diagnostics_quiet(),
        first_analysis: false,
        deadline: Instant::now() + cfg.diagnostics_wait(),
    };
    if let Err(what) = settle(client, &goal).await {
        tracing::debug!(
            "{} had not settled on the restored texts after a preview (waiting for {what})",
            client.server
        );
    }
    if client.pulls_diagnostics() {
        // The restored documents are pulled at the text just put back, not re-read: the
        // disk may already hold a write made right after the answer (accepting the
        // preview), which its own observation must still see as a change.
        let restored: Vec<PathBuf> = previous.iter().map(|(p, _)| p.clone()).collect();
        pull_open(client, &restored).await;
    }
}
