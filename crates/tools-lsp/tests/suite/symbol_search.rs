//! Workspace symbol search over servers of unequal standing: one that cannot search (tsserver
//! with no project loaded) is named in the first line, and the others' matches are the
//! answer — every time it is asked.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, started_by_the_first_call};

/// A Python package with a JavaScript admin beside it: a `package.json` at the root, a few
/// scripts (under `static/admin/js/` in Django), no `tsconfig.json` or `jsconfig.json` (Django's shape:
/// its JavaScript is a small minority of its files, mostly under `static/`).
/// `scripts` is the folder of the scripts: `static/admin/js` (asset folders) or `admin/js`.
fn python_with_static_js(scripts: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = [
        ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
        ("shop/__init__.py", ""),
        (
            "shop/catalog.py",
            "class Catalog:\n    def __init__(self) -> None:\n        self.items: list[str] = []\n",
        ),
        (
            "shop/orders.py",
            "from shop.catalog import Catalog\n\n\ndef order_all(catalog: Catalog) -> int:\n    return len(catalog.items)\n",
        ),
        (
            "package.json",
            "{\n  \"name\": \"shop-admin\",\n  \"private\": true,\n  \"scripts\": {\"test\": \"echo none\"}\n}\n",
        ),
        (
            "actions.js",
            "'use strict';\nfunction showCatalogActions(form) {\n    return form;\n}\n",
        ),
        (
            "core.js",
            "'use strict';\nfunction quickElement(tag, parent) {\n    return parent;\n}\n",
        ),
        (
            "calendar.js",
            "'use strict';\nconst CalendarNamespace = {monthsOfYear: []};\n",
        ),
    ]
    .iter()
    .map(|(p, t)| match p.ends_with(".js") {
        true => (format!("{scripts}/{p}"), t.to_string()),
        false => (p.to_string(), t.to_string()),
    })
    .collect();
    // The package's bulk: ten Python files to each JavaScript one.
    for i in 0..30 {
        files.push((
            format!("shop/views/page{i}.py"),
            format!("def render_page{i}() -> str:\n    return \"page {i}\"\n"),
        ));
    }
    files
}

fn project(config: &str) -> Project {
    project_with_scripts_in("static/admin/js", config)
}

fn project_with_scripts_in(scripts: &str, config: &str) -> Project {
    let files = python_with_static_js(scripts);
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Project::new(&refs, config)
}

const CONFIG: &str = "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

/// The lines of a search for `Catalog` answered by pyright alone.
const PYRIGHT_MATCHES: &[&str] = &[
    "2 workspace symbol(s) match `Catalog`:",
    "class Catalog  shop/catalog.py:1:7",
    "variable catalog (in order_all)  shop/orders.py:4:15",
];

fn servers_available() -> bool {
    require_binary("pyright", "pyright-langserver").is_some()
        && require_binary("typescript-language-server", "typescript-language-server").is_some()
}

/// Regression: the whole answer used to be tsserver's "No Project" error, and pyright's
/// matches were never shown, however often asked.
#[tokio::test]
async fn a_server_that_cannot_search_is_named_first_and_the_others_answer() {
    if !servers_available() {
        return;
    }
    // The first search starts the server of every language with files of its own here:
    // tsserver runs, with no project to search.
    let p = project_with_scripts_in("admin/js", &started_by_the_first_call(CONFIG));
    for _ in 0..2 {
        let out = p
            .lsp(json!({"action": "symbols", "query": "Catalog"}))
            .await
            .unwrap();
        let mut expected = vec![
            "typescript-language-server could not search: No Project (no tsconfig/jsconfig project is loaded)",
        ];
        expected.extend(PYRIGHT_MATCHES);
        assert_eq!(out.full_text().lines().collect::<Vec<_>>(), expected);
        let s = out.structured.unwrap();
        assert_eq!(s["total"], 2, "{s}");
        let servers = s["servers"].as_array().unwrap();
        assert_eq!(
            servers[0],
            json!({"server": "pyright-langserver", "language": "python", "outcome": "answered", "matches": 2})
        );
        let ts = &servers[1];
        assert_eq!(
            (&ts["server"], &ts["language"], &ts["outcome"], &ts["why"]),
            (
                &json!("typescript-language-server"),
                &json!("typescript"),
                &json!("could_not_search"),
                &json!("No Project (no tsconfig/jsconfig project is loaded)")
            ),
            "{s}"
        );
        assert!(
            ts["error"]
                .as_str()
                .unwrap()
                .starts_with("typescript-language-server refused `workspace/symbol`: "),
            "{s}"
        );
        assert_eq!(servers.len(), 2, "{s}");
    }
}

/// The lines `lsp status` gives `language`, without the memory line (its figures vary).
async fn status_lines(p: &Project, language: &str) -> Vec<String> {
    let out = p.ok(json!({"action": "status"})).await;
    out.lines()
        .filter(|l| l.starts_with(&format!("{language}: ")) && !l.contains(": memory of "))
        .map(String::from)
        .collect()
}

/// Regression: in a run that starts its servers on demand (an untrusted one), the first
/// search started typescript-language-server for Django's admin scripts, which no question
/// was about. Its language is named in a note instead.
#[tokio::test]
async fn a_search_leaves_the_server_of_a_few_static_scripts_unstarted_and_says_so() {
    if !servers_available() {
        return;
    }
    let p = project(&started_by_the_first_call(CONFIG));
    let out = p.ok(json!({"action": "symbols", "query": "Catalog"})).await;
    let mut expected = PYRIGHT_MATCHES.to_vec();
    expected.push("(note: typescript not searched: its 3 file(s) are mostly under asset folders; pass `file` to search from one of them)");
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    // Once a server runs, a search asks the servers that run, as after a run's start.
    let out = p.ok(json!({"action": "symbols", "query": "Catalog"})).await;
    assert_eq!(out.lines().collect::<Vec<_>>(), PYRIGHT_MATCHES);
    let ts = require_binary("typescript-language-server", "typescript-language-server").unwrap();
    let not_started = format!(
        "typescript: not started yet for root .; typescript-language-server resolves at {} and starts on the first query",
        ts.display()
    );
    assert_eq!(status_lines(&p, "typescript").await, [not_started.as_str()]);
    p.close_and_check().await;
}

#[tokio::test]
async fn run_start_leaves_the_server_of_a_few_static_scripts_for_a_question_about_them() {
    if !servers_available() {
        return;
    }
    let ts = require_binary("typescript-language-server", "typescript-language-server").unwrap();
    let p = project(CONFIG);
    p.wait_for_a_server_started_with_the_run().await;
    assert_eq!(
        status_lines(&p, "python").await,
        ["python: running pyright-langserver for root ."]
    );
    let not_started = format!(
        "typescript: not started yet for root .; typescript-language-server resolves at {} and starts on the first query",
        ts.display()
    );
    assert_eq!(status_lines(&p, "typescript").await, [not_started.as_str()]);
    // A search asks the servers that run: pyright's matches, nothing about tsserver.
    for _ in 0..2 {
        let out = p.ok(json!({"action": "symbols", "query": "Catalog"})).await;
        assert_eq!(out.lines().collect::<Vec<_>>(), PYRIGHT_MATCHES);
    }
    // A question about one of the scripts starts tsserver.
    let out = p
        .ok(json!({"action": "symbols", "file": "static/admin/js/core.js"}))
        .await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "1 symbol(s) in static/admin/js/core.js:",
            "function quickElement  line 2"
        ]
    );
    assert_eq!(
        status_lines(&p, "typescript").await,
        ["typescript: running typescript-language-server for root ."]
    );
    p.close_and_check().await;
}

/// Regression: a first search longer than the request timeout (pyright's on Django: every
/// one of 2,814 files read while its analysis runs) was cancelled at the bound and begun
/// anew on every ask, so asking again never answered. It goes on now, and the next ask
/// takes its answer.
#[tokio::test]
async fn a_search_longer_than_the_call_goes_on_and_the_next_ask_takes_its_answer() {
    let p = Project::new(
        &[("fake.toml", ""), ("a.fake", "alpha\n")],
        &super::fake_server_config("slow-search", "request_timeout_ms = 1000\n"),
    );
    let e = p
        .err(json!({"action": "symbols", "query": "found"}))
        .await
        .to_string();
    assert_eq!(e, STILL_SEARCHING);
    // The first search answers 2.5 s after it was asked: the asks after it wait for that
    // search, none starts a second one.
    let found = |n: u32| {
        vec![
            "1 workspace symbol(s) match `found`:".to_string(),
            format!("function found_by_search_{n}  a.fake:1:1"),
        ]
    };
    assert_eq!(answer_within_a_minute(&p, "found").await, found(1));
    // Taken: the next ask searches afresh.
    assert_eq!(answer_within_a_minute(&p, "found").await, found(2));
}

/// The answer of an ask while the fake server's search is under way.
const STILL_SEARCHING: &str = "timed out: python3 is still searching after 1s (a first search of a large workspace reads every file); the search goes on, and asking again takes its answer";

/// The lines of the first ask for `query` that is answered, asking again while the search
/// is still under way, for at most a minute.
async fn answer_within_a_minute(p: &Project, query: &str) -> Vec<String> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match p.lsp(json!({"action": "symbols", "query": query})).await {
            Ok(out) => return out.full_text().lines().map(String::from).collect(),
            Err(e) if std::time::Instant::now() < until => {
                assert!(
                    e.to_string().contains(" is still searching after 1s "),
                    "{e}"
                );
            }
            Err(e) => panic!("no answer within a minute: {e}"),
        }
    }
}
