//! Calls waiting on a human's answer under the newest protocol, kept where every request of
//! the server can reach them. Over sessionless HTTP each request is served by a handler of
//! its own, so the call that asked and the retry that answers meet only here; on stdio the
//! one server keeps its own table.
//!
//! A question is parked under a handle of 128 random bits (the `requestState` the client
//! echoes), bound to the caller's credential ([`Caller`]), to the tool and arguments of the
//! call that asked, and to a deadline: the question's own timeout. A handle is good for one
//! answer — the retry takes the call out, and the call's next question is parked under a new
//! handle — so a replayed state is refused. A handle that was never issued, was already
//! answered, has expired or belongs to another caller is refused the same way, and whatever
//! call it names is left exactly as it was.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use serde_json::Value;
use tools_core::{CallError, ElicitOutcome, Registry, ToolOutput};

use crate::elicit::Question;

/// Who is calling: a key of the credential the request was accepted with (the HTTP front
/// puts it in the request's extensions). A parked question answers only to the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub String);

/// How many questions one caller may leave waiting at once; the oldest is dropped beyond.
pub const MAX_PARKED_PER_CALLER: usize = 16;

/// A tool call running in the background while its question is out with the client.
pub(crate) struct PendingCall {
    pub(crate) task: tokio::task::JoinHandle<Result<ToolOutput, CallError>>,
    /// The call's own token: cancelled when the client cancels any round of it.
    pub(crate) cancel: tokio_util::sync::CancellationToken,
    pub(crate) questions: tokio::sync::mpsc::UnboundedReceiver<Question>,
    pub(crate) awaiting: Option<tokio::sync::oneshot::Sender<ElicitOutcome>>,
    /// The run the call was started in, when it was the request's own (sessionless HTTP):
    /// the call keeps it open across rounds and closes it when it ends or is dropped.
    pub(crate) run: Option<Arc<Registry>>,
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(registry) = self.run.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move { registry.run().close().await });
        }
    }
}

/// What a parked call was asked with, so only the same call's retry can resume it.
pub(crate) struct CallKey {
    pub(crate) caller: Caller,
    pub(crate) tool: String,
    pub(crate) args: Value,
}

struct Parked {
    call: PendingCall,
    key: CallKey,
    parked_at: Instant,
    expires: Instant,
}

/// The questions waiting on an answer, by handle, and the calls running as tasks with the
/// caller each answers to.
#[derive(Default)]
pub struct ParkedCalls {
    calls: Mutex<HashMap<String, Parked>>,
    pub(crate) tasks: rmcp::task_manager::TaskManager,
    task_owners: Mutex<HashMap<String, Caller>>,
}

impl ParkedCalls {
    /// An empty table, to share between every handler of one server.
    pub fn new() -> Arc<Self> {
        Arc::new(ParkedCalls::default())
    }

    /// How many questions wait on an answer now.
    pub fn waiting(&self) -> usize {
        self.calls.lock().map_or(0, |c| c.len())
    }

    /// Parks `call` until its answer comes or `ttl` passes, and returns its handle. The
    /// caller's oldest question is dropped when it already has
    /// [`MAX_PARKED_PER_CALLER`] waiting.
    pub(crate) fn park(
        self: &Arc<Self>,
        call: PendingCall,
        key: CallKey,
        ttl: Duration,
    ) -> Result<String, McpError> {
        let handle = new_handle()?;
        let now = Instant::now();
        let mut dropped = Vec::new();
        {
            let mut calls = self.calls.lock().map_err(|_| poisoned())?;
            dropped.extend(take_expired(&mut calls, now));
            let mut mine: Vec<(Instant, String)> = calls
                .iter()
                .filter(|(_, p)| p.key.caller == key.caller)
                .map(|(h, p)| (p.parked_at, h.clone()))
                .collect();
            mine.sort();
            let excess = (mine.len() + 1).saturating_sub(MAX_PARKED_PER_CALLER);
            for (_, old) in mine.into_iter().take(excess) {
                dropped.extend(calls.remove(&old));
            }
            calls.insert(
                handle.clone(),
                Parked {
                    call,
                    key,
                    parked_at: now,
                    expires: now + ttl,
                },
            );
        }
        // Dropping a call aborts its task and may close its run: outside the lock.
        drop(dropped);
        let table = Arc::downgrade(self);
        let expiring = handle.clone();
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            expire(&table, &expiring);
        });
        Ok(handle)
    }

    /// Takes the call parked under `handle` for its answer, when `key` is the one it was
    /// asked with; otherwise refuses and leaves the table as it was.
    pub(crate) fn take(&self, handle: &str, key: &CallKey) -> Result<PendingCall, McpError> {
        let now = Instant::now();
        let mut calls = self.calls.lock().map_err(|_| poisoned())?;
        let Some(parked) = calls.get(handle).filter(|p| p.key.caller == key.caller) else {
            return Err(McpError::invalid_params(
                "unknown requestState: no question of yours waits under it (it was never \
                 issued to this caller, or was already answered); call the tool again without \
                 requestState",
                None,
            ));
        };
        if parked.expires <= now {
            let late = now.duration_since(parked.expires).as_secs();
            let allowed = parked.expires.duration_since(parked.parked_at).as_secs();
            if let Some(expired) = calls.remove(handle) {
                drop(calls);
                drop(expired);
            }
            return Err(McpError::invalid_params(
                format!(
                    "this requestState expired {late} s ago (its question had to be answered \
                     within {allowed} s); call the tool again without requestState"
                ),
                None,
            ));
        }
        if parked.key.tool != key.tool || parked.key.args != key.args {
            return Err(McpError::invalid_params(
                format!(
                    "this requestState belongs to another call (of `{}`): retry with the tool \
                     name and arguments of the call that asked",
                    parked.key.tool
                ),
                None,
            ));
        }
        calls.remove(handle).map(|p| p.call).ok_or_else(poisoned)
    }
}

fn expire(table: &Weak<ParkedCalls>, handle: &str) {
    let Some(table) = table.upgrade() else {
        return;
    };
    let expired = table.calls.lock().ok().and_then(|mut calls| {
        let due = calls
            .get(handle)
            .is_some_and(|p| p.expires <= Instant::now());
        if due { calls.remove(handle) } else { None }
    });
    if expired.is_some() {
        tracing::debug!("a question expired unanswered; its call is dropped");
    }
}

fn take_expired(calls: &mut HashMap<String, Parked>, now: Instant) -> Vec<Parked> {
    let due: Vec<String> = calls
        .iter()
        .filter(|(_, p)| p.expires <= now)
        .map(|(h, _)| h.clone())
        .collect();
    due.iter().filter_map(|h| calls.remove(h)).collect()
}

impl ParkedCalls {
    /// Records that the task `id` answers to `caller` only.
    pub(crate) fn own_task(&self, id: &str, caller: Caller) {
        if let Ok(mut owners) = self.task_owners.lock() {
            owners.insert(id.to_string(), caller);
        }
    }

    /// Refuses `caller` a task another caller started, as if it did not exist (nothing of
    /// it is touched).
    pub(crate) fn check_task(&self, id: &str, caller: &Caller) -> Result<(), McpError> {
        let owners = self.task_owners.lock().map_err(|_| poisoned())?;
        match owners.get(id) {
            Some(owner) if owner != caller => Err(McpError::invalid_params(
                format!("unknown task {id}: no task of yours has this id"),
                None,
            )),
            _ => Ok(()),
        }
    }
}

/// 128 bits from the operating system's random source, as 32 hex digits.
fn new_handle() -> Result<String, McpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        McpError::internal_error(format!("no random source for a requestState: {e}"), None)
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn poisoned() -> McpError {
    McpError::internal_error("the table of waiting questions is poisoned", None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call() -> PendingCall {
        let (_tx, questions) = tokio::sync::mpsc::unbounded_channel();
        PendingCall {
            task: tokio::spawn(std::future::pending()),
            cancel: Default::default(),
            questions,
            awaiting: None,
            run: None,
        }
    }

    fn key(caller: &str, tool: &str, args: Value) -> CallKey {
        CallKey {
            caller: Caller(caller.into()),
            tool: tool.into(),
            args,
        }
    }

    fn message(e: McpError) -> String {
        e.message.to_string()
    }

    #[tokio::test]
    async fn a_handle_answers_once_and_only_to_its_caller_and_call() {
        let table = ParkedCalls::new();
        let asked = || key("alice", "ask_user", json!({"question": "which?"}));
        let handle = table
            .park(call(), asked(), Duration::from_secs(60))
            .unwrap();
        assert_eq!(handle.len(), 32);
        assert!(handle.chars().all(|c| c.is_ascii_hexdigit()), "{handle}");
        let other = table
            .park(call(), asked(), Duration::from_secs(60))
            .unwrap();
        assert_ne!(handle, other);

        let refused = message(
            table
                .take(
                    &handle,
                    &key("mallory", "ask_user", json!({"question": "which?"})),
                )
                .err()
                .unwrap(),
        );
        assert!(refused.starts_with("unknown requestState"), "{refused}");
        let refused = message(
            table
                .take(
                    &handle,
                    &key("alice", "eval", json!({"question": "which?"})),
                )
                .err()
                .unwrap(),
        );
        assert!(
            refused.contains("belongs to another call (of `ask_user`)"),
            "{refused}"
        );
        assert_eq!(table.waiting(), 2, "a refused answer changed the table");

        assert!(table.take(&handle, &asked()).is_ok());
        let replayed = message(table.take(&handle, &asked()).err().unwrap());
        assert!(replayed.starts_with("unknown requestState"), "{replayed}");
        let forged = message(
            table
                .take("00000000000000000000000000000001", &asked())
                .err()
                .unwrap(),
        );
        assert!(forged.starts_with("unknown requestState"), "{forged}");
        assert_eq!(table.waiting(), 1);
    }

    #[tokio::test]
    async fn a_question_past_its_deadline_is_refused_and_dropped() {
        let table = ParkedCalls::new();
        let asked = || key("alice", "ask_user", json!({}));
        let handle = table.park(call(), asked(), Duration::ZERO).unwrap();
        let late = message(table.take(&handle, &asked()).err().unwrap());
        assert!(
            late.starts_with("this requestState expired") && late.contains("within 0 s"),
            "{late}"
        );
        assert_eq!(table.waiting(), 0);
    }

    #[tokio::test]
    async fn a_caller_keeps_at_most_its_share_of_questions() {
        let table = ParkedCalls::new();
        let first = table
            .park(
                call(),
                key("alice", "ask_user", json!(0)),
                Duration::from_secs(60),
            )
            .unwrap();
        table
            .park(
                call(),
                key("bob", "ask_user", json!(0)),
                Duration::from_secs(60),
            )
            .unwrap();
        for i in 1..MAX_PARKED_PER_CALLER {
            table
                .park(
                    call(),
                    key("alice", "ask_user", json!(i)),
                    Duration::from_secs(60),
                )
                .unwrap();
        }
        assert_eq!(table.waiting(), MAX_PARKED_PER_CALLER + 1);
        table
            .park(
                call(),
                key("alice", "ask_user", json!("one more")),
                Duration::from_secs(60),
            )
            .unwrap();
        assert_eq!(table.waiting(), MAX_PARKED_PER_CALLER + 1);
        // Alice's oldest went; Bob's stayed.
        let gone = message(
            table
                .take(&first, &key("alice", "ask_user", json!(0)))
                .err()
                .unwrap(),
        );
        assert!(gone.starts_with("unknown requestState"), "{gone}");
    }

    #[test]
    fn a_task_answers_only_to_the_caller_that_started_it() {
        let table = ParkedCalls::default();
        table.own_task("t-1", Caller("alice".into()));
        assert!(table.check_task("t-1", &Caller("alice".into())).is_ok());
        let refused = message(
            table
                .check_task("t-1", &Caller("bob".into()))
                .err()
                .unwrap(),
        );
        assert_eq!(refused, "unknown task t-1: no task of yours has this id");
        // A task nobody owns here is left for the task table to call unknown.
        assert!(table.check_task("t-2", &Caller("bob".into())).is_ok());
    }
}
