//! Which documents a server will publish diagnostics for after a change, by its own rule.
//!
//! Settling waits for the publishes a change is sure to bring, and for a quiet window after
//! them in case others follow. A server whose rule is known lets the list be made exact, so
//! the window only has to cover the rest of a burst:
//!
//! - **typescript-language-server** re-checks every open document after a change (one
//!   `geterr` over all of them, 300–800 ms after the change) and publishes a document only
//!   when its diagnostics were not empty or are not empty now: a clean file that stays clean
//!   gets no publish at all (waiting for one left every write of a clean file "pending"
//!   after the whole bound). Which of them will publish is asked of tsserver itself, through
//!   the server's `typescript.tsserverRequest` command (`syntacticDiagnosticsSync`,
//!   `semanticDiagnosticsSync`, `suggestionDiagnosticsSync`): tsserver has the change by
//!   then, and its answer is what its `geterr` will find.
//! - **clangd** rebuilds a changed file and every open file that includes it, directly or
//!   through headers, and publishes each of them (a file whose inputs did not change is not
//!   rebuilt and gets nothing): the callers list the written files as sure and the open
//!   includers (found by the `dependents` scan, which follows headers) as likely, and that
//!   is the whole list.
//!
//! - **pyright** and **basedpyright** re-check every file that imports a changed one and
//!   publish each file they re-check (every check is a new diagnostics version, published
//!   even when nothing in it changed): the open files found depending on a written one are
//!   sure to be published again, sooner or later — later than the bound of a write cut
//!   short, so the next change waits for them (see [`republishes_dependents`]).
//!
//! Any other server keeps the list its caller made.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_types::request::{ExecuteCommand, Request};
use lsp_types::{ExecuteCommandParams, WorkDoneProgressParams};
use serde_json::{Value, json};

use crate::client::LspClient;

/// The command of typescript-language-server that forwards a request to tsserver.
const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";

/// The tsserver requests whose answers together are what a document's publish holds.
const TSSERVER_CHECKS: [&str; 3] = [
    "syntacticDiagnosticsSync",
    "semanticDiagnosticsSync",
    "suggestionDiagnosticsSync",
];

/// How long one check may take (a large file's first semantic check).
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `client` publishes a document after a change only when its diagnostics were or
/// are not empty, re-checking every open document.
pub fn publishes_only_nonempty(client: &LspClient) -> bool {
    client.server.starts_with("typescript-language-server")
}

/// Whether `client` publishes, after a change, for the changed files and their open
/// includers only (clangd).
pub fn rebuilds_open_includers(client: &LspClient) -> bool {
    client.server.starts_with("clangd")
}

/// Whether `client` re-checks and publishes again every file that imports a changed one,
/// whatever the change did to it (pyright, basedpyright).
pub fn republishes_dependents(client: &LspClient) -> bool {
    let s = client.server.as_str();
    s.starts_with("pyright") || s.starts_with("basedpyright")
}

/// Whether `client` checks every file of its workspace, open or not (the table sets
/// pyright's and basedpyright's `diagnosticMode` to `workspace`).
pub fn loads_whole_workspace(client: &LspClient) -> bool {
    let workspace = Value::String("workspace".into());
    (client.server.starts_with("pyright")
        && client.setting("python.analysis.diagnosticMode") == workspace)
        || (client.server.starts_with("basedpyright")
            && client.setting("basedpyright.analysis.diagnosticMode") == workspace)
}

/// Whether a write is handed to `client` by closing the written documents and opening them
/// again rather than by `didChange`: pyright and basedpyright take a change for typing and
/// start analysing only 250 ms after the last one (an outline or a definition asked counts
/// too), but not after an open; checking the whole workspace, they keep a closed file in
/// their program, so the close publishes nothing. The files using what the write changed
/// are reopened too, at a new version, so their publish after the write is told apart from
/// one of the check their opening asked for (see `baseline::state_before`).
pub fn reopens_written_files(client: &LspClient) -> bool {
    // Only pyright and basedpyright are ever taken to check their whole workspace.
    loads_whole_workspace(client)
}

/// Whether asking `client` for a document's outline holds its analysis back: pyright and
/// basedpyright take an outline question for a user's interaction, as they take a change,
/// and start their next analysis only 250 ms after it. The items a write changes are then
/// read with the bundled grammars where they can be (see `changed_items::items_from_grammar`).
pub fn outline_holds_analysis(client: &LspClient) -> bool {
    republishes_dependents(client)
}

/// Whether every publish `client` makes of an open document carries the document's
/// version (pyright, basedpyright): one without is of the file as the disk has it — a
/// file it dropped from its program when it was closed — and is no check of the open text.
pub fn versions_open_documents(client: &LspClient) -> bool {
    republishes_dependents(client)
}

/// Makes `publishes` (sure to come) and `likely` (may come) exact for a change just sent
/// to `client`, by the server's rule; returns whether they now list every publish that will
/// come. A server without a known rule leaves them as they were; a check that fails leaves
/// that document where it was and adds the sure ones found (and the answer is false).
pub async fn refine(
    client: &LspClient,
    publishes: &mut Vec<(PathBuf, i32)>,
    likely: &mut Vec<(PathBuf, i32)>,
) -> bool {
    if rebuilds_open_includers(client) {
        return true;
    }
    if !publishes_only_nonempty(client) {
        return false;
    }
    let mut coming = Vec::new();
    // A document tsserver could not be asked about (a check past its timeout: a big file's
    // semantic check on a loaded machine) stays where the caller put it; the others are
    // still known, so one slow file does not cost the sure publishes of the rest.
    let mut exact = true;
    for path in client.open_paths().await {
        let Some(version) = client.open_version(&path).await else {
            continue;
        };
        // Never published (just opened): its first publish comes whatever it holds.
        // Published with diagnostics: the re-check publishes again, empty or not.
        let last = client.published(&path);
        let sure = match last {
            None => true,
            Some(p) if !p.items.is_empty() => true,
            Some(_) => match tsserver_finds_any(client, &path).await {
                Some(any) => any,
                None => {
                    exact = false;
                    continue;
                }
            },
        };
        if sure {
            coming.push((path, version));
        }
    }
    if exact {
        *publishes = coming;
        likely.clear();
        return true;
    }
    for (path, version) in coming {
        likely.retain(|(p, _)| *p != path);
        match publishes.iter_mut().find(|(p, _)| *p == path) {
            Some(known) => known.1 = version,
            None => publishes.push((path, version)),
        }
    }
    false
}

/// Whether tsserver finds any diagnostic in `path` now; `None` when it cannot be asked.
async fn tsserver_finds_any(client: &LspClient, path: &Path) -> Option<bool> {
    for check in TSSERVER_CHECKS {
        let params = serde_json::to_value(ExecuteCommandParams {
            command: TSSERVER_REQUEST.into(),
            arguments: vec![json!(check), json!({"file": path})],
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .ok()?;
        let answer = client
            .request_raw(ExecuteCommand::METHOD, Some(params), CHECK_TIMEOUT)
            .await
            .ok()?;
        let found = answer.get("body").and_then(Value::as_array)?;
        if !found.is_empty() {
            return Some(true);
        }
    }
    Some(false)
}
