//! Workspace symbol searches that outlive the call that asked: a server's first search of a
//! large workspace can take longer than one call's bound (pyright parses every file of
//! Django's 2,814 on it while its workspace analysis runs), and a search cancelled at that
//! bound starts over on the next ask — which then never answers. So a search goes on in
//! the background, bounded by [`SEARCH_BOUND`]; the call waits for it only up to the
//! request timeout, and the next ask of the same server for the same query takes its
//! answer (or waits for it again) instead of starting anew.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use lsp_types::WorkspaceSymbolResponse;

use crate::client::LspClient;
use crate::error::LspError;

/// Longest one search runs in the background before it is cancelled.
pub const SEARCH_BOUND: Duration = Duration::from_secs(300);

/// Longest a finished answer nobody took is kept for the next ask: older, it may predate
/// edits.
const KEPT: Duration = Duration::from_secs(120);

/// What a search came to.
pub type Found = Result<Option<WorkspaceSymbolResponse>, LspError>;

type Search = Shared<BoxFuture<'static, (Found, Instant)>>;

/// The run's searches under way or finished and not yet taken: (server pid, query) → the
/// search.
#[derive(Default)]
pub struct SearchesInFlight(Mutex<HashMap<(i32, String), Search>>);

/// How a wait for a search ended.
pub enum Waited {
    /// It answered.
    Done(Found),
    /// It is still searching after the wait; it goes on.
    StillSearching,
}

impl SearchesInFlight {
    /// The answer of `client`'s search for `query` — the one under way, or one started
    /// now with `ask` — waited for at most `wait`.
    pub async fn wait_for(
        &self,
        client: &Arc<LspClient>,
        query: &str,
        wait: Duration,
        ask: impl FnOnce() -> BoxFuture<'static, Found>,
    ) -> Waited {
        let key = (client.pid(), query.to_string());
        let search = {
            let Ok(mut map) = self.0.lock() else {
                return Waited::Done(ask().await);
            };
            // A finished answer left too long is no longer this workspace's.
            let stale = map
                .get(&key)
                .and_then(|s| s.peek())
                .is_some_and(|(_, at)| at.elapsed() > KEPT);
            if stale {
                map.remove(&key);
            }
            map.entry(key.clone())
                .or_insert_with(|| {
                    let task = tokio::spawn(ask());
                    async move {
                        let found = match task.await {
                            Ok(found) => found,
                            Err(e) => Err(LspError::Other(format!("the search ended: {e}"))),
                        };
                        (found, Instant::now())
                    }
                    .boxed()
                    .shared()
                })
                .clone()
        };
        match tokio::time::timeout(wait, search).await {
            Ok((found, _)) => {
                // Taken: the next ask searches afresh.
                if let Ok(mut map) = self.0.lock() {
                    map.remove(&key);
                }
                Waited::Done(found)
            }
            Err(_) => Waited::StillSearching,
        }
    }
}
