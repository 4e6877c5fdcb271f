//! The per-user server cache on disk: one folder per package and pinned version, installs in
//! progress in hidden temporary folders beside them, and one lock file per install so two
//! processes installing the same server never write the same folder.
//!
//! Layout (under `$XDG_CACHE_HOME/agent-tools/servers/`):
//!
//! ```text
//! npm-pyright@1.1.414/            a complete install (the only kind discovery searches)
//!   bin/pyright-langserver        a link to the program the package provides
//!   node_modules/…                what the package manager wrote
//!   install.json                  the recipe, the programs, when and how long
//! .tmp-pip-ty@1.0.0-4242-…/       an install in progress (renamed when complete)
//! .locks/pip-ty@1.0.0.lock        held while an install of that folder runs
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tools_core::ToolError;

use crate::servers::recipe::InstallRecipe;

/// The file, in an install folder, that records what was installed.
pub const INSTALL_RECORD: &str = "install.json";

/// The per-user server cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCache {
    root: PathBuf,
}

impl ServerCache {
    /// The cache at `root` (created on the first install).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        ServerCache { root: root.into() }
    }

    /// The user's cache: `$XDG_CACHE_HOME/agent-tools/servers`, else
    /// `~/.cache/agent-tools/servers` (the same folder program discovery searches).
    pub fn from_env() -> Result<Self, ToolError> {
        tools_core::discovery::server_cache_root()
            .map(ServerCache::at)
            .ok_or_else(|| {
                ToolError::not_available("no server cache: neither XDG_CACHE_HOME nor HOME is set")
            })
    }

    /// The cache folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The install folder name of `recipe`: manager, package (a scope's `/` as `+`, without
    /// its leading `@`) and version, e.g. `npm-vue+language-server@3.0.8`.
    pub fn folder_name(recipe: &InstallRecipe) -> String {
        let package = recipe.package.trim_start_matches('@').replace('/', "+");
        format!("{}-{package}@{}", recipe.manager.name(), recipe.version)
    }

    /// Where `recipe` is (or would be) installed.
    pub fn install_dir(&self, recipe: &InstallRecipe) -> PathBuf {
        self.root.join(Self::folder_name(recipe))
    }

    /// Whether `recipe` is installed completely (its folder exists only once it is).
    pub fn is_installed(&self, recipe: &InstallRecipe) -> bool {
        self.install_dir(recipe).join(INSTALL_RECORD).is_file()
    }

    /// A fresh temporary folder beside the final one, hidden from discovery by its leading
    /// `.`; its name says which install it belongs to, so a later install of the same
    /// recipe can remove what a killed one left.
    pub(crate) fn new_temp_dir(&self, recipe: &InstallRecipe) -> Result<PathBuf, ToolError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = self.root.join(format!(
            "{}{}-{nanos:x}",
            Self::temp_prefix(recipe),
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
        Ok(dir)
    }

    fn temp_prefix(recipe: &InstallRecipe) -> String {
        format!(".tmp-{}-", Self::folder_name(recipe))
    }

    /// Removes the temporary folders a killed install of `recipe` left. Called with the
    /// recipe's lock held, so no live install owns them.
    pub(crate) fn remove_leftovers(&self, recipe: &InstallRecipe) {
        let prefix = Self::temp_prefix(recipe);
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// Takes the install lock of `recipe`, waiting until `deadline`. The lock is the kernel's
    /// advisory lock on a file, so it is released when its holder dies, however it dies.
    pub(crate) async fn lock(
        &self,
        recipe: &InstallRecipe,
        deadline: Instant,
    ) -> Result<InstallLock, ToolError> {
        let locks = self.root.join(".locks");
        std::fs::create_dir_all(&locks).map_err(|e| io_error("create", &locks, e))?;
        let path = locks.join(format!("{}.lock", Self::folder_name(recipe)));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_error("open", &path, e))?;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(InstallLock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(io_error("lock", &path, e)),
            }
            if Instant::now() >= deadline {
                return Err(ToolError::timed_out(format!(
                    "another install of {recipe} held {} until the install timeout",
                    path.display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A held install lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct InstallLock {
    _file: std::fs::File,
}

pub(crate) fn io_error(what: &str, path: &Path, e: std::io::Error) -> ToolError {
    ToolError::internal(format!("cannot {what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::recipe::PackageManager;

    #[test]
    fn folder_names_keep_scope_and_version_apart() {
        let r = InstallRecipe::new(PackageManager::Npm, "@vue/language-server", "3.0.8");
        assert_eq!(
            ServerCache::folder_name(&r),
            "npm-vue+language-server@3.0.8"
        );
        let r = InstallRecipe::new(PackageManager::Pip, "ty", "1.0.0");
        assert_eq!(ServerCache::folder_name(&r), "pip-ty@1.0.0");
    }

    #[tokio::test]
    async fn the_lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ServerCache::at(dir.path());
        let r = InstallRecipe::new(PackageManager::Pip, "ty", "1.0.0");
        let held = cache
            .lock(&r, Instant::now() + Duration::from_secs(1))
            .await
            .unwrap();
        let err = cache
            .lock(&r, Instant::now() + Duration::from_millis(200))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), "timed_out");
        drop(held);
        assert!(
            cache
                .lock(&r, Instant::now() + Duration::from_millis(200))
                .await
                .is_ok()
        );
    }
}
