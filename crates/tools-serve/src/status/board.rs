//! What the status page knows that nothing else keeps: the facts of each open session
//! (client, protocol, workspace, since when, calls so far), the calls running now (with a
//! way to cancel each) and the last [`RECENT`] calls that ended, with each tool's recent
//! durations for its percentiles.
//!
//! Fed by the same hook that counts calls for `/metrics` (the session handler's call
//! record), so no call escapes either. Holds names, durations and outcomes only: a call's
//! arguments and its answer never reach it, and the one piece of text it keeps — the first
//! line of an error — is cut short and has the server's token and environment values
//! blanked out before it is stored.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tools_core::lock_unpoisoned as lock;

use crate::metrics::Outcome;

/// Calls kept after they end.
pub(crate) const RECENT: usize = 200;
/// Durations kept per tool for its percentiles.
const SAMPLES_PER_TOOL: usize = 500;
/// The longest error line kept, in characters.
const ERROR_LINE_CHARS: usize = 200;
/// An environment value shorter than this is too common to blank out (`1`, `true`, `en`).
const SHORTEST_SECRET: usize = 8;
/// Variables every process has whose values are places and settings, not secrets: blanking
/// them would hide the paths an error names (`PWD` is often the workspace itself).
const NOT_SECRET: [&str; 12] = [
    "PATH", "HOME", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR",
    "HOSTNAME", "_",
];

/// What an `initialize` said of its client, and where the session was opened.
#[derive(Debug, Clone)]
pub(crate) struct SessionFacts {
    pub(crate) client_name: String,
    pub(crate) client_version: String,
    pub(crate) protocol: String,
    pub(crate) workspace: String,
    pub(crate) trusted: bool,
    pub(crate) opened: Instant,
    pub(crate) calls: u64,
    /// The conversation id of the session's run, once it is open (the pool names its
    /// sharers by it).
    pub(crate) run: Option<String>,
}

/// A call under way.
#[derive(Debug, Clone)]
pub(crate) struct RunningCall {
    pub(crate) id: u64,
    pub(crate) tool: String,
    pub(crate) session: String,
    pub(crate) started: Instant,
    cancel: CancellationToken,
}

/// A call that ended.
#[derive(Debug, Clone)]
pub(crate) struct EndedCall {
    pub(crate) tool: String,
    pub(crate) session: String,
    pub(crate) took: Duration,
    pub(crate) outcome: Outcome,
    pub(crate) error: Option<String>,
    pub(crate) ended: Instant,
}

/// The board (see the module doc).
#[derive(Debug)]
pub(crate) struct Board {
    pub(crate) started: Instant,
    sessions: Mutex<HashMap<String, SessionFacts>>,
    running: Mutex<Vec<RunningCall>>,
    recent: Mutex<VecDeque<EndedCall>>,
    durations: Mutex<HashMap<String, VecDeque<Duration>>>,
    next_call: AtomicU64,
    /// Texts never stored: the server's token and its environment's values.
    secrets: Vec<String>,
}

impl Board {
    /// An empty board that blanks `token` (when there is one) and the values of this
    /// process's environment (but for the usual places and settings, [`NOT_SECRET`]) out of
    /// the error lines it keeps.
    pub(crate) fn new(token: Option<&str>) -> Self {
        let mut secrets: Vec<String> = std::env::vars_os()
            .filter(|(k, _)| {
                let name = k.to_string_lossy();
                !NOT_SECRET.contains(&name.as_ref()) && !name.starts_with("LC_")
            })
            .filter_map(|(_, v)| v.into_string().ok())
            .chain(token.map(str::to_string))
            .filter(|v| v.chars().count() >= SHORTEST_SECRET)
            .collect();
        // The longest first, so a value holding another is blanked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Board {
            started: Instant::now(),
            sessions: Mutex::default(),
            running: Mutex::default(),
            recent: Mutex::default(),
            durations: Mutex::default(),
            next_call: AtomicU64::new(1),
            secrets,
        }
    }

    /// Notes a session opened with `facts`.
    pub(crate) fn session_opened(&self, id: &str, facts: SessionFacts) {
        lock(&self.sessions).insert(id.to_string(), facts);
    }

    /// Notes the protocol version a session's request names (clients send it with every
    /// request after the handshake).
    pub(crate) fn session_protocol(&self, id: &str, protocol: &str) {
        if let Some(s) = lock(&self.sessions).get_mut(id)
            && s.protocol != protocol
        {
            s.protocol = protocol.chars().take(32).collect();
        }
    }

    /// Notes the conversation id of a session's run.
    pub(crate) fn session_run(&self, id: &str, run: &str) {
        if let Some(s) = lock(&self.sessions).get_mut(id)
            && s.run.is_none()
        {
            s.run = Some(run.to_string());
        }
    }

    /// Forgets a closed session.
    pub(crate) fn session_closed(&self, id: &str) {
        lock(&self.sessions).remove(id);
    }

    /// Forgets every session but the `live` ones (closed by the transport itself).
    pub(crate) fn keep_sessions(&self, live: &[String]) {
        lock(&self.sessions).retain(|id, _| live.contains(id));
    }

    /// The open sessions' facts, keeping only those of `live` sessions.
    pub(crate) fn sessions(&self, live: &[String]) -> Vec<(String, SessionFacts)> {
        self.keep_sessions(live);
        let sessions = lock(&self.sessions);
        let mut out: Vec<_> = sessions
            .iter()
            .map(|(id, f)| (id.clone(), f.clone()))
            .collect();
        out.sort_by_key(|(_, f)| f.opened);
        out
    }

    /// Notes a call of `tool` starting in `session`, cancelled through `cancel`; answers
    /// its id on the board.
    pub(crate) fn call_started(&self, tool: &str, session: &str, cancel: CancellationToken) -> u64 {
        let id = self.next_call.fetch_add(1, Ordering::Relaxed);
        lock(&self.running).push(RunningCall {
            id,
            tool: tool.to_string(),
            session: session.to_string(),
            started: Instant::now(),
            cancel,
        });
        id
    }

    /// Notes call `id` ended as `outcome` after `took`, with `error` when it failed (only
    /// its first line is kept, without secrets).
    pub(crate) fn call_ended(
        &self,
        id: u64,
        tool: &str,
        outcome: Outcome,
        took: Duration,
        error: Option<&str>,
    ) {
        let session = {
            let mut running = lock(&self.running);
            let at = running.iter().position(|c| c.id == id);
            at.map(|i| running.remove(i).session).unwrap_or_default()
        };
        if let Some(s) = lock(&self.sessions).get_mut(&session) {
            s.calls += 1;
        }
        let samples = &mut *lock(&self.durations);
        let samples = samples.entry(tool.to_string()).or_default();
        if samples.len() == SAMPLES_PER_TOOL {
            samples.pop_front();
        }
        samples.push_back(took);
        let mut recent = lock(&self.recent);
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back(EndedCall {
            tool: tool.to_string(),
            session,
            took,
            outcome,
            error: error.map(|e| self.first_line(e)),
            ended: Instant::now(),
        });
    }

    /// The calls running now, the longest running first.
    pub(crate) fn running(&self) -> Vec<RunningCall> {
        let mut out = lock(&self.running).clone();
        out.sort_by_key(|c| c.started);
        out
    }

    /// Cancels running call `id`; says whether it was running.
    pub(crate) fn cancel(&self, id: u64) -> bool {
        let running = lock(&self.running);
        match running.iter().find(|c| c.id == id) {
            Some(call) => {
                call.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// The calls that ended, the latest first.
    pub(crate) fn recent(&self) -> Vec<EndedCall> {
        lock(&self.recent).iter().rev().cloned().collect()
    }

    /// Each tool's recent durations.
    pub(crate) fn durations(&self) -> Vec<(String, Vec<Duration>)> {
        lock(&self.durations)
            .iter()
            .map(|(t, d)| (t.clone(), d.iter().copied().collect()))
            .collect()
    }

    /// The first line of `text`, cut short, with every secret blanked out.
    fn first_line(&self, text: &str) -> String {
        let line = text.trim_start().lines().next().unwrap_or_default();
        let mut line = line.to_string();
        for secret in &self.secrets {
            if line.contains(secret.as_str()) {
                line = line.replace(secret.as_str(), "[hidden]");
            }
        }
        let mut cut: String = line.chars().take(ERROR_LINE_CHARS).collect();
        if cut.len() < line.len() {
            cut.push('…');
        }
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_keeps_its_first_line_without_the_token_or_environment_values() {
        let board = Board::new(Some("the-static-token-1234"));
        // Cargo sets it for every test run.
        let value = std::env::var("CARGO_MANIFEST_DIR").unwrap();
        let home = std::env::var("HOME").unwrap_or_default();
        let id = board.call_started("eval", "s1", CancellationToken::new());
        assert_eq!(board.running().len(), 1);
        board.call_ended(
            id,
            "eval",
            Outcome::Error,
            Duration::from_millis(5),
            Some(&format!(
                "failed with the-static-token-1234 and {value} in {home}\nsecond line"
            )),
        );
        let ended = board.recent();
        assert_eq!(
            ended[0].error.as_deref(),
            Some(format!("failed with [hidden] and [hidden] in {home}").as_str())
        );
        assert!(board.running().is_empty());
    }

    #[test]
    fn only_the_last_calls_are_kept_and_a_running_call_can_be_cancelled() {
        let board = Board::new(None);
        for _ in 0..RECENT + 5 {
            let id = board.call_started("read", "s", CancellationToken::new());
            board.call_ended(id, "read", Outcome::Ok, Duration::ZERO, None);
        }
        assert_eq!(board.recent().len(), RECENT);
        let token = CancellationToken::new();
        let id = board.call_started("eval", "s", token.clone());
        assert!(board.cancel(id));
        assert!(token.is_cancelled());
        assert!(!board.cancel(id + 1));
    }
}
