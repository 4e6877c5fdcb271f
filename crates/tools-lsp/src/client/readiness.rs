//! Whether a server is still working: its work-done progress, rust-analyzer's
//! `experimental/serverStatus`, and the bounded waits before answers. A query waits only
//! while the server is on its first *load* of the project (it would answer nothing or the
//! wrong thing); background indexing, checks and the analyses after changes go on behind
//! it, and the answer says when it may be incomplete. Writes and renames wait for the whole first analysis (`wait_ready`): their
//! "before" must be settled.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::progress::WorkKind;
use super::{ANNOUNCED_PROGRESS_LIFETIME, Activity, DocState, LspClient, uri_to_path};

impl LspClient {
    /// How long the server's process has run: since this client started it, or, served by
    /// the daemon, since the daemon did (a warm server is older than this conversation).
    pub fn server_age(&self) -> Duration {
        let before_us = self
            .served
            .as_ref()
            .map(|s| Duration::from_secs_f64(s.server_age_s.max(0.0)))
            .unwrap_or_default();
        self.started.elapsed() + before_us
    }

    /// Whether work-done progress (indexing) is under way, or the server says it is not
    /// quiescent.
    pub fn indexing(&self) -> bool {
        let a = self.activity();
        a.progress_active || a.quiescent == Some(false)
    }

    /// Whether the server is still on its first load of the project, so a query would get an
    /// empty or wrong answer: work-done progress under way that is neither background
    /// indexing nor a check, or rust-analyzer's status not quiescent while no background
    /// work explains it. Once that load is over, work the server begins later (pyright's
    /// analysis after a change) holds nothing: the server answers requests in order, from
    /// the documents as last synced.
    pub fn loading(&self) -> bool {
        if self.shared.loaded.load(Ordering::SeqCst) {
            return false;
        }
        // pyright's progress after it found its files is its analysis of them ("2073 files
        // to analyze", minutes on Django): it answers from every file meanwhile. Taken for
        // a load, it held every query of a run whose first question came before that
        // progress began at the indexing bound.
        if self.answers_before_analysis() && self.shared.files_found.load(Ordering::SeqCst) {
            return false;
        }
        if self.shared.loading_reported() {
            return true;
        }
        self.shared.note_loaded_if_over();
        false
    }

    /// Whether the server's first load was seen to begin and end: it reported work, and
    /// none of what it reports loads the project any more (pyright: its first analysis,
    /// announced as progress, is over). A server that reported no work never says so.
    pub fn first_load_seen_over(&self) -> bool {
        self.shared.note_loaded_if_over();
        self.shared.loaded.load(Ordering::SeqCst)
    }

    /// Whether an answer given now may be incomplete: the server is loading the project or
    /// indexing it (a check under way does not make answers incomplete).
    pub fn still_indexing(&self) -> bool {
        self.loading() || self.shared.board.any(WorkKind::Indexing)
    }

    /// Whether the server is known to check the project after a save: it has been seen to
    /// start a check (reported as progress) after one, or it has run its first project
    /// check (rust-analyzer's `cargo check` at start comes from the same check-on-save
    /// setting). A write then waits for that check however late it begins on a loaded
    /// machine, within the write's own bound.
    pub fn checks_after_save(&self) -> bool {
        self.check_after_save.load(Ordering::SeqCst) || self.first_check_ended().is_some()
    }

    /// The setting at `section` (dotted, as `workspace/configuration` asks for it), `Null`
    /// when unset.
    pub fn setting(&self, section: &str) -> serde_json::Value {
        super::server_messages::lookup_setting(&self.shared.settings, Some(section))
    }

    /// Records that a save was followed by a check.
    pub fn note_check_after_save(&self) {
        self.check_after_save.store(true, Ordering::SeqCst);
    }

    /// Whether the server has been seen settled once since it started (its first
    /// analysis is over, or it never announced one).
    pub fn first_analysis_done(&self) -> bool {
        self.first_analysis_done.load(Ordering::SeqCst)
    }

    /// Records that the run's start started the server, not a call that needed it.
    pub fn note_started_with_the_run(&self) {
        self.started_with_the_run.store(true, Ordering::SeqCst);
    }

    /// Whether the run's start started the server (see `start_at_run_start`).
    pub fn started_with_the_run(&self) -> bool {
        self.started_with_the_run.load(Ordering::SeqCst)
    }

    /// Records that the server was seen settled after its first analysis.
    pub fn note_first_analysis_done(&self) {
        self.first_analysis_done.store(true, Ordering::SeqCst);
        self.shared.note_loaded_if_over();
    }

    /// What the server is doing now.
    pub fn activity(&self) -> Activity {
        Activity {
            progress_active: self
                .shared
                .progress
                .lock()
                .map(|p| !p.is_empty())
                .unwrap_or(false)
                || self.shared.announced.lock().is_ok_and(|a| {
                    a.values()
                        .any(|at| at.elapsed() < ANNOUNCED_PROGRESS_LIFETIME)
                }),
            progress_begun: self.shared.progress_begun.load(Ordering::SeqCst),
            quiescent: self.shared.quiescent.lock().ok().and_then(|q| *q),
            last_event: self
                .shared
                .last_event
                .lock()
                .map(|t| *t)
                .unwrap_or_else(|_| Instant::now()),
            last_told: self
                .shared
                .last_told
                .lock()
                .map(|t| *t)
                .unwrap_or_else(|_| Instant::now()),
            last_disk_news: self.shared.last_disk_news.lock().ok().and_then(|t| *t),
        }
    }

    /// Waits (bounded by the indexing wait) until no work-done progress is under way: the
    /// whole first analysis, indexing and checks included. For what needs the server
    /// settled (a write's "before", a rename). Returns whether the server is idle.
    pub async fn wait_ready(&self) -> bool {
        self.wait_until(|c| !c.indexing()).await
    }

    /// Waits (bounded by the indexing wait) until the server can answer a query: it is no
    /// longer loading the project. Indexing and checks go on behind the answer. Returns
    /// whether the server got there within the bound.
    pub async fn wait_answerable(&self) -> bool {
        self.wait_until(|c| !c.loading()).await
    }

    /// Waits at most `bound` until `met` holds, looking again at each of the server's
    /// events; whether it held in time.
    pub(super) async fn wait_for(&self, bound: Duration, met: impl Fn(&LspClient) -> bool) -> bool {
        let mut rx = self.shared.events.subscribe();
        tokio::time::timeout(bound, async {
            while !met(self) {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await
        .is_ok()
    }

    /// Waits, bounded by the indexing wait, until `done` holds or the server is gone.
    async fn wait_until(&self, done: impl Fn(&LspClient) -> bool) -> bool {
        // Progress usually begins right after `initialized`; give it a moment to show up
        // (not for a warm server of the daemon's: its first load is long over, and the
        // progress still under way was replayed as this client connected).
        let grace = Duration::from_millis(300);
        let age = self.server_age();
        if !self.shared.progress_seen.load(Ordering::SeqCst) && age < grace {
            self.wait_for(grace.saturating_sub(age), |c| {
                c.shared.progress_seen.load(Ordering::SeqCst)
            })
            .await;
        }
        let mut rx = self.shared.events.subscribe();
        let deadline = Instant::now() + self.index_wait;
        loop {
            if done(self) || !self.is_alive() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if tokio::time::timeout(left, rx.changed()).await.is_err() {
                return false;
            }
        }
    }

    /// Whether the server answers a query about an open document correctly before it has
    /// analysed that document (its first publish is not a sign the answer would change):
    /// pyright and basedpyright resolve names on demand from the file and its imports.
    pub fn answers_before_analysis(&self) -> bool {
        self.server.starts_with("pyright") || self.server.starts_with("basedpyright")
    }

    /// For pyright and basedpyright: waits (bounded by the indexing wait, at most 10 s)
    /// until the server has found its project's source files. Until then its program holds
    /// only the open documents, and a workspace-wide question (references, a rename) would
    /// be answered from those alone. Other servers are not held.
    pub async fn wait_project_files_found(&self) {
        if !self.answers_before_analysis() {
            return;
        }
        let bound = self.index_wait.min(Duration::from_secs(10));
        self.wait_for(bound, |c| {
            c.shared.files_found.load(Ordering::SeqCst) || !c.is_alive()
        })
        .await;
        // Waited for once: a server that never says so (another version's wording) is not
        // waited for again on every question.
        self.shared.files_found.store(true, Ordering::SeqCst);
    }

    /// After the first document is opened, servers often begin loading the project
    /// (typescript-language-server reports it only then): wait briefly for that progress
    /// to show up, then for it to end, and (push servers) for the first publish for that
    /// document, the sign it was analysed: tsserver answers a definition with the import
    /// line until then. Once per server, bounded by the indexing wait (at most 8 s). Only
    /// the loading is waited for: indexing and checks go on behind.
    /// Servers that answer from the open file alone are not held: pyright and basedpyright
    /// evaluate what a query needs on demand, and their first publish comes only after
    /// checking the whole file (seconds on a large one).
    pub async fn settle_after_first_open(&self, doc: &DocState) {
        if self.opened_once.swap(true, Ordering::SeqCst) || self.answers_before_analysis() {
            return;
        }
        // Until the server shows progress or publishes for this document (whichever is
        // first; at most 1.5 s: some servers do neither).
        let path = uri_to_path(&doc.uri);
        self.wait_for(Duration::from_millis(1500), |c| {
            c.shared.progress_seen.load(Ordering::SeqCst)
                || path.as_ref().is_some_and(|p| c.published(p).is_some())
        })
        .await;
        self.wait_answerable().await;
        if !self.pulls_diagnostics()
            && let Some(path) = uri_to_path(&doc.uri)
        {
            let bound = self.index_wait.min(Duration::from_secs(8));
            let _ = self.wait_publish(&path, doc.version, 0, bound).await;
        }
    }
}
