//! Which files a search looks at: the scope's tree, honouring `.gitignore` (in a git
//! repository or not), `.ignore` and hidden files, never entering `.git`, `target` or
//! `node_modules`, and skipping files over the size cap. Binary and non-UTF-8 files are
//! found when read (see `search`) and reported with the same [`SkipReason`]s.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::lang::Lang;

/// Folders never entered, whatever the ignore files say.
pub const ALWAYS_SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// A file the search will read.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// Absolute path.
    pub path: PathBuf,
    /// The language it is parsed with.
    pub lang: Lang,
    /// Size in bytes at walk time.
    pub size: u64,
    /// Modification time at walk time.
    pub mtime: Option<SystemTime>,
}

/// Why a file was not searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Over the size cap.
    TooLarge,
    /// Contains NUL bytes.
    Binary,
    /// Not valid UTF-8.
    NotUtf8,
    /// Could not be read.
    Unreadable,
}

impl SkipReason {
    /// A short phrase for the text output.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too large",
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 => "not UTF-8",
            SkipReason::Unreadable => "unreadable",
        }
    }
}

/// What the walk found.
#[derive(Debug, Default, Clone)]
pub struct Walked {
    /// Files to search, sorted by path.
    pub files: Vec<FileEntry>,
    /// Files left out, with the reason.
    pub skipped: Vec<(PathBuf, SkipReason)>,
    /// Every folder entered, with what says whether its listing or ignore rules changed.
    dirs: Vec<(PathBuf, DirStamp)>,
}

/// A folder's mtime (changes when an entry is added, removed or renamed) and those of its
/// ignore files (edited in place without touching the folder's).
#[derive(Debug, Clone, PartialEq, Eq)]
struct DirStamp([Option<SystemTime>; 3]);

impl DirStamp {
    fn of(dir: &Path) -> DirStamp {
        let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        DirStamp([m(dir), m(&dir.join(".gitignore")), m(&dir.join(".ignore"))])
    }
}

/// Remembers recent walks so a repeated query over an unchanged tree skips the directory
/// walk: a remembered walk is reused only when no folder (nor ignore file) in it changed,
/// and every file is stat'ed again so its size and mtime are current.
#[derive(Default)]
pub struct WalkCache {
    walks: std::sync::Mutex<std::collections::HashMap<WalkKey, Walked>>,
}

/// Scope, language filter and size cap: what makes two walks the same.
type WalkKey = (PathBuf, Option<Lang>, u64);

/// Walks remembered at most.
const MAX_CACHED_WALKS: usize = 8;

impl WalkCache {
    /// [`walk`], reusing a remembered walk when nothing in it changed.
    pub fn walk(&self, scope: &Path, lang: Option<Lang>, max_file_bytes: u64) -> Walked {
        if !scope.is_dir() {
            return walk(scope, lang, max_file_bytes);
        }
        let key = (scope.to_path_buf(), lang, max_file_bytes);
        let remembered = self.walks.lock().ok().and_then(|m| m.get(&key).cloned());
        if let Some(w) = remembered {
            use rayon::prelude::*;
            let unchanged = w
                .dirs
                .par_iter()
                .all(|(d, stamp)| DirStamp::of(d) == *stamp);
            if unchanged {
                return restat(w, max_file_bytes);
            }
        }
        let fresh = walk(scope, lang, max_file_bytes);
        if let Ok(mut m) = self.walks.lock() {
            if m.len() >= MAX_CACHED_WALKS {
                m.clear();
            }
            m.insert(key, fresh.clone());
        }
        fresh
    }
}

fn restat(w: Walked, max_file_bytes: u64) -> Walked {
    use rayon::prelude::*;
    let all: Vec<(PathBuf, Lang)> = w
        .files
        .iter()
        .map(|f| (f.path.clone(), f.lang))
        .chain(w.skipped.iter().filter_map(|(p, r)| {
            (*r == SkipReason::TooLarge)
                .then(|| Lang::from_path(p).map(|l| (p.clone(), l)))
                .flatten()
        }))
        .collect();
    let metas: Vec<_> = all
        .par_iter()
        .map(|(p, _)| std::fs::metadata(p).ok())
        .collect();
    let mut out = Walked {
        dirs: w.dirs,
        ..Walked::default()
    };
    for ((path, lang), meta) in all.into_iter().zip(metas) {
        push(&mut out, path, lang, meta, max_file_bytes);
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out.skipped.extend(
        w.skipped
            .into_iter()
            .filter(|(_, r)| *r != SkipReason::TooLarge),
    );
    out.skipped.sort();
    out
}

/// Walks `scope` (a file or a folder). With `lang`, only files of that language are kept
/// (a file named directly is kept whatever its extension); without, every file of a
/// compiled-in language is kept with its own language.
pub fn walk(scope: &Path, lang: Option<Lang>, max_file_bytes: u64) -> Walked {
    let mut out = Walked::default();
    if scope.is_file() {
        let Some(lang) = lang.or_else(|| Lang::from_path(scope)) else {
            return out;
        };
        let meta = std::fs::metadata(scope).ok();
        push(&mut out, scope.to_path_buf(), lang, meta, max_file_bytes);
        return out;
    }
    // Parallel: on a large tree the walk (readdir, stat, ignore rules) is most of a
    // selective search's time. The order is restored by the sort below.
    let found = std::sync::Mutex::new(Walked::default());
    ignore::WalkBuilder::new(scope)
        .require_git(false)
        .filter_entry(|e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| ALWAYS_SKIPPED_DIRS.contains(&n)))
        })
        .build_parallel()
        .run(|| {
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    let stamp = DirStamp::of(entry.path());
                    if let Ok(mut w) = found.lock() {
                        w.dirs.push((entry.into_path(), stamp));
                    }
                    return ignore::WalkState::Continue;
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                let Some(file_lang) = Lang::from_path(entry.path()) else {
                    return ignore::WalkState::Continue;
                };
                if lang.is_some_and(|l| l != file_lang) {
                    return ignore::WalkState::Continue;
                }
                let meta = entry.metadata().ok();
                if let Ok(mut w) = found.lock() {
                    push(&mut w, entry.into_path(), file_lang, meta, max_file_bytes);
                }
                ignore::WalkState::Continue
            })
        });
    if let Ok(w) = found.into_inner() {
        out = w;
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out.skipped.sort();
    out
}

fn push(
    out: &mut Walked,
    path: PathBuf,
    lang: Lang,
    meta: Option<std::fs::Metadata>,
    max_file_bytes: u64,
) {
    let Some(meta) = meta else {
        out.skipped.push((path, SkipReason::Unreadable));
        return;
    };
    if meta.len() > max_file_bytes {
        out.skipped.push((path, SkipReason::TooLarge));
        return;
    }
    out.files.push(FileEntry {
        path,
        lang,
        size: meta.len(),
        mtime: meta.modified().ok(),
    });
}

/// Languages present under `scope`, with file counts, most files first.
pub fn languages_present(scope: &Path, max_file_bytes: u64) -> Vec<(Lang, usize)> {
    let walked = walk(scope, None, max_file_bytes);
    let mut counts: std::collections::BTreeMap<Lang, usize> = Default::default();
    for f in &walked.files {
        *counts.entry(f.lang).or_default() += 1;
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_gitignore_and_skips_build_dirs() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for p in [
            "a.py",
            "sub/b.py",
            "ignored/c.py",
            "target/d.py",
            "node_modules/e.py",
            ".git/f.py",
            "x.rs",
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x = 1\n").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        std::fs::write(root.join("big.py"), "x = 1\n".repeat(100)).unwrap();
        let w = walk(root, Lang::from_id("python"), 100);
        let names: Vec<_> = w
            .files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, vec!["a.py", "sub/b.py"]);
        assert_eq!(w.skipped.len(), 1);
        assert_eq!(w.skipped[0].1, SkipReason::TooLarge);
        let langs = languages_present(root, 1 << 20);
        assert_eq!(langs[0].0.id(), "python");
        assert_eq!(langs.len(), 2);
    }

    #[test]
    fn a_remembered_walk_is_reused_only_while_nothing_changed() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.py"), "x = 1\n").unwrap();
        let py = Lang::from_id("python");
        let cache = WalkCache::default();
        assert_eq!(cache.walk(root, py, 1 << 20).files.len(), 1);
        // Content change: same listing, fresh size.
        std::fs::write(root.join("sub/a.py"), "x = 12345\n").unwrap();
        let w = cache.walk(root, py, 1 << 20);
        assert_eq!(w.files[0].size, 10);
        // A new file changes the folder: walked again.
        std::fs::write(root.join("sub/b.py"), "y = 1\n").unwrap();
        assert_eq!(cache.walk(root, py, 1 << 20).files.len(), 2);
        // An ignore file edited: walked again.
        std::fs::write(root.join(".gitignore"), "b.py\n").unwrap();
        assert_eq!(cache.walk(root, py, 1 << 20).files.len(), 1);
    }
}
