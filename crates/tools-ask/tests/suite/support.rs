//! Shared helpers: a run, and a registry over one gate.

use std::sync::Arc;

use tools_ask::QuestionGate;
use tools_core::{Config, Registry, RegistryBuilder, Run, RunOptions};

pub fn run_with(config: &str) -> (tempfile::TempDir, Arc<Run>) {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: dir.path().into(),
        conversation_id: "ask-test".into(),
        config: Config::parse(config).unwrap(),
        trusted: false,
    })
    .unwrap();
    (dir, run)
}

pub fn registry(run: &Arc<Run>, gate: Arc<dyn QuestionGate>) -> Arc<Registry> {
    let fam = tools_ask::family(run, Some(gate)).unwrap().unwrap();
    RegistryBuilder::new(run.clone())
        .family(fam)
        .build()
        .unwrap()
}
