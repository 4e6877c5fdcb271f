//! `lsp_rename` checked after writing, through pyright: the servers get the written files,
//! the write's diagnostics come in the rename's own answer (once), and the references
//! under the new name are compared with those from before. A rename that changes what a
//! use means (the new name is shadowed there) is named as leaving that place behind.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[tokio::test]
async fn a_rename_is_checked_against_the_references_from_before() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"d\"\nversion = \"0\"\n",
            ),
            ("util.py", "def compute(x):\n    return x * 2\n"),
            (
                "a.py",
                "from util import compute\n\n\ndef twice(calculate):\n    return compute(calculate)\n\n\nA = compute(1)\n",
            ),
        ],
        "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n",
    );
    // A clean rename: every reference from before is one under the new name.
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "util.py", "line": 1, "symbol": "compute", "new_name": "double"}),
        )
        .await
        .unwrap();
    has(
        &out.text,
        "checked after writing: pyright-langserver links all 4 reference(s) of `compute` from before to `double`",
    );
    let checked = &out.structured.as_ref().unwrap()["checked_after_writing"];
    assert_eq!(checked["clean"], json!(true), "{checked}");
    // The diagnostics section comes once, from the state before the rename.
    let diag_sections = out
        .sections
        .iter()
        .filter(|s| s.title == "diagnostics")
        .count();
    assert!(diag_sections <= 1, "{}", out.full_text());
    assert!(
        !out.full_text().contains("new diagnostic(s)"),
        "{}",
        out.full_text()
    );
    has(&p.read("a.py"), "return double(calculate)");

    // Renamed to the parameter's name, the call inside `twice` now calls the parameter.
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "util.py", "line": 1, "symbol": "double", "new_name": "calculate"}),
        )
        .await
        .unwrap();
    has(
        &out.text,
        "WARNING — checked after writing, the rename left places behind",
    );
    has(&out.text, "No longer linked: a.py:5.");
    let checked = &out.structured.as_ref().unwrap()["checked_after_writing"];
    assert_eq!(checked["clean"], json!(false), "{checked}");
    assert_eq!(checked["no_longer_linked"], json!(["a.py:5"]), "{checked}");
    p.close_and_check().await;
}
