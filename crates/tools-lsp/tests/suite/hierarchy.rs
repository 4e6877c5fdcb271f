//! Call and type hierarchies through real servers, on the `layout` file of each fixture
//! project (a chain `page → column → row → measure`, with `page` and `column` both calling
//! `row` and `measure`, and a small family of types): depth 2 shows callers of callers
//! with every node once (a node met again is marked, not followed); a server without the
//! capability answers in one line naming itself.

use std::collections::HashSet;

use serde_json::{Value, json};
use tools_core::testing::require_binary;

use super::{Project, has};

/// The 1-based line of `file` holding `needle` (the first one).
fn line_with(p: &Project, file: &str, needle: &str) -> u32 {
    let text = p.read(file);
    let i = text
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {file}"));
    i as u32 + 1
}

/// The structured entries of a hierarchy answer.
async fn entries(p: &Project, args: Value) -> (String, Vec<Value>) {
    let out = match p.lsp(args.clone()).await {
        Ok(o) => o,
        Err(e) => panic!("lsp {args} failed: {e}"),
    };
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!(">>> {args}\n{}\n", out.text);
    }
    let s = out.structured.clone().unwrap();
    (
        out.text,
        s["entries"].as_array().cloned().unwrap_or_default(),
    )
}

/// Names (lower case) of the entries at `depth`.
fn names_at(entries: &[Value], depth: u64) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e["depth"] == depth)
        .map(|e| e["name"].as_str().unwrap().to_lowercase())
        .collect()
}

/// Every node appears once unmarked: the walk never repeats one.
#[track_caller]
fn no_repeats(text: &str, entries: &[Value]) {
    let mut seen = HashSet::new();
    for e in entries.iter().filter(|e| e["repeated"] != true) {
        let key = (
            e["name"].as_str().unwrap().to_string(),
            e["location"]["path"].to_string(),
            e["location"]["line"].to_string(),
        );
        assert!(seen.insert(key.clone()), "{key:?} shown twice:\n{text}");
    }
}

#[track_caller]
fn includes(names: &[String], expected: &[&str], text: &str) {
    for n in expected {
        assert!(
            names.iter().any(|m| m == n),
            "{n} missing from {names:?}:\n{text}"
        );
    }
}

/// Incoming calls of `measure` and outgoing calls of `page`, depth 2; names are compared
/// in lower case (Go capitalises them).
async fn check_calls(p: &Project, file: &str) {
    // The definitions come before any use in every fixture.
    let measure = line_with(p, file, "easure(");
    let sym = if file.ends_with(".go") {
        "Measure"
    } else {
        "measure"
    };
    let (text, e) = entries(
        p,
        json!({"action": "incoming_calls", "file": file, "line": measure, "symbol": sym, "depth": 2}),
    )
    .await;
    has(&text, "incoming calls of");
    assert_eq!(names_at(&e, 0), vec!["measure".to_string()], "{text}");
    includes(&names_at(&e, 1), &["row", "column"], &text);
    includes(&names_at(&e, 2), &["page"], &text);
    // `column` calls `measure` and is met again as the caller of `row`: marked once.
    no_repeats(&text, &e);
    has(&text, "[repeated");
    // The call sites are named.
    has(&text, "calls it at line");
    assert!(
        e.iter()
            .filter(|x| x["depth"] == 1)
            .all(|x| !x["call_sites"].as_array().unwrap().is_empty()),
        "{text}"
    );

    let page_sym = if file.ends_with(".go") {
        "Page"
    } else {
        "page"
    };
    let page = line_with(p, file, "age(");
    let (text, e) = entries(
        p,
        json!({"action": "outgoing_calls", "file": file, "line": page, "symbol": page_sym, "depth": 2}),
    )
    .await;
    has(&text, "outgoing calls of");
    includes(&names_at(&e, 1), &["row", "column"], &text);
    includes(&names_at(&e, 2), &["measure"], &text);
    no_repeats(&text, &e);
    has(&text, "[repeated");

    // Depth 1 is the default; depth 4 is refused.
    let (text, e) = entries(
        p,
        json!({"action": "incoming_calls", "file": file, "line": measure, "symbol": sym}),
    )
    .await;
    assert!(names_at(&e, 2).is_empty(), "{text}");
    let err = p
        .err(json!({"action": "incoming_calls", "file": file, "line": measure, "symbol": sym, "depth": 4}))
        .await
        .to_string();
    has(&err, "depth");
}

/// Supertypes of `leaf` and subtypes of `base`, depth 2.
async fn check_types(
    p: &Project,
    file: &str,
    (leaf, leaf_line): (&str, &str),
    supers: (&[&str], &[&str]),
    (base, base_line): (&str, &str),
    subs: (&[&str], &[&str]),
) {
    let line = line_with(p, file, leaf_line);
    let (text, e) = entries(
        p,
        json!({"action": "supertypes", "file": file, "line": line, "symbol": leaf, "depth": 2}),
    )
    .await;
    has(&text, "supertypes of");
    includes(&names_at(&e, 1), supers.0, &text);
    includes(&names_at(&e, 2), supers.1, &text);
    no_repeats(&text, &e);
    let line = line_with(p, file, base_line);
    let (text, e) = entries(
        p,
        json!({"action": "subtypes", "file": file, "line": line, "symbol": base, "depth": 2}),
    )
    .await;
    has(&text, "subtypes of");
    includes(&names_at(&e, 1), subs.0, &text);
    includes(&names_at(&e, 2), subs.1, &text);
    no_repeats(&text, &e);
}

/// The one-line answer of a server without type hierarchies.
async fn check_no_type_hierarchy(
    p: &Project,
    file: &str,
    line_text: &str,
    sym: &str,
    server: &str,
) {
    let line = line_with(p, file, line_text);
    for action in ["supertypes", "subtypes"] {
        let err = p
            .err(json!({"action": action, "file": file, "line": line, "symbol": sym}))
            .await
            .to_string();
        has(&err, server);
        has(&err, "does not support type hierarchy");
        assert!(!err.trim().contains('\n'), "one line: {err}");
    }
}

#[tokio::test]
async fn pyright_call_hierarchy_and_no_type_hierarchy() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture(
        "py_src",
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n",
    );
    let file = "src/shapes/layout.py";
    check_calls(&p, file).await;
    check_no_type_hierarchy(&p, file, "class Crate", "Crate", "pyright").await;
    p.close_and_check().await;
}

#[tokio::test]
async fn typescript_call_hierarchy() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none() {
        return;
    }
    let p = Project::from_fixture("ts_lib", "[lsp]\nindex_wait_ms = 60000\n");
    let file = "src/layout.ts";
    check_calls(&p, file).await;
    check_no_type_hierarchy(
        &p,
        file,
        "class Crate",
        "Crate",
        "typescript-language-server",
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn gopls_call_hierarchy() {
    if require_binary("gopls", "gopls").is_none() || require_binary("go", "go").is_none() {
        return;
    }
    let p = Project::from_fixture("go_mod", "[lsp]\nindex_wait_ms = 60000\n");
    let file = "layout/layout.go";
    check_calls(&p, file).await;
    // The gopls of these machines predates its type hierarchy (v0.16).
    check_no_type_hierarchy(&p, file, "type Sized", "Sized", "gopls").await;
    p.close_and_check().await;
}

#[tokio::test]
async fn clangd_call_and_type_hierarchies() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::from_fixture("c_lib", "");
    let file = "src/layout.cpp";
    check_calls(&p, file).await;
    check_types(
        &p,
        file,
        ("Crate", "struct Crate"),
        (&["box"], &["shape"]),
        ("Shape", "struct Shape"),
        (&["box", "lid"], &["crate"]),
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn rust_analyzer_call_hierarchy() {
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
    check_calls(&p, file).await;
    check_no_type_hierarchy(
        &p,
        file,
        "pub trait Stackable",
        "Stackable",
        "rust-analyzer",
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn a_wide_hierarchy_pages_within_the_budget() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    const CALLERS: usize = 80;
    let p = Project::from_fixture("c_lib", "");
    let mut src = String::from("int leaf(int x) { return x + 1; }\n");
    for i in 0..CALLERS {
        src.push_str(&format!(
            "int caller_with_a_long_descriptive_name_{i:02}(int x) {{ return leaf(x) + leaf({i}); }}\n"
        ));
    }
    p.write("src/wide.cpp", &src);
    let args =
        json!({"action": "incoming_calls", "file": "src/wide.cpp", "line": 1, "symbol": "leaf"});
    let (text, e) = entries(&p, args.clone()).await;
    assert!(text.len() <= 4096, "{} bytes:\n{text}", text.len());
    let out = p.lsp(args.clone()).await.unwrap();
    let page = out.structured.unwrap()["page"].clone();
    assert_eq!(page["total"], CALLERS + 1, "{text}");
    let next = page["next_offset"].as_u64().expect("a next page");
    has(&text, &format!("`offset: {next}`"));
    // Each caller calls twice on one line: the line is named once, with the count.
    has(&text, "calls it at line 2 (2 calls)");
    assert!(!text.contains("smaller `depth`"), "{text}");
    // The rest, by offset: every caller once over the pages.
    let mut names: Vec<String> = e
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect();
    let mut offset = Some(next);
    while let Some(o) = offset {
        let mut more = args.clone();
        more["offset"] = json!(o);
        let out = p.lsp(more).await.unwrap();
        assert!(out.text.len() <= 4096, "{} bytes", out.text.len());
        let s = out.structured.unwrap();
        names.extend(
            s["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["name"].as_str().unwrap().to_string()),
        );
        offset = s["page"]["next_offset"].as_u64();
    }
    assert_eq!(names.len(), CALLERS + 1);
    assert_eq!(names.iter().collect::<HashSet<_>>().len(), CALLERS + 1);
    p.close_and_check().await;
}
