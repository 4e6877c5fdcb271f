//! Where a symbol is used, from whoever can say: the language servers register a source per
//! run, and a family that needs the uses of a symbol (the test family, following a change to
//! the tests that reach it) asks through here, never through another family's internals.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::{Run, ToolError};

/// One use of a symbol.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SymbolUse {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its line, 1-based.
    pub line: usize,
}

/// A test the server itself relates to a symbol (rust-analyzer's `relatedTests`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RelatedTest {
    /// Its file (absolute).
    pub path: PathBuf,
    /// The line of its name, 1-based.
    pub line: usize,
    /// The name its runner takes (libtest's `tests::adds`).
    pub name: String,
}

/// Something that can list the uses of a symbol across the workspace.
#[async_trait::async_trait]
pub trait ReferenceSource: Send + Sync {
    /// Who answers, for the model (`pyright-langserver`).
    fn name(&self, path: &Path) -> String;

    /// Every use of `symbol` (a name on `line`, 1-based, of `path`), its declaration left
    /// out. `Ok(None)` when this source does not serve the file (no server for its
    /// language or root); an error when it should and could not.
    async fn uses(
        &self,
        path: &Path,
        line: usize,
        symbol: &str,
    ) -> Result<Option<Vec<SymbolUse>>, ToolError>;

    /// The tests the server itself relates to `symbol` (on `line`, 1-based, of `path`),
    /// where it has such a request (rust-analyzer's `rust-analyzer/relatedTests`).
    /// `Ok(None)` when it has none, or this source does not serve the file.
    async fn related_tests(
        &self,
        path: &Path,
        line: usize,
        symbol: &str,
    ) -> Result<Option<Vec<RelatedTest>>, ToolError> {
        let _ = (path, line, symbol);
        Ok(None)
    }
}

/// The run's reference sources, registered by the families as they are wired.
#[derive(Default)]
pub struct ReferenceSources {
    sources: Mutex<Vec<Arc<dyn ReferenceSource>>>,
}

impl ReferenceSources {
    /// The run's sources (empty until a family registers one).
    pub fn for_run(run: &Run) -> Arc<ReferenceSources> {
        run.state(ReferenceSources::default)
    }

    /// Adds a source.
    pub fn register(&self, source: Arc<dyn ReferenceSource>) {
        if let Ok(mut s) = self.sources.lock() {
            s.push(source);
        }
    }

    /// Every source, in registration order.
    pub fn all(&self) -> Vec<Arc<dyn ReferenceSource>> {
        self.sources.lock().map(|s| s.clone()).unwrap_or_default()
    }
}
