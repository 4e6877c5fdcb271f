//! Which server each changed file goes to, for a write and for a preview alike: its
//! primary server and its diagnostics-only companions, each had within the diagnostics
//! bound; a file without a server is left out quietly (or named when auto_install starts
//! installing one), a server that cannot be had in time is named.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::client::LspClient;
use crate::servers::supervisor::{Located, ServerSupervisor};

/// `paths` grouped by server; files with no server (no marker, no binary, no entry) are
/// left out quietly, files whose server cannot be had in time are named in the notes.
pub(crate) async fn by_server(
    sup: &Arc<ServerSupervisor>,
    paths: Vec<PathBuf>,
) -> (Vec<(Arc<LspClient>, Vec<PathBuf>)>, Vec<String>) {
    let mut groups: Vec<(Arc<LspClient>, Vec<PathBuf>)> = Vec::new();
    let mut notes = Vec::new();
    for p in paths {
        // The primary server, then its diagnostics-only companions (ruff, eslint). A
        // missing server is quiet unless auto_install starts installing it.
        let loc = match sup.locate(&p) {
            Ok(loc) => loc,
            Err(_) => {
                if let Some(line) = sup.install_in_background(&p) {
                    notes.push(format!("{}: {line}", display(sup, &p)));
                }
                continue;
            }
        };
        for loc in std::iter::once(loc).chain(sup.companions(&p)) {
            match client_within_bound(sup, &loc).await {
                Ok(c) => match groups.iter_mut().find(|(g, _)| Arc::ptr_eq(g, &c)) {
                    Some((_, v)) => v.push(p.clone()),
                    None => groups.push((c, vec![p.clone()])),
                },
                Err(e) => notes.push(format!("{}: {e}", display(sup, &p))),
            }
        }
    }
    (groups, notes)
}

/// `p` relative to the workspace when it is inside it, as answers print it.
pub(crate) fn display(sup: &ServerSupervisor, p: &Path) -> String {
    match p.strip_prefix(sup.workspace()) {
        Ok(r) => r.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// The server for `loc`, waiting for its start no longer than the diagnostics bound: a
/// server that never answers `initialize` costs a write only that wait (the start goes
/// on in the background, bounded by its own timeout).
async fn client_within_bound(
    sup: &Arc<ServerSupervisor>,
    loc: &Located,
) -> Result<Arc<LspClient>, String> {
    let started = Arc::clone(sup);
    let loc2 = loc.clone();
    let start = tokio::spawn(async move { started.client_at(&loc2).await });
    match tokio::time::timeout(sup.config().diagnostics_wait(), start).await {
        Ok(Ok(Ok(c))) => Ok(c),
        Ok(Ok(Err(e))) => Err(format!("diagnostics unavailable: {e}")),
        Ok(Err(e)) => Err(format!("diagnostics unavailable: {e}")),
        Err(_) => Err(format!(
            "diagnostics pending — the {} server is still starting (no answer to `initialize` within {} ms); \
             ask `lsp` action `diagnostics` for this file later",
            loc.spec.language,
            sup.config().diagnostics_wait_ms
        )),
    }
}
