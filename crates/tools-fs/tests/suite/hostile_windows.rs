//! What a hostile or odd workspace holds on Windows: names Windows reads as devices or
//! streams, a junction planted to the outside, read-only and linked files.

use serde_json::json;

use super::Ws;

/// Makes a junction at `at` to the folder `target` the way a user would (`mklink /J`,
/// which needs no privilege).
fn plant_junction(at: &std::path::Path, target: &std::path::Path) {
    let status = std::process::Command::new("cmd")
        .args(["/C", "mklink", "/J"])
        .arg(at)
        .arg(target)
        .status()
        .unwrap();
    assert!(
        status.success() && at.exists(),
        "no junction at {}",
        at.display()
    );
}

#[tokio::test]
async fn reserved_device_names_and_streams_are_refused_for_write_and_read() {
    let ws = Ws::new();
    for (path, name, why) in [
        (
            "CON",
            "CON",
            "is a device name Windows reserves in every folder",
        ),
        (
            "nul",
            "nul",
            "is a device name Windows reserves in every folder",
        ),
        (
            "aux.txt",
            "aux.txt",
            "is a device name Windows reserves in every folder",
        ),
        (
            "sub/Com1.log",
            "Com1.log",
            "is a device name Windows reserves in every folder",
        ),
        (
            "LPT9/a.txt",
            "LPT9",
            "is a device name Windows reserves in every folder",
        ),
        (
            "notes.txt:hidden",
            "notes.txt:hidden",
            "contains `:`, which Windows reads as an alternate data stream",
        ),
        (
            "trailing.",
            "trailing.",
            "ends in a dot or space, which Windows strips (it would name another file)",
        ),
    ] {
        let e = ws.err("write", json!({"path": path, "content": "x"})).await;
        assert_eq!(
            e,
            format!(
                "invalid arguments (`path`): `{path}` cannot be used: `{name}` {why}; nothing was \
                 read or written"
            ),
            "{path}"
        );
    }
    std::fs::write(ws.path("notes.txt"), "kept\n").unwrap();
    let e = ws.err("read", json!({"path": "aux.txt"})).await;
    assert_eq!(
        e,
        "invalid arguments (`path`): `aux.txt` cannot be used: `aux.txt` is a device name Windows \
         reserves in every folder; nothing was read or written"
    );
    assert_eq!(ws.names(""), ["notes.txt"], "nothing else was made");
    assert_eq!(
        std::fs::read_to_string(ws.path("notes.txt")).unwrap(),
        "kept\n"
    );
}

#[cfg_attr(
    wine,
    ignore = "Wine 8 cannot make a junction or symbolic link (mklink /J and CreateSymbolicLinkW \
              make nothing there)"
)]
#[tokio::test]
async fn a_junction_planted_to_the_outside_is_never_written_through() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    plant_junction(&ws.path("out"), outside.path());
    let e = ws
        .err("write", json!({"path": "out/x.txt", "content": "x"}))
        .await;
    assert!(e.contains("out"), "{e}");
    let e = ws.err("read", json!({"path": "out/x.txt"})).await;
    assert!(e.contains("out"), "{e}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn read_only_files_are_refused_and_linked_files_written_in_place() {
    let ws = Ws::new();
    std::fs::write(ws.path("ro.txt"), "keep\n").unwrap();
    let mut perms = std::fs::metadata(ws.path("ro.txt")).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(ws.path("ro.txt"), perms).unwrap();
    let e = ws
        .err("write", json!({"path": "ro.txt", "content": "x"}))
        .await;
    assert_eq!(
        e,
        "invalid arguments (`path`): `ro.txt` is read-only (mode 0444); it was left unchanged — \
         change its permissions first if it really should be edited"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("ro.txt")).unwrap(),
        "keep\n"
    );

    std::fs::write(ws.path("a.txt"), "old\n").unwrap();
    std::fs::hard_link(ws.path("a.txt"), ws.path("b.txt")).unwrap();
    ws.ok("write", json!({"path": "a.txt", "content": "new\n"}))
        .await;
    assert_eq!(std::fs::read_to_string(ws.path("b.txt")).unwrap(), "new\n");
    assert_eq!(
        ws.names(""),
        ["a.txt", "b.txt", "ro.txt"],
        "no temp file left"
    );
}
