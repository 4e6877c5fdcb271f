//! Name paths: how a model names a symbol instead of quoting its text or its line —
//! `Greeter.greet`, `module.function`, `impl Point.norm`, `Server.Start` — and how one is
//! resolved to exactly one symbol of a file, or refused naming the candidates.
//!
//! A name path is a list of segments separated by `.` (dots inside `()`, `<>` or `[]` do
//! not split, so Go's `(*Server).Start` is one segment). It matches a symbol when its
//! segments are the last segments of the symbol's path (`greet` matches `Greeter.greet`);
//! its first segment may also be the file's module name (`app.main` in `app.py`, the
//! folder's name for `__init__.py`, `mod.rs`, `index.ts`), and the rest then names the
//! symbol from the top. When several symbols match, the one whose whole path was given
//! wins; otherwise the call is refused with at most [`MAX_CANDIDATES`] candidates.
//!
//! Segments are compared after generic arguments and repeated spaces are dropped, and a
//! Rust `impl` block answers to `impl Type`, `Type`, and for a trait impl also
//! `Trait for Type`, so `Point.norm` reaches a method of `impl Point`.

use std::ops::Range;
use std::path::Path;

use crate::ToolError;
use crate::symbols::{FileSymbols, SourceSymbol, SymbolSourceKind, SymbolSources, line_number};

/// At most this many candidates are named when a name path is ambiguous or missing.
pub const MAX_CANDIDATES: usize = 10;

/// A parsed name path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePath {
    segments: Vec<String>,
    text: String,
}

impl NamePath {
    /// Parses `text`; `field` names the argument in the error when it is empty or has an
    /// empty segment.
    pub fn parse(text: &str, field: &str) -> Result<NamePath, ToolError> {
        let text = text.trim();
        let segments = split_segments(text);
        if segments.is_empty() || segments.iter().any(|s| s.is_empty()) {
            return Err(ToolError::invalid(
                field,
                format!(
                    "`{text}` is not a name path; name the symbol with its containers, separated by dots \
                     (e.g. `Greeter.greet`, `impl Point.norm`, `helper`)"
                ),
            ));
        }
        Ok(NamePath {
            segments: segments
                .iter()
                .map(|s| normalize(receiver_type(s)))
                .collect(),
            text: text.to_string(),
        })
    }

    /// The name path as the model wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Splits on dots outside brackets.
fn split_segments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            _ => {}
        }
        if c == '.' && depth <= 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !text.is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Go's receiver spelling `(*Server)` or `(Server)` as the type's name.
fn receiver_type(segment: &str) -> &str {
    match segment.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
        Some(inner) => inner.trim().trim_start_matches('*').trim(),
        None => segment,
    }
}

/// A segment without generic arguments and with single spaces.
fn normalize(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    let mut depth = 0i32;
    for c in segment.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every spelling a symbol's segment answers to.
fn aliases(segment: &str) -> Vec<String> {
    let n = normalize(segment);
    let mut out = vec![n.clone()];
    if let Some(rest) = n.strip_prefix("impl ") {
        let rest = rest.trim();
        match rest.split_once(" for ") {
            Some((tr, ty)) => {
                let ty = ty.trim().to_string();
                out.push(format!("{} for {ty}", tr.trim()));
                out.push(format!("impl {ty}"));
                out.push(ty);
            }
            None => out.push(rest.to_string()),
        }
    }
    out
}

/// A symbol's path with Go's `(*T).M` and `(T).M` spelled as two segments.
fn symbol_segments(sym: &SourceSymbol) -> Vec<String> {
    let mut out = Vec::with_capacity(sym.path.len() + 1);
    for seg in &sym.path {
        let s = seg.trim();
        if let Some(inner) = s.strip_prefix('(')
            && let Some((recv, method)) = inner.split_once(").")
        {
            out.push(recv.trim_start_matches('*').trim().to_string());
            out.push(method.trim().to_string());
        } else {
            out.push(s.to_string());
        }
    }
    out
}

/// The module name a file's symbols live in (its stem, or its folder's name for a
/// package's index file).
fn module_name(file: &Path) -> Option<String> {
    let stem = file.file_stem()?.to_string_lossy().to_string();
    if matches!(stem.as_str(), "__init__" | "mod" | "index" | "lib" | "main") {
        let folder = file.parent()?.file_name()?.to_string_lossy().to_string();
        if stem == "__init__" || stem == "mod" || stem == "index" {
            return Some(folder);
        }
    }
    Some(stem)
}

fn segment_matches(query: &str, symbol_segment: &str) -> bool {
    aliases(symbol_segment).iter().any(|a| a == query)
}

/// How well a name path matches a symbol: `None`, a tail of its path, or its whole path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    Tail,
    Whole,
    /// The whole path, each segment as the source spells it (`Point` is the struct, not
    /// `impl Point`).
    Exact,
}

fn fit(query: &[String], module: Option<&str>, sym: &SourceSymbol) -> Option<Fit> {
    let path = symbol_segments(sym);
    let tail_of = |q: &[String]| {
        q.len() <= path.len()
            && q.iter()
                .zip(&path[path.len() - q.len()..])
                .all(|(q, s)| segment_matches(q, s))
    };
    if query.len() == path.len() && tail_of(query) {
        let exact = query.iter().zip(&path).all(|(q, s)| *q == normalize(s));
        return Some(if exact { Fit::Exact } else { Fit::Whole });
    }
    if query.len() > 1
        && module == Some(query[0].as_str())
        && query.len() - 1 == path.len()
        && tail_of(&query[1..])
    {
        return Some(Fit::Whole);
    }
    tail_of(query).then_some(Fit::Tail)
}

/// A symbol a name path resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSymbol {
    /// Its path, joined with dots for the model (`Greeter.greet`).
    pub name: String,
    /// Its kind (`method`, `function`, …).
    pub kind: String,
    /// Byte range of the whole symbol in the text resolved against.
    pub range: Range<usize>,
    /// Byte range of its body, when a source knows it.
    pub body: Option<Range<usize>>,
    /// Who resolved it (`pyright`, `tree-sitter python`).
    pub source: String,
}

fn display_path(sym: &SourceSymbol) -> String {
    symbol_segments(sym).join(".")
}

fn candidate_line(sym: &SourceSymbol, text: &str) -> String {
    format!(
        "{} ({}, line {})",
        display_path(sym),
        sym.kind,
        line_number(text, sym.range.start)
    )
}

fn listed(candidates: &[&SourceSymbol], text: &str) -> String {
    let mut out: Vec<String> = candidates
        .iter()
        .take(MAX_CANDIDATES)
        .map(|s| candidate_line(s, text))
        .collect();
    if candidates.len() > MAX_CANDIDATES {
        out.push(format!("and {} more", candidates.len() - MAX_CANDIDATES));
    }
    out.join("; ")
}

/// Picks the one symbol of `found` that `query` names, or says why there is none.
/// `shown` is the file as the model knows it, `text` the text the ranges index into.
pub fn pick_symbol(
    found: &FileSymbols,
    query: &NamePath,
    file: &Path,
    shown: &str,
    text: &str,
    field: &str,
) -> Result<SourceSymbol, ToolError> {
    let module = module_name(file);
    let fits: Vec<(Fit, &SourceSymbol)> = found
        .symbols
        .iter()
        .filter_map(|s| fit(&query.segments, module.as_deref(), s).map(|f| (f, s)))
        .collect();
    let at_least = |level: Fit| -> Vec<&SourceSymbol> {
        fits.iter()
            .filter(|(f, _)| *f >= level)
            .map(|(_, s)| *s)
            .collect()
    };
    let (whole, exact) = (at_least(Fit::Whole), at_least(Fit::Exact));
    match (fits.len(), whole.len(), exact.len()) {
        (1, _, _) => return Ok(fits[0].1.clone()),
        (_, 1, _) => return Ok(whole[0].clone()),
        (_, _, 1) => return Ok(exact[0].clone()),
        _ => {}
    }
    if !fits.is_empty() {
        let all: Vec<&SourceSymbol> = fits.iter().map(|(_, s)| *s).collect();
        return Err(ToolError::invalid(
            field,
            format!(
                "`{}` names {} symbols in {shown} (found by {}); nothing was changed — give the one you mean by its \
                 full name path: {}",
                query.text,
                all.len(),
                found.source,
                listed(&all, text)
            ),
        ));
    }
    // Missing: the symbols with the same last name elsewhere, else names containing it,
    // else the file's top level.
    let Some(last) = query.segments.last() else {
        return Err(ToolError::invalid(field, "the name path is empty"));
    };
    let last_lower = last.to_lowercase();
    let same_name: Vec<&SourceSymbol> = found
        .symbols
        .iter()
        .filter(|s| {
            symbol_segments(s)
                .last()
                .is_some_and(|n| aliases(n).iter().any(|a| a.to_lowercase() == last_lower))
        })
        .collect();
    let similar: Vec<&SourceSymbol> = if same_name.is_empty() {
        found
            .symbols
            .iter()
            .filter(|s| {
                symbol_segments(s)
                    .last()
                    .is_some_and(|n| n.to_lowercase().contains(&last_lower))
            })
            .collect()
    } else {
        same_name
    };
    let (what, shown_list) = if similar.is_empty() {
        let top: Vec<&SourceSymbol> = found.symbols.iter().filter(|s| s.path.len() == 1).collect();
        ("its top-level symbols are", top)
    } else {
        ("similar names there", similar)
    };
    let list = if shown_list.is_empty() {
        "none".to_string()
    } else {
        listed(&shown_list, text)
    };
    Err(ToolError::invalid(
        field,
        format!(
            "no symbol `{}` in {shown} (found by {}); nothing was changed — {what}: {list}",
            query.text, found.source
        ),
    ))
}

/// Resolves `query` in `file` (its current text `text`) through the run's symbol sources:
/// the first source that serves the file decides which symbol it is; when that is a
/// language server, a grammar's view of the same symbol adds its body and widens its range
/// to what the grammar counts (decorators, attributes). `shown` is the file as the model
/// knows it; `field` the argument errors name.
pub async fn resolve_symbol(
    sources: &SymbolSources,
    file: &Path,
    shown: &str,
    text: &str,
    query: &NamePath,
    field: &str,
) -> Result<ResolvedSymbol, ToolError> {
    let ordered = sources.ordered();
    let mut failures = Vec::new();
    let mut chosen: Option<(FileSymbols, SourceSymbol)> = None;
    for source in &ordered {
        match source.symbols(file, text).await {
            Ok(Some(found)) => {
                let sym = pick_symbol(&found, query, file, shown, text, field)?;
                chosen = Some((found, sym));
                break;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(error = %e, "a symbol source failed; trying the next one");
                failures.push(e.to_string());
            }
        }
    }
    let Some((found, mut sym)) = chosen else {
        let why = if failures.is_empty() {
            String::new()
        } else {
            format!(" ({})", failures.join("; "))
        };
        return Err(ToolError::not_available(format!(
            "no language server runs for {shown} and no bundled grammar reads it, so its symbols are unknown{why}; \
             edit it with old_string and new_string instead"
        )));
    };
    if found.kind == SymbolSourceKind::LanguageServer {
        for grammar in ordered
            .iter()
            .filter(|s| s.kind() == SymbolSourceKind::Grammar)
        {
            if let Ok(Some(g)) = grammar.symbols(file, text).await
                && let Some(same) = same_symbol(&sym, &g.symbols)
            {
                sym.range =
                    sym.range.start.min(same.range.start)..sym.range.end.max(same.range.end);
                sym.body = sym.body.or_else(|| same.body.clone());
                break;
            }
        }
    }
    Ok(ResolvedSymbol {
        name: display_path(&sym),
        kind: sym.kind.clone(),
        range: sym.range.clone(),
        body: sym.body.clone(),
        source: found.source,
    })
}

/// The grammar's symbol that is `sym`: the same last name, overlapping most.
fn same_symbol<'a>(sym: &SourceSymbol, others: &'a [SourceSymbol]) -> Option<&'a SourceSymbol> {
    let name = symbol_segments(sym).last().cloned().unwrap_or_default();
    others
        .iter()
        .filter(|o| {
            symbol_segments(o)
                .last()
                .is_some_and(|n| aliases(n).iter().any(|a| aliases(&name).contains(a)))
        })
        .map(|o| {
            let overlap =
                o.range.end.min(sym.range.end) as i64 - o.range.start.max(sym.range.start) as i64;
            (overlap, o)
        })
        .filter(|(overlap, _)| *overlap > 0)
        .max_by_key(|(overlap, _)| *overlap)
        .map(|(_, o)| o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(path: &[&str], kind: &str, range: Range<usize>) -> SourceSymbol {
        SourceSymbol {
            path: path.iter().map(|s| s.to_string()).collect(),
            kind: kind.into(),
            range,
            body: None,
        }
    }

    fn file(symbols: Vec<SourceSymbol>) -> FileSymbols {
        FileSymbols {
            source: "test".into(),
            kind: SymbolSourceKind::Grammar,
            symbols,
        }
    }

    const TEXT: &str = "l00\nl01\nl02\nl03\nl04\nl05\nl06\nl07\nl08\nl09\nl10\nl11\n";

    fn pick_in(f: &FileSymbols, q: &str, path: &str) -> Result<String, String> {
        let q = NamePath::parse(q, "symbol").map_err(|e| e.to_string())?;
        pick_symbol(f, &q, Path::new(path), path, TEXT, "symbol")
            .map(|s| display_path(&s))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_tail_a_whole_path_and_a_module_prefix_resolve() {
        let f = file(vec![
            sym(&["greet"], "function", 0..3),
            sym(&["Greeter"], "class", 3..12),
            sym(&["Greeter", "greet"], "method", 6..9),
            sym(&["Greeter", "wave"], "method", 9..12),
        ]);
        assert_eq!(
            pick_in(&f, "Greeter.greet", "app.py").unwrap(),
            "Greeter.greet"
        );
        assert_eq!(pick_in(&f, "wave", "app.py").unwrap(), "Greeter.wave");
        // Two match `greet`; the top-level one is named by its whole path.
        assert_eq!(pick_in(&f, "greet", "app.py").unwrap(), "greet");
        assert_eq!(pick_in(&f, "app.greet", "app.py").unwrap(), "greet");
        assert_eq!(
            pick_in(&f, "pkg.Greeter.wave", "pkg/__init__.py").unwrap(),
            "Greeter.wave"
        );
    }

    #[test]
    fn impl_blocks_and_go_receivers_answer_to_their_type() {
        let f = file(vec![
            sym(&["impl Point"], "impl", 0..9),
            sym(&["impl Point", "norm"], "method", 3..6),
            sym(&["impl<T> Display for Wrapper<T>", "fmt"], "method", 9..12),
            sym(&["(*Server).Start"], "method", 12..15),
        ]);
        assert_eq!(
            pick_in(&f, "impl Point.norm", "a.rs").unwrap(),
            "impl Point.norm"
        );
        assert_eq!(
            pick_in(&f, "Point.norm", "a.rs").unwrap(),
            "impl Point.norm"
        );
        assert_eq!(
            pick_in(&f, "Wrapper.fmt", "a.rs").unwrap(),
            "impl<T> Display for Wrapper<T>.fmt"
        );
        assert_eq!(
            pick_in(&f, "Display for Wrapper.fmt", "a.rs").unwrap(),
            "impl<T> Display for Wrapper<T>.fmt"
        );
        assert_eq!(pick_in(&f, "Server.Start", "a.go").unwrap(), "Server.Start");
        assert_eq!(
            pick_in(&f, "(*Server).Start", "a.go").unwrap(),
            "Server.Start"
        );
        // A struct and its impl block: the name as spelled is the struct.
        let f = file(vec![
            sym(&["Point"], "struct", 0..3),
            sym(&["impl Point"], "impl", 3..6),
        ]);
        assert_eq!(pick_in(&f, "Point", "a.rs").unwrap(), "Point");
        assert_eq!(pick_in(&f, "impl Point", "a.rs").unwrap(), "impl Point");
    }

    #[test]
    fn ambiguous_and_missing_names_list_candidates_and_at_most_ten() {
        let mut many = Vec::new();
        for i in 0..12 {
            many.push(sym(&[&format!("C{i}"), "run"], "method", i * 4..i * 4 + 1));
        }
        let f = file(many);
        let e = pick_in(&f, "run", "m.py").unwrap_err();
        assert_eq!(
            e,
            "invalid arguments (`symbol`): `run` names 12 symbols in m.py (found by test); nothing was changed — \
             give the one you mean by its full name path: C0.run (method, line 1); C1.run (method, line 2); \
             C2.run (method, line 3); C3.run (method, line 4); C4.run (method, line 5); C5.run (method, line 6); \
             C6.run (method, line 7); C7.run (method, line 8); C8.run (method, line 9); C9.run (method, line 10); \
             and 2 more"
        );
        let e = pick_in(&f, "C3.walk", "m.py").unwrap_err();
        assert!(e.contains("no symbol `C3.walk` in m.py (found by test); nothing was changed — its top-level symbols are: none"), "{e}");
        let e = pick_in(&f, "X.run", "m.py").unwrap_err();
        assert!(
            e.contains("similar names there: C0.run (method, line 1);"),
            "{e}"
        );
        assert!(NamePath::parse(" ", "symbol").is_err());
        assert!(NamePath::parse("a..b", "symbol").is_err());
    }
}
