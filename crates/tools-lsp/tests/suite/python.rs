//! Python through pyright and pylsp: every action each supports, on a small multi-file
//! project.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

const UTIL: &str = "def add(a: int, b: int) -> int:\n    \"\"\"Add two numbers.\"\"\"\n    return a + b\n\n\nclass Greeter:\n    def greet(self, name: str) -> str:\n        return 'hi ' + name\n";
const MAIN: &str = "from pkg.util import add, Greeter\n\ntotal = add(1, 2)\nprint(add(total, 3))\ntotal = total + add(total, 1)\ns = \"héllo😀 wörld\"; n = add(4, 5)\ng = Greeter()\n";

fn project(server: &str) -> Project {
    Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
            ),
            ("pkg/__init__.py", ""),
            ("pkg/util.py", UTIL),
            ("main.py", MAIN),
        ],
        &format!("[lsp.servers.python]\ncommand = {server}\n"),
    )
}

async fn common_navigation(p: &Project) {
    // definition across files
    let out = p
        .ok(json!({"action": "definition", "file": "main.py", "line": 3, "symbol": "add"}))
        .await;
    has(&out, "pkg/util.py:1:5");
    has(&out, "def add(a: int, b: int) -> int:");
    // non-ASCII text before the symbol on the line (UTF-16 positions)
    let out = p
        .ok(json!({"action": "definition", "file": "main.py", "line": 6, "symbol": "add"}))
        .await;
    has(&out, "pkg/util.py:1:5");
    // ambiguous symbol: an error listing the occurrences, then `occurrence` picks one
    let err = p
        .err(json!({"action": "hover", "file": "main.py", "line": 5, "symbol": "total"}))
        .await
        .to_string();
    has(&err, "occurs 3 times");
    has(&err, "occurrence 2: column 9");
    let out = p
        .ok(json!({"action": "definition", "file": "main.py", "line": 5, "symbol": "add", "occurrence": 1}))
        .await;
    has(&out, "pkg/util.py:1:5");
    // a symbol not on the line shows the real line
    let err = p
        .err(json!({"action": "definition", "file": "main.py", "line": 3, "symbol": "subtract"}))
        .await
        .to_string();
    has(&err, "`total = add(1, 2)`");
    // missing symbol is an error, never a guess
    let err = p
        .err(json!({"action": "definition", "file": "main.py", "line": 3}))
        .await
        .to_string();
    has(&err, "symbol");
    // references: declaration, import and three calls... capped list with lines
    let out = p
        .ok(json!({"action": "references", "file": "pkg/util.py", "line": 1, "symbol": "add"}))
        .await;
    has(&out, "main.py:3:9");
    has(&out, "main.py:4:7");
    has(&out, "pkg/util.py:1:5");
    // hover: signature and doc comment
    let out = p
        .ok(json!({"action": "hover", "file": "main.py", "line": 3, "symbol": "add"}))
        .await;
    has(&out, "Add two numbers.");
    // document symbols with kinds and nesting
    let out = p
        .ok(json!({"action": "symbols", "file": "pkg/util.py"}))
        .await;
    has(&out, "function add");
    has(&out, "class Greeter");
    has(&out, "greet");
}

async fn edit_between_queries(p: &Project) {
    // The file changes on disk between two queries: the second answer reflects it.
    p.write("pkg/util.py", &format!("# moved\n\n\n{UTIL}"));
    let out = p
        .ok(json!({"action": "definition", "file": "main.py", "line": 3, "symbol": "add"}))
        .await;
    has(&out, "pkg/util.py:4:5");
    // Diagnostics for a file with an undefined name.
    p.write("bad.py", "import os\n\nprint(undefined_thing)\n");
    let out = p
        .ok(json!({"action": "diagnostics", "file": "bad.py"}))
        .await;
    has(&out, "bad.py:3:7");
    has(&out, "undefined_thing");
    // Fix it on disk: the next diagnostics call sees the fix.
    p.write("bad.py", "undefined_thing = 1\nprint(undefined_thing)\n");
    let out = p
        .ok(json!({"action": "diagnostics", "file": "bad.py"}))
        .await;
    assert!(
        !out.contains("undefined_thing\" is not defined") && !out.contains("undefined name"),
        "{out}"
    );
}

#[tokio::test]
async fn pyright_answers_every_action() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = project("[\"pyright-langserver\", \"--stdio\"]");
    common_navigation(&p).await;
    // type definition of a variable holding a class instance
    let out = p
        .ok(json!({"action": "type_definition", "file": "main.py", "line": 7, "symbol": "g"}))
        .await;
    has(&out, "pkg/util.py:6:7");
    // workspace symbols
    let out = p.ok(json!({"action": "symbols", "query": "Greeter"})).await;
    has(&out, "class Greeter");
    // code actions: answered (pyright may offer none here)
    let out = p
        .ok(json!({"action": "code_actions", "file": "main.py", "line": 3, "symbol": "add"}))
        .await;
    assert!(out.contains("code action"), "{out}");
    // implementation: pyright has none, and says so
    match p
        .lsp(json!({"action": "implementation", "file": "main.py", "line": 3, "symbol": "add"}))
        .await
    {
        Ok(o) => assert!(o.text.contains("implementation"), "{}", o.text),
        Err(e) => has(&e.to_string(), "does not support implementation"),
    }
    edit_between_queries(&p).await;
    let status = p.ok(json!({"action": "status"})).await;
    has(&status, "python: running pyright-langserver for root .");
    p.close_and_check().await;
}

#[tokio::test]
async fn pylsp_answers_what_it_supports() {
    if require_binary("pylsp", "pylsp").is_none() {
        return;
    }
    let p = project("[\"pylsp\"]");
    common_navigation(&p).await;
    // pylsp has no workspace/symbol: a clear "not supported", not an empty list
    let err = p
        .err(json!({"action": "symbols", "query": "Greeter"}))
        .await
        .to_string();
    has(&err, "does not support workspace symbol search");
    edit_between_queries(&p).await;
    p.close_and_check().await;
}
