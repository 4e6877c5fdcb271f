//! Stopping the run's companions while nothing needs them.
//!
//! A diagnostics-only companion (ruff beside pyright, eslint beside tsserver) starts in a
//! moment and holds nothing a restart would have to rebuild, yet it sits in memory for
//! the whole run: one left idle for `[lsp] companion_idle_s` is shut down, and the next
//! write or check that needs it starts it again (its slot is emptied, so that start is
//! not counted as a crash). Primary servers stay up — their first analysis of the project
//! is what a restart would cost. Servers shared through a pool are the pool's to stop.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::ServerSupervisor;
use crate::client::LspClient;

/// The longest time between two looks for idle companions.
const LONGEST_TICK: Duration = Duration::from_secs(30);

impl ServerSupervisor {
    /// Starts the task that stops idle companions, when the configuration asks for it and
    /// the servers are this run's own; it ends with the run or the supervisor.
    pub(super) fn watch_idle_companions(self: &Arc<Self>) {
        let (Some(idle), None) = (self.cfg.companion_idle(), &self.pool) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let tick = (idle / 2).clamp(Duration::from_millis(100), LONGEST_TICK);
        let weak: Weak<Self> = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let Some(sup) = weak.upgrade() else {
                    return;
                };
                if sup.open_run().is_none() {
                    return;
                }
                sup.stop_idle_companions(idle).await;
            }
        });
    }

    /// Shuts down every running companion idle for at least `idle`; returns how many.
    pub(crate) async fn stop_idle_companions(&self, idle: Duration) -> usize {
        let slots: Vec<_> = match self.slots.lock() {
            Ok(s) => s
                .iter()
                .filter(|((language, _), _)| self.is_companion(language))
                .map(|(_, slot)| Arc::clone(slot))
                .collect(),
            Err(_) => return 0,
        };
        let mut stopped: Vec<Arc<LspClient>> = Vec::new();
        for slot in slots {
            // A start under way holds this lock: that companion is about to be used.
            let Ok(_start) = slot.start_lock.try_lock() else {
                continue;
            };
            let mut st = match slot.state.lock() {
                Ok(s) => s,
                Err(p) => p.into_inner(),
            };
            if st
                .client
                .as_ref()
                .is_some_and(|c| c.is_alive() && c.idle_for() >= idle)
                && let Some(c) = st.client.take()
            {
                st.stopped_idle = Some(idle);
                stopped.push(c);
            }
        }
        for c in &stopped {
            tracing::info!(server = %c.server, pid = ?c.pid(), "companion idle for {idle:?}: stopped until it is needed again");
            c.shutdown().await;
        }
        stopped.len()
    }

    /// Whether the table's entry for `language` is a diagnostics-only companion.
    fn is_companion(&self, language: &str) -> bool {
        self.table
            .iter()
            .any(|s| s.language == language && s.companion)
    }
}
