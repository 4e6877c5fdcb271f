//! Many calls on one file at once: every write lands or is refused clearly, none is lost.

use serde_json::json;

use super::Ws;

const N: usize = 40;

fn numbered(n: usize) -> String {
    (0..n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_concurrent_edits_of_one_file_all_land() {
    let ws = Ws::new();
    std::fs::write(ws.path("f.txt"), numbered(N)).unwrap();
    let calls = (0..N).map(|i| {
        ws.call(
            "edit",
            json!({"path": "f.txt", "old_string": format!("line {i}\n"), "new_string": format!("edited {i}\n")}),
        )
    });
    let results = futures::future::join_all(calls).await;
    for r in &results {
        assert!(r.is_ok(), "{r:?}");
    }
    let text = std::fs::read_to_string(ws.path("f.txt")).unwrap();
    let expected: String = (0..N).map(|i| format!("edited {i}\n")).collect();
    assert_eq!(text, expected);
    assert_eq!(ws.names("."), ["f.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_concurrent_patches_of_one_file_all_land() {
    let ws = Ws::new();
    std::fs::write(ws.path("f.txt"), numbered(N)).unwrap();
    let calls = (0..N).map(|i| {
        let patch = format!(
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-line {i}\n+patched {i}\n*** End Patch\n"
        );
        ws.call("apply_patch", json!({ "patch": patch }))
    });
    for r in futures::future::join_all(calls).await {
        assert!(r.is_ok(), "{r:?}");
    }
    let expected: String = (0..N).map(|i| format!("patched {i}\n")).collect();
    assert_eq!(std::fs::read_to_string(ws.path("f.txt")).unwrap(), expected);
}

/// A whole-file write racing a patch: both succeed, and the result is what one of the two
/// orders gives — never the patch applied to the content from before the write.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_racing_a_patch_is_never_lost() {
    let ws = Ws::new();
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch\n";
    for round in 0..20 {
        std::fs::write(ws.path("f.txt"), "a\nb\n").unwrap();
        let (w, p) = tokio::join!(
            ws.call(
                "write",
                json!({"path": "f.txt", "content": "a\nb\nwritten\n"})
            ),
            ws.call("apply_patch", json!({ "patch": patch })),
        );
        assert!(w.is_ok(), "round {round}: {w:?}");
        assert!(p.is_ok(), "round {round}: {p:?}");
        let now = std::fs::read_to_string(ws.path("f.txt")).unwrap();
        assert!(
            now == "a\nb\nwritten\n" || now == "a\nB\nwritten\n",
            "round {round}: the write was lost: {now:?}"
        );
    }
}

/// `write` with the hash `read` reported: refused (with the actual hash) once the file
/// changed, accepted while it has not.
#[tokio::test]
async fn write_with_expected_sha256_refuses_a_changed_file() {
    let ws = Ws::new();
    std::fs::write(ws.path("f.txt"), "v1\n").unwrap();
    let read = ws.ok("read", json!({"path": "f.txt"})).await;
    let seen = read.structured.unwrap()["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    ws.ok(
        "edit",
        json!({"path": "f.txt", "old_string": "v1", "new_string": "v2"}),
    )
    .await;
    let e = ws
        .err(
            "write",
            json!({"path": "f.txt", "content": "stale\n", "expected_sha256": seen}),
        )
        .await;
    let now = ws
        .ok("read", json!({"path": "f.txt"}))
        .await
        .structured
        .unwrap()["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        e.contains("changed since it was read") && e.contains(&now),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(ws.path("f.txt")).unwrap(), "v2\n");
    let out = ws
        .ok(
            "write",
            json!({"path": "f.txt", "content": "v3\n", "expected_sha256": now.to_uppercase()}),
        )
        .await;
    assert!(out.text.starts_with("Replaced f.txt"), "{}", out.text);
    let e = ws
        .err(
            "write",
            json!({"path": "new.txt", "content": "x", "expected_sha256": now}),
        )
        .await;
    assert!(e.contains("does not exist"), "{e}");
    assert!(!ws.path("new.txt").exists());
    let e = ws
        .err(
            "write",
            json!({"path": "f.txt", "content": "x", "expected_sha256": "abc"}),
        )
        .await;
    assert!(e.contains("expected_sha256"), "{e}");
}
