//! The tool() bridge: calls through the registry's guard chain, from Python and JavaScript.

use std::sync::atomic::Ordering;

use serde_json::json;
use tools_core::Surface;

use super::common::*;

#[tokio::test]
async fn python_cells_call_other_tools_through_the_registry() {
    if !python() {
        return;
    }
    let e = env();
    let o = e
        .py("r = tool('echo', {'msg': 'hi'})\nprint(r)\nr.structured")
        .await;
    assert_eq!(o.text, "echo: {\"msg\":\"hi\"}\n{'echoed': {'msg': 'hi'}}");
    assert_eq!(
        o.structured.as_ref().unwrap()["bridge_calls"],
        json!([{"tool": "echo", "ok": true}])
    );
    // Keyword arguments work too.
    assert_eq!(
        e.py("str(tool('echo', n=1))").await.text,
        "'echo: {\"n\":1}'"
    );
    // A failing tool raises ToolError in the cell, with its kind.
    let o = e
        .py("try:\n    tool('echo', {'fail': 'nope'})\nexcept ToolError as err:\n    print(err.kind, '|', err)")
        .await;
    assert_eq!(o.text, "rejected | rejected: nope\n");
    // The approver applies to bridged calls exactly as to the model's own.
    let o = e
        .py("try:\n    tool('scribble', {})\nexcept ToolError as err:\n    print(err)")
        .await;
    assert!(o.text.contains("did not approve `scribble`"), "{}", o.text);
    // A tool that does not exist on this surface is refused.
    let o = e
        .py("try:\n    tool('no_such_tool', {})\nexcept ToolError as err:\n    print(err.kind, '|', err)")
        .await;
    assert!(o.text.starts_with("not_available | "), "{}", o.text);
    assert!(o.text.contains("unknown tool `no_such_tool`"), "{}", o.text);
    // Re-entering eval from a cell is refused clearly instead of deadlocking.
    let o = e
        .py("try:\n    tool('eval', {'code': '1', 'description': 'nested cell that must be refused'})\nexcept ToolError as err:\n    print(err)")
        .await;
    assert!(
        o.text
            .contains("`eval` is already running further up this call"),
        "{}",
        o.text
    );
    // Bad arguments fail in the cell, not in the host.
    let o = e.py("tool('echo', {'x': object()})").await;
    assert!(o.text.contains("JSON-serialisable"), "{}", o.text);
    let o = e.py("tool('echo', [1, 2])").await;
    assert!(o.text.contains("args must be a dict"), "{}", o.text);
}

#[tokio::test]
async fn a_pending_bridge_call_pauses_the_idle_budget() {
    if !python() {
        return;
    }
    let e = env_with("[eval]\nidle_timeout_secs = 0.4\ninterrupt_grace_secs = 0.3\n");
    let o = e
        .py("print(tool('echo', {'sleep_ms': 1500, 'msg': 'slow'}))\n'finished'")
        .await;
    assert_eq!(status(&o), "ok", "{}", o.text);
    assert!(o.text.ends_with("'finished'"), "{}", o.text);
    assert_eq!(e.echo_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn bridged_calls_keep_the_calling_surface() {
    if !python() {
        return;
    }
    let e = env();
    // The invoker the cell gets is the caller's: a full-surface cell sees write tools.
    let o = e
        .py("try:\n    tool('scribble', {})\nexcept ToolError as err:\n    print(err.kind)")
        .await;
    assert_eq!(o.text, "rejected\n");
    // eval itself is exec tier: a plan surface cannot even see it.
    let err = e
        .reg
        .call(
            Surface::PLAN,
            "eval",
            json!({"code": "1", "description": "should never run on plan"}),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown tool `eval`"), "{err}");
}

#[tokio::test]
async fn javascript_cells_await_the_bridge() {
    if !node() {
        return;
    }
    let e = env();
    let o = e.js("const r = await tool('echo', {msg: 'js'})\nr").await;
    assert_eq!(o.text, "'echo: {\"msg\":\"js\"}'");
    let o = e
        .js("const full = await tool('echo', {a: 1}, {full: true})\nfull.structured")
        .await;
    assert_eq!(o.text, "{ echoed: { a: 1 } }");
    let o = e
        .js("try { await tool('echo', {fail: 'no js'}) } catch (err) { console.log(err instanceof ToolError, err.kind, err.message) }")
        .await;
    assert_eq!(o.text, "true rejected rejected: no js\n");
    // Several calls at once run concurrently through the registry.
    let o = e
        .js("const all = await Promise.all([1, 2, 3].map((i) => tool('echo', {i, sleep_ms: 300})))\nall.length")
        .await;
    assert_eq!(o.text, "3");
    assert_eq!(o.structured.as_ref().unwrap()["bridge_calls_total"], 3);
}
