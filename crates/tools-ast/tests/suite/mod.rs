//! Shared helpers for the suite.

#[cfg(unix)]
mod accept_safety;
mod bounds;
mod budget;
mod compact;
mod crosscheck;
mod crosscheck_projects;
mod edit;
mod languages;
mod search;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tools_core::{CallError, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolOutput};

pub struct Ws {
    pub dir: tempfile::TempDir,
    pub registry: Arc<Registry>,
}

impl Ws {
    pub fn root(&self) -> &Path {
        self.dir.path()
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
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }
}

pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

pub fn workspace(files: &[(&str, &str)]) -> Ws {
    workspace_with(files, None, "")
}

pub fn workspace_with(
    files: &[(&str, &str)],
    faults: Option<Arc<dyn tools_ast::WriteFaults>>,
    config: &str,
) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    if !config.is_empty() {
        std::fs::write(dir.path().join("agent-tools.toml"), config).unwrap();
    }
    let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
    let family = match faults {
        Some(f) => tools_ast::family_with_faults(&run, f),
        None => tools_ast::family(&run),
    }
    .unwrap()
    .unwrap();
    let registry = RegistryBuilder::new(run).family(family).build().unwrap();
    Ws { dir, registry }
}

/// `path:line:col` of every match in a structured `ast_grep` result.
pub fn locations(out: &ToolOutput) -> Vec<String> {
    out.structured.as_ref().unwrap()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["location"].as_str().unwrap().to_string())
        .collect()
}

pub fn total(out: &ToolOutput) -> u64 {
    out.structured.as_ref().unwrap()["total_matches"]
        .as_u64()
        .unwrap()
}

pub fn grep(pattern: &str, language: &str) -> Value {
    json!({"pattern": pattern, "language": language})
}
