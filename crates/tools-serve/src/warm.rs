//! Warm runs: runs opened ahead of demand, so a new session's first call does not pay for
//! opening one (configuration, trust, discovery, wiring every family).
//!
//! A run is opened before its client is known, but whether it has `ask_user` depends on the
//! client: it is wired only when the client can show forms (the registration rule). So each
//! workspace keeps two shelves: runs opened without a question channel, for clients without
//! elicitation, and runs opened with a [`LateElicitor`] that the session binds to its own
//! client when it takes the run. A session takes from the shelf that matches its client, and
//! a replacement is opened in the background at once. Nothing is shared between runs: a
//! taken run belongs to its session alone, exactly as a run opened for it would.
//!
//! By default no language server, kernel or adapter is started for a warm run: they would
//! hold memory and processes for sessions that may never come, and each starts on the first
//! call that needs it, as in any run. An operator who wants a new session's first `lsp`
//! answer to cost what a warm query costs names files (`warm_lsp_files`): each warm run then
//! asks for their symbols before it is shelved, which starts and initializes the language
//! server of each file's language in that run (and only in that run). Likewise kernels
//! (`warm_kernels`): each warm run evaluates an empty cell in each named language, so the
//! session's first `eval` finds its interpreter up. Both go through the run's own registry,
//! guard chain included (an approver that refuses exec calls refuses the kernel too).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tools_core::{ElicitOutcome, Elicitor, Registry, ToolError};
use tools_mcp::RegistryFactory;

/// An [`Elicitor`] whose client is bound after the run is opened: the session that takes a
/// warm run binds its own client's elicitor to it.
#[derive(Default)]
pub(crate) struct LateElicitor {
    client: OnceLock<Arc<dyn Elicitor>>,
}

impl LateElicitor {
    /// Binds the session's elicitor (once; later binds are ignored).
    fn bind(&self, client: Arc<dyn Elicitor>) {
        let _ = self.client.set(client);
    }
}

#[tools_core::async_trait]
impl Elicitor for LateElicitor {
    fn protocol_version(&self) -> String {
        self.client
            .get()
            .map(|c| c.protocol_version())
            .unwrap_or_default()
    }

    async fn elicit(
        &self,
        message: String,
        requested_schema: serde_json::Value,
        timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError> {
        match self.client.get() {
            Some(c) => c.elicit(message, requested_schema, timeout).await,
            None => Err(ToolError::not_available(
                "this run has no client to ask yet",
            )),
        }
    }
}

/// What each warm run starts before it is shelved.
#[derive(Debug, Clone, Default)]
pub struct WarmAhead {
    /// Workspace-relative files whose language servers are started (`lsp symbols`).
    pub lsp_files: Vec<String>,
    /// `eval` languages (`python`, `javascript`) whose kernels are started.
    pub kernels: Vec<String>,
}

/// One run opened ahead.
struct WarmRun {
    registry: Arc<Registry>,
    /// Set for runs opened with a question channel.
    late: Option<Arc<LateElicitor>>,
}

/// The warm runs of one workspace.
pub(crate) struct WarmPool {
    target: usize,
    /// Files whose language servers each warm run starts before it is shelved.
    lsp_files: Vec<String>,
    /// Languages whose `eval` kernels each warm run starts before it is shelved.
    kernels: Vec<String>,
    cold: RegistryFactory,
    /// Runs for clients without elicitation.
    plain: Mutex<VecDeque<WarmRun>>,
    /// Runs for clients with elicitation (a [`LateElicitor`] each).
    asking: Mutex<VecDeque<WarmRun>>,
    refill: Notify,
    /// Set once both shelves were full for the first time.
    filled: std::sync::atomic::AtomicBool,
    stop: CancellationToken,
}

impl WarmPool {
    /// A pool keeping `target` runs of each kind, opened by `cold`, with what `ahead`
    /// names started; starts filling at once.
    pub(crate) fn start(
        target: usize,
        ahead: WarmAhead,
        cold: RegistryFactory,
        stop: CancellationToken,
    ) -> Arc<Self> {
        let pool = Arc::new(WarmPool {
            target,
            lsp_files: ahead.lsp_files,
            kernels: ahead.kernels,
            cold,
            plain: Default::default(),
            asking: Default::default(),
            refill: Notify::new(),
            filled: (target == 0).into(),
            stop,
        });
        if target > 0 {
            tokio::spawn(Arc::clone(&pool).keep_filled());
        }
        pool
    }

    /// Whether the pool was full once since it started (always, with no target).
    pub(crate) fn filled(&self) -> bool {
        self.filled.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many runs wait on the shelves now.
    pub(crate) fn ready(&self) -> usize {
        let len = |s: &Mutex<VecDeque<WarmRun>>| s.lock().map(|s| s.len()).unwrap_or(0);
        len(&self.plain) + len(&self.asking)
    }

    /// Child processes of the runs waiting on the shelves (language servers started ahead).
    pub(crate) fn children(&self) -> usize {
        [&self.plain, &self.asking]
            .iter()
            .filter_map(|s| s.lock().ok())
            .map(|s| {
                s.iter()
                    .map(|w| w.registry.run().child_count())
                    .sum::<usize>()
            })
            .sum()
    }

    /// A registry factory for one session: a warm run of the matching kind when one
    /// waits, else a run opened now.
    pub(crate) fn factory(self: &Arc<Self>) -> RegistryFactory {
        let pool = Arc::clone(self);
        Arc::new(move |elicitor: Option<Arc<dyn Elicitor>>| {
            let taken = pool.take(elicitor.is_some());
            match taken {
                Some(warm) => {
                    if let (Some(late), Some(client)) = (&warm.late, elicitor) {
                        late.bind(client);
                    }
                    tracing::debug!(left = pool.ready(), "a session took a warm run");
                    Box::pin(std::future::ready(Ok(warm.registry)))
                }
                None => (pool.cold)(elicitor),
            }
        })
    }

    fn shelf(&self, asking: bool) -> &Mutex<VecDeque<WarmRun>> {
        if asking { &self.asking } else { &self.plain }
    }

    fn take(&self, asking: bool) -> Option<WarmRun> {
        if self.target == 0 {
            return None;
        }
        let run = self.shelf(asking).lock().ok()?.pop_front();
        self.refill.notify_one();
        run
    }

    /// Opens runs until both shelves hold `target`, whenever one is taken, until stopped.
    async fn keep_filled(self: Arc<Self>) {
        loop {
            for asking in [false, true] {
                while self.shelf(asking).lock().map(|s| s.len()).unwrap_or(0) < self.target {
                    if self.stop.is_cancelled() {
                        return;
                    }
                    let late = asking.then(|| Arc::new(LateElicitor::default()));
                    let elicitor = late.clone().map(|l| l as Arc<dyn Elicitor>);
                    match (self.cold)(elicitor).await {
                        Ok(registry) => {
                            self.start_servers(&registry).await;
                            if let Ok(mut shelf) = self.shelf(asking).lock() {
                                shelf.push_back(WarmRun { registry, late });
                            }
                        }
                        Err(e) => {
                            tracing::warn!("a warm run could not be opened: {e}");
                            tokio::select! {
                                _ = self.stop.cancelled() => return,
                                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                            }
                        }
                    }
                }
            }
            self.filled.store(true, std::sync::atomic::Ordering::SeqCst);
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = self.refill.notified() => {}
            }
        }
    }

    /// Starts the language servers of `lsp_files` in a warm run; a file no server can
    /// answer for is logged and skipped (the run is shelved all the same).
    async fn start_servers(&self, registry: &Arc<Registry>) {
        for file in &self.lsp_files {
            let args = serde_json::json!({"action": "symbols", "file": file});
            match registry
                .call(tools_core::Surface::READ_ONLY, "lsp", args)
                .await
            {
                Ok(_) => tracing::debug!(file, "a warm run's language server is up"),
                Err(e) => tracing::warn!(file, "a warm run could not start a language server: {e}"),
            }
        }
        for language in &self.kernels {
            let args = serde_json::json!({
                "code": "None",
                "language": language,
                "description": "start the kernel ahead of the session",
            });
            match registry.call(tools_core::Surface::FULL, "eval", args).await {
                Ok(_) => tracing::debug!(language, "a warm run's kernel is up"),
                Err(e) => tracing::warn!(language, "a warm run could not start a kernel: {e}"),
            }
        }
    }

    /// Closes every run still waiting (their processes, if any, are killed).
    pub(crate) async fn close(&self) {
        let mut runs = Vec::new();
        for asking in [false, true] {
            if let Ok(mut shelf) = self.shelf(asking).lock() {
                runs.extend(shelf.drain(..));
            }
        }
        for warm in runs {
            warm.registry.run().close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tools_core::{RegistryBuilder, Run, RunOptions};

    /// A factory of empty runs that counts how many it opened.
    fn counting(root: std::path::PathBuf, opened: Arc<AtomicUsize>) -> RegistryFactory {
        Arc::new(move |_| {
            let root = root.clone();
            let opened = Arc::clone(&opened);
            Box::pin(async move {
                opened.fetch_add(1, Ordering::SeqCst);
                RegistryBuilder::new(Run::new(RunOptions::at(&root)?)?).build()
            })
        })
    }

    async fn until(what: impl Fn() -> bool) {
        tokio::time::timeout(Duration::from_secs(10), async {
            while !what() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn a_taken_run_is_replaced_and_never_handed_out_twice() {
        let dir = tempfile::tempdir().unwrap();
        let opened = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let pool = WarmPool::start(
            1,
            WarmAhead::default(),
            counting(dir.path().into(), Arc::clone(&opened)),
            stop.clone(),
        );
        until(|| pool.filled()).await;
        assert_eq!((pool.ready(), opened.load(Ordering::SeqCst)), (2, 2));
        let factory = pool.factory();
        let first = factory(None).await.unwrap();
        // Taken from the shelf, not opened for the session; a replacement follows.
        until(|| pool.ready() == 2).await;
        assert_eq!(opened.load(Ordering::SeqCst), 3);
        let second = factory(None).await.unwrap();
        assert!(!Arc::ptr_eq(first.run(), second.run()));
        stop.cancel();
        pool.close().await;
        assert_eq!(pool.ready(), 0);
        // Without a target nothing is opened ahead.
        let idle = WarmPool::start(
            0,
            WarmAhead::default(),
            counting(dir.path().into(), Arc::clone(&opened)),
            stop,
        );
        let before = opened.load(Ordering::SeqCst);
        idle.factory()(None).await.unwrap();
        assert!(idle.filled());
        assert_eq!(opened.load(Ordering::SeqCst), before + 1);
    }

    #[tokio::test]
    async fn a_late_elicitor_asks_the_client_bound_to_it() {
        struct Client;
        #[tools_core::async_trait]
        impl Elicitor for Client {
            fn protocol_version(&self) -> String {
                "2025-11-25".into()
            }
            async fn elicit(
                &self,
                _: String,
                _: serde_json::Value,
                _: Duration,
            ) -> Result<ElicitOutcome, ToolError> {
                Ok(ElicitOutcome::Decline)
            }
        }
        let late = LateElicitor::default();
        let unbound = late
            .elicit("?".into(), serde_json::json!({}), Duration::from_secs(1))
            .await;
        assert!(unbound.is_err());
        late.bind(Arc::new(Client));
        assert_eq!(late.protocol_version(), "2025-11-25");
        let answer = late
            .elicit("?".into(), serde_json::json!({}), Duration::from_secs(1))
            .await
            .unwrap();
        assert!(matches!(answer, ElicitOutcome::Decline));
    }
}
