//! Session rules and failure cases: one session per conversation, the hard TTL, a killed or
//! hung adapter, the conjunction messages of `adapters`, bad input, run close.

use serde_json::json;
use tools_core::{CallError, Surface, ToolError};

use super::common::*;
use super::python::LOOP;

const STOPS: &str = "x = 1\ny = x + 1  # L_stop\nprint(y)\n";

async fn stopped_session(fx: &Fixture) {
    fx.write("pyproject.toml", "");
    fx.write("stop.py", STOPS);
    fx.ok(json!({"operation":"breakpoints","file":"stop.py","lines":[2]}))
        .await;
    let out = fx
        .ok(json!({"operation":"launch","program":"stop.py"}))
        .await;
    assert_eq!(structured(&out)["reason"], "breakpoint");
}

fn kill9(pid: i64) {
    let st = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

/// The hard TTL of the expiry test.
const TTL_SECONDS: u64 = 30;

/// Polls `status` until the session has expired, within a generous bound past the TTL.
async fn wait_for_expiry(fx: &Fixture) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(TTL_SECONDS + 120);
    loop {
        let status = fx.status().await;
        if status["state"] != "stopped" {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session outlived its TTL: {status}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_launch_is_rejected_and_the_ttl_expires_the_session() {
    if !has_debugpy() {
        return;
    }
    // The TTL runs from the adapter's start, so it must outlast a launch on a loaded machine
    // (several seconds at a load of 10 on 2 cores) plus the checks made before it ends.
    let fx = Fixture::new(&format!("[debug]\nsession_ttl_seconds = {TTL_SECONDS}\n"));
    stopped_session(&fx).await;
    let (adapter, debuggee) = pids(&fx).await;
    let err = fx
        .err(json!({"operation":"launch","program":"stop.py"}))
        .await;
    assert!(matches!(err, ToolError::Rejected(_)), "{err}");
    assert!(err.to_string().contains("call `terminate` first"), "{err}");
    // The first session is untouched by the rejected launch.
    assert_eq!(fx.status().await["state"], "stopped");
    let status = wait_for_expiry(&fx).await;
    assert_eq!(status["state"], "expired", "{status}");
    assert!(
        status["last_end"].as_str().unwrap().contains("hard TTL"),
        "{status}"
    );
    assert!(gone(adapter).await, "adapter survived the TTL");
    assert!(gone(debuggee).await, "debuggee survived the TTL");
    let err = fx.err(json!({"operation":"stack"})).await;
    assert!(err.to_string().contains("expired"), "{err}");
    // A new session can start after expiry.
    let out = fx
        .ok(json!({"operation":"launch","program":"stop.py"}))
        .await;
    assert_eq!(structured(&out)["state"], "stopped");
    fx.ok(json!({"operation":"terminate"})).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_adapter_killed_mid_session_clears_the_session() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    stopped_session(&fx).await;
    let (adapter, debuggee) = pids(&fx).await;
    kill9(adapter);
    assert!(gone(adapter).await);
    let err = fx.err(json!({"operation":"stack"})).await;
    assert!(matches!(err, ToolError::NotAvailable(_)), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("debugpy") && msg.contains("cleared"), "{msg}");
    assert!(msg.contains("Launch again"), "{msg}");
    assert!(
        gone(debuggee).await,
        "debuggee left behind after the adapter died"
    );
    let status = fx.status().await;
    assert_eq!(status["state"], "none");
    // And the next launch works.
    let out = fx
        .ok(json!({"operation":"launch","program":"stop.py"}))
        .await;
    assert_eq!(structured(&out)["reason"], "breakpoint");
    fx.ok(json!({"operation":"terminate"})).await;
}

/// An "adapter" that reads requests and never answers.
const HANG: &str = r#"import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
while sys.stdin.buffer.read(1):
    pass
time.sleep(3600)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_adapter_times_out_and_leaves_nothing_behind() {
    if !has_debugpy() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang.py");
    std::fs::write(&hang, HANG).unwrap();
    let pidfile = dir.path().join("pid");
    let python = tools_core::testing::which("python3").unwrap();
    let cfg = format!(
        "[debug]\nrequest_timeout_seconds = 1\nstartup_timeout_seconds = 2\n\
         [debug.adapters.debugpy]\ncommand = [{:?}, {:?}, {:?}]\n",
        python.display().to_string(),
        hang.display().to_string(),
        pidfile.display().to_string()
    );
    let fx = Fixture::new(&cfg);
    fx.write("pyproject.toml", "");
    fx.write("stop.py", STOPS);
    let err = fx
        .err(json!({"operation":"launch","program":"stop.py"}))
        .await;
    assert!(matches!(err, ToolError::TimedOut(_)), "{err}");
    assert!(err.to_string().contains("initialize"), "{err}");
    let pid: i64 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(gone(pid).await, "the hung adapter was left running");
    assert_eq!(fx.status().await["state"], "none");
}

#[tokio::test(flavor = "multi_thread")]
async fn adapters_say_which_half_of_the_conjunction_is_missing() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("[debug.adapters.lldb]\ncommand = [\"no-such-lldb-dap\"]\n");
    fx.write("CMakeLists.txt", "");
    let out = fx.ok(json!({"operation":"adapters"})).await;
    let by_id = |id: &str| {
        structured(&out)["adapters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["adapter"] == id)
            .cloned()
            .unwrap()
    };
    // debugpy: binary found, marker missing.
    assert_eq!(by_id("debugpy")["state"], "missing_marker");
    assert!(out.text.contains(
        "debugpy: not usable — missing root marker (none of pyproject.toml, setup.py, requirements.txt in the workspace); the binary would be"
    ), "{}", out.text);
    // lldb: marker found, binary missing, with where it looked.
    assert_eq!(by_id("lldb")["state"], "missing_binary");
    assert!(
        out.text
            .contains("lldb: not usable — missing binary (looked for no-such-lldb-dap on PATH ("),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("root marker CMakeLists.txt found at ."),
        "{}",
        out.text
    );
    if tools_core::testing::which("dart").is_none() {
        assert_eq!(by_id("dart")["state"], "missing_both");
        assert!(out.text.contains("dart: not usable — missing root marker (none of pubspec.yaml in the workspace), and missing binary (looked for dart on PATH"), "{}", out.text);
    }
    // With a marker, debugpy is usable; the project's .venv wins over PATH.
    fx.write("pyproject.toml", "");
    let out = fx.ok(json!({"operation":"adapters"})).await;
    assert!(
        out.text
            .contains("debugpy: usable — root marker pyproject.toml found at .; binary"),
        "{}",
        out.text
    );
    assert!(out.text.contains("(from PATH)"), "{}", out.text);
    // A fresh run (the import probe is cached per run) whose .venv python has debugpy.
    let fx2 = Fixture::new("");
    fx2.write("pyproject.toml", "");
    fx2.project_venv_python();
    let out = fx2.ok(json!({"operation":"adapters"})).await;
    assert!(
        out.text.contains("(from the project's .venv/bin/python)"),
        "{}",
        out.text
    );
    // A launch runs on that interpreter too.
    fx2.write(
        "which.py",
        "import os\nprint('venv', os.environ.get('FROM_PROJECT_VENV'))\n",
    );
    let out = fx2
        .ok(json!({"operation":"launch","program":"which.py"}))
        .await;
    assert!(out.text.contains("venv yes"), "{}", out.text);
    // doctor uses the same discovery.
    let doctor = fx.registry.doctor().await;
    let lldb = doctor
        .iter()
        .find(|d| d.resource.starts_with("lldb"))
        .unwrap();
    assert!(!lldb.ok);
    assert!(lldb.detail.contains("missing binary"), "{}", lldb.detail);
    let py = doctor
        .iter()
        .find(|d| d.resource.starts_with("debugpy"))
        .unwrap();
    assert!(py.ok, "{py:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_clear_errors() {
    let fx = Fixture::new("");
    fx.write("notes.txt", "hello");
    fx.write("a.py", "print(1)\n");
    let cases = [
        (json!({"operation":"launch"}), "program"),
        (
            json!({"operation":"launch","program":"missing.py"}),
            "does not exist",
        ),
        (
            json!({"operation":"launch","program":"notes.txt"}),
            "adapter",
        ),
        (
            json!({"operation":"launch","program":"../x.py"}),
            "outside the workspace",
        ),
        (
            json!({"operation":"launch","program":"a.py","adapter":"gdb"}),
            "unknown adapter",
        ),
        (
            json!({"operation":"breakpoints","file":"nope.py","lines":[1]}),
            "not a file",
        ),
        (
            json!({"operation":"breakpoints","file":"a.py","lines":[0]}),
            "1-based",
        ),
        (json!({"operation":"breakpoints","file":"a.py"}), "lines"),
        (json!({"operation":"fly"}), "operation"),
        (json!({"operation":"status","bogus":1}), "bogus"),
        (json!({"operation":"variables"}), "reference"),
        (
            json!({"operation":"evaluate","expression":" "}),
            "expression",
        ),
        (json!({"operation":"attach"}), "port"),
        (json!({"operation":"attach","pid":1}), "adapter"),
    ];
    for (args, needle) in cases {
        let err = fx.err(args.clone()).await;
        assert!(
            matches!(err, ToolError::InvalidArguments { .. }),
            "{args}: {err}"
        );
        assert!(err.to_string().contains(needle), "{args}: {err}");
    }
    for op in [
        "stack",
        "scopes",
        "continue",
        "step_over",
        "pause",
        "threads",
        "evaluate",
    ] {
        let err = fx.err(json!({"operation": op, "expression": "1"})).await;
        assert!(matches!(err, ToolError::Rejected(_)), "{op}: {err}");
        assert!(err.to_string().contains("no debug session"), "{op}: {err}");
    }
    let out = fx.ok(json!({"operation":"terminate"})).await;
    assert!(out.text.contains("no debug session"), "{}", out.text);
    let out = fx.ok(json!({"operation":"output"})).await;
    assert!(out.text.contains("no output"), "{}", out.text);
    // No marker: the launch says which half is missing.
    if has_debugpy() {
        let err = fx.err(json!({"operation":"launch","program":"a.py"})).await;
        assert!(matches!(err, ToolError::NotAvailable(_)), "{err}");
        assert!(err.to_string().contains("missing root marker"), "{err}");
        assert!(err.to_string().contains("pyproject.toml"), "{err}");
        assert!(
            err.to_string().contains("up to the workspace root"),
            "{err}"
        );
        // attach resolves its adapter the same way, and says the same about the marker.
        let err = fx.err(json!({"operation":"attach","port":9})).await;
        assert!(matches!(err, ToolError::NotAvailable(_)), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("missing root marker"), "{msg}");
        assert!(msg.contains("no folder of the workspace"), "{msg}");
        assert!(msg.contains("[debug.adapters.debugpy].markers"), "{msg}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_fails_at_once_reports_its_exit_and_output() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("pyproject.toml", "");
    fx.write(
        "bad.py",
        "import sys\nprint('bye', file=sys.stderr)\nsys.exit(0)\n",
    );
    let out = fx
        .ok(json!({"operation":"launch","program":"bad.py"}))
        .await;
    let s = structured(&out);
    assert_eq!(s["state"], "terminated");
    assert_eq!(s["exit_code"], 0);
    assert!(out.text.contains("bye"), "{}", out.text);
    // An ended session does not block the next launch.
    let out = fx
        .ok(json!({"operation":"launch","program":"bad.py"}))
        .await;
    assert_eq!(structured(&out)["state"], "terminated");
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_the_run_kills_adapter_and_debuggee() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("pyproject.toml", "");
    fx.write("spin.py", LOOP);
    fx.ok(json!({"operation":"launch","program":"spin.py","timeout_seconds":1}))
        .await;
    let (adapter, debuggee) = pids(&fx).await;
    fx.run.close().await;
    assert!(gone(adapter).await, "adapter survived run close");
    assert!(gone(debuggee).await, "debuggee survived run close");
}

#[tokio::test(flavor = "multi_thread")]
async fn registration_tier_and_surfaces() {
    let fx = Fixture::new("");
    let full = fx.registry.list(Surface::FULL);
    let info = full.iter().find(|t| t.name == "debug").unwrap();
    assert_eq!(info.tier, tools_core::Tier::Exec);
    assert!(!info.parallel_safe);
    assert!(info.input_schema["properties"]["operation"].is_object());
    assert!(
        fx.registry
            .list(Surface::PLAN)
            .iter()
            .all(|t| t.name != "debug")
    );
    let err = fx
        .registry
        .call(Surface::PLAN, "debug", json!({"operation":"status"}))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::UnknownTool { .. }), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let run = tools_core::Run::new(tools_core::RunOptions {
        root: dir.path().into(),
        conversation_id: "off".into(),
        config: tools_core::Config::parse("[debug]\nenabled = false\n").unwrap(),
        trusted: false,
    })
    .unwrap();
    assert!(tools_debug::family(&run).unwrap().is_none());
    let bad = tools_core::Run::new(tools_core::RunOptions {
        root: dir.path().into(),
        conversation_id: "bad".into(),
        config: tools_core::Config::parse("[debug.adapters.gdb]\ncommand = [\"gdb\"]\n").unwrap(),
        trusted: false,
    })
    .unwrap();
    let err = tools_debug::family(&bad).err().unwrap();
    assert!(err.to_string().contains("unknown adapter"), "{err}");
}
