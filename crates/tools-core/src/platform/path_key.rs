//! Whether two paths name the same file by their text, where the file system ignores case
//! or how accented letters are composed.
//!
//! On macOS (APFS and HFS+ as installed) and Windows (NTFS) `Src/Main.rs` and `src/main.rs`
//! are one file, and a language server may answer with either spelling (the one on disk,
//! the one it was told, or its own lower-cased drive). On macOS `café.py` is one file too
//! whether its `é` is one code point (NFC, as typed) or `e` and a combining accent (NFD, as
//! HFS+ stores names and as a server that read the directory may spell it). Tables keyed by
//! path (a server's diagnostics ledger, its open documents) key by [`path_key`], and the
//! jail asks [`within_root`]. On Linux both are the exact path, as before.

use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// Whether this system's file systems ignore the case of names (as they are installed by
/// default: macOS and Windows).
pub const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", windows));

/// Whether this system's file systems ignore how a name's accented letters are composed
/// (Unicode normalization): APFS looks names up normalization-insensitively and HFS+
/// stores them decomposed. NTFS and Linux's file systems compare code points, so there
/// NFC and NFD spellings are two files.
pub const NORMALIZATION_INSENSITIVE: bool = cfg!(target_os = "macos");

/// What a path's text is folded by before paths are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Folding {
    /// Letters compare without case.
    pub case: bool,
    /// Accented letters compare in one composition (NFC).
    pub normalization: bool,
}

/// This system's folding.
pub const FOLDING: Folding = Folding {
    case: CASE_INSENSITIVE,
    normalization: NORMALIZATION_INSENSITIVE,
};

impl Folding {
    /// Whether any text is folded at all.
    pub fn folds(self) -> bool {
        self.case || self.normalization
    }

    /// `text` folded: composed (NFC) first, so that a decomposed capital letter lowers
    /// like the composed one, then lower-cased.
    pub fn fold(self, text: &str) -> String {
        let composed: String = match self.normalization {
            true => text.nfc().collect(),
            false => text.to_string(),
        };
        match self.case {
            true => composed.to_lowercase(),
            false => composed,
        }
    }
}

/// The key of `path` in a table of files: the path itself where names compare exactly,
/// its text folded (see [`Folding`]) where they do not.
///
/// Folded text rather than asking the file system for the name on disk: the ledger keys
/// every publish of a server, many of them for files the agent never opened and some for
/// files already deleted, so the key must cost no system call and exist for a missing
/// file. The price is on a volume formatted case-sensitive on macOS, where two files whose
/// names differ only in case would share one key of the ledger: their diagnostics mix, no
/// file is read or written through it (the jail decides by file identity, see
/// [`within_root`]).
pub fn path_key(path: &Path) -> PathBuf {
    key_in(FOLDING, path)
}

/// [`path_key`] under the given folding, so every system's rule is tested everywhere.
pub fn key_in(folding: Folding, path: &Path) -> PathBuf {
    match folding.folds() {
        true => PathBuf::from(folding.fold(&path.to_string_lossy())),
        false => path.to_path_buf(),
    }
}

/// `path` spelled under `root` as `root` is, when it lies inside `root`: exactly, or (where
/// names are folded) through a folder whose names differ from `root`'s only in case or
/// composition and that the file system says is `root` itself (the same file identity, so
/// a volume formatted case-sensitive, where it would be another folder, is not taken for
/// it). `None` when it lies outside.
pub fn within_root(path: &Path, root: &Path) -> Option<PathBuf> {
    if path.starts_with(root) {
        return Some(path.to_path_buf());
    }
    if !FOLDING.folds() {
        return None;
    }
    let (prefix, rest) = split_case_folded(FOLDING, path, root)?;
    super::same_file(&prefix, root).then(|| root.join(rest))
}

/// `path` cut after as many components as `root` has, when those equal `root`'s but for
/// what `folding` ignores: the cut prefix and the rest.
pub fn split_case_folded(folding: Folding, path: &Path, root: &Path) -> Option<(PathBuf, PathBuf)> {
    let depth = root.components().count();
    let mut parts = path.components();
    let prefix: PathBuf = parts.by_ref().take(depth).collect();
    let same = prefix.components().count() == depth
        && prefix
            .components()
            .zip(root.components())
            .all(|(a, b)| fold(folding, a) == fold(folding, b));
    same.then(|| (prefix, parts.collect()))
}

fn fold(folding: Folding, c: Component<'_>) -> String {
    folding.fold(&c.as_os_str().to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXACT: Folding = Folding {
        case: false,
        normalization: false,
    };
    const WINDOWS: Folding = Folding {
        case: true,
        normalization: false,
    };
    const MACOS: Folding = Folding {
        case: true,
        normalization: true,
    };

    #[test]
    fn a_key_is_the_path_where_case_matters_and_its_lower_case_where_not() {
        let p = Path::new("/Users/Zoë/Proj/Src/Main.rs");
        assert_eq!(key_in(EXACT, p), p);
        assert_eq!(key_in(WINDOWS, p), Path::new("/users/zoë/proj/src/main.rs"));
        assert_eq!(
            key_in(WINDOWS, p),
            key_in(WINDOWS, Path::new("/USERS/ZOË/proj/src/MAIN.RS"))
        );
    }

    #[test]
    fn composed_and_decomposed_accents_are_one_key_only_where_the_system_says_so() {
        // `é` as one code point (as typed) and as `e` + U+0301 (as HFS+ stores it).
        let typed = Path::new("/Users/x/Café/Été.py");
        let stored = Path::new("/Users/x/Cafe\u{301}/E\u{301}te\u{301}.py");
        assert_ne!(typed, stored);
        assert_eq!(key_in(MACOS, typed), Path::new("/users/x/café/été.py"));
        assert_eq!(key_in(MACOS, typed), key_in(MACOS, stored));
        // NTFS and Linux compare code points: two files.
        assert_ne!(key_in(WINDOWS, typed), key_in(WINDOWS, stored));
        assert_ne!(key_in(EXACT, typed), key_in(EXACT, stored));
        // The root cut where its names match but for composition and case.
        assert_eq!(
            split_case_folded(
                MACOS,
                Path::new("/users/X/cafe\u{301}/a.py"),
                Path::new("/Users/x/Café")
            ),
            Some((PathBuf::from("/users/X/cafe\u{301}"), PathBuf::from("a.py")))
        );
        assert_eq!(
            split_case_folded(
                WINDOWS,
                Path::new("/users/X/cafe\u{301}/a.py"),
                Path::new("/Users/x/Café")
            ),
            None
        );
    }

    #[test]
    fn a_path_under_the_root_in_another_case_is_cut_where_the_root_ends() {
        let root = Path::new("/Users/x/Proj");
        assert_eq!(
            split_case_folded(WINDOWS, Path::new("/users/X/proj/src/a.rs"), root),
            Some((PathBuf::from("/users/X/proj"), PathBuf::from("src/a.rs")))
        );
        assert_eq!(
            split_case_folded(WINDOWS, Path::new("/Users/x/Project/a.rs"), root),
            None
        );
        assert_eq!(
            split_case_folded(WINDOWS, Path::new("/Users/x"), root),
            None
        );
    }

    #[test]
    fn where_case_matters_only_the_exact_root_contains() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("Proj");
        std::fs::create_dir(&root).unwrap();
        let inside = root.join("a.rs");
        assert_eq!(within_root(&inside, &root), Some(inside.clone()));
        let other = dir.path().join("proj").join("a.rs");
        let expected = FOLDING.case.then(|| inside.clone());
        assert_eq!(within_root(&other, &root), expected);
    }
}
