//! One run: one conversation's workspace, configuration, cancellation, child processes and
//! close hooks. Closing it (or dropping it) kills every process group it started and every
//! process left in their sessions ([`crate::sweep`]), and removes its private state folder.
//!
//! The state folder (worker logs, debugger scratch files) is created on first use under the
//! system temp folder, mode 0700, under a fresh name. It is removed when the run closes,
//! unless the environment variable [`KEEP_STATE_ENV`] is set to `1` (for reading logs after
//! the run).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::{Config, ToolError, Workspace};

/// How to open a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The workspace root.
    pub root: PathBuf,
    /// The conversation id; one debug session and one set of kernels per conversation.
    pub conversation_id: String,
    /// The configuration (`agent-tools.toml`).
    pub config: Config,
    /// Whether the user trusts this workspace (see `tools_core::trust`); untrusted runs read
    /// no program keys from the repository's configuration and run no repository programs.
    pub trusted: bool,
}

impl RunOptions {
    /// A run at `root` with a fresh conversation id and the configuration found at the root.
    pub fn at(root: impl Into<PathBuf>) -> Result<Self, ToolError> {
        let root = root.into();
        let config = Config::load(&root, None)?;
        Ok(RunOptions {
            root,
            conversation_id: fresh_id(),
            config,
            trusted: false,
        })
    }
}

fn fresh_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("run-{}-{:x}", std::process::id(), nanos & 0xffff_ffff)
}

/// Set to `1` to keep a run's state folder after the run closes.
pub const KEEP_STATE_ENV: &str = "AGENT_TOOLS_KEEP_RUN_DIR";

/// How long all close hooks together may take before the processes are killed anyway.
const CLOSE_HOOKS_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

type CloseHook = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// One conversation's resources. Cheap to share as `Arc<Run>`.
pub struct Run {
    workspace: Workspace,
    conversation_id: String,
    config: Config,
    trusted: bool,
    cancel: CancellationToken,
    groups: Mutex<Vec<i32>>,
    /// At most this many child processes at once; 0 means no cap.
    child_cap: std::sync::atomic::AtomicUsize,
    hooks: Mutex<Vec<CloseHook>>,
    state: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    state_dir: Mutex<Option<PathBuf>>,
    closed: AtomicBool,
    /// What opening the workspace recovered from a killed run, until the first answer says it.
    recovery_notice: Mutex<Option<String>>,
    /// This run's live mark in the workspace's journal folder.
    _marker: Option<crate::recovery::RunMarker>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("root", &self.workspace.root())
            .field("conversation_id", &self.conversation_id)
            .finish_non_exhaustive()
    }
}

impl Run {
    /// Opens a run.
    ///
    /// Opening the workspace first recovers what a killed run left half done there (see
    /// [`crate::journal_dir`]); [`Run::take_recovery_notice`] says what that was.
    pub fn new(opts: RunOptions) -> Result<Arc<Self>, ToolError> {
        let workspace = Workspace::new(&opts.root)?;
        let (notice, marker) = crate::recovery::open_workspace(&workspace);
        Ok(Arc::new(Run {
            workspace,
            conversation_id: opts.conversation_id,
            config: opts.config.for_trust(opts.trusted),
            trusted: opts.trusted,
            cancel: CancellationToken::new(),
            groups: Mutex::new(Vec::new()),
            child_cap: std::sync::atomic::AtomicUsize::new(0),
            hooks: Mutex::new(Vec::new()),
            state: Mutex::new(HashMap::new()),
            state_dir: Mutex::new(None),
            closed: AtomicBool::new(false),
            recovery_notice: Mutex::new(notice),
            _marker: marker,
        }))
    }

    /// The one line saying what opening the workspace recovered from a killed run, the
    /// first time it is asked (the registry puts it at the head of the run's first answer).
    pub fn take_recovery_notice(&self) -> Option<String> {
        self.recovery_notice.lock().ok().and_then(|mut n| n.take())
    }

    /// Plays a recovery for the registry's tests: `notice` is what opening recovered.
    #[cfg(test)]
    pub(crate) fn set_recovery_notice(&self, notice: &str) {
        if let Ok(mut n) = self.recovery_notice.lock() {
            *n = Some(notice.to_string());
        }
    }

    /// The workspace (path jail).
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }
    /// The workspace root.
    pub fn root(&self) -> &Path {
        self.workspace.root()
    }
    /// The conversation id.
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }
    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// Whether the user trusts this workspace.
    pub fn trusted(&self) -> bool {
        self.trusted
    }
    /// Cancelled when the run closes.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
    /// Whether [`Run::close`] has begun.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// A directory for this run's files (worker logs, …), created on first use under the
    /// system temp directory, readable by this user only (0700). Removed when the run
    /// closes unless [`KEEP_STATE_ENV`] is `1`.
    pub fn state_dir(&self) -> Result<PathBuf, ToolError> {
        let mut guard = self
            .state_dir
            .lock()
            .map_err(|_| ToolError::internal("state dir lock poisoned"))?;
        if let Some(p) = &*guard {
            return Ok(p.clone());
        }
        let safe: String = self
            .conversation_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let p = create_private_dir(&std::env::temp_dir(), &format!("agent-tools-{safe}"))?;
        *guard = Some(p.clone());
        Ok(p)
    }

    /// Removes the state folder (unless the user keeps it).
    fn remove_state_dir(&self) {
        let dir = self.state_dir.lock().ok().and_then(|mut d| d.take());
        let Some(dir) = dir else { return };
        if std::env::var(KEEP_STATE_ENV).is_ok_and(|v| v == "1") {
            tracing::info!("keeping the run's state folder {}", dir.display());
            return;
        }
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            tracing::warn!(
                "could not remove the run's state folder {}: {e}",
                dir.display()
            );
        }
    }

    /// Registers a child's process group; [`Run::close`] (or drop) sends it SIGKILL.
    pub fn register_process_group(&self, pgid: i32) {
        if pgid <= 1 {
            return;
        }
        if let Ok(mut g) = self.groups.lock() {
            g.push(pgid);
        }
    }
    /// Caps the child processes this run may have at once (language servers, kernels,
    /// adapters, checkers, workers); one more is refused with a clear error. A server that
    /// serves many sessions sets it so one session cannot exhaust the machine. `0` lifts
    /// the cap (the default).
    pub fn limit_children(&self, max: usize) {
        self.child_cap.store(max, Ordering::SeqCst);
    }

    /// How many child processes of this run are alive (started and not yet reaped).
    pub fn child_count(&self) -> usize {
        self.groups.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// Refuses to start `program` when the run is at its child cap.
    pub(crate) fn check_child_cap(&self, program: &str) -> Result<(), ToolError> {
        let cap = self.child_cap.load(Ordering::SeqCst);
        let running = self.child_count();
        if cap > 0 && running >= cap {
            return Err(ToolError::not_available(format!(
                "cannot start {program}: this run already has {running} child processes, the \
                 most it may have at once (the server's per-session cap). End one first \
                 (debug disconnect, vibe_kill), start a new session, or ask the operator to \
                 raise --max-children"
            )));
        }
        Ok(())
    }

    /// Forgets a process group that its owner has already reaped.
    pub fn forget_process_group(&self, pgid: i32) {
        if let Ok(mut g) = self.groups.lock() {
            g.retain(|p| *p != pgid);
        }
    }

    /// Runs `hook` when the run closes (before process groups are killed), e.g. to send an
    /// LSP `shutdown`. Hooks run in reverse order of registration.
    pub fn on_close<F>(&self, hook: F)
    where
        F: FnOnce() -> BoxFuture<'static, ()> + Send + 'static,
    {
        if let Ok(mut h) = self.hooks.lock() {
            h.push(Box::new(hook));
        }
    }

    /// Shared per-run state of type `T`, created by `init` on first use. Lets several tools
    /// of one family (or a tool and an observer) share one resource.
    pub fn state<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        let Ok(mut map) = self.state.lock() else {
            return Arc::new(init());
        };
        if let Some(existing) = map.get(&TypeId::of::<T>())
            && let Ok(v) = Arc::clone(existing).downcast::<T>()
        {
            return v;
        }
        let v = Arc::new(init());
        map.insert(TypeId::of::<T>(), v.clone());
        v
    }

    /// Closes the run: cancels its token, runs close hooks (5 s for all of them together),
    /// then kills every registered process group and whatever is left in their sessions, and
    /// removes the state folder. Idempotent.
    pub async fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.cancel.cancel();
        let hooks: Vec<CloseHook> = self
            .hooks
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default();
        let all_hooks = async {
            for hook in hooks.into_iter().rev() {
                hook().await;
            }
        };
        if tokio::time::timeout(CLOSE_HOOKS_BUDGET, all_hooks)
            .await
            .is_err()
        {
            tracing::warn!("the run's close hooks took too long; killing its processes now");
        }
        self.kill_processes();
        self.remove_state_dir();
    }

    /// Kills every process the run started and everything left in their sessions, now,
    /// without running close hooks (for a server that must exit at once).
    pub fn kill_processes(&self) {
        let groups: std::collections::HashSet<i32> = self
            .groups
            .lock()
            .map(|mut g| std::mem::take(&mut *g).into_iter().collect())
            .unwrap_or_default();
        crate::sweep::kill_run(&groups);
    }
}

/// Creates a fresh folder `NAME-XXXX` under `parent`, mode 0700. Never reuses an existing
/// path (a planted folder or symlink makes it pick another name).
fn create_private_dir(parent: &Path, name: &str) -> Result<PathBuf, ToolError> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let salt = (u64::from(nanos) ^ (n << 32) ^ u64::from(std::process::id()))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let p = parent.join(format!("{name}-{:08x}", salt >> 32));
        match crate::platform::create_private_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(ToolError::internal(format!(
                    "cannot create the run's state folder under {}: {e}",
                    parent.display()
                )));
            }
        }
    }
    Err(ToolError::internal(format!(
        "cannot create the run's state folder under {}: {}",
        parent.display(),
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}

impl Drop for Run {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.kill_processes();
        self.remove_state_dir();
    }
}

#[cfg(test)]
impl Run {
    /// An untrusted run at `root` with no configuration, for this crate's tests.
    pub(crate) fn for_test(root: &Path, conversation_id: &str) -> Arc<Run> {
        Run::new(RunOptions {
            root: root.into(),
            conversation_id: conversation_id.into(),
            config: Config::empty(),
            trusted: false,
        })
        .unwrap()
    }
}

#[cfg(test)]
mod tests {
    // Both plant Unix facts (a process group made with `setpgid`, mode bits); the kill of a
    // Windows child tree through its Job Object is tested in `platform/windows/process.rs`.
    #[cfg(unix)]
    use super::*;

    #[cfg(unix)]
    #[tokio::test]
    async fn close_kills_registered_groups_and_runs_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "t");
        let mut cmd = tokio::process::Command::new("sleep");
        cmd.arg("30").process_group(0);
        let mut child = cmd.spawn().unwrap();
        let pid = child.id().unwrap() as i32;
        run.register_process_group(pid);
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        run.on_close(move || Box::pin(async move { f2.store(true, Ordering::SeqCst) }));
        run.close().await;
        assert!(flag.load(Ordering::SeqCst));
        let status = tokio::time::timeout(std::time::Duration::from_secs(5), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(!status.success());
        assert_eq!(*run.state(|| 7u32), 7);
        assert_eq!(*run.state(|| 9u32), 7);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn state_dir_is_private_and_removed_on_close() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "../odd id");
        let state = run.state_dir().unwrap();
        assert_eq!(state, run.state_dir().unwrap());
        assert_eq!(state.parent(), Some(std::env::temp_dir().as_path()));
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(state.join("log"), "x").unwrap();
        run.close().await;
        assert!(!state.exists(), "{} outlived the run", state.display());
    }
}
