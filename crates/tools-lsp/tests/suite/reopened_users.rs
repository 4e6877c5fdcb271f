//! pyright gets a write as a closed and reopened document (it holds its analysis back a
//! quarter of a second after a change, not after an open), and a file using what the write
//! changed that was not open is taken at pyright's earlier publish and reopened after the
//! write at a new version: what each write reports is still exactly what it broke, never
//! what its users had wrong before.

use std::sync::Arc;

use tools_core::testing::require_binary;

use super::Project;

/// pyright alone (its ruff companion would add findings of its own).
const CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n[lsp.servers.ruff]\nenabled = false\n";

const LIB: &str = "def scale(x: int) -> int:\n    return x * 2\n\n\ndef label(x: int) -> str:\n    return str(x)\n";

/// The items a write changed come from pyright's outline of the file.
#[tokio::test]
async fn each_write_names_what_it_broke_in_users_opened_for_it() {
    writes_name_what_they_broke(false).await;
}

/// The items a write changed come from the bundled grammars (the run has them, as the
/// binary's does), and pyright is never asked for an outline before the write.
#[tokio::test]
async fn each_write_names_what_it_broke_with_its_items_read_from_the_grammars() {
    writes_name_what_they_broke(true).await;
}

async fn writes_name_what_they_broke(grammars: bool) {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"d\"\nversion = \"0\"\n",
            ),
            ("lib.py", LIB),
            // An error of its own before any write: never this run's news.
            (
                "use_scale.py",
                "from lib import scale\n\nbad: int = \"before\"\nprint(scale(1))\n",
            ),
            ("use_label.py", "from lib import label\n\nprint(label(1))\n"),
        ],
        CONFIG,
    );
    if grammars {
        tools_core::SymbolSources::for_run(&p.run).register(Arc::new(tools_ast::GrammarSymbols));
    }
    // The first write changes `label`: its one user is opened for it.
    let first = LIB.replace("def label(x: int)", "def label(x: int, y: int)");
    write_says(
        &p,
        &first,
        "1 new diagnostic(s) after this write:\n\
         use_label.py:3:7 error [reportCallIssue] Argument missing for parameter \"y\"",
    )
    .await;
    // The second changes `scale`, whose user is not open yet and was published by pyright's
    // check of the workspace, its own error in it.
    let second = first.replace("def scale(x: int)", "def scale(x: int, factor: int)");
    write_says(
        &p,
        &second,
        "1 new diagnostic(s) after this write:\n\
         use_scale.py:4:7 error [reportCallIssue] Argument missing for parameter \"factor\"",
    )
    .await;
    // Undone: both breaks are gone; the users' own error stays theirs, never listed.
    write_says(
        &p,
        LIB,
        "no new diagnostics after this write.\n\
         2 earlier diagnostic(s) are gone after this write:\n  \
         use_label.py:3 error [reportCallIssue] Argument missing for parameter \"y\"\n  \
         use_scale.py:4 error [reportCallIssue] Argument missing for parameter \"factor\"",
    )
    .await;
    p.close_and_check().await;
}

/// Writes `text` to `lib.py` and checks the write's diagnostics section is `expected`.
async fn write_says(p: &Project, text: &str, expected: &str) {
    let section = p
        .write_tool("lib.py", text)
        .await
        .expect("a diagnostics section");
    assert_eq!(section, expected);
}
