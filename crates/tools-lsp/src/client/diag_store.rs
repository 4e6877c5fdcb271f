//! The diagnostics a server has told us about, by file.
//!
//! Two sources are kept apart and merged on reading: what the server *pushed*
//! (`textDocument/publishDiagnostics`) and what we *pulled* (`textDocument/diagnostic`).
//! rust-analyzer does both at once when the client supports pull — its own analysis is
//! pulled while `cargo check` results are pushed — so letting either overwrite the other
//! would lose half of a file's errors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use lsp_types::Diagnostic;

/// One file's diagnostics from one source, or merged.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The document version they are for, if the server said.
    pub version: Option<i32>,
    /// Our sequence number of the publish or pull (monotonic per server): a later one is
    /// newer news.
    pub seq: u64,
    /// The diagnostics.
    pub items: Vec<Diagnostic>,
}

/// Pushed and pulled diagnostics of one server.
#[derive(Debug, Default)]
pub struct DiagnosticsStore {
    pushed: Mutex<HashMap<PathBuf, Published>>,
    pulled: Mutex<HashMap<PathBuf, Published>>,
    seq: AtomicU64,
}

fn merge(push: Option<&Published>, pull: Option<&Published>) -> Option<Published> {
    match (push, pull) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a.clone()),
        (Some(a), Some(b)) => {
            let mut items = b.items.clone();
            for d in &a.items {
                if !items
                    .iter()
                    .any(|x| x.range == d.range && x.message == d.message)
                {
                    items.push(d.clone());
                }
            }
            Some(Published {
                version: b.version.or(a.version),
                seq: a.seq.max(b.seq),
                items,
            })
        }
    }
}

impl DiagnosticsStore {
    /// The sequence number so far (later records are newer).
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }

    fn record(
        &self,
        map: &Mutex<HashMap<PathBuf, Published>>,
        path: PathBuf,
        version: Option<i32>,
        items: Vec<Diagnostic>,
    ) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let mut m = match map.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        m.insert(
            path,
            Published {
                version,
                seq,
                items,
            },
        );
    }

    /// Records a publish from the server.
    pub fn record_push(&self, path: PathBuf, version: Option<i32>, items: Vec<Diagnostic>) {
        self.record(&self.pushed, path, version, items);
    }

    /// Records the answer to a pull.
    pub fn record_pull(&self, path: PathBuf, version: Option<i32>, items: Vec<Diagnostic>) {
        self.record(&self.pulled, path, version, items);
    }

    /// `path`'s diagnostics, both sources merged.
    pub fn get(&self, path: &Path) -> Option<Published> {
        let push = self.pushed.lock().ok()?;
        let pull = self.pulled.lock().ok()?;
        merge(push.get(path), pull.get(path))
    }

    /// Every file's diagnostics, both sources merged.
    pub fn snapshot(&self) -> HashMap<PathBuf, Published> {
        let (Ok(push), Ok(pull)) = (self.pushed.lock(), self.pulled.lock()) else {
            return HashMap::new();
        };
        let mut out = HashMap::new();
        for p in push.keys().chain(pull.keys()) {
            if !out.contains_key(p)
                && let Some(m) = merge(push.get(p), pull.get(p))
            {
                out.insert(p.clone(), m);
            }
        }
        out
    }
}
