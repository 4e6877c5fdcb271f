//! `lsp_rename` checked after writing, through pyright: the servers get the written files,
//! the write's diagnostics come once, and the references under the new name are compared
//! with those from before. A rename that changes what a use means (the new name is shadowed
//! there) is named as leaving that place behind. The check comes in the rename's own answer
//! when it ends by `rename_answer_ms`; otherwise the answer says it goes on and the next
//! answer leads with it.

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
        // The answer waits for the whole check.
        "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\nrename_answer_ms = 600000\n",
    );
    // A clean rename: every reference from before is one under the new name, said in the
    // answer itself.
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "util.py", "line": 1, "symbol": "compute", "new_name": "double"}),
        )
        .await
        .unwrap();
    assert_eq!(
        out.text,
        "renamed `compute` at util.py:1 to `double`: 4 edit(s) in 2 file(s)\n\
         \x20 a.py: 3 edit(s)\n\
         \x20 util.py: 1 edit(s)\n\
         checked after writing: pyright-langserver links all 4 reference(s) of `compute` from before to `double`"
    );
    let checked = &out.structured.as_ref().unwrap()["checked_after_writing"];
    assert_eq!(checked["clean"], json!(true), "{checked}");
    // No write before it: the answer waited for the check, up to the bound.
    let wait = &out.structured.as_ref().unwrap()["check_wait"];
    assert_eq!(
        wait,
        &json!({"bound_ms": 600000, "last_write_verdict_ms": null, "skipped": false})
    );
    // The diagnostics come once, from the state before the rename.
    assert!(
        out.sections
            .iter()
            .filter(|s| s.title == "diagnostics")
            .count()
            <= 1,
        "{}",
        out.full_text()
    );
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
    assert_eq!(
        out.text.lines().last(),
        Some(
            "WARNING — checked after writing, the rename left places behind: pyright-langserver linked 4 reference(s) to `double` before and links 3 to `calculate` now. No longer linked: a.py:5. Fix those places (see the diagnostics) or undo the rename."
        ),
        "{}",
        out.text
    );
    let checked = &out.structured.as_ref().unwrap()["checked_after_writing"];
    assert_eq!(checked["clean"], json!(false), "{checked}");
    assert_eq!(checked["no_longer_linked"], json!(["a.py:5"]), "{checked}");
    // Nothing was left to lead the next answer.
    let next = p.ok(json!({"action": "status"})).await;
    assert!(!next.contains("Check of the earlier rename"), "{next}");
    p.close_and_check().await;
}

/// A rename whose check goes on after its answer (`rename_answer_ms = 0`): the answer
/// lists the exact edits and says so in its second line; the next call's answer leads with
/// the check, attributed to the rename, with the exact line of the clash it caused.
#[tokio::test]
async fn a_check_that_goes_on_leads_the_next_answer_with_what_the_rename_broke() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"d\"\nversion = \"0\"\n",
            ),
            ("util.py", "def compute(x: int) -> int:\n    return x * 2\n"),
            (
                "a.py",
                "from util import compute\n\n\nclass double:\n    pass\n\n\nA = compute(1)\n",
            ),
        ],
        "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\nrename_answer_ms = 0\n",
    );
    // The server has the project before the rename (the state before is settled).
    p.ok(json!({"action": "diagnostics", "file": "a.py"})).await;
    // A write first: its diagnostics took pyright longer than the bound, so the rename's
    // answer does not wait for its check at all (and says so in its structured result).
    p.write_tool(
        "a.py",
        "from util import compute\n\n\nclass double:\n    pass\n\n\nA = compute(1)\n# touched\n",
    )
    .await;
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "util.py", "line": 1, "symbol": "compute", "new_name": "double"}),
        )
        .await
        .unwrap();
    let wait = &out.structured.as_ref().unwrap()["check_wait"];
    assert_eq!(
        (&wait["bound_ms"], &wait["skipped"]),
        (&json!(0), &json!(true)),
        "{wait}"
    );
    assert!(
        wait["last_write_verdict_ms"]
            .as_u64()
            .is_some_and(|ms| ms > 0),
        "{wait}"
    );
    assert_eq!(
        out.text,
        "renamed `compute` at util.py:1 to `double`: 3 edit(s) in 2 file(s)\n\
         the check goes on: what pyright-langserver reports about the renamed files (new diagnostics, references left behind) comes with your next call's answer\n\
         \x20 a.py: 2 edit(s)\n\
         \x20 util.py: 1 edit(s)"
    );
    let files = &out.structured.as_ref().unwrap()["files"];
    assert_eq!(
        files,
        &json!([{"path": "a.py", "change": "2 edit(s)", "lines": [1, 8]},
                {"path": "util.py", "change": "1 edit(s)", "lines": [1]}])
    );
    assert!(out.sections.is_empty(), "{}", out.full_text());
    let next = p
        .ok(json!({"action": "hover", "file": "util.py", "line": 1, "symbol": "double"}))
        .await;
    // The clash: `double` is now both the imported function and the class in a.py.
    assert_eq!(
        next.lines().take(5).collect::<Vec<_>>(),
        [
            "Check of the earlier rename of `compute` at util.py:1 to `double`, still running when its answer was given — caused by that rename, not this call:",
            "checked after writing: pyright-langserver links all 3 reference(s) of `compute` from before to `double`",
            "2 new diagnostic(s) after this write:",
            "a.py:1:18 error [reportAssignmentType] Type \"(x: int) -> int\" is not assignable to declared type \"type[double]\" …",
            "a.py:8:12 error [reportCallIssue] Expected 0 positional arguments",
        ],
        "{next}"
    );
    // The hover answer follows; the check is handed over once.
    has(&next, "(function) def double(x: int) -> int");
    let again = p
        .ok(json!({"action": "hover", "file": "util.py", "line": 1, "symbol": "double"}))
        .await;
    assert!(!again.contains("Check of the earlier rename"), "{again}");
    p.close_and_check().await;
}
