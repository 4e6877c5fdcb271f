//! The tests of a file, read from its text (nothing runs): each with its line and the id
//! `test run` accepts. A static read, so a test made by a fixture, a macro or a loop is not
//! seen; the runner's own collection decides what `run` runs.
//!
//! Ids:
//! - pytest: the node id, `tests/test_calc.py::test_add`, `…::TestCalc::test_add`
//!   (path relative to the project folder pytest starts in);
//! - cargo test: libtest's name, `tests::adds` (module path inside the test binary);
//! - go test: `calc/calc_test.go::TestAdd` (the package folder is what `go test` runs);
//! - vitest/jest: `src/sum.test.ts::sum > adds` (describe blocks and the test, joined by ` > `).

use std::path::{Path, PathBuf};

use crate::runner::{Detected, Language, RunnerKind};

/// One test found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestItem {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its first line (1-based): the `def`, `fn`, `func` or `it(`/`test(` line.
    pub line: usize,
    /// The last line of its body (before the next test or block), 1-based.
    pub end: usize,
    /// The id `test run` accepts.
    pub id: String,
}

/// Whether `path` is a test file by its runner's naming rules (Rust: any `.rs` file, since
/// tests live beside the code).
pub fn is_test_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    match Language::of(path) {
        Some(Language::Python) => {
            (name.starts_with("test_") || name.ends_with("_test.py")) && name.ends_with(".py")
        }
        Some(Language::Rust) => true,
        Some(Language::Go) => name.ends_with("_test.go"),
        Some(Language::JavaScript) => name.contains(".test.") || name.contains(".spec."),
        None => false,
    }
}

/// The tests `text` (the content of `path`) defines, for the project `detected`.
pub fn tests_in(path: &Path, text: &str, detected: &Detected) -> Vec<TestItem> {
    let rel = tools_core::display_relative(&detected.root, path);
    let mut items = match detected.kind {
        RunnerKind::Pytest => python_tests(path, text, &rel),
        RunnerKind::Cargo | RunnerKind::Nextest => {
            rust_tests(path, text, &rust_module_prefix(&rel, &detected.root))
        }
        RunnerKind::Go => go_tests(path, text, &rel),
        RunnerKind::Vitest | RunnerKind::Jest => js_tests(path, text, &rel),
    };
    let total = text.lines().count();
    let starts: Vec<usize> = items.iter().map(|t| t.line).collect();
    for (i, item) in items.iter_mut().enumerate() {
        item.end = starts
            .iter()
            .copied()
            .filter(|&l| l > starts[i])
            .min()
            .map_or(total, |next| next - 1);
    }
    items
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn ident_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.trim_start().strip_prefix(prefix)?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn item(path: &Path, line: usize, id: String) -> TestItem {
    TestItem {
        path: path.to_path_buf(),
        line,
        end: line,
        id,
    }
}

fn python_tests(path: &Path, text: &str, rel: &str) -> Vec<TestItem> {
    let mut out = Vec::new();
    let mut class: Option<(String, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let ind = indent(line);
        if class.as_ref().is_some_and(|(_, ci)| ind <= *ci) {
            class = None;
        }
        if let Some(name) = ident_after(line, "class ") {
            class = name.starts_with("Test").then(|| (name.to_string(), ind));
            continue;
        }
        let def = ident_after(line, "def ").or_else(|| ident_after(line, "async def "));
        if let Some(name) = def.filter(|n| n.starts_with("test")) {
            match &class {
                Some((c, ci)) if ind > *ci => {
                    out.push(item(path, n + 1, format!("{rel}::{c}::{name}")))
                }
                None if ind == 0 => out.push(item(path, n + 1, format!("{rel}::{name}"))),
                _ => {}
            }
        }
    }
    out
}

/// The module path of a Rust file inside its test binary: a target's root file (`src/lib.rs`,
/// `src/main.rs`, `tests/x.rs`, or the `path` of a `[lib]` or `[[bin]]` in the package's
/// manifest, such as `crates/core/main.rs`) is the root, and a file below its folder is
/// a module of it (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b::`).
fn rust_module_prefix(rel: &str, package: &Path) -> String {
    let mut roots: Vec<String> = manifest_target_paths(package);
    roots.extend(["src/lib.rs".to_string(), "src/main.rs".to_string()]);
    // The deepest root folder holding the file decides.
    roots.sort_by_key(|r| std::cmp::Reverse(r.matches('/').count()));
    for root in &roots {
        let dir = root.rsplit_once('/').map_or("", |(d, _)| d);
        let Some(inner) = (if dir.is_empty() {
            Some(rel)
        } else {
            rel.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
        }) else {
            continue;
        };
        if rel == root || inner.starts_with("bin/") {
            return String::new();
        }
        let inner = inner.strip_suffix(".rs").unwrap_or(inner);
        let inner = inner.strip_suffix("/mod").unwrap_or(inner);
        if matches!(inner, "lib" | "main") {
            return String::new();
        }
        return format!("{}::", inner.replace('/', "::"));
    }
    String::new()
}

/// The `path`s of the `[lib]` and `[[bin]]` targets the package's manifest names
/// (relative to the package, with `/`); none when it names none or cannot be read.
fn manifest_target_paths(package: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(package.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let path_of = |t: &toml::Value| t.get("path")?.as_str().map(|p| p.replace('\\', "/"));
    let mut out: Vec<String> = manifest.get("lib").and_then(path_of).into_iter().collect();
    if let Some(bins) = manifest.get("bin").and_then(|b| b.as_array()) {
        out.extend(bins.iter().filter_map(path_of));
    }
    out.iter()
        .map(|p| p.trim_start_matches("./").to_string())
        .collect()
}

fn rust_tests(path: &Path, text: &str, prefix: &str) -> Vec<TestItem> {
    let mut out = Vec::new();
    // Inline modules by indentation (rustfmt's layout): a `mod x {` at indent i ends at the
    // first `}` at indent i.
    let mut mods: Vec<(String, usize)> = Vec::new();
    let mut pending_test = false;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let ind = indent(line);
        if trimmed.starts_with('}') && mods.last().is_some_and(|(_, i)| *i == ind) {
            mods.pop();
            continue;
        }
        let decl = trimmed.strip_prefix("pub ").unwrap_or(trimmed);
        if let Some(name) = ident_after(decl, "mod ")
            && trimmed.ends_with('{')
        {
            mods.push((name.to_string(), ind));
            continue;
        }
        if trimmed.starts_with("#[") && trimmed.contains("test") && !trimmed.contains("cfg(") {
            pending_test = true;
            continue;
        }
        if trimmed.starts_with("#[") || trimmed.starts_with("//") {
            continue;
        }
        if pending_test {
            pending_test = false;
            let decl = decl.strip_prefix("async ").unwrap_or(decl);
            if let Some(name) = ident_after(decl, "fn ") {
                let modpath: String = mods.iter().map(|(m, _)| format!("{m}::")).collect();
                out.push(item(path, n + 1, format!("{prefix}{modpath}{name}")));
            }
        }
    }
    out
}

fn go_tests(path: &Path, text: &str, rel: &str) -> Vec<TestItem> {
    text.lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let name = ident_after(line, "func ").filter(|_| line.starts_with("func "))?;
            let is_test = name.starts_with("Test") && line.contains("*testing.T)");
            is_test.then(|| item(path, n + 1, format!("{rel}::{name}")))
        })
        .collect()
}

/// The string literal opening a `describe(`/`it(`/`test(` call on `line`, with the call's
/// kind: `Some((true, name))` for a describe block.
fn js_call(line: &str) -> Option<(bool, String)> {
    let t = line.trim_start();
    let (is_block, rest) = ["describe", "it", "test"].iter().find_map(|f| {
        let after = t.strip_prefix(f)?;
        // `it.each(...)` names are templates: not listed.
        let after = after
            .strip_prefix(".only")
            .or_else(|| after.strip_prefix(".skip"))
            .or_else(|| after.strip_prefix(".concurrent"))
            .unwrap_or(after);
        Some((*f == "describe", after.strip_prefix('(')?))
    })?;
    let quote = rest
        .chars()
        .next()
        .filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let body = &rest[1..];
    let end = body.find(quote)?;
    Some((is_block, body[..end].to_string()))
}

fn js_tests(path: &Path, text: &str, rel: &str) -> Vec<TestItem> {
    let mut out = Vec::new();
    let mut blocks: Vec<(String, usize)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let ind = indent(line);
        while blocks.last().is_some_and(|(_, i)| ind <= *i) && !line.trim_start().starts_with('}') {
            blocks.pop();
        }
        if line.trim_start().starts_with('}') {
            if blocks.last().is_some_and(|(_, i)| *i == ind) {
                blocks.pop();
            }
            continue;
        }
        let Some((is_block, name)) = js_call(line) else {
            continue;
        };
        if is_block {
            blocks.push((name, ind));
        } else {
            let mut full: Vec<&str> = blocks.iter().map(|(b, _)| b.as_str()).collect();
            full.push(&name);
            out.push(item(path, n + 1, format!("{rel}::{}", full.join(" > "))));
        }
    }
    out
}

/// Test files read at most when searching the workspace for a symbol or a module.
pub const MAX_FILES_SEARCHED: usize = 5000;

/// Folders never searched for tests.
const SKIPPED_DIRS: [&str; 6] = ["node_modules", "target", ".venv", "venv", ".git", "vendor"];

/// Whether `body` names `word` as a whole identifier.
pub(crate) fn names(body: &str, word: &str) -> bool {
    tools_core::first_whole_word(body, word, tools_core::is_ident_char).is_some()
}

/// The tests of `text` whose body names `symbol` in its code (see [`names_in_code`]).
pub(crate) fn mentioning(items: Vec<TestItem>, text: &str, symbol: &str) -> Vec<TestItem> {
    let lines: Vec<&str> = text.lines().collect();
    items
        .into_iter()
        .filter(|t| {
            let body = lines
                .get(t.line - 1..t.end.min(lines.len()))
                .map(|b| b.join("\n"))
                .unwrap_or_default();
            names_in_code(&body, symbol, Language::of(&t.path))
        })
        .collect()
}

/// Whether `text` (in `lang`) names `word` as code: a whole identifier outside comments
/// and strings, or a string that is the name and nothing else (`getattr(calc, "sub")`).
/// A word inside a longer string (a test's title, "check any inference") or a comment
/// names nothing.
pub(crate) fn names_in_code(text: &str, word: &str, lang: Option<Language>) -> bool {
    let quiet = quiet_spans(text, lang);
    tools_core::whole_words(text, word, tools_core::is_ident_char).any(|i| {
        match quiet.iter().find(|q| q.from <= i && i < q.to) {
            None => true,
            Some(q) => q.string && q.from == i && q.to == i + word.len(),
        }
    })
}

/// A comment or a string literal's content, by byte offsets.
struct Quiet {
    from: usize,
    to: usize,
    string: bool,
}

/// The comments and string contents of `text`, read with `lang`'s delimiters (a light scan:
/// escapes, Python's triple quotes and JavaScript's template strings are followed; Rust's
/// and Go's single quotes are left alone, since a Rust lifetime opens none).
fn quiet_spans(text: &str, lang: Option<Language>) -> Vec<Quiet> {
    let b = text.as_bytes();
    let python = lang == Some(Language::Python);
    let single_quoted = matches!(lang, Some(Language::Python | Language::JavaScript));
    let backticks = matches!(lang, Some(Language::JavaScript | Language::Go));
    let mut out = Vec::new();
    let mut i = 0;
    let to_line_end = |from: usize| {
        b[from..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |n| from + n)
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if (python && c == b'#') || (!python && c == b'/' && next == Some(b'/')) {
            let end = to_line_end(i);
            out.push(Quiet {
                from: i,
                to: end,
                string: false,
            });
            i = end;
        } else if !python && c == b'/' && next == Some(b'*') {
            let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            out.push(Quiet {
                from: i,
                to: end,
                string: false,
            });
            i = end;
        } else if c == b'"' || (c == b'\'' && single_quoted) || (c == b'`' && backticks) {
            let triple = python && b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&c);
            let open = if triple { 3 } else { 1 };
            let mut j = i + open;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if triple {
                    if b[j] == c && b.get(j + 1) == Some(&c) && b.get(j + 2) == Some(&c) {
                        break;
                    }
                } else if b[j] == c || (b[j] == b'\n' && c != b'`') {
                    break;
                }
                j += 1;
            }
            let end = j.min(b.len());
            out.push(Quiet {
                from: i + open,
                to: end,
                string: true,
            });
            i = (end + open).min(b.len());
        } else {
            i += 1;
        }
    }
    out
}

/// Every test file of `lang` under `workspace`, at most [`MAX_FILES_SEARCHED`]; the flag
/// says the search was cut.
pub(crate) fn test_files(workspace: &Path, lang: Option<Language>) -> (Vec<PathBuf>, bool) {
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(workspace)
        .filter_entry(|e| {
            !SKIPPED_DIRS
                .iter()
                .any(|d| e.file_name() == std::ffi::OsStr::new(d))
        })
        .build();
    for entry in walk.flatten() {
        let p = entry.path();
        if !p.is_file() || !is_test_file(p) || (lang.is_some() && Language::of(p) != lang) {
            continue;
        }
        if out.len() == MAX_FILES_SEARCHED {
            return (out, true);
        }
        out.push(p.to_path_buf());
    }
    out.sort();
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_files_module_path_starts_at_its_targets_root_wherever_the_manifest_puts_it() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path();
        assert_eq!(rust_module_prefix("src/lib.rs", pkg), "");
        assert_eq!(rust_module_prefix("src/a/b.rs", pkg), "a::b::");
        assert_eq!(rust_module_prefix("src/a/b/mod.rs", pkg), "a::b::");
        assert_eq!(rust_module_prefix("src/bin/tool.rs", pkg), "");
        assert_eq!(rust_module_prefix("tests/cli.rs", pkg), "");
        std::fs::write(
            pkg.join("Cargo.toml"),
            "[package]\nname = \"rg\"\n\n[[bin]]\nname = \"rg\"\npath = \"crates/core/main.rs\"\n",
        )
        .unwrap();
        assert_eq!(rust_module_prefix("crates/core/main.rs", pkg), "");
        assert_eq!(
            rust_module_prefix("crates/core/flags/defs.rs", pkg),
            "flags::defs::"
        );
    }

    #[test]
    fn a_name_counts_in_code_and_as_a_whole_string_never_in_a_title_or_a_comment() {
        let py = Some(Language::Python);
        assert!(names_in_code("    assert sub(3, 1) == 2", "sub", py));
        assert!(names_in_code("    getattr(calc, \"sub\")(2, 2)", "sub", py));
        assert!(!names_in_code(
            "    # sub is tested elsewhere\n    pass",
            "sub",
            py
        ));
        assert!(!names_in_code(
            "    \"\"\"Checks sub.\"\"\"\n    pass",
            "sub",
            py
        ));
        let js = Some(Language::JavaScript);
        assert!(!names_in_code(
            "test(\"check any inference\", () => {})",
            "check",
            js
        ));
        assert!(names_in_code(
            "test(\"x\", () => { s.check(1); })",
            "check",
            js
        ));
        assert!(!names_in_code("// check\nfoo()", "check", js));
        let rs = Some(Language::Rust);
        assert!(names_in_code(
            "fn f<'a>(x: &'a str) { next(x) }",
            "next",
            rs
        ));
        assert!(!names_in_code(
            "assert!(it.is_ok(), \"next failed\")",
            "next",
            rs
        ));
    }
}
