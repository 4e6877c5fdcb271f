//! `cargo xtask bench eval`: our kernels side by side with jupyter_client + ipykernel, in one
//! run on the same interpreter.
//!
//! - kernel start → first result (a fresh run, the first `1 + 1`),
//! - the round trip of a trivial cell through the registry,
//! - the overhead of one `tool()` bridge call (measured inside the cell, to a no-op tool).
//!
//! Targets: start ≥ 5× faster than ipykernel, round trip ≥ 10× faster, bridge ≤ 1 ms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{
    CallCtx, Config, Registry, RegistryBuilder, Run, RunOptions, Surface, Tier, Tool, ToolError,
    ToolOutput,
};

const STARTS: usize = 5;
const ROUND_TRIPS: usize = 200;
const BRIDGE_CALLS: usize = 500;

struct Noop;

#[tools_core::async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "does nothing".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

fn registry(dir: &std::path::Path) -> (Arc<Run>, Arc<Registry>) {
    let run = Run::new(RunOptions {
        root: dir.into(),
        conversation_id: "bench".into(),
        config: Config::empty(),
        trusted: true,
    })
    .unwrap();
    let reg = RegistryBuilder::new(run.clone())
        .family(tools_eval::family(&run).unwrap().unwrap())
        .tool(Arc::new(Noop))
        .build()
        .unwrap();
    (run, reg)
}

async fn cell(reg: &Registry, code: &str, language: &str) -> ToolOutput {
    reg.call(
        Surface::FULL,
        "eval",
        json!({"code": code, "language": language, "description": "a trivial cell for the benchmark"}),
    )
    .await
    .unwrap()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

struct Ours {
    start: Duration,
    round_trip: Duration,
    bridge: Duration,
}

async fn measure_ours(language: &str) -> Ours {
    let dir = tempfile::tempdir().unwrap();
    let mut starts = Vec::new();
    for _ in 0..STARTS {
        let (run, reg) = registry(dir.path());
        let t = Instant::now();
        let out = cell(&reg, "1 + 1", language).await;
        starts.push(t.elapsed());
        assert_eq!(out.text, "2");
        run.close().await;
    }
    let (run, reg) = registry(dir.path());
    cell(&reg, "1 + 1", language).await;
    let mut trips = Vec::new();
    for _ in 0..ROUND_TRIPS {
        let t = Instant::now();
        cell(&reg, "1 + 1", language).await;
        trips.push(t.elapsed());
    }
    let code = match language {
        "python" => format!(
            "import time\ntool('noop', {{}})\nt = time.perf_counter()\nfor _ in range({BRIDGE_CALLS}):\n    tool('noop', {{}})\n(time.perf_counter() - t) / {BRIDGE_CALLS}"
        ),
        _ => format!(
            "await tool('noop', {{}})\nconst t = performance.now()\nfor (let i = 0; i < {BRIDGE_CALLS}; i++) await tool('noop', {{}})\n(performance.now() - t) / 1000 / {BRIDGE_CALLS}"
        ),
    };
    let out = cell(&reg, &code, language).await;
    let per_call: f64 = out.text.trim().parse().unwrap();
    run.close().await;
    Ours {
        start: median(starts),
        round_trip: median(trips),
        bridge: Duration::from_secs_f64(per_call),
    }
}

const PEER: &str = r#"
import json, sys, time
try:
    from jupyter_client.manager import start_new_kernel
except ImportError as e:
    print(json.dumps({"skip": "jupyter_client is not installed: %s" % e})); sys.exit(0)
STARTS, TRIPS = int(sys.argv[1]), int(sys.argv[2])

def run(kc, code):
    msg_id = kc.execute(code)
    result = None
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_result":
            result = msg["content"]["data"]["text/plain"]
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    kc.get_shell_msg(timeout=30)
    return result

starts = []
for _ in range(STARTS):
    t = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3")
    assert run(kc, "1 + 1") == "2"
    starts.append(time.perf_counter() - t)
    kc.stop_channels(); km.shutdown_kernel(now=True)
km, kc = start_new_kernel(kernel_name="python3")
run(kc, "1 + 1")
trips = []
for _ in range(TRIPS):
    t = time.perf_counter()
    run(kc, "1 + 1")
    trips.append(time.perf_counter() - t)
kc.stop_channels(); km.shutdown_kernel(now=True)
starts.sort(); trips.sort()
print(json.dumps({"start": starts[len(starts) // 2], "round_trip": trips[len(trips) // 2]}))
"#;

fn measure_peer() -> Result<(Duration, Duration), String> {
    let dir = tempfile::tempdir().unwrap();
    let search = tools_core::discovery::ProgramSearch::new(dir.path(), true);
    let python = tools_eval::find_python(&search, None)?;
    let out = std::process::Command::new(&python.path)
        .args(["-c", PEER, &STARTS.to_string(), &ROUND_TRIPS.to_string()])
        .current_dir(dir.path())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.path.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    let v: Value = serde_json::from_str(line).map_err(|_| {
        format!(
            "the ipykernel peer failed: {}{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if let Some(skip) = v["skip"].as_str() {
        return Err(skip.to_string());
    }
    Ok((
        Duration::from_secs_f64(v["start"].as_f64().unwrap()),
        Duration::from_secs_f64(v["round_trip"].as_f64().unwrap()),
    ))
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "eval benchmark: medians of {STARTS} starts, {ROUND_TRIPS} round trips, {BRIDGE_CALLS} bridge calls"
    );
    let py = rt.block_on(measure_ours("python"));
    let js = rt.block_on(measure_ours("javascript"));
    println!(
        "ours  python      start → first result {:>10}   round trip {:>9}   bridge call {:>9}",
        ms(py.start),
        ms(py.round_trip),
        ms(py.bridge)
    );
    println!(
        "ours  javascript  start → first result {:>10}   round trip {:>9}   bridge call {:>9}",
        ms(js.start),
        ms(js.round_trip),
        ms(js.bridge)
    );
    match measure_peer() {
        Ok((start, trip)) => {
            println!(
                "peer  ipykernel   start → first result {:>10}   round trip {:>9}   (jupyter_client)",
                ms(start),
                ms(trip)
            );
            let start_ratio = start.as_secs_f64() / py.start.as_secs_f64();
            let trip_ratio = trip.as_secs_f64() / py.round_trip.as_secs_f64();
            let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
            println!(
                "ratio start: {start_ratio:.1}x faster (target ≥ 5x: {})",
                verdict(start_ratio >= 5.0)
            );
            println!(
                "ratio round trip: {trip_ratio:.1}x faster (target ≥ 10x: {})",
                verdict(trip_ratio >= 10.0)
            );
        }
        Err(why) => println!("peer  ipykernel   skipped: {why}"),
    }
    println!(
        "bridge overhead: python {} / javascript {} per call (target ≤ 1 ms: {})",
        ms(py.bridge),
        ms(js.bridge),
        if py.bridge.max(js.bridge) <= Duration::from_millis(1) {
            "met"
        } else {
            "MISSED"
        }
    );
}
