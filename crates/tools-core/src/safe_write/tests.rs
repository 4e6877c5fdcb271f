//! The safe writer on real files: modes, links, special files, planted links, cleanup.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::PathLocks;

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

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn current_umask() -> u32 {
    // SAFETY: umask only swaps the process mask; it is put back at once.
    let m = unsafe { libc::umask(0o022) };
    // SAFETY: as above.
    unsafe { libc::umask(m) };
    m as u32
}

#[test]
fn new_files_follow_the_umask_and_replaced_files_keep_their_mode() {
    let (d, ws) = ws();
    let p = ws.root().join("deep/new.txt");
    let w = write_file(&ws, &p, b"x\n").unwrap();
    assert!(w.created && !w.in_place);
    assert_eq!(mode(&p), 0o666 & !current_umask());
    let exe = ws.root().join("run.sh");
    std::fs::write(&exe, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o751)).unwrap();
    let w = write_file(&ws, &exe, b"#!/bin/sh\necho hi\n").unwrap();
    assert!(!w.created);
    assert_eq!(mode(&exe), 0o751);
    assert_eq!(std::fs::read(&exe).unwrap(), b"#!/bin/sh\necho hi\n");
    assert_eq!(names(d.path()), ["deep", "run.sh"], "no temp file left");
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
    assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 2);
    write_file(&ws, &b, b"short\n").unwrap();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "short\n");

    let ro = ws.root().join("ro.txt");
    std::fs::write(&ro, "keep\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = write_file(&ws, &ro, b"x").unwrap_err();
    assert!(matches!(e, FileError::ReadOnly(0o444)), "{e}");
    assert!(e.for_file("ro.txt").to_string().contains("read-only"));
    assert!(matches!(remove_file(&ws, &ro), Err(FileError::ReadOnly(_))));
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
}

#[test]
fn special_files_are_refused_before_they_are_opened() {
    let (_d, ws) = ws();
    let fifo = ws.root().join("pipe");
    mkfifo(&fifo);
    // Neither call may block: a FIFO with no writer would block an ordinary open.
    let e = read_file(&ws, &fifo, 1 << 20).unwrap_err();
    assert!(
        matches!(e, FileError::NotRegular(k) if k.contains("FIFO")),
        "{e}"
    );
    let e = write_file(&ws, &fifo, b"x").unwrap_err();
    assert!(matches!(e, FileError::NotRegular(_)), "{e}");
    assert!(matches!(
        read_file(&ws, Path::new("/dev/null"), 10),
        Err(FileError::Outside)
    ));
    assert!(matches!(
        read_file(&ws, ws.root(), 10),
        Err(FileError::Directory)
    ));
    assert!(matches!(
        read_file(&ws, &ws.root().join("missing/x"), 10),
        Err(FileError::NotFound)
    ));
    std::fs::write(ws.root().join("big"), vec![b'a'; 100]).unwrap();
    assert!(matches!(
        read_file(&ws, &ws.root().join("big"), 99),
        Err(FileError::TooLarge { size: 100, cap: 99 })
    ));
}

#[test]
fn planted_links_are_never_followed() {
    let (d, ws) = ws();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "safe\n").unwrap();
    // A link planted at the file's own name after the jail resolved it.
    let p = ws.root().join("f.txt");
    std::os::unix::fs::symlink(&victim, &p).unwrap();
    assert!(matches!(
        write_file(&ws, &p, b"pwned"),
        Err(FileError::Symlink)
    ));
    assert!(matches!(read_file(&ws, &p, 100), Err(FileError::Symlink)));
    // A folder swapped for a link to the outside after the jail resolved a path in it.
    let inner = ws.root().join("sub/victim.txt");
    std::os::unix::fs::symlink(outside.path(), ws.root().join("sub")).unwrap();
    let e = write_file(&ws, &inner, b"pwned").unwrap_err();
    assert!(matches!(&e, FileError::PathSwapped(c) if c == "sub"), "{e}");
    assert!(matches!(
        read_file(&ws, &inner, 100),
        Err(FileError::PathSwapped(_))
    ));
    assert!(matches!(
        remove_file(&ws, &inner),
        Err(FileError::PathSwapped(_))
    ));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "safe\n");
    assert_eq!(names(outside.path()), ["victim.txt"]);
    // Links at every name an old writer would have used for its temp file change nothing:
    // the temp name is unpredictable and created O_EXCL | O_NOFOLLOW.
    let target = ws.root().join("g.txt");
    std::fs::write(&target, "g\n").unwrap();
    for guess in [
        ".g.txt.tmp",
        ".g.txt.ast-edit-1-0.tmp",
        ".g.txt.rename-1.tmp",
    ] {
        std::os::unix::fs::symlink(&victim, ws.root().join(guess)).unwrap();
    }
    write_file(&ws, &target, b"g2\n").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "g2\n");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "safe\n");
    assert_eq!(names(d.path()).len(), 6, "{:?}", names(d.path()));
}

#[test]
fn a_failed_write_leaves_no_temp_file() {
    let (d, ws) = ws();
    let p = ws.root().join("a.txt");
    std::fs::write(&p, "a\n").unwrap();
    // A folder the process cannot write into fails the temp-file creation (root ignores
    // permissions, so make the name itself impossible instead: a file where a folder must be).
    let e = write_file(&ws, &ws.root().join("a.txt/under"), b"x").unwrap_err();
    assert!(
        matches!(&e, FileError::NotAFolder(c) if c == "a.txt"),
        "{e}"
    );
    // A write that fails after the temp file exists: the target is a folder.
    std::fs::create_dir(ws.root().join("dir")).unwrap();
    assert!(matches!(
        write_file(&ws, &ws.root().join("dir"), b"x"),
        Err(FileError::Directory)
    ));
    assert_eq!(names(d.path()), ["a.txt", "dir"]);
    assert!(names(&d.path().join("dir")).is_empty());
    // A write that fails half-way through the temp file (the file-size limit plays a full
    // disk): the error says so, the file is unchanged and the temp file is gone.
    let big = vec![b'x'; 4 << 20];
    let e = with_file_size_limit(1 << 20, || write_file(&ws, &p, &big)).unwrap_err();
    assert!(matches!(e, FileError::Io(_)), "{e}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\n");
    assert_eq!(names(d.path()), ["a.txt", "dir"]);
}

/// Runs `f` with RLIMIT_FSIZE at `bytes` (SIGXFSZ ignored, so writes past it fail with
/// EFBIG as on a full disk), then restores both.
fn with_file_size_limit<T>(bytes: u64, f: impl FnOnce() -> T) -> T {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer / in-pointers; SIG_IGN is a valid disposition.
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
    unsafe {
        libc::setrlimit(libc::RLIMIT_FSIZE, &old);
    }
    out
}

#[test]
fn a_failure_part_way_restores_every_file_with_its_mode() {
    let (d, ws) = ws();
    let a = ws.root().join("a.sh");
    let b = ws.root().join("b.txt");
    let c = ws.root().join("new/c.txt");
    std::fs::write(&a, "A").unwrap();
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&b, "B").unwrap();
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o640)).unwrap();
    let changes = vec![
        FileChange::Write {
            path: a.clone(),
            content: b"A2".to_vec(),
            mode: None,
        },
        FileChange::Write {
            path: c.clone(),
            content: b"C".to_vec(),
            mode: Some(0o700),
        },
        FileChange::Delete { path: b.clone() },
    ];
    let locks = Arc::new(PathLocks::default());
    let guard = locks
        .lock(changes.iter().map(|c| c.path().to_path_buf()))
        .unwrap();
    let fail_last = |i: usize, _: &FileChange| {
        if i == 2 {
            Err(std::io::Error::other("disk full (injected)"))
        } else {
            Ok(())
        }
    };
    let e = apply_all_or_nothing(&ws, &guard, &changes, Some(&fail_last)).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("disk full") && e.contains("restored"), "{e}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "A");
    assert_eq!(mode(&a), 0o755);
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "B");
    assert_eq!(mode(&b), 0o640);
    assert!(!c.exists());
    // Fail on the delete of b after a and c were written, then restore b's deletion too.
    let fail_never = |_: usize, _: &FileChange| Ok(());
    apply_all_or_nothing(&ws, &guard, &changes, Some(&fail_never)).unwrap();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "A2");
    assert_eq!(mode(&a), 0o755);
    assert_eq!(mode(&c), 0o700);
    assert!(!b.exists());
    // Undo of a delete gives the file its old mode back.
    std::fs::write(&b, "B").unwrap();
    std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o604)).unwrap();
    let two = vec![
        FileChange::Delete { path: b.clone() },
        FileChange::Write {
            path: a.clone(),
            content: b"A3".to_vec(),
            mode: None,
        },
    ];
    let fail_second = |i: usize, _: &FileChange| {
        if i == 1 {
            Err(std::io::Error::other("injected"))
        } else {
            Ok(())
        }
    };
    assert!(apply_all_or_nothing(&ws, &guard, &two, Some(&fail_second)).is_err());
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "B");
    assert_eq!(mode(&b), 0o604);
    assert_eq!(names(d.path()), ["a.sh", "b.txt", "new"]);
    // A path the guard does not cover is never written.
    let other = vec![FileChange::Write {
        path: ws.root().join("unlocked.txt"),
        content: b"x".to_vec(),
        mode: None,
    }];
    assert!(apply_all_or_nothing(&ws, &guard, &other, None).is_err());
    assert!(!ws.root().join("unlocked.txt").exists());
}

#[test]
fn a_read_only_or_special_target_refuses_the_whole_change_up_front() {
    let (_d, ws) = ws();
    let a = ws.root().join("a.txt");
    let ro = ws.root().join("ro.txt");
    std::fs::write(&a, "A").unwrap();
    std::fs::write(&ro, "R").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let changes = vec![
        FileChange::Write {
            path: a.clone(),
            content: b"A2".to_vec(),
            mode: None,
        },
        FileChange::Write {
            path: ro.clone(),
            content: b"R2".to_vec(),
            mode: None,
        },
    ];
    let locks = Arc::new(PathLocks::default());
    let guard = locks.lock([a.clone(), ro.clone()]).unwrap();
    let e = apply_all_or_nothing(&ws, &guard, &changes, None).unwrap_err();
    assert!(
        e.to_string().contains("read-only") && e.to_string().contains("no file was changed"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "A");
}
