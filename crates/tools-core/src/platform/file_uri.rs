//! The one conversion between file paths and `file://` URIs, for every crate.
//!
//! Language servers name files by URI and write them in more ways than one: VS Code's
//! family encodes a Windows drive's colon (`file:///c%3A/Users/x/a.rs`), others write it
//! plain (`file:///C:/Users/x/a.rs`), in either case; a share is a host
//! (`file://server/share/a.rs` for `\\server\share\a.rs`); any letter may come
//! percent-encoded (`%61` for `a`). Every one of these names one path here, with the drive
//! letter in upper case (as Windows itself and `std::env::current_dir` write it), and a URI
//! that cannot name a file of this system is a typed error ([`FileUriError`]), never a
//! wrong path.
//!
//! The rules of each OS are pure functions of a [`PathStyle`], so the Windows ones are
//! checked by tests on any system; the public functions pick the host's style. Parsing,
//! hosts, `.` and `..` and the encoding of names are the `url` crate's; what it does not
//! do for a Windows path named from another system (an encoded `%3A` after the drive
//! letter, folding the drive's case, a verbatim `\\?\` prefix) is done here, and said
//! where.

use std::path::{Path, PathBuf};

use url::Url;

/// Whose rules a path follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// Linux and macOS: one root `/`, any byte but NUL and `/` in a name, no hosts.
    Unix,
    /// Windows: a drive letter (`C:\`) or a share (`\\server\share\`), `\` or `/` between
    /// names.
    Windows,
}

impl PathStyle {
    /// The style of the system this runs on.
    pub const HOST: PathStyle = if cfg!(windows) {
        PathStyle::Windows
    } else {
        PathStyle::Unix
    };
}

/// Why a URI names no file here, or a path has no URI.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileUriError {
    /// Not a URI at all.
    #[error("`{uri}` is not a URI ({reason})")]
    Malformed {
        /// What was given.
        uri: String,
        /// What the parser said.
        reason: String,
    },
    /// A URI of another scheme (`untitled:`, `jdt://`, `https:`).
    #[error("`{uri}` is not a file URI (its scheme is `{scheme}`)")]
    NotFile {
        /// What was given.
        uri: String,
        /// Its scheme.
        scheme: String,
    },
    /// A file URI naming a host, on a system whose paths name none.
    #[error("`{uri}` names the host `{host}`; a file on this system is named without one")]
    HostHere {
        /// What was given.
        uri: String,
        /// The host it names.
        host: String,
    },
    /// A Windows file URI with neither a drive letter nor a share.
    #[error("`{uri}` names neither a drive (`file:///C:/…`) nor a share (`file://server/share/…`)")]
    NoDriveNorShare {
        /// What was given.
        uri: String,
    },
    /// A name that decodes to a separator or a NUL byte, which no file name can hold.
    #[error("`{uri}` has a name holding an encoded separator or NUL byte (`{name}`)")]
    EncodedSeparator {
        /// What was given.
        uri: String,
        /// The name, still encoded.
        name: String,
    },
    /// A Windows path must be Unicode; the URI's bytes are not UTF-8.
    #[error("`{uri}` does not decode to UTF-8 text, which a Windows path must be")]
    NotUtf8 {
        /// What was given.
        uri: String,
    },
    /// A path that is not absolute (or, on Windows, names neither a drive nor a share).
    #[error("`{path}` is not an absolute path")]
    NotAbsolute {
        /// The path as given.
        path: String,
    },
}

/// The `file://` URI of the absolute `path`, by this system's rules.
pub fn path_to_file_uri(path: &Path) -> Result<Url, FileUriError> {
    #[cfg(windows)]
    {
        let text = path.to_str().ok_or_else(|| FileUriError::NotAbsolute {
            path: path.display().to_string(),
        })?;
        windows_path_to_uri(text)
    }
    #[cfg(not(windows))]
    {
        // On Unix `url` is right as it is: names as bytes, every unsafe byte encoded.
        Url::from_file_path(path).map_err(|()| FileUriError::NotAbsolute {
            path: path.display().to_string(),
        })
    }
}

/// The path a `file://` URI names, by this system's rules.
pub fn file_uri_to_path(uri: &str) -> Result<PathBuf, FileUriError> {
    let bytes = uri_to_path_bytes(PathStyle::HOST, uri)?;
    Ok(PathBuf::from(super::os_string_from_bytes(bytes)))
}

/// The path `uri` names under `style`'s rules, as bytes (UTF-8 under Windows' rules).
pub fn uri_to_path_bytes(style: PathStyle, uri: &str) -> Result<Vec<u8>, FileUriError> {
    let url = Url::parse(uri).map_err(|e| FileUriError::Malformed {
        uri: uri.to_string(),
        reason: e.to_string(),
    })?;
    if url.scheme() != "file" {
        return Err(FileUriError::NotFile {
            uri: uri.to_string(),
            scheme: url.scheme().to_string(),
        });
    }
    // `url` already folded `.` and `..` (encoded or not) and dropped a `localhost` host.
    let host = url.host_str().filter(|h| !h.is_empty());
    let segments: Vec<&str> = url.path_segments().into_iter().flatten().collect();
    let mut names = Vec::with_capacity(segments.len());
    for s in &segments {
        let name: Vec<u8> = percent_encoding::percent_decode_str(s).collect();
        let bad = |b: &u8| *b == 0 || *b == b'/' || (style == PathStyle::Windows && *b == b'\\');
        if name.iter().any(bad) {
            return Err(FileUriError::EncodedSeparator {
                uri: uri.to_string(),
                name: s.to_string(),
            });
        }
        names.push(name);
    }
    match (style, host) {
        (PathStyle::Unix, Some(host)) => Err(FileUriError::HostHere {
            uri: uri.to_string(),
            host: host.to_string(),
        }),
        (PathStyle::Unix, None) => {
            let mut out = Vec::new();
            for n in names {
                out.push(b'/');
                out.extend(n);
            }
            if out.is_empty() {
                out.push(b'/');
            }
            Ok(out)
        }
        (PathStyle::Windows, host) => {
            let text = names
                .into_iter()
                .map(String::from_utf8)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| FileUriError::NotUtf8 {
                    uri: uri.to_string(),
                })?;
            windows_path_of(uri, host, &text).map(String::into_bytes)
        }
    }
}

/// The Windows path of a URI's decoded `names` (the host, if any, first).
fn windows_path_of(
    uri: &str,
    host: Option<&str>,
    names: &[String],
) -> Result<String, FileUriError> {
    let missing = || FileUriError::NoDriveNorShare {
        uri: uri.to_string(),
    };
    // Empty names (`C://a`, a trailing `/`) add nothing to a Windows path.
    let mut names = names.iter().filter(|n| !n.is_empty());
    let mut out = match host {
        Some(host) => {
            let share = names.next().ok_or_else(missing)?;
            format!(r"\\{host}\{share}")
        }
        // `url` keeps a plain `C:` as the first name but not an encoded `c%3A` (it never
        // decodes a path), so the drive is recognised here, after decoding, in either case.
        None => match names.next().map(|n| drive_letter(n)) {
            Some(Some(letter)) => format!("{letter}:"),
            _ => return Err(missing()),
        },
    };
    let mut any = false;
    for n in names {
        out.push('\\');
        out.push_str(n);
        any = true;
    }
    if !any {
        out.push('\\');
    }
    Ok(out)
}

/// The drive letter, in upper case, of a name `c:` or `C:` (or the old `c|`).
fn drive_letter(name: &str) -> Option<char> {
    match name.as_bytes() {
        [l, b':' | b'|'] if l.is_ascii_alphabetic() => Some(l.to_ascii_uppercase() as char),
        _ => None,
    }
}

/// Whether `given` starts as an absolute Windows path does: a drive letter and a separator
/// (`C:\`, `c:/`) or two backslashes (a share).
pub fn looks_like_windows_path(given: &str) -> bool {
    let b = given.as_bytes();
    matches!(b, [l, b':', b'\\' | b'/', ..] if l.is_ascii_alphabetic()) || given.starts_with(r"\\")
}

/// Why `given`, a path an agent wrote, cannot mean what it says under `style`: on Unix a
/// Windows path (a drive letter or a share) or backslashes between names (which Unix takes
/// as part of one name). `None` when it reads as a path of `style`. The caller asks only
/// when no such file exists, since a Unix name may hold a backslash.
pub fn foreign_path_reason(style: PathStyle, given: &str) -> Option<String> {
    if style == PathStyle::Windows {
        return None;
    }
    if looks_like_windows_path(given) {
        return Some(format!(
            "`{given}` is a Windows path (a drive letter or a share); on this system name the \
             file relative to the workspace, with `/` between names"
        ));
    }
    given.contains('\\').then(|| {
        format!(
            "`{given}` has backslashes, which separate names only on Windows; on this system \
             write `{}`",
            given.replace('\\', "/")
        )
    })
}

/// The `file://` URI of the absolute Windows path `path` (backslashes or slashes between
/// names, a drive letter or a share, or either behind the verbatim `\\?\` prefix that
/// `std::fs::canonicalize` gives on Windows).
pub fn windows_path_to_uri(path: &str) -> Result<Url, FileUriError> {
    let not_absolute = || FileUriError::NotAbsolute {
        path: path.to_string(),
    };
    // `url` reads a verbatim prefix only through `std::path` on a Windows host; strip it
    // here so the rules are the same everywhere.
    let plain = if let Some(rest) = path.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{rest}")
    } else if let Some(rest) = path.strip_prefix(r"\\?\") {
        rest.to_string()
    } else {
        path.to_string()
    };
    let (mut url, rest) = if let Some(share) = plain.strip_prefix(r"\\") {
        let mut names = share.split(['\\', '/']).filter(|n| !n.is_empty());
        let host = names.next().ok_or_else(not_absolute)?;
        let share = names.next().ok_or_else(not_absolute)?;
        let mut url = Url::parse("file:///").map_err(|_| not_absolute())?;
        url.set_host(Some(host)).map_err(|_| not_absolute())?;
        let rest: Vec<&str> = std::iter::once(share).chain(names).collect();
        (url, rest)
    } else {
        let letter = drive_letter(plain.get(..2).ok_or_else(not_absolute)?);
        let sep = plain.as_bytes().get(2);
        let (Some(letter), Some(b'\\' | b'/')) = (letter, sep) else {
            return Err(not_absolute());
        };
        let url = Url::parse(&format!("file:///{letter}:/")).map_err(|_| not_absolute())?;
        (url, plain[3..].split(['\\', '/']).collect())
    };
    let mut kept: Vec<&str> = Vec::new();
    for n in rest {
        match n {
            "" | "." => {}
            // As Windows folds `..` (lexically, never above the drive or share).
            ".." => {
                if kept.len() > usize::from(url.host_str().is_some()) {
                    kept.pop();
                }
            }
            n => kept.push(n),
        }
    }
    {
        let mut segments = url.path_segments_mut().map_err(|()| not_absolute())?;
        segments.pop_if_empty();
        // `url` encodes each name (spaces, `#`, `%`, `?`, non-ASCII) as a path segment.
        segments.extend(kept.iter().copied());
        if kept.is_empty() {
            segments.push("");
        }
    }
    Ok(url)
}

#[cfg(test)]
#[path = "file_uri_tests.rs"]
mod tests;
