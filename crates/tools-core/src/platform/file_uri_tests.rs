//! The conversion's cases, each with the exact value it gives, under both styles.

use super::*;

fn win(uri: &str) -> Result<String, FileUriError> {
    uri_to_path_bytes(PathStyle::Windows, uri).map(|b| String::from_utf8(b).unwrap())
}

fn unix(uri: &str) -> Result<Vec<u8>, FileUriError> {
    uri_to_path_bytes(PathStyle::Unix, uri)
}

fn win_uri(path: &str) -> String {
    windows_path_to_uri(path).unwrap().to_string()
}

#[test]
fn a_drive_letter_in_any_case_and_encoding_is_one_path_with_an_upper_case_drive() {
    for uri in [
        "file:///c%3A/Users/x/a.rs",
        "file:///C%3a/Users/x/a.rs",
        "file:///C:/Users/x/a.rs",
        "file:///c:/Users/x/a.rs",
        "file:///c|/Users/x/a.rs",
        "file:///%63:/Users/x/a.rs",
        "file:///C:/Users/x/sub/../a.rs",
        "file:///C:/Users//x/./a.rs",
        "file://localhost/C:/Users/x/a.rs",
    ] {
        assert_eq!(win(uri).as_deref(), Ok(r"C:\Users\x\a.rs"), "{uri}");
    }
    assert_eq!(win("file:///d:/").as_deref(), Ok(r"D:\"));
    assert_eq!(win("file:///d%3A").as_deref(), Ok(r"D:\"));
}

#[test]
fn a_share_is_a_host_both_ways() {
    assert_eq!(
        win("file://server/share/dir/a.rs").as_deref(),
        Ok(r"\\server\share\dir\a.rs")
    );
    assert_eq!(
        win_uri(r"\\server\share\dir\a.rs"),
        "file://server/share/dir/a.rs"
    );
    assert_eq!(
        win_uri(r"\\?\UNC\server\share\a.rs"),
        "file://server/share/a.rs"
    );
    assert_eq!(
        win("file://server/"),
        Err(FileUriError::NoDriveNorShare {
            uri: "file://server/".into()
        })
    );
}

#[test]
fn spaces_hashes_percents_and_non_ascii_are_encoded_and_decoded() {
    let path = r"C:\Users\Zoë\my dir\50% #1?.rs";
    let uri = win_uri(path);
    assert_eq!(uri, "file:///C:/Users/Zo%C3%AB/my%20dir/50%25%20%231%3F.rs");
    assert_eq!(win(&uri).as_deref(), Ok(path));
    // Letters a server chose to encode decode to themselves.
    assert_eq!(win("file:///c%3A/%61%2Ers").as_deref(), Ok(r"C:\a.rs"));
    assert_eq!(unix("file:///w/%61%2Ers"), Ok(b"/w/a.rs".to_vec()));
    assert_eq!(
        unix("file:///tmp/a%20dir/%C3%A9.py"),
        Ok("/tmp/a dir/é.py".as_bytes().to_vec())
    );
    // A Unix name need not be UTF-8; a Windows one must.
    assert_eq!(unix("file:///w/%FF"), Ok(b"/w/\xff".to_vec()));
    assert_eq!(
        win("file:///C:/%FF"),
        Err(FileUriError::NotUtf8 {
            uri: "file:///C:/%FF".into()
        })
    );
}

#[test]
fn backslashes_slashes_and_dots_of_a_windows_path_make_one_uri() {
    for path in [
        r"C:\Users\x\a.rs",
        r"c:\Users\x\a.rs",
        "C:/Users/x/a.rs",
        r"C:\Users/x\\a.rs",
        r"C:\Users\x\sub\..\.\a.rs",
        r"\\?\C:\Users\x\a.rs",
    ] {
        assert_eq!(win_uri(path), "file:///C:/Users/x/a.rs", "{path}");
    }
    assert_eq!(win_uri(r"C:\"), "file:///C:/");
    assert_eq!(win_uri(r"C:\.."), "file:///C:/");
}

#[test]
fn a_windows_path_that_is_not_absolute_is_refused() {
    for path in [r"a\b.rs", r"C:a.rs", r"\Users\x", "C:", r"\\server", ""] {
        assert_eq!(
            windows_path_to_uri(path),
            Err(FileUriError::NotAbsolute { path: path.into() }),
            "{path}"
        );
    }
}

#[test]
fn a_uri_that_names_no_file_here_is_a_typed_error() {
    assert_eq!(
        unix("untitled:Untitled-1"),
        Err(FileUriError::NotFile {
            uri: "untitled:Untitled-1".into(),
            scheme: "untitled".into()
        })
    );
    assert_eq!(
        win("jdt://contents/rt.jar/java.lang/String.class"),
        Err(FileUriError::NotFile {
            uri: "jdt://contents/rt.jar/java.lang/String.class".into(),
            scheme: "jdt".into()
        })
    );
    assert_eq!(
        unix("file://server/share/a.rs"),
        Err(FileUriError::HostHere {
            uri: "file://server/share/a.rs".into(),
            host: "server".into()
        })
    );
    assert_eq!(
        win("file:///Users/x/a.rs"),
        Err(FileUriError::NoDriveNorShare {
            uri: "file:///Users/x/a.rs".into()
        })
    );
    assert_eq!(
        unix("file:///w/a%2Fb.rs"),
        Err(FileUriError::EncodedSeparator {
            uri: "file:///w/a%2Fb.rs".into(),
            name: "a%2Fb.rs".into()
        })
    );
    assert_eq!(
        win("file:///C:/a%5Cb.rs"),
        Err(FileUriError::EncodedSeparator {
            uri: "file:///C:/a%5Cb.rs".into(),
            name: "a%5Cb.rs".into()
        })
    );
    // A backslash is a legal byte of a Unix name.
    assert_eq!(unix("file:///w/a%5Cb.rs"), Ok(br"/w/a\b.rs".to_vec()));
    assert!(matches!(
        unix("not a uri"),
        Err(FileUriError::Malformed { .. })
    ));
    assert_eq!(
        FileUriError::HostHere {
            uri: "file://server/share/a.rs".into(),
            host: "server".into()
        }
        .to_string(),
        "`file://server/share/a.rs` names the host `server`; a file on this system is named without one"
    );
}

#[test]
fn windows_paths_are_recognised_by_their_start() {
    for p in [r"C:\Users\x\a.rs", "c:/a.rs", r"\\server\share"] {
        assert!(looks_like_windows_path(p), "{p}");
    }
    for p in ["src/a.rs", "/w/a.rs", "C:", r"a\b.rs", "1:/a"] {
        assert!(!looks_like_windows_path(p), "{p}");
    }
}

#[test]
fn a_windows_path_given_under_unix_rules_says_why_it_cannot_be_meant() {
    let unix = |p| foreign_path_reason(PathStyle::Unix, p);
    assert_eq!(
        unix(r"C:\w\a.rs").as_deref(),
        Some(
            "`C:\\w\\a.rs` is a Windows path (a drive letter or a share); on this system name the \
             file relative to the workspace, with `/` between names"
        )
    );
    assert_eq!(
        unix(r"src\lib\a.rs").as_deref(),
        Some(
            "`src\\lib\\a.rs` has backslashes, which separate names only on Windows; on this \
             system write `src/lib/a.rs`"
        )
    );
    assert_eq!(unix("src/a.rs"), None);
    assert_eq!(foreign_path_reason(PathStyle::Windows, r"C:\w\a.rs"), None);
    assert_eq!(foreign_path_reason(PathStyle::Windows, r"src\a.rs"), None);
}

#[cfg(unix)]
#[test]
fn on_unix_a_path_and_its_uri_round_trip_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/a dir/\xc3\xa9 #1%.py"));
    let u = path_to_file_uri(p).unwrap();
    assert_eq!(u.as_str(), "file:///tmp/a%20dir/%C3%A9%20%231%25.py");
    assert_eq!(file_uri_to_path(u.as_str()).unwrap(), p);
    let odd = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
    let u = path_to_file_uri(odd).unwrap();
    assert_eq!(u.as_str(), "file:///tmp/%FF");
    assert_eq!(file_uri_to_path(u.as_str()).unwrap(), odd);
    assert_eq!(
        path_to_file_uri(Path::new("rel/a.rs")),
        Err(FileUriError::NotAbsolute {
            path: "rel/a.rs".into()
        })
    );
}
