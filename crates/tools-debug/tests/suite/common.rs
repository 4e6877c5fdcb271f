//! Fixtures: a workspace in a temp dir, a run with optional configuration, the registry
//! with the debug family, and helpers to call `debug`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tools_core::{
    CallError, Config, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolError, ToolOutput,
};

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub run: Arc<Run>,
    pub registry: Arc<Registry>,
}

impl Fixture {
    pub fn new(config: &str) -> Fixture {
        Fixture::with_trust(config, true)
    }

    /// [`Fixture::new`] for a workspace trusted or not.
    pub fn with_trust(config: &str, trusted: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::new(RunOptions {
            root: dir.path().into(),
            conversation_id: "test".into(),
            config: Config::parse(config).unwrap(),
            trusted,
        })
        .unwrap();
        let fam = tools_debug::family(&run).unwrap().unwrap();
        let registry = RegistryBuilder::new(run.clone())
            .family(fam)
            .build()
            .unwrap();
        Fixture { dir, run, registry }
    }

    pub fn root(&self) -> PathBuf {
        self.run.root().to_path_buf()
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A project `.venv/bin/python`: the `python3` on PATH, run with `FROM_PROJECT_VENV=yes`
    /// so a program can tell which interpreter it ran on.
    pub fn project_venv_python(&self) {
        let python = tools_core::testing::which("python3").unwrap();
        let wrapper = self.write(
            ".venv/bin/python",
            &format!(
                "#!/bin/sh\nexport FROM_PROJECT_VENV=yes\nexec {} \"$@\"\n",
                python.display()
            ),
        );
        tools_core::platform::make_executable(&wrapper).unwrap();
    }

    pub async fn call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        match self.registry.call(Surface::FULL, "debug", args).await {
            Ok(o) => Ok(o),
            Err(CallError::Tool(e)) => Err(e),
            Err(e) => panic!("unexpected {e}"),
        }
    }

    pub async fn ok(&self, args: Value) -> ToolOutput {
        let what = args.to_string();
        match self.call(args).await {
            Ok(o) => {
                eprintln!("--- {what}\n{}", o.text);
                o
            }
            Err(e) => panic!("{what} failed: {e}"),
        }
    }

    pub async fn err(&self, args: Value) -> ToolError {
        let what = args.to_string();
        match self.call(args).await {
            Ok(o) => panic!("{what} unexpectedly succeeded: {}", o.text),
            Err(e) => {
                eprintln!("--- {what} (error)\n{e}");
                e
            }
        }
    }

    /// The variables of `frame`'s locals scope, the scope whose name `is_locals` accepts
    /// (adapters call it "Locals", "Local", …).
    pub async fn locals(&self, frame: u64, is_locals: impl Fn(&str) -> bool) -> Vec<Value> {
        let scopes = self
            .ok(json!({"operation":"scopes","frame_id":frame}))
            .await;
        let reference = structured(&scopes)["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| is_locals(s["name"].as_str().unwrap()))
            .unwrap()["reference"]
            .as_u64()
            .unwrap();
        let vars = self
            .ok(json!({"operation":"variables","reference":reference}))
            .await;
        structured(&vars)["variables"].as_array().unwrap().clone()
    }

    pub async fn status(&self) -> Value {
        self.ok(json!({"operation": "status"}))
            .await
            .structured
            .unwrap()
    }
}

/// The 1-based line of the first line containing `tag`.
pub fn line_of(text: &str, tag: &str) -> u64 {
    text.lines()
        .position(|l| l.contains(tag))
        .map(|i| i as u64 + 1)
        .unwrap_or_else(|| panic!("no {tag}"))
}

pub fn structured(o: &ToolOutput) -> &Value {
    o.structured.as_ref().unwrap()
}

/// Whether process `pid` still exists (and is not a zombie).
pub fn alive(pid: i64) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Field 3 is the state; Z is a zombie.
    !stat.is_empty()
        && stat
            .rsplit_once(") ")
            .map(|(_, r)| !r.starts_with('Z'))
            .unwrap_or(false)
}

/// Waits for `pid` to be gone, up to a bound generous enough for a loaded machine.
pub async fn gone(pid: i64) -> bool {
    for _ in 0..300 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}

pub fn has_debugpy() -> bool {
    tools_core::testing::require_binary("debugpy", "debugpy").is_some()
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}

/// Kills a test-owned child on drop.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The adapter's and the debuggee's process ids from `status` (the debuggee's arrives with
/// the adapter's `process` event, which may trail the first stop a little).
pub async fn pids(fx: &Fixture) -> (i64, i64) {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = fx.status().await;
        if let (Some(a), Some(d)) = (last["adapter_pid"].as_i64(), last["debuggee_pid"].as_i64()) {
            return (a, d);
        }
        // A session that is gone will never report them: say why at once.
        assert_ne!(last["state"], "none", "no session to report pids: {last}");
        assert_ne!(
            last["state"], "expired",
            "no session to report pids: {last}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("no debuggee pid reported: {last}");
}
