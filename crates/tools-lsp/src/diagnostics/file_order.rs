//! The order in which the files of a big break are shown: the written file's own package
//! first (its folder), then the files that import it, then the files that import those,
//! and so on; the files the scan cannot connect to a written one come last. Within a place,
//! path order.
//!
//! The import graph is a text scan of the affected files only (never the whole project,
//! never anything run): a file imports another when one of its import lines names that
//! file's module — its stem, or its folder for a Go file (a Go import names a package) and
//! for a package's own index file (`__init__.py`, `mod.rs`, `index.ts`). A scan may connect
//! two files that are not really connected; it only changes the order things are shown in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Largest file read to find its imports.
const FILE_CAP: u64 = 512 * 1024;

/// Where an affected file stands from the written files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// In the folder of a written file (a written file itself included).
    OwnPackage,
    /// This many imports away from a written file (1: it imports one directly).
    ImportsAway(usize),
    /// Not connected to a written file by the scan.
    Elsewhere,
}

impl Place {
    /// How the summary names the place.
    pub fn label(self) -> String {
        match self {
            Place::OwnPackage => "the written file's package".into(),
            Place::ImportsAway(1) => "imports it".into(),
            Place::ImportsAway(n) => format!("{n} imports away"),
            Place::Elsewhere => "elsewhere".into(),
        }
    }
}

/// `files` with their place, ordered: own package, then by import distance, then the rest;
/// path order within each.
pub fn order(written: &[PathBuf], files: &[PathBuf]) -> Vec<(PathBuf, Place)> {
    let mut place: HashMap<&Path, Place> = HashMap::new();
    for f in files {
        if written
            .iter()
            .any(|w| w == f || (w.parent().is_some() && w.parent() == f.parent()))
        {
            place.insert(f, Place::OwnPackage);
        }
    }
    // Breadth first from the written files, over the affected files' import lines.
    let imports: HashMap<&Path, Vec<String>> = files
        .iter()
        .filter(|f| !place.contains_key(f.as_path()))
        .map(|f| (f.as_path(), import_lines(f)))
        .collect();
    let mut frontier: Vec<&Path> = written.iter().map(PathBuf::as_path).collect();
    let mut distance = 0;
    while !frontier.is_empty() {
        distance += 1;
        let names: Vec<String> = frontier.iter().flat_map(|p| module_names(p)).collect();
        let mut next = Vec::new();
        for (f, lines) in &imports {
            if place.contains_key(f) {
                continue;
            }
            if lines.iter().any(|l| names.iter().any(|n| names_word(l, n))) {
                place.insert(f, Place::ImportsAway(distance));
                next.push(*f);
            }
        }
        frontier = next;
    }
    let mut out: Vec<(PathBuf, Place)> = files
        .iter()
        .map(|f| {
            (
                f.clone(),
                place.get(f.as_path()).copied().unwrap_or(Place::Elsewhere),
            )
        })
        .collect();
    out.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// The names other files import `path` by: its stem, and its folder for a Go file or a
/// package's index file.
fn module_names(path: &Path) -> Vec<String> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .map(|s| s.to_string_lossy().into_owned());
    let by_folder = path.extension().is_some_and(|e| e == "go")
        || matches!(stem.as_str(), "__init__" | "mod" | "index" | "lib" | "main");
    match (by_folder, folder) {
        (true, Some(folder)) => vec![folder],
        _ => vec![stem],
    }
}

/// The lines of `path` that import something: `import`, `from … import`, `use`,
/// `#include`, `require(`, and the quoted paths of a Go import block.
fn import_lines(path: &Path) -> Vec<String> {
    if std::fs::metadata(path).map_or(true, |m| m.len() > FILE_CAP) {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let go = path.extension().is_some_and(|e| e == "go");
    let mut in_go_block = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if go && line.starts_with("import (") {
            in_go_block = true;
            continue;
        }
        if in_go_block {
            if line.starts_with(')') {
                in_go_block = false;
            } else {
                out.push(line.to_string());
            }
            continue;
        }
        let is_import = [
            "import ", "from ", "use ", "pub use ", "#include", "export ",
        ]
        .iter()
        .any(|k| line.starts_with(k))
            || line.contains("require(");
        if is_import {
            out.push(line.to_string());
        }
    }
    out
}

/// Whether `line` has `name` as a whole word (not inside a longer identifier).
fn names_word(line: &str, name: &str) -> bool {
    tools_core::first_whole_word(line, name, tools_core::is_ident_char).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_package_then_importers_by_distance_then_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        };
        let core = w("pkg/core.py", "def total(xs, scale): ...\n");
        let sibling = w("pkg/b.py", "x = 1\n");
        let direct = w("app/z.py", "from pkg.core import total\n");
        let second = w("cli/a.py", "from app import z\n");
        // `cores` is not `core`: a longer identifier is another module.
        let other = w("other/a.py", "import cores\n");
        let files = vec![
            other.clone(),
            second.clone(),
            direct.clone(),
            sibling.clone(),
            core.clone(),
        ];
        assert_eq!(
            order(std::slice::from_ref(&core), &files),
            vec![
                (sibling, Place::OwnPackage),
                (core, Place::OwnPackage),
                (direct, Place::ImportsAway(1)),
                (second, Place::ImportsAway(2)),
                (other, Place::Elsewhere),
            ]
        );
    }

    #[test]
    fn go_files_are_imported_by_their_package_folder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cmd/main.go");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/util\"\n)\n",
        )
        .unwrap();
        let util = dir.path().join("util/sum.go");
        assert_eq!(
            order(std::slice::from_ref(&util), std::slice::from_ref(&p)),
            vec![(p, Place::ImportsAway(1))]
        );
    }
}
