//! Writes under observation on servers several sessions share. Between a session's write
//! reaching the disk and its diagnostics being taken, another session's observation or
//! query must not hand the written file to the server: the change would land in the other
//! session's state (reported as its own, or swallowed into its "before"). A write claims its
//! files as soon as it is written, before its servers are even known; every sync from the
//! disk of a server sharing the claims leaves claimed files alone, and the other writes'
//! observations name them as that session's.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The claims of every server of one pool (or of one run's servers).
#[derive(Debug, Default)]
pub struct WriteClaims {
    next: AtomicU64,
    /// (claim id, who wrote, what).
    held: std::sync::Mutex<Vec<(u64, String, Vec<PathBuf>)>>,
}

/// One write's claim on its files, released when dropped.
#[derive(Debug)]
pub struct WriteClaim {
    claims: Arc<WriteClaims>,
    id: u64,
}

impl WriteClaims {
    fn held(&self) -> std::sync::MutexGuard<'_, Vec<(u64, String, Vec<PathBuf>)>> {
        match self.held.lock() {
            Ok(h) => h,
            Err(p) => p.into_inner(),
        }
    }

    /// Claims `paths` for the write of `writer` (a session's name) until the claim drops.
    pub fn claim(self: &Arc<Self>, writer: &str, paths: &[PathBuf]) -> WriteClaim {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        self.held().push((id, writer.to_string(), paths.to_vec()));
        WriteClaim {
            claims: Arc::clone(self),
            id,
        }
    }

    /// Every file claimed now (left alone by syncs from the disk).
    pub fn claimed_paths(&self) -> Vec<PathBuf> {
        self.held()
            .iter()
            .flat_map(|(_, _, paths)| paths.iter().cloned())
            .collect()
    }
}

impl WriteClaim {
    /// The files other writes claim now, each with its writer.
    pub fn others(&self) -> Vec<(String, PathBuf)> {
        self.claims
            .held()
            .iter()
            .filter(|(id, _, _)| *id != self.id)
            .flat_map(|(_, who, paths)| paths.iter().map(|p| (who.clone(), p.clone())))
            .collect()
    }
}

impl Drop for WriteClaim {
    fn drop(&mut self) {
        self.claims.held().retain(|(id, _, _)| *id != self.id);
    }
}
