//! Diagnostics on write: after any tool reports `touched` files, tell their servers, wait
//! for one *settled* state per server, and append what that write changed — in any file.
//!
//! Per server, in order:
//! 1. Files that depend on the written ones are opened first, for servers that diagnose
//!    only open documents (see the `dependents` module); they and everything else the server
//!    already reported form the state *before* the write, taken once the server is settled
//!    (the `settle` module). Anything a previous write was still waiting for when its result
//!    was given arrives in this first settle and is reported as that earlier write's, by
//!    name — never as this write's.
//! 2. The write is synced (`didChangeWatchedFiles`, `didOpen`/`didChange`, `didSave`) and the
//!    server settles again (bounded by `diagnostics_wait_ms`); pull servers are pulled.
//! 3. "New" is the difference between the two states, filtered through the per-run ledger
//!    (severity, code, message — never the position); the diagnostics that disappeared are
//!    named as gone. Files observed for the first time are baseline, never new.
//!
//! When the bound is hit, the result says "pending", names the server and what it was
//! still doing, and the write is remembered so its late arrivals can be attributed to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lsp_types::FileChangeType;
use serde_json::{Value, json};
use tools_core::PreImage;
use tools_core::text::cap_list;
use tools_core::{CallCtx, PreviewReport, ProposedFile, Section, WriteObserver};

use crate::answer::format::{Renderer, diagnostic_code, diagnostic_line, severity_name};
use crate::client::LspClient;
use crate::diagnostics::dependents::{open_before_write, open_importers};
use crate::diagnostics::ledger::DiagnosticsLedger;
use crate::diagnostics::settle::{SettleGoal, settle};
use crate::diagnostics::state_diff::{DiagnosticState, FileChange, Transition, diff_states};
use crate::servers::supervisor::{Located, ServerSupervisor};

pub use crate::diagnostics::ledger::{LedgerKey, LedgerUpdate, ledger_key};

/// Most new diagnostics listed after one write.
pub const ON_WRITE_CAP: usize = 50;
/// Most gone diagnostics listed after one write.
pub const GONE_CAP: usize = 10;
/// Most touched files looked at after one write.
pub const ON_WRITE_FILES: usize = 20;

/// A write whose server had not settled when its result was given.
#[derive(Debug, Clone)]
struct PendingWrite {
    /// The write's number in this run.
    number: u64,
    /// The files it wrote, for naming it.
    label: String,
    /// The server process it waited on.
    pid: i32,
    /// The state its result was computed from.
    after: DiagnosticState,
}

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

/// Step 1 of the module doc: external changes and importers first, then the settled state
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

/// The diagnostics-on-write observer.
pub struct DiagnosticsOnWrite {
    sup: Arc<ServerSupervisor>,
    ledger: Mutex<DiagnosticsLedger>,
    writes: AtomicU64,
    pending: Mutex<HashMap<(String, PathBuf), PendingWrite>>,
    /// Files a writing tool had observed itself (see [`DiagnosticsOnWrite::observe_now`]),
    /// with their disk stamp then: the registry's pass over the same write skips them.
    observed_by_tool: Mutex<HashMap<PathBuf, Option<DiskStamp>>>,
}

/// A file's modification time and length (`None` when absent).
type DiskStamp = (std::time::SystemTime, u64);

fn disk_stamp(path: &Path) -> Option<DiskStamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// What one server saw of one write.
struct Observed {
    client: Arc<LspClient>,
    before: DiagnosticState,
    /// Whether `before` is a settled state of a server that was up before this write.
    before_settled: bool,
    /// Files opened during this write only to observe them (baseline).
    observers: Vec<PathBuf>,
    after: DiagnosticState,
    touched: Vec<PathBuf>,
    deleted: Vec<PathBuf>,
    /// An earlier write's late arrivals: that write and the state they arrived in.
    late: Option<(PendingWrite, DiagnosticState)>,
    /// What the server was still doing when the bound was hit.
    pending: Option<String>,
    notes: Vec<String>,
}

impl DiagnosticsOnWrite {
    /// An observer over `sup` with a fresh ledger (one per run).
    pub fn new(sup: Arc<ServerSupervisor>) -> Self {
        DiagnosticsOnWrite {
            sup,
            ledger: Mutex::new(DiagnosticsLedger::default()),
            writes: AtomicU64::new(0),
            pending: Mutex::new(HashMap::new()),
            observed_by_tool: Mutex::new(HashMap::new()),
        }
    }

    /// The diagnostics of a write, observed by the writing tool itself before it answers
    /// (`lsp_rename` checks the servers' synced view of what it wrote). The same sections
    /// as the registry's pass would give; that pass then skips these files, unless they
    /// changed again in between.
    pub async fn observe_now(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        let sections = self.after_write(ctx, touched).await;
        let mut seen = match self.observed_by_tool.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        for p in touched {
            seen.insert(p.clone(), disk_stamp(p));
        }
        sections
    }

    /// `touched` without the files a tool already observed as they are now.
    fn not_observed_yet(&self, touched: &[PathBuf]) -> Vec<PathBuf> {
        let mut seen = match self.observed_by_tool.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        touched
            .iter()
            .filter(|p| match seen.remove(*p) {
                Some(stamp) => stamp != disk_stamp(p),
                None => true,
            })
            .cloned()
            .collect()
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, DiagnosticsLedger> {
        match self.ledger.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }

    fn pending_map(&self) -> std::sync::MutexGuard<'_, HashMap<(String, PathBuf), PendingWrite>> {
        match self.pending.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }

    /// The supervisor.
    pub(crate) fn supervisor(&self) -> &Arc<ServerSupervisor> {
        &self.sup
    }

    /// A copy of the run's ledger, to judge a preview without recording it.
    pub(crate) fn ledger_copy(&self) -> DiagnosticsLedger {
        self.ledger().clone()
    }

    /// `paths` grouped by server; files with no server (no marker, no binary, no entry) are
    /// left out quietly, files whose server cannot be had in time are named in the notes.
    pub(crate) async fn by_server(
        &self,
        paths: Vec<PathBuf>,
    ) -> (Vec<(Arc<LspClient>, Vec<PathBuf>)>, Vec<String>) {
        let mut groups: Vec<(Arc<LspClient>, Vec<PathBuf>)> = Vec::new();
        let mut notes = Vec::new();
        for p in paths {
            // The primary server, then its diagnostics-only companions (ruff, eslint). A
            // missing server is quiet unless auto_install starts installing it.
            let loc = match self.sup.locate(&p) {
                Ok(loc) => loc,
                Err(_) => {
                    if let Some(line) = self.sup.install_in_background(&p) {
                        notes.push(format!("{}: {line}", self.display(&p)));
                    }
                    continue;
                }
            };
            for loc in std::iter::once(loc).chain(self.sup.companions(&p)) {
                match self.client_within_bound(&loc).await {
                    Ok(c) => match groups.iter_mut().find(|(g, _)| Arc::ptr_eq(g, &c)) {
                        Some((_, v)) => v.push(p.clone()),
                        None => groups.push((c, vec![p.clone()])),
                    },
                    Err(e) => notes.push(format!("{}: {e}", self.display(&p))),
                }
            }
        }
        (groups, notes)
    }

    pub(crate) fn display(&self, p: &Path) -> String {
        match p.strip_prefix(self.sup.workspace()) {
            Ok(r) => r.display().to_string(),
            Err(_) => p.display().to_string(),
        }
    }

    /// The server for `loc`, waiting for its start no longer than the diagnostics bound: a
    /// server that never answers `initialize` costs a write only that wait (the start goes
    /// on in the background, bounded by its own timeout).
    async fn client_within_bound(&self, loc: &Located) -> Result<Arc<LspClient>, String> {
        let sup = Arc::clone(&self.sup);
        let loc2 = loc.clone();
        let start = tokio::spawn(async move { sup.client_at(&loc2).await });
        match tokio::time::timeout(self.sup.config().diagnostics_wait(), start).await {
            Ok(Ok(Ok(c))) => Ok(c),
            Ok(Ok(Err(e))) => Err(format!("diagnostics unavailable: {e}")),
            Ok(Err(e)) => Err(format!("diagnostics unavailable: {e}")),
            Err(_) => Err(format!(
                "diagnostics pending — the {} server is still starting (no answer to `initialize` within {} ms); \
                 ask `lsp` action `diagnostics` for this file later",
                loc.spec.language,
                self.sup.config().diagnostics_wait_ms
            )),
        }
    }

    /// Steps 1 and 2 of the module doc for one server.
    async fn observe(
        &self,
        client: Arc<LspClient>,
        paths: Vec<PathBuf>,
        number: u64,
        pre_images: &HashMap<PathBuf, PreImage>,
    ) -> Observed {
        // A preview of this server (or another write's observation) finishes first.
        let _observing = client.observation().await;
        let cfg = self.sup.config();
        let quiet = cfg.diagnostics_quiet();
        let key = (client.language.clone(), client.root.clone());
        let earlier = self
            .pending_map()
            .remove(&key)
            .filter(|p| p.pid == client.pid());
        let mut notes = Vec::new();

        // 1. Observers and external changes first, then the settled state before.
        let Before {
            state: mut before,
            settled: before_settled,
            observers,
            open_importers,
            notes: before_notes,
        } = state_before(&self.sup, &client, &paths, pre_images).await;
        notes.extend(before_notes);
        let late = earlier.map(|e| (e, before.clone()));
        // What the server said about a written file it did not have open may already
        // come from the new content (it read the disk, or it started for this write): such
        // a file has no trustworthy state before, so all its diagnostics count (the
        // ledger still drops what was reported earlier).
        for p in &paths {
            if !client.is_open(p).await {
                before.remove(p);
            }
        }

        // 2. The write itself.
        tracing::debug!(server = %client.server, "state before taken; syncing the write");
        let since = client.publish_seq();
        let begun = client.activity().progress_begun;
        let deleted: Vec<PathBuf> = paths.iter().filter(|p| !p.exists()).cloned().collect();
        let gone_events: Vec<(PathBuf, FileChangeType)> = deleted
            .iter()
            .map(|p| (p.clone(), FileChangeType::DELETED))
            .collect();
        let _ = client.files_changed(&gone_events).await;
        for p in &deleted {
            let _ = client.close_file(p).await;
        }
        let mut expect = Vec::new();
        let mut likely = Vec::new();
        for p in paths.iter().filter(|p| p.exists()) {
            // The disk changed: say so first, so servers that read unopened dependents from
            // disk (pyright) re-check the files that import this one.
            let was_open = client.is_open(p).await;
            if !was_open {
                let _ = client
                    .files_changed(&[(p.clone(), FileChangeType::CHANGED)])
                    .await;
            }
            // A server that already published for a file it read from disk may not publish
            // again when it is opened with the same text (pyright): only a change, or a
            // first look, is sure to bring a publish.
            let known = client.published(p).is_some();
            match client.sync_file(p).await {
                Ok(doc) => {
                    let _ = client.did_save(&doc).await;
                    if doc.changed && (was_open || !known) {
                        expect.push((p.clone(), doc.version));
                    } else if doc.changed {
                        likely.push((p.clone(), doc.version));
                    }
                }
                Err(e) => notes.push(format!("{}: {e}", self.display(p))),
            }
        }
        // A server that diagnoses open documents re-checks the open importers after the
        // change and republishes them: wait for those too (likely, not certain).
        for dep in &open_importers {
            if let Some(v) = client.open_version(dep).await {
                likely.push((dep.clone(), v));
            }
        }
        let complete =
            crate::diagnostics::republish::refine(&client, &mut expect, &mut likely).await;
        let goal = SettleGoal {
            publishes: expect,
            likely,
            since_seq: since,
            changed_at: Some(Instant::now()),
            saved: Some(begun),
            complete,
            quiet,
            deadline: Instant::now() + cfg.diagnostics_wait(),
        };
        let pending = settle(&client, &goal).await.err();
        if client.pulls_diagnostics() {
            pull_open(&client, &[]).await;
        }
        let after = within_workspace(&self.sup, client.snapshot());
        if pending.is_some() {
            let label = paths
                .iter()
                .map(|p| self.display(p))
                .collect::<Vec<_>>()
                .join(", ");
            self.pending_map().insert(
                key,
                PendingWrite {
                    number,
                    label,
                    pid: client.pid(),
                    after: after.clone(),
                },
            );
        }
        Observed {
            client,
            before,
            before_settled,
            observers,
            after,
            touched: paths,
            deleted,
            late,
            pending,
            notes,
        }
    }
}

/// One rendered diagnostic: its line and its structured form.
pub(crate) fn render(r: &mut Renderer, path: &Path, d: &lsp_types::Diagnostic) -> (String, Value) {
    let (pt, line) = r.diagnostic(path, d);
    let j = json!({"path": pt.path, "line": pt.line, "col": pt.col,
        "severity": severity_name(d.severity), "code": diagnostic_code(d), "message": d.message});
    (line, j)
}

/// A gone diagnostic: its file and message (its old position may no longer exist).
pub(crate) fn render_gone(r: &Renderer, path: &Path, d: &lsp_types::Diagnostic) -> (String, Value) {
    let disp = r.display(path);
    let line = diagnostic_line(&format!("{disp}:{}", d.range.start.line + 1), d);
    (
        line,
        json!({"path": disp, "line": d.range.start.line + 1, "severity": severity_name(d.severity),
            "code": diagnostic_code(d), "message": d.message}),
    )
}

/// What a write (or a preview) found, as the lines of its answer and their JSON.
#[derive(Default)]
pub(crate) struct Findings {
    /// New diagnostics.
    pub new: (Vec<String>, Vec<Value>),
    /// Diagnostics that went away.
    pub gone: (Vec<String>, Vec<Value>),
}

impl Findings {
    /// Adds one server's `changes`; each finding's JSON names `server`, and its line does
    /// too when `several` servers served the files (a type checker and its linter).
    pub(crate) fn add(
        &mut self,
        r: &mut Renderer,
        changes: &[FileChange],
        server: &str,
        several: bool,
    ) {
        let tag = |(line, mut json): (String, Value)| {
            json["source"] = json!(server);
            match several {
                true => (format!("{line} ({server})"), json),
                false => (line, json),
            }
        };
        for ch in changes {
            for d in &ch.new {
                let (l, j) = tag(render(r, &ch.path, d));
                self.new.0.push(l);
                self.new.1.push(j);
            }
            for d in &ch.gone {
                let (l, j) = tag(render_gone(r, &ch.path, d));
                self.gone.0.push(l);
                self.gone.1.push(j);
            }
        }
    }
}

#[async_trait::async_trait]
impl WriteObserver for DiagnosticsOnWrite {
    async fn preview(&self, ctx: &CallCtx, proposed: &[ProposedFile]) -> PreviewReport {
        crate::diagnostics::preview::predict(self, ctx, proposed).await
    }

    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        let touched = &self.not_observed_yet(touched)[..];
        if touched.is_empty() {
            return Vec::new();
        }
        // Taken for every touched file, observed or not, so none is left to stand for the
        // state before a later call.
        let images = ctx.run.workspace().pre_write_images();
        let pre_images: HashMap<PathBuf, PreImage> = touched
            .iter()
            .filter_map(|p| images.take(p).map(|i| (p.clone(), i)))
            .collect();
        let mut uniq: Vec<PathBuf> = Vec::new();
        for p in touched {
            if !uniq.contains(p) {
                uniq.push(p.clone());
            }
        }
        uniq.truncate(ON_WRITE_FILES);
        let (groups, mut notes) = self.by_server(uniq).await;
        // Several servers on one write: each finding says which one reported it.
        let several = groups.len() > 1;
        if groups.is_empty() && notes.is_empty() {
            return Vec::new();
        }
        let number = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let observed = futures::future::join_all(
            groups
                .into_iter()
                .map(|(c, paths)| self.observe(c, paths, number, &pre_images)),
        )
        .await;

        let mut findings = Findings::default();
        let mut late_blocks = Vec::new();
        let mut late_json = Vec::new();
        let mut pending_json = Vec::new();
        for o in &observed {
            notes.extend(o.notes.iter().cloned());
            let mut r = Renderer::new(ctx.run.root(), o.client.encoding);
            if let Some((earlier, now)) = &o.late {
                let changes = diff_states(
                    &mut self.ledger(),
                    Transition {
                        before: &earlier.after,
                        after: now,
                        touched: &[],
                        deleted: &[],
                        baseline: &[],
                        before_settled: true,
                    },
                );
                let mut lines = Vec::new();
                for ch in &changes {
                    for d in &ch.new {
                        let (l, j) = render(&mut r, &ch.path, d);
                        lines.push(l);
                        late_json.push(json!({"write": earlier.number, "diagnostic": j}));
                    }
                }
                let gone: usize = changes.iter().map(|c| c.gone.len()).sum();
                if !lines.is_empty() || gone > 0 {
                    let mut block = vec![format!(
                        "Late diagnostics of the earlier write #{} ({}), still pending when its result was given — caused by that write, not this one: {} new, {gone} gone.",
                        earlier.number,
                        earlier.label,
                        lines.len()
                    )];
                    let capped = cap_list(lines, ON_WRITE_CAP);
                    block.extend(capped.shown.iter().cloned());
                    block.extend(capped.more_line());
                    late_blocks.push(block.join("\n"));
                }
            }
            let changes: Vec<FileChange> = diff_states(
                &mut self.ledger(),
                Transition {
                    before: &o.before,
                    after: &o.after,
                    touched: &o.touched,
                    deleted: &o.deleted,
                    baseline: &o.observers,
                    before_settled: o.before_settled,
                },
            );
            findings.add(&mut r, &changes, &o.client.server, several);
            if let Some(what) = &o.pending {
                let waited = self.sup.config().diagnostics_wait_ms;
                notes.push(format!(
                    "diagnostics pending — {} had not settled after {waited} ms (still waiting for {what}); \
                     what it reports later will be named as late for this write (#{number}), or ask `lsp` action `diagnostics`",
                    o.client.server
                ));
                pending_json.push(json!({"server": o.client.server, "waiting_for": what}));
            }
        }
        let Findings {
            new: (new_lines, mut new_json),
            gone: (gone_lines, mut gone_json),
        } = findings;
        if new_lines.is_empty()
            && gone_lines.is_empty()
            && notes.is_empty()
            && late_blocks.is_empty()
        {
            return Vec::new();
        }
        let total = new_lines.len();
        let gone = gone_lines.len();
        let mut body = Vec::new();
        if total > 0 {
            body.push(format!("{total} new diagnostic(s) after this write:"));
            let capped = cap_list(new_lines, ON_WRITE_CAP);
            body.extend(capped.shown.iter().cloned());
            body.extend(capped.more_line());
        } else if !observed.is_empty() && observed.iter().all(|o| o.pending.is_none()) {
            body.push("no new diagnostics after this write.".into());
        }
        if gone > 0 {
            body.push(format!(
                "{gone} earlier diagnostic(s) are gone after this write:"
            ));
            let capped = cap_list(gone_lines, GONE_CAP);
            body.extend(capped.shown.iter().map(|l| format!("  {l}")));
            body.extend(capped.more_line());
        }
        body.extend(late_blocks);
        body.extend(notes.iter().cloned());
        new_json.truncate(ON_WRITE_CAP);
        gone_json.truncate(ON_WRITE_CAP);
        vec![
            Section::new("diagnostics", body.join("\n")).with_structured(json!({
                "write": number, "new": new_json, "total_new": total, "gone": gone,
                "gone_list": gone_json, "late": late_json, "pending": pending_json, "notes": notes,
            })),
        ]
    }
}
