//! `cargo xtask bench eval`: our kernels side by side with jupyter_client + ipykernel, in one
//! run on the same interpreter.
//!
//! - kernel start → first result (a fresh run, the first `1 + 1`),
//! - the round trip of a trivial cell through the registry,
//! - a notebook's everyday cell (a pandas DataFrame, a line plot as a PNG, a summary table),
//! - the overhead of one `tool()` bridge call (measured inside the cell, to a no-op tool).
//!
//! Targets: start ≥ 5× faster than ipykernel, round trip ≥ 10× faster, bridge ≤ 1 ms.
//! The two sides take turns (ours, then the peer, twice), and the medians of the pooled
//! trials are compared. `-- --smoke` runs every measure once and judges nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{
    CallCtx, Config, Registry, RegistryBuilder, Run, RunOptions, Surface, Tier, Tool, ToolError,
    ToolOutput,
};

/// Trials per measure in a full run, split over the alternating rounds.
const STARTS: usize = 6;
const ROUND_TRIPS: usize = 200;
const DATA_CELLS: usize = 20;
const BRIDGE_CALLS: usize = 500;
/// Rounds of ours-then-peer, so neither side always runs on a machine warmed by the other.
const ROUNDS: usize = 2;

/// A notebook's everyday cell: a DataFrame, a line plot, and a summary table as its value.
const DATA_CELL: &str = "import numpy as np\nimport pandas as pd\nimport matplotlib.pyplot as plt\n\
df = pd.DataFrame({'x': np.arange(200), 'y': np.sqrt(np.arange(200))})\n\
ax = df.plot(x='x', y='y')\ndf.describe()";

/// How many trials of each measure one round runs: the full counts, or one each with
/// `--smoke` (the bench only has to run; no figure is judged).
#[derive(Clone, Copy)]
struct Trials {
    starts: usize,
    round_trips: usize,
    data_cells: usize,
    bridge_calls: usize,
    rounds: usize,
}

impl Trials {
    fn from_args() -> Trials {
        if std::env::args().any(|a| a == "--smoke") {
            Trials {
                starts: 1,
                round_trips: 1,
                data_cells: 1,
                bridge_calls: 1,
                rounds: 1,
            }
        } else {
            Trials {
                starts: STARTS / ROUNDS,
                round_trips: ROUND_TRIPS / ROUNDS,
                data_cells: DATA_CELLS / ROUNDS,
                bridge_calls: BRIDGE_CALLS,
                rounds: ROUNDS,
            }
        }
    }
}

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

/// Every trial of one side, pooled over the rounds.
#[derive(Default)]
struct Samples {
    start: Vec<Duration>,
    round_trip: Vec<Duration>,
    data_cell: Vec<Duration>,
    bridge: Vec<Duration>,
}

impl Samples {
    fn extend(&mut self, other: Samples) {
        self.start.extend(other.start);
        self.round_trip.extend(other.round_trip);
        self.data_cell.extend(other.data_cell);
        self.bridge.extend(other.bridge);
    }
}

/// The value a cell displayed, as its structured result gives it (the text may carry notes).
fn value(out: &ToolOutput) -> String {
    out.structured.as_ref().unwrap()["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn measure_ours(language: &str, trials: Trials) -> Samples {
    let dir = tempfile::tempdir().unwrap();
    let mut samples = Samples::default();
    for _ in 0..trials.starts {
        let (run, reg) = registry(dir.path());
        let t = Instant::now();
        let out = cell(&reg, "1 + 1", language).await;
        samples.start.push(t.elapsed());
        assert_eq!(value(&out), "2", "{}", out.text);
        run.close().await;
    }
    let (run, reg) = registry(dir.path());
    cell(&reg, "1 + 1", language).await;
    for _ in 0..trials.round_trips {
        let t = Instant::now();
        cell(&reg, "1 + 1", language).await;
        samples.round_trip.push(t.elapsed());
    }
    if language == "python" {
        // The first run pays the imports, as in the peer: only later runs are timed.
        let out = cell(&reg, DATA_CELL, language).await;
        assert_eq!(out.images.len(), 1, "{}", out.text);
        for _ in 0..trials.data_cells {
            let t = Instant::now();
            let out = cell(&reg, DATA_CELL, language).await;
            samples.data_cell.push(t.elapsed());
            assert_eq!(out.images.len(), 1, "{}", out.text);
        }
    }
    let calls = trials.bridge_calls;
    let code = match language {
        "python" => format!(
            "import time\ntool('noop', {{}})\nt = time.perf_counter()\nfor _ in range({calls}):\n    tool('noop', {{}})\n(time.perf_counter() - t) / {calls}"
        ),
        // The semicolons matter: without them the last line's `(` would call the loop's value.
        _ => format!(
            "await tool('noop', {{}});\nconst t = performance.now();\nfor (let i = 0; i < {calls}; i++) await tool('noop', {{}});\n(performance.now() - t) / 1000 / {calls}"
        ),
    };
    let out = cell(&reg, &code, language).await;
    let per_call: f64 = value(&out).trim().parse().unwrap_or_else(|e| {
        panic!(
            "the bridge cell's value is not a number ({e}): {}",
            out.text
        )
    });
    samples.bridge.push(Duration::from_secs_f64(per_call));
    run.close().await;
    samples
}

const PEER: &str = r#"
import json, sys, time
try:
    from jupyter_client.manager import start_new_kernel
except ImportError as e:
    print(json.dumps({"skip": "jupyter_client is not installed: %s" % e})); sys.exit(0)
STARTS, TRIPS, DATA = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
DATA_CELL = sys.argv[4]

def run(kc, code):
    msg_id = kc.execute(code)
    result, images = None, 0
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "execute_result":
            result = msg["content"]["data"]["text/plain"]
        if kind in ("execute_result", "display_data") and "image/png" in msg["content"]["data"]:
            images += 1
        if kind == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
    kc.get_shell_msg(timeout=60)
    return result, images

starts = []
for _ in range(STARTS):
    t = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3")
    assert run(kc, "1 + 1")[0] == "2"
    starts.append(time.perf_counter() - t)
    kc.stop_channels(); km.shutdown_kernel(now=True)
km, kc = start_new_kernel(kernel_name="python3")
run(kc, "1 + 1")
trips = []
for _ in range(TRIPS):
    t = time.perf_counter()
    run(kc, "1 + 1")
    trips.append(time.perf_counter() - t)
assert run(kc, DATA_CELL)[1] == 1
data = []
for _ in range(DATA):
    t = time.perf_counter()
    _, images = run(kc, DATA_CELL)
    data.append(time.perf_counter() - t)
    assert images == 1
kc.stop_channels(); km.shutdown_kernel(now=True)
print(json.dumps({"start": starts, "round_trip": trips, "data_cell": data}))
"#;

/// The peer's samples, and the versions it ran with.
fn measure_peer(trials: Trials) -> Result<Samples, String> {
    let dir = tempfile::tempdir().unwrap();
    let search = tools_core::discovery::ProgramSearch::new(dir.path(), true);
    let python = tools_eval::find_python(&search, None)?;
    let out = std::process::Command::new(&python.path)
        .args([
            "-c",
            PEER,
            &trials.starts.to_string(),
            &trials.round_trips.to_string(),
            &trials.data_cells.to_string(),
            DATA_CELL,
        ])
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
    let secs = |key: &str| -> Vec<Duration> {
        v[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_f64)
                    .map(Duration::from_secs_f64)
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Samples {
        start: secs("start"),
        round_trip: secs("round_trip"),
        data_cell: secs("data_cell"),
        bridge: Vec::new(),
    })
}

/// The versions of the interpreter and the peer's packages, for the report.
fn versions() -> String {
    let dir = tempfile::tempdir().unwrap();
    let search = tools_core::discovery::ProgramSearch::new(dir.path(), true);
    let Ok(python) = tools_eval::find_python(&search, None) else {
        return "no python".into();
    };
    let probe = "import sys, importlib.metadata as m\nv = []\nfor p in ('ipykernel', 'jupyter_client', 'IPython', 'pandas', 'matplotlib'):\n    try: v.append(p + ' ' + m.version(p))\n    except Exception: v.append(p + ' absent')\nprint('Python ' + sys.version.split()[0] + ', ' + ', '.join(v))";
    std::process::Command::new(&python.path)
        .args(["-c", probe])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|e| format!("cannot ask {}: {e}", python.path.display()))
}

fn ratio_line(what: &str, ours: Duration, peer: Duration, target: Option<f64>) {
    let ratio = peer.as_secs_f64() / ours.as_secs_f64();
    let verdict = match target {
        Some(t) if ratio >= t => format!(" (target ≥ {t}x: met)"),
        Some(t) => format!(" (target ≥ {t}x: MISSED)"),
        None => String::new(),
    };
    println!(
        "{what:<22} ours {:>10}   ipykernel {:>10}   {ratio:.1}x faster{verdict}",
        ms(ours),
        ms(peer)
    );
}

fn main() {
    let trials = Trials::from_args();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "eval benchmark: {} round(s) of ours then ipykernel through jupyter_client; per round {} starts, {} round trips, {} pandas/matplotlib cells; {} bridge calls; {cores} cores",
        trials.rounds, trials.starts, trials.round_trips, trials.data_cells, trials.bridge_calls
    );
    println!("{}", versions());
    let (mut py, mut js, mut peer) = (Samples::default(), Samples::default(), Samples::default());
    let mut peer_skipped = None;
    for _ in 0..trials.rounds {
        py.extend(rt.block_on(measure_ours("python", trials)));
        js.extend(rt.block_on(measure_ours("javascript", trials)));
        match measure_peer(trials) {
            Ok(s) => peer.extend(s),
            Err(why) => peer_skipped = Some(why),
        }
    }
    let (py_bridge, js_bridge) = (median(py.bridge), median(js.bridge));
    println!(
        "ours  javascript  start → first result {:>10}   round trip {:>9}   bridge call {:>9}",
        ms(median(js.start)),
        ms(median(js.round_trip)),
        ms(js_bridge)
    );
    match peer_skipped {
        Some(why) => {
            println!(
                "ours  python      start → first result {:>10}   round trip {:>9}   pandas/matplotlib cell {:>9}",
                ms(median(py.start)),
                ms(median(py.round_trip)),
                ms(median(py.data_cell))
            );
            println!("peer  ipykernel   skipped: {why}");
        }
        None => {
            ratio_line(
                "start → first result",
                median(py.start),
                median(peer.start),
                Some(5.0),
            );
            ratio_line(
                "trivial round trip",
                median(py.round_trip),
                median(peer.round_trip),
                Some(10.0),
            );
            ratio_line(
                "pandas/matplotlib cell",
                median(py.data_cell),
                median(peer.data_cell),
                None,
            );
        }
    }
    println!(
        "bridge overhead: python {} / javascript {} per call (target ≤ 1 ms: {}; ipykernel has no bridge)",
        ms(py_bridge),
        ms(js_bridge),
        if py_bridge.max(js_bridge) <= Duration::from_millis(1) {
            "met"
        } else {
            "MISSED"
        }
    );
}
