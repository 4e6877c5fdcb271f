//! JavaScript cells on the real Node.js: one persistent vm context.

use serde_json::json;

use super::common::*;

#[tokio::test]
async fn state_console_and_last_expression() {
    if !node() {
        return;
    }
    let e = env();
    let o = e
        .js("var a = 40\nlet b = 2\nfunction add(x, y) { return x + y }")
        .await;
    assert_eq!(status(&o), "ok");
    let o = e
        .js("console.log('sum', add(a, b))\nconsole.error('warn')\nconst o = {a, b}\no")
        .await;
    assert_eq!(o.text, "sum 42\nwarn\n{ a: 40, b: 2 }");
    let o = e
        .js("process.stdout.write('raw\\n'); [1, 2, 3].map((x) => x * b)")
        .await;
    assert_eq!(o.text, "raw\n[ 2, 4, 6 ]");
    // Top-level await; its declarations persist.
    let o = e
        .js("const v = await new Promise((r) => setTimeout(() => r(7), 50))\nv * 2")
        .await;
    assert_eq!(o.text, "14");
    assert_eq!(e.js("v + a").await.text, "47");
    // A promise as the last value is awaited.
    assert_eq!(e.js("Promise.resolve('done')").await.text, "'done'");
    // Child processes writing to fd 1 are captured.
    let o = e
        .js("require('child_process').spawnSync('echo', ['child'], {stdio: 'inherit'}); 'after'")
        .await;
    assert_eq!(o.text, "child\n'after'");
}

#[tokio::test]
async fn require_resolves_from_the_workspace_root() {
    if !node() {
        return;
    }
    let e = env();
    std::fs::create_dir_all(e.dir.path().join("node_modules/evalpkg")).unwrap();
    std::fs::write(
        e.dir.path().join("node_modules/evalpkg/index.js"),
        "module.exports = { hello: () => 'from workspace' };\n",
    )
    .unwrap();
    std::fs::write(e.dir.path().join("local.js"), "module.exports = 5;\n").unwrap();
    assert_eq!(
        e.js("require('evalpkg').hello()").await.text,
        "'from workspace'"
    );
    assert_eq!(e.js("require('./local.js') + 1").await.text, "6");
}

#[tokio::test]
async fn errors_interrupts_and_crashes() {
    if !node() {
        return;
    }
    let e = env_with("[eval]\nidle_timeout_secs = 0.5\ninterrupt_grace_secs = 2\n");
    e.js("globalThis.keep = 'kept'").await;
    let o = e.js("console.log('before')\nnull.x").await;
    assert_eq!(status(&o), "error");
    assert!(
        o.text
            .starts_with("before\nTypeError: Cannot read properties of null"),
        "{}",
        o.text
    );
    assert!(o.text.contains("<cell"), "{}", o.text);
    let o = e.js("throw 'plain'").await;
    assert!(o.text.contains("Uncaught 'plain'"), "{}", o.text);
    // A synchronous infinite loop is interrupted and the context survives.
    let o = e.js("console.log('spinning'); while (true) {}").await;
    assert_eq!(status(&o), "interrupted", "{}", o.text);
    assert!(o.text.starts_with("spinning\n"), "{}", o.text);
    assert!(o.text.contains("state survived"), "{}", o.text);
    // So is a cell that awaits something that never comes.
    let o = e.js("await new Promise(() => {})").await;
    assert_eq!(status(&o), "interrupted", "{}", o.text);
    assert_eq!(e.js("keep").await.text, "'kept'");
    // process.exit kills the kernel: a clear error, and a fresh kernel next time.
    let err = e
        .call(json!({"code": "console.log('bye')\nprocess.exit(3)", "language": "javascript", "description": "exit the node kernel on purpose"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("javascript kernel exited with code 3"),
        "{err}"
    );
    assert!(err.contains("output before it died:\nbye"), "{err}");
    let o = e.js("typeof keep").await;
    assert!(
        o.text.contains("a fresh javascript kernel was started"),
        "{}",
        o.text
    );
    assert!(o.text.ends_with("'undefined'"), "{}", o.text);
}

#[tokio::test]
async fn big_output_is_bounded_and_reset_works() {
    if !node() {
        return;
    }
    let e = env();
    let o = e
        .js("const chunk = 'y'.repeat(1 << 20)\nfor (let i = 0; i < 200; i++) process.stdout.write(chunk)\nconsole.log('\\nEND')")
        .await;
    assert!(o.text.len() < 25_000, "{}", o.text.len());
    assert!(o.text.trim_end().ends_with("END"));
    assert!(
        o.structured.as_ref().unwrap()["cut_chars"]
            .as_u64()
            .unwrap()
            > 200_000_000
    );
    e.js("globalThis.z = 1").await;
    let o = e
        .call(json!({"code": "typeof z", "language": "javascript", "description": "check the reset cleared the context", "reset": true}))
        .await
        .unwrap();
    assert_eq!(
        o.text,
        "[reset: a clean javascript kernel was started]\n'undefined'"
    );
}
