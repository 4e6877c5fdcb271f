//! The answer budget of `lsp` on real servers: the outline of a large module lists its
//! declarations (not the locals in its functions) within about 4 KB and pages through the
//! rest by `offset`; `kinds` and `depth` narrow or widen it; a much-used function's
//! references page the same way; `[lsp] answer_bytes` sets the budget; hovers come back
//! with HTML entities decoded and rust-analyzer's noise sections dropped.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use tools_core::testing::require_binary;

use super::{Project, has};

const PYRIGHT: &str = "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
const CATALOG: &str = "src/shapes/catalog.py";
const CLASSES: usize = 40;

/// A module shaped like real code: classes with fields and methods whose bodies hold
/// locals, module constants and functions, and one function called from many places.
fn catalog() -> String {
    let mut s = String::from("\"\"\"A catalog of parts.\"\"\"\n\nLIMIT = 100\n\n\n");
    s.push_str("def weigh(n: int) -> int:\n    \"\"\"The weight of `n` parts.\"\"\"\n    total = n * 2\n    return total\n\n\n");
    for i in 0..CLASSES {
        s.push_str(&format!(
            "class Part{i}:\n    \"\"\"Part number {i}.\"\"\"\n\n    size: int = {i}\n\n    \
             def volume(self) -> int:\n        base = self.size * 3\n        extra = weigh(base)\n        \
             return base + extra\n\n    def label(self) -> str:\n        text = f\"part {i}\"\n        \
             count = weigh({i})\n        return text + str(count)\n\n\n"
        ));
    }
    s
}

async fn call(p: &Project, args: Value) -> (String, Value) {
    let out = match p.lsp(args.clone()).await {
        Ok(o) => o,
        Err(e) => panic!("lsp {args} failed: {e}"),
    };
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!(">>> {args}\n{}\n", out.text);
    }
    (out.text, out.structured.unwrap())
}

#[tokio::test]
async fn pyright_outline_and_references_stay_within_the_budget_and_page() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", PYRIGHT);
    p.write(CATALOG, &catalog());

    // The outline page by page (`offset`; without it a big outline shows its shape first):
    // declarations only, within 4 KB, with the way to the rest.
    let (text, s) = call(
        &p,
        json!({"action": "symbols", "file": CATALOG, "offset": 0}),
    )
    .await;
    assert!(text.len() <= 4096, "{} bytes:\n{text}", text.len());
    let total = s["total"].as_u64().unwrap() as usize;
    // LIMIT, weigh, and per class: the class, its field and two methods.
    assert_eq!(total, 2 + CLASSES * 4, "{text}");
    for local in ["total", "base", "extra", "text", "count"] {
        assert!(
            !text.contains(&format!("variable {local} ")),
            "local {local} listed:\n{text}"
        );
    }
    has(&text, "inside function bodies");
    let next = s["page"]["next_offset"].as_u64().expect("a next page") as usize;
    has(&text, &format!("pass `offset: {next}`"));

    // The pages together are the whole outline, each entry once.
    let mut seen: Vec<String> = s["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{} {}", e["container"], e["name"]))
        .collect();
    let mut offset = Some(next);
    while let Some(o) = offset {
        let (text, s) = call(
            &p,
            json!({"action": "symbols", "file": CATALOG, "offset": o}),
        )
        .await;
        assert!(text.len() <= 4096, "{} bytes:\n{text}", text.len());
        seen.extend(
            s["symbols"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| format!("{} {}", e["container"], e["name"])),
        );
        offset = s["page"]["next_offset"].as_u64().map(|n| n as usize);
    }
    assert_eq!(seen.len(), total);
    assert_eq!(
        seen.iter().collect::<BTreeSet<_>>().len(),
        total,
        "{seen:?}"
    );
    assert!(
        seen.contains(&format!("\"Part{}\" \"label\"", CLASSES - 1)),
        "{seen:?}"
    );

    // `kinds` picks the locals too; `depth: 1` keeps the top level.
    let (text, s) = call(
        &p,
        json!({"action": "symbols", "file": CATALOG, "kinds": ["variable"], "max_results": 1000}),
    )
    .await;
    assert!(
        s["total"].as_u64().unwrap() as usize >= CLASSES * 5,
        "{text}"
    );
    let (text, s) = call(
        &p,
        json!({"action": "symbols", "file": CATALOG, "depth": 1}),
    )
    .await;
    assert_eq!(s["total"].as_u64().unwrap() as usize, 2 + CLASSES, "{text}");
    let err = p
        .err(json!({"action": "symbols", "file": CATALOG, "kinds": ["widget"]}))
        .await
        .to_string();
    has(&err, "unknown symbol kind `widget`");

    // References of a much-used function: at most 50 by default, within the budget, and
    // the rest by offset.
    let (text, s) = call(
        &p,
        json!({"action": "references", "file": CATALOG, "line": 6, "symbol": "weigh"}),
    )
    .await;
    let total = s["total"].as_u64().unwrap() as usize;
    assert_eq!(total, 1 + CLASSES * 2, "{text}");
    assert!(text.len() <= 4096, "{} bytes:\n{text}", text.len());
    let shown = s["locations"].as_array().unwrap().len();
    assert!(shown <= 50 && shown < total, "{text}");
    let (_, rest) = call(
        &p,
        json!({"action": "references", "file": CATALOG, "line": 6, "symbol": "weigh",
               "offset": shown, "max_results": 1000}),
    )
    .await;
    let first_rest = &rest["locations"][0];
    assert!(
        !s["locations"].as_array().unwrap().contains(first_rest),
        "the next page starts after the first"
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn a_configured_budget_holds_larger_answers() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", &format!("[lsp]\nanswer_bytes = 16384\n{PYRIGHT}"));
    p.write(CATALOG, &catalog());
    let (text, s) = call(&p, json!({"action": "symbols", "file": CATALOG})).await;
    assert!(
        text.len() > 4096 && text.len() <= 16384,
        "{} bytes",
        text.len()
    );
    assert!(s["page"]["shown"].as_u64().unwrap() > 100, "{text}");
    p.close_and_check().await;
}

#[tokio::test]
async fn pyright_hover_entities_are_decoded() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", PYRIGHT);
    let file = "src/shapes/layout.py";
    let line = p
        .read(file)
        .lines()
        .position(|l| l.starts_with("def measure"))
        .unwrap()
        + 1;
    let (text, s) = call(
        &p,
        json!({"action": "hover", "file": file, "line": line, "symbol": "measure"}),
    )
    .await;
    // pyright indents docstring lines with `&nbsp;`; the model reads spaces.
    assert!(s["decoded_entities"].as_u64().unwrap() > 0, "{text}");
    assert!(!text.contains("&nbsp;"), "{text}");
    has(&text, "```python");
    has(&text, "    s: the shape to measure");
    p.close_and_check().await;
}

#[tokio::test]
async fn rust_analyzer_hover_drops_notable_traits() {
    let works = require_binary("rust-analyzer", "rust-analyzer").is_some()
        && std::process::Command::new("rust-analyzer")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !works {
        return;
    }
    let p = Project::from_fixture("cargo_ws", "[lsp]\nindex_wait_ms = 180000\n");
    let file = "crates/geometry/src/layout.rs";
    let line = p
        .read(file)
        .lines()
        .position(|l| l.contains("let later = "))
        .unwrap()
        + 1;
    let (text, s) = call(
        &p,
        json!({"action": "hover", "file": file, "line": line, "symbol": "later"}),
    )
    .await;
    assert!(!text.contains("notable traits"), "{text}");
    assert!(s["dropped_noise"].as_u64().unwrap() > 0, "{text}");
    has(&text, "```rust");
    has(&text, "Future");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_long_hover_pages_by_line() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", PYRIGHT);
    let mut doc = String::from("def manual() -> int:\n    \"\"\"The whole manual.\n\n");
    for i in 0..300 {
        doc.push_str(&format!(
            "    Paragraph {i:03} of the manual, long enough to matter.\n\n"
        ));
    }
    doc.push_str("    \"\"\"\n    return 0\n");
    p.write("src/shapes/manual.py", &doc);
    let args =
        json!({"action": "hover", "file": "src/shapes/manual.py", "line": 1, "symbol": "manual"});
    let (text, s) = call(&p, args.clone()).await;
    assert!(text.len() <= 4096, "{} bytes", text.len());
    has(&text, "```python");
    has(&text, "Paragraph 000");
    let next = s["next_offset"].as_u64().expect("a next page");
    has(&text, &format!("pass `offset: {next}`"));
    // The next page goes on where the first stopped, and the last one has it all.
    let mut last_seen = text;
    let mut offset = Some(next);
    let mut pages = 1;
    while let Some(o) = offset {
        let mut more = args.clone();
        more["offset"] = json!(o);
        let (text, s) = call(&p, more).await;
        assert!(text.len() <= 4096, "{} bytes", text.len());
        assert!(
            !text.starts_with("```python"),
            "page {pages} starts over:\n{text}"
        );
        last_seen = text;
        offset = s["next_offset"].as_u64();
        pages += 1;
    }
    assert!(pages >= 4, "{pages} pages");
    has(&last_seen, "Paragraph 299");
    p.close_and_check().await;
}
