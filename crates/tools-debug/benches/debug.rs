//! `cargo bench -p tools-debug --bench debug`: time from `launch` to the first breakpoint
//! stop, through the `debug` tool against a scripted raw DAP exchange with the same adapter
//! (debugpy), interleaved in one run. Target: overhead ≤ 50 ms at the median.
//!
//! The raw exchange is the minimum a client must do: initialize, launch (not awaited),
//! breakpoints and exception filters on `initialized`, configurationDone, read until the
//! `stopped` event. Ours also fetches the top frames and the source line for its report.
//!
//! `terminate` clears the session's breakpoints (unless `keep_breakpoints`): the bench
//! checks that it did and sets the breakpoint again before each launch, as an agent would;
//! that call is not timed. `-- --smoke` launches once per side and judges nothing; a missing
//! debugpy is then a failure instead of a skip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::framing::{read_frame, write_frame};
use tools_core::{Config, RegistryBuilder, Run, RunOptions, Surface};

const ITER: usize = 7;

/// `-- --smoke`: one launch per side, to show the bench runs.
fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
}

const SCRIPT: &str = "import os\n\ndef f(x):\n    y = x + 1\n    return y\n\nprint(f(41))\n";
const LINE: u64 = 4;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The scripted raw exchange; returns (launch → stopped, launch → stopped + stackTrace).
fn raw_once(python: &Path, root: &Path, script: &Path) -> (Duration, Duration) {
    let mut child = Command::new(python)
        .args(["-m", "debugpy.adapter"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut seq = 0u64;
    let mut send = |w: &mut dyn Write, command: &str, args: Value| -> u64 {
        seq += 1;
        let msg = json!({"seq": seq, "type": "request", "command": command, "arguments": args});
        write_frame(w, &serde_json::to_vec(&msg).unwrap()).unwrap();
        seq
    };
    let next = |r: &mut BufReader<std::process::ChildStdout>| -> Value {
        serde_json::from_slice(&read_frame(r).unwrap().unwrap()).unwrap()
    };
    let start = Instant::now();
    let init = send(
        &mut w,
        "initialize",
        json!({"adapterID": "debugpy", "linesStartAt1": true,
        "columnsStartAt1": true, "pathFormat": "path"}),
    );
    while next(&mut r)["request_seq"] != init {}
    send(
        &mut w,
        "launch",
        json!({"program": script.display().to_string(), "cwd": root.display().to_string(),
        "console": "internalConsole", "justMyCode": true}),
    );
    let (to_stop, thread) = loop {
        let m = next(&mut r);
        match m["event"].as_str() {
            Some("initialized") => {
                send(
                    &mut w,
                    "setBreakpoints",
                    json!({"source": {"path": script.display().to_string()},
                    "breakpoints": [{"line": LINE}]}),
                );
                send(
                    &mut w,
                    "setExceptionBreakpoints",
                    json!({"filters": ["uncaught"]}),
                );
                send(&mut w, "configurationDone", json!({}));
            }
            Some("stopped") => break (start.elapsed(), m["body"]["threadId"].clone()),
            _ => {}
        }
    };
    let st = send(
        &mut w,
        "stackTrace",
        json!({"threadId": thread, "levels": 6}),
    );
    while next(&mut r)["request_seq"] != st {}
    let with_stack = start.elapsed();
    send(&mut w, "disconnect", json!({"terminateDebuggee": true}));
    drop(w);
    let deadline = Instant::now() + Duration::from_secs(3);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (to_stop, with_stack)
}

#[tokio::main]
async fn main() {
    let Some(python) = ["python3", "python"]
        .iter()
        .filter_map(|p| tools_core::testing::which(p))
        .find(|p| {
            Command::new(p)
                .args(["-c", "import debugpy"])
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        })
    else {
        eprintln!("debug bench: no python with debugpy on PATH; run `cargo xtask setup`");
        if smoke() {
            std::process::exit(1);
        }
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("pyproject.toml"), "").unwrap();
    let script = root.join("bench.py");
    std::fs::write(&script, SCRIPT).unwrap();

    let run = Run::new(RunOptions {
        root: root.clone(),
        conversation_id: "bench".into(),
        config: Config::empty(),
        trusted: true,
    })
    .unwrap();
    let registry = RegistryBuilder::new(run.clone())
        .family(tools_debug::family(&run).unwrap().unwrap())
        .build()
        .unwrap();
    let call = |args: Value| {
        let registry = registry.clone();
        async move { registry.call(Surface::FULL, "debug", args).await.unwrap() }
    };
    let set_breakpoint =
        || call(json!({"operation":"breakpoints","file":"bench.py","lines":[LINE]}));
    // `terminate` clears the breakpoints by design: it must say it cleared the one set.
    let terminate = || async {
        let out = call(json!({"operation":"terminate"})).await;
        assert_eq!(
            out.structured.as_ref().unwrap()["breakpoints_cleared"],
            1,
            "{}",
            out.text
        );
    };
    set_breakpoint().await;

    // The first launch of a run also probes which python has debugpy (cached afterwards).
    let t = Instant::now();
    let out = call(json!({"operation":"launch","program":"bench.py"})).await;
    let cold = t.elapsed();
    assert_eq!(
        out.structured.as_ref().unwrap()["reason"],
        "breakpoint",
        "{}",
        out.text
    );
    terminate().await;
    let _ = raw_once(&python, &root, &script);

    let iterations = if smoke() { 1 } else { ITER };
    let (mut ours, mut raw, mut raw_stack) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..iterations {
        set_breakpoint().await;
        let t = Instant::now();
        let out = call(json!({"operation":"launch","program":"bench.py"})).await;
        ours.push(t.elapsed());
        assert_eq!(
            out.structured.as_ref().unwrap()["state"],
            "stopped",
            "{}",
            out.text
        );
        terminate().await;
        let (a, b) = {
            let (python, root, script) = (python.clone(), root.clone(), script.clone());
            tokio::task::spawn_blocking(move || raw_once(&python, &root, &script))
                .await
                .unwrap()
        };
        raw.push(a);
        raw_stack.push(b);
    }
    run.close().await;
    let (o, r, rs) = (median(ours), median(raw), median(raw_stack));
    println!("debug bench: launch → first breakpoint stop (debugpy), median of {iterations}");
    println!(
        "  ours (debug launch, with its stop report)   {:8.1} ms",
        ms(o)
    );
    println!(
        "  raw DAP exchange, to the stopped event      {:8.1} ms",
        ms(r)
    );
    println!(
        "  raw DAP exchange, + stackTrace              {:8.1} ms",
        ms(rs)
    );
    println!(
        "  first launch of a run (incl. debugpy probe) {:8.1} ms",
        ms(cold)
    );
    let overhead = ms(o) - ms(r);
    println!(
        "  overhead vs raw: {overhead:+.1} ms (ratio {:.2}×); target ≤ 50 ms: {}",
        ms(o) / ms(r),
        if overhead <= 50.0 { "met" } else { "MISSED" }
    );
}
