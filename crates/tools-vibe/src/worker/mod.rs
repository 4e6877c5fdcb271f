//! The worker list of one run and the supervisor of each worker round.
//!
//! A worker is one brief given to one tier's CLI. Each round is one process (its own process
//! group, registered with the run) watched by a supervisor task that copies its output into a
//! bounded in-memory tail and a full log file, reads its JSON events when the tier says so,
//! runs the stall watchdog, the round timeout and the linger timer, and finally decides the
//! status. Rounds are started and stopped under a per-worker lock, so a `vibe_send` racing a
//! `vibe_kill` never leaves two processes for one worker.
//!
//! Here the worker list and each worker's state; a round's process and its supervisor are the
//! `round` module.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tools_core::text::{BoundedBuffer, cut_text};
use tools_core::{Run, ToolError};

use crate::config::TierConfig;
use crate::log::{create_log, private_log_dir};

mod round;

use round::start_round;

/// The final result kept per worker, in characters.
pub const RESULT_CAP: usize = 4000;
/// How long a stopped worker gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long stdout may stay open (held by a grandchild) after the worker itself exited.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);
/// A JSON event line longer than this is logged but not parsed.
const MAX_EVENT_LINE: usize = 4 << 20;
/// The largest brief accepted when it goes into an argument (Linux caps one argument at
/// 128 KiB).
pub const MAX_ARG_BRIEF: usize = 120 * 1024;
/// The largest brief accepted on stdin.
pub const MAX_BRIEF: usize = 1024 * 1024;

/// Where a worker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Its process is working.
    Running,
    /// Its process is alive but has printed nothing for the tier's stall time.
    Stalled,
    /// It finished its work.
    Done,
    /// It failed (terminal error event, non-zero exit, signal, or could not start).
    Failed,
    /// It was stopped by `vibe_kill` or because the run closed.
    Killed,
    /// It ran past the tier's `timeout_seconds` and was ended.
    TimedOut,
}

impl Status {
    /// The word shown to the model.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Stalled => "stalled",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Killed => "killed",
            Status::TimedOut => "timed out",
        }
    }
    /// Whether the round is over (no process left).
    pub fn is_finished(self) -> bool {
        !matches!(self, Status::Running | Status::Stalled)
    }
}

/// Why a round was stopped from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Killed,
    Superseded,
}

struct WorkerState {
    brief: String,
    round: u32,
    status: Status,
    exit_code: Option<i32>,
    signal: Option<i32>,
    note: Option<String>,
    result: Option<String>,
    tail: BoundedBuffer,
    stdout_tail: BoundedBuffer,
    spawned_at: Instant,
    round_started: Instant,
    finished_at: Option<Instant>,
    last_output: Instant,
    pid: i32,
    stop: Option<StopReason>,
}

impl WorkerState {
    fn reset_for_round(&mut self, round: u32) {
        let now = Instant::now();
        self.round = round;
        self.status = Status::Running;
        self.exit_code = None;
        self.signal = None;
        self.note = None;
        self.result = None;
        self.tail = new_tail();
        self.stdout_tail = new_stdout_tail();
        self.round_started = now;
        self.finished_at = None;
        self.last_output = now;
        self.pid = 0;
        self.stop = None;
    }
}

fn new_tail() -> BoundedBuffer {
    BoundedBuffer::new(2 * 1024, 32 * 1024)
}
fn new_stdout_tail() -> BoundedBuffer {
    BoundedBuffer::new(0, 16 * 1024)
}

struct RoundHandle {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// One background worker: its identity, its current round and how to reach its process.
pub struct Worker {
    /// `w1`, `w2`, …
    pub id: String,
    /// The caller's label.
    pub label: String,
    /// The tier it runs on.
    pub tier: String,
    /// The full log of every round.
    pub log_path: PathBuf,
    config: TierConfig,
    state: Mutex<WorkerState>,
    changed: watch::Sender<u64>,
    control: tokio::sync::Mutex<Option<RoundHandle>>,
}

/// What a worker looks like right now, for the tools' text and structured results.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerSnapshot {
    /// `w1`, …
    pub id: String,
    /// The caller's label.
    pub label: String,
    /// The tier.
    pub tier: String,
    /// The status.
    pub status: Status,
    /// The round (1 + number of `vibe_send`s).
    pub round: u32,
    /// Seconds the current round has run (until it finished).
    pub elapsed_seconds: f64,
    /// Seconds since the worker was spawned.
    pub age_seconds: f64,
    /// Seconds since its last output.
    pub quiet_seconds: f64,
    /// The exit code of the round's process, if it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Why it ended the way it did, when that needs saying.
    pub note: Option<String>,
    /// The final result, capped.
    pub result: Option<String>,
    /// The last lines of output (stdout and stderr) of the round.
    pub tail: String,
    /// The full log file.
    pub log_path: PathBuf,
    /// The process (and process group) id of the round.
    pub pid: i32,
}

impl Worker {
    fn lock(&self) -> MutexGuard<'_, WorkerState> {
        // A panic while holding the lock cannot leave the state half-updated in a way that
        // matters more than losing the worker, so keep serving it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// A receiver that fires on every status change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// The current picture, with the last `tail_lines` lines of output.
    pub fn snapshot(&self, tail_lines: usize) -> WorkerSnapshot {
        let s = self.lock();
        let now = Instant::now();
        let end = s.finished_at.unwrap_or(now);
        let tail = s
            .tail
            .last_lines(tail_lines)
            .lines()
            .map(|l| cut_text(l, 300))
            .collect::<Vec<_>>()
            .join("\n");
        WorkerSnapshot {
            id: self.id.clone(),
            label: self.label.clone(),
            tier: self.tier.clone(),
            status: s.status,
            round: s.round,
            elapsed_seconds: end.duration_since(s.round_started).as_secs_f64(),
            age_seconds: now.duration_since(s.spawned_at).as_secs_f64(),
            quiet_seconds: now.duration_since(s.last_output).as_secs_f64(),
            exit_code: s.exit_code,
            signal: s.signal,
            note: s.note.clone(),
            result: s.result.clone(),
            tail,
            log_path: self.log_path.clone(),
            pid: s.pid,
        }
    }

    /// The status now.
    pub fn status(&self) -> Status {
        self.lock().status
    }

    /// Stops the current round (if any) and waits for its supervisor to finish.
    async fn stop_round(&self, control: &mut Option<RoundHandle>, reason: StopReason) {
        if let Some(h) = control.take() {
            if !h.task.is_finished() {
                self.lock().stop = Some(reason);
                h.stop.cancel();
            }
            let _ = h.task.await;
        }
    }

    /// Ends the worker's process group (SIGTERM, then SIGKILL after a grace period). Returns
    /// whether a round was running.
    pub async fn kill(&self) -> bool {
        let mut control = self.control.lock().await;
        let was_running = !self.status().is_finished();
        self.stop_round(&mut control, StopReason::Killed).await;
        was_running
    }

    /// Appends `message` to the brief and starts the next round, stopping the current one
    /// first. Returns the new round number.
    pub async fn send(self: &Arc<Self>, run: &Arc<Run>, message: &str) -> Result<u32, ToolError> {
        let mut control = self.control.lock().await;
        // Check the extended brief before stopping anything: a refused message must leave the
        // running round alone.
        let brief = {
            let mut brief = self.lock().brief.clone();
            brief.push_str("\n\n");
            brief.push_str(message);
            brief
        };
        check_brief_size(&self.config, &brief, "message")?;
        self.stop_round(&mut control, StopReason::Superseded).await;
        let round = {
            let mut s = self.lock();
            s.brief = brief.clone();
            let round = s.round + 1;
            s.reset_for_round(round);
            round
        };
        match start_round(self, run, &brief, round) {
            Ok(h) => {
                *control = Some(h);
                self.notify();
                Ok(round)
            }
            Err(e) => {
                self.fail_to_start(&e);
                Err(e)
            }
        }
    }

    /// Waits for the supervisor of the current round to end (used when the run closes).
    async fn join(&self) {
        let mut control = self.control.lock().await;
        if let Some(h) = control.take() {
            h.stop.cancel();
            let _ = h.task.await;
        }
    }

    fn fail_to_start(&self, e: &ToolError) {
        {
            let mut s = self.lock();
            s.status = Status::Failed;
            s.note = Some(format!("could not start: {e}"));
            s.finished_at = Some(Instant::now());
        }
        self.notify();
    }

    fn record_output(&self, round: u32, bytes: &[u8], stdout: bool) {
        let resumed = {
            let mut s = self.lock();
            if s.round != round {
                return;
            }
            s.tail.push(bytes);
            if stdout {
                s.stdout_tail.push(bytes);
            }
            s.last_output = Instant::now();
            if s.status == Status::Stalled {
                s.status = Status::Running;
                true
            } else {
                false
            }
        };
        if resumed {
            self.notify();
        }
    }
}

/// Every worker of one run, in spawn order.
#[derive(Default)]
pub struct WorkerList {
    workers: Mutex<Vec<Arc<Worker>>>,
    close_hook: AtomicBool,
}

impl WorkerList {
    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Worker>>> {
        self.workers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers (once per run) the close hook that waits for every worker to be ended.
    pub fn install_close_hook(self: &Arc<Self>, run: &Run) {
        if self.close_hook.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = Arc::clone(self);
        run.on_close(move || {
            Box::pin(async move {
                let all = me.all();
                for w in all {
                    w.join().await;
                }
            })
        });
    }

    /// Every worker, in spawn order.
    pub fn all(&self) -> Vec<Arc<Worker>> {
        self.lock().clone()
    }

    /// The worker called `id`, or an error listing the known ids.
    pub fn get(&self, id: &str) -> Result<Arc<Worker>, ToolError> {
        let id = id.trim();
        let list = self.lock();
        if let Some(w) = list.iter().find(|w| w.id == id) {
            return Ok(Arc::clone(w));
        }
        let known = if list.is_empty() {
            "there are no workers yet; start one with vibe_spawn".to_string()
        } else {
            let ids = tools_core::text::cap_list(list.iter().map(|w| w.id.clone()), 20);
            let mut s = format!("the workers of this run are: {}", ids.shown.join(", "));
            if let Some(more) = ids.more_line() {
                s.push_str(&format!(" {more}"));
            }
            s
        };
        if id.is_empty() {
            return Err(ToolError::invalid(
                "worker_id",
                format!("the worker id is empty; {known}"),
            ));
        }
        Err(ToolError::invalid(
            "worker_id",
            format!("no worker `{id}` in this run; {known} (see vibe_list)"),
        ))
    }

    /// How many workers are running or stalled.
    pub fn running(&self) -> usize {
        self.lock()
            .iter()
            .filter(|w| !w.status().is_finished())
            .count()
    }

    /// Starts a new worker: allocates its id, opens its log and starts round 1. A worker
    /// that cannot start is not added.
    pub fn spawn(
        &self,
        run: &Arc<Run>,
        tier: &str,
        config: &TierConfig,
        brief: &str,
        label: &str,
        max_running: usize,
    ) -> Result<Arc<Worker>, ToolError> {
        check_brief_size(config, brief, "brief")?;
        let mut list = self.lock();
        let running = list.iter().filter(|w| !w.status().is_finished()).count();
        if running >= max_running {
            return Err(ToolError::rejected(format!(
                "{running} workers are already running (the limit is {max_running}); wait for one \
                 (vibe_wait) or end one (vibe_kill) first"
            )));
        }
        let id = format!("w{}", list.len() + 1);
        let log_path = create_log(&private_log_dir(run)?, &id)?;
        let now = Instant::now();
        let (changed, _) = watch::channel(0);
        let worker = Arc::new(Worker {
            id,
            label: label.to_string(),
            tier: tier.to_string(),
            log_path,
            config: config.clone(),
            state: Mutex::new(WorkerState {
                brief: brief.to_string(),
                round: 1,
                status: Status::Running,
                exit_code: None,
                signal: None,
                note: None,
                result: None,
                tail: new_tail(),
                stdout_tail: new_stdout_tail(),
                spawned_at: now,
                round_started: now,
                finished_at: None,
                last_output: now,
                pid: 0,
                stop: None,
            }),
            changed,
            control: tokio::sync::Mutex::new(None),
        });
        let handle = start_round(&worker, run, brief, 1)?;
        if let Ok(mut c) = worker.control.try_lock() {
            *c = Some(handle);
        }
        list.push(Arc::clone(&worker));
        Ok(worker)
    }
}

fn check_brief_size(config: &TierConfig, brief: &str, field: &str) -> Result<(), ToolError> {
    let (cap, how) = if config.brief_in_args() {
        (MAX_ARG_BRIEF, "in a command argument")
    } else {
        (MAX_BRIEF, "on stdin")
    };
    if brief.len() > cap {
        return Err(ToolError::invalid(
            field,
            format!(
                "the brief would be {} bytes; at most {cap} bytes can be passed {how}; write the details \
                 to a file in the workspace and point the worker at it",
                brief.len()
            ),
        ));
    }
    if brief.contains('\0') {
        return Err(ToolError::invalid(field, "the brief contains a NUL byte"));
    }
    Ok(())
}

/// The directory a tier's workers start in: its `cwd` inside the workspace, else the root.
pub fn worker_cwd(run: &Run, config: &TierConfig) -> Result<PathBuf, ToolError> {
    let Some(cwd) = &config.cwd else {
        return Ok(run.root().to_path_buf());
    };
    let dir = run.workspace().resolve(cwd).map_err(|e| {
        ToolError::not_available(format!("the tier's `cwd` `{cwd}` cannot be used: {e}"))
    })?;
    if !dir.is_dir() {
        return Err(ToolError::not_available(format!(
            "the tier's `cwd` `{cwd}` is not a directory ({})",
            dir.display()
        )));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_name_themselves() {
        assert!(Status::Done.is_finished() && !Status::Stalled.is_finished());
        assert_eq!(Status::TimedOut.as_str(), "timed out");
    }
}
