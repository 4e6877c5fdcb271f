//! Per-path write locks of one run.
//!
//! Every tool that writes files (fs, ast `resolve`, `lsp_rename`, a harness's own) takes the
//! lock of every path it will read-and-then-write before it reads them, and keeps it until
//! the last byte is written. Two writes to one path inside a run are therefore serialised,
//! and a tool that plans from what it read under the lock can never overwrite a change it
//! did not see.
//!
//! All the paths of one call are taken at once (never one after another), so two calls
//! that lock overlapping sets cannot deadlock. The lock is a plain blocking lock: it is held
//! only around synchronous file work, and [`PathGuard`] is not `Send`, so an `async fn`
//! cannot keep it across an `.await` by mistake. Waiting is bounded by [`LOCK_WAIT_LIMIT`].

use std::collections::{BTreeSet, HashSet};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{Run, ToolError};

/// The longest a call waits for another call's write to the same path to finish.
pub const LOCK_WAIT_LIMIT: Duration = Duration::from_secs(60);

/// The set of paths being written in one run. Share it through [`PathLocks::for_run`].
#[derive(Debug, Default)]
pub struct PathLocks {
    held: Mutex<HashSet<PathBuf>>,
    released: Condvar,
}

impl PathLocks {
    /// The run's locks (one set per run, created on first use).
    pub fn for_run(run: &Run) -> Arc<PathLocks> {
        run.state(PathLocks::default)
    }

    /// Takes the locks of every path in `paths` at once, waiting (at most
    /// [`LOCK_WAIT_LIMIT`]) while another call holds any of them. Paths are compared as
    /// given: pass the paths the workspace jail resolved, so that two spellings of one
    /// file are one key.
    pub fn lock(
        self: &Arc<Self>,
        paths: impl IntoIterator<Item = PathBuf>,
    ) -> Result<PathGuard, ToolError> {
        self.lock_within(paths, LOCK_WAIT_LIMIT)
    }

    /// [`PathLocks::lock`] with an explicit bound on the wait.
    pub fn lock_within(
        self: &Arc<Self>,
        paths: impl IntoIterator<Item = PathBuf>,
        limit: Duration,
    ) -> Result<PathGuard, ToolError> {
        let wanted: BTreeSet<PathBuf> = paths.into_iter().collect();
        let deadline = Instant::now() + limit;
        let mut held = self
            .held
            .lock()
            .map_err(|_| ToolError::internal("the path lock table is poisoned"))?;
        loop {
            let busy = wanted.iter().find(|p| held.contains(*p));
            let Some(busy) = busy else { break };
            let now = Instant::now();
            if now >= deadline {
                return Err(ToolError::timed_out(format!(
                    "another write to {} has not finished after {} s; nothing was written — try again",
                    busy.display(),
                    limit.as_secs()
                )));
            }
            held = self
                .released
                .wait_timeout(held, deadline - now)
                .map_err(|_| ToolError::internal("the path lock table is poisoned"))?
                .0;
        }
        held.extend(wanted.iter().cloned());
        Ok(PathGuard {
            locks: Arc::clone(self),
            paths: wanted,
            _not_send: PhantomData,
        })
    }
}

/// Proof that the calling code holds the write locks of [`PathGuard::paths`]. Released on
/// drop. Not `Send`: it must not be held across an `.await`.
#[derive(Debug)]
pub struct PathGuard {
    locks: Arc<PathLocks>,
    paths: BTreeSet<PathBuf>,
    _not_send: PhantomData<*const ()>,
}

impl PathGuard {
    /// Whether `path` is one of the locked paths.
    pub fn covers(&self, path: &Path) -> bool {
        self.paths.contains(path)
    }
    /// The locked paths.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.paths.iter().map(PathBuf::as_path)
    }
}

impl Drop for PathGuard {
    fn drop(&mut self) {
        // A poisoned table still holds our paths; recover it rather than leak the locks.
        let mut held = match self.locks.held.lock() {
            Ok(h) => h,
            Err(poisoned) => poisoned.into_inner(),
        };
        for p in &self.paths {
            held.remove(p);
        }
        drop(held);
        self.locks.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_sets_wait_and_disjoint_sets_do_not() {
        let locks = Arc::new(PathLocks::default());
        let a = PathBuf::from("/w/a");
        let b = PathBuf::from("/w/b");
        let g = locks.lock([a.clone(), b.clone()]).unwrap();
        assert!(g.covers(&a) && g.covers(&b));
        // Disjoint: granted at once.
        let other = locks.lock([PathBuf::from("/w/c")]).unwrap();
        drop(other);
        // Overlapping: refused after the bound while `g` is held.
        let e = locks
            .lock_within([b.clone()], Duration::from_millis(50))
            .unwrap_err();
        assert!(matches!(e, ToolError::TimedOut(_)), "{e}");
        // Released by a holder on another thread: the waiter gets it.
        let l2 = Arc::clone(&locks);
        let t = std::thread::spawn(move || l2.lock([PathBuf::from("/w/b")]).map(|_| ()));
        std::thread::sleep(Duration::from_millis(20));
        drop(g);
        t.join().unwrap().unwrap();
        assert!(locks.held.lock().unwrap().is_empty());
    }
}
