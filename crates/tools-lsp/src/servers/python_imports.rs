//! What a Python file imports, read from its text: `from MODULE import NAME` statements
//! and the modules it imports whole (`import pkg.utils as u`, `from pkg import utils`),
//! and whether a module as written names a given file. A text scan, never a resolver —
//! nothing of the repository runs — for the files a narrowed pyright program leaves out
//! (see the `python_program` module).

use std::path::Path;

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

/// Whether `c` may be part of a Python identifier.
pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A module imported whole, through which a file reaches the module's names as attributes
/// (`u.name`, `pkg.utils.name`).
#[derive(Debug, PartialEq, Eq)]
pub struct ModuleImport {
    /// The module as written (`pkg.utils`, `.utils` for `from . import utils`).
    pub module: String,
    /// What the file calls it: `pkg.utils` for `import pkg.utils`, `u` for
    /// `import pkg.utils as u`, `utils` for `from pkg import utils`.
    pub bound_as: String,
}

/// One import statement's list: the module of a `from MODULE import` (`None` for a plain
/// `import`), and the words of its list, comments left out, with their byte offsets
/// (a dotted module name is one word).
struct ImportStatement<'t> {
    from: Option<&'t str>,
    words: Vec<(usize, &'t str)>,
}

/// Every import statement in `text`: one line, a parenthesised list over several lines, or
/// lines joined by a backslash.
fn import_statements(text: &str) -> Vec<ImportStatement<'_>> {
    let mut out = Vec::new();
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let line = &text[line_start..line_end];
        let body = line.trim_start();
        let body_at = line_start + (line.len() - body.len());
        let mut next = line_end + 1;
        if let Some(rest) = body.strip_prefix("from ") {
            let rest_at = body_at + "from ".len();
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
                out.push(ImportStatement {
                    from: Some(module),
                    words: list_words(text, from, to, false),
                });
                next = text[to..].find('\n').map_or(text.len(), |i| to + i) + 1;
            }
        } else if let Some(rest) = body.strip_prefix("import")
            && rest.starts_with([' ', '\t'])
        {
            let from = body_at + "import".len();
            let to = statement_end(text, line_end);
            out.push(ImportStatement {
                from: None,
                words: list_words(text, from, to, true),
            });
            next = to + 1;
        }
        line_start = next;
    }
    out
}

/// Every `from MODULE import …` of `name` in `text`, with whether it is imported `as`
/// another name. Comments in the list are skipped; a name after `as` (a local name that
/// happens to be `name`) is not an import of it.
pub fn imports_of(text: &str, name: &str) -> Vec<ImportedName> {
    let mut out = Vec::new();
    for statement in import_statements(text) {
        let Some(module) = statement.from else {
            continue;
        };
        let words = &statement.words;
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
    out
}

/// Every module `text` imports whole: `import a.b` (and the package `a` it binds),
/// `import a.b as u`, and each name of a
/// `from PACKAGE import name` taken as a possible submodule (`PACKAGE.name`; whether it is
/// one is for [`module_is`] to say against a file).
pub fn module_imports(text: &str) -> Vec<ModuleImport> {
    let mut out = Vec::new();
    for statement in import_statements(text) {
        let words = &statement.words;
        for (k, &(_, word)) in words.iter().enumerate() {
            if word == "as" || (k > 0 && words[k - 1].1 == "as") {
                continue;
            }
            let bound_as = match words.get(k + 1) {
                Some(&(_, "as")) => words.get(k + 2).map_or(word, |w| w.1),
                _ => word,
            };
            let module = match statement.from {
                None => word.to_string(),
                Some(package) if package.ends_with('.') => format!("{package}{word}"),
                Some(package) => format!("{package}.{word}"),
            };
            // `import a.b.c` binds `a`: the packages on the way are reached as well
            // (`a.NAME` is a name of `a/__init__.py`).
            if statement.from.is_none() && bound_as == word {
                for (dot, _) in word.match_indices('.') {
                    out.push(ModuleImport {
                        module: word[..dot].to_string(),
                        bound_as: word[..dot].to_string(),
                    });
                }
            }
            out.push(ModuleImport {
                module,
                bound_as: bound_as.to_string(),
            });
        }
    }
    out
}

/// Byte offsets of every `BOUND.name` in `text` (a use of `name` through a module bound as
/// `BOUND`, spaces around the dot allowed), each the offset of `name`.
pub fn attribute_uses(text: &str, bound_as: &str, name: &str) -> Vec<usize> {
    let whole = |at: usize, len: usize| {
        !text[..at].ends_with(|c: char| is_ident_char(c) || c == '.')
            && !text[at + len..].starts_with(is_ident_char)
    };
    let mut out = Vec::new();
    for (at, _) in text.match_indices(bound_as) {
        if !whole(at, bound_as.len()) {
            continue;
        }
        let rest = &text[at + bound_as.len()..];
        let Some(after_dot) = rest.trim_start_matches([' ', '\t']).strip_prefix('.') else {
            continue;
        };
        let attr = after_dot.trim_start_matches([' ', '\t']);
        let attr_at = text.len() - attr.len();
        if attr.starts_with(name) && !attr[name.len()..].starts_with(is_ident_char) {
            out.push(attr_at);
        }
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

/// The words of the import list `text[from..to]` with their offsets, comments left out
/// (`a as b, c`); with `dotted`, a dotted name (`pkg.utils`) is one word.
fn list_words(text: &str, from: usize, to: usize, dotted: bool) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let list = &text[from..to];
    let mut chars = list.char_indices().peekable();
    let part = |c: char| is_ident_char(c) || (dotted && c == '.');
    while let Some((i, c)) = chars.next() {
        if c == '#' {
            while chars.peek().is_some_and(|&(_, c)| c != '\n') {
                chars.next();
            }
        } else if is_ident_char(c) {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !part(d) {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            words.push((from + i, &list[i..end]));
        }
    }
    words
}

/// Whether `module` as written in `importer` (`pkg.utils`, `.utils`, `..`) names the file
/// `target` (`…/pkg/utils.py`, `…/pkg/utils/__init__.py`). A relative module is resolved
/// from the importer's folder; an absolute one matches the end of the target's path, so
/// it holds whichever source root (`src/`, the checkout) the package lives under.
pub fn module_is(module: &str, importer: &Path, target: &Path) -> bool {
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

    #[test]
    fn modules_imported_whole_with_the_name_they_are_bound_to() {
        let text = "import os, pkg.utils\nimport pkg.utils as u  # short\nfrom pkg import utils, other as o\nfrom . import helpers\nfrom .. import (\n    base,\n)\nfrom pkg.utils import name\n";
        let found: Vec<(String, String)> = module_imports(text)
            .into_iter()
            .map(|m| (m.module, m.bound_as))
            .collect();
        let pair = |m: &str, b: &str| (m.to_string(), b.to_string());
        assert_eq!(
            found,
            [
                pair("os", "os"),
                pair("pkg", "pkg"),
                pair("pkg.utils", "pkg.utils"),
                pair("pkg.utils", "u"),
                pair("pkg.utils", "utils"),
                pair("pkg.other", "o"),
                pair(".helpers", "helpers"),
                pair("..base", "base"),
                pair("pkg.utils.name", "name"),
            ]
        );
    }

    #[test]
    fn attribute_uses_name_the_attribute_through_the_bound_module_only() {
        let text = "import pkg.utils\nx = pkg.utils.short_help(1)\ny = mypkg.utils.short_help\nz = pkg.utils.short_help_more\nw = pkg.utils . short_help\nv = u.short_help\n";
        let at = |needle: &str, nth: usize| text.match_indices(needle).nth(nth).unwrap().0;
        assert_eq!(
            attribute_uses(text, "pkg.utils", "short_help"),
            [at("short_help(1)", 0), at(" short_help\n", 0) + 1]
        );
        assert_eq!(
            attribute_uses(text, "u", "short_help"),
            [at("u.short_help", 0) + 2]
        );
        assert!(attribute_uses(text, "utils", "short_help").is_empty());
    }
}
