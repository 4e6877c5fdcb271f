//! Shared helpers: a run configured with the stand-in worker as every tier, calls through
//! the registry, polling for a status, and checks on processes via /proc.

mod bad_input;
mod events;
mod lifecycle;
mod processes;
mod trust;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{
    CallError, Config, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolOutput,
};

pub fn worker_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/worker.py")
}

/// The standard tiers: `fast` takes the brief as an argument and reads JSON events, `good`
/// reads the brief on stdin and keeps the stdout tail; more tiers for the watchdogs.
pub fn standard_config() -> String {
    let w = format!("{:?}", worker_script().display().to_string());
    format!(
        r#"
[vibe.fast]
command = ["python3", {w}, "{{brief}}"]
result = "json-events"
linger_seconds = 0.5

[vibe.good]
command = ["python3", {w}]

[vibe.stall]
command = ["python3", {w}, "{{brief}}"]
stall_seconds = 0.5

[vibe.short]
command = ["python3", {w}, "{{brief}}"]
timeout_seconds = 0.5

[vibe.custom]
command = ["python3", {w}, "{{brief}}"]
result = "json-events"
result_field = "data.answer"
result_filter = {{ kind = "final" }}
"#
    )
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub run: Arc<Run>,
    pub registry: Arc<Registry>,
}

/// A run with `config` and the vibe family, or `None` when python3 is missing (recorded as
/// a skip, which fails under CI=true).
pub fn fixture_with(config: &str) -> Option<Fixture> {
    tools_core::testing::require_binary("python3", "python3")?;
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: dir.path().canonicalize().unwrap(),
        conversation_id: format!("vibe-test-{}", unique()),
        config: Config::parse(config).unwrap(),
        trusted: true,
    })
    .unwrap();
    let family = tools_vibe::family(&run).unwrap().expect("vibe mode is on");
    let registry = RegistryBuilder::new(run.clone())
        .family(family)
        .build()
        .unwrap();
    Some(Fixture { dir, run, registry })
}

pub fn fixture() -> Option<Fixture> {
    fixture_with(&standard_config())
}

fn unique() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

impl Fixture {
    pub async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, CallError> {
        self.registry.call(Surface::FULL, name, args).await
    }
    pub async fn ok(&self, name: &str, args: Value) -> ToolOutput {
        match self.call(name, args.clone()).await {
            Ok(o) => o,
            Err(e) => panic!("{name} {args} failed: {e}"),
        }
    }
    pub async fn spawn(&self, brief: &str, tier: &str) -> String {
        let out = self
            .ok(
                "vibe_spawn",
                json!({"brief": brief, "label": "test", "tier": tier}),
            )
            .await;
        out.structured.unwrap()["id"].as_str().unwrap().to_string()
    }
    /// The structured entry of `id` in vibe_list.
    pub async fn entry(&self, id: &str) -> Value {
        let out = self.ok("vibe_list", json!({})).await;
        let s = out.structured.unwrap();
        s["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not in vibe_list: {}", out.text))
    }
    /// Waits (generously) until `id` has `status`, through vibe_wait and vibe_list.
    pub async fn until_status(&self, id: &str, status: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let e = self.entry(id).await;
            if e["status"] == status {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "{id} never became {status}; last seen: {e}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().canonicalize().unwrap().join(name)
    }
}

/// Whether a live (not zombie) process has this pid.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// Live processes of process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rsplit(')').next() else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After the command: state, ppid, pgrp.
        if fields.len() > 2 && fields[2].parse::<i32>().ok() == Some(pgid) && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

/// Waits (generously) until no live process is left in `pgid`.
pub async fn until_group_gone(pgid: i32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !group_members(pgid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "process group {pgid} still has {:?}",
            group_members(pgid)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads "<pid> <child pid>" from a worker's pidfile once it exists.
pub async fn read_pidfile(path: &Path) -> (i32, i32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            let mut it = s.split_whitespace().map(|x| x.parse::<i32>().unwrap());
            return (it.next().unwrap(), it.next().unwrap());
        }
        assert!(
            Instant::now() < deadline,
            "the worker never wrote {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
