//! Diagnostics on write through a real server: only new diagnostics, keyed without
//! position; gone ones counted; other files' breakage reported; no noise without a server.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[allow(clippy::too_many_arguments)]
async fn ledger_sequence(
    p: &Project,
    file: &str,
    v1: &str,
    v2: &str,
    v3: &str,
    v4: &str,
    first: &str,
    second: &str,
) {
    // 1. An error appears: reported.
    let s = p.write_tool(file, v1).await.expect("a diagnostics section");
    has(&s, first);
    has(&s, "new diagnostic(s)");
    // 2. The same error four lines lower: not reported again.
    let s = p.write_tool(file, v2).await;
    assert!(s.as_deref().is_none_or(|s| !s.contains(first)), "{s:?}");
    // 3. A different error added: only that one.
    let s = p.write_tool(file, v3).await.expect("a diagnostics section");
    has(&s, second);
    assert!(!s.contains(first), "{s}");
    // 4. Everything fixed: nothing new, and which ones are gone.
    let s = p.write_tool(file, v4).await.expect("a diagnostics section");
    assert!(!s.contains("new diagnostic(s)"), "{s}");
    has(&s, "no new diagnostics after this write");
    has(&s, "2 earlier diagnostic(s) are gone");
    has(&s, first);
    has(&s, second);
}

#[tokio::test]
async fn pyright_reports_only_new_diagnostics_on_write() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"d\"\nversion = \"0\"\n",
            ),
            ("lib.py", "def helper(x: int) -> int:\n    return x + 1\n"),
            ("app.py", "from lib import helper\n\nprint(helper(1))\n"),
        ],
        // pyright alone: its ruff companion would add findings of its own.
        "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n[lsp.servers.ruff]\nenabled = false\n",
    );
    ledger_sequence(
        &p,
        "mod.py",
        "x = 1\nprint(undefined_one)\n",
        "x = 1\n\n\n\n\nprint(undefined_one)\n",
        "x = 1\n\n\n\n\nprint(undefined_one)\nprint(undefined_two)\n",
        "x = 1\nprint(x)\n",
        "\"undefined_one\" is not defined",
        "\"undefined_two\" is not defined",
    )
    .await;
    // Cross-file: app.py is open in the server; breaking lib.py breaks app.py.
    p.ok(json!({"action": "diagnostics", "file": "app.py"}))
        .await;
    let s = p
        .write_tool(
            "lib.py",
            "def renamed_helper(x: int) -> int:\n    return x + 1\n",
        )
        .await
        .expect("a diagnostics section");
    has(&s, "app.py:1:");
    has(&s, "helper");
    // A file with no server: the write result is unchanged.
    assert_eq!(p.write_tool("notes.txt", "hello\n").await, None);
    p.close_and_check().await;
}

#[tokio::test]
async fn clangd_reports_only_new_diagnostics_on_write() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::new(
        &[("compile_flags.txt", "-std=c11\n")],
        "[lsp]\ndiagnostics_wait_ms = 30000\n",
    );
    ledger_sequence(
        &p,
        "m.c",
        "int f(void) { return nope; }\n",
        "\n\n\n\nint f(void) { return nope; }\n",
        "\n\n\n\nint f(void) { return nope; }\nint g(void) { return other; }\n",
        "int f(void) { return 0; }\n",
        "Use of undeclared identifier 'nope'",
        "Use of undeclared identifier 'other'",
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn diagnostics_pending_while_the_server_cannot_answer() {
    // A server that never publishes: the write reports "pending", not silence.
    let p = Project::new(
        &[("fake.toml", "")],
        &super::fake_server_config("init-only", "diagnostics_wait_ms = 500\n"),
    );
    let s = p.write_tool("a.fake", "x\n").await.expect("a section");
    has(&s, "diagnostics pending");
    p.close_and_check().await;
}

#[tokio::test]
async fn late_diagnostics_are_attributed_to_the_write_that_caused_them() {
    // A server that publishes 1.5 s after each change, against a 300 ms bound: the first
    // write's result says pending; its errors, arriving later, are named as that write's
    // in the next write's result — never as the next write's own.
    let p = Project::new(
        &[("fake.toml", "")],
        &super::fake_server_config("late-publish", "diagnostics_wait_ms = 300\n"),
    );
    // Started first (its start is not what this test is about).
    p.write("a.fake", "ok\n");
    let out = p
        .ok(json!({"action": "diagnostics", "file": "a.fake"}))
        .await;
    has(&out, "no diagnostics");
    let s = p
        .write_tool("a.fake", "ok\nbad one\n")
        .await
        .expect("a section");
    has(&s, "diagnostics pending");
    has(&s, "#1");
    assert!(!s.contains("late error"), "{s}");
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let s = p.write_tool("b.fake", "fine\n").await.expect("a section");
    has(&s, "Late diagnostics of the earlier write #1 (a.fake)");
    has(&s, "a.fake:2:1 error late error: bad one");
    assert!(!s.contains("new diagnostic(s) after this write"), "{s}");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_pass_the_server_announces_with_its_first_publish_belongs_to_the_write() {
    // The server publishes the written file at once and, in the same breath, creates a
    // progress token it begins only 0.8 s later (pyright, when analysis goes on after its
    // first slice): longer than any quiet window. The error that pass finds in another file
    // is this write's, in this write's result.
    let p = Project::new(
        &[("fake.toml", ""), ("other.fake", "uses a\n")],
        &super::fake_server_config("announced-pass", ""),
    );
    p.write("a.fake", "ok\n");
    let out = p
        .ok(json!({"action": "diagnostics", "file": "a.fake"}))
        .await;
    has(&out, "no diagnostics");
    let s = p
        .write_tool("a.fake", "ok\nbreaks-other\n")
        .await
        .expect("a section");
    has(&s, "1 new diagnostic(s) after this write");
    has(
        &s,
        "other.fake:1:1 error dependent error: the other file is broken",
    );
    assert!(!s.contains("pending"), "{s}");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_first_analysis_that_begins_long_after_it_was_announced_is_the_state_before() {
    // The write is the run's first call. The server publishes an empty list for every file
    // and announces its analysis in the same breath, but begins it only 2.5 s later (pyright
    // busy with its first slice on a loaded machine) — past the 2 s an announcement counts
    // as work under way anywhere else. Taken in that gap, the state before was a workspace
    // of empty lists, and the old error of the file nobody touched was called new.
    let p = Project::new(
        &[
            ("fake.toml", ""),
            ("a.fake", "ok\n"),
            ("other.fake", "bad old code\n"),
        ],
        &super::fake_server_config("slow-first-analysis", "diagnostics_wait_ms = 30000\n"),
    );
    let s = p
        .write_tool("a.fake", "ok\nbad new code\n")
        .await
        .expect("a section");
    assert_eq!(
        s,
        "1 new diagnostic(s) after this write:\na.fake:2:1 error error: bad new code"
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_costs_a_write_only_the_diagnostics_wait() {
    let p = Project::new(
        &[("fake.toml", "")],
        &super::fake_server_config(
            "silent",
            "diagnostics_wait_ms = 300\nstart_timeout_ms = 60000\n",
        ),
    );
    let s = p.write_tool("a.fake", "x\n").await.expect("a section");
    has(&s, "still starting");
    has(&s, "no answer to `initialize` within 300 ms");
    p.run.close().await;
}

#[tokio::test]
async fn a_document_evicted_and_opened_again_is_not_judged_by_its_old_texts_check() {
    // One document open at a time, and a server that publishes a document's first text
    // only when the document is opened again (its check was still running when the close
    // came): `a.fake` is opened with an error, evicted by the write of `b.fake`, and
    // written clean. Opened again at the version its first text had, that stale check
    // would pass for the clean text's, and the old error would be this write's news.
    let p = Project::new(
        &[("fake.toml", "")],
        &super::fake_server_config(
            "stale-on-reopen",
            "diagnostics_wait_ms = 3000\nmax_open_documents = 1\n",
        ),
    );
    // Its check held back, the first write's result says pending.
    let first = p
        .write_tool("a.fake", "bad first\n")
        .await
        .expect("a section");
    has(&first, "diagnostics pending");
    // `b.fake` checked clean: nothing to report (and `a.fake` is closed for it).
    assert_eq!(p.write_tool("b.fake", "fine\n").await, None);
    // The clean text of `a.fake`: nothing new either, though the old text's check came
    // first after its opening.
    assert_eq!(p.write_tool("a.fake", "ok\n").await, None);
    assert_eq!(
        p.ok(json!({"action": "diagnostics", "file": "a.fake"}))
            .await,
        "no diagnostics in a.fake (python3)"
    );
    p.close_and_check().await;
}
