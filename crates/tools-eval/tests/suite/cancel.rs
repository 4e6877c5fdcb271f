//! Cancellation and abandoned cells: the next cell always gets its own output, promptly,
//! and the kernel keeps its state; output that is not Unicode never breaks the kernel.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_core::{CallError, CallOptions, Surface, ToolOutput};

use super::common::*;

const DESC: &str = "run a small python test cell";

/// Starts an eval call with its own cancellation token, cancels it once `started` has been
/// printed by the cell, and returns what the call answered.
async fn cancel_when_started(e: &Env, code: &str, language: &str) -> Result<ToolOutput, CallError> {
    cancel_when(e, code, language, false).await
}

/// As [`cancel_when_started`], and once the cell's bridged `echo` call is under way too (a
/// cancel that came first would stop the cell before it makes the call).
async fn cancel_mid_bridge(e: &Env, code: &str, language: &str) -> Result<ToolOutput, CallError> {
    cancel_when(e, code, language, true).await
}

async fn cancel_when(
    e: &Env,
    code: &str,
    language: &str,
    after_bridge_call: bool,
) -> Result<ToolOutput, CallError> {
    let cancel = CancellationToken::new();
    let opts = CallOptions {
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let marker = e.dir.path().join("started");
    let call = e.reg.call_with(
        Surface::FULL,
        "eval",
        json!({"code": code, "language": language, "description": DESC}),
        opts,
    );
    let canceller = async {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !marker.exists()
            || (after_bridge_call && e.echo_calls.load(std::sync::atomic::Ordering::SeqCst) == 0)
        {
            assert!(Instant::now() < deadline, "the cell never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.cancel();
    };
    let (out, ()) = tokio::join!(call, canceller);
    out
}

#[tokio::test]
async fn cancel_mid_cell_then_the_next_cell_returns_its_own_output() {
    if !python() {
        return;
    }
    let e = env();
    e.py("kept = 41").await;
    let out = cancel_when_started(
        &e,
        "open('started', 'w').close()\nimport time\nfor i in range(600):\n    time.sleep(0.05)\nprint('the first cell finished')",
        "python",
    )
    .await
    .expect("a cancelled cell is answered, not failed");
    assert_eq!(status(&out), "cancelled", "{}", out.text);
    assert!(
        out.text.contains("the kernel's state survived"),
        "{}",
        out.text
    );
    let started = Instant::now();
    let next = e.py("print('second')\nkept + 1").await;
    assert_eq!(next.text, "second\n42");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the next cell waited {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_dropped_call_is_settled_before_the_next_cell() {
    if !python() {
        return;
    }
    let e = env();
    let marker = e.dir.path().join("started");
    let call = e.call(json!({
        "code": "kept = 'state'\nopen('started', 'w').close()\nimport time\nwhile True:\n    print('old cell output')\n    time.sleep(0.01)",
        "description": DESC,
    }));
    // Dropping the call future mid-cell (a client that went away without cancelling).
    let waited = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::pin!(call);
        loop {
            tokio::select! {
                _ = &mut call => panic!("the endless cell finished"),
                _ = tokio::time::sleep(Duration::from_millis(20)) => {
                    if marker.exists() { break; }
                }
            }
        }
    })
    .await;
    assert!(waited.is_ok(), "the cell never started");
    let next = e.py("print('new cell')\nkept").await;
    assert_eq!(next.text, "new cell\n'state'", "{}", next.text);
    assert_eq!(status(&next), "ok");
}

#[tokio::test]
async fn cancel_mid_bridge_answers_the_call_as_cancelled_inside_the_cell() {
    if !python() {
        return;
    }
    let e = env();
    let out = cancel_mid_bridge(
        &e,
        "open('started', 'w').close()\ntry:\n    tool('echo', {'sleep_ms': 60000})\nexcept ToolError as err:\n    seen = err.kind\n    import time\n    time.sleep(60)",
        "python",
    )
    .await
    .expect("a cancelled cell is answered, not failed");
    assert_eq!(status(&out), "cancelled", "{}", out.text);
    let started = Instant::now();
    let next = e.py("seen").await;
    assert_eq!(next.text, "'cancelled'");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The bridge still works afterwards.
    let again = e.py("print(tool('echo', {'n': 1}))").await;
    assert!(again.text.contains("\"n\":1"), "{}", again.text);
}

#[tokio::test]
async fn javascript_cancel_mid_bridge_keeps_the_kernel() {
    if !node() {
        return;
    }
    let e = env();
    e.js("globalThis.kept = 7").await;
    let out = cancel_mid_bridge(
        &e,
        "require('fs').writeFileSync('started', '')\ntry { await tool('echo', {sleep_ms: 60000}) } catch (err) { globalThis.seen = err.kind }\nawait new Promise(r => setTimeout(r, 60000))",
        "javascript",
    )
    .await
    .expect("a cancelled cell is answered, not failed");
    assert_eq!(status(&out), "cancelled", "{}", out.text);
    let next = e.js("[seen, kept]").await;
    assert_eq!(next.text, "[ 'cancelled', 7 ]");
}

#[tokio::test]
async fn output_that_is_not_unicode_keeps_the_kernel_and_its_variables() {
    if !python() || !node() {
        return;
    }
    let e = env();
    e.py("kept = [1, 2]").await;
    let out = e
        .py("import os, sys\nname = os.fsdecode(b'caf\\xe9-\\xff.txt')\nprint(name)\nprint('lone \\ud800 half')\nsys.stdout.buffer.write(b'raw \\xff\\xfe bytes\\n')\nos.write(1, b'fd \\x80\\x81\\n')\nname")
        .await;
    assert_eq!(status(&out), "ok", "{}", out.text);
    assert!(out.text.contains("caf\\xe9-\\xff.txt"), "{}", out.text);
    assert!(out.text.contains("lone \\ud800 half"), "{}", out.text);
    assert!(
        out.text.contains("raw \u{fffd}\u{fffd} bytes"),
        "{}",
        out.text
    );
    assert!(out.text.contains("fd \u{fffd}\u{fffd}"), "{}", out.text);
    let pid_before = kernel_pid(&e.py("import os\nos.getpid()").await);
    let next = e.py("kept").await;
    assert_eq!(next.text, "[1, 2]");
    assert_eq!(kernel_pid(&next), pid_before, "the kernel was restarted");
    let js = e
        .js("const half = '\\ud800'\nconsole.log('js ' + half + ' end')\nhalf.length")
        .await;
    assert_eq!(status(&js), "ok", "{}", js.text);
    assert!(js.text.contains("js \\ud800 end"), "{}", js.text);
}

fn kernel_pid(o: &ToolOutput) -> Value {
    o.structured.as_ref().unwrap()["kernel"]["pid"].clone()
}

/// A cell that leaves two detached grandchildren: one double-forked into a process group of
/// its own (same session), one double-forked after `setsid` (a session of its own).
const DETACH: &str = r#"import os, posix, time
def detach(new_session, path):
    pid = os.fork()
    if pid == 0:
        if new_session:
            os.setsid()
        else:
            os.setpgid(0, 0)
        if os.fork() == 0:
            with open(path + '.tmp', 'w') as f:
                f.write(str(os.getpid()))
            os.rename(path + '.tmp', path)
            time.sleep(600)
        posix._exit(0)
    os.waitpid(pid, 0)
detach(True, 'setsid.pid')
detach(False, 'group.pid')
"#;

#[tokio::test]
async fn detached_grandchildren_of_a_cell_end_with_the_run() {
    if !python() {
        return;
    }
    // The binary adopts orphans; so does this test process, for the `setsid` one.
    tools_core::sweep::adopt_orphans().unwrap();
    let e = env();
    e.py(DETACH).await;
    let mut pids = Vec::new();
    for name in ["setsid.pid", "group.pid"] {
        let path = e.dir.path().join(name);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !path.exists() {
            assert!(Instant::now() < deadline, "{name} never appeared");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pid: i32 = std::fs::read_to_string(&path)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(process_running(pid));
        pids.push(pid);
    }
    e.run.close().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| process_running(*p)) {
        let alive: Vec<&i32> = pids.iter().filter(|p| process_running(**p)).collect();
        assert!(
            Instant::now() < deadline,
            "detached grandchildren outlived the run: {alive:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
