//! The first query of a run, on a server still loading its project: rust-analyzer on a
//! Cargo workspace, untrusted. The query is not held for the load; an answer given before
//! the load ends leads with a line saying the server is still indexing, with its progress —
//! never a bare timeout, never a "no definition" that is really "not yet" — and asking
//! again gives the exact definition.

use serde_json::json;

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
