//! One write's pass over its observers: they run side by side, so a write's answer waits for
//! the longest of them rather than their sum, with one ordering kept between them.
//!
//! Diagnostics on write first shows the language servers the written files' text from
//! before the call (their state before the write), then the new text, then waits for
//! their verdict. An observer that asks the servers about the written text (the tests a
//! write reaches, through references) must not bring them the new text before that first
//! step is over, or the state before would already hold the write. So an observer that
//! brings the servers to the written text says so ([`crate::WriteObserver::syncs_servers`])
//! and opens its share of the pass's gate once they have it
//! ([`WritePass::servers_synced`]); the others wait for the gate
//! ([`WritePass::wait_servers_synced`]) and then run beside the verdict's wait. A share
//! also opens when its observer finishes or panics, so nothing waits for ever.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// The gate of one pass: open once every share is given up.
#[derive(Debug)]
struct Gate {
    shares: Mutex<usize>,
    open: watch::Sender<bool>,
}

impl Gate {
    fn new(shares: usize) -> Arc<Gate> {
        let (open, _) = watch::channel(shares == 0);
        Arc::new(Gate {
            shares: Mutex::new(shares),
            open,
        })
    }

    fn shares(&self) -> std::sync::MutexGuard<'_, usize> {
        match self.shares.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

/// One share of a pass's gate, held by an observer (or one of its parts, one per server)
/// until the servers have the written text; dropping it gives the share up.
#[derive(Debug)]
pub struct SyncShare {
    gate: Arc<Gate>,
}

impl Clone for SyncShare {
    fn clone(&self) -> Self {
        *self.gate.shares() += 1;
        SyncShare {
            gate: Arc::clone(&self.gate),
        }
    }
}

impl Drop for SyncShare {
    fn drop(&mut self) {
        let mut shares = self.gate.shares();
        *shares -= 1;
        if *shares == 0 {
            self.gate.open.send_replace(true);
        }
    }
}

/// What one observer of a write gets from the registry's pass over the write's observers,
/// which run side by side: an observer that brings the servers to the written text (after
/// showing them the text from before) gives up its share once they have it
/// ([`WritePass::servers_synced`]); one that asks them about the written text waits for
/// every share ([`WritePass::wait_servers_synced`]), then runs beside the others' waits.
#[derive(Debug)]
pub struct WritePass {
    gate: Arc<Gate>,
    /// This observer's own share, while it holds one.
    own: Mutex<Option<SyncShare>>,
    /// The observers of the pass still running, this one included (counted down as each
    /// pass is dropped, when its observer is done).
    running: Arc<watch::Sender<usize>>,
    /// The writing tool answers at once and checks in the background.
    at_once: bool,
}

impl Drop for WritePass {
    fn drop(&mut self) {
        self.running.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl WritePass {
    /// A pass of one observer alone (a writing tool observing its own write): nothing
    /// waits for it and it waits for nothing.
    pub fn detached() -> WritePass {
        WritePass {
            gate: Gate::new(0),
            own: Mutex::new(None),
            running: Arc::new(watch::channel(1).0),
            at_once: false,
        }
    }

    /// One pass per observer, in order: `syncs[i]` says whether observer `i` holds a share
    /// of the gate until it has brought the servers to the written text.
    pub fn for_observers(syncs: &[bool]) -> Vec<WritePass> {
        let gate = Gate::new(syncs.iter().filter(|s| **s).count());
        let running = Arc::new(watch::channel(syncs.len()).0);
        syncs
            .iter()
            .map(|&s| WritePass {
                gate: Arc::clone(&gate),
                own: Mutex::new(s.then(|| SyncShare {
                    gate: Arc::clone(&gate),
                })),
                running: Arc::clone(&running),
                at_once: false,
            })
            .collect()
    }

    /// This pass's writing tool answers at once and checks its writes in the background
    /// (see [`WritePass::answers_at_once`]).
    pub fn answering_at_once(mut self) -> Self {
        self.at_once = true;
        self
    }

    /// Whether the writing tool answers at once and checks its writes in the background
    /// (`lsp_rename`): an observer's optional work (following the change to its tests)
    /// then adds no wait to the answer.
    pub fn answers_at_once(&self) -> bool {
        self.at_once
    }

    fn own(&self) -> std::sync::MutexGuard<'_, Option<SyncShare>> {
        match self.own.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Another share of this observer's, for a part of it that syncs on its own (one per
    /// server); `None` when it holds none (any more).
    pub fn share(&self) -> Option<SyncShare> {
        self.own().clone()
    }

    /// This observer has brought the servers to the written text (its parts' shares, if
    /// any, still count until they drop).
    pub fn servers_synced(&self) {
        self.own().take();
    }

    /// Waits until every other observer of the pass is done: the answer would be ready
    /// but for this one (at once for a detached pass). An observer whose work is optional
    /// (following a change to its tests) bounds itself by this rather than hold the answer.
    pub async fn wait_others_done(&self) {
        let mut running = self.running.subscribe();
        let _ = running.wait_for(|n| *n <= 1).await;
    }

    /// Waits until every observer that brings the servers to the written text has done
    /// so (at once when there is none).
    pub async fn wait_servers_synced(&self) {
        let mut open = self.gate.open.subscribe();
        // The sender lives in the gate this pass holds: the wait ends only by opening.
        let _ = open.wait_for(|o| *o).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn opens_within(pass: &WritePass, ms: u64) -> bool {
        tokio::time::timeout(Duration::from_millis(ms), pass.wait_servers_synced())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn the_gate_opens_once_every_syncing_observer_and_its_parts_are_done() {
        let mut passes = WritePass::for_observers(&[true, false, true]);
        let c = passes.pop().unwrap();
        let b = passes.pop().unwrap();
        let a = passes.pop().unwrap();
        assert!(!opens_within(&b, 20).await);
        // One observer's part (one server) still syncing keeps the gate shut.
        let part = a.share().expect("a holds a share");
        a.servers_synced();
        assert!(a.share().is_none());
        assert!(!opens_within(&b, 20).await);
        drop(part);
        assert!(!opens_within(&b, 20).await);
        c.servers_synced();
        assert!(opens_within(&b, 20).await);
        assert!(opens_within(&a, 20).await);
    }

    #[tokio::test]
    async fn an_observer_that_ends_without_saying_so_opens_its_share() {
        let mut passes = WritePass::for_observers(&[false, true]);
        let syncing = passes.pop().unwrap();
        let waiting = passes.pop().unwrap();
        let waiter = tokio::spawn(async move {
            waiting.wait_servers_synced().await;
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        drop(syncing);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the gate opened")
            .unwrap();
        // No syncing observer at all, or a detached one: nothing to wait for.
        let alone = WritePass::for_observers(&[false]);
        assert!(opens_within(&alone[0], 20).await);
        assert!(opens_within(&WritePass::detached(), 20).await);
    }

    async fn others_done(pass: &WritePass) -> bool {
        tokio::time::timeout(Duration::from_millis(20), pass.wait_others_done())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn an_observer_hears_when_every_other_observer_is_done() {
        let mut passes = WritePass::for_observers(&[true, false, false]);
        let waiting = passes.pop().unwrap();
        let second = passes.pop().unwrap();
        let first = passes.pop().unwrap();
        assert!(!others_done(&waiting).await);
        drop(first);
        assert!(!others_done(&waiting).await);
        drop(second);
        assert!(others_done(&waiting).await);
        assert!(others_done(&WritePass::detached()).await);
    }
}
