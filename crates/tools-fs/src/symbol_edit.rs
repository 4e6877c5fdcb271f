//! `edit` by name path: replace a symbol's whole text or only its body, or insert text
//! before or after it, with the symbol named as the model knows it (`Greeter.greet`,
//! `impl Point.norm`) instead of quoted.
//!
//! The name path is resolved through the run's symbol sources (tools-core's
//! [`resolve_symbol`](tools_core::resolve_symbol)): the language server's document symbols where one
//! runs for the file, the bundled grammars where none does. An ambiguous or missing name is
//! refused with its candidates and nothing changes. The given text is re-indented to the
//! symbol's own indentation (its body's, for a body), whatever indentation it came with; the
//! write itself is `edit`'s: the same lock, safe writer, preview and file conventions. A
//! body that opens with the symbol's own declaration is taken as its whole text (see
//! [`crate::own_declaration`]), and the answer says so.

use std::ops::Range;

use serde_json::json;
use tools_core::safe_write;
use tools_core::{CallCtx, ToolError, ToolOutput};
use tools_core::{NamePath, ResolvedSymbol, resolve_symbol};
use tools_core::{SymbolSources, indent_at, line_number, line_prefix};

use crate::locked::{sha256_hex, with_path_locks, write_failed};
use crate::own_declaration;
use crate::text_style::TextStyle;

/// The largest file a symbol edit changes.
const MAX_SYMBOL_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// What a symbol edit does with its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SymbolPart {
    /// The symbol's whole text is replaced (an empty text deletes it, lines and all).
    Whole(String),
    /// Only its body: the block after its signature (inside the braces where it has them).
    Body(String),
    /// New lines directly above it (above its decorators, attributes and doc comments).
    Before(String),
    /// New lines directly below its last line.
    After(String),
}

impl SymbolPart {
    fn verb(&self) -> &'static str {
        match self {
            SymbolPart::Whole(t) if t.trim().is_empty() => "deleted",
            SymbolPart::Whole(_) => "replaced",
            SymbolPart::Body(_) => "replaced the body of",
            SymbolPart::Before(_) => "inserted before",
            SymbolPart::After(_) => "inserted after",
        }
    }
    fn name(&self) -> &'static str {
        match self {
            SymbolPart::Whole(_) => "replace",
            SymbolPart::Body(_) => "body",
            SymbolPart::Before(_) => "insert_before",
            SymbolPart::After(_) => "insert_after",
        }
    }
    fn text(&self) -> &str {
        match self {
            SymbolPart::Whole(t)
            | SymbolPart::Body(t)
            | SymbolPart::Before(t)
            | SymbolPart::After(t) => t,
        }
    }
    fn with_text(&self, t: String) -> SymbolPart {
        match self {
            SymbolPart::Whole(_) => SymbolPart::Whole(t),
            SymbolPart::Body(_) => SymbolPart::Body(t),
            SymbolPart::Before(_) => SymbolPart::Before(t),
            SymbolPart::After(_) => SymbolPart::After(t),
        }
    }
}

/// `text` with its common indentation replaced by `indent` on every non-blank line; one
/// final line break is dropped, blank lines stay (and stay empty).
pub(crate) fn reindent(text: &str, indent: &str) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let lead = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| lead(l))
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("{indent}{}", &l[common..])
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One level of indentation in `text`: a tab where its indented lines start with tabs,
/// else four spaces.
fn indent_unit(text: &str) -> &'static str {
    let tabs = text.lines().filter(|l| l.starts_with('\t')).count();
    let spaces = text.lines().filter(|l| l.starts_with(' ')).count();
    if tabs > spaces { "\t" } else { "    " }
}

/// The byte just past the line holding byte `at` (its line break included).
fn end_of_line(text: &str, at: usize) -> usize {
    text[at.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| at + i + 1)
}

/// The planned change: `text` with `range` replaced by `with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planned {
    pub range: Range<usize>,
    pub with: String,
}

impl Planned {
    fn apply(&self, text: &str) -> String {
        format!(
            "{}{}{}",
            &text[..self.range.start],
            self.with,
            &text[self.range.end..]
        )
    }
}

/// Where `part` goes in `text` for the symbol `sym`, and what it becomes there.
pub(crate) fn plan(
    text: &str,
    sym: &ResolvedSymbol,
    part: &SymbolPart,
) -> Result<Planned, ToolError> {
    let r = sym.range.clone();
    let prefix = line_prefix(text, r.start);
    let own_line = prefix.trim().is_empty();
    let indent = indent_at(text, r.start).to_string();
    let line_start = if own_line {
        r.start - prefix.len()
    } else {
        r.start
    };
    Ok(match part {
        SymbolPart::Whole(t) if t.trim().is_empty() => Planned {
            range: line_start..end_of_line(text, r.end),
            with: String::new(),
        },
        SymbolPart::Whole(t) => {
            let new = reindent(t, &indent);
            Planned {
                range: line_start..r.end,
                with: if own_line {
                    new
                } else {
                    new.trim_start().to_string()
                },
            }
        }
        SymbolPart::Before(t) => Planned {
            range: line_start..line_start,
            with: if own_line {
                format!("{}\n", reindent(t, &indent))
            } else {
                format!("{}\n{indent}", reindent(t, "").trim_end())
            },
        },
        SymbolPart::After(t) => {
            let at = end_of_line(text, r.end);
            let newline = if text[..at].ends_with('\n') { "" } else { "\n" };
            Planned {
                range: at..at,
                with: format!("{newline}{}\n", reindent(t, &indent)),
            }
        }
        SymbolPart::Body(t) => {
            let Some(b) = sym.body.clone() else {
                return Err(ToolError::invalid(
                    "body",
                    format!(
                        "where the body of `{}` ({}) starts and ends is unknown ({} does not say, and no bundled grammar \
                         reads this file); nothing was changed — replace the whole symbol with `replace` instead",
                        sym.name, sym.kind, sym.source
                    ),
                ));
            };
            body_plan(text, b, &indent, t, sym)?
        }
    })
}

fn body_plan(
    text: &str,
    b: Range<usize>,
    indent: &str,
    t: &str,
    sym: &ResolvedSymbol,
) -> Result<Planned, ToolError> {
    let body = &text[b.clone()];
    let unit = indent_unit(text);
    if body.starts_with('{') && body.ends_with('}') && body.len() >= 2 {
        if t.trim().is_empty() {
            return Ok(Planned {
                range: b,
                with: "{}".into(),
            });
        }
        // The body's own indentation: its first line that starts a line of its own.
        let inner_text = &body[1..body.len() - 1];
        let inner = inner_text
            .split('\n')
            .skip(1)
            .find(|l| !l.trim().is_empty() && l.trim() != "}")
            .map(|l| l[..l.len() - l.trim_start_matches([' ', '\t']).len()].to_string())
            .unwrap_or_else(|| format!("{indent}{unit}"));
        let close_at = b.end - 1;
        let closing = if line_prefix(text, close_at).trim().is_empty() {
            indent_at(text, close_at).to_string()
        } else {
            indent.to_string()
        };
        return Ok(Planned {
            range: b,
            with: format!("{{\n{}\n{closing}}}", reindent(t, &inner)),
        });
    }
    if t.trim().is_empty() {
        return Err(ToolError::invalid(
            "body",
            format!(
                "the body of `{}` cannot be empty in this language; nothing was changed — write `pass` (or the \
                 language's empty statement), or delete the symbol with `replace: \"\"`",
                sym.name
            ),
        ));
    }
    let prefix = line_prefix(text, b.start);
    Ok(if prefix.trim().is_empty() {
        // A docstring stays unless the new body brings its own: "the body" is the code.
        let kept = match docstring_end(&text[b.clone()]) {
            Some(end) if !starts_with_string(t.trim_start()) => {
                let at = end_of_line(text, b.start + end);
                (at < b.end).then_some(at)
            }
            _ => None,
        };
        match kept {
            Some(at) => Planned {
                range: at..b.end,
                with: reindent(t, indent_at(text, b.start)),
            },
            None => Planned {
                range: b.start - prefix.len()..b.end,
                with: reindent(t, indent_at(text, b.start)),
            },
        }
    } else {
        // A one-line body (`def f(): return 1`) goes onto lines of its own.
        let gap = prefix.len() - prefix.trim_end().len();
        Planned {
            range: b.start - gap..b.end,
            with: format!("\n{}", reindent(t, &format!("{indent}{unit}"))),
        }
    })
}

/// Whether `text` opens with a string literal (a docstring), prefixes such as `r` included.
fn starts_with_string(text: &str) -> bool {
    let rest = text.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B', 'f', 'F']);
    text.len() - rest.len() <= 2 && (rest.starts_with('"') || rest.starts_with('\''))
}

/// Where a leading docstring of `body` ends (the byte just past its closing quotes), when
/// the body opens with one.
fn docstring_end(body: &str) -> Option<usize> {
    if !starts_with_string(body) {
        return None;
    }
    let open_at = body.find(['"', '\''])?;
    let rest = &body[open_at..];
    let quote = ["\"\"\"", "\'\'\'", "\"", "\'"]
        .into_iter()
        .find(|q| rest.starts_with(q))?;
    let close = rest[quote.len()..].find(quote)?;
    Some(open_at + quote.len() + close + quote.len())
}

/// `part` as it is to be written for `sym` in `text`, and whether a body was taken as the
/// whole definition: a body that opens with `sym`'s own declaration replaces the whole
/// symbol from its declaration line on (what stands above that line — decorators,
/// attributes, doc comments — stays, unless the text brings its own).
fn as_written(
    part: SymbolPart,
    sym: ResolvedSymbol,
    text: &str,
) -> (SymbolPart, ResolvedSymbol, bool) {
    let SymbolPart::Body(t) = part else {
        return (part, sym, false);
    };
    let Some(preamble) = own_declaration::opens_with_declaration(&t, &sym.name) else {
        return (SymbolPart::Body(t), sym, false);
    };
    let mut sym = sym;
    if !preamble {
        let mut at = sym.range.start;
        for line in text[sym.range.clone()].split_inclusive('\n') {
            if !own_declaration::is_preamble(line) {
                sym.range.start = at + (line.len() - line.trim_start().len());
                break;
            }
            at += line.len();
        }
    }
    (SymbolPart::Whole(t), sym, true)
}

/// Runs a symbol edit of `file`: resolves `symbol`, plans `part`, and writes it (or stages
/// it with `preview`).
pub(crate) async fn call(
    ctx: &CallCtx,
    file: &str,
    symbol: &str,
    part: SymbolPart,
    preview: bool,
) -> Result<ToolOutput, ToolError> {
    let query = NamePath::parse(symbol, "symbol")?;
    let path = ctx.run.workspace().resolve(file)?;
    let shown = ctx.run.workspace().display(&path);
    let read = safe_write::read_file(ctx.run.workspace(), &path, MAX_SYMBOL_EDIT_BYTES)
        .map_err(|e| e.for_file(&shown))?;
    let planned_from = sha256_hex(&read.bytes);
    let text = String::from_utf8(read.bytes)
        .map_err(|_| ToolError::invalid("path", format!("`{shown}` is not UTF-8 text")))?;
    let (style, body) = TextStyle::detect(&text);
    let part = part.with_text(style.model_text(part.text()));
    let sources = SymbolSources::for_run(&ctx.run);
    let sym = resolve_symbol(&sources, &path, &shown, &body, &query, "symbol").await?;
    let (part, sym, taken_whole) = as_written(part, sym, &body);
    let planned = plan(&body, &sym, &part)?;
    let updated_body = planned.apply(&body);
    if updated_body == body {
        return Err(ToolError::invalid(
            part.name(),
            format!(
                "the new text is what `{}` already has; nothing to change",
                sym.name
            ),
        ));
    }
    let first_line = line_number(&updated_body, planned.range.start);
    let last_line = line_number(
        &updated_body,
        (planned.range.start + planned.with.len())
            .saturating_sub(1)
            .max(planned.range.start),
    );
    let updated = style.render(&updated_body);
    let staged = {
        let (path, shown) = (path.clone(), shown.clone());
        with_path_locks(ctx, vec![path.clone()], move |ws, _guard| {
            // The symbol was found in the text read above; a change since then (another
            // call, the user's editor) would put the new text in the wrong place.
            let now = safe_write::read_file(ws, &path, MAX_SYMBOL_EDIT_BYTES)
                .map_err(|e| e.for_file(&shown))?;
            if sha256_hex(&now.bytes) != planned_from {
                return Err(ToolError::rejected(format!(
                    "`{shown}` changed while its symbols were being read; nothing was changed — call again"
                )));
            }
            if preview {
                return Ok(Some(tools_core::StagedFile {
                    path: path.clone(),
                    hash: Some(planned_from.clone()),
                    new_text: Some(
                        String::from_utf8(updated)
                            .map_err(|_| ToolError::internal("the edited text is not UTF-8"))?,
                    ),
                    replacements: 1,
                    mode: None,
                }));
            }
            safe_write::write_file(ws, &path, &updated).map_err(|e| write_failed(e, &shown))?;
            Ok(None)
        })
        .await?
    };
    let lines = if planned.with.is_empty() || first_line == last_line {
        format!("{shown}:{first_line}")
    } else {
        format!("{shown}:{first_line}-{last_line}")
    };
    let mut what = format!(
        "{} `{}` ({}, found by {})",
        part.verb(),
        sym.name,
        sym.kind,
        sym.source
    );
    if taken_whole {
        what.push_str(
            " — the `body` given opens with its own declaration, so it was taken as the whole definition \
             (as `replace` takes it), not written inside the old one",
        );
    }
    let structured = json!({
        "path": shown, "symbol": sym.name, "kind": sym.kind, "part": part.name(),
        "source": sym.source, "first_line": first_line, "last_line": last_line,
        "replacements": 1,
    });
    if let Some(staged) = staged {
        return crate::preview::stage_and_predict(
            ctx,
            "edit",
            vec![staged],
            format!("would edit {lines}: {what}."),
            structured,
        )
        .await;
    }
    Ok(ToolOutput::text(format!("Edited {lines}: {what}."))
        .with_structured(structured)
        .with_touched([path]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(text: &str, whole: &str, body: Option<&str>) -> ResolvedSymbol {
        let start = text.find(whole).unwrap();
        let body = body.map(|b| {
            let s = text[start..].find(b).unwrap() + start;
            s..s + b.len()
        });
        ResolvedSymbol {
            name: "S".into(),
            kind: "method".into(),
            range: start..start + whole.len(),
            body,
            source: "test".into(),
        }
    }

    fn edited(text: &str, s: &ResolvedSymbol, part: SymbolPart) -> String {
        plan(text, s, &part).unwrap().apply(text)
    }

    const PY: &str =
        "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n";

    #[test]
    fn a_python_body_takes_the_body_indentation_whatever_it_came_with() {
        let s = sym(PY, "def f(self):\n        return 1", Some("return 1"));
        assert_eq!(
            edited(
                PY,
                &s,
                SymbolPart::Body("x = 2\nif x:\n    return x\n".into())
            ),
            "class A:\n    def f(self):\n        x = 2\n        if x:\n            return x\n\n    def g(self):\n        pass\n"
        );
        assert_eq!(
            edited(
                PY,
                &s,
                SymbolPart::Whole("      def f(self, y):\n          return y".into())
            ),
            "class A:\n    def f(self, y):\n        return y\n\n    def g(self):\n        pass\n"
        );
        assert_eq!(
            edited(PY, &s, SymbolPart::Before("@property\n".into())),
            "class A:\n    @property\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n"
        );
        assert_eq!(
            edited(
                PY,
                &s,
                SymbolPart::After("\ndef h(self):\n    return 3\n".into())
            ),
            "class A:\n    def f(self):\n        return 1\n\n    def h(self):\n        return 3\n\n    def g(self):\n        pass\n"
        );
        assert_eq!(
            edited(PY, &s, SymbolPart::Whole(String::new())),
            "class A:\n\n    def g(self):\n        pass\n"
        );
        // A docstring is kept unless the new body brings one.
        let doc = "def f():\n    \"\"\"Doc.\n    More.\"\"\"\n    return 1\n";
        let s = sym(
            doc,
            "def f():\n    \"\"\"Doc.\n    More.\"\"\"\n    return 1",
            Some("\"\"\"Doc.\n    More.\"\"\"\n    return 1"),
        );
        assert_eq!(
            edited(doc, &s, SymbolPart::Body("return 2".into())),
            "def f():\n    \"\"\"Doc.\n    More.\"\"\"\n    return 2\n"
        );
        assert_eq!(
            edited(
                doc,
                &s,
                SymbolPart::Body("\"\"\"New.\"\"\"\nreturn 2".into())
            ),
            "def f():\n    \"\"\"New.\"\"\"\n    return 2\n"
        );
        let one = "def f(): return 1\n";
        let s = sym(one, "def f(): return 1", Some("return 1"));
        assert_eq!(
            edited(one, &s, SymbolPart::Body("return 2".into())),
            "def f():\n    return 2\n"
        );
        assert!(
            plan(
                PY,
                &sym(PY, "def f(self):\n        return 1", Some("return 1")),
                &SymbolPart::Body(" \n".into())
            )
            .is_err()
        );
    }

    #[test]
    fn a_brace_body_keeps_its_braces_and_the_file_indentation() {
        let rs = "impl P {\n    fn norm(&self) -> i32 {\n        self.x\n    }\n}\n";
        let s = sym(
            rs,
            "fn norm(&self) -> i32 {\n        self.x\n    }",
            Some("{\n        self.x\n    }"),
        );
        assert_eq!(
            edited(rs, &s, SymbolPart::Body("let y = 1;\nself.x + y".into())),
            "impl P {\n    fn norm(&self) -> i32 {\n        let y = 1;\n        self.x + y\n    }\n}\n"
        );
        let go = "package m\n\nfunc (s *S) Run() int { return 1 }\n";
        let s = sym(
            go,
            "func (s *S) Run() int { return 1 }",
            Some("{ return 1 }"),
        );
        assert_eq!(
            edited(go, &s, SymbolPart::Body("x := 2\nreturn x".into())),
            "package m\n\nfunc (s *S) Run() int {\n    x := 2\n    return x\n}\n"
        );
        let tabs = "package m\n\nfunc A() {\n\treturn\n}\n\nfunc B() {}\n";
        let s = sym(tabs, "func B() {}", Some("{}"));
        assert_eq!(
            edited(tabs, &s, SymbolPart::Body("A()".into())),
            "package m\n\nfunc A() {\n\treturn\n}\n\nfunc B() {\n\tA()\n}\n"
        );
        let s = sym(rs, "fn norm(&self) -> i32 {\n        self.x\n    }", None);
        let e = plan(rs, &s, &SymbolPart::Body("1".into())).unwrap_err();
        assert!(
            e.to_string()
                .contains("replace the whole symbol with `replace` instead"),
            "{e}"
        );
    }
}
