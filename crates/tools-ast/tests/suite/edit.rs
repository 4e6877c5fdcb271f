//! `ast_edit` stages and writes nothing; `resolve` writes all files or none.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tools_core::{CallError, Surface, ToolError};

use super::{workspace, workspace_with};

const A: &str = "def f(a, b):\n    dispose(a + b)\n    dispose(a)\n";
const B: &str = "dispose(x)\n";
const C: &str = "def g():\n    if y:\n        dispose(y.z)\n";

fn edit_args() -> serde_json::Value {
    json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "python"})
}

fn snapshot(root: &Path, names: &[&str]) -> Vec<(String, std::time::SystemTime)> {
    names
        .iter()
        .map(|n| {
            let p = root.join(n);
            (
                std::fs::read_to_string(&p).unwrap(),
                std::fs::metadata(&p).unwrap().modified().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn ast_edit_stages_and_changes_no_file() {
    let ws = workspace(&[("a.py", A), ("b.py", B), ("c.py", C)]);
    let before = snapshot(ws.root(), &["a.py", "b.py", "c.py"]);
    let out = ws.ok("ast_edit", edit_args()).await;
    assert_eq!(snapshot(ws.root(), &["a.py", "b.py", "c.py"]), before);
    assert!(
        out.text
            .starts_with("(proposed) 4 replacement(s) in 3 file(s)"),
        "{}",
        out.text
    );
    assert!(out.text.contains("edit_1"));
    assert!(out.text.contains("+    (a + b).dispose()"), "{}", out.text);
    assert!(out.text.contains("--- a/a.py"), "{}", out.text);
    assert!(out.touched.is_empty());
    let s = out.structured.unwrap();
    assert_eq!(s["edit_id"], "edit_1");
    assert_eq!(s["file_count"], 3);
    assert_eq!(
        s["files"][0]["sha256"],
        tools_ast::content_hash(A.as_bytes())
    );
    let out2 = ws.ok("ast_edit", edit_args()).await;
    assert_eq!(out2.structured.unwrap()["edit_id"], "edit_2");
}

#[tokio::test]
async fn accept_writes_everything_and_reports_touched() {
    let ws = workspace(&[("a.py", A), ("b.py", B), ("c.py", C)]);
    ws.ok("ast_edit", edit_args()).await;
    let out = ws
        .ok("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert_eq!(
        ws.read("a.py"),
        "def f(a, b):\n    (a + b).dispose()\n    a.dispose()\n"
    );
    assert_eq!(ws.read("b.py"), "x.dispose()\n");
    assert_eq!(
        ws.read("c.py"),
        "def g():\n    if y:\n        y.z.dispose()\n"
    );
    let root = ws.root().canonicalize().unwrap();
    assert_eq!(
        out.touched,
        vec![root.join("a.py"), root.join("b.py"), root.join("c.py")]
    );
    // Already resolved, unknown, and a bad action.
    let e = ws
        .err("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert!(e.contains("already accepted"), "{e}");
    let e = ws
        .err("resolve", json!({"edit_id": "edit_7", "action": "accept"}))
        .await;
    assert!(e.contains("no staged change `edit_7`"), "{e}");
    let e = ws
        .err("resolve", json!({"edit_id": "edit_1", "action": "maybe"}))
        .await;
    assert!(e.contains("action"), "{e}");
}

#[tokio::test]
async fn discard_writes_nothing() {
    let ws = workspace(&[("a.py", A)]);
    ws.ok("ast_edit", edit_args()).await;
    let out = ws
        .ok("resolve", json!({"edit_id": "edit_1", "action": "discard"}))
        .await;
    assert!(out.touched.is_empty());
    assert_eq!(ws.read("a.py"), A);
    let e = ws
        .err("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert!(e.contains("already discarded"), "{e}");
}

#[tokio::test]
async fn a_file_changed_after_staging_rejects_the_whole_change() {
    let ws = workspace(&[("a.py", A), ("b.py", B), ("c.py", C)]);
    ws.ok("ast_edit", edit_args()).await;
    std::fs::write(ws.root().join("b.py"), "dispose(x)\ndispose(q)\n").unwrap();
    let err = ws
        .call("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await
        .unwrap_err();
    let CallError::Tool(ToolError::Rejected(msg)) = err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("b.py") && msg.contains("Nothing was written"),
        "{msg}"
    );
    assert_eq!(ws.read("a.py"), A);
    assert_eq!(ws.read("c.py"), C);
    assert_eq!(ws.read("b.py"), "dispose(x)\ndispose(q)\n");
}

/// Fails the `n`th write, letting the others through.
struct FailNth {
    calls: AtomicUsize,
    n: usize,
}

impl tools_ast::WriteFaults for FailNth {
    fn before_write(&self, _path: &Path) -> std::io::Result<()> {
        if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            return Err(std::io::Error::other("disk full (injected)"));
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_failed_write_part_way_leaves_all_three_files_unchanged() {
    let writer = Arc::new(FailNth {
        calls: 0.into(),
        n: 2,
    });
    let ws = workspace_with(&[("a.py", A), ("b.py", B), ("c.py", C)], Some(writer), "");
    ws.ok("ast_edit", edit_args()).await;
    let e = ws
        .err("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert!(e.contains("disk full") && e.contains("restored"), "{e}");
    assert_eq!(ws.read("a.py"), A);
    assert_eq!(ws.read("b.py"), B);
    assert_eq!(ws.read("c.py"), C);
    let names: Vec<_> = std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "temp files left: {names:?}");
}

#[tokio::test]
async fn rewrite_errors_and_no_op_edits() {
    let ws = workspace(&[("a.py", A)]);
    let e = ws
        .err(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "$Y.dispose()", "language": "python"}),
        )
        .await;
    assert!(e.contains("`$Y`") && e.contains("does not bind"), "{e}");
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "nothing($X)", "rewrite": "$X", "language": "python"}),
        )
        .await;
    assert!(out.text.starts_with("no change"), "{}", out.text);
    assert_eq!(out.structured.unwrap()["edit_id"], serde_json::Value::Null);
    // Rewriting to the same text stages nothing either.
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "dispose($X)", "language": "python"}),
        )
        .await;
    assert!(out.text.starts_with("no change"), "{}", out.text);
}

#[tokio::test]
async fn staged_edits_are_bounded_per_run() {
    let ws = workspace_with(&[("a.py", A)], None, "[ast]\nmax_pending_edits = 2\n");
    ws.ok("ast_edit", edit_args()).await;
    ws.ok("ast_edit", edit_args()).await;
    let e = ws.err("ast_edit", edit_args()).await;
    assert!(
        e.contains("limit per run is 2") && e.contains("edit_1, edit_2"),
        "{e}"
    );
    ws.ok("resolve", json!({"edit_id": "edit_1", "action": "discard"}))
        .await;
    let out = ws.ok("ast_edit", edit_args()).await;
    assert_eq!(out.structured.unwrap()["edit_id"], "edit_3");
}

#[tokio::test]
async fn write_tools_are_absent_on_read_surfaces() {
    let ws = workspace(&[("a.py", A)]);
    for surface in [Surface::PLAN, Surface::READ_ONLY] {
        let names: Vec<_> = ws
            .registry
            .list(surface)
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, vec!["ast_grep"]);
        let e = ws
            .registry
            .call(surface, "ast_edit", edit_args())
            .await
            .unwrap_err();
        assert!(matches!(e, CallError::UnknownTool { .. }));
    }
    let names: Vec<_> = ws
        .registry
        .list(Surface::FULL)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, vec!["ast_edit", "ast_grep", "resolve"]);
}

#[tokio::test]
async fn dart_rewrite_keeps_the_statement() {
    let ws = workspace(&[(
        "a.dart",
        "void m() {\n  dispose(a ?? b);\n  dispose(c);\n}\n",
    )]);
    ws.ok(
        "ast_edit",
        json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()"}),
    )
    .await;
    ws.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"}))
        .await;
    assert_eq!(
        ws.read("a.dart"),
        "void m() {\n  (a ?? b).dispose();\n  c.dispose();\n}\n"
    );
}
