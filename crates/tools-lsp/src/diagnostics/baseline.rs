//! The settled state before a change, taken the same way for a write and for a preview:
//! external changes and the importers of the changed files first, then one settled state
//! per server, workspace files only.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use tools_core::PreImage;

use crate::client::LspClient;
use crate::diagnostics::dependents::{open_before_write, open_importers};
use crate::diagnostics::settle::{SettleGoal, settle};
use crate::diagnostics::state_diff::DiagnosticState;
use crate::servers::supervisor::ServerSupervisor;

/// Most touched files looked at after one write.
pub const ON_WRITE_FILES: usize = 20;

/// One server's settled state before a change (a write or a preview), with the files that
/// were opened only to observe the change.
pub(crate) struct Before {
    /// Its diagnostics, workspace files only.
    pub state: DiagnosticState,
    /// Whether `state` is a settled state of a server that was up before this change.
    pub settled: bool,
    /// Files opened now only to observe the change (baseline, never new).
    pub observers: Vec<PathBuf>,
    /// Every importer of the changed files that is open (the server re-checks them).
    pub open_importers: Vec<PathBuf>,
    /// What to tell the model about it.
    pub notes: Vec<String>,
}

/// Step 1 of the `observer` module doc: external changes and importers first, then the settled state
/// before a change to `paths` (which stay as the server has them).
///
/// `pre_images` holds what written files held before the write (a preview passes none):
/// for servers that diagnose only open documents, a written file not open yet is opened at
/// that text first, so the importers opened next show the state before the write.
pub(crate) async fn state_before(
    sup: &ServerSupervisor,
    client: &LspClient,
    paths: &[PathBuf],
    pre_images: &HashMap<PathBuf, PreImage>,
) -> Before {
    let cfg = sup.config();
    let mut notes = Vec::new();
    let since = client.publish_seq();
    let mut expect = Vec::new();
    if let Ok(changed) = client.flush_external(paths).await {
        expect.extend(changed);
    }
    // Importers not open yet are opened now, after the written files were opened at their
    // text from before the write where it is known; where it is not, what the importers
    // show may already be the write's doing: they are baseline, never new.
    let before_write = open_before_write(client, paths, pre_images).await;
    expect.extend(before_write.opened.iter().cloned());
    let importers = open_importers(sup, client, paths).await;
    for dep in &importers.opened {
        expect.push(dep.clone());
    }
    let pre = SettleGoal {
        publishes: expect,
        likely: Vec::new(),
        since_seq: since,
        changed_at: None,
        saved: None,
        complete: false,
        quiet: cfg.diagnostics_quiet(),
        deadline: Instant::now() + cfg.diagnostics_wait() / 2,
    };
    let observe_start = Instant::now();
    let pre_settled = settle(client, &pre).await;
    // A server that started for this change had no state before it: what it reports
    // about files nobody changed is a baseline.
    let settled = pre_settled.is_ok() && client.started + cfg.diagnostics_quiet() < observe_start;
    if let Err(what) = pre_settled {
        notes.push(format!(
            "{} was still busy before this write (waiting for {what}); a diagnostic listed below may predate it",
            client.server
        ));
    }
    if client.pulls_diagnostics() {
        pull_open(client, paths).await;
    }
    let state = within_workspace(sup, client.snapshot());
    // An importer with no settled report from before the write has no state to compare
    // with either.
    let observers: Vec<PathBuf> = importers
        .opened
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| !before_write.complete || !state.contains_key(p))
        .collect();
    Before {
        state,
        settled,
        observers,
        open_importers: importers.open,
        notes,
    }
}

/// Only the workspace's files: servers also publish for library sources (related
/// information in the standard library), which are nobody's to fix here.
pub(crate) fn within_workspace(
    sup: &ServerSupervisor,
    mut state: DiagnosticState,
) -> DiagnosticState {
    state.retain(|p, _| p.starts_with(sup.workspace()));
    state
}

/// Pulls the diagnostics of the open documents (capped), for pull servers. `unsynced`
/// documents are pulled as the server has them, without reading the disk: before a write,
/// the written files must stay at their old text until the write is synced (and during a
/// preview, at their proposed text).
pub(crate) async fn pull_open(client: &LspClient, unsynced: &[PathBuf]) {
    for p in client.open_paths().await.into_iter().take(ON_WRITE_FILES) {
        let doc = if unsynced.contains(&p) || client.is_proposed(&p).await {
            client.open_doc_state(&p).await
        } else {
            client.sync_file_now(&p).await.ok()
        };
        if let Some(doc) = doc {
            let _ = client.pull_diagnostics(&doc).await;
        }
    }
}
