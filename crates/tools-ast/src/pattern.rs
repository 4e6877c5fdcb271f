//! Compiling a pattern written the way code is written.
//!
//! A bare snippet is tried first, exactly as ast-grep compiles it. When it does not parse
//! cleanly (in Dart a bare statement or expression is not a program), the snippet is put into
//! the language's wrappers ([`Lang::contexts`]) and the snippet's own node is selected out of
//! the first wrapper that parses. When nothing parses, the error shows where the bare snippet
//! failed — a pattern that silently matches nothing is the worst answer.
//!
//! The compiled pattern also carries the literal tokens every match must contain, for the
//! byte-level prefilter that skips files before parsing them.

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{AstGrep, Language, Node, Pattern};
use ast_grep_language::SupportLang;
use tools_core::ToolError;

use crate::lang::Lang;

/// A parsed tree of one language.
pub type Tree = AstGrep<StrDoc<SupportLang>>;
type SgNode<'r> = Node<'r, StrDoc<SupportLang>>;

/// A pattern ready to match, with what it binds and the literals a match must contain.
#[derive(Clone)]
pub struct CompiledPattern {
    /// The language.
    pub lang: Lang,
    /// The ast-grep pattern.
    pub pattern: Pattern,
    /// Names bound by `$NAME`, in pattern order, without duplicates.
    pub singles: Vec<String>,
    /// Names bound by `$$$NAME`, in pattern order, without duplicates.
    pub multis: Vec<String>,
    /// Texts that every match contains verbatim (named leaf tokens that are not
    /// metavariables), longest first.
    pub literals: Vec<Vec<u8>>,
    /// The wrapper the snippet was selected from, `None` for a bare snippet.
    pub context: Option<String>,
    /// The selected node includes a `;` the wrapper added (a Dart call is only a node as a
    /// whole statement); a rewrite keeps the statement's `;`.
    pub added_semicolon: bool,
}

impl std::fmt::Debug for CompiledPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledPattern")
            .field("lang", &self.lang)
            .field("singles", &self.singles)
            .field("multis", &self.multis)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl CompiledPattern {
    /// Whether `name` is bound by the pattern (single or multi).
    pub fn binds(&self, name: &str) -> bool {
        self.singles.iter().any(|n| n == name) || self.multis.iter().any(|n| n == name)
    }

    /// Whether `text` contains every literal (the prefilter: a `false` means no match).
    pub fn may_match(&self, text: &[u8]) -> bool {
        self.missing_literal(text).is_none()
    }

    /// A literal `text` does not contain, if any (then the pattern cannot match it).
    pub fn missing_literal(&self, text: &[u8]) -> Option<&[u8]> {
        self.literals
            .iter()
            .find(|lit| memchr::memmem::find(text, lit).is_none())
            .map(Vec::as_slice)
    }
}

/// Compiles `source` for `lang`.
pub fn compile(source: &str, lang: Lang) -> Result<CompiledPattern, ToolError> {
    let snippet = source.trim();
    if snippet.is_empty() {
        return Err(ToolError::invalid("pattern", "the pattern is empty"));
    }
    let grammar = lang.grammar();
    let processed = if grammar == SupportLang::Json {
        quote_json_metavars(snippet)
    } else {
        grammar.pre_process_pattern(snippet).into_owned()
    };

    // 1. The bare snippet, compiled exactly as ast-grep compiles it.
    let bare = Tree::try_new(&processed, grammar).map_err(|e| {
        ToolError::internal(format!("the {lang} parser failed on the pattern: {e}"))
    })?;
    let bare_problem = first_problem(bare.root(), false);
    if bare_problem.is_none() {
        match Pattern::try_new(&processed, grammar) {
            Ok(p) => return finish(p, lang, None),
            Err(e) => {
                // Several top-level nodes (or a lone `$$$X`) are not fixed by a wrapper either.
                return Err(ToolError::invalid(
                    "pattern",
                    format!(
                        "{e} A pattern must be one node: one expression, statement or declaration."
                    ),
                ));
            }
        }
    }

    // 2. Wrappers: first a clean parse (no error, nothing missing), then one with only
    //    missing tokens (e.g. the `;` left off an unbraced Dart `if` body).
    for allow_missing in [false, true] {
        if allow_missing && first_problem(bare.root(), true).is_none() {
            // The bare snippet only lacks a token: accept it as ast-grep would.
            if let Ok(p) = Pattern::try_new(&processed, grammar) {
                return finish(p, lang, None);
            }
        }
        for (before, after) in lang.contexts() {
            let text = format!("{before}{processed}{after}");
            let Ok(tree) = Tree::try_new(&text, grammar) else {
                continue;
            };
            if first_problem(tree.root(), allow_missing).is_some() {
                continue;
            }
            let start = before.len();
            let end = start + processed.len();
            if let Some((node, semi)) = select(tree.root(), start, end, &text) {
                let pattern = Pattern::from(node);
                let mut p = finish(pattern, lang, Some(format!("{before}…{after}")))?;
                p.added_semicolon = semi;
                return Ok(p);
            }
        }
    }

    let (line, col, what) = bare_problem
        .map(|(offset, what)| {
            let (l, c) = line_col(&processed, offset);
            (l, c, what)
        })
        .unwrap_or((1, 1, "a syntax error"));
    let line_text = processed.lines().nth(line - 1).unwrap_or("");
    let shown_line: String = snippet
        .lines()
        .nth(line - 1)
        .unwrap_or(line_text)
        .to_string();
    let caret = format!("{}^", " ".repeat(col.saturating_sub(1)));
    let tried = lang.contexts().len();
    Err(ToolError::invalid(
        "pattern",
        format!(
            "the pattern does not parse as {lang} code: {what} at pattern line {line}, column {col}\n  {shown_line}\n  {caret}\n\
             It was also tried inside {tried} wrapper(s) (function body, class body, initializer) and parses in none. \
             Write the pattern as {lang} code with `$NAME` / `$$$NAME` where code varies."
        ),
    ))
}

fn finish(
    mut pattern: Pattern,
    lang: Lang,
    context: Option<String>,
) -> Result<CompiledPattern, ToolError> {
    if lang.grammar() == SupportLang::Json {
        pattern.node = unquote_json_metavars(pattern.node);
    }
    let mut singles = Vec::new();
    let mut multis = Vec::new();
    let mut literals: Vec<Vec<u8>> = Vec::new();
    collect(&pattern.node, &mut singles, &mut multis, &mut literals);
    literals.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    literals.dedup();
    Ok(CompiledPattern {
        lang,
        pattern,
        singles,
        multis,
        literals,
        context,
        added_semicolon: false,
    })
}

fn collect(
    node: &PatternNode,
    singles: &mut Vec<String>,
    multis: &mut Vec<String>,
    literals: &mut Vec<Vec<u8>>,
) {
    match node {
        PatternNode::MetaVar { meta_var } => match meta_var {
            MetaVariable::Capture(name, _) => {
                if !singles.contains(name) {
                    singles.push(name.clone());
                }
            }
            MetaVariable::MultiCapture(name) => {
                if !multis.contains(name) {
                    multis.push(name.clone());
                }
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
        },
        // Only named leaves: ast-grep compares their text exactly, while unnamed tokens are
        // compared by kind and may be skipped (after an ellipsis), so they are no safe filter.
        PatternNode::Terminal { text, is_named, .. } => {
            let t = text.trim();
            if *is_named && !t.is_empty() {
                literals.push(t.as_bytes().to_vec());
            }
        }
        PatternNode::Internal { children, .. } => {
            for c in children {
                collect(c, singles, multis, literals);
            }
        }
    }
}

/// Marks a metavariable that was quoted to make it a JSON value.
const JSON_METAVAR_MARK: char = '\u{E000}';

/// JSON has no identifiers, so `$X` is no value there: outside strings, each metavariable
/// becomes a marked string (`"\u{E000}$X"`), turned back into a metavariable after parsing.
fn quote_json_metavars(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 8);
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if c == '"' {
            in_string = true;
            out.push(c);
            i += 1;
            continue;
        }
        if c == '$' {
            let mut j = i;
            while j < chars.len() && j - i < 3 && chars[j] == '$' {
                j += 1;
            }
            let name_start = j;
            while j < chars.len()
                && (chars[j].is_ascii_uppercase() || chars[j].is_ascii_digit() || chars[j] == '_')
            {
                j += 1;
            }
            let named = j > name_start
                && (chars[name_start].is_ascii_uppercase() || chars[name_start] == '_');
            if named || j - i == 3 {
                out.push('"');
                out.push(JSON_METAVAR_MARK);
                out.extend(&chars[i..j]);
                out.push('"');
                i = j;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn unquote_json_metavars(node: PatternNode) -> PatternNode {
    match node {
        PatternNode::Internal { kind_id, children } => {
            let marked = children.iter().find_map(|c| match c {
                PatternNode::Terminal { text, .. } => text.strip_prefix(JSON_METAVAR_MARK),
                _ => None,
            });
            if let Some(var) = marked.and_then(metavar_of) {
                return PatternNode::MetaVar { meta_var: var };
            }
            PatternNode::Internal {
                kind_id,
                children: children.into_iter().map(unquote_json_metavars).collect(),
            }
        }
        other => other,
    }
}

/// `$NAME`, `$$$NAME`, `$_`, `$$$` as ast-grep reads them.
fn metavar_of(text: &str) -> Option<MetaVariable> {
    if text == "$$$" {
        return Some(MetaVariable::Multiple);
    }
    if let Some(name) = text.strip_prefix("$$$") {
        return Some(if name.starts_with('_') {
            MetaVariable::Multiple
        } else {
            MetaVariable::MultiCapture(name.to_string())
        });
    }
    let name = text.strip_prefix('$')?;
    let name = name.strip_prefix('$').unwrap_or(name);
    if name.is_empty() {
        return None;
    }
    Some(if name.starts_with('_') {
        MetaVariable::Dropped(true)
    } else {
        MetaVariable::Capture(name.to_string(), true)
    })
}

/// The first ERROR node (or MISSING one, unless allowed) as `(byte offset, description)`.
fn first_problem(root: SgNode<'_>, allow_missing: bool) -> Option<(usize, &'static str)> {
    for n in root.dfs() {
        if n.is_error() {
            return Some((n.range().start, "a syntax error"));
        }
        if n.is_missing() && !allow_missing {
            return Some((n.range().start, "a missing token"));
        }
    }
    None
}

/// The outermost node spanning exactly `start..end` (or that plus a `;` the wrapper added),
/// narrowed the way ast-grep narrows a single-node pattern.
fn select<'r>(
    root: SgNode<'r>,
    start: usize,
    end: usize,
    text: &str,
) -> Option<(SgNode<'r>, bool)> {
    let with_semi = (text.as_bytes().get(end) == Some(&b';')).then_some(end + 1);
    let exact = root
        .dfs()
        .find(|n| n.range().start == start && n.range().end == end);
    let found = exact.map(|n| (n, false)).or_else(|| {
        root.dfs()
            .find(|n| n.range().start == start && Some(n.range().end) == with_semi)
            .map(|n| (n, true))
    });
    let (mut node, semi) = found?;
    loop {
        let children: Vec<_> = node.children().collect();
        let single = match children.len() {
            1 => true,
            2 => children[1].is_missing() || children[1].kind().is_empty(),
            _ => false,
        };
        if !single {
            break;
        }
        node = children[0].clone();
    }
    Some((node, semi))
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(id: &str) -> Lang {
        Lang::from_id(id).unwrap()
    }

    #[test]
    fn bare_patterns_and_literals() {
        let p = compile("$X.dispose()", lang("python")).unwrap();
        assert!(p.context.is_none());
        assert_eq!(p.singles, vec!["X"]);
        assert_eq!(p.literals, vec![b"dispose".to_vec()]);
        let p = compile("if $X is None: $$$B", lang("python")).unwrap();
        assert_eq!(p.multis, vec!["B"]);
        assert!(p.may_match(b"if a is None: pass"));
        assert!(!p.may_match(b"if a is not Nothing: pass"));
        let p = compile("foo($_, $_X, $$$)", lang("javascript")).unwrap();
        assert!(p.singles.is_empty() && p.multis.is_empty());
    }

    #[test]
    fn dart_needs_a_context() {
        let p = compile("$X.dispose()", lang("dart")).unwrap();
        assert!(p.context.is_some(), "{p:?}");
        let p = compile("if ($X != null) { $X.dispose(); }", lang("dart")).unwrap();
        assert!(p.context.is_some());
        assert_eq!(p.singles, vec!["X"]);
    }

    #[test]
    fn unparsable_pattern_says_where() {
        let err = compile("foo(", lang("python")).unwrap_err().to_string();
        assert!(err.contains("does not parse as python"), "{err}");
        assert!(err.contains("line 1, column"), "{err}");
        let err = compile("let x = ;;; )(", lang("rust"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not parse"), "{err}");
        assert!(compile("   ", lang("rust")).is_err());
    }

    #[test]
    fn positions_are_one_based_chars() {
        assert_eq!(line_col("ab\ncµd", 5), (2, 3));
        assert_eq!(line_col("x", 0), (1, 1));
    }
}
