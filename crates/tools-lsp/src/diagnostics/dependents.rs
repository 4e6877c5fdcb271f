//! A cheap import graph: which files import a given one.
//!
//! Some servers (tsserver, clangd) diagnose only the documents that are open, so an edit
//! that breaks a caller in a file nobody opened goes unseen. For those servers the files
//! that import a written file are opened as well — as *baseline* observers: what they
//! already had is never reported as new. Finding them must be cheap and must never run
//! anything from the repository, so this is a text scan, not a resolver: relative module
//! specifiers (`from "./lib"`, `require("../src/lib.js")`, `import("./x")`) for
//! JavaScript/TypeScript and `#include "name.h"` for C and C++. It may list a file that does
//! not really import the target (opening one more file as baseline costs little); it reads
//! the server's root, and for JavaScript/TypeScript the projects beside it in the workspace
//! (`servers::sibling_projects`: a sibling package importing `../pkg/file` has no server of
//! the written file's looking at it), skips vendored folders and is capped.
//!
//! Opened after a write, an importer shows the written file's *new* text, so whatever the
//! write broke in it would be taken for its baseline. So the written file is first opened
//! at its text from before the write (the pre-image the safe writer keeps, see
//! `tools_core::pre_write`), the importers are opened and settle against that, and only
//! then is the new text synced: the importers' breakage is the write's own news.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tools_core::PreImage;

use crate::client::LspClient;
use crate::diagnostics::changed_items::{
    ITEMS_CAP, changed_items, changed_lines, document_symbols, files_using, items_from_grammar,
};
use crate::servers::sibling_projects::sibling_importers;
use crate::servers::supervisor::ServerSupervisor;

/// Most files read while looking for importers.
pub const SCAN_CAP: usize = 5_000;
/// Largest file read while looking for importers.
const FILE_CAP: u64 = 512 * 1024;

/// How a language names its imports, as far as this scan understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStyle {
    /// Relative module specifiers (`./x`, `../y/z.js`).
    JavaScript,
    /// `#include "file.h"` (matched by file name).
    CInclude,
}

impl ImportStyle {
    /// The style of a server group, if this scan covers it.
    pub fn of_language(language: &str) -> Option<ImportStyle> {
        match language {
            "typescript" | "javascript" => Some(ImportStyle::JavaScript),
            "c" | "cpp" => Some(ImportStyle::CInclude),
            _ => None,
        }
    }
}

/// Up to `cap` files under `root` with one of `extensions` that import `target` (never
/// `target` itself), in path order. For C and C++ the includers are followed through
/// headers: a file that includes a header that includes `target` is rebuilt by the server
/// too, and its errors are the write's as much as a direct includer's.
pub fn importers(
    root: &Path,
    target: &Path,
    style: ImportStyle,
    extensions: &[String],
    cap: usize,
) -> Vec<PathBuf> {
    if cap == 0 {
        return Vec::new();
    }
    let walker = ignore::WalkBuilder::new(root)
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !matches!(
                n.as_ref(),
                "node_modules" | ".git" | "target" | ".venv" | "venv" | "dist" | "build"
            )
        })
        .build();
    let mut found = Vec::new();
    // C and C++: every scanned file's includes (by file name), to follow through headers.
    let mut includes: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for entry in walker.flatten().take(SCAN_CAP) {
        let path = entry.path();
        if path == target || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
            continue;
        }
        if entry.metadata().map(|m| m.len() > FILE_CAP).unwrap_or(true) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        match style {
            ImportStyle::JavaScript => {
                let dir = path.parent().unwrap_or(root);
                if crate::servers::js_specifiers::imports(&text, dir, target) {
                    found.push(path.to_path_buf());
                    if found.len() >= cap {
                        break;
                    }
                }
            }
            ImportStyle::CInclude => includes.push((path.to_path_buf(), c_include_names(&text))),
        }
    }
    if style == ImportStyle::CInclude {
        found = includers_through_headers(target, &includes, cap);
    }
    found.sort();
    found
}

/// The files of `includes` that include `target` directly or through headers, breadth
/// first, at most `cap`.
fn includers_through_headers(
    target: &Path,
    includes: &[(PathBuf, Vec<String>)],
    cap: usize,
) -> Vec<PathBuf> {
    let name_of = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut found: Vec<PathBuf> = Vec::new();
    let mut frontier = vec![name_of(target)];
    let mut seen_names = frontier.clone();
    while let Some(name) = frontier.pop() {
        for (path, names) in includes {
            if found.len() >= cap {
                return found;
            }
            if found.contains(path) || !names.contains(&name) {
                continue;
            }
            found.push(path.clone());
            let own = name_of(path);
            if is_header(path) && !seen_names.contains(&own) {
                seen_names.push(own.clone());
                frontier.push(own);
            }
        }
    }
    found
}

/// Whether `path` is a C or C++ header (something other files include).
fn is_header(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("h" | "hh" | "hpp" | "hxx" | "h++" | "inc" | "inl" | "ipp" | "tpp")
    )
}

/// The importers of some files, for one server.
#[derive(Debug, Clone, Default)]
pub struct Importers {
    /// The ones opened just now, with their version (their first publish is to come).
    pub opened: Vec<(PathBuf, i32)>,
    /// Every importer found that is open now (opened earlier or just now): the server
    /// re-checks and republishes these after a change to what they import.
    pub open: Vec<PathBuf>,
    /// The files the server itself named as users of what the write changed (its
    /// references and implementations), all open — it re-checks these after the change —
    /// when that is every user as far as it can tell: the changed items were known (each
    /// change inside a symbol the server names), every question about their users was
    /// answered in time, and no cap was reached. Files found by the import scan outside its
    /// program are in `open` only: the server may resolve their imports elsewhere and never
    /// re-check them. Set by [`open_users`] only.
    pub all_users: Option<Vec<PathBuf>>,
}

/// Opens the files importing `targets` that are not open yet, for servers that diagnose
/// only open documents (capped by `dependents_cap`).
pub async fn open_importers(
    sup: &ServerSupervisor,
    client: &LspClient,
    targets: &[PathBuf],
) -> Importers {
    let cap = sup.config().dependents_cap;
    let mut out = Importers::default();
    let Some(style) = ImportStyle::of_language(&client.language) else {
        return out;
    };
    let Some(spec) = sup.table().iter().find(|s| s.language == client.language) else {
        return out;
    };
    if cap == 0 {
        return out;
    }
    for target in targets {
        let root = client.root.clone();
        let t = target.clone();
        let exts = spec.extensions.clone();
        let ws = sup.workspace().to_path_buf();
        let found = tokio::task::spawn_blocking(move || {
            let mut found = importers(&root, &t, style, &exts, cap);
            // A TypeScript project beside the root that imports the file by a relative path
            // is one its server never loads on its own.
            if style == ImportStyle::JavaScript {
                let beside = sibling_importers(&ws, &root, std::slice::from_ref(&t), &exts);
                found.extend(beside.files().take(cap).cloned());
            }
            found
        })
        .await
        .unwrap_or_default();
        for dep in found {
            if targets.contains(&dep) || out.open.contains(&dep) {
                continue;
            }
            if client.is_open(&dep).await {
                out.open.push(dep);
                continue;
            }
            if out.opened.len() >= cap {
                continue;
            }
            if let Ok(doc) = client.sync_file(&dep).await {
                out.opened.push((dep.clone(), doc.version));
                out.open.push(dep);
            }
        }
    }
    out
}

tokio::task_local! {
    /// Set around the observation of a write whose writer already covered every user of
    /// what it changed (a rename's edit is the references of the renamed symbol): their
    /// users are not looked up again.
    pub static USERS_COVERED: ();
}

/// Whether the users of a changed item can be asked of `client`: it gives document symbols
/// and references (see the `changed_items` module).
fn names_users(client: &LspClient) -> bool {
    client.caps.references_provider.is_some() && client.caps.document_symbol_provider.is_some()
}

/// Opens the files that use or implement what the write changed in `targets` (their
/// references and implementations, asked of the server while it still has each written
/// file at its text from before the write), so their errors are the write's news even
/// where the server diagnoses only open documents or reaches them late. Capped by
/// `dependents_cap` files, and the server gets half of `diagnostics_wait_ms` to answer.
/// `before_write` says whether the server has every written file at its old text; when it
/// does not, nothing is asked (positions in the new text would name the wrong items).
pub async fn open_users(
    sup: &ServerSupervisor,
    client: &LspClient,
    targets: &[PathBuf],
    before_write: &BeforeWrite,
) -> Importers {
    let cfg = sup.config();
    let cap = cfg.dependents_cap;
    let mut out = Importers::default();
    if cap == 0
        || !names_users(client)
        || !before_write.complete
        || USERS_COVERED.try_with(|_| ()).is_ok()
    {
        return out;
    }
    // A server still on its first analysis (rust-analyzer loading the workspace) answers
    // references with what it has loaded so far, often nothing: it gets as long as a
    // query waits for indexing, and is waited for first — unless it answers from its
    // whole program before its analysis ends (pyright, once its files are found).
    let first_analysis = !client.first_analysis_done();
    let budget = match first_analysis {
        true => cfg.index_wait().max(cfg.diagnostics_wait() / 2),
        false => cfg.diagnostics_wait() / 2,
    };
    let deadline = tokio::time::Instant::now() + budget;
    if first_analysis && client.answers_before_analysis() {
        // pyright answers references from its program as soon as it has found its files,
        // long before its analysis of a large project ends.
        let _ = tokio::time::timeout_at(deadline, client.wait_project_files_found()).await;
    } else if first_analysis {
        let _ = tokio::time::timeout_at(deadline, async {
            for t in targets {
                if let Some(doc) = client.open_doc_state(t).await {
                    client.settle_after_first_open(&doc).await;
                }
            }
            client.wait_ready().await
        })
        .await;
    }
    let mut users: Vec<PathBuf> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut complete = true;
    for target in targets {
        let Some(doc) = client.open_doc_state(target).await else {
            complete = false;
            continue;
        };
        let Ok(new) = std::fs::read_to_string(target) else {
            complete = false;
            continue;
        };
        let Some(changed) = changed_lines(&doc.text, &new) else {
            continue;
        };
        let from_grammar = match crate::diagnostics::republish::outline_holds_analysis(client) {
            true => match sup.grammar_symbols() {
                Some(g) => {
                    items_from_grammar(&g, target, &doc.text, changed, client.encoding).await
                }
                None => None,
            },
            false => None,
        };
        let items = match from_grammar {
            Some(items) => items,
            None => {
                let Some(symbols) = document_symbols(client, target, deadline).await else {
                    complete = false;
                    continue;
                };
                changed_items(&symbols, changed)
            }
        };
        tracing::debug!(server = %client.server, file = %target.display(), ?items, "items the write changed");
        // A change outside every symbol (an import, a statement at module level) or over
        // more items than are asked about may affect any importer.
        complete &= !items.is_empty() && items.len() < ITEMS_CAP;
        names.extend(items.iter().map(|i| i.name.clone()));
        let found = files_using(client, target, &items, sup.workspace(), cap, deadline).await;
        complete &= found.complete;
        for user in found.files {
            if !targets.contains(&user) && !users.contains(&user) {
                users.push(user);
            }
        }
    }
    // Files the server's configuration leaves out of its program (the tests beside a
    // narrowed pyright program) that import a changed item from a written or using file.
    names.sort();
    names.dedup();
    let extensions = sup.extensions_of(&client.language);
    let server_users = users.clone();
    let mut modules = targets.to_vec();
    modules.extend(users.iter().cloned());
    for name in &names {
        if tokio::time::Instant::now() >= deadline {
            complete = false;
            break;
        }
        let found =
            crate::servers::python_program::importing_files(client, &extensions, name, &modules)
                .await;
        for (path, _) in found {
            if !targets.contains(&path) && !users.contains(&path) {
                users.push(path);
            }
        }
    }
    for user in users {
        if client.is_open(&user).await {
            out.open.push(user);
        } else if out.opened.len() < cap
            && let Ok(doc) = client.sync_file(&user).await
        {
            out.opened.push((user.clone(), doc.version));
            out.open.push(user);
        } else {
            complete = false;
        }
    }
    out.all_users = complete.then_some(server_users);
    out
}

impl Importers {
    /// Adds `more`, each file once.
    pub fn extend(&mut self, more: Importers) {
        for (p, v) in more.opened {
            if !self.opened.iter().any(|(q, _)| *q == p) {
                self.opened.push((p, v));
            }
        }
        for p in more.open {
            if !self.open.contains(&p) {
                self.open.push(p);
            }
        }
    }
}

/// The written files as a server that diagnoses only open documents first sees them.
#[derive(Debug, Clone, Default)]
pub struct BeforeWrite {
    /// Written files opened just now at their text from before the write: (path, version).
    pub opened: Vec<(PathBuf, i32)>,
    /// Whether the server now has every written file at its text from before the write
    /// (open already, or opened just now from its pre-image): only then do the importers
    /// opened next show the state before the write rather than after it.
    pub complete: bool,
}

/// Opens each written file the server does not have open at the text it held before the
/// write (its pre-image, kept by the safe writer), for servers that diagnose only open
/// documents: the importers opened next are then checked against the old text, so what the
/// write breaks in them shows up as a change instead of as their baseline. A file with no
/// pre-image (written by other means, created by the write, too large) leaves the state
/// before the write unknown: `complete` is false and its importers stay baseline.
///
/// With `first_analysis` (the server has not finished its first analysis yet) this is done
/// for every server: one that reads unopened files from the disk (pyright) would otherwise
/// run its first analysis on the written text, and the state taken as "before" would
/// already hold the write's breakage — or, taken too early, none of the project's old
/// findings.
pub async fn open_before_write(
    client: &LspClient,
    written: &[PathBuf],
    pre_images: &HashMap<PathBuf, PreImage>,
    first_analysis: bool,
) -> BeforeWrite {
    let mut out = BeforeWrite {
        opened: Vec::new(),
        complete: true,
    };
    if ImportStyle::of_language(&client.language).is_none()
        && !first_analysis
        && !names_users(client)
    {
        return out;
    }
    for path in written {
        if client.is_open(path).await {
            continue;
        }
        let Some(PreImage::Content(bytes)) = pre_images.get(path) else {
            out.complete = false;
            continue;
        };
        let text = String::from_utf8_lossy(bytes).into_owned();
        match client.open_with_text(path, text).await {
            Ok(doc) => out.opened.push((path.clone(), doc.version)),
            Err(_) => out.complete = false,
        }
    }
    out
}

/// The file names `text` includes (`#include "a/b.h"` and `#include <b.h>` give `b.h`).
fn c_include_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?;
            let rest = rest.trim_start().strip_prefix("include")?;
            let inc = rest
                .trim()
                .trim_matches(|c| c == '"' || c == '<' || c == '>');
            Path::new(inc)
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_relative_importers_and_includers_only() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let files = [
            ("src/lib.ts", "export const x = 1;\n"),
            ("src/app.ts", "import { x } from './lib';\n"),
            ("test/lib.test.ts", "import { x } from \"../src/lib.js\";\n"),
            ("test/other.ts", "import { y } from '../src/library';\n"),
            (
                "node_modules/p/i.ts",
                "import { x } from '../../src/lib';\n",
            ),
            ("inc/m.h", "int m(void);\n"),
            ("src/m.c", "#include \"../inc/m.h\"\n"),
            ("t/t.c", "#  include <m.h>\n"),
            ("t/u.c", "#include \"mm.h\"\n"),
            ("inc/wrap.h", "#include \"m.h\"\n"),
            ("src/via_wrap.c", "#include <wrap.h>\n"),
        ];
        for (p, t) in files {
            std::fs::create_dir_all(ws.join(p).parent().unwrap()).unwrap();
            std::fs::write(ws.join(p), t).unwrap();
        }
        let exts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ts = importers(
            ws,
            &ws.join("src/lib.ts"),
            ImportStyle::JavaScript,
            &exts(&["ts"]),
            10,
        );
        assert_eq!(ts, vec![ws.join("src/app.ts"), ws.join("test/lib.test.ts")]);
        let c = importers(
            ws,
            &ws.join("inc/m.h"),
            ImportStyle::CInclude,
            &exts(&["c", "h"]),
            10,
        );
        assert_eq!(
            c,
            vec![
                ws.join("inc/wrap.h"),
                ws.join("src/m.c"),
                ws.join("src/via_wrap.c"),
                ws.join("t/t.c")
            ],
            "direct includers and the files that include them through a header"
        );
        assert_eq!(
            importers(
                ws,
                &ws.join("inc/m.h"),
                ImportStyle::CInclude,
                &exts(&["c"]),
                1
            )
            .len(),
            1
        );
    }
}
