//! `edit` with `symbol` and `body` through the real registry, the symbols read by the
//! bundled grammars: a body that opens with the symbol's own declaration (as agents used to
//! a "body" with its signature pass it) replaces the whole definition and says so, never
//! nesting the definition inside itself; a body that only calls the symbol is a body.

use std::sync::Arc;

use serde_json::json;

use super::Ws;

/// A workspace whose symbols the bundled grammars read (no language server runs).
fn with_grammars(files: &[(&str, &str)]) -> Ws {
    let ws = Ws::new();
    tools_core::SymbolSources::for_run(&ws.run).register(Arc::new(tools_ast::GrammarSymbols));
    for (rel, text) in files {
        std::fs::write(ws.path(rel), text).unwrap();
    }
    ws
}

const TAKEN_WHOLE: &str = " — the `body` given opens with its own declaration, so it was taken as the whole \
     definition (as `replace` takes it), not written inside the old one.";

const CALC: &str = r#"import functools


@functools.cache
def total(items):
    """Sum of the items."""
    return sum(items)


def count(items):
    return len(items)


class Cart:
    async def price(self, rate):
        return rate * 2
"#;

#[tokio::test]
async fn a_python_body_with_its_own_def_replaces_the_definition_and_keeps_the_decorator() {
    let ws = with_grammars(&[("calc.py", CALC)]);
    let out = ws
        .ok(
            "edit",
            json!({"path": "calc.py", "symbol": "total",
                   "body": "def total(items, start=0):\n    return start + sum(items)\n"}),
        )
        .await;
    assert_eq!(
        out.text,
        format!(
            "Edited calc.py:5-6: replaced `total` (function, found by tree-sitter python){TAKEN_WHOLE}"
        )
    );
    assert_eq!(out.structured.as_ref().unwrap()["part"], "replace");
    let after = CALC.replace(
        "def total(items):\n    \"\"\"Sum of the items.\"\"\"\n    return sum(items)\n",
        "def total(items, start=0):\n    return start + sum(items)\n",
    );
    assert_eq!(std::fs::read_to_string(ws.path("calc.py")).unwrap(), after);

    // A method's whole `async def`, indented as the agent pleased: re-indented in place.
    let out = ws
        .ok(
            "edit",
            json!({"path": "calc.py", "symbol": "Cart.price",
                   "body": "async def price(self, rate, tax=0):\n    return rate * 2 + tax"}),
        )
        .await;
    assert_eq!(
        out.text,
        format!(
            "Edited calc.py:14-15: replaced `Cart.price` (method, found by tree-sitter python){TAKEN_WHOLE}"
        )
    );
    let after = after.replace(
        "    async def price(self, rate):\n        return rate * 2\n",
        "    async def price(self, rate, tax=0):\n        return rate * 2 + tax\n",
    );
    assert_eq!(std::fs::read_to_string(ws.path("calc.py")).unwrap(), after);

    // A body that only calls the function (recursion) is a body.
    let out = ws
        .ok(
            "edit",
            json!({"path": "calc.py", "symbol": "count",
                   "body": "if not items:\n    return 0\nreturn 1 + count(items[1:])"}),
        )
        .await;
    assert_eq!(
        out.text,
        "Edited calc.py:10-12: replaced the body of `count` (function, found by tree-sitter python)."
    );
    let after = after.replace(
        "def count(items):\n    return len(items)\n",
        "def count(items):\n    if not items:\n        return 0\n    return 1 + count(items[1:])\n",
    );
    assert_eq!(std::fs::read_to_string(ws.path("calc.py")).unwrap(), after);
}

const POINT: &str = "/// A point.
pub struct Point {
    pub x: i32,
}

impl Point {
    /// Its norm.
    #[inline]
    pub fn norm(&self) -> i32 {
        self.x
    }
}

fn fact(n: u64) -> u64 {
    1
}
";

#[tokio::test]
async fn a_rust_body_with_its_own_fn_replaces_the_definition_and_keeps_doc_and_attributes() {
    let ws = with_grammars(&[("point.rs", POINT)]);
    let out = ws
        .ok(
            "edit",
            json!({"path": "point.rs", "symbol": "impl Point.norm",
                   "body": "pub fn norm(&self) -> i32 {\n    self.x.abs()\n}"}),
        )
        .await;
    assert_eq!(
        out.text,
        format!(
            "Edited point.rs:9-11: replaced `impl Point.norm` (method, found by tree-sitter rust){TAKEN_WHOLE}"
        )
    );
    let after = POINT.replace("        self.x\n", "        self.x.abs()\n");
    assert_eq!(std::fs::read_to_string(ws.path("point.rs")).unwrap(), after);

    // With its own doc comment above the `fn`, the text replaces the old one's too.
    let out = ws
        .ok(
            "edit",
            json!({"path": "point.rs", "symbol": "impl Point.norm",
                   "body": "/// Its length.\nfn norm(&self) -> i32 {\n    self.x.abs()\n}"}),
        )
        .await;
    assert_eq!(
        out.text,
        format!(
            "Edited point.rs:7-10: replaced `impl Point.norm` (method, found by tree-sitter rust){TAKEN_WHOLE}"
        )
    );
    let after = after.replace(
        "    /// Its norm.\n    #[inline]\n    pub fn norm",
        "    /// Its length.\n    fn norm",
    );
    assert_eq!(std::fs::read_to_string(ws.path("point.rs")).unwrap(), after);

    // A recursive call is a body.
    let out = ws
        .ok(
            "edit",
            json!({"path": "point.rs", "symbol": "fact",
                   "body": "if n == 0 { 1 } else { n * fact(n - 1) }"}),
        )
        .await;
    assert_eq!(
        out.text,
        "Edited point.rs:13-15: replaced the body of `fact` (function, found by tree-sitter rust)."
    );
    let after = after.replace(
        "fn fact(n: u64) -> u64 {\n    1\n}",
        "fn fact(n: u64) -> u64 {\n    if n == 0 { 1 } else { n * fact(n - 1) }\n}",
    );
    assert_eq!(std::fs::read_to_string(ws.path("point.rs")).unwrap(), after);
}

#[tokio::test]
async fn with_rust_analyzer_reading_the_symbols_a_body_with_its_fn_replaces_the_definition() {
    if tools_core::testing::require_binary("rust-analyzer", "rust-analyzer").is_none() {
        return;
    }
    let ws = Ws::new();
    std::fs::create_dir_all(ws.path("src")).unwrap();
    std::fs::write(
        ws.path("Cargo.toml"),
        "[package]\nname = \"point\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(ws.path("src/lib.rs"), POINT).unwrap();
    // The language family gives the run its servers' document symbols.
    let _lsp = tools_lsp::family(&ws.run).unwrap();
    let out = ws
        .ok(
            "edit",
            json!({"path": "src/lib.rs", "symbol": "impl Point.norm",
                   "body": "pub fn norm(&self) -> i32 {\n    self.x.abs()\n}"}),
        )
        .await;
    assert_eq!(
        out.text,
        format!(
            "Edited src/lib.rs:9-11: replaced `impl Point.norm` (method, found by rust-analyzer){TAKEN_WHOLE}"
        )
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("src/lib.rs")).unwrap(),
        POINT.replace("        self.x\n", "        self.x.abs()\n")
    );
    ws.run.close().await;
}
