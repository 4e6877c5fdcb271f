//! Bad input and bad runs: an unknown id, a runner missing from the project's environment,
//! a test that hangs (and forks), a cancelled call, a huge answer, an untrusted workspace.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tools_core::{CallOptions, Progress, ProgressSink, Surface};

use super::{run_args, workspace, workspace_with};

const PYPROJECT: &str =
    "[project]\nname = \"p\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\n";

/// Whether process `pid` still runs (a zombie does not count).
fn running(pid: &str) -> bool {
    let out = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", pid])
        .output()
        .unwrap();
    let stat = String::from_utf8_lossy(&out.stdout);
    !stat.trim().is_empty() && !stat.trim().starts_with('Z')
}

/// A test that starts a grandchild (`sleep`), writes its pid to `pid.txt`, and hangs.
const HANGS: &str = "import subprocess, time, pathlib\n\n\ndef test_hangs():\n    child = subprocess.Popen([\"sleep\", \"300\"])\n    pathlib.Path(__file__).with_name(\"pid.txt\").write_text(str(child.pid))\n    time.sleep(300)\n";

async fn pid_written(root: &std::path::Path) -> String {
    for _ in 0..100 {
        if let Ok(pid) = std::fs::read_to_string(root.join("pid.txt")) {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the test never started its child");
}

#[tokio::test]
async fn an_unknown_id_is_named_in_the_first_line() {
    if tools_core::testing::require_binary("pytest", "pytest").is_none() {
        return;
    }
    let ws = workspace(&[
        ("pyproject.toml", PYPROJECT),
        ("test_a.py", "def test_a():\n    pass\n"),
    ]);
    let err = ws
        .err(run_args(json!({"ids": ["test_a.py::test_nope"]})))
        .await;
    assert_eq!(
        err,
        "invalid arguments (`ids`): pytest ran no test for `test_a.py::test_nope`: no such test (`list` with the file shows its ids); it said: ERROR: not found: test_a.py::test_nope"
    );
    ws.close().await;
}

#[tokio::test]
async fn a_project_environment_without_the_runner_says_so() {
    let ws = workspace(&[
        ("pyproject.toml", PYPROJECT),
        ("test_a.py", "def test_a():\n    pass\n"),
    ]);
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(ws.root())
        .status()
        .unwrap();
    assert!(made.success());
    let err = ws.err(run_args(json!({}))).await;
    assert_eq!(
        err,
        "not available here: pytest is not installed in the project's environment (No module named pytest); install it there"
    );
    let status = ws.ok(json!({"action": "status"})).await;
    assert_eq!(
        status.lines().next(),
        Some(
            "python: pytest for . (pyproject.toml [tool.pytest]): `.venv/bin/python -m pytest` from .venv/bin/python; records which functions each test runs"
        )
    );
    ws.close().await;
}

#[tokio::test]
async fn a_hanging_test_is_killed_with_everything_it_started() {
    if tools_core::testing::require_binary("pytest", "pytest").is_none() {
        return;
    }
    let ws = workspace(&[("pyproject.toml", PYPROJECT), ("test_hang.py", HANGS)]);
    let err = ws.err(run_args(json!({"timeout_ms": 3000}))).await;
    assert_eq!(
        err,
        "timed out: pytest did not finish within 3 s; its whole process tree was killed (raise `timeout_ms`, or run fewer tests)"
    );
    let pid = pid_written(ws.root()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!running(&pid), "the test's child {pid} is still running");
    ws.close().await;
}

struct Seen(Mutex<Vec<String>>);
impl ProgressSink for Seen {
    fn report(&self, _: f64, _: Option<f64>, message: Option<String>) {
        self.0.lock().unwrap().push(message.unwrap_or_default());
    }
}

#[tokio::test]
async fn a_cancelled_run_reports_progress_then_kills_the_tree() {
    if tools_core::testing::require_binary("pytest", "pytest").is_none() {
        return;
    }
    let ws = workspace_with(
        &[("pyproject.toml", PYPROJECT), ("test_hang.py", HANGS)],
        true,
        "[test]\nprogress_ms = 200\n",
    );
    let seen = Arc::new(Seen(Mutex::new(Vec::new())));
    let cancel = tokio_util::sync::CancellationToken::new();
    let opts = CallOptions {
        progress: Progress::new(seen.clone()),
        cancel: Some(cancel.clone()),
        stack: Vec::new(),
    };
    let call = ws
        .registry
        .call_with(Surface::FULL, "test", run_args(json!({})), opts);
    let root = ws.root().to_path_buf();
    let cancelling = async {
        let pid = pid_written(&root).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
        pid
    };
    let (answer, pid) = tokio::join!(call, cancelling);
    assert_eq!(
        answer.unwrap_err().to_string(),
        "rejected: the call was cancelled; pytest and its whole process tree were killed"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!running(&pid), "the test's child {pid} is still running");
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(seen.first().map(String::as_str), Some("starting pytest"));
    assert!(
        seen.iter()
            .skip(1)
            .all(|m| m.starts_with("pytest running for ") && m.ends_with(" s")),
        "{seen:?}"
    );
    assert!(seen.len() >= 2, "{seen:?}");
    ws.close().await;
}

#[tokio::test]
async fn a_long_answer_pages_with_offset_without_running_again() {
    if tools_core::testing::require_binary("pytest", "pytest").is_none() {
        return;
    }
    let many = "import pytest\n\n\n@pytest.mark.parametrize(\"n\", range(300))\ndef test_many(n):\n    assert n < 0\n";
    let ws = workspace(&[("pyproject.toml", PYPROJECT), ("test_many.py", many)]);
    let text = ws.ok(run_args(json!({}))).await;
    let line = |n: usize| format!("test_many.py:6 test_many.py::test_many[{n}] — assert {n} < 0");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "0 passed, 300 failed, 0 skipped in T s — pytest");
    let shown = lines.len() - 2;
    for (i, l) in lines[1..=shown].iter().enumerate() {
        assert_eq!(*l, line(i));
    }
    assert_eq!(
        lines[shown + 1],
        format!(
            "… {} more failures (of 300): call again with offset {shown}",
            300 - shown
        )
    );
    assert!(text.len() <= 4096 + 100, "{}", text.len());
    // The next page comes from the kept answer: the file may even be gone.
    std::fs::remove_file(ws.root().join("test_many.py")).unwrap();
    let page = ws.ok(run_args(json!({"offset": shown}))).await;
    let page: Vec<&str> = page.lines().collect();
    assert_eq!(page[0], lines[0]);
    assert_eq!(page[1], line(shown));
    ws.close().await;
}

#[tokio::test]
async fn an_untrusted_workspace_lists_but_never_runs() {
    let ws = workspace_with(
        &[
            ("pyproject.toml", PYPROJECT),
            ("test_a.py", "def test_a():\n    pass\n"),
        ],
        false,
        "",
    );
    let err = ws.err(run_args(json!({}))).await;
    assert_eq!(
        err,
        "not available here: untrusted workspace: the tests were not run (running them runs the project's code); start with --trust (or list this folder under [trust] roots in ~/.config/agent-tools/config.toml) to enable it"
    );
    let text = ws.ok(json!({"action": "list", "file": "test_a.py"})).await;
    assert_eq!(text, "1 test for test_a.py\ntest_a.py:1 test_a.py::test_a");
    ws.close().await;
}
