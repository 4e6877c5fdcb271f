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
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc};
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
    /// Kinds of the tokens the parser filled in because the pattern left them out (a
    /// bodiless `impl … for $T` gets a `declaration_list`); ast-grep drops them from the
    /// pattern, so the pattern matches any node that starts the same way.
    pub filled_in: Vec<String>,
    /// Where the pattern stops being code of its language (`(line, column)`), when it is
    /// matched all the same because no wrapper reads it and its root is a real node (as the
    /// ast-grep CLI does); the part there is matched as the parser recovered it.
    pub unparsed_at: Option<(usize, usize)>,
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

    /// The node kind id of the pattern's root; `None` when the root is a metavariable.
    pub fn root_kind(&self) -> Option<u16> {
        match &self.pattern.node {
            PatternNode::Internal { kind_id, .. } | PatternNode::Terminal { kind_id, .. } => {
                Some(*kind_id)
            }
            PatternNode::MetaVar { .. } => None,
        }
    }

    /// The grammar's name for the root's kind (`impl_item`, `call`), for hints.
    pub fn root_kind_name(&self) -> Option<String> {
        let kind = self.root_kind()?;
        let ts = self.lang.grammar().get_ts_language();
        ts.node_kind_for_id(kind).map(str::to_string)
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

/// Deepest bracket nesting (`(`, `[`, `{`) accepted in a pattern, checked on the text before
/// any parser sees it. Real patterns nest a handful of levels; the matcher and the pattern
/// conversion recurse once per level, so an unbounded depth could exhaust the stack.
pub const MAX_PATTERN_NESTING: usize = 128;
/// Deepest syntax tree accepted for a pattern (nesting without brackets, such as
/// `a + a + a …`, deepens the tree too). Checked on the parsed tree with an iterative walk.
pub const MAX_PATTERN_TREE_DEPTH: usize = 256;

/// Compiles `source` for `lang`.
///
/// The bare snippet is read exactly as the ast-grep CLI reads it: when it parses on its own
/// (an error node that is only a metavariable in a spot the grammar wants something else, as
/// `$$$B` in an `impl` body, counts as parsed: ast-grep turns it into the metavariable), it
/// is the pattern, tokens the parser filled in included. Only a snippet that does not parse
/// on its own is tried inside the language's wrappers.
pub fn compile(source: &str, lang: Lang) -> Result<CompiledPattern, ToolError> {
    let snippet = source.trim();
    if snippet.is_empty() {
        return Err(ToolError::invalid("pattern", "the pattern is empty"));
    }
    check_nesting(snippet)?;
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
    let bare_shape = shape_of(bare.root(), grammar);
    if bare_shape.depth > MAX_PATTERN_TREE_DEPTH {
        return Err(too_deep(format!(
            "its syntax tree is {} levels deep",
            bare_shape.depth
        )));
    }
    if bare_shape.error.is_none() && bare_shape.missing.is_empty() {
        return match Pattern::try_new(&processed, grammar) {
            Ok(p) => finish(p, lang, None),
            // Several top-level nodes (or a lone `$$$X`) are not fixed by a wrapper either.
            Err(e) => Err(ToolError::invalid(
                "pattern",
                format!(
                    "{e} A pattern must be one node: one expression, statement or declaration."
                ),
            )),
        };
    }
    // The bare snippet with tokens the parser filled in (dropped from the pattern, as the
    // CLI drops them): `impl Sink for $T` is an `impl_item` lacking its body.
    // Or, past the wrappers, the bare snippet with an error inside, as the CLI reads it —
    // only when it holds a `$$$` sequence, the usual cause (`class $C $$$B end` in Ruby is
    // not Ruby on one line, and matches all the same); `foo(` stays an error that says where.
    let bare_filled = Pattern::try_new(&processed, grammar).ok().filter(|p| {
        bare_shape.error.is_none() || {
            let mut multis = Vec::new();
            collect(&p.node, &mut Vec::new(), &mut multis, &mut Vec::new());
            !multis.is_empty() || has_anonymous_multi(&p.node)
        }
    });
    let bare_kind = bare_filled.as_ref().and_then(|p| match &p.node {
        PatternNode::Internal { kind_id, .. } | PatternNode::Terminal { kind_id, .. } => {
            Some(*kind_id)
        }
        PatternNode::MetaVar { .. } => None,
    });

    // 2. Wrappers: first a clean parse (no error, nothing missing), then one with only
    //    missing tokens (e.g. the `;` left off an unbraced Dart `if` body).
    'wrappers: for allow_missing in [false, true] {
        for (before, after) in lang.contexts() {
            let text = format!("{before}{processed}{after}");
            let Ok(tree) = Tree::try_new(&text, grammar) else {
                continue;
            };
            let shape = shape_of(tree.root(), grammar);
            if shape.error.is_some() || (!allow_missing && !shape.missing.is_empty()) {
                continue;
            }
            let start = before.len();
            let end = start + processed.len();
            let Some((node, semi)) = select(tree.root(), start, end, &text) else {
                continue;
            };
            if semi && bare_kind.is_some() && bare_kind == Some(node.kind_id()) {
                // The wrapper only ended the construct the bare snippet already is with a
                // `;` (`impl Sink for $T;`): a pattern demanding that `;` matches no real
                // code, while the bare reading matches every such node that starts this way.
                break 'wrappers;
            }
            let pattern = Pattern::from(node);
            let mut p = finish(pattern, lang, Some(format!("{before}…{after}")))?;
            p.added_semicolon = semi;
            p.filled_in = shape.missing;
            return Ok(p);
        }
    }
    if let Some(p) = bare_filled {
        let mut p = finish(p, lang, None)?;
        p.filled_in = bare_shape.missing;
        p.unparsed_at = bare_shape.error.map(|offset| line_col(&processed, offset));
        return Ok(p);
    }

    let (line, col, what) = bare_shape
        .error
        .map(|offset| {
            let (l, c) = line_col(&processed, offset);
            (l, c, "a syntax error")
        })
        .unwrap_or((1, 1, "a syntax error"));
    let line_text = processed.lines().nth(line - 1).unwrap_or("");
    let shown_line: String = snippet
        .lines()
        .nth(line - 1)
        .unwrap_or(line_text)
        .to_string();
    let (shown_line, caret_at) = excerpt_at(&shown_line, col);
    let caret = format!("{}^", " ".repeat(caret_at));
    Err(ToolError::invalid(
        "pattern",
        format!(
            "the pattern does not parse as {lang} code: {what} at pattern line {line}, column {col}\n  {shown_line}\n  {caret}\n\
             It does not parse inside a function body or a type body either. \
             Write the pattern as {lang} code with `$NAME` / `$$$NAME` where code varies."
        ),
    ))
}

/// Characters of a long pattern line shown around an error.
const EXCERPT_CHARS: usize = 100;

/// The part of `line` around 1-based column `col` (all of it when short), and where the
/// caret goes under it: an error message about a long one-line pattern stays short.
fn excerpt_at(line: &str, col: usize) -> (String, usize) {
    let chars: Vec<char> = line.chars().collect();
    let at = col.saturating_sub(1).min(chars.len());
    if chars.len() <= EXCERPT_CHARS {
        return (line.to_string(), at);
    }
    let start = at.saturating_sub(EXCERPT_CHARS / 2);
    let end = (start + EXCERPT_CHARS).min(chars.len());
    let mut shown: String = chars[start..end].iter().collect();
    let mut caret = at - start;
    if start > 0 {
        shown.insert(0, '…');
        caret += 1;
    }
    if end < chars.len() {
        shown.push('…');
    }
    (shown, caret)
}

fn too_deep(why: String) -> ToolError {
    ToolError::invalid(
        "pattern",
        format!(
            "the pattern nests too deeply ({why}; at most {MAX_PATTERN_NESTING} levels of brackets \
             and {MAX_PATTERN_TREE_DEPTH} levels of syntax). Match the outer shape and capture the \
             inside with `$X` or `$$$X`."
        ),
    )
}

/// Refuses a pattern whose brackets nest deeper than [`MAX_PATTERN_NESTING`], before any
/// parser or matcher sees it. Brackets inside string literals count too: a real pattern never
/// comes near the limit either way.
fn check_nesting(snippet: &str) -> Result<(), ToolError> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for b in snippet.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if deepest > MAX_PATTERN_NESTING {
            return Err(too_deep(format!(
                "brackets nest more than {MAX_PATTERN_NESTING} levels"
            )));
        }
    }
    Ok(())
}

/// `$$$NAME` or `$$$` (after the language's pre-processing).
fn is_multi_metavar(text: &str, grammar: SupportLang) -> bool {
    matches!(
        grammar.extract_meta_var(text),
        Some(MetaVariable::MultiCapture(_) | MetaVariable::Multiple)
    )
}

/// Longer texts are never a metavariable; not looking at them keeps the walk linear.
const MAX_METAVAR_BYTES: usize = 256;

/// What a parse of a pattern (bare or wrapped) looks like to the compiler.
struct Shape {
    /// Byte offset of the first error node that is not just a metavariable.
    error: Option<usize>,
    /// Kinds of the tokens the parser filled in (MISSING nodes), in source order.
    missing: Vec<String>,
    /// Depth of the deepest node (the root is 1).
    depth: usize,
}

/// Walks the tree without recursion (its depth is the user's to choose). A node whose whole
/// text is a metavariable is not looked into: ast-grep turns it into that metavariable. An
/// error node is forgiven only when it is a `$$$` sequence: in a list the grammar wants items
/// of a kind (`impl … { $$$B }`, `match $X { $$$A }`), and ast-grep matches the sequence
/// there all the same; an error around a single `$X` means the snippet is not code of this
/// language on its own (a bare Dart expression), and a wrapper is tried.
fn shape_of(root: SgNode<'_>, grammar: SupportLang) -> Shape {
    let mut shape = Shape {
        error: None,
        missing: Vec::new(),
        depth: 0,
    };
    let mut stack = vec![(root, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        shape.depth = shape.depth.max(depth);
        if node.is_missing() {
            shape.missing.push(node.kind().to_string());
            continue;
        }
        let text = node.text();
        let is_metavar =
            text.len() <= MAX_METAVAR_BYTES && grammar.extract_meta_var(&text).is_some();
        if is_metavar && (!node.is_error() || is_multi_metavar(&text, grammar)) {
            continue;
        }
        if node.is_error() && shape.error.is_none() {
            shape.error = Some(node.range().start);
        }
        let children: Vec<_> = node.children().collect();
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    shape
}

fn finish(
    mut pattern: Pattern,
    lang: Lang,
    context: Option<String>,
) -> Result<CompiledPattern, ToolError> {
    if lang.grammar() == SupportLang::Json {
        pattern.node = unquote_json_metavars(pattern.node);
    }
    // A whole pattern that is one `$$$` stands for a sequence of nodes with no node around
    // it to hold the sequence: ast-grep's matcher cannot match it (it panics), and no real
    // code is "a sequence" on its own.
    if let PatternNode::MetaVar {
        meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_),
    } = &pattern.node
    {
        return Err(ToolError::invalid(
            "pattern",
            "the pattern is only a `$$$` sequence; a pattern must be one node: write the node that holds the sequence, e.g. `f($$$ARGS)` or `{ $$$BODY }`",
        ));
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
        filled_in: Vec::new(),
        unparsed_at: None,
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

/// Whether the pattern holds a `$$$` (or `$$$_X`) that captures nothing.
fn has_anonymous_multi(node: &PatternNode) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n {
            PatternNode::MetaVar {
                meta_var: MetaVariable::Multiple,
            } => return true,
            PatternNode::Internal { children, .. } => stack.extend(children.iter()),
            _ => {}
        }
    }
    false
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
    fn a_pattern_that_is_only_a_sequence_is_refused_in_every_language() {
        // The fuzzer's input: `$$$` compiled (through a wrapper) to a lone sequence that
        // ast-grep's matcher panics on. Every language compiles it to an error or to a
        // pattern that searches without panicking.
        let source = "a = 1\nf(a, b)\n";
        for lang in Lang::all() {
            for pattern in ["$$$", "$$$ARGS"] {
                match compile(pattern, lang) {
                    Err(e) => {
                        let text = e.to_string();
                        assert!(
                            text.starts_with("invalid arguments (`pattern`): "),
                            "{lang}: {text}"
                        );
                    }
                    Ok(p) => {
                        let tree =
                            crate::CompactTree::parse(source.to_string(), lang.grammar()).unwrap();
                        let _ = crate::find_matches(&p, &tree);
                    }
                }
            }
        }
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
    fn an_error_in_a_long_pattern_line_shows_the_part_around_it() {
        let pattern = format!("x = [{}foo(", "1, ".repeat(200));
        let err = compile(&pattern, lang("python")).unwrap_err().to_string();
        assert!(err.len() < 600, "{} chars: {err}", err.len());
        let lines: Vec<&str> = err.lines().collect();
        let caret = lines.iter().position(|l| l.trim() == "^").unwrap();
        let above: Vec<char> = lines[caret - 1].chars().collect();
        let under = lines[caret].chars().take_while(|c| *c == ' ').count();
        assert!(under < above.len(), "{err}");
        assert!(above.len() <= EXCERPT_CHARS + 4, "{err}");
        assert_eq!(excerpt_at("short", 3), ("short".to_string(), 2));
    }

    #[test]
    fn positions_are_one_based_chars() {
        assert_eq!(line_col("ab\ncµd", 5), (2, 3));
        assert_eq!(line_col("x", 0), (1, 1));
    }
}
