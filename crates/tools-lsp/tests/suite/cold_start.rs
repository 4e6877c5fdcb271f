//! Servers that start with a trusted run, before any call, and not with an untrusted one;
//! and the first query of a run on a server still loading its project: rust-analyzer on a
//! Cargo workspace, untrusted. The query is not held for the load; an answer given before
//! the load ends leads with a line saying the server is still indexing, with its progress —
//! never a bare timeout, never a "no definition" that is really "not yet" — and asking
//! again gives the exact definition.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, project_rust::rust_analyzer_works};

// The indexing wait is cut to nothing, so a query is not held for the load at all: the
// server answers what it can (it may itself hold the request until it is loaded).
const CONFIG: &str = "[lsp]\nindex_wait_ms = 1\n";

const STILL_INDEXING: &str = "(not final: rust-analyzer is still indexing (";
const NOTE_WITHOUT_PROGRESS: &str = "(not final: rust-analyzer is still indexing; this answer may be incomplete — ask again shortly)";
const MAY_BE_INCOMPLETE: &str = "); this answer may be incomplete — ask again shortly)";
const DEFINITION: &str = "1 definition(s) of `area` at crates/cli/src/main.rs:6:\n\
                          crates/geometry/src/lib.rs:12:8  pub fn area(r: &Rect) -> u32 {";

/// rust-analyzer's names for the work of loading a workspace (cache priming is off).
const LOADING_WORK: &[&str] = &[
    "Fetching",
    "Roots Scanned",
    "Building CrateGraph",
    "Building compile-time-deps",
    "Loading proc-macros",
];

#[tokio::test]
async fn a_definition_during_rust_analyzers_load_is_exact_or_says_it_is_still_indexing() {
    if !rust_analyzer_works() {
        return;
    }
    let p = Project::from_fixture_with_trust("cargo_ws", CONFIG, false);
    let ask = json!({"action": "definition", "file": "crates/cli/src/main.rs", "line": 6, "symbol": "area"});
    let mut answers = Vec::new();
    loop {
        // Never an error (a bare timeout): an answer, every time.
        let out = p.lsp(ask.clone()).await.unwrap();
        let text = out.full_text();
        let done = !text.starts_with("(not final");
        answers.push((text, out.structured.unwrap_or_default()));
        if done {
            break;
        }
        assert!(
            answers.len() < 400,
            "still indexing after 400 asks: {answers:?}"
        );
    }
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!("{answers:#?}");
    }
    // Every answer given while the server was loading leads with the note, naming the
    // work under way when it reports some, and holds what the server could say then:
    // nothing yet, or the definition itself.
    for (text, facts) in &answers[..answers.len() - 1] {
        let mut lines = text.lines();
        let head = lines.next().unwrap();
        let progress = head
            .strip_prefix(STILL_INDEXING)
            .and_then(|rest| rest.strip_suffix(MAY_BE_INCOMPLETE));
        assert!(
            head == NOTE_WITHOUT_PROGRESS
                || progress.is_some_and(|p| LOADING_WORK.iter().any(|w| p.starts_with(w))),
            "first line is not the indexing note: {text}"
        );
        let body: Vec<&str> = lines.collect();
        let nothing_yet = body == ["no definition found for `area` at crates/cli/src/main.rs:6"];
        let exact = body.join("\n") == DEFINITION;
        assert!(nothing_yet || exact, "{text}");
        if nothing_yet {
            assert_eq!(facts["final"], false, "{facts}");
        }
    }
    // Once loaded: the exact definition, with no note.
    assert_eq!(answers.last().unwrap().0, DEFINITION);
}

const PYPROJECT: &str = "[project]\nname = \"w\"\nversion = \"0.1.0\"\n";
const MAIN: &str = "def add(a: int, b: int) -> int:\n    return a + b\n";

#[tokio::test]
async fn a_trusted_runs_own_language_starts_with_the_run_and_an_untrusted_one_waits_for_a_call() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let files = [("pyproject.toml", PYPROJECT), ("main.py", MAIN)];
    let config = "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
    let untrusted = Project::with_trust(&files, config, false);
    let trusted = Project::new(&files, config);
    // No call to either yet: the trusted run's server comes up on its own.
    let mut pids = Vec::new();
    for _ in 0..600 {
        pids = trusted.server_pids().await;
        if !pids.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(pids.len(), 1, "the trusted run started no server by itself");
    let status = trusted.ok(json!({"action": "status"})).await;
    assert_eq!(
        status.lines().next().unwrap(),
        "python: running pyright-langserver for root .",
        "{status}"
    );
    // By now the untrusted run would have started its own too: it has not.
    assert!(untrusted.server_pids().await.is_empty());
    let status = untrusted.ok(json!({"action": "status"})).await;
    let first = status.lines().next().unwrap();
    assert!(
        first.starts_with("python: not started yet for root .; pyright-langserver resolves at ")
            && first.ends_with(" and starts on the first query"),
        "{status}"
    );
    // Its first call starts it.
    let hover = untrusted
        .ok(json!({"action": "hover", "file": "main.py", "line": 1, "symbol": "add"}))
        .await;
    assert_eq!(
        hover,
        "```python\n(function) def add(\n    a: int,\n    b: int\n) -> int\n```"
    );
    assert_eq!(untrusted.server_pids().await.len(), 1);
    trusted.close_and_check().await;
    untrusted.close_and_check().await;
}

#[tokio::test]
async fn a_run_closed_while_its_server_starts_with_it_leaves_no_server_process() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let files = [("pyproject.toml", PYPROJECT), ("main.py", MAIN)];
    let config = "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
    let p = Project::new(&files, config);
    // The server's process is there and the start is still under way (no answer to
    // `initialize` yet): the run closes now.
    let mut seen = Vec::new();
    let mut line = String::new();
    for _ in 0..6000 {
        let status = p.ok(json!({"action": "status"})).await;
        line = status.lines().next().unwrap_or_default().to_string();
        seen = p.processes_in_root();
        if line == "python: starting for root ." && !seen.is_empty() {
            break;
        }
        assert_ne!(
            line, "python: running pyright-langserver for root .",
            "the start ended before its process was seen"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(line, "python: starting for root .");
    assert!(!seen.is_empty());
    p.run.close().await;
    let mut left = p.processes_in_root();
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        left = p.processes_in_root();
    }
    assert_eq!(left, Vec::<i32>::new(), "started with the run: {seen:?}");
}
