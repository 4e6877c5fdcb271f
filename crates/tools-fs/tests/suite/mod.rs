//! Data-safety tests of the file tools: concurrency, file conventions, special files, links.

mod concurrency;
mod conventions;
// FIFOs, Unix links and a file-size limit; Windows has its own refusals to check.
#[cfg(unix)]
mod hostile;
#[cfg(windows)]
mod hostile_windows;
mod preview;
mod properties;
mod symbol_bodies;

use std::sync::Arc;

use serde_json::Value;
use tools_core::{CallError, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolOutput};

/// A workspace with the fs family wired through a real registry.
pub struct Ws {
    pub dir: tempfile::TempDir,
    pub run: Arc<Run>,
    pub registry: Arc<Registry>,
}

impl Ws {
    pub fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
        let registry = RegistryBuilder::new(run.clone())
            .family(tools_fs::family(&run))
            .build()
            .unwrap();
        Ws { dir, run, registry }
    }
    pub fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }
    pub async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, CallError> {
        self.registry.call(Surface::FULL, tool, args).await
    }
    pub async fn ok(&self, tool: &str, args: Value) -> ToolOutput {
        match self.call(tool, args.clone()).await {
            Ok(o) => o,
            Err(e) => panic!("{tool} {args} failed: {e}"),
        }
    }
    pub async fn err(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args.clone()).await {
            Ok(o) => panic!("{tool} {args} succeeded: {}", o.text),
            Err(e) => e.to_string(),
        }
    }
    /// Names in a folder of the workspace, sorted (to see leftover temp files).
    pub fn names(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

#[cfg(unix)]
pub fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
pub fn set_mode(p: &std::path::Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}
