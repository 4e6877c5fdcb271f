//! `resolve accept` writes only where the edit was staged, keeps modes, follows no planted
//! link, and serialises with other writers of the run.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tools_core::{CallError, ToolError};

use super::{workspace, workspace_with};

const SRC: &str = "dispose(x)\n";

fn edit_args() -> serde_json::Value {
    json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "python"})
}

fn accept() -> serde_json::Value {
    json!({"edit_id": "edit_1", "action": "accept"})
}

#[tokio::test]
async fn a_folder_swapped_for_an_outside_link_after_staging_is_refused() {
    let ws = workspace(&[("pkg/a.py", SRC)]);
    let outside = tempfile::tempdir().unwrap();
    ws.ok("ast_edit", edit_args()).await;
    // The folder is replaced by a link to an outside folder holding a file with the same
    // content, so the content check alone would pass.
    std::fs::rename(ws.root().join("pkg"), ws.root().join("pkg.old")).unwrap();
    std::fs::write(outside.path().join("a.py"), SRC).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.root().join("pkg")).unwrap();
    let err = ws.call("resolve", accept()).await.unwrap_err();
    let CallError::Tool(ToolError::Rejected(msg)) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("pkg/a.py") && msg.contains("Nothing was written"),
        "{msg}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("a.py")).unwrap(),
        SRC
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    assert_eq!(ws.read("pkg.old/a.py"), SRC);
}

#[tokio::test]
async fn links_planted_at_the_old_temp_names_are_not_followed() {
    let ws = workspace(&[("a.py", SRC)]);
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "safe\n").unwrap();
    ws.ok("ast_edit", edit_args()).await;
    // The names the old writer used: `.NAME.ast-edit-PID-N.tmp`, N counting from 0.
    for n in 0..4 {
        let name = format!(".a.py.ast-edit-{}-{n}.tmp", std::process::id());
        std::os::unix::fs::symlink(&victim, ws.root().join(name)).unwrap();
    }
    ws.ok("resolve", accept()).await;
    assert_eq!(ws.read("a.py"), "x.dispose()\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "safe\n");
}

struct FailSecond(AtomicUsize);

impl tools_ast::WriteFaults for FailSecond {
    fn before_write(&self, _path: &std::path::Path) -> std::io::Result<()> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 1 {
            return Err(std::io::Error::other("disk full (injected)"));
        }
        Ok(())
    }
}

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn modes_are_kept_by_accept_and_by_its_undo() {
    let ws = workspace_with(
        &[("a.py", SRC), ("b.py", SRC)],
        Some(Arc::new(FailSecond(0.into()))),
        "",
    );
    let a = ws.root().join("a.py");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.ok("ast_edit", edit_args()).await;
    let e = ws.err("resolve", accept()).await;
    assert!(e.contains("disk full") && e.contains("restored"), "{e}");
    assert_eq!(ws.read("a.py"), SRC);
    assert_eq!(mode(&a), 0o755);
    // The fault fires once: staged again, the accept writes both and keeps the mode.
    ws.ok("ast_edit", edit_args()).await;
    ws.ok("resolve", json!({"edit_id": "edit_2", "action": "accept"}))
        .await;
    assert_eq!(ws.read("a.py"), "x.dispose()\n");
    assert_eq!(mode(&a), 0o755);
    let names: Vec<_> = std::fs::read_dir(ws.root()).unwrap().collect();
    assert_eq!(names.len(), 2, "temp files left: {names:?}");
}

#[tokio::test]
async fn a_read_only_file_refuses_the_whole_accept() {
    let ws = workspace(&[("a.py", SRC), ("b.py", SRC)]);
    let b = ws.root().join("b.py");
    ws.ok("ast_edit", edit_args()).await;
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = ws.err("resolve", accept()).await;
    assert!(e.contains("read-only") && e.contains("b.py"), "{e}");
    assert_eq!(ws.read("a.py"), SRC);
    assert_eq!(ws.read("b.py"), SRC);
}
