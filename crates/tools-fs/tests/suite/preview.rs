//! `preview: true`: nothing touches the disk, the change is staged under a `change_id`
//! in the run's store, and accepting it applies it all or nothing against the content it
//! was computed from. (The predicted diagnostics need a language server: the tools-lsp
//! suite and the end-to-end tests check those.)

use serde_json::json;
use tools_core::{NoWriteFaults, content_hash};
use tools_core::{PathLocks, StagedChanges};

use super::Ws;

fn change_id(out: &tools_core::ToolOutput) -> String {
    out.structured.as_ref().unwrap()["change_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn accept(ws: &Ws, id: &str) -> Result<tools_core::Accepted, tools_core::ToolError> {
    StagedChanges::for_run(&ws.run).accept(
        id,
        ws.run.workspace(),
        &PathLocks::for_run(&ws.run),
        &NoWriteFaults,
    )
}

fn hash(ws: &Ws, rel: &str) -> String {
    content_hash(&std::fs::read(ws.path(rel)).unwrap())
}

#[tokio::test]
async fn previews_write_nothing_and_accept_applies_what_was_previewed() {
    let ws = Ws::new();
    std::fs::write(ws.path("a.py"), "x = 1\r\ny = 2\r\n").unwrap();
    let before = hash(&ws, "a.py");

    let out = ws
        .ok(
            "write",
            json!({"path": "a.py", "content": "x = 3\n", "preview": true}),
        )
        .await;
    assert!(
        out.touched.is_empty(),
        "a preview touched {:?}",
        out.touched
    );
    assert!(
        out.text.contains("(preview) would replace a.py"),
        "{}",
        out.text
    );
    assert!(out.text.contains("change_id"), "{}", out.text);
    // No observer is wired here: the answer says no server covers the files.
    assert!(
        out.text.starts_with("no diagnostics predicted"),
        "{}",
        out.text
    );
    assert_eq!(hash(&ws, "a.py"), before);
    let write_id = change_id(&out);

    let out = ws
        .ok(
            "edit",
            json!({"path": "a.py", "old_string": "y = 2", "new_string": "y = 20", "preview": true}),
        )
        .await;
    assert!(
        out.text.contains("would edit a.py:2 (1 replacement)"),
        "{}",
        out.text
    );
    assert_eq!(hash(&ws, "a.py"), before);
    let edit_id = change_id(&out);
    assert_ne!(edit_id, write_id);

    let out = ws
        .ok(
            "write",
            json!({"path": "new/b.py", "content": "b = 1\n", "preview": true}),
        )
        .await;
    assert!(out.text.contains("would create new/b.py"), "{}", out.text);
    assert!(!ws.path("new").exists());
    let create_id = change_id(&out);

    // The edit keeps the file's CRLF, exactly as the edit itself would.
    accept(&ws, &edit_id).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path("a.py")).unwrap(),
        "x = 1\r\ny = 20\r\n"
    );
    // The write was computed from the old content: the file changed since, so it is refused.
    let e = accept(&ws, &write_id).unwrap_err().to_string();
    assert!(e.contains("a.py (content changed)"), "{e}");
    assert!(e.contains("Run write again"), "{e}");
    assert_eq!(
        std::fs::read_to_string(ws.path("a.py")).unwrap(),
        "x = 1\r\ny = 20\r\n"
    );
    accept(&ws, &create_id).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path("new/b.py")).unwrap(),
        "b = 1\n"
    );
}

#[tokio::test]
async fn a_previewed_patch_is_rejected_whole_when_one_file_changed() {
    let ws = Ws::new();
    std::fs::write(ws.path("a.txt"), "one\n").unwrap();
    std::fs::write(ws.path("b.txt"), "two\n").unwrap();
    std::fs::write(ws.path("gone.txt"), "bye\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-two\n+TWO\n\
                 *** Add File: c.txt\n+three\n*** Delete File: gone.txt\n*** End Patch";
    let out = ws
        .ok("apply_patch", json!({"patch": patch, "preview": true}))
        .await;
    assert!(
        out.text.contains("the patch would change 4 files"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("1 file deletion(s) are staged but not previewed"),
        "{}",
        out.text
    );
    assert!(out.touched.is_empty());
    assert!(!ws.path("c.txt").exists() && ws.path("gone.txt").exists());
    let id = change_id(&out);
    std::fs::write(ws.path("b.txt"), "someone else\n").unwrap();
    let e = accept(&ws, &id).unwrap_err().to_string();
    assert!(e.contains("b.txt (content changed)"), "{e}");
    assert_eq!(std::fs::read_to_string(ws.path("a.txt")).unwrap(), "one\n");
    assert!(!ws.path("c.txt").exists() && ws.path("gone.txt").exists());
    // Previewed again against the current files, it applies whole.
    let patch = patch.replace("-two\n+TWO", "-someone else\n+TWO");
    let out = ws
        .ok("apply_patch", json!({"patch": patch, "preview": true}))
        .await;
    let done = accept(&ws, &change_id(&out)).unwrap();
    assert_eq!(done.deleted, vec![ws.run.root().join("gone.txt")]);
    assert_eq!(std::fs::read_to_string(ws.path("b.txt")).unwrap(), "TWO\n");
    assert_eq!(
        std::fs::read_to_string(ws.path("c.txt")).unwrap(),
        "three\n"
    );
    assert!(!ws.path("gone.txt").exists());
}

#[cfg(unix)]
#[tokio::test]
async fn bad_previews_are_clear_errors_and_stage_nothing() {
    let ws = Ws::new();
    std::fs::write(ws.path("real.py"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink(ws.path("real.py"), ws.path("link.py")).unwrap();
    let e = ws
        .err(
            "write",
            json!({"path": "../outside.py", "content": "x", "preview": true}),
        )
        .await;
    assert!(e.contains("outside the workspace"), "{e}");
    // A link inside the workspace is previewed as the file it names, as a write would write it.
    let out = ws
        .ok(
            "write",
            json!({"path": "link.py", "content": "x = 2\n", "preview": true}),
        )
        .await;
    assert!(out.text.contains("would replace real.py"), "{}", out.text);
    StagedChanges::for_run(&ws.run)
        .discard(&change_id(&out))
        .unwrap();
    // A link out of the workspace is refused, for a write and an edit alike.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("t.py"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("t.py"), ws.path("out.py")).unwrap();
    let e = ws
        .err(
            "write",
            json!({"path": "out.py", "content": "x = 2\n", "preview": true}),
        )
        .await;
    assert!(e.contains("outside the workspace"), "{e}");
    let e = ws
        .err(
            "edit",
            json!({"path": "out.py", "old_string": "x", "new_string": "y", "preview": true}),
        )
        .await;
    assert!(e.contains("outside the workspace"), "{e}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("t.py")).unwrap(),
        "x = 1\n"
    );
    let huge = "x".repeat(tools_core::MAX_PREVIEW_FILE_BYTES + 1);
    let e = ws
        .err(
            "write",
            json!({"path": "big.py", "content": huge, "preview": true}),
        )
        .await;
    assert!(
        e.contains("over the") && e.contains("limit of a preview"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("real.py")).unwrap(),
        "x = 1\n"
    );
    assert!(!ws.path("big.py").exists());
    // Nothing of the refused ones was staged: the next change is the second.
    let out = ws
        .ok(
            "write",
            json!({"path": "real.py", "content": "x = 2\n", "preview": true}),
        )
        .await;
    assert_eq!(change_id(&out), "change_2");
}

#[cfg(unix)]
#[tokio::test]
async fn a_previewed_move_keeps_the_files_mode_when_accepted() {
    let ws = Ws::new();
    std::fs::write(ws.path("run.sh"), "echo one\n").unwrap();
    super::set_mode(&ws.path("run.sh"), 0o750);
    let patch = "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo one\n+echo two\n*** End Patch";
    let out = ws
        .ok("apply_patch", json!({"patch": patch, "preview": true}))
        .await;
    assert!(ws.path("run.sh").exists() && !ws.path("bin").exists());
    accept(&ws, &change_id(&out)).unwrap();
    assert!(!ws.path("run.sh").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path("bin/run.sh")).unwrap(),
        "echo two\n"
    );
    assert_eq!(super::mode(&ws.path("bin/run.sh")), 0o750);
}
