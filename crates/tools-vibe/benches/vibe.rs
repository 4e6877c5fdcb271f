//! Benchmark of the worker machinery against the floor it is built on.
//!
//! - round trip: `vibe_spawn` + `vibe_wait` of a worker that prints one final JSON event and
//!   exits, against spawning and waiting for the same command with bare `tokio::process`.
//! - eight at once: eight such workers spawned together and all waited for, against eight
//!   bare processes.
//! - event reading: a 100 000-line JSON event stream through the worker's event reader,
//!   against parsing each line with `serde_json` alone.
//!
//! Prints medians and the ratio ours / floor; never a pass/fail. `-- --smoke` runs one
//! trial of each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{Config, Registry, RegistryBuilder, Run, RunOptions, Surface};

const SCRIPT: &str = r#"printf '{"type":"result","result":"ok","is_error":false}\n'"#;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn row(name: &str, ours: Duration, floor: Duration) {
    println!(
        "{name:<34} ours {:>9.2} ms   floor {:>9.2} ms   ratio {:>5.2}",
        ours.as_secs_f64() * 1e3,
        floor.as_secs_f64() * 1e3,
        ours.as_secs_f64() / floor.as_secs_f64().max(1e-9)
    );
}

fn registry(dir: &std::path::Path) -> Result<Arc<Registry>, Box<dyn std::error::Error>> {
    let config = format!(
        "[vibe]\nmax_running = 16\n[vibe.fast]\ncommand = [\"sh\", \"-c\", {:?}]\nresult = \"json-events\"\n",
        SCRIPT
    );
    let run = Run::new(RunOptions {
        root: dir.to_path_buf(),
        conversation_id: format!("vibe-bench-{}", std::process::id()),
        config: Config::parse(&config)?,
        trusted: true,
    })?;
    let family = tools_vibe::family(&run)?.ok_or("vibe mode is off")?;
    Ok(RegistryBuilder::new(run).family(family).build()?)
}

async fn ours_once(reg: &Registry, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    let t = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..n {
        let out = reg
            .call(
                Surface::FULL,
                "vibe_spawn",
                json!({"brief": "b", "label": "bench"}),
            )
            .await?;
        let id = out
            .structured
            .and_then(|s| s["id"].as_str().map(str::to_string))
            .ok_or("no id")?;
        ids.push(id);
    }
    for id in ids {
        let out = reg
            .call(
                Surface::FULL,
                "vibe_wait",
                json!({"worker_id": id, "timeout_seconds": 30}),
            )
            .await?;
        let status = out
            .structured
            .map(|s| s["status"].clone())
            .unwrap_or(Value::Null);
        if status != "done" {
            return Err(format!("worker ended {status}").into());
        }
    }
    Ok(t.elapsed())
}

async fn floor_once(n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    let t = Instant::now();
    let mut children = Vec::new();
    for _ in 0..n {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", SCRIPT])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // Its own group, as the tool's children are.
        tools_core::platform::detach_from_our_group(cmd.as_std_mut());
        children.push(cmd.spawn()?);
    }
    for c in children {
        c.wait_with_output().await?;
    }
    Ok(t.elapsed())
}

fn event_lines() -> Vec<Vec<u8>> {
    (0..100_000)
        .map(|i| {
            let v = match i % 4 {
                0 => json!({"type":"item.completed","item":{"type":"agent_message","text":format!("message {i}")}}),
                1 => json!({"type":"item.completed","item":{"type":"reasoning","text":"thinking about it"}}),
                2 => json!({"type":"text","part":{"text":format!("part {i}")}}),
                _ => json!({"type":"step_finish","part":{"reason":"tool-calls"}}),
            };
            serde_json::to_vec(&v).unwrap_or_default()
        })
        .collect()
}

/// `-- --smoke`: one short trial of every measure, to show the bench runs.
fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    println!("tools-vibe benchmark (medians)");
    rt.block_on(async {
        let reg = registry(&root)?;
        for (name, n, reps) in [("round trip (1 worker)", 1, 30), ("eight at once", 8, 10)] {
            let reps = if smoke() { 1 } else { reps };
            let mut ours = Vec::new();
            let mut floor = Vec::new();
            for _ in 0..reps {
                ours.push(ours_once(&reg, n).await?);
                floor.push(floor_once(n).await?);
            }
            row(name, median(ours), median(floor));
        }
        reg.run().close().await;
        Ok::<(), Box<dyn std::error::Error>>(())
    })?;

    let lines = event_lines();
    let reader = tools_vibe::EventReader::new(None, &Default::default());
    let mut ours = Vec::new();
    let mut floor = Vec::new();
    let trials = if smoke() { 1 } else { 5 };
    for _ in 0..trials {
        let t = Instant::now();
        let mut messages = 0usize;
        for l in &lines {
            if reader.read_line(l).message.is_some() {
                messages += 1;
            }
        }
        ours.push(t.elapsed());
        let t = Instant::now();
        let mut parsed = 0usize;
        for l in &lines {
            if serde_json::from_slice::<Value>(l).is_ok() {
                parsed += 1;
            }
        }
        floor.push(t.elapsed());
        if messages == 0 || parsed != lines.len() {
            return Err("the event stream was not read".into());
        }
    }
    row("event reading (100k lines)", median(ours), median(floor));
    Ok(())
}
