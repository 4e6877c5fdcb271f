//! Loading every project of a language before a question about the whole workspace.
//!
//! Some servers load a project only when one of its files is opened: tsserver answers
//! `workspace/symbol` with "No Project" until then, and knows nothing of a sibling package
//! or of a test folder with its own `tsconfig.json`; clangd reads `compile_commands.json`
//! (and starts its background index) only for an opened file. Before a workspace symbol
//! search or a rename, one file of each such project under the server's root is opened
//! (bounded), so the answer covers the workspace rather than whatever happened to be open.
//!
//! Only files are read here (configuration files and the compile database as JSON); nothing
//! from the repository runs.

use std::path::{Path, PathBuf};

use crate::client::LspClient;
use crate::servers::state_dir::compile_database;

/// Most projects opened for one server (a monorepo of hundreds of packages is served by
/// what the first ones bring in; the answer then says so).
pub const MAX_PROJECTS: usize = 24;

/// Largest compile database read to find a source file (bigger ones: the first file is
/// looked for in the first 1 MiB only).
const DATABASE_HEAD: usize = 1 << 20;

/// Most folder entries one search looks at.
const WALK_CAP: usize = 20_000;

/// The project configuration files of TypeScript/JavaScript: each names one project.
const TS_CONFIGS: &[&str] = &["tsconfig.json", "jsconfig.json"];

/// Folders never searched: dependencies, build output, version control.
fn skipped(name: &str) -> bool {
    matches!(
        name,
        ".git" | "node_modules" | ".venv" | "venv" | "target" | "dist" | "build" | "out"
    )
}

/// One file of each project of `language` under `root`, at most [`MAX_PROJECTS`], and how
/// many projects were found in all. Empty for languages whose servers load the workspace
/// on their own.
pub fn project_files(language: &str, extensions: &[String], root: &Path) -> (Vec<PathBuf>, usize) {
    match language {
        "typescript" => typescript_projects(extensions, root),
        "c" => c_projects(root),
        _ => (Vec::new(), 0),
    }
}

fn walker(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .filter_entry(|e| !skipped(&e.file_name().to_string_lossy()))
        .max_depth(Some(12))
        .build()
}

/// Every folder holding a `tsconfig.json`/`jsconfig.json`, and for each the first source file
/// (in path order) whose nearest configuration is that one. A solution-style configuration
/// (`"files": []` with references) has no file of its own and is left out: its references
/// are projects found on their own.
fn typescript_projects(extensions: &[String], root: &Path) -> (Vec<PathBuf>, usize) {
    let mut configs: Vec<PathBuf> = Vec::new();
    let mut sources: Vec<PathBuf> = Vec::new();
    for entry in walker(root).flatten().take(WALK_CAP) {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        if TS_CONFIGS.iter().any(|c| *c == name) {
            if let Some(dir) = path.parent()
                && !configs.iter().any(|c| c == dir)
            {
                configs.push(dir.to_path_buf());
            }
            continue;
        }
        let is_source = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| extensions.iter().any(|x| x.eq_ignore_ascii_case(ext)))
            && !name.ends_with(".d.ts");
        if is_source {
            sources.push(path.to_path_buf());
        }
    }
    let nearest_config = |file: &Path| -> Option<&PathBuf> {
        configs
            .iter()
            .filter(|c| file.starts_with(c))
            .max_by_key(|c| c.components().count())
    };
    let mut picked: Vec<PathBuf> = Vec::new();
    let mut found = 0;
    for config in &configs {
        if let Some(file) = sources
            .iter()
            .find(|s| nearest_config(s).is_some_and(|c| c == config))
        {
            found += 1;
            if picked.len() < MAX_PROJECTS {
                picked.push(file.clone());
            }
        }
    }
    (picked, found)
}

/// For each compile database under `root` (the root's own, as clangd finds it, then any in
/// a sub-folder), the first file it lists that exists.
fn c_projects(root: &Path) -> (Vec<PathBuf>, usize) {
    let mut databases: Vec<PathBuf> = compile_database(root).into_iter().collect();
    for entry in walker(root).flatten().take(WALK_CAP) {
        if entry.file_name() == "compile_commands.json"
            && entry.file_type().is_some_and(|t| t.is_file())
            && !databases.iter().any(|d| d == entry.path())
        {
            databases.push(entry.path().to_path_buf());
        }
    }
    let found = databases.len();
    let picked = databases
        .iter()
        .take(MAX_PROJECTS)
        .filter_map(|db| first_listed_file(db))
        .collect();
    (picked, found)
}

/// The first file of a compile database that exists (entries name it absolute, or relative
/// to the entry's `directory`).
fn first_listed_file(db: &Path) -> Option<PathBuf> {
    let text = std::fs::read(db).ok()?;
    let entries: Vec<serde_json::Value> = match serde_json::from_slice(&text) {
        Ok(v) => v,
        // A database too big to parse whole here: its first complete entries are enough.
        Err(_) if text.len() > DATABASE_HEAD => first_entries(&text[..DATABASE_HEAD])?,
        Err(_) => return None,
    };
    entries.iter().find_map(|e| {
        let file = PathBuf::from(e.get("file")?.as_str()?);
        let full = if file.is_absolute() {
            file
        } else {
            PathBuf::from(e.get("directory")?.as_str()?).join(file)
        };
        full.is_file().then_some(full)
    })
}

/// The entries of a database cut at `head` bytes: up to the last complete entry.
fn first_entries(head: &[u8]) -> Option<Vec<serde_json::Value>> {
    let text = String::from_utf8_lossy(head);
    let cut = text.rfind("},")?;
    serde_json::from_str(&format!("{}}}]", &text[..cut])).ok()
}

/// What loading the projects did for one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Files opened now (one per project not yet open).
    pub opened: Vec<PathBuf>,
    /// Projects found under the server's root.
    pub projects: usize,
    /// Projects left unopened past [`MAX_PROJECTS`].
    pub left_out: usize,
}

impl Loaded {
    /// The line an answer about the whole workspace leads with when projects were left
    /// unopened: which server, how many, and `way_on` (what to do to reach them).
    pub fn left_out_line(&self, server: &str, way_on: &str) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "{} of {} projects were not loaded for {server} (at most {MAX_PROJECTS} are opened), so what lies in them may be missing; {way_on}",
                self.left_out, self.projects
            )
        })
    }
}

/// Opens one file of every project of `client`'s language under its root that has none open
/// yet, then waits (bounded by the server's indexing wait) for the server to load them.
/// pyright and basedpyright have one program per root: they are waited for until they know
/// its files.
pub async fn load_projects(client: &LspClient, extensions: &[String]) -> Loaded {
    client.wait_project_files_found().await;
    let root = client.root.clone();
    let language = client.language.clone();
    let ext = extensions.to_vec();
    let (files, found) =
        match tokio::task::spawn_blocking(move || project_files(&language, &ext, &root)).await {
            Ok(r) => r,
            Err(_) => return Loaded::default(),
        };
    let mut loaded = Loaded {
        opened: Vec::new(),
        projects: found,
        left_out: found.saturating_sub(files.len()),
    };
    let mut first = None;
    for f in files {
        if client.is_open(&f).await {
            continue;
        }
        // A file that cannot be opened (gone since the walk) leaves its project to the
        // server's own discovery.
        if let Ok(doc) = client.sync_file(&f).await {
            first.get_or_insert(doc);
            loaded.opened.push(f);
        }
    }
    if let Some(doc) = first {
        client.settle_after_first_open(&doc).await;
        client.wait_ready().await;
    }
    loaded
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes `text` to `rel` under `root`, making its folders.
    pub(crate) fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn exts() -> Vec<String> {
        ["ts", "tsx", "js"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn one_file_per_typescript_project_and_none_for_a_solution_config() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, "tsconfig.json", r#"{"files": [], "references": []}"#);
        write(r, "packages/core/tsconfig.json", "{}");
        write(r, "packages/core/src/b.ts", "");
        write(r, "packages/core/src/a.ts", "");
        write(r, "packages/core/src/types.d.ts", "");
        write(r, "packages/core/node_modules/dep/tsconfig.json", "{}");
        write(r, "packages/core/node_modules/dep/index.ts", "");
        write(r, "packages/app/tsconfig.json", "{}");
        write(r, "packages/app/main.tsx", "");
        write(r, "test/tsconfig.json", "{}");
        write(r, "test/a.test.ts", "");
        let (files, found) = project_files("typescript", &exts(), r);
        assert_eq!(
            files,
            [
                r.join("packages/app/main.tsx"),
                r.join("packages/core/src/a.ts"),
                r.join("test/a.test.ts"),
            ]
        );
        assert_eq!(found, 3);
        assert_eq!(project_files("python", &exts(), r), (vec![], 0));
    }

    #[test]
    fn the_first_existing_file_of_each_compile_database() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, "src/main.cpp", "");
        write(r, "lib/util.c", "");
        let db = serde_json::json!([
            {"directory": r, "file": "src/gone.cpp"},
            {"directory": r, "file": "src/main.cpp"},
        ]);
        write(r, "compile_commands.json", &db.to_string());
        let sub = serde_json::json!([{"directory": "/", "file": r.join("lib/util.c")}]);
        write(r, "lib/compile_commands.json", &sub.to_string());
        write(r, "broken/compile_commands.json", "not json");
        let (files, found) = project_files("c", &[], r);
        assert_eq!(files, [r.join("src/main.cpp"), r.join("lib/util.c")]);
        assert_eq!(found, 3);
    }

    #[test]
    fn a_cut_database_still_names_its_first_entries() {
        let head = br#"[{"directory": "/a", "file": "x.c"}, {"directory": "/a", "file": "y.c"}, {"directory": "/a", "fi"#;
        let entries = first_entries(head).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1]["file"], "y.c");
        assert_eq!(first_entries(b"[{\"file\": "), None);
    }
}
