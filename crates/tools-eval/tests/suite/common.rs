//! Shared helpers: a run in a temporary workspace, a registry with the eval family and a
//! few small test tools of our own, and calls through the registry's guard chain.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tools_core::{
    Approval, ApprovalRequest, Approver, CallCtx, CallError, Config, Registry, RegistryBuilder,
    Run, RunOptions, Surface, Tier, Tool, ToolError, ToolOutput,
};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub run: Arc<Run>,
    pub reg: Arc<Registry>,
    pub echo_calls: Arc<AtomicUsize>,
}

/// Whether python3 (with pandas and matplotlib) can be driven; records the component.
pub fn python() -> bool {
    tools_core::testing::require_binary("python3", "python3").is_some()
}

/// Whether node can be driven; records the component.
pub fn node() -> bool {
    tools_core::testing::require_binary("node", "node").is_some()
}

/// A read-tier test tool: echoes its args; `sleep_ms` waits first; `fail` makes it fail.
pub struct Echo {
    pub calls: Arc<AtomicUsize>,
}

#[tools_core::async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "echo the arguments back".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(ms) = args.get("sleep_ms").and_then(Value::as_u64) {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        if let Some(why) = args.get("fail").and_then(Value::as_str) {
            return Err(ToolError::rejected(why.to_string()));
        }
        Ok(ToolOutput::text(format!("echo: {args}")).with_structured(json!({"echoed": args})))
    }
}

/// A write-tier `write` tool as small as the real one's core: the path resolved by the run's
/// workspace (which refuses anything outside it), the content written by tools-core's safe
/// writer, the file reported as touched.
pub struct WriteFile;

#[tools_core::async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "write a whole file in the workspace".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "required": ["path", "content"]})
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let given = args["path"].as_str().unwrap_or_default();
        let content = args["content"].as_str().unwrap_or_default();
        let ws = ctx.run.workspace();
        let path = ws.resolve(given)?;
        tools_core::safe_write::write_file(ws, &path, content.as_bytes())
            .map_err(|e| e.for_file(given))?;
        let mut out = ToolOutput::text(format!("wrote {}", ws.display(&path)));
        out.touched.push(path);
        Ok(out)
    }
}

/// A write-tier test tool the approver refuses.
pub struct Scribble;

#[tools_core::async_trait]
impl Tool for Scribble {
    fn name(&self) -> &str {
        "scribble"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "pretend to write".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("scribbled"))
    }
}

/// Approves everything but `scribble`.
pub struct NoScribble;

#[tools_core::async_trait]
impl Approver for NoScribble {
    async fn approve(&self, r: &ApprovalRequest) -> Approval {
        if r.tool == "scribble" {
            Approval::Denied("scribbling is not allowed in tests".into())
        } else {
            Approval::Approved
        }
    }
}

pub fn env_with(config: &str) -> Env {
    env_trusted(config, true)
}

/// A run the user has not trusted (see tools-core's `trust`).
pub fn env_untrusted() -> Env {
    env_trusted("", false)
}

fn env_trusted(config: &str, trusted: bool) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: dir.path().into(),
        conversation_id: "eval-test".into(),
        config: Config::parse(config).unwrap(),
        trusted,
    })
    .unwrap();
    let fam = tools_eval::family(&run)
        .unwrap()
        .expect("eval family registered");
    let echo_calls = Arc::new(AtomicUsize::new(0));
    let reg = RegistryBuilder::new(run.clone())
        .family(fam)
        .tool(Arc::new(Echo {
            calls: echo_calls.clone(),
        }))
        .tool(Arc::new(Scribble))
        .tool(Arc::new(WriteFile))
        .approver(Arc::new(NoScribble))
        .build()
        .unwrap();
    Env {
        dir,
        run,
        reg,
        echo_calls,
    }
}

pub fn env() -> Env {
    env_with("")
}

impl Env {
    pub async fn call(&self, args: Value) -> Result<ToolOutput, CallError> {
        self.reg.call(Surface::FULL, "eval", args).await
    }

    pub async fn py(&self, code: &str) -> ToolOutput {
        match self
            .call(json!({"code": code, "description": "run a small python test cell"}))
            .await
        {
            Ok(o) => o,
            Err(e) => panic!("cell failed: {e}\n--- code:\n{code}"),
        }
    }

    pub async fn js(&self, code: &str) -> ToolOutput {
        match self
            .call(json!({"code": code, "language": "javascript", "description": "run a small javascript test cell"}))
            .await
        {
            Ok(o) => o,
            Err(e) => panic!("cell failed: {e}\n--- code:\n{code}"),
        }
    }

    pub async fn py_err(&self, code: &str) -> String {
        match self
            .call(json!({"code": code, "description": "run a small python test cell"}))
            .await
        {
            Ok(o) => panic!("expected an error, got {}", o.text),
            Err(e) => e.to_string(),
        }
    }
}

pub fn status(o: &ToolOutput) -> String {
    o.structured.as_ref().unwrap()["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Whether a process exists and is not a zombie.
pub fn process_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}
