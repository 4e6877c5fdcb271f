//! Files keep what they were: line endings, BOM, mode, hard links; read-only is refused.

#[cfg(unix)]
use std::os::unix::fs::MetadataExt;

use serde_json::json;

use super::Ws;
#[cfg(unix)]
use super::{mode, set_mode};

#[tokio::test]
async fn edit_and_apply_patch_keep_crlf_and_bom() {
    let ws = Ws::new();
    let f = ws.path("win.txt");
    std::fs::write(&f, "\u{feff}first\r\nsecond\r\nthird\r\n").unwrap();
    // The model writes `\n`; the match works and inserted lines get `\r\n`.
    ws.ok(
        "edit",
        json!({"path": "win.txt", "old_string": "first\nsecond\n", "new_string": "first\ninserted\nsecond\n"}),
    )
    .await;
    assert_eq!(
        std::fs::read(&f).unwrap(),
        "\u{feff}first\r\ninserted\r\nsecond\r\nthird\r\n".as_bytes()
    );
    let patch = "*** Begin Patch\n*** Update File: win.txt\n@@\n first\n-inserted\n+patched\n+added\n second\n*** End Patch\n";
    ws.ok("apply_patch", json!({ "patch": patch })).await;
    assert_eq!(
        std::fs::read(&f).unwrap(),
        "\u{feff}first\r\npatched\r\nadded\r\nsecond\r\nthird\r\n".as_bytes()
    );
    // A patch's first hunk may touch the first line of a file with a BOM.
    let patch = "*** Begin Patch\n*** Update File: win.txt\n@@\n-first\n+zeroth\n*** End Patch\n";
    ws.ok("apply_patch", json!({ "patch": patch })).await;
    assert_eq!(
        std::fs::read(&f).unwrap(),
        "\u{feff}zeroth\r\npatched\r\nadded\r\nsecond\r\nthird\r\n".as_bytes()
    );
}

#[tokio::test]
async fn a_file_with_mixed_line_endings_is_edited_byte_for_byte() {
    let ws = Ws::new();
    let f = ws.path("mixed.txt");
    std::fs::write(&f, "unix\nwin one\r\nwin two\r\nunix again\n").unwrap();
    ws.ok(
        "edit",
        json!({"path": "mixed.txt", "old_string": "win one\nwin two", "new_string": "win one\nnew\nwin two"}),
    )
    .await;
    assert_eq!(
        std::fs::read(&f).unwrap(),
        b"unix\nwin one\r\nnew\r\nwin two\r\nunix again\n"
    );
    ws.ok(
        "edit",
        json!({"path": "mixed.txt", "old_string": "unix again", "new_string": "last"}),
    )
    .await;
    assert_eq!(
        std::fs::read(&f).unwrap(),
        b"unix\nwin one\r\nnew\r\nwin two\r\nlast\n"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn modes_are_kept_and_new_files_follow_the_umask() {
    let ws = Ws::new();
    let exe = ws.path("run.sh");
    std::fs::write(&exe, "#!/bin/sh\necho one\n").unwrap();
    set_mode(&exe, 0o755);
    ws.ok(
        "edit",
        json!({"path": "run.sh", "old_string": "one", "new_string": "two"}),
    )
    .await;
    assert_eq!(mode(&exe), 0o755);
    ws.ok(
        "write",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho three\n"}),
    )
    .await;
    assert_eq!(mode(&exe), 0o755);
    // A moved executable stays executable.
    let patch = "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo three\n+echo four\n*** End Patch\n";
    ws.ok("apply_patch", json!({ "patch": patch })).await;
    assert_eq!(mode(&ws.path("bin/run.sh")), 0o755);
    assert!(!exe.exists());
    // New files: 0666 minus the umask, as `touch` makes them.
    // SAFETY: umask is swapped and put back at once.
    let umask = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    } as u32;
    ws.ok("write", json!({"path": "new.txt", "content": "x\n"}))
        .await;
    assert_eq!(mode(&ws.path("new.txt")), 0o666 & !umask);
    let patch = "*** Begin Patch\n*** Add File: added.txt\n+x\n*** End Patch\n";
    ws.ok("apply_patch", json!({ "patch": patch })).await;
    assert_eq!(mode(&ws.path("added.txt")), 0o666 & !umask);
    assert_eq!(ws.names("."), ["added.txt", "bin", "new.txt"]);
}

#[cfg(unix)]
#[tokio::test]
async fn hard_links_stay_linked_and_read_only_files_are_refused() {
    let ws = Ws::new();
    let a = ws.path("a.txt");
    let b = ws.path("b.txt");
    std::fs::write(&a, "shared\n").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    ws.ok(
        "edit",
        json!({"path": "a.txt", "old_string": "shared", "new_string": "edited"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "edited\n");
    assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 2);
    let patch = "*** Begin Patch\n*** Update File: b.txt\n@@\n-edited\n+patched\n*** End Patch\n";
    ws.ok("apply_patch", json!({ "patch": patch })).await;
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "patched\n");
    assert_eq!(
        std::fs::metadata(&a).unwrap().ino(),
        std::fs::metadata(&b).unwrap().ino()
    );

    let ro = ws.path("ro.txt");
    std::fs::write(&ro, "keep\n").unwrap();
    set_mode(&ro, 0o444);
    let e = ws
        .err(
            "edit",
            json!({"path": "ro.txt", "old_string": "keep", "new_string": "x"}),
        )
        .await;
    assert!(e.contains("read-only") && e.contains("0444"), "{e}");
    let e = ws
        .err("write", json!({"path": "ro.txt", "content": "x"}))
        .await;
    assert!(e.contains("read-only"), "{e}");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-patched\n+lost\n*** Delete File: ro.txt\n*** End Patch\n";
    let e = ws.err("apply_patch", json!({ "patch": patch })).await;
    assert!(
        e.contains("read-only") && e.contains("no file was changed"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "patched\n");
}
