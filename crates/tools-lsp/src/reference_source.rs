//! The language servers as a reference source for the run: the uses of a symbol, for the
//! families that follow a change to what uses it (the test family's reaching tests). Only a
//! server that can run for the file is asked; a file no server serves is `None`.

use std::path::Path;
use std::sync::{Arc, Weak};

use tools_core::{ReferenceSource, RelatedTest, Run, SymbolUse, ToolError};

use crate::client::uri_to_path;
use crate::queries::{locate, query};
use crate::servers::supervisor::ServerSupervisor;

/// `references` of the servers of one run, as a [`ReferenceSource`].
pub struct ServerReferences {
    // Weak: the run holds its sources, so a strong handle would keep it alive forever.
    run: Weak<Run>,
    sup: Arc<ServerSupervisor>,
}

impl ServerReferences {
    /// The source over `sup`'s servers for `run`.
    pub fn new(run: &Arc<Run>, sup: Arc<ServerSupervisor>) -> Self {
        ServerReferences {
            run: Arc::downgrade(run),
            sup,
        }
    }

    /// `symbol` on `line` (1-based) of `path` synced with its server and placed; `None`
    /// when the run is gone or no server serves the file.
    async fn prepared(
        &self,
        path: &Path,
        line: usize,
        symbol: &str,
    ) -> Result<Option<query::Prepared>, ToolError> {
        let Some(run) = self.run.upgrade() else {
            return Ok(None);
        };
        if self.sup.locate(path).is_err() {
            return Ok(None);
        }
        let file = run.workspace().display(path);
        let line = u32::try_from(line).unwrap_or(u32::MAX);
        query::prepare(&run, &self.sup, Some(&file), Some(line), Some(symbol), None)
            .await
            .map(Some)
    }
}

#[tools_core::async_trait]
impl ReferenceSource for ServerReferences {
    fn name(&self, path: &Path) -> String {
        match self.sup.locate(path) {
            Ok(loc) => format!(
                "{} references",
                loc.program
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
            Err(_) => "language server references".into(),
        }
    }

    async fn uses(
        &self,
        path: &Path,
        line: usize,
        symbol: &str,
    ) -> Result<Option<Vec<SymbolUse>>, ToolError> {
        let Some(p) = self.prepared(path, line, symbol).await? else {
            return Ok(None);
        };
        let line = u32::try_from(line).unwrap_or(u32::MAX);
        // Uses in files the server has not analysed yet are missing from an early answer,
        // and a walk takes "no use" at its word: the first analysis must be over, and a
        // young server that finds no use (pyright before it has listed the workspace's
        // files) is asked again for a few seconds.
        p.client.wait_ready().await;
        let mut tries = 0;
        let mut uses = loop {
            let found = locate::references(&p).await?;
            let uses: Vec<SymbolUse> = found
                .iter()
                .filter_map(|l| {
                    Some(SymbolUse {
                        path: uri_to_path(&l.uri)?,
                        line: l.range.start.line as usize + 1,
                    })
                })
                .filter(|u| !(u.path == p.path && u.line == line as usize))
                .collect();
            let young = p.client.started.elapsed() < std::time::Duration::from_secs(30);
            if !uses.is_empty() || !young || tries >= 10 {
                break uses;
            }
            tries += 1;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            p.client.wait_ready().await;
        };
        uses.sort();
        uses.dedup();
        Ok(Some(uses))
    }

    async fn related_tests(
        &self,
        path: &Path,
        line: usize,
        symbol: &str,
    ) -> Result<Option<Vec<RelatedTest>>, ToolError> {
        // Only rust-analyzer has the request; other servers are not asked what they would
        // refuse.
        let is_rust_analyzer = self.sup.locate(path).is_ok_and(|loc| {
            loc.program
                .file_stem()
                .is_some_and(|n| n.to_string_lossy().starts_with("rust-analyzer"))
        });
        if !is_rust_analyzer {
            return Ok(None);
        }
        let Some(p) = self.prepared(path, line, symbol).await? else {
            return Ok(None);
        };
        p.client.wait_ready().await;
        match crate::queries::related_tests::related_tests(&p).await {
            Ok(found) => Ok(Some(found)),
            // A server build without the extension: the walk through the uses still runs.
            Err(e) => {
                tracing::debug!(error = %e, "relatedTests not answered");
                Ok(None)
            }
        }
    }
}
