//! A name search answered from the files themselves while a server cannot answer yet: the
//! declarations whose name matches, read with the run's grammar symbol source (the bundled
//! tree-sitter grammars the `ast` family registers) over an ignore-aware walk of the
//! server's root.
//!
//! rust-analyzer indexes ripgrep for seconds and pyright reads all of Django's 2,814 files
//! on its first search, while "where is `X` defined?" is the first thing an agent asks. The
//! declarations are in the files' syntax: a file that does not contain the name at all is
//! never parsed (a byte search first, as a grep would), so a scan costs a read of the tree
//! and a parse of the few files that mention the name.
//!
//! It promises only declarations (functions, classes, methods, types — what the grammars
//! list), never uses; matches by name, case-insensitively, the whole name first. It is
//! bounded ([`ScanLimits`]) and says when a bound cut it. It never follows a link, and reads
//! nothing outside the root.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{SourceSymbol, SymbolSource};

use crate::client::position::display_column;
use crate::grammar_symbols::name_offset;

/// How far one scan goes.
#[derive(Debug, Clone, Copy)]
pub struct ScanLimits {
    /// Files of the language looked at, at most.
    pub max_files: usize,
    /// A larger file is skipped (generated code, bundles).
    pub max_file_bytes: u64,
    /// Wall time of the whole scan, at most.
    pub max_time: Duration,
    /// Matches kept, at most.
    pub max_matches: usize,
}

impl Default for ScanLimits {
    /// 30,000 files of up to 1 MiB each, 5 s, 500 matches.
    fn default() -> Self {
        ScanLimits {
            max_files: 30_000,
            max_file_bytes: 1024 * 1024,
            max_time: Duration::from_secs(5),
            max_matches: 500,
        }
    }
}

/// One declaration found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// Its name.
    pub name: String,
    /// The grammar's kind word (`class`, `function`, `method`, …).
    pub kind: String,
    /// The symbol that holds it (`Greeter` for `Greeter.greet`), if any.
    pub container: Option<String>,
    /// The file, as found under the root.
    pub path: PathBuf,
    /// 1-based line of the name.
    pub line: usize,
    /// 1-based column of the name, in characters.
    pub col: usize,
}

/// What a scan found.
#[derive(Debug, Default)]
pub struct Scan {
    /// The matches: whole-name ones first, then those that start with the query, then the
    /// rest; each group in path order.
    pub found: Vec<Declaration>,
    /// Files of the language looked at.
    pub files_seen: usize,
    /// Of those, the ones that contain the name and were parsed.
    pub files_parsed: usize,
    /// The grammar source's name for the files it read (`tree-sitter rust`).
    pub source: Option<String>,
    /// Why the scan stopped early, when it did.
    pub cut: Option<String>,
}

impl Scan {
    /// `kind name (in container)  path:line:col`, as the servers' matches are shown, and
    /// its structured entry; `display` prints a path.
    pub fn lines(&self, display: impl Fn(&Path) -> String) -> (Vec<String>, Vec<Value>) {
        let mut lines = Vec::new();
        let mut items = Vec::new();
        for d in &self.found {
            let path = display(&d.path);
            let container = d
                .container
                .as_ref()
                .map(|c| format!(" (in {c})"))
                .unwrap_or_default();
            lines.push(format!(
                "{} {}{container}  {path}:{}:{}",
                d.kind, d.name, d.line, d.col
            ));
            items.push(json!({
                "name": d.name,
                "kind": d.kind,
                "container": d.container,
                "location": {"path": path, "line": d.line, "col": d.col},
                "from": "declaration_scan",
            }));
        }
        (lines, items)
    }
}

/// The declarations under `root` in files with one of `extensions` whose name matches
/// `query` (`name`, or `Container.name` / `Container::name` to require the container).
/// Setting `stop` ends it early (the server answered first).
pub async fn scan(
    source: &Arc<dyn SymbolSource>,
    root: &Path,
    extensions: &[String],
    query: &str,
    limits: ScanLimits,
    stop: &Arc<AtomicBool>,
) -> Scan {
    let wanted = Wanted::parse(query);
    let mut out = Scan::default();
    if wanted.name.is_empty() || extensions.is_empty() {
        return out;
    }
    let started = Instant::now();
    let root_owned = root.to_path_buf();
    let exts: Vec<String> = extensions.to_vec();
    let needle = wanted.name.to_ascii_lowercase().into_bytes();
    let max = limits;
    let stop_walk = Arc::clone(stop);
    // The walk and the byte search read the disk: off the async threads.
    let candidates = tokio::task::spawn_blocking(move || {
        candidate_files(&root_owned, &exts, &needle, max, started, &stop_walk)
    })
    .await
    .unwrap_or_default();
    out.files_seen = candidates.seen;
    out.cut = candidates.cut;
    let mut exact = Vec::new();
    let mut prefix = Vec::new();
    let mut other = Vec::new();
    for (path, text) in candidates.files {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if started.elapsed() > limits.max_time {
            out.cut.get_or_insert_with(|| {
                format!(
                    "the scan stopped at its {} s bound",
                    limits.max_time.as_secs()
                )
            });
            break;
        }
        let Ok(Some(symbols)) = source.symbols(&path, &text).await else {
            continue;
        };
        out.files_parsed += 1;
        out.source.get_or_insert(symbols.source);
        for s in &symbols.symbols {
            let Some(rank) = wanted.rank(s) else { continue };
            let Some(d) = declaration(&path, &text, s) else {
                continue;
            };
            match rank {
                Rank::Whole => exact.push(d),
                Rank::Prefix => prefix.push(d),
                Rank::Inside => other.push(d),
            }
        }
    }
    out.found = exact.into_iter().chain(prefix).chain(other).collect();
    if out.found.len() > limits.max_matches {
        out.found.truncate(limits.max_matches);
        out.cut.get_or_insert_with(|| {
            format!("only the first {} matches are kept", limits.max_matches)
        });
    }
    out
}

/// What a query asks for: a name, and the containers it must sit in (innermost last).
struct Wanted {
    name: String,
    containers: Vec<String>,
}

/// How well a declaration's name matches.
#[derive(Debug, Clone, Copy)]
enum Rank {
    Whole,
    Prefix,
    Inside,
}

impl Wanted {
    fn parse(query: &str) -> Wanted {
        let mut parts: Vec<String> = query
            .trim()
            .replace("::", ".")
            .split('.')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        let name = parts.pop().unwrap_or_default();
        Wanted {
            name,
            containers: parts,
        }
    }

    /// How `s` matches, or `None`.
    fn rank(&self, s: &SourceSymbol) -> Option<Rank> {
        let (name, outer) = s.path.split_last()?;
        // An `impl Point` block is not a declaration of a name of its own.
        if s.kind == "impl" {
            return None;
        }
        if !self.containers.is_empty() {
            let tail = outer.len().checked_sub(self.containers.len())?;
            let same = outer[tail..]
                .iter()
                .zip(&self.containers)
                .all(|(have, want)| container_name(have).eq_ignore_ascii_case(want));
            if !same {
                return None;
            }
        }
        let have = name.to_ascii_lowercase();
        let want = self.name.to_ascii_lowercase();
        if have == want {
            Some(Rank::Whole)
        } else if have.starts_with(&want) {
            Some(Rank::Prefix)
        } else if have.contains(&want) {
            Some(Rank::Inside)
        } else {
            None
        }
    }
}

/// A container's name as written in a query: `impl Point` → `Point`, `impl Shape for
/// Point` → `Point`.
fn container_name(path_part: &str) -> &str {
    match path_part.strip_prefix("impl ") {
        Some(rest) => rest.rsplit(" for ").next().unwrap_or(rest).trim(),
        None => path_part,
    }
}

/// Where `s`'s name is written (see [`name_offset`]).
fn declaration(path: &Path, text: &str, s: &SourceSymbol) -> Option<Declaration> {
    let (name, outer) = s.path.split_last()?;
    let byte = name_offset(text, s)?;
    let line_start = text[..byte].rfind('\n').map_or(0, |i| i + 1);
    let line_text = text[line_start..].split('\n').next().unwrap_or("");
    Some(Declaration {
        name: name.clone(),
        kind: s.kind.clone(),
        container: outer.last().map(|c| container_name(c).to_string()),
        path: path.to_path_buf(),
        line: text[..byte].matches('\n').count() + 1,
        col: display_column(line_text, byte - line_start),
    })
}

/// The files a scan parses, and how far the walk went.
#[derive(Default)]
struct Candidates {
    files: Vec<(PathBuf, String)>,
    seen: usize,
    cut: Option<String>,
}

/// The files under `root` with one of `extensions` that contain `needle` (lowercase ASCII
/// bytes) in any case, in path order; links are not followed, ignored files are skipped.
fn candidate_files(
    root: &Path,
    extensions: &[String],
    needle: &[u8],
    limits: ScanLimits,
    started: Instant,
    stop: &AtomicBool,
) -> Candidates {
    let mut out = Candidates::default();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .follow_links(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    for entry in walker.flatten() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
            continue;
        }
        if out.seen >= limits.max_files {
            out.cut = Some(format!(
                "only the first {} files were read",
                limits.max_files
            ));
            break;
        }
        if started.elapsed() > limits.max_time {
            out.cut = Some(format!(
                "the scan stopped at its {} s bound after {} files",
                limits.max_time.as_secs(),
                out.seen
            ));
            break;
        }
        out.seen += 1;
        if entry
            .metadata()
            .map(|m| m.len() > limits.max_file_bytes)
            .unwrap_or(true)
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        if !contains_ignoring_ascii_case(&bytes, needle) {
            continue;
        }
        if let Ok(text) = String::from_utf8(bytes) {
            out.files.push((path.to_path_buf(), text));
        }
    }
    out
}

/// Whether `hay` contains `needle` (lowercase ASCII), ignoring ASCII case.
fn contains_ignoring_ascii_case(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let upper = first.to_ascii_uppercase();
    let last_start = match hay.len().checked_sub(needle.len()) {
        Some(n) => n,
        None => return false,
    };
    (0..=last_start).any(|i| {
        let b = hay[i];
        (b == first || b == upper) && hay[i + 1..i + needle.len()].eq_ignore_ascii_case(rest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_search_ignores_ascii_case_only() {
        assert!(contains_ignoring_ascii_case(
            b"class ModelAdmin:",
            b"modeladmin"
        ));
        assert!(contains_ignoring_ascii_case(b"x", b"x"));
        assert!(!contains_ignoring_ascii_case(b"Model", b"modeladmin"));
        assert!(!contains_ignoring_ascii_case(b"", b"a"));
    }

    #[test]
    fn a_query_names_its_containers() {
        let w = Wanted::parse("Point::norm");
        assert_eq!(
            (w.name.as_str(), w.containers.clone()),
            ("norm", vec!["Point".to_string()])
        );
        assert_eq!(container_name("impl Shape for Point"), "Point");
        assert_eq!(container_name("impl Point"), "Point");
    }
}
