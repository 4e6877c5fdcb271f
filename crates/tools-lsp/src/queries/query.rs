//! What every positional query does first: resolve the file in the workspace jail, get (or
//! start) its server, wait for indexing, sync the documents with the disk, and turn
//! line + symbol into the server's position.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use lsp_types::Position;
use serde_json::json;
use tools_core::{Run, ToolError, ToolOutput};

use crate::client::position::{find_symbol, line_of, to_lsp_character};
use crate::client::{DocState, LspClient};
use crate::error::LspError;
use crate::servers::supervisor::ServerSupervisor;

/// A resolved positional query.
pub struct Prepared {
    /// The file.
    pub path: PathBuf,
    /// Its server.
    pub client: Arc<LspClient>,
    /// The synced document.
    pub doc: DocState,
    /// The server position of the symbol.
    pub pos: Position,
    /// The symbol as given.
    pub symbol: String,
    /// Whether the server had finished loading and indexing (an answer given otherwise
    /// may be incomplete, and says so).
    pub ready: bool,
}

/// The first line of an answer given while `client` is still indexing, if it is, with how
/// far it is when the server reports it.
pub fn indexing_caveat(client: &LspClient) -> Option<String> {
    client.still_indexing().then(|| {
        let so_far = client
            .indexing_progress()
            .map(|p| format!(" ({})", crate::answer::budget::shorten(&p, 120)))
            .unwrap_or_default();
        format!(
            "(not final: {} is still indexing{so_far}; this answer may be incomplete — ask again shortly)",
            client.server
        )
    })
}

/// `answer`, unless it is a timeout while `client` is still loading or indexing: then an
/// answer that leads with how far the indexing is and says nothing came within the call's
/// bound — never a bare timeout for what is really "not yet".
pub fn unless_still_indexing(
    client: &LspClient,
    answer: Result<ToolOutput, ToolError>,
) -> Result<ToolOutput, ToolError> {
    match answer {
        Err(ToolError::TimedOut(why)) => match indexing_caveat(client) {
            Some(caveat) => Ok(ToolOutput::text(format!(
                "{caveat}\nno answer within the call's bound while it indexes: {why}"
            ))
            .with_structured(json!({"final": false, "timed_out": why}))),
            None => Err(ToolError::TimedOut(why)),
        },
        other => other,
    }
}

/// Resolves `file` (must be an existing file inside the workspace).
pub fn resolve_file(run: &Run, file: Option<&str>) -> Result<PathBuf, ToolError> {
    let Some(file) = file else {
        return Err(ToolError::invalid("file", "this action needs `file`"));
    };
    let path = run.workspace().resolve(file)?;
    if !path.exists() {
        return Err(ToolError::invalid(
            "file",
            format!("`{file}` does not exist in the workspace"),
        ));
    }
    if !path.is_file() {
        return Err(ToolError::invalid(
            "file",
            format!("`{file}` is not a file"),
        ));
    }
    Ok(path)
}

/// Syncs every open document and `path`, after waiting (bounded) for the server to load the
/// project; its indexing and checks go on behind the query.
///
/// A file opened for the first time brings the files importing it along (for servers that
/// diagnose only open documents): the server then has them open, with the state they have
/// now, before anything writes to this file — so a later write that breaks them is seen.
pub async fn synced(
    sup: &ServerSupervisor,
    client: &LspClient,
    path: &std::path::Path,
) -> Result<DocState, ToolError> {
    let waited = std::time::Instant::now();
    client.wait_answerable().await;
    tracing::debug!(
        server = %client.server,
        ms = waited.elapsed().as_millis() as u64,
        "query waited for the project's first load"
    );
    client.flush_external(&[]).await?;
    if !client.is_open(path).await {
        let _ = crate::diagnostics::dependents::open_importers(sup, client, &[path.to_path_buf()])
            .await;
    }
    let doc = client.sync_file(path).await?;
    client.settle_after_first_open(&doc).await;
    Ok(doc)
}

/// The whole preamble of a positional query.
pub async fn prepare(
    run: &Run,
    sup: &ServerSupervisor,
    file: Option<&str>,
    line: Option<u32>,
    symbol: Option<&str>,
    occurrence: Option<u32>,
) -> Result<Prepared, ToolError> {
    let path = resolve_file(run, file)?;
    let Some(line) = line else {
        return Err(ToolError::invalid(
            "line",
            "this action needs `line` (1-based) and `symbol` (a name on that line)",
        ));
    };
    let Some(symbol) = symbol else {
        return Err(ToolError::invalid(
            "symbol",
            "this action needs `symbol`: the name on that line to ask about (columns are never guessed)",
        ));
    };
    if line == 0 {
        return Err(ToolError::invalid(
            "line",
            "`line` is 1-based; the first line is 1",
        ));
    }
    let client = sup.client_for(&path).await?;
    let doc = synced(sup, &client, &path).await?;
    let n_lines = doc.text.split('\n').count();
    let Some(text) = line_of(&doc.text, line as usize - 1).filter(|_| (line as usize) <= n_lines)
    else {
        return Err(ToolError::invalid(
            "line",
            format!(
                "line {line} is past the end of {} ({} lines)",
                run.workspace().display(&path),
                n_lines
            ),
        ));
    };
    let byte =
        find_symbol(text, line, symbol, occurrence).map_err(|m| ToolError::invalid("symbol", m))?;
    let pos = Position {
        line: line - 1,
        character: to_lsp_character(text, byte, client.encoding),
    };
    let ready = !client.still_indexing();
    Ok(Prepared {
        path,
        client,
        doc,
        pos,
        symbol: symbol.to_string(),
        ready,
    })
}

/// Runs `f` and, while the server is young and answers empty (or "content modified"),
/// tries again a few times: a server still loading its project answers nothing rather
/// than waiting.
pub async fn with_warmup<T, F, Fut>(
    client: &LspClient,
    is_empty: impl Fn(&T) -> bool,
    f: F,
) -> Result<T, LspError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, LspError>>,
{
    let mut tries = 0;
    loop {
        let r = f().await;
        let retry = match &r {
            Ok(v) => is_empty(v),
            Err(LspError::Server { code, .. }) => {
                crate::client::ask_again_later(*code) || *code == crate::client::REQUEST_CANCELLED
            }
            Err(_) => false,
        };
        let young = client.started.elapsed() < Duration::from_secs(30);
        if !retry || !young || tries >= 6 {
            return r;
        }
        tries += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.wait_answerable().await;
    }
}

/// Runs `f`, asking again (a few times, briefly spaced) while the server answers "content
/// modified" or "server cancelled": it was catching up with a change (rust-analyzer under
/// load), whatever its age.
pub async fn asking_again<T, F, Fut>(f: F) -> Result<T, LspError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, LspError>>,
{
    let mut tries = 0;
    loop {
        match f().await {
            Err(LspError::Server { code, .. })
                if crate::client::ask_again_later(code) && tries < 8 =>
            {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            other => return other,
        }
    }
}
