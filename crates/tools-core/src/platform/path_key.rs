//! Whether two paths name the same file by their text, where the file system ignores case.
//!
//! On macOS (APFS and HFS+ as installed) and Windows (NTFS) `Src/Main.rs` and `src/main.rs`
//! are one file, and a language server may answer with either spelling (the one on disk,
//! the one it was told, or its own lower-cased drive). Tables keyed by path (a server's
//! diagnostics ledger, its open documents) key by [`path_key`], and the jail asks
//! [`within_root`]. On Linux both are the exact path, as before.

use std::path::{Component, Path, PathBuf};

/// Whether this system's file systems ignore the case of names (as they are installed by
/// default: macOS and Windows).
pub const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", windows));

/// The key of `path` in a table of files: the path itself where case matters, its
/// lower-cased text where it does not.
///
/// Folded text rather than asking the file system for the name on disk: the ledger keys
/// every publish of a server, many of them for files the agent never opened and some for
/// files already deleted, so the key must cost no system call and exist for a missing
/// file. The price is on a volume formatted case-sensitive on macOS, where two files whose
/// names differ only in case would share one key of the ledger: their diagnostics mix, no
/// file is read or written through it (the jail decides by file identity, see
/// [`within_root`]).
pub fn path_key(path: &Path) -> PathBuf {
    key_in(CASE_INSENSITIVE, path)
}

/// [`path_key`] under the given rule, so both rules are tested everywhere.
pub fn key_in(case_insensitive: bool, path: &Path) -> PathBuf {
    if case_insensitive {
        PathBuf::from(path.to_string_lossy().to_lowercase())
    } else {
        path.to_path_buf()
    }
}

/// `path` spelled under `root` as `root` is, when it lies inside `root`: exactly, or (where
/// case is ignored) through a folder whose names differ from `root`'s only in case and
/// that the file system says is `root` itself (the same file identity, so a volume
/// formatted case-sensitive, where it would be another folder, is not taken for it).
/// `None` when it lies outside.
pub fn within_root(path: &Path, root: &Path) -> Option<PathBuf> {
    if path.starts_with(root) {
        return Some(path.to_path_buf());
    }
    if !CASE_INSENSITIVE {
        return None;
    }
    let (prefix, rest) = split_case_folded(path, root)?;
    super::same_file(&prefix, root).then(|| root.join(rest))
}

/// `path` cut after as many components as `root` has, when those equal `root`'s but for
/// case: the cut prefix and the rest.
pub fn split_case_folded(path: &Path, root: &Path) -> Option<(PathBuf, PathBuf)> {
    let depth = root.components().count();
    let mut parts = path.components();
    let prefix: PathBuf = parts.by_ref().take(depth).collect();
    let same = prefix.components().count() == depth
        && prefix
            .components()
            .zip(root.components())
            .all(|(a, b)| fold(a) == fold(b));
    same.then(|| (prefix, parts.collect()))
}

fn fold(c: Component<'_>) -> String {
    c.as_os_str().to_string_lossy().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_the_path_where_case_matters_and_its_lower_case_where_not() {
        let p = Path::new("/Users/Zoë/Proj/Src/Main.rs");
        assert_eq!(key_in(false, p), p);
        assert_eq!(key_in(true, p), Path::new("/users/zoë/proj/src/main.rs"));
        assert_eq!(
            key_in(true, p),
            key_in(true, Path::new("/USERS/ZOË/proj/src/MAIN.RS"))
        );
    }

    #[test]
    fn a_path_under_the_root_in_another_case_is_cut_where_the_root_ends() {
        let root = Path::new("/Users/x/Proj");
        assert_eq!(
            split_case_folded(Path::new("/users/X/proj/src/a.rs"), root),
            Some((PathBuf::from("/users/X/proj"), PathBuf::from("src/a.rs")))
        );
        assert_eq!(
            split_case_folded(Path::new("/Users/x/Project/a.rs"), root),
            None
        );
        assert_eq!(split_case_folded(Path::new("/Users/x"), root), None);
    }

    #[test]
    fn where_case_matters_only_the_exact_root_contains() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("Proj");
        std::fs::create_dir(&root).unwrap();
        let inside = root.join("a.rs");
        assert_eq!(within_root(&inside, &root), Some(inside.clone()));
        let other = dir.path().join("proj").join("a.rs");
        let expected = CASE_INSENSITIVE.then(|| inside.clone());
        assert_eq!(within_root(&other, &root), expected);
    }
}
