//! TypeScript projects beside a server's root whose files import a file it serves.
//!
//! Without a workspace marker above them (see `roots`), two sibling folders that each hold a
//! `tsconfig.json` get a server each, rooted at each folder. When one imports the other by a
//! relative path (`import … from "../pricing/rates"`, no project reference), the imported
//! file's server never loads the importing project: its references, renames and a write's
//! dependents miss every use there. tsserver loads the project of any file opened in it,
//! whatever its root, so the files outside the root that import the file asked about are
//! found by a bounded text scan (`js_specifiers`: nothing from the repository runs), and one
//! file of each such project is opened in the same server before it is asked.
//!
//! Bounded: at most [`SCAN_CAP`] files are read and [`MAX_SIBLING_PROJECTS`] projects opened;
//! the answer says when either cut the search short.

use std::path::{Path, PathBuf};

use crate::client::LspClient;
use crate::servers::js_specifiers;

/// Most files read outside the server's root while looking for importers.
pub const SCAN_CAP: usize = 5_000;
/// Most folder entries walked while looking (a huge tree stops here too).
const WALK_CAP: usize = 50_000;
/// Largest file read (a bundle of that size is no project's source).
const FILE_CAP: u64 = 512 * 1024;
/// Most importing projects opened for one question.
pub const MAX_SIBLING_PROJECTS: usize = 8;

/// Longest wait for the server to publish for the last file opened (its projects loaded).
const PUBLISH_WAIT: std::time::Duration = std::time::Duration::from_secs(8);

/// The project configuration files of TypeScript/JavaScript.
const TS_CONFIGS: &[&str] = &["tsconfig.json", "jsconfig.json"];

/// Folders never searched: dependencies, build output, version control.
fn skipped(name: &str) -> bool {
    matches!(
        name,
        ".git" | "node_modules" | ".venv" | "venv" | "target" | "dist" | "build" | "out"
    )
}

/// The importers found outside a server's root, by project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiblingImporters {
    /// Each importing project (the folder of its nearest configuration, or the file itself
    /// when none holds it) with its importing files, in path order.
    pub projects: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Whether a cap stopped the scan before every file outside the root was read.
    pub cut: bool,
}

impl SiblingImporters {
    /// Every importing file, project by project.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        self.projects.iter().flat_map(|(_, files)| files)
    }
}

/// The files under `workspace` but outside `root` with one of `extensions` that import one
/// of `targets` by a relative specifier, grouped by their project. Empty when `root` is the
/// workspace (nothing lies beside it).
pub fn sibling_importers(
    workspace: &Path,
    root: &Path,
    targets: &[PathBuf],
    extensions: &[String],
) -> SiblingImporters {
    let mut out = SiblingImporters::default();
    if root == workspace || !root.starts_with(workspace) || targets.is_empty() {
        return out;
    }
    let inside_root = root.to_path_buf();
    let walker = ignore::WalkBuilder::new(workspace)
        .hidden(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            e.path() != inside_root && !skipped(&e.file_name().to_string_lossy())
        })
        .max_depth(Some(12))
        .build();
    let mut configs: Vec<PathBuf> = Vec::new();
    let mut found: Vec<PathBuf> = Vec::new();
    let mut read = 0;
    let mut walked = 0;
    for entry in walker.flatten() {
        walked += 1;
        if walked > WALK_CAP || read >= SCAN_CAP {
            out.cut = true;
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        if TS_CONFIGS.iter().any(|c| *c == name) {
            if let Some(dir) = path.parent() {
                configs.push(dir.to_path_buf());
            }
            continue;
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if name.ends_with(".d.ts") || !extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
            continue;
        }
        if entry.metadata().map(|m| m.len() > FILE_CAP).unwrap_or(true) {
            continue;
        }
        read += 1;
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let dir = path.parent().unwrap_or(workspace);
        if targets
            .iter()
            .any(|t| t != path && js_specifiers::imports(&text, dir, t))
        {
            found.push(path.to_path_buf());
        }
    }
    // The configurations above the root count too: a file beside the root may belong to the
    // workspace's own `tsconfig.json`.
    for dir in root
        .ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(workspace))
    {
        if TS_CONFIGS.iter().any(|c| dir.join(c).is_file()) && !configs.iter().any(|c| c == dir) {
            configs.push(dir.to_path_buf());
        }
    }
    for file in found {
        let project = configs
            .iter()
            .filter(|c| file.starts_with(c))
            .max_by_key(|c| c.components().count())
            .cloned()
            .unwrap_or_else(|| file.clone());
        match out.projects.iter_mut().find(|(p, _)| *p == project) {
            Some((_, files)) => files.push(file),
            None => out.projects.push((project, vec![file])),
        }
    }
    out
}

/// What loading the importing projects beside a server's root did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiblingsLoaded {
    /// Files opened now (one per importing project not open yet).
    pub opened: Vec<PathBuf>,
    /// Importing projects found.
    pub projects: usize,
    /// Importing projects left unopened past [`MAX_SIBLING_PROJECTS`].
    pub left_out: usize,
    /// Whether the scan stopped at a cap (more importers may lie beyond it).
    pub cut: bool,
}

impl SiblingsLoaded {
    /// The line an answer leads with when the search was cut short: what was missed, and
    /// `way_on` (what to do to reach it). `None` when it was not.
    pub fn cut_line(&self, server: &str, way_on: &str) -> Option<String> {
        let mut why = Vec::new();
        if self.left_out > 0 {
            why.push(format!(
                "{} of {} projects beside the root of {server} that import this file were not loaded (at most {MAX_SIBLING_PROJECTS} are opened)",
                self.left_out, self.projects
            ));
        }
        if self.cut {
            why.push(format!(
                "the search for projects beside the root of {server} that import this file stopped after reading {SCAN_CAP} files"
            ));
        }
        (!why.is_empty()).then(|| {
            format!(
                "{}, so uses there may be missing; {way_on}",
                why.join(", and ")
            )
        })
    }
}

/// Opens, in `client`, one importing file of each TypeScript project beside its root whose
/// files import one of `targets` (at most [`MAX_SIBLING_PROJECTS`]), then waits (bounded by
/// the server's indexing wait) for the server to load them. Nothing for other languages.
pub async fn load_sibling_importers(
    client: &LspClient,
    workspace: &Path,
    targets: &[PathBuf],
    extensions: &[String],
) -> SiblingsLoaded {
    let mut loaded = SiblingsLoaded::default();
    if client.language != "typescript" {
        return loaded;
    }
    let (ws, root, t, ext) = (
        workspace.to_path_buf(),
        client.root.clone(),
        targets.to_vec(),
        extensions.to_vec(),
    );
    let Ok(found) =
        tokio::task::spawn_blocking(move || sibling_importers(&ws, &root, &t, &ext)).await
    else {
        return loaded;
    };
    loaded.projects = found.projects.len();
    loaded.left_out = found.projects.len().saturating_sub(MAX_SIBLING_PROJECTS);
    loaded.cut = found.cut;
    let mut first = None;
    let mut last = None;
    for (_, files) in found.projects.iter().take(MAX_SIBLING_PROJECTS) {
        let mut open = false;
        for f in files {
            if client.is_open(f).await {
                open = true;
                break;
            }
        }
        if open {
            continue;
        }
        // A file gone since the scan leaves its project unloaded, like any other.
        if let Ok(doc) = client.sync_file(&files[0]).await {
            first.get_or_insert(doc.clone());
            last = Some((files[0].clone(), doc.version));
            loaded.opened.push(files[0].clone());
        }
    }
    if let Some(doc) = first {
        client.settle_after_first_open(&doc).await;
        client.wait_ready().await;
    }
    // The server had a file open already, so nothing above waits for it to load the new
    // projects; meanwhile typescript-language-server answers from its syntax-only server
    // (the file's own uses, not the declaration's). Its first publish for the last file
    // opened comes once every project opened before it is loaded.
    if let Some((path, version)) = last
        && !client.pulls_diagnostics()
    {
        let _ = client.wait_publish(&path, version, 0, PUBLISH_WAIT).await;
    }
    loaded
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::projects::tests::write;

    fn exts() -> Vec<String> {
        ["ts", "tsx", "js"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn importers_beside_the_root_are_grouped_by_their_project() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        write(w, "pricing/tsconfig.json", "{}");
        write(w, "pricing/rates.ts", "export const r = 1;\n");
        write(w, "pricing/use.ts", "import { r } from './rates';\n");
        write(w, "checkout/tsconfig.json", "{}");
        write(
            w,
            "checkout/cart.ts",
            "import { r } from '../pricing/rates';\n",
        );
        write(
            w,
            "checkout/sub/more.ts",
            "import { r } from '../../pricing/rates.js';\n",
        );
        write(w, "checkout/plain.ts", "export const p = 2;\n");
        write(w, "reports/tsconfig.json", "{}");
        write(w, "reports/summary.ts", "export const r = 3;\n");
        write(w, "loose.ts", "import { r } from './pricing/rates';\n");
        write(
            w,
            "node_modules/x/i.ts",
            "import { r } from '../../pricing/rates';\n",
        );
        let found = sibling_importers(
            w,
            &w.join("pricing"),
            &[w.join("pricing/rates.ts")],
            &exts(),
        );
        assert_eq!(
            found,
            SiblingImporters {
                projects: vec![
                    (
                        w.join("checkout"),
                        vec![w.join("checkout/cart.ts"), w.join("checkout/sub/more.ts")]
                    ),
                    (w.join("loose.ts"), vec![w.join("loose.ts")]),
                ],
                cut: false,
            }
        );
        // A workspace-level configuration holds the files beside the root.
        write(w, "tsconfig.json", "{}");
        let found = sibling_importers(
            w,
            &w.join("pricing"),
            &[w.join("pricing/rates.ts")],
            &exts(),
        );
        assert_eq!(
            found.projects[1],
            (w.to_path_buf(), vec![w.join("loose.ts")])
        );
        // A server rooted at the workspace has nothing beside it.
        assert_eq!(
            sibling_importers(w, w, &[w.join("pricing/rates.ts")], &exts()),
            SiblingImporters::default()
        );
    }

    #[test]
    fn a_cut_search_says_what_was_missed() {
        let l = SiblingsLoaded {
            opened: vec![],
            projects: 10,
            left_out: 2,
            cut: true,
        };
        assert_eq!(
            l.cut_line("typescript-language-server", "`ast_grep` finds them")
                .unwrap(),
            "2 of 10 projects beside the root of typescript-language-server that import this file were not loaded (at most 8 are opened), and the search for projects beside the root of typescript-language-server that import this file stopped after reading 5000 files, so uses there may be missing; `ast_grep` finds them"
        );
        assert_eq!(SiblingsLoaded::default().cut_line("s", "x"), None);
    }
}
