//! The first name search while a server cannot answer yet: the declarations a scan of the
//! files' syntax finds answer it, labelled so in the first line, and the server's own answer
//! replaces them once it comes. The server is a real process speaking LSP that answers every
//! search 2.5 s late (`slow-search`), standing for one still indexing.

use std::sync::Arc;

use serde_json::json;

use super::{Project, fixture};

fn config(scan_after_ms: u64) -> String {
    format!(
        "[lsp]\nstart_at_run_start = false\nrequest_timeout_ms = 10000\ndeclaration_scan_after_ms = {scan_after_ms}\n[lsp.servers.python]\ncommand = [\"python3\", {:?}, \"slow-search\"]\n",
        fixture("fake_lsp.py").display().to_string()
    )
}

const CATALOG: &str = "import functools


class Catalog:
    \"\"\"Items for sale.\"\"\"

    @functools.cache
    def price_of(self, item: str) -> int:
        return 1


def catalog_size(c: Catalog) -> int:
    return 0
";

/// A package whose `Catalog` is declared once and used elsewhere, a copy under an ignored
/// folder, and a link planted to a folder outside the workspace that declares it too.
fn project(scan_after_ms: u64, outside: &std::path::Path) -> Project {
    let p = Project::new(
        &[
            ("pyproject.toml", "[project]\nname = \"shop\"\n"),
            (".ignore", "build/\n"),
            ("shop/__init__.py", ""),
            ("shop/catalog.py", CATALOG),
            (
                "shop/orders.py",
                "from shop.catalog import Catalog\n\nCATALOG = Catalog()\n",
            ),
            ("build/shop/catalog.py", CATALOG),
        ],
        &config(scan_after_ms),
    );
    std::fs::write(outside.join("elsewhere.py"), "class Catalog:\n    pass\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside, p.dir.path().join("linked")).unwrap();
    tools_core::SymbolSources::for_run(&p.run).register(Arc::new(tools_ast::GrammarSymbols));
    p
}

async fn lines(p: &Project, query: &str) -> (Vec<String>, serde_json::Value) {
    let out = p
        .lsp(json!({"action": "symbols", "query": query}))
        .await
        .unwrap();
    let text = out.full_text().lines().map(String::from).collect();
    (text, out.structured.unwrap())
}

#[tokio::test]
async fn a_server_not_answering_yet_is_stood_in_for_by_the_declarations_then_replaced() {
    let outside = tempfile::tempdir().unwrap();
    let p = project(1000, outside.path());
    let (text, s) = lines(&p, "Catalog").await;
    assert_eq!(
        text,
        [
            "(not final: python3 had not answered within 1 s; its 3 match(es) below are declarations read from the files with tree-sitter python, not python3's answer — ask again shortly for it)",
            "3 workspace symbol(s) match `Catalog`:",
            "class Catalog  shop/catalog.py:4:7",
            "variable CATALOG  shop/orders.py:3:1",
            "function catalog_size  shop/catalog.py:12:5",
        ]
    );
    let server = &s["servers"][0];
    assert_eq!(
        (
            &server["outcome"],
            &server["matches"],
            &server["files_parsed"]
        ),
        (&json!("scanned"), &json!(3), &json!(2)),
        "{s}"
    );
    // A container in the query, and a decorator above the name.
    let (text, _) = lines(&p, "Catalog.price_of").await;
    assert_eq!(
        text,
        [
            "(not final: python3 had not answered within 1 s; its 1 match(es) below are declarations read from the files with tree-sitter python, not python3's answer — ask again shortly for it)",
            "1 workspace symbol(s) match `Catalog.price_of`:",
            "method price_of (in Catalog)  shop/catalog.py:8:9",
        ]
    );
    // The first search went on: once it has answered, the next ask takes its answer.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let (text, s) = lines(&p, "Catalog").await;
    assert_eq!(
        text,
        [
            "1 workspace symbol(s) match `Catalog`:",
            "function found_by_search_1  a.fake:1:1",
        ]
    );
    assert_eq!(s["servers"][0]["outcome"], "answered", "{s}");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_name_no_declaration_has_waits_for_the_server() {
    let outside = tempfile::tempdir().unwrap();
    let p = project(1000, outside.path());
    let (text, _) = lines(&p, "found").await;
    assert_eq!(
        text,
        [
            "1 workspace symbol(s) match `found`:",
            "function found_by_search_1  a.fake:1:1",
        ]
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn with_the_scan_turned_off_the_server_alone_answers() {
    let outside = tempfile::tempdir().unwrap();
    let p = project(0, outside.path());
    let (text, _) = lines(&p, "Catalog").await;
    assert_eq!(
        text,
        [
            "1 workspace symbol(s) match `Catalog`:",
            "function found_by_search_1  a.fake:1:1",
        ]
    );
    p.close_and_check().await;
}

/// rust-analyzer's first workspace search resolves the names of every crate, the standard
/// library's included, before it answers, while its outline of one file answers at once.
/// With the scan's answer taken at once (`declaration_scan_after_ms = 1`), each declaration
/// found is confirmed by rust-analyzer's outline of its file, and the first line says so —
/// and that its own search goes on.
#[tokio::test]
async fn rust_analyzer_s_outline_confirms_the_declarations_while_its_search_resolves_names() {
    if tools_core::testing::require_binary("rust-analyzer", "rust-analyzer").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "//! Shapes.\n\n/// The area, `k` times over.\npub fn scaled(area: u32, k: u32) -> u32 {\n    area * k\n}\n",
            ),
        ],
        "[lsp]\ndeclaration_scan_after_ms = 1\nrequest_timeout_ms = 60000\n",
    );
    tools_core::SymbolSources::for_run(&p.run).register(Arc::new(tools_ast::GrammarSymbols));
    // The file's outline waits for the workspace's load, and resolves no names.
    let outline = p
        .ok(json!({"action": "symbols", "file": "src/lib.rs"}))
        .await;
    assert!(
        outline.lines().any(|l| l.starts_with("function scaled ")),
        "{outline}"
    );
    p.wait_for_the_first_analysis().await;
    let (text, s) = lines(&p, "scaled").await;
    // Why its search had not answered: not in 1 ms, or a reload (rust-analyzer fetches the
    // workspace again once build scripts have run) still under way.
    let (why, rest) = text[0].split_once("; ").unwrap();
    assert!(
        why == "(rust-analyzer had not answered within 0.001 s"
            || why.starts_with("(rust-analyzer is still indexing ("),
        "{text:?}"
    );
    assert_eq!(
        (rest, &text[1..]),
        (
            "the 1 match(es) below are declarations read from the files with tree-sitter rust, each confirmed by rust-analyzer's outline of its file — its workspace search goes on: ask again for what only it finds, such as items a macro makes)",
            &[
                "1 workspace symbol(s) match `scaled`:".to_string(),
                "function scaled  src/lib.rs:4:8".to_string(),
            ][..]
        )
    );
    let server = &s["servers"][0];
    assert_eq!(
        (&server["outcome"], &server["confirmed_by_outline"]),
        (&json!("scanned"), &json!(true)),
        "{s}"
    );
    p.close_and_check().await;
}
