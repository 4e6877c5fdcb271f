//! Diagnostics on write: after any tool reports `touched` files, sync them through their
//! servers (`didOpen`/`didChange`, then `didSave`), collect the diagnostics for the *new*
//! document version — and what the server publishes for other files in the same window —
//! and append only the ones that are new to this run.
//!
//! "New" is decided by the per-run [`DiagnosticsLedger`], keyed by (severity, code,
//! message): position is deliberately left out, so a diagnostic that merely moved is not
//! reported again. Only errors and warnings take part; hints and infos are noise here.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lsp_types::{Diagnostic, DiagnosticSeverity};
use serde_json::json;
use tools_core::text::cap_list;
use tools_core::{CallCtx, Section, WriteObserver};

use crate::client::LspClient;
use crate::format::{Renderer, diagnostic_code, severity_name};
use crate::supervisor::ServerSupervisor;

/// Most new diagnostics listed after one write.
pub const ON_WRITE_CAP: usize = 50;
/// Most touched files looked at after one write.
pub const ON_WRITE_FILES: usize = 20;

/// The ledger's key: severity, code and message — never the position.
pub type LedgerKey = (String, String, String);

/// The key of a diagnostic.
pub fn ledger_key(d: &Diagnostic) -> LedgerKey {
    (
        severity_name(d.severity).to_string(),
        diagnostic_code(d).unwrap_or_default(),
        d.message.trim().to_string(),
    )
}

fn counts(d: &Diagnostic) -> bool {
    matches!(
        d.severity,
        None | Some(DiagnosticSeverity::ERROR) | Some(DiagnosticSeverity::WARNING)
    )
}

/// What a run has already been told, and what each file currently has.
#[derive(Debug, Default)]
pub struct DiagnosticsLedger {
    reported: HashSet<LedgerKey>,
    current: HashMap<PathBuf, HashSet<LedgerKey>>,
}

/// The ledger's verdict on one file's fresh diagnostics.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LedgerUpdate {
    /// Indexes (into the given list) of the diagnostics to report.
    pub new: Vec<usize>,
    /// How many keys this file had before and no longer has.
    pub gone: usize,
}

impl DiagnosticsLedger {
    /// Records what `path` had before a write without reporting it (the state the agent
    /// started from).
    pub fn seed(&mut self, path: &Path, diags: &[Diagnostic]) {
        if self.current.contains_key(path) {
            return;
        }
        let keys: HashSet<LedgerKey> = diags.iter().filter(|d| counts(d)).map(ledger_key).collect();
        self.reported.extend(keys.iter().cloned());
        self.current.insert(path.to_path_buf(), keys);
    }

    /// Takes `path`'s fresh diagnostics: returns those whose key was never reported (and
    /// records them) and how many earlier keys of this file are gone. A key that is gone
    /// from every file is forgotten, so if it comes back it is news again.
    pub fn update(&mut self, path: &Path, diags: &[Diagnostic]) -> LedgerUpdate {
        let mut new = Vec::new();
        let mut keys = HashSet::new();
        for (i, d) in diags.iter().enumerate() {
            if !counts(d) {
                continue;
            }
            let k = ledger_key(d);
            if !self.reported.contains(&k) && !keys.contains(&k) {
                new.push(i);
            }
            keys.insert(k);
        }
        let before = self
            .current
            .insert(path.to_path_buf(), keys.clone())
            .unwrap_or_default();
        let gone_keys: Vec<LedgerKey> = before.difference(&keys).cloned().collect();
        self.reported.extend(keys);
        for k in &gone_keys {
            if !self.current.values().any(|s| s.contains(k)) {
                self.reported.remove(k);
            }
        }
        LedgerUpdate {
            new,
            gone: gone_keys.len(),
        }
    }
}

/// The diagnostics-on-write observer.
pub struct DiagnosticsOnWrite {
    sup: Arc<ServerSupervisor>,
    ledger: Mutex<DiagnosticsLedger>,
}

impl DiagnosticsOnWrite {
    /// An observer over `sup` with a fresh ledger (one per run).
    pub fn new(sup: Arc<ServerSupervisor>) -> Self {
        DiagnosticsOnWrite {
            sup,
            ledger: Mutex::new(DiagnosticsLedger::default()),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, DiagnosticsLedger> {
        match self.ledger.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }
}

struct Collected {
    fresh: BTreeMap<PathBuf, Vec<Diagnostic>>,
    pending: Vec<String>,
}

async fn collect(
    client: &LspClient,
    paths: &[PathBuf],
    sup: &ServerSupervisor,
    ledger: &DiagnosticsOnWrite,
) -> Collected {
    let cfg = sup.config();
    let deadline = Instant::now() + cfg.diagnostics_wait();
    let mut fresh = BTreeMap::new();
    let mut pending = Vec::new();
    // The state before the write is the baseline: seed the ledger with it.
    for p in paths {
        if let Some(prev) = client.published(p) {
            ledger.ledger().seed(p, &prev.items);
        }
    }
    let before = client.publish_seq();
    let mut docs = Vec::new();
    let gone: Vec<(PathBuf, u8)> = paths
        .iter()
        .filter(|p| !p.exists())
        .map(|p| (p.clone(), 3u8))
        .collect();
    let _ = client.files_changed(&gone).await;
    for (p, _) in &gone {
        let _ = client.close_file(p).await;
        fresh.insert(p.clone(), Vec::new());
    }
    // The touched files first, so their own sync is the one that reports `changed`.
    for p in paths.iter().filter(|p| p.exists()) {
        // The disk changed: say so first, so servers that read unopened dependents from
        // disk (pyright) re-check the files that import this one.
        if !client.is_open(p).await {
            let _ = client.files_changed(&[(p.clone(), 2)]).await;
        }
        match client.sync_file(p).await {
            Ok(doc) => {
                let _ = client.did_save(&doc).await;
                docs.push((p.clone(), doc));
            }
            Err(e) => pending.push(format!("{}: {e}", sup_display(sup, p))),
        }
    }
    let _ = client.sync_open_docs().await;
    if client.pulls_diagnostics() {
        let others: Vec<PathBuf> = client.open_paths().await;
        for p in others.iter().take(ON_WRITE_FILES) {
            let doc = match docs.iter().find(|(q, _)| q == p) {
                Some((_, d)) => d.clone(),
                None => match client.sync_file(p).await {
                    Ok(d) => d,
                    Err(_) => continue,
                },
            };
            if let Ok(items) = client.pull_diagnostics(&doc).await {
                fresh.insert(p.clone(), items);
            }
        }
        return Collected { fresh, pending };
    }
    for (p, doc) in &docs {
        let left = deadline.saturating_duration_since(Instant::now());
        let got = if !doc.changed {
            match client
                .published(p)
                .filter(|pb| pb.version.is_none_or(|v| v == doc.version))
            {
                Some(pb) => Some(pb),
                None => client.wait_publish(p, doc.version, 0, left).await,
            }
        } else {
            client.wait_publish(p, doc.version, before, left).await
        };
        match got {
            Some(pb) => {
                fresh.insert(p.clone(), pb.items);
            }
            None => {
                let why = if client.indexing() {
                    "it is still indexing"
                } else {
                    "it has not published them yet"
                };
                pending.push(format!(
                    "{}: diagnostics pending — {} {why}; ask `lsp` action `diagnostics` for this file later",
                    sup_display(sup, p),
                    client.server
                ));
            }
        }
    }
    // A short quiet window: follow-up publishes, and the other files this write broke.
    let quiet = cfg.diagnostics_quiet();
    let mut rx = client.events();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match tokio::time::timeout(quiet.min(left), rx.changed()).await {
            Ok(Ok(())) => continue,
            _ => break,
        }
    }
    for (p, pb) in client.published_since(before) {
        fresh.insert(p, pb.items);
    }
    Collected { fresh, pending }
}

fn sup_display(sup: &ServerSupervisor, p: &Path) -> String {
    match p.strip_prefix(sup.workspace()) {
        Ok(r) => r.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

#[async_trait::async_trait]
impl WriteObserver for DiagnosticsOnWrite {
    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        let mut uniq: Vec<PathBuf> = Vec::new();
        for p in touched {
            if !uniq.contains(p) {
                uniq.push(p.clone());
            }
        }
        uniq.truncate(ON_WRITE_FILES);
        // Group by server; files with no server (no marker, no binary, no entry) are quiet.
        let mut groups: Vec<(Arc<LspClient>, Vec<PathBuf>)> = Vec::new();
        let mut notes = Vec::new();
        for p in uniq {
            let Ok(loc) = self.sup.locate(&p) else {
                continue;
            };
            match self.sup.client_at(&loc).await {
                Ok(c) => match groups.iter_mut().find(|(g, _)| Arc::ptr_eq(g, &c)) {
                    Some((_, v)) => v.push(p),
                    None => groups.push((c, vec![p])),
                },
                Err(e) => notes.push(format!(
                    "{}: diagnostics unavailable: {e}",
                    sup_display(&self.sup, &p)
                )),
            }
        }
        if groups.is_empty() && notes.is_empty() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut structured = Vec::new();
        let mut gone = 0usize;
        for (client, paths) in &groups {
            let c = collect(client, paths, &self.sup, self).await;
            notes.extend(c.pending);
            let mut r = Renderer::new(ctx.run.root(), client.encoding);
            for (path, diags) in &c.fresh {
                let upd = self.ledger().update(path, diags);
                gone += upd.gone;
                let mut sorted: Vec<&Diagnostic> = upd.new.iter().map(|&i| &diags[i]).collect();
                sorted.sort_by_key(|d| (d.range.start.line, d.range.start.character));
                for d in sorted {
                    let (pt, line) = r.diagnostic(path, d);
                    lines.push(line);
                    structured.push(json!({"path": pt.path, "line": pt.line, "col": pt.col,
                        "severity": severity_name(d.severity), "code": diagnostic_code(d), "message": d.message}));
                }
            }
        }
        if lines.is_empty() && gone == 0 && notes.is_empty() {
            return Vec::new();
        }
        let total = lines.len();
        let capped = cap_list(lines, ON_WRITE_CAP);
        let mut body = Vec::new();
        if total > 0 {
            body.push(format!("{total} new diagnostic(s) after this write:"));
            body.extend(capped.shown.iter().cloned());
            if let Some(m) = capped.more_line() {
                body.push(m);
            }
        }
        if gone > 0 {
            body.push(format!(
                "{gone} earlier-reported diagnostic(s) are gone after this write."
            ));
        }
        body.extend(notes.iter().cloned());
        structured.truncate(ON_WRITE_CAP);
        vec![
            Section::new("diagnostics", body.join("\n")).with_structured(json!({
                "new": structured, "total_new": total, "gone": gone, "notes": notes,
            })),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{NumberOrString, Position, Range};

    fn diag(line: u32, sev: DiagnosticSeverity, code: &str, msg: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 1)),
            severity: Some(sev),
            code: Some(NumberOrString::String(code.into())),
            message: msg.into(),
            ..Default::default()
        }
    }

    #[test]
    fn moved_diagnostics_are_not_new_and_gone_ones_are_counted() {
        let mut l = DiagnosticsLedger::default();
        let p = Path::new("/w/a.py");
        let e = |line| diag(line, DiagnosticSeverity::ERROR, "undef", "x is not defined");
        assert_eq!(l.update(p, &[e(2)]).new, vec![0]);
        // moved four lines down: not new
        assert_eq!(
            l.update(p, &[e(6)]),
            LedgerUpdate {
                new: vec![],
                gone: 0
            }
        );
        // a different error: only that one
        let other = diag(1, DiagnosticSeverity::ERROR, "undef", "y is not defined");
        assert_eq!(l.update(p, &[e(6), other.clone()]).new, vec![1]);
        // hints do not count
        let hint = diag(1, DiagnosticSeverity::HINT, "unused", "z unused");
        assert_eq!(
            l.update(p, &[e(6), other.clone(), hint]).new,
            Vec::<usize>::new()
        );
        // fixed: nothing new, two gone
        assert_eq!(
            l.update(p, &[]),
            LedgerUpdate {
                new: vec![],
                gone: 2
            }
        );
        // it comes back: news again
        assert_eq!(l.update(p, &[e(3)]).new, vec![0]);
        // seeding records without reporting
        let q = Path::new("/w/b.py");
        l.seed(
            q,
            &[diag(0, DiagnosticSeverity::WARNING, "w", "old warning")],
        );
        assert!(
            l.update(
                q,
                &[diag(5, DiagnosticSeverity::WARNING, "w", "old warning")]
            )
            .new
            .is_empty()
        );
    }
}
