//! The journal's format and the recovery a starting run makes, on real files.

use std::borrow::Cow;
#[cfg(unix)]
use std::ffi::OsStr;
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::open_workspace_in;
use crate::Workspace;
use crate::journal::format::{DecodeError, decode, encode};
use crate::journal::{Entry, Journal, NewState, OldState, ensure_private_dir, lock_exclusive};

fn entry<'a>(rel: &'a str, old: Option<&'a [u8]>, new: Option<&'a [u8]>) -> Entry<'a> {
    Entry {
        rel: Cow::Borrowed(Path::new(rel)),
        old: match old {
            None => OldState::Absent,
            Some(b) => OldState::Present {
                mode: 0o644,
                uid: 0,
                gid: 0,
                bytes: Cow::Borrowed(b),
            },
        },
        new: match new {
            None => NewState::Delete,
            Some(b) => NewState::Write {
                mode: None,
                bytes: Cow::Borrowed(b),
            },
        },
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn a_journal_reads_back_exactly_even_with_a_non_utf8_name() {
    let raw = OsStr::from_bytes(b"caf\xe9.py");
    let mut e = entry("x", Some(b"old\r\n"), Some(b"\xef\xbb\xbfnew"));
    e.rel = Cow::Borrowed(Path::new(raw));
    let entries = vec![
        e,
        entry("d/gone.txt", Some(b""), None),
        entry("new.txt", None, Some(b"n")),
    ];
    let bytes = encode(Path::new("/w"), &entries);
    let back = decode(&bytes).unwrap();
    assert_eq!(back.root, Path::new("/w"));
    assert_eq!(back.entries, entries);
}

#[test]
fn a_journal_cut_short_anywhere_is_incomplete_and_never_panics() {
    let entries = vec![
        entry("a", Some(b"1"), Some(b"2")),
        entry("b", None, Some(b"3")),
    ];
    let bytes = encode(Path::new("/w"), &entries);
    for len in 0..bytes.len() {
        assert_eq!(
            decode(&bytes[..len]),
            Err(DecodeError::Incomplete),
            "cut at {len}"
        );
    }
    let mut flipped = bytes.clone();
    flipped[30] ^= 1;
    assert_eq!(decode(&flipped), Err(DecodeError::Incomplete));
}

#[test]
fn a_journal_naming_a_path_out_of_the_workspace_is_malformed() {
    for bad in ["../outside", "/etc/passwd", "a/../../b", ""] {
        let root = std::env::temp_dir().join("w");
        let bytes = encode(&root, &[entry(bad, None, Some(b"x"))]);
        assert_eq!(
            decode(&bytes),
            Err(DecodeError::Malformed(
                "a path is not a plain path inside the workspace"
            )),
            "{bad}"
        );
    }
}

struct Setup {
    _tmp: tempfile::TempDir,
    ws: Workspace,
    journals: std::path::PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("a.txt"), "a old\n").unwrap();
    std::fs::write(root.join("pkg/b.txt"), "b old\n").unwrap();
    let journals = tmp.path().join("state");
    Setup {
        ws: Workspace::new(&root).unwrap(),
        journals,
        _tmp: tmp,
    }
}

/// A change of a.txt, pkg/b.txt and a new c.txt, recorded and then abandoned as a killed
/// run abandons it (its lock goes with it), after `written` files were put in place.
fn abandoned_change(s: &Setup, written: &[&str]) {
    let entries = vec![
        entry("a.txt", Some(b"a old\n"), Some(b"a new\n")),
        entry("pkg/b.txt", Some(b"b old\n"), Some(b"b new\n")),
        entry("c.txt", None, Some(b"c new\n")),
    ];
    let j = Journal::begin_in(&s.journals, s.ws.root(), &entries).unwrap();
    for rel in written {
        let e = entries
            .iter()
            .find(|e| e.rel.as_ref() == Path::new(rel))
            .unwrap();
        let NewState::Write { bytes, .. } = &e.new else {
            unreachable!()
        };
        std::fs::write(s.ws.root().join(rel), bytes).unwrap();
    }
    drop(j);
}

fn read(s: &Setup, rel: &str) -> Option<String> {
    std::fs::read_to_string(s.ws.root().join(rel)).ok()
}

#[test]
fn a_change_left_with_every_file_old_or_new_is_completed() {
    let s = setup();
    abandoned_change(&s, &["a.txt"]);
    let (notice, marker) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(
        notice.as_deref(),
        Some(
            "Recovered after a crash: an unfinished change of 3 files left by a killed run was completed \
             (2 files written; every file now holds its new content)."
        )
    );
    assert_eq!(read(&s, "a.txt").as_deref(), Some("a new\n"));
    assert_eq!(read(&s, "pkg/b.txt").as_deref(), Some("b new\n"));
    assert_eq!(read(&s, "c.txt").as_deref(), Some("c new\n"));
    let live = names_in(&s.journals);
    assert_eq!(live.len(), 2, "{live:?}");
    assert_eq!(live[1], "recover.lock");
    assert!(live[0].ends_with(".live"), "{live:?}");
    // The next start finds nothing more to do; the last run to close removes the folder.
    drop(marker);
    let (notice, again) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(notice, None);
    drop(again);
    assert!(!s.journals.exists());
}

#[test]
fn a_change_with_a_file_edited_by_hand_since_is_undone_around_it() {
    let s = setup();
    abandoned_change(&s, &["a.txt", "c.txt"]);
    std::fs::write(s.ws.root().join("pkg/b.txt"), "edited by hand\n").unwrap();
    let (notice, _marker) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(
        notice.as_deref(),
        Some(
            "Recovered after a crash: an unfinished change of 3 files left by a killed run was undone \
             (2 files put back as before), leaving as they are the files changed since: `pkg/b.txt`."
        )
    );
    assert_eq!(read(&s, "a.txt").as_deref(), Some("a old\n"));
    assert_eq!(read(&s, "pkg/b.txt").as_deref(), Some("edited by hand\n"));
    assert_eq!(read(&s, "c.txt"), None);
}

/// `pkg/b.txt` given a second name outside the workspace, then the change abandoned with
/// a.txt in place and pkg/b.txt killed half way through its rewrite in place: the first
/// half of its new content over its old one. Returns the second name.
fn abandoned_with_a_linked_file_half_written(s: &Setup) -> std::path::PathBuf {
    let other_name = s.ws.root().parent().unwrap().join("b-elsewhere.txt");
    std::fs::hard_link(s.ws.root().join("pkg/b.txt"), &other_name).unwrap();
    abandoned_change(s, &["a.txt"]);
    // What the writer leaves between its two halves: "b n" over "b old\n".
    std::fs::write(&other_name, "b nld\n").unwrap();
    other_name
}

#[test]
fn a_linked_file_killed_half_way_through_its_rewrite_is_completed_and_keeps_its_link() {
    let s = setup();
    let other_name = abandoned_with_a_linked_file_half_written(&s);
    let (notice, _m) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(
        notice.as_deref(),
        Some(
            "Recovered after a crash: an unfinished change of 3 files left by a killed run was completed \
             (2 files written; every file now holds its new content)."
        )
    );
    assert_eq!(read(&s, "a.txt").as_deref(), Some("a new\n"));
    assert_eq!(read(&s, "pkg/b.txt").as_deref(), Some("b new\n"));
    assert_eq!(read(&s, "c.txt").as_deref(), Some("c new\n"));
    assert_eq!(
        std::fs::read_to_string(&other_name).unwrap(),
        "b new\n",
        "both names still share the file"
    );
}

#[test]
fn a_linked_file_killed_half_way_is_put_back_in_place_when_the_change_is_undone() {
    let s = setup();
    let other_name = abandoned_with_a_linked_file_half_written(&s);
    std::fs::write(s.ws.root().join("c.txt"), "made by hand\n").unwrap();
    let (notice, _m) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(
        notice.as_deref(),
        Some(
            "Recovered after a crash: an unfinished change of 3 files left by a killed run was undone \
             (2 files put back as before), leaving as they are the files changed since: `c.txt`."
        )
    );
    assert_eq!(read(&s, "a.txt").as_deref(), Some("a old\n"));
    assert_eq!(read(&s, "pkg/b.txt").as_deref(), Some("b old\n"));
    assert_eq!(std::fs::read_to_string(&other_name).unwrap(), "b old\n");
}

#[test]
fn a_linked_file_edited_by_hand_is_not_taken_for_a_half_written_one() {
    let s = setup();
    let other_name = s.ws.root().parent().unwrap().join("b-elsewhere.txt");
    std::fs::hard_link(s.ws.root().join("pkg/b.txt"), &other_name).unwrap();
    abandoned_change(&s, &["a.txt"]);
    std::fs::write(&other_name, "b old\nand more\n").unwrap();
    let (notice, _m) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(
        notice.as_deref(),
        Some(
            "Recovered after a crash: an unfinished change of 3 files left by a killed run was undone \
             (1 file put back as before), leaving as they are the files changed since: `pkg/b.txt`."
        )
    );
    assert_eq!(read(&s, "pkg/b.txt").as_deref(), Some("b old\nand more\n"));
}

#[test]
fn a_half_written_rewrite_in_place_is_exactly_a_start_of_the_new_over_the_old() {
    use super::half_written_in_place as half;
    let (old, new) = (&b"0123456789"[..], &b"abcdefghijklmn"[..]);
    // Every cut the writer can leave.
    for k in 0..=new.len() {
        let mut now = new[..k].to_vec();
        if k < old.len() {
            now.extend_from_slice(&old[k..]);
        }
        assert!(half(&now, old, new), "cut at {k}: {now:?}");
    }
    // Shorter new content: the old tail stays until the file is cut.
    assert!(half(b"ab23456789", old, b"abc"));
    assert!(half(b"abc3456789", old, b"abc"));
    // Not shapes the writer leaves.
    assert!(
        !half(b"012345678", old, new),
        "shorter than the old content"
    );
    assert!(
        !half(b"0123456789x", old, new),
        "the old content with more after it"
    );
    assert!(!half(b"ab2345678X", old, new), "an old tail changed");
    assert!(!half(b"aX23456789", old, new), "a new start changed");
    assert!(!half(b"abcdefghijklmnX", old, new), "past the new end");
}

#[test]
fn a_change_still_being_made_by_a_live_run_is_left_alone() {
    let s = setup();
    let entries = vec![
        entry("a.txt", Some(b"a old\n"), Some(b"a new\n")),
        entry("pkg/b.txt", Some(b"b old\n"), Some(b"b new\n")),
    ];
    let live = Journal::begin_in(&s.journals, s.ws.root(), &entries).unwrap();
    std::fs::write(s.ws.root().join("a.txt"), "a new\n").unwrap();
    let (notice, _m) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(notice, None);
    assert_eq!(read(&s, "pkg/b.txt").as_deref(), Some("b old\n"));
    live.finish();
    assert!(
        !names_in(&s.journals)
            .iter()
            .any(|n| n.ends_with(".journal"))
    );
}

#[test]
fn a_change_made_without_a_run_leaves_no_folder_in_the_state_folder() {
    let s = setup();
    let entries = vec![
        entry("a.txt", Some(b"a old\n"), Some(b"a new\n")),
        entry("pkg/b.txt", Some(b"b old\n"), Some(b"b new\n")),
    ];
    Journal::begin_in(&s.journals, s.ws.root(), &entries)
        .unwrap()
        .finish();
    assert!(!s.journals.exists());
    // With a run open on the workspace, its folder stays for the run's marker.
    let (_, marker) = open_workspace_in(&s.ws, &s.journals);
    Journal::begin_in(&s.journals, s.ws.root(), &entries)
        .unwrap()
        .finish();
    let left = names_in(&s.journals);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left[0].ends_with(".live"), "{left:?}");
    drop(marker);
    assert!(!s.journals.exists());
}

#[test]
fn a_journal_cut_short_is_dropped_without_touching_a_file() {
    let s = setup();
    ensure_private_dir(&s.journals).unwrap();
    let bytes = encode(s.ws.root(), &[entry("a.txt", Some(b"a old\n"), Some(b"x"))]);
    std::fs::write(s.journals.join("1-cut.journal"), &bytes[..bytes.len() - 3]).unwrap();
    let (notice, _m) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(notice, None);
    assert_eq!(read(&s, "a.txt").as_deref(), Some("a old\n"));
    assert!(
        !names_in(&s.journals)
            .iter()
            .any(|n| n.ends_with(".journal"))
    );
}

#[test]
fn temp_files_of_a_dead_run_are_removed_and_nothing_else() {
    let s = setup();
    let dead = "0123456789abcdef01234567";
    let leftover =
        s.ws.root()
            .join(format!("pkg/.agent-tools-{dead}-b.txt.tmp"));
    std::fs::write(&leftover, "half").unwrap();
    let users = [
        ".agent-tools-notours.tmp",
        ".b.txt.1234.tmp",
        "agent-tools-0123456789abcdef01234567-x.tmp",
    ];
    for u in users {
        std::fs::write(s.ws.root().join(u), "mine").unwrap();
    }
    let held_path =
        s.ws.root()
            .join(format!(".agent-tools-{}-a.txt.tmp", "f".repeat(24)));
    let held = std::fs::File::create(&held_path).unwrap();
    assert!(lock_exclusive(&held, false).unwrap());
    // No run died yet: nothing is looked at.
    let (_, first) = open_workspace_in(&s.ws, &s.journals);
    assert!(leftover.exists());
    // A run that dies leaves its mark unlocked.
    first.unwrap().abandon();
    let (notice, _m) = open_workspace_in(&s.ws, &s.journals);
    assert_eq!(
        notice.as_deref(),
        Some("Recovered after a crash: removed 1 temp file a killed run left in the workspace.")
    );
    assert!(!leftover.exists());
    assert!(held_path.exists(), "a live writer's temp file is kept");
    for u in users {
        assert_eq!(
            std::fs::read_to_string(s.ws.root().join(u)).unwrap(),
            "mine"
        );
    }
}

#[cfg(unix)]
#[test]
fn idle_folders_of_other_workspaces_are_removed_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let all = tmp.path().join("journal");
    let key = |name: &str, n: u8| format!("{name}-{}", hex::encode([n; 12]));
    let folder = |name: &str, files: &[&str]| {
        let dir = all.join(name);
        ensure_private_dir(&dir).unwrap();
        for f in files {
            std::fs::write(dir.join(f), "").unwrap();
        }
        dir
    };
    folder(&key("only-lock", 1), &["recover.lock"]);
    folder(&key("empty", 2), &[]);
    let held = folder(&key("held", 3), &["recover.lock"]);
    folder(&key("journal", 4), &["recover.lock", "1-ab.journal"]);
    folder(&key("dead-run", 5), &["recover.lock", "1-ab.live"]);
    folder("not-a-key", &["recover.lock"]);
    folder(&format!("short-{}", hex::encode([6u8; 11])), &[]);
    std::fs::write(all.join(key("a-file", 7)), "").unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    ensure_private_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("recover.lock"), "").unwrap();
    std::os::unix::fs::symlink(&elsewhere, all.join(key("a-link", 8))).unwrap();
    // A run still holding the folder's lock (recovering, or about to mark itself alive).
    let lock = std::fs::File::open(held.join("recover.lock")).unwrap();
    assert!(lock_exclusive(&lock, false).unwrap());

    assert_eq!(super::remove_idle_folders(&all), 2);
    let mut left = vec![
        key("held", 3),
        key("journal", 4),
        key("dead-run", 5),
        "not-a-key".to_string(),
        format!("short-{}", hex::encode([6u8; 11])),
        key("a-file", 7),
        key("a-link", 8),
    ];
    left.sort();
    assert_eq!(names_in(&all), left);
    assert_eq!(names_in(&held), ["recover.lock"]);
    assert_eq!(names_in(&elsewhere), ["recover.lock"]);
    // Once the holder is gone, its folder goes the same way.
    drop(lock);
    assert_eq!(super::remove_idle_folders(&all), 1);
    assert!(!held.exists());
}
