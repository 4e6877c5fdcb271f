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
    assert!(o.text.len() <= 4096, "{}", o.text.len());
    assert!(
        o.text
            .contains("characters of output not shown; print a slice"),
        "{}",
        o.text
    );
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

/// A workspace with an ES module, an ES-only package, a package with separate `import` and
/// `require` entry points, and a CommonJS file.
fn write_module_workspace(root: &std::path::Path) {
    let files = [
        (
            "lib/x.mjs",
            "export const answer = 42;\nexport default function hi() { return 'hi'; }\n",
        ),
        (
            "node_modules/esmpkg/package.json",
            r#"{"name": "esmpkg", "type": "module", "exports": "./index.js"}"#,
        ),
        (
            "node_modules/esmpkg/index.js",
            "export const where = 'esm package';\nconsole.log('esmpkg loaded');\n",
        ),
        (
            "node_modules/dual/package.json",
            r#"{"name": "dual", "exports": {"import": "./i.mjs", "require": "./r.cjs"}}"#,
        ),
        ("node_modules/dual/i.mjs", "export const kind = 'import';\n"),
        ("node_modules/dual/r.cjs", "exports.kind = 'require';\n"),
        ("lib/old.cjs", "module.exports = { twice: (x) => 2 * x };\n"),
    ];
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[tokio::test]
async fn es_modules_and_workspace_packages_import() {
    if !node() {
        return;
    }
    let e = env();
    write_module_workspace(e.dir.path());
    // Dynamic import of a relative ES module (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING before).
    let o = e
        .js("const m = await import('./lib/x.mjs');\n[m.answer, m.default()]")
        .await;
    assert_eq!(o.text, "[ 42, 'hi' ]");
    assert_eq!(status(&o), "ok");
    // A bare name from the workspace's node_modules, through its `import` condition; the
    // package's own output is the cell's, and no loader warning shows.
    let o = e
        .js("const {where} = await import('esmpkg')\nconst dual = await import('dual');\n[where, dual.kind]")
        .await;
    assert_eq!(o.text, "esmpkg loaded\n[ 'esm package', 'import' ]");
    // ES import statements, as people type them, bind names that persist.
    let o = e
        .js("import hi, {answer as a42} from './lib/x.mjs'\nimport * as pkg from 'esmpkg'\nimport {kind} from 'dual'\n`${hi()} ${a42} ${pkg.where} ${kind}`")
        .await;
    assert_eq!(o.text, "'hi 42 esm package import'");
    assert_eq!(
        e.js("[typeof hi, a42, kind]").await.text,
        "[ 'function', 42, 'import' ]"
    );
    // require still works, through the package's `require` condition.
    let o = e
        .js("const old = require('./lib/old.cjs');\n[old.twice(21), require('dual').kind]")
        .await;
    assert_eq!(o.text, "[ 42, 'require' ]");
    // A module that does not exist is the cell's error, not a broken kernel.
    let o = e.js("await import('./lib/missing.mjs')").await;
    assert_eq!(status(&o), "error");
    assert!(o.text.contains("Cannot find module"), "{}", o.text);
    assert!(o.text.contains("missing.mjs"), "{}", o.text);
    assert_eq!(e.js("a42 + 1").await.text, "43");
}

#[tokio::test]
async fn top_level_await_keeps_the_last_value_and_declarations() {
    if !node() {
        return;
    }
    let e = env();
    // All on one line, as the bug report typed it ("(no output)" before).
    let cell = "const f = async () => 1; const v = await f(); v + 1";
    assert_eq!(e.js(cell).await.text, "2");
    // The same cell runs again (its declarations are globals, not script bindings).
    assert_eq!(e.js(cell).await.text, "2");
    assert_eq!(e.js("v").await.text, "1");
    // Every kind of top-level declaration persists; the value is the last statement's,
    // even when it spans lines or ends with a comment.
    let o = e
        .js("class Box { constructor(x) { this.x = x } }\nfunction unbox(b) { return b.x }\nlet empty\nvar kept = await Promise.resolve(3)\nconst {p, q: [r]} = await Promise.resolve({p: 1, q: [2]});\nunbox(new Box(kept))\n  + p + r // six")
        .await;
    assert_eq!(o.text, "6");
    assert_eq!(
        e.js("[unbox(new Box(4)), empty, kept, p, r]").await.text,
        "[ 4, undefined, 3, 1, 2 ]"
    );
    // A cell whose last statement is not an expression shows nothing, as before.
    let o = e.js("const w = await Promise.resolve(9)").await;
    assert_eq!(o.text, "(no output)");
    assert_eq!(e.js("w").await.text, "9");
    // Loops with await, and an await cell whose value is a promise (it is awaited).
    let o = e
        .js("let total = 0\nfor await (const n of [Promise.resolve(1), 2]) total += n\ntotal")
        .await;
    assert_eq!(o.text, "3");
    // Errors point at the cell's own line.
    let o = e.js("await null\nconst t = 1\nundefined.x").await;
    assert_eq!(status(&o), "error");
    assert!(o.text.contains("<cell"), "{}", o.text);
    assert!(o.text.contains(">:3:"), "{}", o.text);
    assert!(!o.text.contains("__eval_async__"), "{}", o.text);
    let o = e.js("await 1\nlet = = 2").await;
    assert_eq!(status(&o), "error");
    assert!(o.text.starts_with("SyntaxError"), "{}", o.text);
    assert!(o.text.contains(">:2:"), "{}", o.text);
    // Plain cells keep script semantics: declarations persist.
    e.js("const plain = 5").await;
    assert_eq!(e.js("plain + (await Promise.resolve(1))").await.text, "6");
}

#[tokio::test]
async fn untrusted_runs_use_node_from_path_and_say_what_cells_may_import() {
    if !node() {
        return;
    }
    let e = env_untrusted();
    write_module_workspace(e.dir.path());
    // A node planted in the workspace is never the kernel.
    let planted = e.dir.path().join("node_modules/.bin/node");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    std::fs::write(&planted, "#!/bin/sh\necho planted > planted-ran\n").unwrap();
    tools_core::platform::make_executable(&planted).unwrap();
    let entries = e.reg.doctor().await;
    let js = entries
        .iter()
        .find(|d| d.resource == "javascript kernel")
        .unwrap();
    assert!(js.detail.contains("untrusted workspace"), "{js:?}");
    assert!(js.detail.contains("node_modules"), "{js:?}");
    let o = e
        .js("const {kind} = await import('dual');\n[kind, process.execPath.startsWith(process.cwd())]")
        .await;
    assert_eq!(o.text, "[ 'import', false ]");
    assert!(!e.dir.path().join("planted-ran").exists());
}

#[tokio::test]
async fn a_large_value_and_error_stay_within_the_answer_budget() {
    if !node() {
        return;
    }
    let e = env();
    let o = e
        .js("const rows = Array.from({length: 3000}, (_, i) => ({id: i, name: `row ${i}`, tags: ['a', 'b']}));\nconsole.log(JSON.stringify(rows));\n'v'.repeat(30000)")
        .await;
    assert!(o.text.len() <= 4096, "{} bytes", o.text.len());
    assert!(o.text.starts_with("[{\"id\":0"), "{}", o.text);
    assert!(
        o.text.contains("of output not shown; print a slice"),
        "{}",
        o.text
    );
    assert!(
        o.text.contains("of the value not shown; print a slice"),
        "{}",
        o.text
    );
    let s = o.structured.as_ref().unwrap();
    assert!(serde_json::to_string(s).unwrap().len() <= 8192);
    let o = e
        .js("throw new Error('bad row: ' + 'w'.repeat(40000))")
        .await;
    assert_eq!(status(&o), "error");
    assert!(o.text.len() <= 4096, "{} bytes", o.text.len());
    assert!(o.text.starts_with("Error: bad row"), "{}", o.text);
}
