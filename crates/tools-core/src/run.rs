//! One run: one conversation's workspace, configuration, cancellation, child processes and
//! close hooks. Closing it (or dropping it) kills every process group it started.

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

type CloseHook = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// One conversation's resources. Cheap to share as `Arc<Run>`.
pub struct Run {
    workspace: Workspace,
    conversation_id: String,
    config: Config,
    trusted: bool,
    cancel: CancellationToken,
    groups: Mutex<Vec<i32>>,
    hooks: Mutex<Vec<CloseHook>>,
    state: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    state_dir: Mutex<Option<PathBuf>>,
    closed: AtomicBool,
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
    pub fn new(opts: RunOptions) -> Result<Arc<Self>, ToolError> {
        Ok(Arc::new(Run {
            workspace: Workspace::new(&opts.root)?,
            conversation_id: opts.conversation_id,
            config: opts.config.for_trust(opts.trusted),
            trusted: opts.trusted,
            cancel: CancellationToken::new(),
            groups: Mutex::new(Vec::new()),
            hooks: Mutex::new(Vec::new()),
            state: Mutex::new(HashMap::new()),
            state_dir: Mutex::new(None),
            closed: AtomicBool::new(false),
        }))
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
    /// system temp directory. It is kept after the run so logs can still be read.
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
        let p = std::env::temp_dir().join("agent-tools").join(safe);
        std::fs::create_dir_all(&p)?;
        *guard = Some(p.clone());
        Ok(p)
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

    /// Closes the run: cancels its token, runs close hooks (each bounded to 5 s), then kills
    /// every registered process group. Idempotent.
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
        for hook in hooks.into_iter().rev() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), hook()).await;
        }
        self.kill_groups();
    }

    fn kill_groups(&self) {
        let groups: Vec<i32> = self
            .groups
            .lock()
            .map(|mut g| std::mem::take(&mut *g))
            .unwrap_or_default();
        for pgid in groups {
            crate::process::kill_group(pgid);
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.kill_groups();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn close_kills_registered_groups_and_runs_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::new(RunOptions {
            root: dir.path().into(),
            conversation_id: "t".into(),
            config: Config::empty(),
            trusted: false,
        })
        .unwrap();
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
}
