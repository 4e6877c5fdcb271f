//! The diagnostics a server published or answered when pulled, and the waits for a publish
//! of a given document version.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use lsp_types::request::{DocumentDiagnosticRequest, Request};
use lsp_types::{
    Diagnostic, DocumentDiagnosticParams, PartialResultParams, TextDocumentIdentifier,
    WorkDoneProgressParams,
};
use serde_json::Value;
use tokio::sync::watch;
use tools_daemon::ReplayDiagnostics;

use super::watcher::ExternalChanges;
use super::{Burst, DocState, LspClient, Published, ask_again_later, uri_to_path};
use crate::error::{LspError, Result};

/// The longest the daemon takes to send the diagnostics published before a client joined
/// (from memory: 0.1 s for Django's 12 MB; one this slow is stuck).
const REPLAY_LIMIT: Duration = Duration::from_secs(10);

impl LspClient {
    /// Records how long the server took from receiving a write to its settled diagnostics
    /// of it (or to the bound, when it did not settle by then).
    pub fn note_write_verdict(&self, took: Duration) {
        let ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX - 1);
        self.last_verdict_ms.store(ms, Ordering::Relaxed);
    }

    /// How long the server took to give its diagnostics of the last write observed, if one
    /// was: what the check of the next write may be expected to take.
    pub fn last_write_verdict(&self) -> Option<Duration> {
        match self.last_verdict_ms.load(Ordering::Relaxed) {
            u64::MAX => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    /// Every file's last published (or pulled) diagnostics.
    pub fn snapshot(&self) -> HashMap<PathBuf, Published> {
        self.shared.diags.snapshot()
    }

    /// Whether the server answers `textDocument/diagnostic` (pull); otherwise it pushes.
    pub fn pulls_diagnostics(&self) -> bool {
        self.caps.diagnostic_provider.is_some()
    }

    /// Served by the per-user daemon, until the diagnostics its warm server published before
    /// this client joined are recorded (asked for once, here: a navigation query's answer
    /// does not wait for them — 12 MB on Django). Called before diagnostics are read, and
    /// before the publish sequence a wait starts from: the replayed publications are the
    /// state before, never a server's answer to what comes next. Waited for at most
    /// ten seconds; a daemon that sends nothing leaves the files unknown, as for a
    /// server that has not checked them yet.
    pub async fn catch_up_diagnostics(&self) {
        if !matches!(self.external, Some(ExternalChanges::FromDaemon))
            || self.shared.diagnostics_replayed.load(Ordering::SeqCst)
        {
            return;
        }
        if self.notify::<ReplayDiagnostics>(()).await.is_ok() {
            // The end of the replay is a flag the event loop sets: one that came before this
            // wait began is seen at its first look.
            let replayed = self
                .wait_for(REPLAY_LIMIT, |c| {
                    c.shared.diagnostics_replayed.load(Ordering::SeqCst) || !c.is_alive()
                })
                .await;
            if !replayed {
                tracing::debug!(
                    "{}: the daemon's replay of diagnostics did not come",
                    self.server
                );
            }
        }
        self.shared
            .diagnostics_replayed
            .store(true, Ordering::SeqCst);
    }

    /// The publish sequence number so far (publishes after it are newer).
    pub fn publish_seq(&self) -> u64 {
        self.shared.diags.seq()
    }

    /// The last published (and pulled) diagnostics for `path`.
    pub fn published(&self, path: &Path) -> Option<Published> {
        self.shared.diags.get(path)
    }

    /// Every file's diagnostics newer than `after_seq`, by path.
    pub fn published_since(&self, after_seq: u64) -> Vec<(PathBuf, Published)> {
        self.snapshot()
            .into_iter()
            .filter(|(_, p)| p.seq > after_seq)
            .collect()
    }

    /// The bursts of publishes (see [`Burst`]) holding one later than `after_seq`, oldest
    /// first.
    pub fn bursts_since(&self, after_seq: u64) -> Vec<Burst> {
        self.shared.diags.bursts_since(after_seq)
    }

    /// A receiver that changes on every publish and progress event.
    pub fn events(&self) -> watch::Receiver<u64> {
        self.shared.events.subscribe()
    }

    /// Waits up to `max` for a publish for `path` that is for `version` (or, when the server
    /// sends no versions, newer than `after_seq`). `None` when none came in time.
    pub async fn wait_publish(
        &self,
        path: &Path,
        version: i32,
        after_seq: u64,
        max: Duration,
    ) -> Option<Published> {
        let mut rx = self.events();
        let deadline = Instant::now() + max;
        loop {
            if let Some(p) = self.published(path)
                && p.seq > after_seq
                && p.version.is_none_or(|v| v >= version)
            {
                return Some(p);
            }
            if !self.is_alive() {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return None;
            }
        }
    }

    /// Pulls diagnostics for `path` (`textDocument/diagnostic`).
    pub async fn pull_diagnostics(&self, doc: &DocState) -> Result<Vec<Diagnostic>> {
        let params = serde_json::to_value(DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier::new(doc.uri.clone()),
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .map_err(|e| LspError::Other(e.to_string()))?;
        // A server still catching up with a change answers "content modified" or
        // "server cancelled" (rust-analyzer under load): ask again, a few times.
        let mut tries = 0;
        let v = loop {
            let r = self
                .request_raw(
                    DocumentDiagnosticRequest::METHOD,
                    Some(params.clone()),
                    self.request_timeout,
                )
                .await;
            match r {
                Err(LspError::Server { code, .. }) if ask_again_later(code) && tries < 8 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                other => break other?,
            }
        };
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("full");
        let path = uri_to_path(&doc.uri);
        if kind == "unchanged" {
            return Ok(path
                .and_then(|p| self.published(&p))
                .map(|p| p.items)
                .unwrap_or_default());
        }
        let items: Vec<Diagnostic> = v
            .get("items")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| LspError::Decode {
                server: self.server.clone(),
                method: DocumentDiagnosticRequest::METHOD.into(),
                message: e.to_string(),
            })?
            .unwrap_or_default();
        let Some(p) = path else {
            return Ok(items);
        };
        self.shared
            .diags
            .record_pull(p.clone(), Some(doc.version), items);
        self.shared.bump();
        // Both sources: a server that also pushes (rust-analyzer's `cargo check`) keeps those.
        Ok(self.published(&p).map(|x| x.items).unwrap_or_default())
    }
}
