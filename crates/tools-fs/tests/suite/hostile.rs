//! What a hostile or odd workspace holds: FIFOs, planted links, a disk that fills up.

use std::time::Duration;

use serde_json::json;

use super::Ws;

fn mkfifo(p: &std::path::Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Fails the test instead of hanging it when a call never answers.
async fn answered<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the call never answered")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_are_refused_for_read_and_write_without_blocking() {
    let ws = Ws::new();
    mkfifo(&ws.path("pipe"));
    // Two reads at once: before, each blocked a worker thread forever.
    let (r1, r2) = answered(async {
        tokio::join!(
            ws.call("read", json!({"path": "pipe"})),
            ws.call("read", json!({"path": "pipe"}))
        )
    })
    .await;
    for r in [r1, r2] {
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("FIFO") && e.contains("not a regular file"),
            "{e}"
        );
    }
    for (tool, args) in [
        ("write", json!({"path": "pipe", "content": "x"})),
        (
            "edit",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch\n"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Delete File: pipe\n*** End Patch\n"}),
        ),
    ] {
        let e = answered(ws.err(tool, args)).await;
        assert!(e.contains("FIFO"), "{tool}: {e}");
    }
    // Still a FIFO, and the server still answers.
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(ws.path("pipe"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    ws.ok("write", json!({"path": "ok.txt", "content": "x"}))
        .await;
}

#[tokio::test]
async fn dangling_links_to_the_outside_are_refused() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("created-through-link.txt");
    std::os::unix::fs::symlink(&target, ws.path("link.txt")).unwrap();
    let e = ws
        .err("write", json!({"path": "link.txt", "content": "x"}))
        .await;
    assert!(e.contains("symlink") && e.contains("outside"), "{e}");
    let patch = "*** Begin Patch\n*** Add File: link.txt\n+x\n*** End Patch\n";
    let e = ws.err("apply_patch", json!({ "patch": patch })).await;
    assert!(e.contains("outside"), "{e}");
    assert!(!target.exists());
    // One that points inside creates the file where it points, like `echo > link` does.
    std::os::unix::fs::symlink("real.txt", ws.path("inner.txt")).unwrap();
    ws.ok("write", json!({"path": "inner.txt", "content": "y\n"}))
        .await;
    assert_eq!(std::fs::read_to_string(ws.path("real.txt")).unwrap(), "y\n");
    assert!(
        std::fs::symlink_metadata(ws.path("inner.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn links_planted_at_temp_names_are_not_followed() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "safe\n").unwrap();
    std::fs::write(ws.path("f.txt"), "old\n").unwrap();
    for guess in [
        ".f.txt.tmp",
        ".agent-tools-f.txt.tmp",
        ".f.txt.rename-1.tmp",
    ] {
        std::os::unix::fs::symlink(&victim, ws.path(guess)).unwrap();
    }
    ws.ok(
        "edit",
        json!({"path": "f.txt", "old_string": "old", "new_string": "new"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(ws.path("f.txt")).unwrap(), "new\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "safe\n");
    assert_eq!(ws.names(".").len(), 4);
}

/// Runs `f` with the file-size limit at `bytes` (SIGXFSZ ignored, so a write past it fails
/// with EFBIG as on a full disk), then restores it.
fn with_file_size_limit<T>(bytes: u64, f: impl FnOnce() -> T) -> T {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid pointers; SIG_IGN is a valid disposition.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut old), 0);
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let lim = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: old.rlim_max,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
    let out = f();
    // SAFETY: restores the limit read above.
    unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &old) };
    out
}

#[test]
fn a_write_that_fills_the_disk_leaves_the_file_and_no_temp_file() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ws = Ws::new();
    std::fs::write(ws.path("f.txt"), "before\n").unwrap();
    let big = "x".repeat(4 << 20);
    let e = with_file_size_limit(1 << 20, || {
        rt.block_on(ws.err("write", json!({"path": "f.txt", "content": big})))
    });
    assert!(
        e.contains("cannot write `f.txt`") && e.contains("unchanged"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("f.txt")).unwrap(),
        "before\n"
    );
    assert_eq!(ws.names("."), ["f.txt"]);
}
