//! The tests a write reaches, at the end of the write's own answer (on by default in a
//! trusted workspace), and `run` with `affected` running them: pyright answers the uses,
//! pytest runs the tests.

use std::sync::Arc;

use serde_json::json;
use tools_core::{Registry, Run, Surface};

use super::{call, tests_section};

const FILES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"text\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    ),
    (
        "text.py",
        "def tidy(s):\n    return s.strip()\n\n\ndef shout(s):\n    return tidy(s).upper()\n\n\ndef whisper(s):\n    return tidy(s).lower()\n\n\ndef count(s):\n    return len(s)\n\n\ndef unused(s):\n    return s\n",
    ),
    (
        "tests/test_text.py",
        "from text import count, shout, whisper\n\n\ndef test_shout():\n    assert shout(\" hi \") == \"HI\"\n\n\ndef test_whisper():\n    assert whisper(\" Hi \") == \"hi\"\n\n\ndef test_count():\n    assert count(\"abc\") == 3\n",
    ),
];

/// A workspace holding [`FILES`] with the fs, lsp (pyright), ast and test families.
fn registry(dir: &std::path::Path, trusted: bool) -> (Arc<Run>, Arc<Registry>) {
    // The first write waits for pyright to load the project; later ones take milliseconds.
    // A rename's check ends before its answer, so the walk runs beside it.
    registry_within(
        dir,
        trusted,
        60_000,
        60_000,
        "\n[lsp]\nrename_answer_ms = 600000\n",
    )
}

/// [`registry`] with `[test] on_write_ms = ms` and `on_write_hold_ms = hold_ms`, and `more`
/// at the end of its configuration.
fn registry_within(
    dir: &std::path::Path,
    trusted: bool,
    ms: u64,
    hold_ms: u64,
    more: &str,
) -> (Arc<Run>, Arc<Registry>) {
    super::with_servers_as(
        dir,
        FILES,
        &format!(
            "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n\n[test]\non_write_ms = {ms}\non_write_hold_ms = {hold_ms}\n{more}"
        ),
        trusted,
    )
}

#[tokio::test]
async fn a_write_names_the_tests_reaching_what_it_changed_and_run_affected_runs_them() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none()
        || tools_core::testing::require_binary("pytest", "pytest").is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = registry(dir.path(), true);

    // Nothing written yet: nothing to run.
    let err = registry
        .call(
            Surface::FULL,
            "test",
            json!({"action": "run", "affected": true}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments (`affected`): no write of this run has named the tests it reaches yet (a write of a function in a file whose language has a test runner names them)"
    );

    // `tidy` is used by `shout` and `whisper`, each with its test; `test_count` reaches
    // neither.
    let args = json!({"path": "text.py", "old_string": "return s.strip()", "new_string": "return s.strip() + \".\""});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        concat!(
            "2 tests reach this change to `tidy` (3 symbols followed through pyright-langserver references); `test run` with `affected: true` runs them\n\
         tests/test_text.py:4 tests/test_text.py::test_shout\n\
         tests/test_text.py:8 tests/test_text.py::test_whisper\n",
            not_recorded!()
        )
    );
    assert_eq!(
        super::run_affected(&registry).await,
        "0 passed, 2 failed, 0 skipped in T s — pytest\n\
         tests/test_text.py:5 tests/test_text.py::test_shout — AssertionError: assert 'HI.' == 'HI'\n\
         tests/test_text.py:9 tests/test_text.py::test_whisper — AssertionError: assert 'hi.' == 'hi'"
    );

    // A function no test uses: the search was complete, and says so.
    let args = json!({"path": "text.py", "old_string": "    return s\n", "new_string": "    return s * 2\n"});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        "no test reaches this change to `unused`: the search was complete (1 symbol followed through pyright-langserver references)"
    );
    let err = registry
        .call(
            Surface::FULL,
            "test",
            json!({"action": "run", "affected": true}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments (`affected`): nothing to run: the last write changed `unused`; no test reaches it (the search was complete)"
    );

    // A file that is not code for any runner adds nothing.
    let out = call(
        &registry,
        "write",
        json!({"path": "NOTES.md", "content": "notes\n"}),
    )
    .await;
    assert_eq!(out.sections, Vec::new());

    // A rename changes the declaration and every use: the write of each file names them.
    let args = json!({"file": "text.py", "line": 1, "symbol": "tidy", "new_name": "neat"});
    let out = call(&registry, "lsp_rename", args).await;
    assert_eq!(
        tests_section(&out),
        "2 tests reach this change to `neat`, `shout`, `whisper` (5 symbols followed through pyright-langserver references); `test run` with `affected: true` runs them\n\
         tests/test_text.py:4 tests/test_text.py::test_shout\n\
         tests/test_text.py:8 tests/test_text.py::test_whisper"
    );

    run.close().await;
}

#[tokio::test]
async fn an_untrusted_workspace_names_no_tests() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = registry(dir.path(), false);
    let args = json!({"path": "text.py", "old_string": "return s.strip()", "new_string": "return s.strip() + \".\""});
    let out = call(&registry, "edit", args).await;
    // The whole answer: the edit, and no section naming or excusing tests.
    assert_eq!(out.text, "Edited text.py:2 (1 replacement).");
    assert_eq!(out.sections, Vec::new());
    run.close().await;
}

#[tokio::test]
async fn a_walk_past_its_time_bound_says_where_it_stopped_and_how_to_go_on() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = registry_within(dir.path(), true, 0, 60_000, "");
    // Loaded first, so the write's own changes are found within the grace and the walk
    // itself is what the bound stops.
    let args = json!({"action": "list", "file": "text.py", "line": 13, "symbol": "count"});
    call(&registry, "test", args).await;
    let args = json!({"path": "text.py", "old_string": "return s.strip()", "new_string": "return s.strip() + \".\""});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        concat!(
            "no test found for this change to `tidy`, but the search was not complete\n\
         not complete: time bound reached after following 0 symbols from `tidy`; `test list` with `file: \"text.py\"`, `line: 1`, `symbol: \"tidy\"` follows it all\n",
            not_recorded!()
        )
    );
    run.close().await;
}

#[tokio::test]
async fn a_rename_checked_in_the_background_waits_for_no_walk_and_says_so() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The rename answers at once and checks in the background (`rename_answer_ms = 0`).
    let (run, registry) = registry_within(
        dir.path(),
        true,
        60_000,
        60_000,
        "\n[lsp]\nrename_answer_ms = 0\n",
    );
    let args = json!({"file": "text.py", "line": 1, "symbol": "tidy", "new_name": "neat"});
    let out = call(&registry, "lsp_rename", args).await;
    assert_eq!(
        tests_section(&out),
        concat!(
            "no test found for this change to `neat`, `shout`, `whisper`, but the search was not complete\n\
         not complete: the uses of `neat` (text.py:1), `shout` (text.py:5), `whisper` (text.py:9) were not followed: this answer waits for no walk (its check goes on in the background); `test list` with the `file`, `line` and `symbol` of one follows it\n",
            not_recorded!()
        )
    );
    run.close().await;
}
