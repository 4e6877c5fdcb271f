//! Which files a search looks at: the scope's tree, honouring `.gitignore` (in a git
//! repository or not), `.ignore` and hidden files, never entering `.git`, `target` or
//! `node_modules`. A fresh walk does not stat the files it lists (the search opens each one
//! anyway and takes its size and mtime from the open file, which saves a path lookup per
//! file); files over the size cap, binary and non-UTF-8 files are found then (see `search`)
//! and reported with the same [`SkipReason`]s.

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
    /// Size and mtime, when the walk stat'ed the file (a remembered walk does; a fresh one
    /// leaves it to the search).
    pub meta: Option<FileMeta>,
}

/// What says whether a cached parse of a file is still current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// Size in bytes.
    pub size: u64,
    /// Modification time (`None` where the platform has none: then nothing is cached).
    pub mtime: Option<SystemTime>,
}

impl FileMeta {
    /// The size and mtime of `meta`.
    pub fn of(meta: &std::fs::Metadata) -> FileMeta {
        FileMeta {
            size: meta.len(),
            mtime: meta.modified().ok(),
        }
    }
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
    /// Files over this size are skipped (by the search, for files the walk did not stat).
    pub max_file_bytes: u64,
    /// Every folder entered and every ignore file in one, with its mtime: a folder's changes
    /// when an entry is added, removed or renamed, an ignore file's when it is edited in
    /// place (which leaves its folder's alone).
    stamps: Vec<(PathBuf, Option<SystemTime>)>,
}

fn mtime_of(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Ignore files whose rules the walk honours, per folder.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

/// Remembers recent walks so a repeated query over an unchanged tree skips the directory
/// walk: a remembered walk is reused only when no folder (nor ignore file) in it changed,
/// and every file is stat'ed again so its size and mtime are current.
#[derive(Default)]
pub struct WalkCache {
    walks: std::sync::Mutex<std::collections::HashMap<WalkKey, Walked>>,
}

/// Scope and language filter: what makes two walks the same (the size cap is applied when
/// the files are stat'ed).
type WalkKey = (PathBuf, Option<Lang>);

/// Walks remembered at most.
const MAX_CACHED_WALKS: usize = 8;

/// How far before a walk's start a stamp must lie for the walk to be remembered (file
/// systems take mtimes from a clock that may lag the system's by a tick).
const STAMP_SLACK: std::time::Duration = std::time::Duration::from_secs(1);

impl WalkCache {
    /// [`walk`], reusing a remembered walk when nothing in it changed.
    pub fn walk(&self, scope: &Path, lang: Option<Lang>, max_file_bytes: u64) -> Walked {
        if !scope.is_dir() {
            return walk(scope, lang, max_file_bytes);
        }
        let key = (scope.to_path_buf(), lang);
        let remembered = self.walks.lock().ok().and_then(|m| m.get(&key).cloned());
        if let Some(w) = remembered {
            use rayon::prelude::*;
            let unchanged = w.stamps.par_iter().all(|(p, mtime)| mtime_of(p) == *mtime);
            if unchanged {
                return restat(w, max_file_bytes);
            }
        }
        let started = SystemTime::now();
        let fresh = walk(scope, lang, max_file_bytes);
        // A folder or ignore file changed while (or just before) it was walked may have been
        // listed or read before the change and stamped after it: such a walk is not kept.
        let settled = |mtime: &Option<SystemTime>| mtime.is_some_and(|m| m + STAMP_SLACK < started);
        if fresh.stamps.iter().all(|(_, m)| settled(m))
            && let Ok(mut m) = self.walks.lock()
        {
            if m.len() >= MAX_CACHED_WALKS {
                m.clear();
            }
            m.insert(key, fresh.clone());
        }
        fresh
    }
}

/// A remembered walk with every file stat'ed again, in the same (path) order.
fn restat(w: Walked, max_file_bytes: u64) -> Walked {
    use rayon::prelude::*;
    let metas: Vec<_> = w
        .files
        .par_iter()
        .map(|f| std::fs::metadata(&f.path).ok())
        .collect();
    let mut out = Walked {
        stamps: w.stamps,
        max_file_bytes,
        ..Walked::default()
    };
    for (f, meta) in w.files.into_iter().zip(metas) {
        push(&mut out, f.path, f.lang, meta, max_file_bytes);
    }
    out
}

/// Walks `scope` (a file or a folder). With `lang`, only files of that language are kept
/// (a file named directly is kept whatever its extension); without, every file of a
/// compiled-in language is kept with its own language.
pub fn walk(scope: &Path, lang: Option<Lang>, max_file_bytes: u64) -> Walked {
    let mut out = Walked {
        max_file_bytes,
        ..Walked::default()
    };
    if scope.is_file() {
        if let Some(lang) = lang.or_else(|| Lang::from_path(scope)) {
            out.files.push(FileEntry {
                path: scope.to_path_buf(),
                lang,
                meta: None,
            });
        }
        return out;
    }
    // Parallel: on a large tree the walk (readdir, stat, ignore rules) is most of a
    // selective search's time. The order is restored by the sort below.
    let found = std::sync::Mutex::new(Walked::default());
    // Hidden entries are filtered here rather than by the walker, so that the ignore files
    // among them are seen (and stamped) without a stat per folder to look for them.
    let ignore_files = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = ignore_files.clone();
    ignore::WalkBuilder::new(scope)
        .require_git(false)
        .hidden(false)
        .filter_entry(move |e| {
            let Some(name) = e.file_name().to_str() else {
                return true;
            };
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if e.depth() > 0 && name.starts_with('.') {
                if !is_dir
                    && IGNORE_FILES.contains(&name)
                    && let Ok(mut v) = seen.lock()
                {
                    v.push(e.path().to_path_buf());
                }
                return false;
            }
            !(is_dir && ALWAYS_SKIPPED_DIRS.contains(&name))
        })
        .build_parallel()
        .run(|| {
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    let mtime = mtime_of(entry.path());
                    if let Ok(mut w) = found.lock() {
                        w.stamps.push((entry.into_path(), mtime));
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
                if let Ok(mut w) = found.lock() {
                    w.files.push(FileEntry {
                        path: entry.into_path(),
                        lang: file_lang,
                        meta: None,
                    });
                }
                ignore::WalkState::Continue
            })
        });
    if let Ok(w) = found.into_inner() {
        out.files = w.files;
        out.stamps = w.stamps;
    }
    if let Ok(v) = ignore_files.lock() {
        out.stamps
            .extend(v.iter().map(|p| (p.clone(), mtime_of(p))));
    }
    out.files.sort_by(|a, b| path_order(&a.path, &b.path));
    out
}

/// The order of [`Path::cmp`] (component by component) for the normalised paths a walk
/// yields, by comparing bytes with the separators ranked first: `Path::cmp` splits both paths
/// into components on every comparison, which showed in profiles of large walks. The bytes
/// are the OS's own encoding of the path (the plain bytes on Unix), and the separators its
/// own (`/`, and `\` too on Windows).
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (
        a.as_os_str().as_encoded_bytes(),
        b.as_os_str().as_encoded_bytes(),
    );
    // Only the first differing byte decides; find it a word at a time (sibling paths share
    // long prefixes).
    let words = a.chunks_exact(8).zip(b.chunks_exact(8));
    let skip = words.take_while(|(x, y)| x == y).count() * 8;
    let first_difference = a[skip..].iter().zip(&b[skip..]).find(|(x, y)| x != y);
    match first_difference {
        Some((x, y)) => {
            let rank = |c: u8| {
                if std::path::is_separator(char::from(c)) {
                    0
                } else {
                    c
                }
            };
            rank(*x).cmp(&rank(*y))
        }
        None => a.len().cmp(&b.len()),
    }
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
        meta: Some(FileMeta::of(&meta)),
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
            ".hidden.py",
            ".hidden/g.py",
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
                    .replace('\\', "/")
            })
            .collect();
        // A fresh walk stats nothing: the search finds big.py too large when it opens it.
        assert_eq!(names, vec!["a.py", "big.py", "sub/b.py"]);
        assert!(w.files.iter().all(|f| f.meta.is_none()));
        assert!(w.skipped.is_empty());
        let langs = languages_present(root, 1 << 20);
        assert_eq!(langs[0].0.id(), "python");
        assert_eq!(langs.len(), 2);
    }

    /// Sets `path`'s mtime `secs` seconds into the past.
    fn age(path: &Path, secs: u64) {
        let when = SystemTime::now() - std::time::Duration::from_secs(secs);
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        // Windows sets times only through a handle that may write attributes, and opens a
        // folder only with FILE_FLAG_BACKUP_SEMANTICS.
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            options.access_mode(0x100).custom_flags(0x0200_0000);
        }
        options.open(path).unwrap().set_modified(when).unwrap();
    }

    #[test]
    fn a_remembered_walk_is_reused_only_while_nothing_changed() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.py"), "x = 1\n").unwrap();
        let py = Lang::from_id("python");
        let cache = WalkCache::default();
        // Folders changed a moment ago: walked, but not remembered (the walk may have seen
        // them half-changed).
        let w = cache.walk(root, py, 1 << 20);
        assert_eq!(w.files.len(), 1);
        assert!(cache.walk(root, py, 1 << 20).files[0].meta.is_none());
        age(root, 60);
        age(&root.join("sub"), 60);
        // Walked and remembered; the next walk reuses it (every file stat'ed again).
        assert!(cache.walk(root, py, 1 << 20).files[0].meta.is_none());
        std::fs::write(root.join("sub/a.py"), "x = 12345\n").unwrap();
        let w = cache.walk(root, py, 1 << 20);
        assert_eq!(w.files[0].meta.map(|m| m.size), Some(10));
        // Over the size cap now: the remembered walk's stat says so.
        let w = cache.walk(root, py, 5);
        assert_eq!(
            w.skipped,
            vec![(root.join("sub/a.py"), SkipReason::TooLarge)]
        );
        // A new file changes the folder: walked again.
        std::fs::write(root.join("sub/b.py"), "y = 1\n").unwrap();
        let w = cache.walk(root, py, 1 << 20);
        assert_eq!(w.files.len(), 2);
        assert!(w.files[0].meta.is_none());
        // An ignore file created: walked again, and its rules apply.
        std::fs::write(root.join(".gitignore"), "c.py\n").unwrap();
        age(root, 60);
        age(&root.join("sub"), 60);
        age(&root.join(".gitignore"), 60);
        assert_eq!(cache.walk(root, py, 1 << 20).files.len(), 2);
        assert!(cache.walk(root, py, 1 << 20).files[0].meta.is_some());
        // The same ignore file edited in place (its folder's mtime stays): walked again.
        let dir_mtime = mtime_of(root);
        std::fs::write(root.join(".gitignore"), "b.py\n").unwrap();
        age(&root.join(".gitignore"), 30);
        assert_eq!(mtime_of(root), dir_mtime);
        let w = cache.walk(root, py, 1 << 20);
        assert_eq!(w.files.len(), 1);
        assert!(w.files[0].meta.is_none());
    }

    #[test]
    fn path_order_is_component_order() {
        let long = "/root/projects/some-long-folder-name/src";
        let names = [
            "a.b/c.py",
            "a/b.py",
            "ab.py",
            "a/a/z.py",
            "a-b.py",
            "a",
            "a/b",
            "a0/x.py",
            "ab/c/d.py",
            "a/bb.py",
            "a/b/c/d.py",
            "b",
            "a.py",
        ];
        let mut paths: Vec<PathBuf> = names
            .iter()
            .flat_map(|n| {
                [
                    format!("/r/{n}"),
                    format!("{long}/{n}"),
                    format!("{long}x/{n}"),
                ]
            })
            .map(PathBuf::from)
            .collect();
        let mut by_components = paths.clone();
        by_components.sort();
        paths.sort_by(|a, b| path_order(a, b));
        assert_eq!(paths, by_components);
    }
}
