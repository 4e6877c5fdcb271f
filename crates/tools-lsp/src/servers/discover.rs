//! Discovery, shared by the tools, `status` and `doctor`: which root a file belongs to (the
//! nearest folder above it, inside the workspace, holding one of the server's markers) and
//! which binary a command resolves to. Where a program may come from is decided by
//! [`tools_core::discovery`] for every family alike: in a trusted run the project's own
//! `.venv/bin`, `venv/bin` and `node_modules/.bin` (from the root up to the workspace root)
//! come before `$PATH`, since a server from another environment answers about other packages;
//! in an untrusted run only `$PATH` outside the workspace is searched.

use std::path::{Path, PathBuf};
pub use tools_core::discovery::LOCAL_BIN_DIRS;
use tools_core::discovery::ProgramSearch;

use crate::servers::table::{Candidate, ServerSpec};

/// Resolves `program` (a bare name, or a path relative to `root`) for a project at `root`.
pub fn resolve_program(program: &str, root: &Path, search: &ProgramSearch) -> Option<PathBuf> {
    search.find(program, root).ok().map(|f| f.path)
}

/// The outcome of resolving a list of candidate commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The first candidate whose program resolved.
    Found {
        /// The candidate.
        candidate: Candidate,
        /// Where its program is.
        path: PathBuf,
    },
    /// None resolved.
    Missing {
        /// The program names looked for.
        looked_for: Vec<String>,
        /// A short description of where.
        looked_in: String,
    },
}

/// Resolves the first candidate that exists for a project at `root`.
pub fn resolve(candidates: &[Candidate], root: &Path, search: &ProgramSearch) -> Resolution {
    for c in candidates {
        if let Some(path) = resolve_program(c.program(), root, search) {
            return Resolution::Found {
                candidate: c.clone(),
                path,
            };
        }
    }
    let mut looked_in = search.where_text(root);
    if let Some(skipped) = search.skipped(root) {
        looked_in = format!("{looked_in}; {skipped}");
    }
    Resolution::Missing {
        looked_for: candidates.iter().map(|c| c.program().to_string()).collect(),
        looked_in,
    }
}

/// The one line `status` and `doctor` carry in an untrusted run: what discovery and the
/// servers skip here, and that `--trust` enables it. `None` in a trusted run.
pub fn untrusted_line(search: &ProgramSearch, table: &[ServerSpec]) -> Option<String> {
    if search.trusted() {
        return None;
    }
    let mut skipped = Vec::new();
    let ws = search.workspace();
    let local: Vec<&str> = LOCAL_BIN_DIRS
        .iter()
        .copied()
        .filter(|d| ws.join(d).is_dir())
        .collect();
    if !local.is_empty() {
        skipped.push(format!(
            "project-local servers ({}) are not run",
            local.join(", ")
        ));
    }
    if table.iter().any(|s| s.language == "rust") {
        skipped
            .push("rust-analyzer runs without build scripts, proc macros and check-on-save".into());
    }
    skipped.push(
        "`diagnostics \"*\"` runs no project build (cargo check, go vet, mypy, dart analyze, C compile commands, cmake)"
            .into(),
    );
    Some(tools_core::trust::skipped_line(&skipped.join("; ")))
}

/// The nearest folder at or above `file`'s folder, inside `workspace`, holding one of
/// `markers`.
pub fn find_root(file: &Path, markers: &[String], workspace: &Path) -> Option<PathBuf> {
    let mut cur = if file.is_dir() {
        Some(file)
    } else {
        file.parent()
    };
    while let Some(d) = cur {
        if !d.starts_with(workspace) {
            return None;
        }
        if markers.iter().any(|m| d.join(m).exists()) {
            return Some(d.to_path_buf());
        }
        if d == workspace {
            return None;
        }
        cur = d.parent();
    }
    None
}

/// The server spec handling `file` in `workspace`, by extension.
pub fn spec_for<'a>(
    table: &'a [ServerSpec],
    file: &Path,
    workspace: &Path,
) -> Option<&'a ServerSpec> {
    table.iter().find(|s| s.serves(file, workspace))
}

/// The extensions of `language` in the run's server table.
pub fn spec_for_language(language: &str, run: &tools_core::Run) -> Option<Vec<String>> {
    let cfg: crate::servers::config::LspConfig = run.config().section("lsp").ok()?;
    crate::servers::table::server_table(&cfg)
        .into_iter()
        .find(|s| s.language == language)
        .map(|s| s.extensions)
}

/// What one walk of the workspace saw: per language, how many files and which folders hold
/// one of its markers.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceScan {
    /// Language → number of files with one of its extensions.
    pub files: std::collections::BTreeMap<String, usize>,
    /// Language → folders holding one of its markers (sorted, capped at 20).
    pub roots: std::collections::BTreeMap<String, Vec<PathBuf>>,
    /// Language → how many of its files lie under an asset folder (see [`in_asset_folder`]).
    pub asset_files: std::collections::BTreeMap<String, usize>,
}

/// Folders that hold a site's assets or code copied in from elsewhere, not the program the
/// workspace is about: Django's `static/admin/js/`, a `vendor/` tree, a `third_party/` copy.
const ASSET_FOLDERS: &[&str] = &[
    "static",
    "staticfiles",
    "assets",
    "public",
    "vendor",
    "vendored",
    "third_party",
    "third-party",
];

/// Whether `file` lies under an asset folder of `workspace` (see [`ASSET_FOLDERS`]).
pub fn in_asset_folder(file: &Path, workspace: &Path) -> bool {
    let rel = file.strip_prefix(workspace).unwrap_or(file);
    rel.parent().is_some_and(|dir| {
        dir.components()
            .any(|c| ASSET_FOLDERS.contains(&c.as_os_str().to_string_lossy().as_ref()))
    })
}

/// Walks the workspace (honouring ignore files, at most 20 000 entries) to see which
/// languages it holds and where their roots are.
pub fn scan_workspace(table: &[ServerSpec], workspace: &Path) -> WorkspaceScan {
    let mut scan = WorkspaceScan::default();
    let walker = ignore::WalkBuilder::new(workspace)
        .hidden(false)
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n == ".git" || n == "node_modules" || n == ".venv" || n == "venv" || n == "target")
        })
        .max_depth(Some(12))
        .build();
    for entry in walker.flatten().take(20_000) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        for spec in table {
            if spec.markers.contains(&name)
                && let Some(parent) = path.parent()
            {
                let roots = scan.roots.entry(spec.language.clone()).or_default();
                if !roots.iter().any(|r| r == parent) && roots.len() < 20 {
                    roots.push(parent.to_path_buf());
                }
            }
        }
        if entry.file_type().is_some_and(|t| t.is_file())
            && let Some(spec) = spec_for(table, path, workspace)
        {
            *scan.files.entry(spec.language.clone()).or_default() += 1;
            if in_asset_folder(path, workspace) {
                *scan.asset_files.entry(spec.language.clone()).or_default() += 1;
            }
        }
    }
    for r in scan.roots.values_mut() {
        r.sort();
    }
    // `.git` also marks the workspace root itself (the walker skips the folder's contents).
    if workspace.join(".git").exists() {
        for spec in table
            .iter()
            .filter(|s| s.markers.iter().any(|m| m == ".git"))
        {
            let roots = scan.roots.entry(spec.language.clone()).or_default();
            if !roots.iter().any(|r| r == workspace) {
                roots.insert(0, workspace.to_path_buf());
            }
        }
    }
    scan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_folders_are_any_folder_of_the_path_below_the_workspace() {
        let ws = Path::new("/w/static/site");
        assert!(in_asset_folder(
            &ws.join("django/contrib/admin/static/admin/js/core.js"),
            ws
        ));
        assert!(in_asset_folder(&ws.join("vendor/lib.js"), ws));
        // The workspace's own folders above it do not count, nor a file named like one.
        assert!(!in_asset_folder(
            &ws.join("js_tests/admin/core.test.js"),
            ws
        ));
        assert!(!in_asset_folder(&ws.join("src/static.js"), ws));
    }

    #[test]
    fn roots_are_nearest_markers_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(ws.join("go.mod"), "module x\n").unwrap();
        std::fs::write(ws.join("a/go.mod"), "module y\n").unwrap();
        let markers = vec!["go.mod".to_string()];
        assert_eq!(
            find_root(&ws.join("a/b/x.go"), &markers, &ws),
            Some(ws.join("a"))
        );
        assert_eq!(find_root(&ws.join("x.go"), &markers, &ws), Some(ws.clone()));
        assert_eq!(find_root(&ws.join("x.go"), &["nope".into()], &ws), None);
    }

    #[cfg(unix)]
    #[test]
    fn local_bin_dirs_come_before_path_in_trusted_runs_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".venv/bin")).unwrap();
        let exe = ws.join(".venv/bin/sh");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let trusted = ProgramSearch::new(&ws, true);
        assert_eq!(resolve_program("sh", &ws, &trusted), Some(exe.clone()));
        let untrusted = ProgramSearch::new(&ws, false);
        let from_path = resolve_program("sh", &ws, &untrusted).unwrap();
        assert_ne!(from_path, exe);
        let c = vec![Candidate::command(vec!["no-such-binary-here".into()])];
        match resolve(&c, &ws, &untrusted) {
            Resolution::Missing { looked_in, .. } => {
                assert!(looked_in.contains("untrusted workspace"), "{looked_in}");
                assert!(looked_in.contains("--trust"), "{looked_in}");
            }
            other => panic!("{other:?}"),
        }
        match resolve(&c, &ws, &trusted) {
            Resolution::Missing {
                looked_for,
                looked_in,
            } => {
                assert_eq!(looked_for, vec!["no-such-binary-here".to_string()]);
                assert!(looked_in.contains(".venv/bin"));
            }
            other => panic!("{other:?}"),
        }
    }
}
