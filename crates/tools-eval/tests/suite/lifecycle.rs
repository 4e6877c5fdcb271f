//! Kernel lifecycle: lazily started, one per language, gone when the run closes; progress
//! while a long cell runs; doctor.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_core::{Progress, ProgressSink, Surface};

use super::common::*;

#[tokio::test]
async fn no_kernel_process_is_left_after_the_run_closes() {
    if !python() || !node() {
        return;
    }
    let e = env();
    let py = e.py("import os, subprocess\nchild = subprocess.Popen(['sleep', '300'])\n(os.getpid(), child.pid)").await;
    let pids: Vec<i32> = py
        .text
        .trim_matches(|c| c == '(' || c == ')')
        .split(", ")
        .map(|s| s.parse().unwrap())
        .collect();
    let js = e.js("process.pid").await;
    let node_pid: i32 = js.text.parse().unwrap();
    for pid in pids.iter().chain([&node_pid]) {
        assert!(process_running(*pid), "{pid} runs before close");
    }
    e.run.close().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while pids.iter().chain([&node_pid]).any(|p| process_running(*p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "kernel processes outlived the run"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let err = e.py_err("1").await;
    assert!(err.contains("run is closed"), "{err}");
}

struct Collect(Mutex<Vec<String>>);

impl ProgressSink for Collect {
    fn report(&self, _progress: f64, _total: Option<f64>, message: Option<String>) {
        self.0.lock().unwrap().push(message.unwrap_or_default());
    }
}

#[tokio::test]
async fn a_long_cell_reports_progress() {
    if !python() {
        return;
    }
    let e = env_with("[eval]\nprogress_interval_secs = 0.2\n");
    let sink = Arc::new(Collect(Mutex::new(Vec::new())));
    let opts = tools_core::CallOptions {
        progress: Progress::new(sink.clone()),
        ..Default::default()
    };
    let o = e
        .reg
        .call_with(
            Surface::FULL,
            "eval",
            json!({"code": "import time\ntime.sleep(1.2)\n'slept'", "description": "sleep a while to see progress"}),
            opts,
        )
        .await
        .unwrap();
    assert_eq!(o.text, "'slept'");
    let reports = sink.0.lock().unwrap().clone();
    assert!(reports.len() >= 3, "{reports:?}");
    assert!(
        reports[0].starts_with("python cell running for"),
        "{reports:?}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn doctor_names_the_interpreters_and_why() {
    let e = env();
    let entries = e.reg.doctor().await;
    let py = entries
        .iter()
        .find(|d| d.resource == "python kernel")
        .unwrap();
    assert_eq!(py.family, "eval");
    if python() {
        assert!(py.ok, "{py:?}");
        assert!(py.detail.contains("python3 on PATH"), "{py:?}");
    }
    // A project venv wins over PATH.
    let venv = e.dir.path().join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    let real = tools_core::testing::which("python3");
    if let Some(real) = real {
        std::os::unix::fs::symlink(real, venv.join("python")).unwrap();
        let entries = e.reg.doctor().await;
        let py = entries
            .iter()
            .find(|d| d.resource == "python kernel")
            .unwrap();
        assert!(py.detail.contains(".venv/"), "{py:?}");
    }
    assert!(entries_have(&entries, "javascript kernel"));
    assert!(entries_have(&entries, "cell limits"));
    // The family is left out when the configuration says so.
    let dir = tempfile::tempdir().unwrap();
    let run = tools_core::Run::new(tools_core::RunOptions {
        root: dir.path().into(),
        conversation_id: "off".into(),
        config: tools_core::Config::parse("[eval]\nenabled = false\n").unwrap(),
        trusted: false,
    })
    .unwrap();
    assert!(tools_eval::family(&run).unwrap().is_none());
    let bad = tools_core::Run::new(tools_core::RunOptions {
        root: dir.path().into(),
        conversation_id: "bad".into(),
        config: tools_core::Config::parse("[eval]\nidle_timeout_secs = 0\n").unwrap(),
        trusted: false,
    })
    .unwrap();
    assert!(tools_eval::family(&bad).is_err());
}

#[cfg(unix)]
fn entries_have(entries: &[tools_core::DoctorEntry], resource: &str) -> bool {
    entries.iter().any(|d| d.resource == resource)
}

#[cfg(unix)]
#[tokio::test]
async fn the_project_venv_is_the_interpreter_cells_run_on() {
    let Some(real) = tools_core::testing::which("python3") else {
        tools_core::testing::skipped("python3", "python3 is not on PATH");
        return;
    };
    tools_core::testing::exercised("python3");
    let e = env();
    let venv = e.dir.path().join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    std::os::unix::fs::symlink(real, venv.join("python")).unwrap();
    let o = e.py("import sys\nsys.executable").await;
    assert!(o.text.ends_with("/.venv/bin/python'"), "{}", o.text);
}

#[tokio::test]
async fn a_missing_or_broken_interpreter_is_a_clear_error() {
    let e = env_with("[eval]\npython = \"/nonexistent/python3\"\n");
    let err = e.py_err("1").await;
    assert!(
        err.starts_with("not available here: no python interpreter for eval"),
        "{err}"
    );
    assert!(err.contains("/nonexistent/python3"), "{err}");
    // An interpreter that exits at once: the start fails clearly, and again next time.
    let e = env_with("[eval]\npython = \"/bin/false\"\nstart_timeout_secs = 10\n");
    let err = e.py_err("1").await;
    assert!(err.contains("exited with code 1 while starting"), "{err}");
    assert!(err.contains("[eval] python in agent-tools.toml"), "{err}");
    let err = e.py_err("1").await;
    assert!(err.contains("while starting"), "{err}");
}
