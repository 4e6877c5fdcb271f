//! The server pool: language servers shared by the runs of one process.
//!
//! Many agents on one checkout would otherwise each start their own rust-analyzer or
//! tsserver — the same analysis of the same files, paid for once per session in memory and
//! in a cold start. A run whose supervisor is built on an [`LspPool`] takes its servers from
//! the pool instead: one server per [`PoolKey`] — language, program and arguments, settings,
//! project root, trust and the environment policy its children get — so runs differ in any
//! of those never share (an untrusted run never reaches a server started with the
//! repository's own configuration; a git worktree is a root of its own).
//!
//! Only the process and its analysis are shared. Every run keeps its own ledger, staged
//! changes, previews, kernels and debug sessions; the client itself keeps a preview's
//! unsaved texts from every other query (see [`LspClient::observation`]).
//!
//! Bounded: at most [`PoolLimits::max_servers`] servers and [`PoolLimits::max_rss`] bytes
//! of resident memory; starting one more first stops the least recently used server that
//! is not answering anything, and refuses with a clear error when every one is busy. A
//! server no run uses any more is stopped after [`PoolLimits::idle_timeout`]. A server that
//! crashed is restarted once for all the runs sharing it — by the first that needs it —
//! and every one of them is told so with its next answer.

pub mod rss;
pub(crate) mod status;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::child_env::EnvPolicy;
use tools_core::{Run, ToolError};

use crate::client::{Launch, LspClient, WriteClaims};

/// What decides whether two runs may share a server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PoolKey {
    /// The language (server group).
    pub language: String,
    /// The resolved program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The settings and initialization options it gets, as JSON text.
    pub settings: String,
    /// The project root it serves.
    pub root: PathBuf,
    /// Whether the runs trust the workspace.
    pub trusted: bool,
    /// The environment its children get.
    pub env: EnvPolicy,
}

impl PoolKey {
    /// The key of the server `launch` would start for `run`.
    pub fn of(run: &Run, launch: &Launch) -> PoolKey {
        PoolKey {
            language: launch.language.clone(),
            program: launch.program.clone(),
            args: launch.args.clone(),
            settings: json!([launch.settings, launch.initialization_options]).to_string(),
            root: launch.root.clone(),
            trusted: run.trusted(),
            env: (*tools_core::child_env::env_policy(run)).clone(),
        }
    }
}

/// How many servers the pool keeps, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct PoolLimits {
    /// Live servers at most.
    pub max_servers: usize,
    /// Resident memory of all servers (and what they started) at most, in bytes; `None`
    /// for no cap by memory.
    pub max_rss: Option<u64>,
    /// A server no open run uses is stopped after this long unused.
    pub idle_timeout: Duration,
}

impl Default for PoolLimits {
    /// 16 servers, no cap by memory, ten minutes.
    fn default() -> Self {
        PoolLimits {
            max_servers: 16,
            max_rss: None,
            idle_timeout: Duration::from_secs(600),
        }
    }
}

/// One run's use of one server.
struct Sharer {
    /// The run's conversation id, for `status`.
    label: String,
    run: Weak<Run>,
    /// The server generation this run last got (0: none yet).
    seen: u64,
}

#[derive(Default)]
struct EntryState {
    client: Option<Arc<LspClient>>,
    /// Bumped at every start: a run that last got an older one is told what happened.
    generation: u64,
    /// What restarted the server at `generation`, for the runs that got an older one.
    restart_notice: Option<(u64, String)>,
    /// When that restart happened.
    restarted: Option<Instant>,
    crashes: u32,
    last_failure: Option<String>,
    gave_up: bool,
    sharers: HashMap<u64, Sharer>,
    last_used: Option<Instant>,
}

struct Entry {
    key: PoolKey,
    start_lock: tokio::sync::Mutex<()>,
    state: Mutex<EntryState>,
}

impl Entry {
    fn state(&self) -> std::sync::MutexGuard<'_, EntryState> {
        match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        }
    }
}

/// One server of the pool as `status` shows it.
#[derive(Debug, Clone)]
pub struct SharedServer {
    /// Its key.
    pub key: PoolKey,
    /// The client, when it runs.
    pub client: Option<Arc<LspClient>>,
    /// The conversation ids of the open runs that use it.
    pub sessions: Vec<String>,
    /// Its resident memory and that of what it started, when readable.
    pub rss: Option<u64>,
    /// How long since a run last asked for it.
    pub idle: Duration,
    /// Crashes since it was last (re)loaded.
    pub crashes: u32,
    /// The last failure, if any.
    pub last_failure: Option<String>,
    /// Whether it is left down after too many failures.
    pub gave_up: bool,
    /// Its last restart (after a crash, or a reload): how long ago, and what happened.
    pub last_restart: Option<(Duration, String)>,
}

/// Language servers shared by the runs built on it (see the module doc). Cheap to clone
/// as `Arc<LspPool>`; dropping the last handle stops every server it holds.
pub struct LspPool {
    limits: PoolLimits,
    entries: Mutex<HashMap<PoolKey, Arc<Entry>>>,
    next_sharer: AtomicU64,
    reaper: Mutex<Option<tokio::task::JoinHandle<()>>>,
    claims: Arc<WriteClaims>,
}

impl std::fmt::Debug for LspPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspPool")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// How often the idle reaper looks, at most (and at least once per idle timeout).
const REAP_EVERY: Duration = Duration::from_secs(30);

impl LspPool {
    /// An empty pool with `limits`. Inside a Tokio runtime it also starts the task that
    /// stops servers idle past the timeout.
    pub fn new(limits: PoolLimits) -> Arc<LspPool> {
        let pool = Arc::new(LspPool {
            limits,
            entries: Mutex::new(HashMap::new()),
            next_sharer: AtomicU64::new(1),
            reaper: Mutex::new(None),
            claims: Arc::default(),
        });
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&pool);
            let every = limits
                .idle_timeout
                .min(REAP_EVERY)
                .max(Duration::from_millis(50));
            let task = handle.spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    let Some(pool) = weak.upgrade() else { return };
                    pool.stop_idle().await;
                }
            });
            if let Ok(mut r) = pool.reaper.lock() {
                *r = Some(task);
            }
        }
        pool
    }

    /// The limits in force.
    pub fn limits(&self) -> PoolLimits {
        self.limits
    }

    /// The files writes of its runs claim now (shared by all its servers).
    pub(crate) fn claims(&self) -> Arc<WriteClaims> {
        Arc::clone(&self.claims)
    }

    /// A fresh id for one run's supervisor (runs may share a conversation id).
    pub(crate) fn sharer_id(&self) -> u64 {
        self.next_sharer.fetch_add(1, Ordering::SeqCst)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<PoolKey, Arc<Entry>>> {
        match self.entries.lock() {
            Ok(e) => e,
            Err(p) => p.into_inner(),
        }
    }

    fn entry(&self, key: &PoolKey) -> Arc<Entry> {
        Arc::clone(self.entries().entry(key.clone()).or_insert_with(|| {
            Arc::new(Entry {
                key: key.clone(),
                start_lock: tokio::sync::Mutex::new(()),
                state: Mutex::new(EntryState::default()),
            })
        }))
    }

    /// The running server for `launch`, shared with every run of the same key; started
    /// (or restarted after a crash, once for all its runs) when needed. With it, a notice
    /// for this run when the server was restarted since it last got it.
    pub(crate) async fn client(
        &self,
        sharer: u64,
        run: &Arc<Run>,
        launch: Launch,
        max_restarts: u32,
    ) -> Result<(Arc<LspClient>, Option<String>), ToolError> {
        let key = PoolKey::of(run, &launch);
        let entry = self.entry(&key);
        let _start = entry.start_lock.lock().await;
        let root_disp = tools_core::display_relative(run.root(), &key.root);
        let dead = {
            let mut st = entry.state();
            st.sharers.entry(sharer).or_insert_with(|| Sharer {
                label: run.conversation_id().to_string(),
                run: Arc::downgrade(run),
                seen: 0,
            });
            st.last_used = Some(Instant::now());
            match &st.client {
                Some(c) if c.is_alive() => {
                    let c = Arc::clone(c);
                    return Ok((c, take_notice(&mut st, sharer)));
                }
                Some(_) => st.client.take(),
                None => None,
            }
        };
        if let Some(dead) = &dead {
            let detail = dead.exit_detail().await;
            let mut st = entry.state();
            st.crashes += 1;
            st.last_failure = Some(format!("{} exited{detail}", dead.server));
            if st.crashes > max_restarts {
                st.gave_up = true;
            }
        }
        let (crashes, gave_up, last) = {
            let st = entry.state();
            (st.crashes, st.gave_up, st.last_failure.clone())
        };
        if gave_up {
            return Err(ToolError::not_available(format!(
                "the {} server for root {root_disp} failed {crashes} times and is left down; last failure: {}. \
                 Call `lsp` with action `reload` (and this file) to start it again",
                key.language,
                last.unwrap_or_default()
            )));
        }
        self.make_room(&key).await?;
        let client = match LspClient::start(run, launch).await {
            Ok(c) => c,
            Err(e) => {
                let mut st = entry.state();
                st.crashes += 1;
                st.last_failure = Some(e.to_string());
                if st.crashes > max_restarts {
                    st.gave_up = true;
                }
                return Err(e.into());
            }
        };
        // The pool owns the process from now on: closing the run that happened to start it
        // must not stop it under the others.
        run.forget_process_group(client.pid());
        let mut st = entry.state();
        st.generation += 1;
        if let Some(dead) = dead {
            let sharing = st.sharers.len();
            st.restarted = Some(Instant::now());
            st.restart_notice = Some((
                st.generation,
                format!(
                    "the {} server ({}) for root {root_disp}, shared by {sharing} session(s), \
                     exited (pid {}) and was restarted once for all of them (pid {}); open \
                     files were sent to it again",
                    key.language,
                    dead.server,
                    dead.pid(),
                    client.pid()
                ),
            ));
        }
        st.client = Some(Arc::clone(&client));
        let notice = take_notice(&mut st, sharer);
        Ok((client, notice))
    }

    /// Stops least recently used servers that answer nothing now until one more fits under
    /// the caps; refuses when it cannot.
    async fn make_room(&self, starting: &PoolKey) -> Result<(), ToolError> {
        loop {
            let live = self.live_servers(Some(starting));
            let rss: u64 = live
                .iter()
                .filter_map(|(_, c, _)| rss::session_rss(c.pid()))
                .sum();
            let over_count = live.len() >= self.limits.max_servers;
            let over_rss = self.limits.max_rss.is_some_and(|max| rss >= max);
            if !over_count && !over_rss {
                return Ok(());
            }
            // Busy: some query or observation holds the client beside the pool.
            let victim = live
                .iter()
                .filter(|(_, c, _)| Arc::strong_count(c) <= 2)
                .min_by_key(|(_, _, used)| *used)
                .map(|(e, _, _)| Arc::clone(e));
            let Some(victim) = victim else {
                let what = if over_count {
                    format!("{} servers", self.limits.max_servers)
                } else {
                    format!(
                        "{} of memory (they hold {})",
                        rss::mib(self.limits.max_rss.unwrap_or(0)),
                        rss::mib(rss)
                    )
                };
                return Err(ToolError::not_available(format!(
                    "cannot start the {} server for {}: the shared servers are at their cap of \
                     {what}, and every one is answering a query now; ask again in a moment, or \
                     ask the operator to raise the cap",
                    starting.language,
                    starting.root.display()
                )));
            };
            tracing::info!(
                "stopping the {} server for {} (least recently used) to make room",
                victim.key.language,
                victim.key.root.display()
            );
            self.stop_entry(&victim).await;
        }
    }

    /// Live servers other than `except`'s, each with its last use.
    fn live_servers(
        &self,
        except: Option<&PoolKey>,
    ) -> Vec<(Arc<Entry>, Arc<LspClient>, Option<Instant>)> {
        let entries: Vec<Arc<Entry>> = self.entries().values().cloned().collect();
        entries
            .into_iter()
            .filter(|e| Some(&e.key) != except)
            .filter_map(|e| {
                let st = e.state();
                let c = st.client.clone().filter(|c| c.is_alive())?;
                let used = st.last_used;
                drop(st);
                Some((e, c, used))
            })
            .collect()
    }

    /// Stops an entry's server (shutdown, then kill) and forgets its crash history.
    async fn stop_entry(&self, entry: &Arc<Entry>) {
        let client = {
            let mut st = entry.state();
            st.crashes = 0;
            st.gave_up = false;
            st.client.take()
        };
        if let Some(c) = client {
            c.shutdown().await;
        }
    }

    /// Stops every server no open run uses that has been unused for the idle timeout.
    pub async fn stop_idle(&self) {
        let entries: Vec<Arc<Entry>> = self.entries().values().cloned().collect();
        for e in entries {
            let idle = {
                let mut st = e.state();
                st.sharers
                    .retain(|_, s| s.run.upgrade().is_some_and(|r| !r.is_closed()));
                st.client.is_some()
                    && st.sharers.is_empty()
                    && st
                        .last_used
                        .is_none_or(|t| t.elapsed() >= self.limits.idle_timeout)
            };
            if idle {
                tracing::info!(
                    "stopping the {} server for {}: no session used it for {:?}",
                    e.key.language,
                    e.key.root.display(),
                    self.limits.idle_timeout
                );
                self.stop_entry(&e).await;
            }
        }
    }

    /// A run's supervisor is done with the pool: its servers stay for the other runs (and
    /// for the idle timeout when none is left).
    pub(crate) fn leave(&self, sharer: u64) {
        for e in self.entries().values() {
            let mut st = e.state();
            if st.sharers.remove(&sharer).is_some() {
                st.last_used = Some(Instant::now());
            }
        }
    }

    /// Restarts the server of `key` for every run that shares it (each is told), clearing
    /// its crash history. The new client, or why it could not start.
    pub(crate) async fn reload(
        &self,
        sharer: u64,
        run: &Arc<Run>,
        launch: Launch,
        max_restarts: u32,
    ) -> Result<(Arc<LspClient>, Option<String>), ToolError> {
        let key = PoolKey::of(run, &launch);
        let entry = self.entry(&key);
        let old = {
            let _g = entry.start_lock.lock().await;
            let mut st = entry.state();
            st.crashes = 0;
            st.gave_up = false;
            st.last_failure = None;
            st.client.take()
        };
        if let Some(c) = &old {
            c.shutdown().await;
        }
        let (client, _) = self.client(sharer, run, launch, max_restarts).await?;
        if let Some(old) = old {
            let mut st = entry.state();
            let sharing = st.sharers.len();
            st.restarted = Some(Instant::now());
            st.restart_notice = Some((
                st.generation,
                format!(
                    "the {} server ({}) for root {}, shared by {sharing} session(s), was \
                     reloaded by session {} (pid {} → {})",
                    key.language,
                    old.server,
                    tools_core::display_relative(run.root(), &key.root),
                    run.conversation_id(),
                    old.pid(),
                    client.pid()
                ),
            ));
            let generation = st.generation;
            if let Some(s) = st.sharers.get_mut(&sharer) {
                s.seen = generation;
            }
        }
        Ok((client, None))
    }

    /// The servers of the runs at `workspace` with `run`'s trust and environment: what
    /// `status` lists for one run.
    pub fn servers_for(&self, run: &Run) -> Vec<SharedServer> {
        let env = (*tools_core::child_env::env_policy(run)).clone();
        let entries: Vec<Arc<Entry>> = self.entries().values().cloned().collect();
        let mut out: Vec<SharedServer> = entries
            .iter()
            .filter(|e| {
                e.key.trusted == run.trusted()
                    && e.key.env == env
                    && e.key.root.starts_with(run.root())
            })
            .map(|e| self.describe(e))
            .collect();
        out.sort_by(|a, b| (&a.key.language, &a.key.root).cmp(&(&b.key.language, &b.key.root)));
        out
    }

    /// How many servers run now.
    pub fn live_count(&self) -> usize {
        self.live_servers(None).len()
    }

    /// Every server the pool holds.
    pub fn servers(&self) -> Vec<SharedServer> {
        let entries: Vec<Arc<Entry>> = self.entries().values().cloned().collect();
        entries.iter().map(|e| self.describe(e)).collect()
    }

    fn describe(&self, e: &Entry) -> SharedServer {
        let mut st = e.state();
        st.sharers
            .retain(|_, s| s.run.upgrade().is_some_and(|r| !r.is_closed()));
        let mut sessions: Vec<String> = st.sharers.values().map(|s| s.label.clone()).collect();
        sessions.sort();
        let client = st.client.clone();
        SharedServer {
            key: e.key.clone(),
            rss: client
                .as_ref()
                .filter(|c| c.is_alive())
                .and_then(|c| rss::session_rss(c.pid())),
            client,
            sessions,
            idle: st.last_used.map(|t| t.elapsed()).unwrap_or_default(),
            crashes: st.crashes,
            last_failure: st.last_failure.clone(),
            gave_up: st.gave_up,
            last_restart: st
                .restarted
                .zip(st.restart_notice.as_ref())
                .map(|(at, (_, why))| (at.elapsed(), why.clone())),
        }
    }

    /// The structured form of [`LspPool::servers`], for programs (`/metrics`, benches).
    pub fn snapshot(&self) -> Value {
        let servers: Vec<Value> = self
            .servers()
            .into_iter()
            .map(|s| {
                json!({
                    "language": s.key.language,
                    "root": s.key.root,
                    "trusted": s.key.trusted,
                    "pid": s.client.as_ref().filter(|c| c.is_alive()).map(|c| c.pid()),
                    "sessions": s.sessions,
                    "rss_bytes": s.rss,
                    "idle_s": s.idle.as_secs(),
                })
            })
            .collect();
        json!({"servers": servers})
    }

    /// Stops every server now.
    pub async fn shutdown(&self) {
        let entries: Vec<Arc<Entry>> = self.entries().values().cloned().collect();
        futures::future::join_all(entries.iter().map(|e| self.stop_entry(e))).await;
    }
}

impl Drop for LspPool {
    fn drop(&mut self) {
        if let Ok(mut r) = self.reaper.lock()
            && let Some(task) = r.take()
        {
            task.abort();
        }
        // Each client's process is killed with its group when the client drops.
    }
}

/// The restart notice for `sharer` if it last got an older server than the one that
/// notice is about, marking the current one as seen.
fn take_notice(st: &mut EntryState, sharer: u64) -> Option<String> {
    let generation = st.generation;
    let notice = st.restart_notice.clone();
    let s = st.sharers.get_mut(&sharer)?;
    let seen = std::mem::replace(&mut s.seen, generation);
    match notice {
        Some((g, text)) if seen != 0 && seen < g => Some(text),
        _ => None,
    }
}
