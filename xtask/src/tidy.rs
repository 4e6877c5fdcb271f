//! The tidy checks: the habits of this code base that neither rustc nor clippy enforce.
//!
//! - Every Rust module opens with a `//!` doc that says why it exists.
//! - Every member crate inherits the workspace lints, and the workspace keeps `missing_docs`
//!   on: with clippy's `-D warnings` in `cargo xtask lint`, an undocumented public item of
//!   any crate fails the gate (the lint, not a text scan, knows what is public).
//! - Test-only hooks (a `#[doc(hidden)]` public item, a public `Inject…` item, a doc that
//!   calls the item a test hook) are behind `cfg(test)` or the crate's `testing` feature,
//!   never plain public API.
//! - No source file grows past [`MAX_LINES`] lines unless [`LONG_FILES`] says why; a line
//!   there for a file that is short again must go.
//! - A crate's root keeps its modules private and exports what users need with `pub use`;
//!   a public module needs a line in [`PUBLIC_MODULES`] saying why.
//! - OS-specific code of the portable crates lives in the platform layer only
//!   ([`crate::platform_calls`]).
//!
//! `cargo xtask lint` runs these; the `tidy` test runs them under `cargo test`, as
//! rust-analyzer's tidy test does. Every finding names `file:line` and what to do.

use std::path::{Path, PathBuf};

use crate::finding::Finding;
use crate::finding::finding;
use crate::test_gate::{attributes_above, declared_under_test_gate, is_test_gate};

/// The longest a source file may grow without a line in [`LONG_FILES`].
pub const MAX_LINES: usize = 800;

/// Source files allowed past [`MAX_LINES`], each with the reason. Keep the reasons honest:
/// a file that is long because it does several jobs should be split instead.
pub const LONG_FILES: &[(&str, &str)] = &[];

/// Public modules of a crate root (`crates/NAME/src/lib.rs`), each with the reason it is
/// public. `*` stands for every module of that crate root.
pub const PUBLIC_MODULES: &[(&str, &str, &str)] = &[
    (
        "crates/tools-core/src/lib.rs",
        "fuzzing",
        "the fuzz targets' way through the real request path, compiled only with the \
         `testing` feature",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "json_unicode",
        "the check and repair of JSON text that is not Unicode, shared by the MCP transport \
         and the kernels' protocol",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "sweep",
        "the one process sweep (sessions, orphans) that every crate's children and the \
         binary's start-up share",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "platform",
        "the one platform layer: the other crates' OS-specific needs (a leftover process \
         ended, resident memory, a terminal conversation) go through its few public items",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "watchdog",
        "the binary starts it before any thread exists, so it must be reachable from main",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "child_env",
        "the minimal child environment every crate that starts a program applies",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "discovery",
        "the one program discovery the LSP, debug and eval crates share, so they cannot \
         disagree about workspace trust",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "safe_write",
        "the one safe writer every file-changing tool crate writes through",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "trust",
        "the workspace-trust decision the facade makes and the tool crates read",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "framing",
        "the `Content-Length` framing the LSP and DAP clients of other crates build on",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "process",
        "the child-process lifecycle every crate that starts a program shares",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "testing",
        "the component log every crate's integration suite writes (integration tests \
         cannot see `cfg(test)` items of a dependency)",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "text",
        "capped lists and cut text, shared by every tool's output",
    ),
    (
        "crates/tools-core/src/lib.rs",
        "transport",
        "the request/response transport under the LSP and DAP clients of other crates",
    ),
    (
        "crates/tools-lsp/src/lib.rs",
        "client",
        "the benchmark reaches `client::path_to_uri` by this path; private once it uses an \
         export of the crate root",
    ),
    (
        "crates/tools-lsp/src/lib.rs",
        "config",
        "the benchmark names `config::ServerOverride` by this path; private once it uses the \
         crate root's export",
    ),
    (
        "crates/tools-lsp/src/lib.rs",
        "observer",
        "the benchmark names `observer::DiagnosticsOnWrite` by this path; private once it \
         uses the crate root's export",
    ),
    (
        "crates/tools-lsp/src/lib.rs",
        "rename",
        "the integration tests reach the `testing` feature's `rename::InjectWriteFailure` by \
         this path",
    ),
    (
        "crates/tools-lsp/src/lib.rs",
        "acquire",
        "the server acquisition API (cache, installer, catalog) used by the `servers` command \
         is a namespace of its own; its submodules are private and re-exported there",
    ),
    (
        "crates/tools-lsp/src/lib.rs",
        "recipe",
        "install recipes of the server table, read by the acquisition code outside this crate",
    ),
];

/// File kinds whose length is checked: the languages this repository is written in.
const SOURCE_EXTENSIONS: &[&str] = &["rs", "py", "js", "ts", "sh"];

/// Folders whose Rust and other sources are checked.
const SOURCE_ROOTS: &[&str] = &["crates", "xtask", "tests"];

/// Every tidy finding for the repository at `repo`.
pub fn check(repo: &Path) -> Result<Vec<Finding>, String> {
    let files = source_files(repo)?;
    let mut findings = Vec::new();
    for rel in &files {
        let text = std::fs::read_to_string(repo.join(rel))
            .map_err(|e| format!("cannot read {}: {e}", rel.display()))?;
        if rel.extension().is_some_and(|e| e == "rs") {
            findings.extend(module_doc(rel, &text));
            if is_crate_root(rel) {
                findings.extend(public_modules(rel, &text, PUBLIC_MODULES));
            }
            if is_library_source(rel) {
                let gated = declared_under_test_gate(repo, rel)?;
                findings.extend(test_hooks(rel, &text, gated));
            }
        }
        findings.extend(file_length(rel, &text, LONG_FILES));
    }
    findings.extend(stale_long_files(repo, &files));
    findings.extend(crate::module_circles::check(repo, &files)?);
    findings.extend(crate::platform_calls::check(repo, &files)?);
    findings.extend(lint_inheritance(repo)?);
    Ok(findings)
}

/// The checked source files, relative to `repo`, sorted; build output, installed tools and
/// hidden folders are skipped.
fn source_files(repo: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut pending: Vec<PathBuf> = SOURCE_ROOTS.iter().map(|r| repo.join(r)).collect();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skipped = name.starts_with('.')
                    || matches!(
                        name.as_str(),
                        "target" | "node_modules" | "__pycache__" | "fixtures"
                    );
                if !skipped {
                    pending.push(path);
                }
            } else if kind.is_file()
                && path
                    .extension()
                    .is_some_and(|e| SOURCE_EXTENSIONS.iter().any(|x| e == *x))
            {
                let rel = path.strip_prefix(repo).unwrap_or(&path).to_path_buf();
                out.push(rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A module's first non-blank line is its `//!` doc.
fn module_doc(rel: &Path, text: &str) -> Option<Finding> {
    let first = text.lines().position(|l| !l.trim().is_empty());
    match first {
        Some(at) if text.lines().nth(at).is_some_and(|l| l.starts_with("//!")) => None,
        _ => Some(finding(
            rel,
            Some(first.map_or(1, |at| at + 1)),
            "the module does not open with a `//!` doc: start the file with `//!` lines \
             that say why this module exists",
        )),
    }
}

fn file_length(rel: &Path, text: &str, allowed: &[(&str, &str)]) -> Option<Finding> {
    let lines = text.lines().count();
    let listed = allowed.iter().any(|(p, _)| Path::new(p) == rel);
    (lines > MAX_LINES && !listed).then(|| {
        finding(
            rel,
            Some(MAX_LINES + 1),
            format!(
                "{lines} lines, past the {MAX_LINES}-line limit: split the file by job, or \
                 add it to LONG_FILES in xtask/src/tidy.rs with the reason it must stay whole"
            ),
        )
    })
}

/// LONG_FILES lines for files that are gone or short again.
fn stale_long_files(repo: &Path, files: &[PathBuf]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (path, _) in LONG_FILES {
        let rel = Path::new(path);
        let lines = files
            .iter()
            .any(|f| f == rel)
            .then(|| std::fs::read_to_string(repo.join(rel)).ok())
            .flatten()
            .map(|t| t.lines().count());
        let why = match lines {
            None => "no longer exists".to_string(),
            Some(n) if n <= MAX_LINES => format!("is {n} lines now, within the limit"),
            Some(_) => continue,
        };
        out.push(finding(
            Path::new("xtask/src/tidy.rs"),
            None,
            format!("LONG_FILES lists {path}, which {why}: remove its line"),
        ));
    }
    out
}

/// Library code of a crate: `crates/*/src/**` (tests, benches and examples may hold hooks).
fn is_library_source(rel: &Path) -> bool {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
    parts.next().as_deref() == Some("crates")
        && parts.next().is_some()
        && parts.next().as_deref() == Some("src")
}

/// `crates/NAME/src/lib.rs`.
fn is_crate_root(rel: &Path) -> bool {
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str()).collect();
    parts.len() == 4 && parts[0] == "crates" && parts[2] == "src" && parts[3] == "lib.rs"
}

/// `pub mod` lines of a crate root that `allowed` (see [`PUBLIC_MODULES`]) does not explain.
fn public_modules(rel: &Path, text: &str, allowed: &[(&str, &str, &str)]) -> Vec<Finding> {
    let listed = |module: &str| {
        allowed
            .iter()
            .any(|(root, m, _)| Path::new(root) == rel && (*m == module || *m == "*"))
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(module) = line
            .trim()
            .strip_prefix("pub mod ")
            .and_then(|m| m.strip_suffix(';'))
        else {
            continue;
        };
        if !listed(module) {
            out.push(finding(
                rel,
                Some(i + 1),
                format!(
                    "`pub mod {module};` makes the module's whole layout public API: make it \
                     `mod {module};` and `pub use` what users need, or add it to \
                     PUBLIC_MODULES in xtask/src/tidy.rs with the reason it must be public"
                ),
            ));
        }
    }
    out
}

/// The doc comment lines directly above line `i`, joined.
fn doc_above(lines: &[&str], i: usize) -> String {
    let mut doc: Vec<&str> = lines[..i]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
        .filter_map(|l| l.strip_prefix("///"))
        .collect();
    doc.reverse();
    doc.join(" ")
}

/// The name a `pub` item line declares, if the line declares one.
fn public_item_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("pub ")?;
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let rest = rest.strip_prefix("unsafe ").unwrap_or(rest);
    let keywords = [
        "fn ", "struct ", "enum ", "trait ", "const ", "static ", "type ", "mod ",
    ];
    let rest = keywords.iter().find_map(|k| rest.strip_prefix(k))?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Public test hooks that are not gated to tests or the `testing` feature. `file_gated`:
/// the whole file is gated by its `mod` line.
fn test_hooks(rel: &Path, text: &str, file_gated: bool) -> Vec<Finding> {
    if file_gated {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    // The indentation of the closing brace of a gated `mod … {` block we are inside.
    let mut gated_block_until: Option<String> = None;
    for (i, raw) in lines.iter().enumerate() {
        let indent: String = raw.chars().take_while(|c| c.is_whitespace()).collect();
        let line = raw.trim();
        if let Some(close) = &gated_block_until {
            if raw.starts_with(close.as_str()) && line == "}" && indent == *close {
                gated_block_until = None;
            }
            continue;
        }
        let gated = attributes_above(&lines, i).any(is_test_gate);
        let is_mod_block = line.contains("mod ") && line.ends_with('{');
        if gated && is_mod_block {
            gated_block_until = Some(indent);
            continue;
        }
        let Some(name) = public_item_name(line) else {
            continue;
        };
        if gated {
            continue;
        }
        let hidden = attributes_above(&lines, i).any(|a| a.replace(' ', "") == "#[doc(hidden)]");
        let injector = name.to_ascii_lowercase().contains("inject");
        let called_hook = doc_above(&lines, i)
            .to_ascii_lowercase()
            .contains("test hook");
        let why = if hidden {
            "is public but `#[doc(hidden)]`"
        } else if injector {
            "is a public fault injector"
        } else if called_hook {
            "is documented as a test hook but public"
        } else {
            continue;
        };
        out.push(finding(
            rel,
            Some(i + 1),
            format!(
                "`{name}` {why}: put it behind `#[cfg(test)]` (unit tests) or \
                 `#[cfg(feature = \"testing\")]` (a `testing = []` feature that the crate's \
                 dev-dependency on itself turns on for its integration tests)"
            ),
        ));
    }
    out
}

/// Every member inherits the workspace lints, and the workspace keeps `missing_docs` on.
fn lint_inheritance(repo: &Path) -> Result<Vec<Finding>, String> {
    let root_rel = Path::new("Cargo.toml");
    let root = read_manifest(repo, root_rel)?;
    let mut out = Vec::new();
    let level = root
        .get("workspace")
        .and_then(|w| w.get("lints"))
        .and_then(|l| l.get("rust"))
        .and_then(|r| r.get("missing_docs"))
        .and_then(|m| m.as_str().or_else(|| m.get("level")?.as_str()));
    if !matches!(level, Some("warn" | "deny" | "forbid")) {
        out.push(finding(
            root_rel,
            None,
            "[workspace.lints.rust] must set `missing_docs = \"warn\"` (clippy's -D warnings \
             in the gate turns it into an error): every public item says what it promises",
        ));
    }
    for member in member_manifests(repo, &root)? {
        let manifest = read_manifest(repo, &member)?;
        let inherits = manifest
            .get("lints")
            .and_then(|l| l.get("workspace"))
            .and_then(|w| w.as_bool())
            .unwrap_or(false);
        if !inherits {
            out.push(finding(
                &member,
                None,
                "the crate does not inherit the workspace lints: add `[lints]` with \
                 `workspace = true`",
            ));
        }
    }
    Ok(out)
}

fn read_manifest(repo: &Path, rel: &Path) -> Result<toml::Table, String> {
    let text = std::fs::read_to_string(repo.join(rel))
        .map_err(|e| format!("cannot read {}: {e}", rel.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", rel.display()))
}

/// The members' manifests, relative to `repo`, from `workspace.members` (`dir` or `dir/*`).
fn member_manifests(repo: &Path, root: &toml::Table) -> Result<Vec<PathBuf>, String> {
    let members = root
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for member in members.iter().filter_map(|m| m.as_str()) {
        if let Some(parent) = member.strip_suffix("/*") {
            let dir = repo.join(parent);
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            for entry in entries.filter_map(|e| e.ok()) {
                let manifest = Path::new(parent).join(entry.file_name()).join("Cargo.toml");
                if repo.join(&manifest).is_file() {
                    out.push(manifest);
                }
            }
        } else {
            out.push(Path::new(member).join("Cargo.toml"));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy() {
        let repo = crate::repo();
        let findings = check(&repo).unwrap_or_else(|e| panic!("tidy could not run: {e}"));
        let report: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        assert!(
            report.is_empty(),
            "tidy found {} problems:\n{}",
            report.len(),
            report.join("\n")
        );
    }

    #[test]
    fn a_module_without_its_doc_is_found_at_its_first_line() {
        let found = module_doc(Path::new("a.rs"), "\n\nmod x;\n").map(|f| f.to_string());
        assert_eq!(
            found.as_deref().map(|f| f.split(": ").next()),
            Some(Some("a.rs:3"))
        );
        assert_eq!(module_doc(Path::new("a.rs"), "\n//! Why.\nmod x;\n"), None);
    }

    #[test]
    fn a_long_file_needs_a_line_in_the_allow_list() {
        let long = "x\n".repeat(MAX_LINES + 1);
        let short = "x\n".repeat(MAX_LINES);
        let allowed = [("crates/a/src/whole.rs", "why")];
        assert!(file_length(Path::new("crates/a/src/big.rs"), &long, &allowed).is_some());
        assert!(file_length(Path::new("crates/a/src/big.rs"), &short, &allowed).is_none());
        assert!(file_length(Path::new("crates/a/src/whole.rs"), &long, &allowed).is_none());
    }

    #[test]
    fn public_hooks_are_found_unless_gated() {
        let text = "\
/// Test hook: the n-th write fails.
#[derive(Default)]
pub struct FailNth(pub u32);

#[doc(hidden)]
pub fn hidden() {}

pub const INJECT_AT: &str = \"X\";

/// Test hook, gated.
#[cfg(feature = \"testing\")]
pub struct Gated;

#[cfg(any(test, feature = \"testing\"))]
pub fn injector() {}

pub(crate) struct InjectInternal;

#[cfg(test)]
mod tests {
    #[doc(hidden)]
    pub fn inner() {}
}

#[cfg(not(test))]
pub fn inject_in_release() {}
";
        let found: Vec<String> = test_hooks(Path::new("crates/a/src/x.rs"), text, false)
            .iter()
            .map(|f| f.to_string())
            .collect();
        let places: Vec<&str> = found.iter().filter_map(|f| f.split(": ").next()).collect();
        assert_eq!(
            places,
            [
                "crates/a/src/x.rs:3",
                "crates/a/src/x.rs:6",
                "crates/a/src/x.rs:8",
                "crates/a/src/x.rs:26"
            ],
            "{found:#?}"
        );
        assert!(test_hooks(Path::new("crates/a/src/x.rs"), text, true).is_empty());
    }

    #[test]
    fn a_public_module_of_a_crate_root_needs_a_reason() {
        let text = "//! Doc.\nmod private;\npub mod open;\npub(crate) mod inner;\n";
        let allowed = [
            ("crates/tools-core/src/lib.rs", "framing", "why"),
            ("crates/tools-old/src/lib.rs", "*", "why"),
        ];
        let found: Vec<String> =
            public_modules(Path::new("crates/tools-x/src/lib.rs"), text, &allowed)
                .iter()
                .map(|f| f.to_string())
                .collect();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].starts_with("crates/tools-x/src/lib.rs:3: `pub mod open;`"));
        let core = "pub mod framing;\npub mod fresh;\n";
        let found = public_modules(Path::new("crates/tools-core/src/lib.rs"), core, &allowed);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].line, Some(2));
        assert!(
            public_modules(Path::new("crates/tools-old/src/lib.rs"), core, &allowed).is_empty()
        );
        assert!(is_crate_root(Path::new("crates/tools-x/src/lib.rs")));
        assert!(!is_crate_root(Path::new("crates/tools-x/src/sub/lib.rs")));
    }

    #[test]
    fn library_sources_are_the_crates_src_folders() {
        assert!(is_library_source(Path::new(
            "crates/tools-lsp/src/rename.rs"
        )));
        assert!(!is_library_source(Path::new(
            "crates/tools-lsp/tests/suite/rename.rs"
        )));
        assert!(!is_library_source(Path::new("xtask/src/main.rs")));
    }
}
