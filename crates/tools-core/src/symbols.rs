//! The symbols of one file, as the families that can read them report them, so that a tool
//! of one family can address code by name (`Greeter.greet`) through another family's
//! knowledge without depending on it.
//!
//! Two kinds of source exist: a language server's document symbols (the `lsp` family, where
//! a server runs for the file) and the bundled tree-sitter grammars (the `ast` family, for
//! every file of a language it knows). A run keeps its sources in [`SymbolSources`]; a
//! family registers its source when it is wired, and [`crate::resolve_symbol`] asks them in
//! order — the language server first, because it knows the language's own notion of a
//! symbol, and the grammar after, which also knows where each body is.

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::{Run, ToolError};

/// Which kind of knowledge a source has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SymbolSourceKind {
    /// A running language server's document symbols: asked first.
    LanguageServer,
    /// A bundled tree-sitter grammar: asked when no server serves the file, and for bodies.
    Grammar,
}

/// One symbol of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSymbol {
    /// Names from the outermost container down to this symbol, as the source spells them
    /// (`["Greeter", "greet"]`, `["impl Point", "norm"]`).
    pub path: Vec<String>,
    /// Its kind in plain words (`function`, `method`, `class`, `struct`, …).
    pub kind: String,
    /// Byte range of the whole symbol (decorators, attributes and doc comments included
    /// where the source counts them) in the text the source was given.
    pub range: Range<usize>,
    /// Byte range of its body — the block after the signature, braces included for the
    /// languages that have them — when the source knows it.
    pub body: Option<Range<usize>>,
}

/// The symbols one source found in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSymbols {
    /// Who answered, for the model (`pyright`, `tree-sitter python`).
    pub source: String,
    /// The kind of source.
    pub kind: SymbolSourceKind,
    /// Every symbol, in document order, nested ones included.
    pub symbols: Vec<SourceSymbol>,
}

/// Something that can list a file's symbols.
#[async_trait::async_trait]
pub trait SymbolSource: Send + Sync {
    /// The kind of source (decides the order sources are asked in).
    fn kind(&self) -> SymbolSourceKind;

    /// The symbols of `path`, whose current text is `text` (ranges are byte offsets into
    /// `text`). `Ok(None)` when this source does not serve the file (no server runs for its
    /// language, no grammar knows it); an error when it should and could not.
    async fn symbols(&self, path: &Path, text: &str) -> Result<Option<FileSymbols>, ToolError>;
}

/// The run's symbol sources, registered by the families as they are wired.
#[derive(Default)]
pub struct SymbolSources {
    sources: Mutex<Vec<Arc<dyn SymbolSource>>>,
}

impl SymbolSources {
    /// The run's sources (empty until a family registers one).
    pub fn for_run(run: &Run) -> Arc<SymbolSources> {
        run.state(SymbolSources::default)
    }

    /// Adds a source.
    pub fn register(&self, source: Arc<dyn SymbolSource>) {
        if let Ok(mut s) = self.sources.lock() {
            s.push(source);
        }
    }

    /// Every source, language servers first, then grammars, each kind in registration order.
    pub fn ordered(&self) -> Vec<Arc<dyn SymbolSource>> {
        let mut all = self.sources.lock().map(|s| s.clone()).unwrap_or_default();
        all.sort_by_key(|s| s.kind());
        all
    }
}

/// The text of the line holding byte `at`, from its first byte up to `at`.
pub fn line_prefix(text: &str, at: usize) -> &str {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    &text[start..at]
}

/// The leading whitespace of the line holding byte `at`.
pub fn indent_at(text: &str, at: usize) -> &str {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..width]
}

/// The 1-based line of byte `at`.
pub fn line_number(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}
