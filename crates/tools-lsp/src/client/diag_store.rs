//! The diagnostics a server has told us about, by file.
//!
//! Two sources are kept apart and merged on reading: what the server *pushed*
//! (`textDocument/publishDiagnostics`) and what we *pulled* (`textDocument/diagnostic`).
//! rust-analyzer does both at once when the client supports pull — its own analysis is
//! pulled while `cargo check` results are pushed — so letting either overwrite the other
//! would lose half of a file's errors.
//!
//! Files are keyed by [`path_key`]: where the file system ignores case (macOS, Windows) a
//! server that names a file in another case than we did still fills in that file's entry.
//! Each entry keeps the path as the server last named it, for listing.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lsp_types::Diagnostic;
use tools_core::platform::path_key;

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

/// `items` in a few words for the debug log, hints too: `line:col severity code (source)`
/// each (the message when there is no code; the source when the server names one). What a
/// server published, and what a write compared, read side by side.
///
/// Its own words for severity and code: the answers' helpers (`answer::format`) sit above the
/// client, which must not import them.
pub(crate) fn brief(items: &[Diagnostic]) -> String {
    let each: Vec<String> = items
        .iter()
        .map(|d| {
            let severity = match d.severity {
                Some(lsp_types::DiagnosticSeverity::ERROR) => "error",
                Some(lsp_types::DiagnosticSeverity::WARNING) => "warning",
                Some(lsp_types::DiagnosticSeverity::INFORMATION) => "info",
                Some(lsp_types::DiagnosticSeverity::HINT) => "hint",
                _ => "unspecified",
            };
            let code = match &d.code {
                Some(lsp_types::NumberOrString::Number(n)) => n.to_string(),
                Some(lsp_types::NumberOrString::String(c)) => c.clone(),
                None => d.message.lines().next().unwrap_or_default().to_string(),
            };
            // Whose finding it is, where a server relays several (rust-analyzer's own and
            // rustc's through `cargo check`).
            let source = d
                .source
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            format!(
                "{}:{} {severity} {code}{source}",
                d.range.start.line + 1,
                d.range.start.character + 1
            )
        })
        .collect();
    format!("[{}]", each.join(", "))
}

/// One source's diagnostics: by [`path_key`], the path as named and its diagnostics.
type Ledger = HashMap<PathBuf, (PathBuf, Published)>;

/// The longest pause between two publishes of one burst. A server that analyses in slices
/// (pyright) sends a slice's publishes back to back, and the next slice checks at least one
/// file first: tens of milliseconds on the smallest. Two slices taken for one only make a
/// reader of the bursts more careful (see `settle`); one slice split in two would not.
const BURST_SPLIT: Duration = Duration::from_millis(20);

/// How many bursts are kept: the ones since a write began are what is read.
const BURSTS_KEPT: usize = 256;

/// Publishes that arrived together, no more than 20 ms apart: what one slice of a
/// server's analysis found, in the order it sent them.
#[derive(Debug, Clone)]
pub struct Burst {
    /// The sequence number of its first publish.
    pub first_seq: u64,
    /// The sequence number of its last publish.
    pub last_seq: u64,
    /// The files published, in the order they came, as the server named them.
    pub paths: Vec<PathBuf>,
    /// When its last publish arrived.
    pub ended: Instant,
}

/// Pushed and pulled diagnostics of one server.
#[derive(Debug, Default)]
pub struct DiagnosticsStore {
    pushed: Mutex<Ledger>,
    pulled: Mutex<Ledger>,
    seq: AtomicU64,
    /// The last pushed publishes, grouped in bursts, oldest first.
    bursts: Mutex<VecDeque<Burst>>,
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
        map: &Mutex<Ledger>,
        path: PathBuf,
        version: Option<i32>,
        items: Vec<Diagnostic>,
    ) -> u64 {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let mut m = match map.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        m.insert(
            path_key(&path),
            (
                path,
                Published {
                    version,
                    seq,
                    items,
                },
            ),
        );
        seq
    }

    /// Records a publish from the server, in its burst.
    pub fn record_push(&self, path: PathBuf, version: Option<i32>, items: Vec<Diagnostic>) {
        let seq = self.record(&self.pushed, path.clone(), version, items);
        let now = Instant::now();
        let mut bursts = match self.bursts.lock() {
            Ok(b) => b,
            Err(p) => p.into_inner(),
        };
        match bursts.back_mut() {
            Some(last) if now.saturating_duration_since(last.ended) <= BURST_SPLIT => {
                last.last_seq = seq;
                last.paths.push(path);
                last.ended = now;
            }
            _ => {
                if bursts.len() == BURSTS_KEPT {
                    bursts.pop_front();
                }
                bursts.push_back(Burst {
                    first_seq: seq,
                    last_seq: seq,
                    paths: vec![path],
                    ended: now,
                });
            }
        }
    }

    /// Records the answer to a pull.
    pub fn record_pull(&self, path: PathBuf, version: Option<i32>, items: Vec<Diagnostic>) {
        self.record(&self.pulled, path, version, items);
    }

    /// The bursts holding a publish later than `after_seq`, oldest first.
    pub fn bursts_since(&self, after_seq: u64) -> Vec<Burst> {
        let bursts = match self.bursts.lock() {
            Ok(b) => b,
            Err(p) => p.into_inner(),
        };
        bursts
            .iter()
            .filter(|b| b.last_seq > after_seq)
            .cloned()
            .collect()
    }

    /// `path`'s diagnostics, both sources merged.
    pub fn get(&self, path: &Path) -> Option<Published> {
        let push = self.pushed.lock().ok()?;
        let pull = self.pulled.lock().ok()?;
        let key = path_key(path);
        merge(
            push.get(&key).map(|(_, p)| p),
            pull.get(&key).map(|(_, p)| p),
        )
    }

    /// Every file's diagnostics, both sources merged.
    pub fn snapshot(&self) -> HashMap<PathBuf, Published> {
        let (Ok(push), Ok(pull)) = (self.pushed.lock(), self.pulled.lock()) else {
            return HashMap::new();
        };
        let mut out = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for (key, (path, _)) in push.iter().chain(pull.iter()) {
            if seen.insert(key)
                && let Some(m) = merge(push.get(key).map(|(_, p)| p), pull.get(key).map(|(_, p)| p))
            {
                out.insert(path.clone(), m);
            }
        }
        out
    }
}
