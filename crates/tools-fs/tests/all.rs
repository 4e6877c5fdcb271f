//! The file tools through a real registry on real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;

use std::sync::Arc;

use serde_json::json;
use tools_core::{CallError, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolError};

fn setup() -> (tempfile::TempDir, Arc<Run>, Arc<Registry>) {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
    let reg = RegistryBuilder::new(run.clone())
        .family(tools_fs::family(&run))
        .build()
        .unwrap();
    (dir, run, reg)
}

fn invalid(r: Result<tools_core::ToolOutput, CallError>) -> String {
    match r {
        Err(CallError::Tool(ToolError::InvalidArguments { message, .. })) => message,
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[tokio::test]
async fn read_pages_and_numbers_lines() {
    let (dir, _run, reg) = setup();
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("f.txt"), text).unwrap();
    let out = reg
        .call(
            Surface::PLAN,
            "read",
            json!({"path":"f.txt","offset":10,"limit":5}),
        )
        .await
        .unwrap();
    assert!(out.text.starts_with("    10\tline 10\n"));
    assert!(out.text.contains("    14\tline 14\n"));
    assert!(!out.text.contains("line 15\n"));
    assert!(
        out.text
            .contains("16 more lines not shown (of 30); continue with offset 15")
    );
    assert!(
        invalid(
            reg.call(Surface::FULL, "read", json!({"path":"f.txt","offset":99}))
                .await
        )
        .contains("only 30 lines")
    );
    assert!(
        invalid(
            reg.call(Surface::FULL, "read", json!({"path":"../etc/passwd"}))
                .await
        )
        .contains("outside the workspace")
    );
    std::fs::write(dir.path().join("bin"), [0u8, 1, 2]).unwrap();
    assert!(
        invalid(reg.call(Surface::FULL, "read", json!({"path":"bin"})).await).contains("binary")
    );
}

#[tokio::test]
async fn write_is_atomic_and_reports_touched() {
    let (dir, _run, reg) = setup();
    let out = reg
        .call(
            Surface::FULL,
            "write",
            json!({"path":"deep/new.py","content":"x = 1\n"}),
        )
        .await
        .unwrap();
    assert!(out.text.starts_with("Created deep/new.py"));
    assert_eq!(
        out.touched,
        vec![dir.path().canonicalize().unwrap().join("deep/new.py")]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("deep/new.py")).unwrap(),
        "x = 1\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("deep"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no temp file left behind");
    // The plan surface does not have `write` at all.
    assert!(matches!(
        reg.call(Surface::PLAN, "write", json!({"path":"a","content":""}))
            .await,
        Err(CallError::UnknownTool { .. })
    ));
    // A link planted to the outside (the Windows side plants a junction in the suite's
    // `hostile` tests).
    #[cfg(unix)]
    {
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        assert!(
            invalid(
                reg.call(
                    Surface::FULL,
                    "write",
                    json!({"path":"out/x","content":"x"})
                )
                .await
            )
            .contains("symlink")
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}

#[tokio::test]
async fn edit_refuses_absent_and_ambiguous_strings() {
    let (dir, _run, reg) = setup();
    let f = dir.path().join("a.txt");
    std::fs::write(&f, "one\ntwo\none\n").unwrap();
    let msg = invalid(
        reg.call(
            Surface::FULL,
            "edit",
            json!({"path":"a.txt","old_string":"one","new_string":"1"}),
        )
        .await,
    );
    assert!(
        msg.contains("occurs 2 times") && msg.contains("lines 1, 3"),
        "{msg}"
    );
    let msg = invalid(
        reg.call(
            Surface::FULL,
            "edit",
            json!({"path":"a.txt","old_string":"three","new_string":"3"}),
        )
        .await,
    );
    assert!(msg.contains("does not occur"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "one\ntwo\none\n");
    let out = reg
        .call(
            Surface::FULL,
            "edit",
            json!({"path":"a.txt","old_string":"two","new_string":"2"}),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Edited a.txt:2 (1 replacement).");
    reg.call(
        Surface::FULL,
        "edit",
        json!({"path":"a.txt","old_string":"one","new_string":"1","replace_all":true}),
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "1\n2\n1\n");
    let msg = invalid(
        reg.call(
            Surface::FULL,
            "edit",
            json!({"path":"a.txt","old_string":1,"new_string":"x"}),
        )
        .await,
    );
    assert!(msg.contains("string"), "{msg}");
}

#[tokio::test]
async fn apply_patch_is_all_or_nothing() {
    let (dir, _run, reg) = setup();
    let root = dir.path();
    std::fs::write(root.join("a.py"), "def a():\n    return 1\n").unwrap();
    std::fs::write(root.join("b.py"), "def b():\n    return 2\n").unwrap();
    std::fs::write(root.join("gone.py"), "x\n").unwrap();
    // Third hunk does not apply: nothing may change.
    let bad = "*** Begin Patch\n*** Update File: a.py\n@@\n-    return 1\n+    return 10\n*** Update File: b.py\n@@\n-    return 2\n+    return 20\n@@\n-    return 3\n+    return 30\n*** Add File: c.py\n+c = 3\n*** End Patch\n";
    let msg = invalid(
        reg.call(Surface::FULL, "apply_patch", json!({"patch": bad}))
            .await,
    );
    assert!(
        msg.contains("hunk 2 of `b.py`") && msg.contains("no file was changed"),
        "{msg}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.py")).unwrap(),
        "def a():\n    return 1\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.py")).unwrap(),
        "def b():\n    return 2\n"
    );
    assert!(!root.join("c.py").exists());
    let good = "*** Begin Patch\n*** Update File: a.py\n*** Move to: pkg/a2.py\n@@ def a():\n-    return 1\n+    return 10\n*** Delete File: gone.py\n*** Add File: c.py\n+c = 3\n*** End Patch\n";
    let out = reg
        .call(Surface::FULL, "apply_patch", json!({"patch": good}))
        .await
        .unwrap();
    assert!(out.text.contains("M a.py -> pkg/a2.py"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(root.join("pkg/a2.py")).unwrap(),
        "def a():\n    return 10\n"
    );
    assert!(!root.join("a.py").exists() && !root.join("gone.py").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("c.py")).unwrap(),
        "c = 3\n"
    );
    assert_eq!(
        out.touched.len(),
        2,
        "the moved file and the added file: {:?}",
        out.touched
    );
    let escape = "*** Begin Patch\n*** Add File: ../evil\n+x\n*** End Patch\n";
    assert!(
        invalid(
            reg.call(Surface::FULL, "apply_patch", json!({"patch": escape}))
                .await
        )
        .contains("outside")
    );
}
