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
//! 3. "New" is the difference between the two states, per file and per key (severity,
//!    code, message — never the position; see the `state_diff` module); the diagnostics
//!    that disappeared are named as gone. Files observed for the first time are baseline,
//!    never new.
//!
//! A server that has not been seen settled since it started may still be on its first
//! analysis: the written files are first shown to it at their text from before the write,
//! and the state before is the end of that analysis, waited for as long as a query waits
//! for indexing (the `baseline` module). If that bound is hit, every file the write did
//! not touch is baseline — now and when its late arrivals come — and the answer's first
//! line says so.
//!
//! When the bound is hit, the result says "pending", names the server and what it was
//! still doing, and the write is remembered so its late arrivals can be attributed to it:
//! the next write to that server — and any preview before it — takes its state before only
//! once the server has settled on the earlier write, waited for as long as a first analysis
//! (`index_wait_ms`): its written files published, and the files found depending on them
//! (found for it, or for an earlier write of the same file when its own look-up was cut
//! short) published again where the server republishes every dependent (pyright, which
//! re-checks them after the written file, later than a bound cut short), so what the
//! earlier write caused is named as that write's even when the next write undoes it, and
//! never enters a preview's prediction (a preview shows it as that write's and leaves it
//! pending: the write that follows names it again; see the `late` module).
//! (Once per stretch of unsettled writes: a server that did not settle before the earlier
//! write either gets the usual bound.)
//! A bound that was hit always leads the answer, with what to call for the rest.
//!
//! Where the server re-checks every file that depends on a changed one (pyright) and the
//! files using what the write changed are all known (see `dependents::open_users`), the
//! result is given once those and the written files are checked (`settle::settle_affected`):
//! the rest of the server's pass goes on behind the answer and is handled as a bound that
//! was hit — remembered, waited for by the next write, what it shows named as this write's
//! late diagnostics — without a note in the text (nothing the write can directly break is
//! left unchecked; the structured result's `pending` says `affected_checked`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lsp_types::FileChangeType;
use serde_json::json;
use tools_core::PreImage;
use tools_core::{
    CallCtx, PreviewReport, ProposedFile, Section, SyncShare, WriteObserver, WritePass,
};

use crate::answer::format::Renderer;
use crate::client::{LspClient, WriteClaim};
use crate::diagnostics::ledger::DiagnosticsLedger;
use crate::diagnostics::settle::{SettleGoal, settle, settle_affected};
use crate::diagnostics::state_diff::{DiagnosticState, FileChange, Transition, diff_states};
use crate::servers::supervisor::ServerSupervisor;

use crate::diagnostics::baseline::{Before, pull_open, state_before, within_workspace};
use crate::diagnostics::deferred::DeferredCheck;
use crate::diagnostics::findings::Findings;
use crate::diagnostics::grouping::{by_server, display};
use crate::diagnostics::late::{PendingWrite, late_block};
use crate::diagnostics::pages::WriteLists;
use crate::diagnostics::preview::predict;
use crate::diagnostics::report::{Change, Parts, render_report};

pub use crate::diagnostics::baseline::ON_WRITE_FILES;
pub use crate::diagnostics::findings::{GONE_CAP, ON_WRITE_CAP};
pub use crate::diagnostics::ledger::{LedgerKey, LedgerUpdate, ledger_key};

/// The diagnostics-on-write observer.
pub struct DiagnosticsOnWrite {
    sup: Arc<ServerSupervisor>,
    ledger: Mutex<DiagnosticsLedger>,
    writes: AtomicU64,
    pending: Mutex<HashMap<(String, PathBuf), PendingWrite>>,
    /// Files a writing tool had observed itself (see [`DiagnosticsOnWrite::observe_now`]),
    /// with their disk stamp then: the registry's pass over the same write skips them.
    observed_by_tool: Mutex<HashMap<PathBuf, Option<DiskStamp>>>,
    /// The full lists of the last writes whose result was cut, for `lsp` to page.
    pages: WriteLists,
    /// A check a writing tool left running; it leads the next write's result.
    deferred: DeferredCheck,
    /// The open files found depending on a written file, per server process and file (see
    /// [`DiagnosticsOnWrite::dependents_of`]).
    dependents: Mutex<HashMap<(i32, PathBuf), Vec<PathBuf>>>,
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
    /// What the server was still doing when the files the write affects were checked and
    /// the result was given without waiting for the rest.
    rest: Option<String>,
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
            pages: WriteLists::default(),
            deferred: DeferredCheck::default(),
            dependents: Mutex::new(HashMap::new()),
        }
    }

    /// The check a writing tool left running after its answer (see the `deferred` module).
    pub fn deferred(&self) -> &DeferredCheck {
        &self.deferred
    }

    /// A page of write `number`'s new diagnostics from `offset`, in the order its result
    /// showed them (only a write whose list was cut keeps it): the text and its paging
    /// facts.
    pub fn page(
        &self,
        number: u64,
        offset: usize,
    ) -> Result<(String, serde_json::Value), tools_core::ToolError> {
        self.pages.page(number, offset)
    }

    /// The diagnostics of a write, observed by the writing tool itself before it answers
    /// (`lsp_rename` checks the servers' synced view of what it wrote). The same sections
    /// as the registry's pass would give; that pass then skips these files, unless they
    /// changed again in between.
    /// The files are marked as the tool's before they are observed, so the registry's pass
    /// skips them even while this observation is still running (a check left running).
    pub async fn observe_now(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        self.leave_to_tool(touched);
        self.observe_write(ctx, touched, &WritePass::detached())
            .await
    }

    /// Marks `touched`, as they are now on disk, as observed by the writing tool: the
    /// registry's pass skips them. Called before the tool answers when its observation may
    /// still be running then.
    pub fn leave_to_tool(&self, touched: &[PathBuf]) {
        let mut seen = match self.observed_by_tool.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        for p in touched {
            seen.insert(p.clone(), disk_stamp(p));
        }
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

    fn known_dependents(&self) -> std::sync::MutexGuard<'_, HashMap<(i32, PathBuf), Vec<PathBuf>>> {
        match self.dependents.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }

    /// The open files depending on `paths` for `client`: `found` for this write (its open
    /// importers, the users of what it changed), and those found for an earlier write of
    /// the same file that are still open — a look-up cut short by a tight bound (the
    /// server's references take longer) still knows them. Remembered per written file, from
    /// writes of one file only (a look-up over several does not say which file each
    /// dependent depends on), at most `dependents_cap` per file; a written file is nobody's
    /// remembered dependent any more (the write may have dropped its import).
    async fn dependents_of(
        &self,
        client: &LspClient,
        paths: &[PathBuf],
        found: Vec<PathBuf>,
    ) -> Vec<PathBuf> {
        let pid = client.pid();
        let cap = self.sup.config().dependents_cap;
        let remembered: Vec<PathBuf> = {
            let mut known = self.known_dependents();
            for deps in known.values_mut() {
                deps.retain(|d| !paths.contains(d));
            }
            if let [only] = paths {
                let deps = known.entry((pid, only.clone())).or_default();
                for f in &found {
                    if !deps.contains(f) {
                        deps.push(f.clone());
                    }
                }
                let over = deps.len().saturating_sub(cap);
                deps.drain(..over);
            }
            paths
                .iter()
                .filter_map(|p| known.get(&(pid, p.clone())))
                .flatten()
                .cloned()
                .collect()
        };
        let mut all = found;
        for d in remembered {
            if !all.contains(&d) && !paths.contains(&d) && client.is_open(&d).await {
                all.push(d);
            }
        }
        all
    }

    fn pending_map(&self) -> std::sync::MutexGuard<'_, HashMap<(String, PathBuf), PendingWrite>> {
        match self.pending.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }

    /// Steps 1 and 2 of the module doc for one server.
    async fn observe(
        &self,
        client: Arc<LspClient>,
        paths: Vec<PathBuf>,
        number: u64,
        pre_images: &HashMap<PathBuf, PreImage>,
        claim: &WriteClaim,
        syncing: Option<SyncShare>,
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
        let reopens = crate::diagnostics::republish::reopens_written_files(&client);

        // 1. Observers and external changes first, then the settled state before.
        let Before {
            state: mut before,
            settled: before_settled,
            first_analysis_unfinished,
            mut observers,
            open_importers,
            users,
            judged,
            unconfirmed,
            notes: before_notes,
        } = state_before(
            &self.sup,
            &client,
            &paths,
            pre_images,
            earlier.as_ref().and_then(PendingWrite::wait_for),
            reopens,
        )
        .await;
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
        let synced_at = Instant::now();
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
            let synced = match reopens && was_open {
                true => client.reopen_file(p).await,
                false => client.sync_file(p).await,
            };
            match synced {
                Ok(doc) => {
                    let _ = client.did_save(&doc).await;
                    if doc.changed && (was_open || !known) {
                        expect.push((p.clone(), doc.version));
                    } else if doc.changed {
                        likely.push((p.clone(), doc.version));
                    }
                }
                Err(e) => notes.push(format!("{}: {e}", display(&self.sup, p))),
            }
        }
        // Users whose state before is an earlier publish (see `Before::unconfirmed`) go
        // over again after the written files: what the server publishes of them at the
        // new version is checked against the written text.
        for user in &unconfirmed {
            if let Err(e) = client.reopen_file(user).await {
                notes.push(format!("{}: {e}", display(&self.sup, user)));
            }
        }
        // The server has the write: the other observers may ask it about the new text
        // while this one waits for its verdict.
        drop(syncing);
        // A server that diagnoses open documents re-checks the open importers after the
        // change and republishes them: wait for those too (likely, not certain).
        let dependents = self.dependents_of(&client, &paths, open_importers).await;
        for dep in &dependents {
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
            first_analysis: false,
            deadline: Instant::now() + cfg.diagnostics_wait(),
        };
        // Where the server re-checks every file that depends on a changed one (pyright),
        // the write's result is complete once the files using what it changed are checked:
        // the rest of its pass goes on behind the answer, and what it shows is this
        // write's late news.
        let affected: Option<Vec<(PathBuf, i32)>> = match users {
            Some(users)
                if deleted.is_empty()
                    && crate::diagnostics::republish::republishes_dependents(&client) =>
            {
                let mut files = Vec::new();
                let mut all_open = true;
                for user in users {
                    match client.open_version(&user).await {
                        Some(v) => files.push((user, v)),
                        None => all_open = false,
                    }
                }
                all_open.then_some(files)
            }
            _ => None,
        };
        let (pending, rest) = match &affected {
            Some(files) => match settle_affected(&client, &goal, files).await {
                Ok(rest) => (None, rest),
                Err(what) => (Some(what), None),
            },
            None => (settle(&client, &goal).await.err(), None),
        };
        client.note_write_verdict(synced_at.elapsed());
        if client.pulls_diagnostics() {
            pull_open(&client, &[]).await;
        }
        let after = within_workspace(&self.sup, client.snapshot());
        if first_analysis_unfinished {
            observers.extend(
                after
                    .keys()
                    .filter(|p| !paths.contains(p) && !judged.contains(p))
                    .cloned(),
            );
        }
        for (who, p) in claim.others() {
            if !paths.contains(&p) && !observers.contains(&p) {
                notes.push(format!(
                    "{} was written at the same time by session {who}: what changed there is that write's, not this one's",
                    display(&self.sup, &p)
                ));
                observers.push(p);
            }
        }
        if pending.is_some() || rest.is_some() {
            let label = paths
                .iter()
                .map(|p| display(&self.sup, p))
                .collect::<Vec<_>>()
                .join(", ");
            self.pending_map().insert(
                key,
                PendingWrite {
                    number,
                    label,
                    pid: client.pid(),
                    after: after.clone(),
                    // While the first analysis runs, a written file whose state before
                    // is empty is as unknown as the rest (pyright publishes an empty
                    // list for every file before it checks it): its first real report
                    // holds what it had wrong before the write too.
                    only_touched: first_analysis_unfinished.then(|| {
                        paths
                            .iter()
                            .filter(|p| before.get(*p).is_some_and(|s| !s.items.is_empty()))
                            .cloned()
                            .collect()
                    }),
                    // Given once the files using what changed were checked: those are
                    // published already, and an importer the server may not count as a
                    // dependent (one outside its program) must not hold the next write up.
                    goal: match rest {
                        Some(_) => goal,
                        None => for_later(&client, goal, &dependents),
                    },
                    before_settled,
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
            rest,
            notes,
        }
    }
}

#[async_trait::async_trait]
impl WriteObserver for DiagnosticsOnWrite {
    async fn preview(&self, ctx: &CallCtx, proposed: &[ProposedFile]) -> PreviewReport {
        // A copy of the run's ledger, taken once the servers have answered, judges the
        // prediction without recording it.
        // The run's pending writes, as they are now: the preview waits for them and leaves
        // them pending (their late arrivals are named again by the next write).
        let pending = self.pending_map().clone();
        predict(&self.sup, &pending, || self.ledger().clone(), ctx, proposed).await
    }

    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        self.after_write_in(ctx, touched, &WritePass::detached())
            .await
    }

    fn syncs_servers(&self) -> bool {
        true
    }

    async fn after_write_in(
        &self,
        ctx: &CallCtx,
        touched: &[PathBuf],
        pass: &WritePass,
    ) -> Vec<Section> {
        let touched = &self.not_observed_yet(touched)[..];
        if touched.is_empty() {
            return Vec::new();
        }
        // A check left running reacts to the same servers: it ends first, and leads.
        let earlier = self.deferred.take().await;
        let mut sections = self.observe_write(ctx, touched, pass).await;
        if let Some(found) = earlier {
            sections.insert(
                0,
                Section::new("earlier check", found.text).with_structured(found.structured),
            );
        }
        sections
    }
}

impl DiagnosticsOnWrite {
    /// Diagnostics on write for `touched` (the files not observed yet); `pass`'s share is
    /// given up once every server has the written text.
    async fn observe_write(
        &self,
        ctx: &CallCtx,
        touched: &[PathBuf],
        pass: &WritePass,
    ) -> Vec<Section> {
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
        // Other runs sharing a server leave these files to this observation.
        let claim = self.sup.claim_write(&uniq);
        let written = uniq.clone();
        let (groups, mut notes) = by_server(&self.sup, uniq).await;
        // A server reads the files of another language it depends on from the disk (the
        // Vue server, the `.ts` module a component imports): it hears they changed before
        // its own files are synced, or it reports breaks that the write fixed.
        for (c, paths) in &groups {
            let mut elsewhere = Vec::new();
            for p in written
                .iter()
                .filter(|p| !paths.contains(p) && p.starts_with(&c.root))
            {
                if !c.is_open(p).await {
                    let kind = if p.exists() {
                        FileChangeType::CHANGED
                    } else {
                        FileChangeType::DELETED
                    };
                    elsewhere.push((p.clone(), kind));
                } else if p.exists() {
                    // Open here too (a rename opened the project's files in the server of
                    // another project): left at its old text, it would report the old
                    // text's errors against the new code as this write's.
                    if let Ok(doc) = c.sync_file(p).await {
                        let _ = c.did_save(&doc).await;
                    }
                }
            }
            let _ = c.files_changed(&elsewhere).await;
        }
        // Several servers on one write: each finding says which one reported it.
        let several = groups.len() > 1;
        if groups.is_empty() && notes.is_empty() {
            return Vec::new();
        }
        let number = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        // Each server syncs on its own: a share each, the observer's own given up now.
        let shares: Vec<Option<SyncShare>> = groups.iter().map(|_| pass.share()).collect();
        pass.servers_synced();
        let observed =
            futures::future::join_all(groups.into_iter().zip(shares).map(|((c, paths), share)| {
                self.observe(c, paths, number, &pre_images, &claim, share)
            }))
            .await;

        let mut findings = Findings::default();
        let mut late_blocks = Vec::new();
        let mut late_json = Vec::new();
        let mut pending_json = Vec::new();
        for o in &observed {
            notes.extend(o.notes.iter().cloned());
            let mut r = Renderer::new(ctx.run.root(), o.client.encoding);
            if let Some((earlier, now)) = &o.late
                && let Some((block, structured)) =
                    late_block(&mut self.ledger(), &mut r, earlier, now)
            {
                late_blocks.push(block);
                late_json.extend(structured);
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
            // Not in the text: every file using what the write changed is checked, and what
            // the rest of the server's pass may still show comes as this write's late news.
            if let Some(what) = &o.rest {
                pending_json.push(json!({"server": o.client.server, "waiting_for": what, "affected_checked": true}));
            }
        }
        if findings.new.is_empty()
            && findings.gone.is_empty()
            && findings.hidden.is_empty()
            && notes.is_empty()
            && late_blocks.is_empty()
        {
            return Vec::new();
        }
        let written: Vec<PathBuf> = observed
            .iter()
            .flat_map(|o| o.touched.iter().cloned())
            .collect();
        let sup = &self.sup;
        let report = render_report(Parts {
            change: Change::Write(number),
            findings,
            written: &written,
            notes: &notes,
            late_blocks,
            settled: !observed.is_empty() && observed.iter().all(|o| o.pending.is_none()),
            display: &|p: &Path| display(sup, p),
        });
        if report.shown < report.ordered.len() {
            self.pages.keep(number, report.ordered);
        }
        let mut structured = report.json;
        structured["write"] = json!(number);
        structured["late"] = json!(late_json);
        structured["pending"] = json!(pending_json);
        structured["notes"] = json!(notes);
        vec![Section::new("diagnostics", report.text).with_structured(structured)]
    }
}

/// What a later change waits for of a write whose own settle was cut short: its `goal`, with
/// the open `dependents` of the written files sure to be published again (not merely
/// likely) where the server republishes every file depending on a changed one — however
/// long after the write's bound that comes, within the later change's own bound.
fn for_later(client: &LspClient, mut goal: SettleGoal, dependents: &[PathBuf]) -> SettleGoal {
    if crate::diagnostics::republish::republishes_dependents(client) {
        let (sure, likely): (Vec<_>, Vec<_>) = goal
            .likely
            .into_iter()
            .partition(|(p, _)| dependents.contains(p));
        goal.publishes.extend(sure);
        goal.likely = likely;
    }
    goal
}
