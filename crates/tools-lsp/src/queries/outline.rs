//! A file's outline (`symbols` with `file`): by default the declarations a reader
//! navigates by — types, functions, methods, fields, constants, module-level variables —
//! and not what lives inside a function body (locals, nested helpers) or the `<unknown>`
//! entries some servers emit for computed properties. A 2 000-line module lists hundreds of
//! locals otherwise, and they bury the dozen names the model wanted. `kinds` picks kinds
//! explicitly (including locals), `depth` limits nesting, and the answer is paged within
//! the budget like every list.

use std::collections::HashMap;
use std::path::Path;

use lsp_types::request::DocumentSymbolRequest;
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, PartialResultParams,
    SymbolInformation, SymbolKind, TextDocumentIdentifier, WorkDoneProgressParams,
};
use serde_json::{Value, json};
use tools_core::{CallCtx, ToolError, ToolOutput};

use crate::answer::budget::{self, Window};
use crate::answer::format::{Renderer, kind_name};
use crate::queries::outline_shape::{self, Entry};
use crate::queries::query;
use crate::servers::supervisor::ServerSupervisor;

/// Every kind name `kinds` accepts, as answers print them.
const KIND_NAMES: &[(&str, SymbolKind)] = &[
    ("file", SymbolKind::FILE),
    ("module", SymbolKind::MODULE),
    ("namespace", SymbolKind::NAMESPACE),
    ("package", SymbolKind::PACKAGE),
    ("class", SymbolKind::CLASS),
    ("method", SymbolKind::METHOD),
    ("property", SymbolKind::PROPERTY),
    ("field", SymbolKind::FIELD),
    ("constructor", SymbolKind::CONSTRUCTOR),
    ("enum", SymbolKind::ENUM),
    ("interface", SymbolKind::INTERFACE),
    ("function", SymbolKind::FUNCTION),
    ("variable", SymbolKind::VARIABLE),
    ("constant", SymbolKind::CONSTANT),
    ("string", SymbolKind::STRING),
    ("number", SymbolKind::NUMBER),
    ("boolean", SymbolKind::BOOLEAN),
    ("array", SymbolKind::ARRAY),
    ("object", SymbolKind::OBJECT),
    ("key", SymbolKind::KEY),
    ("null", SymbolKind::NULL),
    ("enum_member", SymbolKind::ENUM_MEMBER),
    ("struct", SymbolKind::STRUCT),
    ("event", SymbolKind::EVENT),
    ("operator", SymbolKind::OPERATOR),
    ("type_parameter", SymbolKind::TYPE_PARAMETER),
];

/// Kinds shown by default: what a reader navigates by.
const NAVIGABLE: &[SymbolKind] = &[
    SymbolKind::MODULE,
    SymbolKind::NAMESPACE,
    SymbolKind::PACKAGE,
    SymbolKind::CLASS,
    SymbolKind::METHOD,
    SymbolKind::PROPERTY,
    SymbolKind::FIELD,
    SymbolKind::CONSTRUCTOR,
    SymbolKind::ENUM,
    SymbolKind::INTERFACE,
    SymbolKind::FUNCTION,
    SymbolKind::VARIABLE,
    SymbolKind::CONSTANT,
    SymbolKind::ENUM_MEMBER,
    SymbolKind::STRUCT,
    SymbolKind::EVENT,
    SymbolKind::OPERATOR,
];

/// Kinds whose bodies hold locals rather than declarations.
fn is_callable(k: SymbolKind) -> bool {
    matches!(
        k,
        SymbolKind::FUNCTION | SymbolKind::METHOD | SymbolKind::CONSTRUCTOR | SymbolKind::OPERATOR
    )
}

/// Which symbols an outline shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineFilter {
    /// Kinds asked for; `None` is the default selection (navigable declarations).
    kinds: Option<Vec<SymbolKind>>,
    /// Deepest nesting shown (1 = top level only).
    depth: Option<usize>,
}

impl OutlineFilter {
    /// The filter of `kinds` (names as printed, or `"all"`) and `depth` (at least 1).
    pub fn new(kinds: Option<&[String]>, depth: Option<u32>) -> Result<Self, ToolError> {
        let kinds = match kinds {
            None => None,
            Some(names) if names.iter().any(|n| n == "all") => {
                Some(KIND_NAMES.iter().map(|(_, k)| *k).collect())
            }
            Some(names) => {
                let mut out = Vec::new();
                for n in names {
                    let wanted = n.trim().to_lowercase().replace(['-', ' '], "_");
                    match KIND_NAMES.iter().find(|(name, _)| *name == wanted) {
                        Some((_, k)) => out.push(*k),
                        None => {
                            return Err(ToolError::invalid(
                                "kinds",
                                format!(
                                    "unknown symbol kind `{n}`; kinds are {} (or \"all\")",
                                    KIND_NAMES
                                        .iter()
                                        .map(|(n, _)| *n)
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            ));
                        }
                    }
                }
                Some(out)
            }
        };
        if depth == Some(0) {
            return Err(ToolError::invalid(
                "depth",
                "`depth` counts nesting levels from 1 (top level only)",
            ));
        }
        Ok(OutlineFilter {
            kinds,
            depth: depth.map(|d| d as usize),
        })
    }

    /// Whether a symbol is shown: its kind, name, nesting, and whether it sits inside a
    /// function body.
    fn shows(&self, kind: SymbolKind, name: &str, depth: usize, in_callable: bool) -> bool {
        if self.depth.is_some_and(|d| depth >= d) {
            return false;
        }
        match &self.kinds {
            Some(kinds) => kinds.contains(&kind),
            None => NAVIGABLE.contains(&kind) && !in_callable && !is_placeholder(name),
        }
    }

    /// Whether this is the default selection.
    pub fn is_default(&self) -> bool {
        self.kinds.is_none()
    }
}

/// A name a server emits for what it cannot name (`<unknown>`, `<function>`).
fn is_placeholder(name: &str) -> bool {
    let n = name.trim();
    n.is_empty() || (n.starts_with('<') && n.ends_with('>'))
}

/// The outline of one file: shown lines with their JSON, and how many symbols the filter
/// left out.
#[derive(Debug, Clone, Default)]
pub struct Outline {
    /// Display lines, in document order, indented by nesting.
    pub lines: Vec<String>,
    /// The same entries as JSON.
    pub items: Vec<Value>,
    /// The same entries' names and nesting, for shaping (see `outline_shape`).
    pub entries: Vec<Entry>,
    /// Symbols the filter left out.
    pub hidden: usize,
}

/// Builds the outline of `path` from a document-symbol answer.
pub fn outline(
    r: &mut Renderer,
    path: &std::path::Path,
    resp: Option<DocumentSymbolResponse>,
    filter: &OutlineFilter,
) -> Outline {
    let mut out = Outline::default();
    match resp {
        None => {}
        Some(DocumentSymbolResponse::Nested(v)) => {
            nested(r, path, &v, None, 0, false, filter, &mut out)
        }
        Some(DocumentSymbolResponse::Flat(v)) => flat(r, &v, filter, &mut out),
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn nested(
    r: &mut Renderer,
    path: &std::path::Path,
    syms: &[DocumentSymbol],
    container: Option<&str>,
    depth: usize,
    in_callable: bool,
    filter: &OutlineFilter,
    out: &mut Outline,
) {
    for s in syms {
        if filter.shows(s.kind, &s.name, depth, in_callable) {
            let p = r.point(path, s.selection_range.start);
            let detail = s
                .detail
                .as_ref()
                .map(|d| d.trim())
                .filter(|d| !d.is_empty() && *d != s.name)
                .map(|d| format!(" — {}", crate::answer::budget::shorten(d, 80)))
                .unwrap_or_default();
            // Every entry is in the file the head names: its line is enough.
            let line = format!(
                "{}{} {}{detail}  line {}",
                "  ".repeat(depth.min(8)),
                kind_name(s.kind),
                s.name,
                p.line
            );
            out.entries.push(Entry {
                line: line.clone(),
                name: s.name.clone(),
                depth,
            });
            out.lines.push(line);
            out.items
                .push(json!({"name": s.name, "kind": kind_name(s.kind),
                "container": container, "depth": depth, "location": p.json()}));
        } else {
            out.hidden += 1;
        }
        if let Some(children) = &s.children {
            nested(
                r,
                path,
                children,
                Some(&s.name),
                depth + 1,
                in_callable || is_callable(s.kind),
                filter,
                out,
            );
        }
    }
}

fn flat(r: &mut Renderer, syms: &[SymbolInformation], filter: &OutlineFilter, out: &mut Outline) {
    // A flat answer names containers only: a container that is a function makes its
    // members locals.
    let kind_of: HashMap<&str, SymbolKind> =
        syms.iter().map(|s| (s.name.as_str(), s.kind)).collect();
    for s in syms {
        let container = s.container_name.as_deref().filter(|c| !c.is_empty());
        let in_callable = container
            .and_then(|c| kind_of.get(c))
            .is_some_and(|k| is_callable(*k));
        let depth = usize::from(container.is_some());
        if filter.shows(s.kind, &s.name, depth, in_callable) {
            let (line, item) = crate::answer::format::symbol_info_line(r, s);
            out.entries.push(Entry {
                line: line.clone(),
                name: s.name.clone(),
                depth,
            });
            out.lines.push(line);
            out.items.push(item);
        } else {
            out.hidden += 1;
        }
    }
}

/// How an outline is cut: to one symbol, and whether a listing too big for the budget is
/// shown by its shape (top-level symbols first) rather than paged depth-first.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutlineView<'a> {
    /// Only this symbol (every one so named) and its members.
    pub symbol: Option<&'a str>,
    /// Shape first (no `offset`, `depth` or `max_results` was asked for).
    pub shape_first: bool,
}

/// Answers `symbols` with `file`: the file's outline within the budget — its shape when the
/// whole listing does not fit and no page was asked for, else one page.
pub async fn document_symbols(
    sup: &ServerSupervisor,
    ctx: &CallCtx,
    path: &Path,
    filter: &OutlineFilter,
    view: OutlineView<'_>,
    window: Window,
    budget_bytes: usize,
) -> Result<ToolOutput, ToolError> {
    let client = sup.client_for(path).await?;
    if client.caps.document_symbol_provider.is_none() {
        return Err(ToolError::not_available(format!(
            "{} (the {} server) does not support document symbols",
            client.server, client.language
        )));
    }
    let doc = query::synced(sup, &client, path).await?;
    let params = DocumentSymbolParams {
        text_document: TextDocumentIdentifier {
            uri: doc.uri.clone(),
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let resp = query::with_warmup(
        &client,
        |r: &Option<DocumentSymbolResponse>| r.is_none(),
        || client.request::<DocumentSymbolRequest>(params.clone()),
    )
    .await?;
    let mut r = Renderer::new(ctx.run.root(), client.encoding);
    let shown_path = r.display(path);
    let mut o = outline(&mut r, path, resp, filter);
    let mut shown_path = shown_path;
    if let Some(name) = view.symbol {
        let keep = outline_shape::within(&o.entries, name);
        if keep.is_empty() {
            let top: Vec<&str> = o
                .entries
                .iter()
                .filter(|e| e.depth == 0)
                .take(20)
                .map(|e| e.name.as_str())
                .collect();
            return Err(ToolError::invalid(
                "symbol",
                format!(
                    "no symbol named `{name}` in the outline of {shown_path}; its top-level symbols: {}",
                    top.join(", ")
                ),
            ));
        }
        o = Outline {
            lines: keep.iter().map(|&i| o.lines[i].clone()).collect(),
            items: keep.iter().map(|&i| o.items[i].clone()).collect(),
            entries: keep.iter().map(|&i| o.entries[i].clone()).collect(),
            // What the filter left out is counted for the whole file, not for this symbol.
            hidden: 0,
        };
        shown_path = format!("{shown_path}, `{name}` and its members");
    }
    let total = o.lines.len();
    let hidden = if o.hidden == 0 {
        String::new()
    } else if filter.is_default() {
        format!(
            " ({} more inside function bodies, unnamed or of other kinds — pass `kinds` to pick them, e.g. [\"all\"])",
            o.hidden
        )
    } else {
        format!(" ({} more of other kinds or deeper)", o.hidden)
    };
    if total == 0 {
        return Ok(
            ToolOutput::text(format!("no symbols in {shown_path}{hidden}"))
                .with_structured(json!({"symbols": [], "total": 0, "hidden": o.hidden})),
        );
    }
    let head = if window.offset == 0 {
        format!("{total} symbol(s) in {shown_path}{hidden}:")
    } else {
        format!(
            "{total} symbol(s) in {shown_path}, from entry {}:",
            window.offset
        )
    };
    if view.shape_first
        && let Some(shape) = outline_shape::shape(
            &head,
            &o.entries,
            budget_bytes.max(budget::MIN_ANSWER_BYTES),
        )
    {
        let items: Vec<Value> = shape.shown.iter().map(|&i| o.items[i].clone()).collect();
        let collapsed: Vec<Value> = shape
            .collapsed
            .iter()
            .map(|(name, members)| json!({"name": name, "members": members}))
            .collect();
        return Ok(ToolOutput::text(shape.text).with_structured(json!({
            "symbols": items,
            "total": total,
            "hidden": o.hidden,
            "collapsed": collapsed,
        })));
    }
    let page = budget::page(
        &head,
        &o.lines,
        window,
        budget_bytes,
        ", `kinds` (e.g. [\"class\", \"function\"]) or `depth: 1` for fewer",
    );
    let items: Vec<Value> = o
        .items
        .into_iter()
        .skip(page.first)
        .take(page.shown)
        .collect();
    let paging = page.json();
    Ok(ToolOutput::text(page.text).with_structured(json!({
        "symbols": items,
        "total": total,
        "hidden": o.hidden,
        "page": paging,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_keeps_declarations_and_drops_locals() {
        let f = OutlineFilter::new(None, None).unwrap();
        assert!(f.shows(SymbolKind::CLASS, "Rect", 0, false));
        assert!(f.shows(SymbolKind::VARIABLE, "TIMEOUT", 0, false));
        assert!(f.shows(SymbolKind::FIELD, "width", 1, false));
        assert!(!f.shows(SymbolKind::VARIABLE, "i", 1, true));
        assert!(!f.shows(SymbolKind::FUNCTION, "helper", 1, true));
        assert!(!f.shows(SymbolKind::PROPERTY, "<unknown>", 1, false));
        assert!(!f.shows(SymbolKind::KEY, "name", 0, false));
    }

    #[test]
    fn kinds_and_depth_narrow_or_widen() {
        let f = OutlineFilter::new(Some(&["variable".into()]), None).unwrap();
        assert!(f.shows(SymbolKind::VARIABLE, "i", 2, true));
        assert!(!f.shows(SymbolKind::CLASS, "Rect", 0, false));
        let f = OutlineFilter::new(Some(&["Enum-Member".into()]), Some(1)).unwrap();
        assert!(f.shows(SymbolKind::ENUM_MEMBER, "A", 0, false));
        assert!(!f.shows(SymbolKind::ENUM_MEMBER, "A", 1, false));
        let f = OutlineFilter::new(Some(&["all".into()]), None).unwrap();
        assert!(f.shows(SymbolKind::VARIABLE, "<unknown>", 3, true));
        let e = OutlineFilter::new(Some(&["widget".into()]), None).unwrap_err();
        assert!(e.to_string().contains("enum_member"), "{e}");
        assert!(OutlineFilter::new(None, Some(0)).is_err());
    }

    #[test]
    fn kind_names_match_what_answers_print() {
        for (name, kind) in KIND_NAMES {
            assert_eq!(kind_name(*kind), *name);
        }
    }
}
