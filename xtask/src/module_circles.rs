//! Tidy rule: no circles between the modules of a crate: every library crate, and xtask.
//!
//! A reader finds their way in a crate when its modules form floors: each uses only what is
//! below it. Two files that import each other (directly or round a longer loop) are one job
//! split in two, or share something that belongs below both. So are two top-level folders
//! whose files import each other. This rule reads every checked source file's paths —
//! `crate::…`, `super::…` and `self::…`, in `use` lines and inline, `{…}` groups expanded —
//! resolves each to the module file that defines it, and reports every loop of files and
//! every loop of top-level folders, naming its members.
//!
//! The crate root (`lib.rs`, or xtask's `main.rs`) is left out: it declares or re-exports
//! every module by design. The facade's binaries (`main.rs`, `bin/`) are crate trees of
//! their own beside its library and are not read. Test
//! modules (`#[cfg(test)] mod tests { … }`) and comments are not read, so a doc link or a
//! test helper never makes a loop. Known loops awaiting their split are listed in
//! [`KNOWN_CIRCLES`] with the reason; an entry that no longer matches a loop is reported, so
//! the list only shrinks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::finding::{Finding, finding};

/// Loops not split yet: (crate folder, the loop's files relative to its `src/`, sorted and
/// joined by " ↔ ", why it is still there).
pub const KNOWN_CIRCLES: &[(&str, &str, &str)] = &[];

/// A module path inside one crate: `[]` is the crate root, `["client", "rpc"]` is
/// `crate::client::rpc`.
type ModulePath = Vec<String>;

/// Every loop finding over the library sources and xtask's among `files` (relative to `repo`).
pub fn check(repo: &Path, files: &[PathBuf]) -> Result<Vec<Finding>, String> {
    let mut by_crate: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for rel in files {
        if let Some((krate, in_src)) = checked_module_file(rel) {
            by_crate.entry(krate).or_default().push(in_src);
        }
    }
    let mut out = Vec::new();
    let mut matched_known = BTreeSet::new();
    for (krate, in_src) in &by_crate {
        let mut texts = BTreeMap::new();
        for f in in_src {
            let path = repo.join(krate).join("src").join(f);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            texts.insert(f.clone(), text);
        }
        for circle in circles(&texts) {
            let krate_name = krate.to_string_lossy().replace('\\', "/");
            let known = KNOWN_CIRCLES
                .iter()
                .position(|(k, c, _)| *k == krate_name && *c == circle.members);
            match known {
                Some(i) => {
                    matched_known.insert(i);
                }
                None => out.push(finding(
                    &krate.join("src"),
                    None,
                    format!(
                        "{} import each other ({}): move what both need into a lower module, or \
                         make them one file if they are one job",
                        circle.members, circle.kind
                    ),
                )),
            }
        }
    }
    for (i, (krate, members, _)) in KNOWN_CIRCLES.iter().enumerate() {
        if !matched_known.contains(&i) && by_crate.contains_key(Path::new(krate)) {
            out.push(finding(
                Path::new("xtask/src/module_circles.rs"),
                None,
                format!(
                    "KNOWN_CIRCLES lists {krate}: {members}, which is no longer a loop: remove \
                     the entry"
                ),
            ));
        }
    }
    Ok(out)
}

/// `(crate folder, path inside its src/)` of a checked module file: a library's under
/// `crates/*/src/` (not a binary's `main.rs` or `bin/`), or any of xtask's, whose one crate
/// is rooted at `main.rs`.
fn checked_module_file(rel: &Path) -> Option<(PathBuf, PathBuf)> {
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    if rel.extension().is_none_or(|e| e != "rs") {
        return None;
    }
    match parts.as_slice() {
        ["xtask", "src", inner @ ..] if !inner.is_empty() => {
            Some((PathBuf::from("xtask"), inner.iter().collect()))
        }
        ["crates", krate, "src", inner @ ..] if !inner.is_empty() => {
            if *inner == ["main.rs"] || inner[0] == "bin" {
                return None;
            }
            Some((PathBuf::from("crates").join(krate), inner.iter().collect()))
        }
        _ => None,
    }
}

/// The module a file inside `src/` defines.
fn module_of(in_src: &Path) -> ModulePath {
    let mut parts: Vec<String> = in_src
        .iter()
        .filter_map(|p| p.to_str())
        .map(str::to_string)
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        // `main.rs` at the top is xtask's crate root; a library's is excluded before this.
        let is_root = stem == "lib" || (stem == "main" && parts.is_empty());
        if stem != "mod" && !is_root {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// One loop: its members (files, or folders with a trailing `/`) sorted and joined by
/// " ↔ ", and whether it is a loop of files or of folders.
#[derive(Debug, PartialEq, Eq)]
struct Circle {
    members: String,
    kind: &'static str,
}

/// The loops among one crate's files (`texts`: path inside `src/` → source).
fn circles(texts: &BTreeMap<PathBuf, String>) -> Vec<Circle> {
    let modules: BTreeMap<ModulePath, &PathBuf> = texts.keys().map(|f| (module_of(f), f)).collect();
    let mut file_edges: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> = BTreeMap::new();
    for (file, text) in texts {
        let here = module_of(file);
        if here.is_empty() {
            continue;
        }
        let targets = file_edges.entry(file).or_default();
        for path in referenced_paths(&code_outside_tests(text)) {
            let Some(absolute) = absolute(&here, &path) else {
                continue;
            };
            // The longest prefix that is a module file defines the item.
            let target = (1..=absolute.len())
                .rev()
                .find_map(|n| modules.get(&absolute[..n]));
            if let Some(&target) = target
                && target != file
            {
                targets.insert(target);
            }
        }
    }
    let mut out = Vec::new();
    for scc in strongly_connected(&file_edges) {
        out.push(Circle {
            members: joined(scc.iter().map(|f| f.to_string_lossy().replace('\\', "/"))),
            kind: "a loop of files",
        });
    }
    // The same over top-level folders (a root file other than lib.rs is a floor of its own).
    let floor = |f: &PathBuf| -> String {
        let parts: Vec<String> = f.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        match parts.len() {
            1 => parts[0].clone(),
            _ => format!("{}/", parts[0]),
        }
    };
    let floor_names: BTreeMap<&PathBuf, String> = texts.keys().map(|f| (f, floor(f))).collect();
    let mut floor_edges: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for (from, tos) in &file_edges {
        let a = &floor_names[from];
        let entry = floor_edges.entry(a).or_default();
        for to in tos {
            let b = &floor_names[to];
            if a != b {
                entry.insert(b);
            }
        }
    }
    for scc in strongly_connected(&floor_edges) {
        // A loop of single files already reported as files is not repeated.
        if scc.iter().all(|f| !f.ends_with('/')) {
            continue;
        }
        out.push(Circle {
            members: joined(scc.iter().map(|f| f.to_string())),
            kind: "a loop of folders",
        });
    }
    out
}

fn joined(members: impl Iterator<Item = String>) -> String {
    let sorted: BTreeSet<String> = members.collect();
    sorted.into_iter().collect::<Vec<_>>().join(" ↔ ")
}

/// `path` (starting with `crate`, `super` or `self`) as a module path from the crate root,
/// seen from the module `here` (`super` in `foo/mod.rs` and in `foo.rs` both name foo's
/// parent).
fn absolute(here: &ModulePath, path: &[String]) -> Option<ModulePath> {
    let (first, rest) = path.split_first()?;
    let mut base: ModulePath = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.clone(),
        "super" => here[..here.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some((s, r)) = rest.split_first() {
        if s != "super" {
            break;
        }
        base.pop();
        rest = r;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The source without comments and without `#[cfg(test)]`-gated `mod … { … }` blocks.
fn code_outside_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed == "#[cfg(test)]"
            && let Some(next) = lines.peek()
            && next.trim_start().starts_with("mod ")
            && next.trim_end().ends_with('{')
        {
            // Skip to the brace that closes the block.
            let mut depth = 0usize;
            for l in lines.by_ref() {
                depth += l.matches('{').count();
                depth = depth.saturating_sub(l.matches('}').count());
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Every path in `code` that starts with `crate::`, `super::` or `self::`, with `{…}`
/// groups expanded: `use crate::a::{b, c::d}` gives `crate::a::b` and `crate::a::c::d`.
fn referenced_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let starts_word = i == 0 || !is_ident_byte(bytes[i - 1]) && bytes[i - 1] != b':';
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| bytes[i..].starts_with(h.as_bytes()));
        match head {
            Some(h) if starts_word => {
                let first = h.trim_end_matches("::").to_string();
                let end = expand(code, i + h.len(), vec![first], &mut out);
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Reads the rest of a path from `at` (after a `::`), pushing every full path under
/// `prefix` into `out`; returns where reading stopped.
fn expand(code: &str, at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let bytes = code.as_bytes();
    let mut i = at;
    let mut path = prefix;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            // A group: each comma-separated item continues `path`.
            i += 1;
            loop {
                while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
                if i >= bytes.len() {
                    return i;
                }
                if bytes[i] == b'}' {
                    return i + 1;
                }
                let before = i;
                i = expand(code, i, path.clone(), out);
                // Skip what the item left (an `as` alias, a `*`) up to its separator.
                while i < bytes.len() && bytes[i] != b',' && bytes[i] != b'}' {
                    i += 1;
                }
                if i == before {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < bytes.len() && is_ident_byte(bytes[i]) {
            i += 1;
        }
        if i > start {
            path.push(code[start..i].to_string());
        }
        if bytes[i..].starts_with(b"::") && i > start {
            i += 2;
            continue;
        }
        out.push(path);
        return i;
    }
}

/// The strongly connected components with more than one member (Tarjan's algorithm).
fn strongly_connected<N: Ord + Copy>(edges: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct State<N> {
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        on_stack: BTreeSet<N>,
        stack: Vec<N>,
        next: usize,
        out: Vec<Vec<N>>,
    }
    fn visit<N: Ord + Copy>(n: N, edges: &BTreeMap<N, BTreeSet<N>>, s: &mut State<N>) {
        s.index.insert(n, s.next);
        s.low.insert(n, s.next);
        s.next += 1;
        s.stack.push(n);
        s.on_stack.insert(n);
        for &m in edges.get(&n).into_iter().flatten() {
            if !s.index.contains_key(&m) {
                visit(m, edges, s);
                let low = s.low[&n].min(s.low[&m]);
                s.low.insert(n, low);
            } else if s.on_stack.contains(&m) {
                let low = s.low[&n].min(s.index[&m]);
                s.low.insert(n, low);
            }
        }
        if s.low[&n] == s.index[&n] {
            let mut scc = Vec::new();
            while let Some(m) = s.stack.pop() {
                s.on_stack.remove(&m);
                scc.push(m);
                if m == n {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    let nodes: Vec<N> = edges.keys().copied().collect();
    for n in nodes {
        if !s.index.contains_key(&n) {
            visit(n, edges, &mut s);
        }
    }
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_of(files: &[(&str, &str)]) -> BTreeMap<PathBuf, String> {
        files
            .iter()
            .map(|(f, t)| (PathBuf::from(f), t.to_string()))
            .collect()
    }

    #[test]
    fn paths_are_read_with_groups_aliases_and_super() {
        let code = "use crate::a::{b, c::{d as e, f}, *};\nlet x = super::g::h(self::i);\n";
        let got: Vec<String> = referenced_paths(code)
            .into_iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(
            got,
            [
                "crate::a::b",
                "crate::a::c::d",
                "crate::a::c::f",
                "crate::a",
                "super::g::h",
                "self::i"
            ]
        );
        let not_ours = referenced_paths("let s = my_crate::x + crate::y;");
        assert_eq!(not_ours, [vec!["crate".to_string(), "y".to_string()]]);
    }

    #[test]
    fn a_loop_of_files_is_named_and_a_tree_is_not() {
        let loop_of_three = crate_of(&[
            ("lib.rs", "mod a; mod b; mod c; pub use a::X;"),
            ("a.rs", "//! a\nuse crate::b::Y;"),
            ("b.rs", "//! b\nuse crate::c::{Z};"),
            ("c.rs", "//! c\nfn f() { crate::a::X::new(); }"),
        ]);
        assert_eq!(
            circles(&loop_of_three),
            [Circle {
                members: "a.rs ↔ b.rs ↔ c.rs".into(),
                kind: "a loop of files"
            }]
        );
        let tree = crate_of(&[
            ("lib.rs", "mod a; mod b; pub use a::X;"),
            (
                "a/mod.rs",
                "//! a\nmod low; pub use low::X; use crate::b::Y;",
            ),
            ("a/low.rs", "//! low\nuse super::super::b::Y;"),
            (
                "b.rs",
                "//! b\n// crate::a::X in a comment\n#[cfg(test)]\nmod tests {\n    use crate::a::X;\n}\n",
            ),
        ]);
        assert_eq!(circles(&tree), []);
    }

    #[test]
    fn a_loop_of_folders_is_named_even_without_a_loop_of_files() {
        let folders = crate_of(&[
            ("lib.rs", "mod a; mod b;"),
            ("a/mod.rs", "//! a\nmod x; mod y;"),
            ("a/x.rs", "//! x\nuse crate::b::z::Z;"),
            ("a/y.rs", "//! y"),
            ("b/mod.rs", "//! b\nmod z; mod w;"),
            ("b/z.rs", "//! z"),
            ("b/w.rs", "//! w\nuse crate::a::y::Y;"),
        ]);
        assert_eq!(
            circles(&folders),
            [Circle {
                members: "a/ ↔ b/".into(),
                kind: "a loop of folders"
            }]
        );
    }

    #[test]
    fn only_library_and_xtask_sources_are_read() {
        assert_eq!(
            checked_module_file(Path::new("crates/tools-lsp/src/client/rpc.rs")),
            Some((
                PathBuf::from("crates/tools-lsp"),
                PathBuf::from("client/rpc.rs")
            ))
        );
        assert_eq!(
            checked_module_file(Path::new("crates/agent-tools/src/main.rs")),
            None
        );
        assert_eq!(
            checked_module_file(Path::new("crates/agent-tools/src/bin/cli/x.rs")),
            None
        );
        assert_eq!(
            checked_module_file(Path::new("crates/tools-lsp/tests/all.rs")),
            None
        );
        assert_eq!(module_of(Path::new("client/mod.rs")), ["client"]);
        assert_eq!(module_of(Path::new("client/rpc.rs")), ["client", "rpc"]);
        assert_eq!(
            checked_module_file(Path::new("xtask/src/setup.rs")),
            Some((PathBuf::from("xtask"), PathBuf::from("setup.rs")))
        );
        assert!(module_of(Path::new("lib.rs")).is_empty());
        assert!(module_of(Path::new("main.rs")).is_empty());
        assert_eq!(module_of(Path::new("cli/main.rs")), ["cli", "main"]);
    }
}
