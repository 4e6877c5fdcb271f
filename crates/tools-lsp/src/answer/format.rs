//! How answers are shown: locations as `path:LINE:COL` (1-based, relative to the workspace,
//! columns in characters) with the source line, diagnostics as
//! `path:LINE:COL severity [code] message`, hover as trimmed markdown, symbols with kind and
//! container, code actions with the files their edits would touch. Every list is capped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    CodeActionOrCommand, Diagnostic, DiagnosticSeverity, DocumentChangeOperation, DocumentChanges,
    GotoDefinitionResponse, Location, Position, Range, ResourceOp, SymbolInformation, SymbolKind,
    WorkspaceEdit,
};
use serde_json::{Value, json};
use tools_core::text::cut_text;

use crate::client::position::{Encoding, display_column, from_lsp_character, line_of};
use crate::client::uri_to_path;

/// Reads source files once per answer to print lines and convert columns.
pub struct Renderer {
    workspace: PathBuf,
    enc: Encoding,
    cache: HashMap<PathBuf, Option<String>>,
}

/// One resolved point: where, and the line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// Printed path (relative to the workspace when inside it).
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in characters.
    pub col: usize,
    /// The source line, trimmed and cut (empty when unreadable).
    pub text: String,
}

impl Point {
    /// `path:line:col`.
    pub fn loc(&self) -> String {
        format!("{}:{}:{}", self.path, self.line, self.col)
    }
    /// As JSON.
    pub fn json(&self) -> Value {
        json!({"path": self.path, "line": self.line, "col": self.col, "text": self.text})
    }
}

impl Renderer {
    /// A renderer for one server's answers.
    pub fn new(workspace: &Path, enc: Encoding) -> Self {
        Renderer {
            workspace: workspace.to_path_buf(),
            enc,
            cache: HashMap::new(),
        }
    }

    /// The printed form of a path.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(r) if r.as_os_str().is_empty() => ".".into(),
            Ok(r) => r.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    fn text(&mut self, path: &Path) -> Option<&str> {
        self.cache
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                std::fs::read(path)
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            })
            .as_deref()
    }

    /// Resolves an LSP position in `path`.
    pub fn point(&mut self, path: &Path, pos: Position) -> Point {
        let enc = self.enc;
        let disp = self.display(path);
        let (col, text) = match self.text(path).and_then(|t| line_of(t, pos.line as usize)) {
            Some(l) => {
                let b = from_lsp_character(l, pos.character, enc);
                (display_column(l, b), cut_text(l.trim(), 160))
            }
            None => (pos.character as usize + 1, String::new()),
        };
        Point {
            path: disp,
            line: pos.line as usize + 1,
            col,
            text,
        }
    }

    /// Resolves a location.
    pub fn location(&mut self, loc: &Location) -> Option<Point> {
        let path = uri_to_path(&loc.uri)?;
        Some(self.point(&path, loc.range.start))
    }

    /// One diagnostic line: `path:L:C severity [code] message`.
    pub fn diagnostic(&mut self, path: &Path, d: &Diagnostic) -> (Point, String) {
        let p = self.point(path, d.range.start);
        (p.clone(), diagnostic_line(&p.loc(), d))
    }
}

/// `loc severity [code] message` with the message's first line cut at 300 characters.
pub fn diagnostic_line(loc: &str, d: &Diagnostic) -> String {
    let code = diagnostic_code(d)
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    let msg = d.message.lines().next().unwrap_or("").trim();
    let more = if d.message.lines().count() > 1 {
        " …"
    } else {
        ""
    };
    format!(
        "{loc} {}{code} {}{more}",
        severity_name(d.severity),
        cut_text(msg, 300)
    )
}

/// The diagnostic's code as text.
pub fn diagnostic_code(d: &Diagnostic) -> Option<String> {
    d.code.as_ref().map(|c| match c {
        lsp_types::NumberOrString::Number(n) => n.to_string(),
        lsp_types::NumberOrString::String(s) => s.clone(),
    })
}

/// `error`, `warning`, `info`, `hint` (unspecified severity counts as error, as the spec says).
pub fn severity_name(s: Option<DiagnosticSeverity>) -> &'static str {
    match s {
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    }
}

/// A definition-like answer as a flat list of locations.
pub fn locations(resp: Option<GotoDefinitionResponse>) -> Vec<Location> {
    match resp {
        None => vec![],
        Some(GotoDefinitionResponse::Scalar(l)) => vec![l],
        Some(GotoDefinitionResponse::Array(v)) => v,
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .map(|l| Location {
                uri: l.target_uri,
                range: l.target_selection_range,
            })
            .collect(),
    }
}

/// A symbol kind in snake case (`function`, `class`, `enum_member`, …).
pub fn kind_name(k: SymbolKind) -> String {
    // lsp-types prints kinds in camel case (`EnumMember`); answers use snake case.
    let mut out = String::new();
    for (i, c) in format!("{k:?}").chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// A flat symbol's display line.
pub fn symbol_info_line(r: &mut Renderer, s: &SymbolInformation) -> (String, Value) {
    let p = r.location(&s.location);
    let loc = p.as_ref().map(Point::loc).unwrap_or_default();
    let container = s
        .container_name
        .as_ref()
        .filter(|c| !c.is_empty())
        .map(|c| format!(" (in {c})"))
        .unwrap_or_default();
    (
        format!("{} {}{container}  {loc}", kind_name(s.kind), s.name),
        json!({"name": s.name, "kind": kind_name(s.kind), "container": s.container_name, "location": p.map(|p| p.json())}),
    )
}

/// The files a workspace edit would touch, printed.
pub fn edit_files(r: &Renderer, edit: &WorkspaceEdit) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    let mut add = |u: &lsp_types::Uri| {
        let s = uri_to_path(u)
            .map(|p| r.display(&p))
            .unwrap_or_else(|| u.as_str().to_string());
        if !files.contains(&s) {
            files.push(s);
        }
    };
    if let Some(ch) = &edit.changes {
        for u in ch.keys() {
            add(u);
        }
    }
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => v.iter().for_each(|e| add(&e.text_document.uri)),
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(e) => add(&e.text_document.uri),
                    DocumentChangeOperation::Op(ResourceOp::Create(c)) => add(&c.uri),
                    DocumentChangeOperation::Op(ResourceOp::Rename(rn)) => {
                        add(&rn.old_uri);
                        add(&rn.new_uri);
                    }
                    DocumentChangeOperation::Op(ResourceOp::Delete(d)) => add(&d.uri),
                }
            }
        }
        None => {}
    }
    files.sort();
    files
}

/// A code action's display line.
pub fn code_action_line(r: &Renderer, a: &CodeActionOrCommand) -> (String, Value) {
    match a {
        CodeActionOrCommand::Command(c) => (
            format!("{} (runs server command `{}`)", c.title, c.command),
            json!({"title": c.title, "command": c.command}),
        ),
        CodeActionOrCommand::CodeAction(ca) => {
            let kind = ca
                .kind
                .as_ref()
                .map(|k| format!(" [{}]", k.as_str()))
                .unwrap_or_default();
            let files = ca
                .edit
                .as_ref()
                .map(|e| edit_files(r, e))
                .unwrap_or_default();
            let pref = if ca.is_preferred == Some(true) {
                " (preferred)"
            } else {
                ""
            };
            let touches = if files.is_empty() {
                match &ca.command {
                    Some(c) => format!(" — runs server command `{}`", c.command),
                    None => " — edit resolved on apply".into(),
                }
            } else {
                format!(" — edits {}", files.join(", "))
            };
            (
                format!("{}{kind}{pref}{touches}", ca.title),
                json!({"title": ca.title, "kind": ca.kind.as_ref().map(|k| k.as_str().to_string()), "files": files}),
            )
        }
    }
}

/// Whether `a` overlaps `b` (line granularity is enough for picking diagnostics).
pub fn overlaps_line(r: &Range, line: u32) -> bool {
    r.start.line <= line && line <= r.end.line
}
