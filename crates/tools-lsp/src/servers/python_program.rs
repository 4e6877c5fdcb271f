//! Which Python files pyright and basedpyright take into their program, and which of the
//! others import a given name.
//!
//! A project can narrow pyright to part of the checkout (`include = ["src/requests"]` in
//! `[tool.pyright]`, or an `exclude`): files outside are not in its program, so its
//! references and renames never reach them — yet the tests that import the renamed name
//! are there. This finds the files outside the program that mention a name (bounded) and
//! reads how they reach it — `from MODULE import NAME`, or `MODULE.NAME` with the module
//! imported whole (a text scan, never a resolver: the module matches a file by its path;
//! see the `python_imports` module), for `queries::outside_importers` (references,
//! renames) and `diagnostics::dependents` (the files a write may break).

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::client::LspClient;
use crate::servers::python_imports::{
    ImportedName, attribute_uses, imports_of, module_imports, module_is,
};

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
/// mention `name`, with their bytes as read, at most [`OUTSIDE_OPEN_CAP`], in walk order
/// (ignored files, virtual environments and hidden folders skipped).
fn outside_files_naming(
    root: &Path,
    program: &PythonProgram,
    extensions: &[String],
    name: &str,
) -> Vec<(PathBuf, Vec<u8>)> {
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
        if let Ok(text) = std::fs::read(path)
            && mentions(&text, name.as_bytes())
        {
            found.push((path.to_path_buf(), text));
        }
    }
    found
}

/// How a file outside the program reaches a name of one of the modules asked about.
#[derive(Debug, Default)]
pub struct Reach {
    /// Its `from MODULE import NAME` statements of the name.
    pub imports: Vec<ImportedName>,
    /// Byte offsets of its uses of the name as an attribute of a module it imports whole
    /// (`import pkg.utils` and `pkg.utils.NAME`, `import pkg.utils as u` and `u.NAME`).
    pub attribute_uses: Vec<usize>,
}

/// The files outside `client`'s program that mention `name` and reach it in one of
/// `modules` (files that bind or use it): by `from MODULE import NAME`, or as an attribute
/// of the module imported whole — read once the server knows its program's files, each
/// file read once. Empty for servers other than pyright's family and for programs no
/// configuration narrows.
pub async fn importing_files(
    client: &LspClient,
    extensions: &[String],
    name: &str,
    modules: &[PathBuf],
) -> Vec<(PathBuf, Reach)> {
    if modules.is_empty() || !client.answers_before_analysis() || name.is_empty() {
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
    let modules = modules.to_vec();
    tokio::task::spawn_blocking(move || {
        outside_files_naming(&root, &program, &exts, &name)
            .into_iter()
            .filter_map(|(path, bytes)| {
                let text = String::from_utf8(bytes).ok()?;
                let reach = reach_in(&text, &path, &name, &modules);
                (!reach.imports.is_empty() || !reach.attribute_uses.is_empty())
                    .then_some((path, reach))
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// How `text` (the file `path`) reaches `name` in one of `modules`.
fn reach_in(text: &str, path: &Path, name: &str, modules: &[PathBuf]) -> Reach {
    let names_a_module = |module: &str| modules.iter().any(|m| module_is(module, path, m));
    let imports = imports_of(text, name)
        .into_iter()
        .filter(|i| names_a_module(&i.module))
        .collect();
    let mut attribute_uses: Vec<usize> = module_imports(text)
        .into_iter()
        .filter(|m| names_a_module(&m.module))
        .flat_map(|m| attribute_uses(text, &m.bound_as, name))
        .collect();
    attribute_uses.sort_unstable();
    attribute_uses.dedup();
    Reach {
        imports,
        attribute_uses,
    }
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
        let mut found: Vec<PathBuf> = outside_files_naming(r, &program, &py(), "to_native")
            .into_iter()
            .map(|(path, _)| path)
            .collect();
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
    fn a_file_reaches_a_name_by_importing_it_or_its_module_whole() {
        let target = Path::new("/w/src/pkg/utils.py");
        let path = Path::new("/w/tests/test_utils.py");
        let text = "import pkg.utils\nimport pkg.other as o\nfrom pkg.utils import short\n\npkg.utils.short(1)\no.short(2)\n";
        let reach = reach_in(text, path, "short", &[target.to_path_buf()]);
        assert_eq!(
            reach.imports,
            [ImportedName {
                module: "pkg.utils".into(),
                at: text.find("short\n").unwrap(),
                aliased: false
            }]
        );
        assert_eq!(reach.attribute_uses, [text.find("short(1)").unwrap()]);
    }
}
