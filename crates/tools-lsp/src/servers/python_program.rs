//! Which Python files pyright and basedpyright take into their program, and which of the
//! others import a given name.
//!
//! A project can narrow pyright to part of the checkout (`include = ["src/requests"]` in
//! `[tool.pyright]`, or an `exclude`): files outside are not in its program, so its
//! references and renames never reach them — yet the tests that import the renamed name
//! are there. This finds the files outside the program that mention a name (bounded) and
//! reads their `from MODULE import NAME` statements (a text scan, never a resolver: the
//! module matches a file by its path), for `queries::outside_importers` (references,
//! renames) and `diagnostics::dependents` (the files a write may break).

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::client::LspClient;

/// Most files outside the program opened for one question.
pub const OUTSIDE_OPEN_CAP: usize = 64;

/// Largest file read to see whether it mentions a name.
const LARGEST_FILE_READ: u64 = 2 * 1024 * 1024;

/// The part of the checkout a pyright-family server takes into its program, when its
/// configuration narrows it.
#[derive(Debug)]
pub struct PythonProgram {
    /// The folder holding the configuration: its patterns are relative to it.
    base: PathBuf,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl PythonProgram {
    /// The program of `server` (`pyright…` or `basedpyright…`) rooted at `root`, or `None`
    /// when no configuration narrows it (the server then takes the whole root).
    pub fn read(root: &Path, server: &str) -> Option<PythonProgram> {
        let based = server.starts_with("basedpyright");
        let (include, exclude) = configured_patterns(root, based)?;
        let program = PythonProgram {
            base: root.to_path_buf(),
            include: patterns(&include),
            exclude: patterns(&exclude),
        };
        (program.include.is_some() || program.exclude.is_some()).then_some(program)
    }

    /// Whether the server takes `path` into its program.
    pub fn holds(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.base) else {
            return false;
        };
        let included = self.include.as_ref().is_none_or(|set| set.is_match(rel));
        let excluded = self.exclude.as_ref().is_some_and(|set| set.is_match(rel));
        included && !excluded
    }
}

/// The `include` and `exclude` lists of the configuration at `root`: `pyrightconfig.json`
/// (for basedpyright `basedpyrightconfig.json` first) wins over `pyproject.toml`, as the
/// servers read them. `None` when there is no configuration of either.
fn configured_patterns(root: &Path, based: bool) -> Option<(Vec<String>, Vec<String>)> {
    let json_names: &[&str] = if based {
        &["basedpyrightconfig.json", "pyrightconfig.json"]
    } else {
        &["pyrightconfig.json"]
    };
    for name in json_names {
        if let Some(text) = crate::servers::roots::read_small(&root.join(name)) {
            let value: serde_json::Value =
                serde_json::from_str(&crate::servers::roots::strip_json_comments(&text)).ok()?;
            return Some((strings(value.get("include")), strings(value.get("exclude"))));
        }
    }
    let text = crate::servers::roots::read_small(&root.join("pyproject.toml"))?;
    let doc: toml::Table = text.parse().ok()?;
    let tool = doc.get("tool")?.as_table()?;
    let section = if based {
        tool.get("basedpyright").or_else(|| tool.get("pyright"))
    } else {
        tool.get("pyright")
    }?;
    let list = |key: &str| -> Vec<String> {
        section
            .get(key)
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Some((list("include"), list("exclude")))
}

fn strings(value: Option<&serde_json::Value>) -> Vec<String> {
    value
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Pyright's path patterns as a set: each names a file or a folder (with everything under
/// it), with `*`, `**` and `?` as wildcards, relative to the configuration's folder. `None`
/// for no patterns.
fn patterns(list: &[String]) -> Option<GlobSet> {
    let mut set = GlobSetBuilder::new();
    let mut any = false;
    for raw in list {
        let entry = raw.trim().trim_start_matches("./").trim_end_matches('/');
        let entry = if entry.is_empty() || entry == "." {
            "**"
        } else {
            entry
        };
        for pattern in [entry.to_string(), format!("{entry}/**")] {
            if let Ok(glob) = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .or_else(|_| Glob::new(&globset::escape(&pattern)))
            {
                set.add(glob);
                any = true;
            }
        }
    }
    if !any {
        return None;
    }
    set.build().ok()
}

/// Whether `text` holds `name` as a whole identifier.
fn mentions(text: &[u8], name: &[u8]) -> bool {
    if name.is_empty() {
        return false;
    }
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut from = 0;
    while let Some(at) = find(&text[from..], name) {
        let start = from + at;
        let end = start + name.len();
        let before_ok = start == 0 || !ident(text[start - 1]);
        let after_ok = end == text.len() || !ident(text[end]);
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
    }
    false
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The files under `root` with one of `extensions` that `program` leaves out and that
/// mention `name`, at most [`OUTSIDE_OPEN_CAP`], in walk order (ignored files, virtual
/// environments and hidden folders skipped).
fn outside_files_naming(
    root: &Path,
    program: &PythonProgram,
    extensions: &[String],
    name: &str,
) -> Vec<PathBuf> {
    let walker = ignore::WalkBuilder::new(root)
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n == "node_modules" || n == ".venv" || n == "venv" || n == "__pycache__")
        })
        .build();
    let mut found = Vec::new();
    for entry in walker.flatten() {
        if found.len() >= OUTSIDE_OPEN_CAP {
            break;
        }
        let path = entry.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !extensions.iter().any(|e| e.eq_ignore_ascii_case(ext))
            || program.holds(path)
            || entry.metadata().is_ok_and(|m| m.len() > LARGEST_FILE_READ)
        {
            continue;
        }
        if std::fs::read(path).is_ok_and(|text| mentions(&text, name.as_bytes())) {
            found.push(path.to_path_buf());
        }
    }
    found
}

/// The files of `client`'s root with one of `extensions` that a pyright-family server's
/// configuration leaves out of its program and that mention `name`, once the server knows
/// its program's files (see [`outside_files_naming`]). Empty for other servers and for
/// programs no configuration narrows.
pub async fn outside_files(client: &LspClient, extensions: &[String], name: &str) -> Vec<PathBuf> {
    if !client.answers_before_analysis() || name.is_empty() {
        return Vec::new();
    }
    // Most projects give pyright the whole root: nothing to scan, nothing to wait for.
    let Some(program) = PythonProgram::read(&client.root, &client.server) else {
        return Vec::new();
    };
    client.wait_project_files_found().await;
    let root = client.root.clone();
    let exts = extensions.to_vec();
    let name = name.to_string();
    tokio::task::spawn_blocking(move || outside_files_naming(&root, &program, &exts, &name))
        .await
        .unwrap_or_default()
}

/// A name imported by a `from MODULE import …` statement, as read from the text.
#[derive(Debug, PartialEq, Eq)]
pub struct ImportedName {
    /// The module as written (`pkg.utils`, `.utils`).
    pub module: String,
    /// Byte offset of the name in the file.
    pub at: usize,
    /// Whether it is imported under another name (`NAME as other`).
    pub aliased: bool,
}

/// The files outside `client`'s program that mention `name` and import it with
/// `from MODULE import` from one of `modules` (files that bind or use it), each with those
/// imports. Empty for servers other than pyright's family and for programs no
/// configuration narrows.
pub async fn importing_files(
    client: &LspClient,
    extensions: &[String],
    name: &str,
    modules: &[PathBuf],
) -> Vec<(PathBuf, Vec<ImportedName>)> {
    if modules.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for path in outside_files(client, extensions, name).await {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let imports: Vec<ImportedName> = imports_of(&text, name)
            .into_iter()
            .filter(|i| modules.iter().any(|m| module_is(&i.module, &path, m)))
            .collect();
        if !imports.is_empty() {
            out.push((path, imports));
        }
    }
    out
}

/// Whether `c` may be part of a Python identifier.
pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every `from MODULE import …` of `name` in `text` (one line, a parenthesised list over
/// several lines, or lines joined by a backslash), with whether it is imported `as` another
/// name. Comments in the list are skipped; a name after `as` (a local name that happens to
/// be `name`) is not an import of it.
fn imports_of(text: &str, name: &str) -> Vec<ImportedName> {
    let mut out = Vec::new();
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let line = &text[line_start..line_end];
        let body = line.trim_start();
        let mut next = line_end + 1;
        if let Some(rest) = body.strip_prefix("from ") {
            let rest_at = line_start + (line.len() - body.len()) + "from ".len();
            let module_text = rest.trim_start();
            let module_at = rest_at + (rest.len() - module_text.len());
            let module_len = module_text
                .find(|c: char| !(is_ident_char(c) || c == '.'))
                .unwrap_or(module_text.len());
            let module = &module_text[..module_len];
            let after = &text[module_at + module_len..];
            let keyword = after.trim_start_matches([' ', '\t']);
            let keyword_at = module_at + module_len + (after.len() - keyword.len());
            if !module.is_empty()
                && keyword.starts_with("import")
                && keyword["import".len()..].starts_with([' ', '\t', '('])
            {
                let list_at = keyword_at + "import".len();
                let list = &text[list_at..];
                let (from, to) = match list.trim_start_matches([' ', '\t']).strip_prefix('(') {
                    Some(_) => {
                        let open = list_at + list.find('(').unwrap_or(0);
                        let close = text[open..].find(')').map_or(text.len(), |i| open + i);
                        (open + 1, close)
                    }
                    None => (list_at, statement_end(text, line_end)),
                };
                names_in_list(text, from, to, name, module, &mut out);
                next = text[to..].find('\n').map_or(text.len(), |i| to + i) + 1;
            }
        }
        line_start = next;
    }
    out
}

/// The end of a statement that begins on the line ending at `line_end`, following
/// backslash continuations.
fn statement_end(text: &str, mut line_end: usize) -> usize {
    while line_end < text.len() && text[..line_end].trim_end().ends_with('\\') {
        line_end = text[line_end + 1..]
            .find('\n')
            .map_or(text.len(), |i| line_end + 1 + i);
    }
    line_end
}

/// The imports of `name` in the import list `text[from..to]`.
fn names_in_list(
    text: &str,
    from: usize,
    to: usize,
    name: &str,
    module: &str,
    out: &mut Vec<ImportedName>,
) {
    // The list as words, comments left out: `a as b, c`.
    let mut words: Vec<(usize, &str)> = Vec::new();
    let list = &text[from..to];
    let mut chars = list.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '#' {
            while chars.peek().is_some_and(|&(_, c)| c != '\n') {
                chars.next();
            }
        } else if is_ident_char(c) {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !is_ident_char(d) {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            words.push((from + i, &list[i..end]));
        }
    }
    for (k, &(at, word)) in words.iter().enumerate() {
        let after_as = k > 0 && words[k - 1].1 == "as";
        if word == name && !after_as {
            out.push(ImportedName {
                module: module.to_string(),
                at,
                aliased: words.get(k + 1).is_some_and(|w| w.1 == "as"),
            });
        }
    }
}

/// Whether `module` as written in `importer` (`pkg.utils`, `.utils`, `..`) names the file
/// `target` (`…/pkg/utils.py`, `…/pkg/utils/__init__.py`). A relative module is resolved
/// from the importer's folder; an absolute one matches the end of the target's path, so
/// it holds whichever source root (`src/`, the checkout) the package lives under.
fn module_is(module: &str, importer: &Path, target: &Path) -> bool {
    let stem = match target.file_stem().and_then(|s| s.to_str()) {
        Some("__init__") => target.parent().map(Path::to_path_buf),
        Some(_) => Some(target.with_extension("")),
        None => None,
    };
    let Some(stem) = stem else {
        return false;
    };
    let dots = module.len() - module.trim_start_matches('.').len();
    let rest = &module[dots..];
    let parts: Vec<&str> = rest.split('.').filter(|p| !p.is_empty()).collect();
    if dots > 0 {
        let mut base = importer.parent().map(Path::to_path_buf);
        for _ in 1..dots {
            base = base.and_then(|b| b.parent().map(Path::to_path_buf));
        }
        let Some(mut base) = base else {
            return false;
        };
        for p in &parts {
            base.push(p);
        }
        return base == stem;
    }
    let tail: Vec<&str> = stem
        .components()
        .rev()
        .take(parts.len())
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    !parts.is_empty() && tail.len() == parts.len() && tail.iter().rev().eq(parts.iter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::projects::tests::write;

    fn py() -> Vec<String> {
        vec!["py".into(), "pyi".into()]
    }

    #[test]
    fn an_include_in_pyproject_leaves_the_tests_out_and_they_are_found_by_name() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(
            r,
            "pyproject.toml",
            "[project]\nname = \"x\"\n[tool.pyright]\ninclude = [\"src/pkg\"]\n",
        );
        write(r, "src/pkg/utils.py", "from ._impl import to_native\n");
        write(
            r,
            "tests/test_utils.py",
            "from pkg.utils import (\n    to_native,\n)\n",
        );
        write(r, "tests/test_other.py", "to_native_string = 1\n");
        write(r, "docs/conf.py", "x = to_native\n");
        let program = PythonProgram::read(r, "pyright-langserver").unwrap();
        assert!(program.holds(&r.join("src/pkg/utils.py")));
        assert!(!program.holds(&r.join("tests/test_utils.py")));
        let mut found = outside_files_naming(r, &program, &py(), "to_native");
        found.sort();
        assert_eq!(
            found,
            [r.join("docs/conf.py"), r.join("tests/test_utils.py")]
        );
    }

    #[test]
    fn pyrightconfig_wins_and_excludes_with_wildcards_count() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(
            r,
            "pyproject.toml",
            "[tool.pyright]\ninclude = [\"nothing\"]\n",
        );
        write(
            r,
            "pyrightconfig.json",
            "{\n  // the tests are checked elsewhere\n  \"exclude\": [\"**/test_*.py\", \"build\"],\n}\n",
        );
        let program = PythonProgram::read(r, "pyright-langserver").unwrap();
        assert!(program.holds(&r.join("pkg/mod.py")));
        assert!(!program.holds(&r.join("pkg/tests/test_mod.py")));
        assert!(!program.holds(&r.join("build/lib/pkg/mod.py")));
        assert!(program.holds(&r.join("buildtools/mod.py")));
    }

    #[test]
    fn no_narrowing_configuration_means_the_whole_root() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(
            r,
            "pyproject.toml",
            "[tool.pyright]\ntypeCheckingMode = \"strict\"\n",
        );
        assert!(PythonProgram::read(r, "pyright-langserver").is_none());
        write(
            r,
            "pyproject.toml",
            "[tool.basedpyright]\ninclude = [\"src\"]\n",
        );
        assert!(PythonProgram::read(r, "pyright-langserver").is_none());
        let based = PythonProgram::read(r, "basedpyright-langserver").unwrap();
        assert!(based.holds(&r.join("src/a.py")) && !based.holds(&r.join("a.py")));
    }

    #[test]
    fn a_name_counts_only_as_a_whole_identifier() {
        assert!(mentions(b"import to_native\n", b"to_native"));
        assert!(mentions(b"(to_native)", b"to_native"));
        assert!(!mentions(b"to_native_string", b"to_native"));
        assert!(!mentions(b"my_to_native", b"to_native"));
        assert!(mentions(b"my_to_native, to_native", b"to_native"));
    }
    #[test]
    fn imports_on_one_line_in_parentheses_and_after_a_backslash() {
        let text = "import os\nfrom pkg.utils import (\n    other,  # to_native here is a comment\n    to_native,\n)\nfrom .x import a, to_native as native\nfrom y import \\\n    to_native\nfrom z import to_native_string, b as to_native\n";
        let found = imports_of(text, "to_native");
        let at = |needle: &str, nth: usize| text.match_indices(needle).nth(nth).unwrap().0;
        assert_eq!(
            found,
            [
                ImportedName {
                    module: "pkg.utils".into(),
                    at: at("to_native,", 0),
                    aliased: false
                },
                ImportedName {
                    module: ".x".into(),
                    at: at("to_native as", 0),
                    aliased: true
                },
                ImportedName {
                    module: "y".into(),
                    at: at("    to_native\n", 0) + 4,
                    aliased: false
                },
            ]
        );
    }

    #[test]
    fn modules_resolve_from_the_importer_or_by_the_end_of_the_path() {
        let t = Path::new("/w/src/pkg/utils.py");
        assert!(module_is("pkg.utils", Path::new("/w/tests/t.py"), t));
        assert!(!module_is(
            "utils",
            Path::new("/w/tests/t.py"),
            Path::new("/w/src/pkg/other.py")
        ));
        assert!(module_is(".utils", Path::new("/w/src/pkg/a.py"), t));
        assert!(module_is("..pkg.utils", Path::new("/w/src/sub/a.py"), t));
        assert!(!module_is(".utils", Path::new("/w/tests/a.py"), t));
        let init = Path::new("/w/src/pkg/__init__.py");
        assert!(module_is("pkg", Path::new("/w/tests/t.py"), init));
        assert!(module_is(".", Path::new("/w/src/pkg/a.py"), init));
        assert!(!module_is("kg", Path::new("/w/tests/t.py"), init));
    }
}
