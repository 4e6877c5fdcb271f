//! The unused-dependency check of `cargo xtask lint`.
//!
//! Every dependency a member crate declares must be named by that crate's code, and every
//! `[workspace.dependencies]` entry must be inherited by some member. A declared but unused
//! dependency still costs a download and a compile on every clean build (CI has two cores),
//! and it tells a reader the crate needs something it does not.
//!
//! The check reads the manifests and the sources of this workspace only: no tool to install,
//! nothing to compile. Cargo itself (`cargo metadata`) says under which name each dependency
//! is visible to the code (a `package =` rename, a `[lib] name`), so no name is guessed. A
//! dependency counts as used when that name appears as a path (`name::…`) or after `use` /
//! `extern crate`, outside plain `//` comments. Doc comments are kept: their examples are
//! compiled as doctests and their links resolved by rustdoc, so both are real uses.
//!
//! Where the use must be:
//! - `[dependencies]`: under `src/` (the library and the binaries);
//! - `[dev-dependencies]`: anywhere in the crate (tests, benches, examples, `#[cfg(test)]`
//!   modules, doctests);
//! - `[build-dependencies]`: in `build.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which section of a manifest declares a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DepKind {
    /// `[dependencies]`.
    Normal,
    /// `[dev-dependencies]`.
    Dev,
    /// `[build-dependencies]`.
    Build,
}

impl DepKind {
    fn section(self) -> &'static str {
        match self {
            DepKind::Normal => "[dependencies]",
            DepKind::Dev => "[dev-dependencies]",
            DepKind::Build => "[build-dependencies]",
        }
    }
}

/// One dependency declaration of one member crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The key in the manifest (`ast-grep-core`).
    pub key: String,
    /// The name the code uses for it (`ast_grep_core`).
    pub extern_name: String,
    /// The section that declares it.
    pub kind: DepKind,
}

/// The sources of one crate, split by where their uses count.
#[derive(Debug, Default)]
pub struct CrateSources {
    /// `src/**/*.rs`, with plain comments removed.
    pub src: Vec<String>,
    /// Every other `.rs` file of the crate but `build.rs` (tests, benches, examples).
    pub other: Vec<String>,
    /// `build.rs`, when there is one.
    pub build: Option<String>,
}

/// A dependency nothing uses, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unused {
    /// The manifest to edit.
    pub manifest: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for Unused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.manifest.display(), self.message)
    }
}

/// `text` without plain `//` comments (doc comments `///` and `//!` are kept, see the module
/// doc). Block comments are rare enough in this code base to be kept as text.
pub fn strip_plain_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let code = match plain_comment_start(line) {
            Some(at) => &line[..at],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Where a plain `//` comment starts on `line`, skipping `//` inside string literals and doc
/// comments.
fn plain_comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => {
                let doc = matches!(bytes.get(i + 2), Some(b'/' | b'!'))
                    && bytes.get(i + 3) != Some(&b'/');
                return if doc { None } else { Some(i) };
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `text` names the crate `name`: `name::…`, `use name`, `extern crate name`.
pub fn names_crate(text: &str, name: &str) -> bool {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find(name) {
        let start = from + found;
        let end = start + name.len();
        from = end;
        let whole_word = (start == 0 || !is_ident(bytes[start - 1]))
            && (end == bytes.len() || !is_ident(bytes[end]));
        // `foo::name::x` is a module of another crate, not this crate.
        let after_path = text[..start].strip_suffix("::").is_some_and(|head| {
            head.bytes()
                .next_back()
                .is_some_and(|b| is_ident(b) || b == b'>')
        });
        if !whole_word || after_path {
            continue;
        }
        let rest = text[end..].trim_start();
        let before = text[..start].trim_end();
        if rest.starts_with("::")
            || ends_with_word(before, "use")
            || ends_with_word(before, "extern crate")
        {
            return true;
        }
    }
    false
}

/// Whether `text` ends with `word` and `word` is not the tail of a longer identifier
/// (`because` does not end with the word `use`).
fn ends_with_word(text: &str, word: &str) -> bool {
    text.strip_suffix(word).is_some_and(|head| {
        !head
            .bytes()
            .next_back()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// The declarations of `crate_sources` that no code names, each with a message that says
/// which manifest to edit and how.
pub fn unused_in_crate(
    manifest: &Path,
    declared: &[Declared],
    sources: &CrateSources,
) -> Vec<Unused> {
    let any = |texts: &[String], name: &str| texts.iter().any(|t| names_crate(t, name));
    let mut out = Vec::new();
    for dep in declared {
        let name = dep.extern_name.as_str();
        let in_src = any(&sources.src, name);
        let in_other = any(&sources.other, name);
        let in_build = sources
            .build
            .as_deref()
            .is_some_and(|b| names_crate(b, name));
        let message = match dep.kind {
            DepKind::Normal if in_src => continue,
            DepKind::Normal if in_other => format!(
                "`{}` in [dependencies] is used only by tests, benches or examples \
                 (no `{name}::` or `use {name}` under src/): move it to [dev-dependencies]",
                dep.key
            ),
            DepKind::Dev if in_src || in_other => continue,
            DepKind::Build if in_build => continue,
            kind => format!(
                "`{}` in {} is never used (no `{name}::`, `use {name}` or `extern crate {name}` \
                 in {}): remove it from {}",
                dep.key,
                kind.section(),
                match kind {
                    DepKind::Normal => "src/",
                    DepKind::Dev => "the crate's sources",
                    DepKind::Build => "build.rs",
                },
                kind.section()
            ),
        };
        out.push(Unused {
            manifest: manifest.to_path_buf(),
            message,
        });
    }
    out
}

/// The `[workspace.dependencies]` keys of the root manifest that no member inherits with
/// `workspace = true`.
pub fn unused_workspace_entries(
    root_manifest: &Path,
    root: &toml::Table,
    members: &[toml::Table],
) -> Vec<Unused> {
    let declared: BTreeSet<&String> = root
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
        .map(|d| d.keys().collect())
        .unwrap_or_default();
    let mut inherited = BTreeSet::new();
    for member in members {
        for table in dependency_tables(member) {
            for (key, value) in table {
                let inherits = value
                    .get("workspace")
                    .and_then(|w| w.as_bool())
                    .unwrap_or(false);
                if inherits {
                    inherited.insert(key.clone());
                }
            }
        }
    }
    declared
        .into_iter()
        .filter(|key| !inherited.contains(*key))
        .map(|key| Unused {
            manifest: root_manifest.to_path_buf(),
            message: format!(
                "`{key}` in [workspace.dependencies] is inherited by no member \
                 (no `{key}.workspace = true`): remove it, or inherit it where it is declared \
                 with its own version"
            ),
        })
        .collect()
}

/// Every dependency table of a member manifest: the three sections, plain and per target.
fn dependency_tables(manifest: &toml::Table) -> Vec<&toml::Table> {
    let sections = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut out: Vec<&toml::Table> = sections
        .iter()
        .filter_map(|s| manifest.get(*s).and_then(|t| t.as_table()))
        .collect();
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            out.extend(
                sections
                    .iter()
                    .filter_map(|s| target.get(*s).and_then(|t| t.as_table())),
            );
        }
    }
    out
}

/// Reads one crate's `.rs` files, split as [`CrateSources`] wants them.
pub fn read_crate_sources(dir: &Path) -> Result<CrateSources, String> {
    let mut sources = CrateSources::default();
    for file in rust_files(dir)? {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let text = strip_plain_comments(&text);
        if file == dir.join("build.rs") {
            sources.build = Some(text);
        } else if file.starts_with(dir.join("src")) {
            sources.src.push(text);
        } else {
            sources.other.push(text);
        }
    }
    Ok(sources)
}

/// Every `.rs` file under `dir`, skipping build output and hidden folders.
pub fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries =
            std::fs::read_dir(&next).map_err(|e| format!("cannot read {}: {e}", next.display()))?;
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    pending.push(path);
                }
            } else if kind.is_file() && name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What `cargo metadata` says about one workspace member.
struct Member {
    manifest: PathBuf,
    declared: Vec<Declared>,
}

/// The members and their declarations, with the names the code sees, from `cargo metadata`.
fn members(repo: &Path, cargo: &str) -> Result<Vec<Member>, String> {
    let output = Command::new(cargo)
        .current_dir(repo)
        .args(["metadata", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let meta: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let workspace: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .map(|a| a.iter().filter_map(|m| m.as_str()).collect())
        .unwrap_or_default();
    // member id → (dependency package id, extern name), from the resolved graph.
    let mut resolved: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().into_iter().flatten() {
        let Some(id) = node["id"].as_str().filter(|id| workspace.contains(id)) else {
            continue;
        };
        let deps = node["deps"].as_array().into_iter().flatten().map(|d| {
            (
                d["pkg"].as_str().unwrap_or_default(),
                d["name"].as_str().unwrap_or_default(),
            )
        });
        resolved.insert(id, deps.collect());
    }
    let mut out = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let Some(id) = package["id"].as_str().filter(|id| workspace.contains(id)) else {
            continue;
        };
        let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap_or_default());
        let by_package: BTreeMap<&str, &str> = resolved
            .get(id)
            .map(|deps| {
                deps.iter()
                    .filter_map(|(pkg, name)| Some((package_name_of(&meta, pkg)?, *name)))
                    .collect()
            })
            .unwrap_or_default();
        let mut declared = Vec::new();
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let package_name = dep["name"].as_str().unwrap_or_default();
            let key = dep["rename"].as_str().unwrap_or(package_name).to_string();
            let kind = match dep["kind"].as_str() {
                Some("dev") => DepKind::Dev,
                Some("build") => DepKind::Build,
                _ => DepKind::Normal,
            };
            // A dependency the resolver dropped (a target that is never this one) has no
            // extern name; fall back to cargo's own rule for the library name.
            let extern_name = match dep["rename"].as_str() {
                Some(rename) => rename.replace('-', "_"),
                None => by_package
                    .get(package_name)
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| package_name.replace('-', "_")),
            };
            let entry = Declared {
                key,
                extern_name,
                kind,
            };
            if !declared.contains(&entry) {
                declared.push(entry);
            }
        }
        out.push(Member { manifest, declared });
    }
    out.sort_by(|a, b| a.manifest.cmp(&b.manifest));
    Ok(out)
}

/// The package name of a package id in the metadata.
fn package_name_of<'m>(meta: &'m serde_json::Value, id: &str) -> Option<&'m str> {
    meta["packages"]
        .as_array()?
        .iter()
        .find(|p| p["id"].as_str() == Some(id))?["name"]
        .as_str()
}

fn read_toml(path: &Path) -> Result<toml::Table, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The whole check over the workspace at `repo`: every finding, one per line, or none.
pub fn check(repo: &Path, cargo: &str) -> Result<Vec<Unused>, String> {
    let members = members(repo, cargo)?;
    let mut findings = Vec::new();
    let mut member_tables = Vec::new();
    for member in &members {
        let dir = member.manifest.parent().unwrap_or(repo);
        let sources = read_crate_sources(dir)?;
        findings.extend(unused_in_crate(
            &relative(repo, &member.manifest),
            &member.declared,
            &sources,
        ));
        member_tables.push(read_toml(&member.manifest)?);
    }
    let root_manifest = repo.join("Cargo.toml");
    findings.extend(unused_workspace_entries(
        Path::new("Cargo.toml"),
        &read_toml(&root_manifest)?,
        &member_tables,
    ));
    Ok(findings)
}

fn relative(repo: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(repo).unwrap_or(path).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(key: &str, kind: DepKind) -> Declared {
        Declared {
            key: key.into(),
            extern_name: key.replace('-', "_"),
            kind,
        }
    }

    #[test]
    fn a_path_a_use_and_an_extern_crate_name_the_crate() {
        assert!(names_crate("let x = serde_json::json!({});", "serde_json"));
        assert!(names_crate("use tokio::sync::Mutex;", "tokio"));
        assert!(names_crate("use tokio;", "tokio"));
        assert!(names_crate("pub use tools_core;", "tools_core"));
        assert!(names_crate("extern crate libc;", "libc"));
        assert!(names_crate("#[tokio::test]\nasync fn t() {}", "tokio"));
        assert!(names_crate("x = ::dashmap::DashMap::new();", "dashmap"));
    }

    #[test]
    fn a_longer_name_a_field_or_a_module_of_another_crate_does_not() {
        assert!(!names_crate("use serde_json::Value;", "serde"));
        assert!(!names_crate("let hex = 3; hex + 1", "hex"));
        assert!(!names_crate("use tokio::process::Command;", "process"));
        assert!(!names_crate("my_globset::Glob", "globset"));
        assert!(!names_crate("/// We wait because tokio is slow", "tokio"));
    }

    #[test]
    fn plain_comments_are_removed_and_doc_comments_and_strings_kept() {
        let text = "// uses dashmap::DashMap\n/// tokio::spawn(x)\n//! use tempfile;\nlet u = \"http://x\"; // globset::Glob\n//// banner dashmap::X\n";
        let code = strip_plain_comments(text);
        assert!(!names_crate(&code, "dashmap"));
        assert!(!names_crate(&code, "globset"));
        assert!(names_crate(&code, "tokio"));
        assert!(names_crate(&code, "tempfile"));
        assert!(code.contains("\"http://x\""));
    }

    #[test]
    fn each_section_is_looked_for_where_it_counts() {
        let sources = CrateSources {
            src: vec!["use serde::Deserialize;\n".into()],
            other: vec!["use tempfile::tempdir;\nuse rayon::prelude::*;\n".into()],
            build: Some("fn main() { cc::Build::new(); }".into()),
        };
        let decls = [
            declared("serde", DepKind::Normal),
            declared("rayon", DepKind::Normal),
            declared("globset", DepKind::Normal),
            declared("tempfile", DepKind::Dev),
            declared("similar", DepKind::Dev),
            declared("cc", DepKind::Build),
            declared("bindgen", DepKind::Build),
        ];
        let found = unused_in_crate(Path::new("crates/x/Cargo.toml"), &decls, &sources);
        let messages: Vec<&str> = found.iter().map(|u| u.message.as_str()).collect();
        assert_eq!(messages.len(), 4, "{messages:#?}");
        assert!(messages[0].starts_with("`rayon` in [dependencies] is used only by tests"));
        assert!(messages[1].starts_with("`globset` in [dependencies] is never used"));
        assert!(messages[2].starts_with("`similar` in [dev-dependencies] is never used"));
        assert!(messages[3].starts_with("`bindgen` in [build-dependencies] is never used"));
        assert_eq!(
            found[0].to_string().split(": ").next(),
            Some("crates/x/Cargo.toml")
        );
    }

    #[test]
    fn a_workspace_entry_no_member_inherits_is_reported() {
        let root: toml::Table = toml::from_str(
            "[workspace.dependencies]\nserde = \"1\"\ndashmap = \"6\"\nlibc = \"0.2\"\n",
        )
        .unwrap();
        let member: toml::Table = toml::from_str(
            "[dependencies]\nserde.workspace = true\ndashmap = \"6\"\n\
             [target.'cfg(unix)'.dev-dependencies]\nlibc = { workspace = true }\n",
        )
        .unwrap();
        let found = unused_workspace_entries(Path::new("Cargo.toml"), &root, &[member]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0]
                .message
                .starts_with("`dashmap` in [workspace.dependencies]")
        );
    }
}
