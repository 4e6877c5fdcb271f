//! The grammars this family ships, their ids, and how a language is chosen for a call.
//!
//! `ast-grep-language` knows more grammars than this crate compiles in (each grammar is a large
//! C parser, and build time matters); every lookup goes through [`Lang`], which only ever
//! yields a compiled-in grammar, so an unbuilt one can never be reached.

use std::path::Path;

use ast_grep_language::{Language, SupportLang};

/// A bundled grammar that this crate was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lang(usize);

/// `(id, grammar)` for every compiled-in language, sorted by id. The id is what the
/// `language` parameter takes (aliases such as `py`, `rs`, `ts`, `js` are accepted too).
const LANGS: &[(&str, SupportLang)] = &[
    ("bash", SupportLang::Bash),
    ("c", SupportLang::C),
    ("cpp", SupportLang::Cpp),
    ("csharp", SupportLang::CSharp),
    ("css", SupportLang::Css),
    ("dart", SupportLang::Dart),
    ("go", SupportLang::Go),
    ("html", SupportLang::Html),
    ("java", SupportLang::Java),
    ("javascript", SupportLang::JavaScript),
    ("json", SupportLang::Json),
    ("kotlin", SupportLang::Kotlin),
    ("lua", SupportLang::Lua),
    ("php", SupportLang::Php),
    ("python", SupportLang::Python),
    ("ruby", SupportLang::Ruby),
    ("rust", SupportLang::Rust),
    ("swift", SupportLang::Swift),
    ("tsx", SupportLang::Tsx),
    ("typescript", SupportLang::TypeScript),
    ("yaml", SupportLang::Yaml),
];

impl Lang {
    /// Every compiled-in language, in id order.
    pub fn all() -> impl Iterator<Item = Lang> {
        (0..LANGS.len()).map(Lang)
    }

    /// The ids the `language` parameter accepts (aliases aside).
    pub fn ids() -> Vec<&'static str> {
        LANGS.iter().map(|(id, _)| *id).collect()
    }

    /// The canonical id, e.g. `python`.
    pub fn id(self) -> &'static str {
        LANGS[self.0].0
    }

    /// The ast-grep grammar.
    pub fn grammar(self) -> SupportLang {
        LANGS[self.0].1
    }

    /// Parses an id or alias (`py`, `rs`, `ts`, `js`, `kt`, `cs`, `yml`, …), case-insensitively.
    pub fn from_id(id: &str) -> Option<Lang> {
        let id = id.trim();
        if let Some(i) = LANGS.iter().position(|(n, _)| n.eq_ignore_ascii_case(id)) {
            return Some(Lang(i));
        }
        let grammar: SupportLang = id.parse().ok()?;
        Lang::from_grammar(grammar)
    }

    /// The compiled-in language for a grammar, if it is compiled in.
    pub fn from_grammar(grammar: SupportLang) -> Option<Lang> {
        LANGS.iter().position(|(_, g)| *g == grammar).map(Lang)
    }

    /// The language of a file, from its extension.
    pub fn from_path(path: &Path) -> Option<Lang> {
        let grammar = SupportLang::from_path(path)?;
        Lang::from_grammar(grammar)
    }

    /// Wrappers `(before, after)` that turn a snippet which is not a whole program into one,
    /// tried in order after the bare snippet. The snippet's own node is then selected out of
    /// the wrapper (ast-grep's contextual patterns).
    pub fn contexts(self) -> &'static [(&'static str, &'static str)] {
        use SupportLang as S;
        match self.grammar() {
            S::Dart => &[
                ("void __ag_ctx() { ", " }"),
                ("void __ag_ctx() { ", "; }"),
                ("var __ag_ctx = ", ";"),
                ("class __AgCtx { ", " }"),
            ],
            S::Java => &[
                ("class __AgCtx { void __ag_ctx() { ", " } }"),
                ("class __AgCtx { void __ag_ctx() { ", "; } }"),
                ("class __AgCtx { ", " }"),
                ("class __AgCtx { Object __ag_ctx = ", "; }"),
            ],
            S::CSharp => &[
                ("class __AgCtx { void __ag_ctx() { ", " } }"),
                ("class __AgCtx { void __ag_ctx() { ", "; } }"),
                ("class __AgCtx { ", " }"),
            ],
            S::Kotlin => &[("fun __ag_ctx() { ", " }"), ("class __AgCtx { ", " }")],
            S::Swift => &[("func __ag_ctx() { ", " }"), ("class __AgCtx { ", " }")],
            S::Go => &[
                ("func __ag_ctx() { ", " }"),
                ("var __ag_ctx = ", ""),
                ("type __AgCtx struct { ", " }"),
            ],
            S::C | S::Cpp => &[
                ("void __ag_ctx() { ", " }"),
                ("void __ag_ctx() { ", "; }"),
                ("struct __AgCtx { ", " };"),
            ],
            S::Rust => &[
                ("fn __ag_ctx() { ", " }"),
                ("fn __ag_ctx() { ", "; }"),
                ("impl __AgCtx { ", " }"),
                ("struct __AgCtx { ", " }"),
            ],
            S::JavaScript | S::TypeScript | S::Tsx => &[
                ("function __ag_ctx() { ", " }"),
                ("class __AgCtx { ", " }"),
                ("({ ", " })"),
            ],
            S::Php => &[
                ("function __ag_ctx() { ", " }"),
                ("function __ag_ctx() { ", "; }"),
                ("class __AgCtx { ", " }"),
            ],
            S::Python => &[("def __ag_ctx():\n    ", ""), ("class __AgCtx:\n    ", "")],
            S::Css => &[("__ag_ctx { ", " }"), ("__ag_ctx { ", "; }")],
            S::Ruby => &[("def __ag_ctx\n", "\nend")],
            S::Lua => &[("function __ag_ctx()\n", "\nend")],
            _ => &[],
        }
    }
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// A clear message for an unknown id, naming the valid ones.
pub fn unknown_language_message(given: &str) -> String {
    format!(
        "unknown language `{given}`; use one of: {}",
        Lang::ids().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_aliases_and_extensions() {
        assert_eq!(Lang::from_id("dart").map(Lang::id), Some("dart"));
        assert_eq!(Lang::from_id("PY").map(Lang::id), Some("python"));
        assert_eq!(Lang::from_id("rs").map(Lang::id), Some("rust"));
        assert_eq!(Lang::from_id("ts").map(Lang::id), Some("typescript"));
        // Compiled out: never reachable.
        assert_eq!(Lang::from_id("haskell"), None);
        assert_eq!(Lang::from_path(Path::new("a/b.hs")), None);
        assert_eq!(Lang::from_id("cobol"), None);
        assert_eq!(
            Lang::from_path(Path::new("lib/main.dart")).map(Lang::id),
            Some("dart")
        );
        assert_eq!(
            Lang::from_path(Path::new("x.tsx")).map(Lang::id),
            Some("tsx")
        );
        assert!(unknown_language_message("cobol").contains("dart, go"));
        assert_eq!(Lang::all().count(), 21);
        for l in Lang::all() {
            assert_eq!(Lang::from_id(l.id()), Some(l));
        }
    }
}
