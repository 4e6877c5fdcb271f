//! The safe writer on real files on Windows: new and replaced files, the read-only
//! attribute, hard links, names Windows reads as devices or streams, a planted junction.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::*;

fn ws() -> (tempfile::TempDir, Workspace) {
    let d = tempfile::tempdir().unwrap();
    let ws = Workspace::new(d.path()).unwrap();
    (d, ws)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn new_and_replaced_files_are_written_whole_and_leave_no_temp_file() {
    let (d, ws) = ws();
    let p = ws.root().join("deep/new.txt");
    let w = write_file(&ws, &p, b"x\r\n").unwrap();
    assert!(w.created && !w.in_place);
    let w = write_file(&ws, &p, b"y\r\n").unwrap();
    assert!(!w.created && !w.in_place);
    assert_eq!(read_file(&ws, &p, 100).unwrap().bytes, b"y\r\n");
    assert_eq!(
        names(&d.path().join("deep")),
        ["new.txt"],
        "no temp file left"
    );
    remove_file(&ws, &p).unwrap();
    assert!(matches!(read_file(&ws, &p, 100), Err(FileError::NotFound)));
}

#[test]
fn hard_links_are_written_in_place_and_read_only_files_refused() {
    let (_d, ws) = ws();
    let a = ws.root().join("a.txt");
    let b = ws.root().join("b.txt");
    std::fs::write(&a, "old\n").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let w = write_file(&ws, &a, b"new, longer than before\n").unwrap();
    assert!(w.in_place);
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        "new, longer than before\n"
    );
    let ro = ws.root().join("ro.txt");
    std::fs::write(&ro, "keep\n").unwrap();
    let mut perms = std::fs::metadata(&ro).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&ro, perms).unwrap();
    let e = write_file(&ws, &ro, b"x").unwrap_err();
    assert!(matches!(e, FileError::ReadOnly(0o444)), "{e:?}");
    assert!(matches!(
        remove_file(&ws, &ro),
        Err(FileError::ReadOnly(0o444))
    ));
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
}

#[test]
fn names_windows_reads_as_devices_or_streams_are_refused() {
    let (d, ws) = ws();
    std::fs::write(d.path().join("notes.txt"), "kept\n").unwrap();
    for (rel, name) in [
        ("CON", "CON"),
        ("NUL", "NUL"),
        ("aux.txt", "aux.txt"),
        ("con .txt", "con .txt"),
        ("sub/prn", "prn"),
        ("COM7/x.txt", "COM7"),
        ("notes.txt:stream", "notes.txt:stream"),
        ("notes.txt.", "notes.txt."),
    ] {
        let p = ws.root().join(rel);
        match write_file(&ws, &p, b"x") {
            Err(FileError::ReservedName(n, _)) => assert_eq!(n, name, "{rel}"),
            other => panic!("{rel}: {other:?}"),
        }
        assert!(
            matches!(read_file(&ws, &p, 100), Err(FileError::ReservedName(..))),
            "{rel}"
        );
    }
    assert_eq!(names(d.path()), ["notes.txt"], "nothing else was made");
    assert_eq!(
        std::fs::read_to_string(d.path().join("notes.txt")).unwrap(),
        "kept\n"
    );
}

#[cfg_attr(
    wine,
    ignore = "Wine 8 cannot make a junction or symbolic link (mklink /J and CreateSymbolicLinkW \
              make nothing there)"
)]
#[test]
fn a_folder_swapped_for_a_junction_is_never_walked_through() {
    let (d, ws) = ws();
    let outside = tempfile::tempdir().unwrap();
    let p = ws.root().join("sub/f.txt");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::remove_dir(d.path().join("sub")).unwrap();
    let status = std::process::Command::new("cmd")
        .args(["/C", "mklink", "/J"])
        .arg(d.path().join("sub"))
        .arg(outside.path())
        .status()
        .unwrap();
    assert!(status.success());
    let e = write_file(&ws, &p, b"x").unwrap_err();
    assert!(
        matches!(e, FileError::PathSwapped(ref s) if s == "sub"),
        "{e:?}"
    );
    assert!(matches!(
        read_file(&ws, &p, 100),
        Err(FileError::PathSwapped(_))
    ));
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
