//! Rewrite templates: checking that every `$NAME` the template uses is bound by the pattern,
//! and substituting captures so the code keeps its meaning.
//!
//! Substitution and indentation are ast-grep's own ([`TemplateFix`]: a multi-line capture is
//! de-indented from where it was and re-indented where the template puts it, so Python stays
//! valid). On top of that, a capture that is not atomic is checked where the template places
//! it: the template is instantiated with the raw capture texts and parsed, and when no node
//! spans exactly the capture any more (`&mut b` in `$X.dispose()` would parse as
//! `&mut (b.dispose())`), the capture is put in parentheses.

use std::collections::BTreeSet;

use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::replacer::{Replacer, TemplateFix};
use ast_grep_core::{Doc, Language, NodeMatch};
use tools_core::ToolError;

use crate::compact_tree::{CompactDoc, CompactTree};
use crate::lang::Lang;
use crate::pattern::{CompiledPattern, Tree};

type SgMatch<'r> = NodeMatch<'r, CompactDoc>;

/// One metavariable occurrence in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateVar {
    /// The name, without sigils.
    pub name: String,
    /// `$$$NAME`.
    pub multi: bool,
    /// Byte range of the occurrence (sigils included) in the template.
    pub range: std::ops::Range<usize>,
}

/// Finds `$NAME`, `$$NAME` and `$$$NAME` in a template, by ast-grep's rules (a name is
/// `[A-Z_][A-Z0-9_]*`; `$5` or `$x` is plain text).
pub fn template_vars(template: &str, sigil: char) -> Vec<TemplateVar> {
    let mut out = Vec::new();
    let bytes = template;
    let mut pos = 0;
    while let Some(i) = bytes[pos..].find(sigil) {
        let start = pos + i;
        let mut skipped = 0;
        let mut count = 0;
        let multi = loop {
            count += 1;
            skipped += sigil.len_utf8();
            if count == 3 {
                break true;
            }
            if !bytes[start + skipped..].starts_with(sigil) {
                break false;
            }
        };
        let rest = &bytes[start + skipped..];
        let len = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()))
            .unwrap_or(rest.len());
        let valid_first = rest.starts_with(|c: char| c.is_ascii_uppercase() || c == '_');
        if len > 0 && valid_first {
            out.push(TemplateVar {
                name: rest[..len].to_string(),
                multi,
                range: start..start + skipped + len,
            });
            pos = start + skipped + len;
        } else {
            pos = start + sigil.len_utf8();
        }
    }
    out
}

/// Largest instantiated template (template plus captures) whose precedence is checked by
/// parsing it; larger ones are substituted as written.
const MAX_PRECEDENCE_PROBE_BYTES: usize = 16 * 1024;

/// Longest rewrite template accepted, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

/// A checked rewrite template.
pub struct Rewrite {
    template: String,
    vars: Vec<TemplateVar>,
    lang: Lang,
    /// The substitution without parentheses, built once (most matches need no parentheses).
    plain: TemplateFix,
}

/// What stops a rewrite of one file before it is done.
#[derive(Debug)]
pub enum RewriteStop {
    /// The call was cancelled.
    Cancelled,
    /// The new text would be larger than the limit (bytes).
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

impl Rewrite {
    /// Checks `template` against what `pattern` binds: a name the pattern does not bind (or
    /// binds as the other kind, `$X` versus `$$$X`) is an error, not an empty string.
    pub fn new(template: &str, pattern: &CompiledPattern) -> Result<Self, ToolError> {
        if template.len() > MAX_TEMPLATE_BYTES {
            return Err(ToolError::invalid(
                "rewrite",
                format!(
                    "the rewrite template is {} bytes; at most {MAX_TEMPLATE_BYTES} are accepted",
                    template.len()
                ),
            ));
        }
        let sigil = pattern.lang.grammar().meta_var_char();
        let vars = template_vars(template, sigil);
        let mut problems = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for v in &vars {
            let ok = if v.multi {
                pattern.multis.contains(&v.name)
            } else {
                pattern.singles.contains(&v.name)
            };
            if !ok {
                let shown = &template[v.range.clone()];
                let hint = if v.multi && pattern.singles.contains(&v.name) {
                    format!("the pattern binds it as `${}` (one node)", v.name)
                } else if !v.multi && pattern.multis.contains(&v.name) {
                    format!("the pattern binds it as `$$${}` (a sequence)", v.name)
                } else if v.name.starts_with('_') {
                    "names starting with `_` capture nothing".to_string()
                } else {
                    "the pattern does not bind it".to_string()
                };
                let p = format!("`{shown}`: {hint}");
                if seen.insert(p.clone()) {
                    problems.push(p);
                }
            }
        }
        if !problems.is_empty() {
            let bound: Vec<String> = pattern
                .singles
                .iter()
                .map(|n| format!("${n}"))
                .chain(pattern.multis.iter().map(|n| format!("$$${n}")))
                .collect();
            return Err(ToolError::invalid(
                "rewrite",
                format!(
                    "the rewrite uses metavariables the pattern does not bind: {}. The pattern binds: {}.",
                    problems.join("; "),
                    if bound.is_empty() {
                        "nothing".to_string()
                    } else {
                        bound.join(", ")
                    }
                ),
            ));
        }
        let grammar = pattern.lang.grammar();
        Ok(Rewrite {
            template: template.to_string(),
            vars,
            lang: pattern.lang,
            plain: TemplateFix::with_transform(template, &grammar, &[]),
        })
    }

    /// Rewrites every non-overlapping match in `tree` (outermost first); `Ok(None)` when
    /// nothing matched or nothing changed. Returns the new text and the number of
    /// replacements. The work per match is linear in the template and the captures;
    /// `cancelled` is polled between matches, and a new text growing past `max_bytes` stops
    /// the rewrite of this file.
    pub fn apply(
        &self,
        pattern: &CompiledPattern,
        tree: &CompactTree,
        cancelled: &dyn Fn() -> bool,
        max_bytes: usize,
    ) -> Result<Option<(String, usize)>, RewriteStop> {
        let source = tree.text();
        let mut edits: Vec<(std::ops::Range<usize>, Vec<u8>)> = Vec::new();
        let mut last_end = 0;
        let mut new_len = source.len();
        for m in tree.root().find_all(&pattern.pattern) {
            if cancelled() {
                return Err(RewriteStop::Cancelled);
            }
            let range = m.range();
            if !edits.is_empty() && range.start < last_end {
                continue;
            }
            // Refuse before building: one replacement of a template with thousands of `$X`
            // over a large capture could be gigabytes.
            let least = new_len.saturating_sub(range.len()) + self.expanded_len(&m);
            if least > max_bytes {
                return Err(RewriteStop::TooLarge { limit: max_bytes });
            }
            let ends_with_semi = source.as_bytes()[..range.end].last() == Some(&b';');
            let (replaced, mut bytes) = self.replacement(pattern, m);
            if pattern.added_semicolon && ends_with_semi && bytes.last() != Some(&b';') {
                bytes.push(b';');
            }
            last_end = replaced.end.max(range.end);
            new_len = (new_len + bytes.len()).saturating_sub(replaced.len());
            if new_len > max_bytes {
                return Err(RewriteStop::TooLarge { limit: max_bytes });
            }
            edits.push((replaced, bytes));
        }
        if edits.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(source.len());
        let mut at = 0;
        let mut count = 0;
        for (range, bytes) in &edits {
            out.extend_from_slice(&source.as_bytes()[at..range.start]);
            out.extend_from_slice(bytes);
            at = range.end;
            if source.as_bytes()[range.clone()] != bytes[..] {
                count += 1;
            }
        }
        out.extend_from_slice(&source.as_bytes()[at..]);
        let Ok(text) = String::from_utf8(out) else {
            return Ok(None);
        };
        Ok((text != source).then_some((text, count)))
    }

    /// The least size of the replacement for `m` (the template's text plus every capture it
    /// names; parentheses and re-indentation only add to it), without building it.
    fn expanded_len(&self, m: &SgMatch<'_>) -> usize {
        let env = m.get_env();
        let mut len = self.template.len();
        for v in &self.vars {
            len = len.saturating_sub(v.range.len());
            let capture = if v.multi {
                let nodes = env.get_multiple_matches(&v.name);
                match (nodes.first(), nodes.last()) {
                    (Some(a), Some(b)) => b.range().end.saturating_sub(a.range().start),
                    _ => 0,
                }
            } else {
                env.get_match(&v.name).map_or(0, |n| n.range().len())
            };
            len = len.saturating_add(capture);
        }
        len
    }

    fn replacement(
        &self,
        pattern: &CompiledPattern,
        m: SgMatch<'_>,
    ) -> (std::ops::Range<usize>, Vec<u8>) {
        let grammar = self.lang.grammar();
        let wrap = self.needs_parens(&m);
        let range = self.plain.get_replaced_range(&m, &pattern.pattern);
        if wrap.is_empty() {
            return (range, self.plain.generate_replacement(&m));
        }
        let names: Vec<String> = wrap.iter().cloned().collect();
        let fix = TemplateFix::with_transform(&self.template, &grammar, &names);
        let mut m = m;
        for name in &names {
            let Some(node) = m.get_env().get_match(name).cloned() else {
                continue;
            };
            let wrapped = format!("({})", node.text());
            m.get_env_mut().insert_transformation(
                &MetaVariable::Capture(name.clone(), false),
                name,
                wrapped.into_bytes(),
            );
        }
        (range, fix.generate_replacement(&m))
    }

    /// The single captures that change meaning where the template puts them, and that
    /// parentheses fix.
    fn needs_parens(&self, m: &SgMatch<'_>) -> BTreeSet<String> {
        let env = m.get_env();
        let out = BTreeSet::new();
        let compound = |name: &str| {
            env.get_match(name)
                .is_some_and(|n| n.is_named() && n.named_children().next().is_some())
        };
        if !self.vars.iter().any(|v| !v.multi && compound(&v.name)) {
            return out;
        }
        if self.expanded_len(m) > MAX_PRECEDENCE_PROBE_BYTES {
            // Parsing the instance is the check; on a large instance that is not code on its
            // own, the parser's error recovery costs seconds per match. Such a template is
            // substituted as written, as the ast-grep CLI substitutes every template.
            return out;
        }
        let capture_text = |v: &TemplateVar| -> String {
            if v.multi {
                let nodes = env.get_multiple_matches(&v.name);
                match (nodes.first(), nodes.last()) {
                    (Some(a), Some(b)) => {
                        let src = a.get_doc().get_source();
                        src.get(a.range().start..b.range().end)
                            .unwrap_or("")
                            .to_string()
                    }
                    _ => String::new(),
                }
            } else {
                env.get_match(&v.name)
                    .map(|n| n.text().into_owned())
                    .unwrap_or_default()
            }
        };
        // Instantiate with raw texts, remembering where each single capture lands.
        let build = |wrapped: &BTreeSet<String>| {
            let mut text = String::new();
            let mut spans = Vec::new();
            let mut at = 0;
            for v in &self.vars {
                text.push_str(&self.template[at..v.range.start]);
                let mut t = capture_text(v);
                if !v.multi && wrapped.contains(&v.name) {
                    t = format!("({t})");
                }
                let start = text.len();
                text.push_str(&t);
                if !v.multi && compound(&v.name) {
                    spans.push((v.name.clone(), start..text.len()));
                }
                at = v.range.end;
            }
            text.push_str(&self.template[at..]);
            (text, spans)
        };
        let (probe, spans) = build(&out);
        let Some(broken) = self.unspanned(&probe, &spans) else {
            return out;
        };
        if broken.is_empty() {
            return out;
        }
        let candidate: BTreeSet<String> = broken.into_iter().collect();
        let (probe2, spans2) = build(&candidate);
        match self.unspanned(&probe2, &spans2) {
            Some(still) if still.is_empty() => candidate,
            _ => out,
        }
    }

    /// Parses `text` (bare or in the language's wrappers) and names the spans that no node
    /// covers exactly; `None` when the text parses in no context (then nothing is judged).
    fn unspanned(
        &self,
        text: &str,
        spans: &[(String, std::ops::Range<usize>)],
    ) -> Option<Vec<String>> {
        let grammar = self.lang.grammar();
        let mut contexts: Vec<(&str, &str)> = vec![("", "")];
        contexts.extend(self.lang.contexts().iter().copied());
        for (before, after) in contexts {
            let full = format!("{before}{text}{after}");
            let Ok(tree) = Tree::try_new(&full, grammar) else {
                continue;
            };
            let root = tree.root();
            if root.dfs().any(|n| n.is_error()) {
                continue;
            }
            let off = before.len();
            // Every node's span, gathered once: one lookup per capture instead of a walk of
            // the whole tree per capture (a template with thousands of `$X` stays linear).
            let spanned: std::collections::HashSet<(usize, usize)> = root
                .dfs()
                .map(|n| {
                    let r = n.range();
                    (r.start, r.end)
                })
                .collect();
            let broken = spans
                .iter()
                .filter(|(_, r)| !spanned.contains(&(r.start + off, r.end + off)))
                .map(|(n, _)| n.clone())
                .collect();
            return Some(broken);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::compile;
    use ast_grep_language::SupportLang;

    fn run(lang: &str, src: &str, pat: &str, rw: &str) -> String {
        let lang = Lang::from_id(lang).unwrap();
        let p = compile(pat, lang).unwrap();
        let r = Rewrite::new(rw, &p).unwrap();
        let tree = CompactTree::parse(src.to_string(), lang.grammar()).unwrap();
        r.apply(&p, &tree, &|| false, usize::MAX)
            .unwrap()
            .map(|(t, _)| t)
            .unwrap_or_else(|| src.to_string())
    }

    #[test]
    fn a_rewrite_stops_between_matches_when_cancelled_or_too_large() {
        let lang = Lang::from_id("python").unwrap();
        let p = compile("dispose($X)", lang).unwrap();
        let r = Rewrite::new("$X.dispose()", &p).unwrap();
        let src = "dispose(a)\n".repeat(10);
        let tree = CompactTree::parse(src.clone(), lang.grammar()).unwrap();
        let polls = std::cell::Cell::new(0);
        let cancel_at_third = || {
            polls.set(polls.get() + 1);
            polls.get() >= 3
        };
        let stop = r
            .apply(&p, &tree, &cancel_at_third, usize::MAX)
            .unwrap_err();
        assert!(matches!(stop, RewriteStop::Cancelled), "{stop:?}");
        assert_eq!(polls.get(), 3, "polled once per match until cancelled");
        let stop = r.apply(&p, &tree, &|| false, src.len() + 5).unwrap_err();
        assert!(matches!(stop, RewriteStop::TooLarge { .. }), "{stop:?}");
        let (text, n) = r.apply(&p, &tree, &|| false, usize::MAX).unwrap().unwrap();
        assert_eq!(n, 10);
        assert_eq!(text, "a.dispose()\n".repeat(10));
    }

    #[test]
    fn scans_template_vars() {
        let v = template_vars("$A + $$$B - $$C $5 $x $_", '$');
        let names: Vec<_> = v.iter().map(|v| (v.name.as_str(), v.multi)).collect();
        assert_eq!(
            names,
            vec![("A", false), ("B", true), ("C", false), ("_", false)]
        );
    }

    #[test]
    fn precedence_is_kept() {
        assert_eq!(
            run(
                "rust",
                "fn f() { dispose(&mut b); }",
                "dispose($X)",
                "$X.dispose()"
            ),
            "fn f() { (&mut b).dispose(); }"
        );
        assert_eq!(
            run(
                "rust",
                "fn f() { dispose(b); }",
                "dispose($X)",
                "$X.dispose()"
            ),
            "fn f() { b.dispose(); }"
        );
        assert_eq!(
            run("python", "dispose(a + b)\n", "dispose($X)", "$X.dispose()"),
            "(a + b).dispose()\n"
        );
        assert_eq!(
            run("python", "dispose(a.b(c))\n", "dispose($X)", "$X.dispose()"),
            "a.b(c).dispose()\n"
        );
        assert_eq!(
            run("javascript", "double(a - b);", "double($X)", "$X * 2"),
            "(a - b) * 2;"
        );
        assert_eq!(
            run(
                "dart",
                "void f() { dispose(a ?? b); }",
                "dispose($X)",
                "$X.dispose()"
            ),
            "void f() { (a ?? b).dispose(); }"
        );
    }

    #[test]
    fn python_multiline_capture_keeps_indentation() {
        let src = "def f():\n    if ready:\n        a = 1\n        if b:\n            c = 2\n    return 0\n";
        let out = run(
            "python",
            src,
            "if $C:\n    $$$BODY",
            "if $C:\n    with lock:\n        $$$BODY",
        );
        assert_eq!(
            out,
            "def f():\n    if ready:\n        with lock:\n            a = 1\n            if b:\n                c = 2\n    return 0\n"
        );
        let tree = Tree::try_new(&out, SupportLang::Python).unwrap();
        assert!(!tree.root().dfs().any(|n| n.is_error()));
    }

    #[test]
    fn unbound_rewrite_variable_is_an_error() {
        let lang = Lang::from_id("python").unwrap();
        let p = compile("foo($X)", lang).unwrap();
        let e = Rewrite::new("bar($Y)", &p).err().unwrap().to_string();
        assert!(e.contains("`$Y`") && e.contains("$X"), "{e}");
        let e = Rewrite::new("bar($$$X)", &p).err().unwrap().to_string();
        assert!(e.contains("binds it as `$X`"), "{e}");
        assert!(Rewrite::new("bar($X, 'costs $5')", &p).is_ok());
    }
}
