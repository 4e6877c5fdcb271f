//! One worker round: its process started under the worker's lock, and the supervisor task
//! that pumps its output into the tail and the log, reads its JSON events line by line
//! (overlong lines dropped), runs the stall watchdog, the round timeout and the linger timer,
//! and decides the round's status when it ends.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdout;
use tokio_util::sync::CancellationToken;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::text::cut_text;
use tools_core::{Run, ToolError};

use crate::config::ResultFormat;
use crate::events::{EventReader, Terminal};
use crate::log::LogFile;

use super::{
    DRAIN_AFTER_EXIT, MAX_EVENT_LINE, RESULT_CAP, RoundHandle, STOP_GRACE, Status, StopReason,
    Worker, worker_cwd,
};

/// Starts round `round` of `worker` with `brief`: its process and the supervisor task that
/// watches it.
pub(super) fn start_round(
    worker: &Arc<Worker>,
    run: &Arc<Run>,
    brief: &str,
    round: u32,
) -> Result<RoundHandle, ToolError> {
    let config = &worker.config;
    let cwd = worker_cwd(run, config)?;
    let program = config.resolve_program(&cwd).map_err(|why| {
        ToolError::not_available(format!(
            "the worker CLI of tier `{}` cannot be started: {why}; fix [vibe.{}] `command` in agent-tools.toml",
            worker.tier, worker.tier
        ))
    })?;
    // The minimal environment plus the user's `[env] workers` (the CLI's own API key), then
    // the tier's own `env`.
    let mut cmd = tools_core::worker_command(run, &program);
    cmd.args(config.args_for(brief))
        .current_dir(&cwd)
        .envs(&config.env)
        .env("AGENT_TOOLS_WORKER_ID", &worker.id)
        .env("AGENT_TOOLS_WORKER_ROUND", round.to_string());
    let log = LogFile::open(&worker.log_path)?;
    log.write(
        format!(
            "--- round {round} of {} ({}) on tier {}: {} {}\n",
            worker.id,
            worker.label,
            worker.tier,
            program.display(),
            if config.brief_in_args() {
                "(brief in arguments)"
            } else {
                "(brief on stdin)"
            }
        )
        .as_bytes(),
    );
    let pipes = if config.brief_in_args() {
        Pipes::StdoutOnly
    } else {
        Pipes::StdinStdout
    };
    let tee_worker = Arc::downgrade(worker);
    let tee_log = log.clone();
    let mut child = ChildProcess::spawn_with_stderr_tee(run, cmd, pipes, move |bytes| {
        tee_log.write(bytes);
        if let Some(w) = tee_worker.upgrade() {
            w.record_output(round, bytes, false);
        }
    })?;
    worker.lock().pid = child.pid();
    if let Some(mut stdin) = child.take_stdin() {
        let brief = brief.as_bytes().to_vec();
        tokio::spawn(async move {
            // A worker that exits without reading its stdin is not an error here.
            let _ = stdin.write_all(&brief).await;
            let _ = stdin.shutdown().await;
        });
    }
    let Some(stdout) = child.take_stdout() else {
        return Err(ToolError::internal("the worker's stdout was not piped"));
    };
    let stop = run.cancellation().child_token();
    let task = tokio::spawn(supervise(
        Arc::clone(worker),
        child,
        stdout,
        log,
        round,
        stop.clone(),
    ));
    Ok(RoundHandle { stop, task })
}

enum End {
    Stopped,
    Exited,
    TimedOut(Duration),
    Lingered(Duration),
}

/// Splits stdout into lines and feeds complete ones to the event reader.
struct LineSplitter {
    line: Vec<u8>,
    overflow: bool,
}

impl LineSplitter {
    fn feed(&mut self, mut chunk: &[u8], mut on_line: impl FnMut(&[u8])) {
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
            self.push(&chunk[..pos]);
            if !self.overflow {
                on_line(&self.line);
            }
            self.line.clear();
            self.overflow = false;
            chunk = &chunk[pos + 1..];
        }
        self.push(chunk);
    }
    fn push(&mut self, part: &[u8]) {
        if self.overflow {
            return;
        }
        if self.line.len() + part.len() > MAX_EVENT_LINE {
            self.overflow = true;
            self.line.clear();
        } else {
            self.line.extend_from_slice(part);
        }
    }
    fn finish(&mut self, on_line: impl FnMut(&[u8])) {
        if !self.line.is_empty() {
            self.feed(b"\n", on_line);
        }
    }
}

#[derive(Default)]
struct EventState {
    message: Option<String>,
    terminal: Option<Terminal>,
    terminal_at: Option<Instant>,
}

impl EventState {
    fn take_line(&mut self, reader: &EventReader, line: &[u8]) {
        let m = reader.read_line(line);
        if let Some(msg) = m.message {
            self.message = Some(msg);
        }
        match m.terminal {
            Some(t) => {
                self.terminal = Some(t);
                self.terminal_at = Some(Instant::now());
            }
            // A later event means the "final" one was not final after all.
            None if m.is_event => {
                self.terminal = None;
                self.terminal_at = None;
            }
            None => {}
        }
    }
}

async fn supervise(
    worker: Arc<Worker>,
    mut child: ChildProcess,
    mut stdout: ChildStdout,
    log: LogFile,
    round: u32,
    stop: CancellationToken,
) {
    let config = worker.config.clone();
    let json = config.result == ResultFormat::JsonEvents;
    let reader = EventReader::new(config.result_field.as_deref(), &config.result_filter);
    let started = Instant::now();
    let timeout = config.timeout();
    let stall = config.stall_after();
    let linger = config.linger_after();
    let mut events = EventState::default();
    let mut lines = LineSplitter {
        line: Vec::new(),
        overflow: false,
    };
    let mut buf = vec![0u8; 16 * 1024];
    let mut stdout_open = true;
    let mut exited: Option<(Instant, Option<ExitStatus>)> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);

    let end = loop {
        if exited.is_some() && !stdout_open {
            break End::Exited;
        }
        tokio::select! {
            _ = stop.cancelled() => break End::Stopped,
            r = stdout.read(&mut buf), if stdout_open => match r {
                Ok(0) | Err(_) => stdout_open = false,
                Ok(n) => {
                    let chunk = &buf[..n];
                    log.write(chunk);
                    worker.record_output(round, chunk, true);
                    if json {
                        lines.feed(chunk, |l| events.take_line(&reader, l));
                    }
                }
            },
            st = child.wait(), if exited.is_none() => {
                exited = Some((Instant::now(), st.ok()));
            }
            _ = tick.tick() => {
                let now = Instant::now();
                if let Some(t) = timeout && now.duration_since(started) >= t {
                    break End::TimedOut(t);
                }
                if let Some(at) = events.terminal_at && now.duration_since(at) >= linger {
                    break End::Lingered(linger);
                }
                if let Some((at, _)) = exited && now.duration_since(at) >= DRAIN_AFTER_EXIT {
                    break End::Exited;
                }
                let became_stalled = {
                    let mut s = worker.lock();
                    if s.round == round && s.status == Status::Running
                        && now.duration_since(s.last_output) >= stall {
                        s.status = Status::Stalled;
                        true
                    } else {
                        false
                    }
                };
                if became_stalled {
                    worker.notify();
                }
            }
        }
    };
    if json {
        lines.finish(|l| events.take_line(&reader, l));
    }

    // End the process group: politely first unless the leader is already gone, then for sure
    // (leftover grandchildren in the group go too).
    let exit_status = match exited {
        Some((_, st)) => {
            child.kill();
            st
        }
        None => {
            tools_core::process::ask_group_to_stop(child.pid());
            child.shutdown(STOP_GRACE).await
        }
    };

    let result_text = {
        let s = worker.lock();
        match config.result {
            ResultFormat::JsonEvents => events
                .message
                .clone()
                .map(|m| cut_text(m.trim(), RESULT_CAP)),
            ResultFormat::StdoutTail => {
                let text = s.stdout_tail.to_text();
                let text = text.trim();
                (!text.is_empty()).then(|| keep_end(text, RESULT_CAP))
            }
        }
    };

    let footer = {
        let mut s = worker.lock();
        if s.round != round {
            return;
        }
        let stop_reason = s.stop.take();
        let exit_code = exit_status.and_then(|st| st.code());
        let signal = exit_status.and_then(|st| tools_core::platform::exit_signal(&st));
        let by_exit = || match (exit_code, signal) {
            (Some(0), _) => (Status::Done, None),
            (Some(c), _) => (Status::Failed, Some(format!("exited with code {c}"))),
            (None, Some(sig)) => (Status::Failed, Some(format!("ended by signal {sig}"))),
            (None, None) => (
                Status::Failed,
                Some("its exit status is unknown".to_string()),
            ),
        };
        let by_event = |linger_note: Option<String>| match &events.terminal {
            Some(Terminal::Done) => {
                let note = match (linger_note, exit_code) {
                    (Some(n), _) => Some(n),
                    (None, Some(c)) if c != 0 => Some(format!(
                        "exited with code {c} after its final event reported success"
                    )),
                    _ => None,
                };
                (Status::Done, note)
            }
            Some(Terminal::Failed(why)) => (
                Status::Failed,
                Some(match why {
                    Some(w) => format!("its final event reported failure: {}", cut_text(w, 500)),
                    None => "its final event reported failure".to_string(),
                }),
            ),
            None => by_exit(),
        };
        let (status, note) = match end {
            End::Stopped => match stop_reason {
                Some(StopReason::Killed) => {
                    (Status::Killed, Some("killed by vibe_kill".to_string()))
                }
                Some(StopReason::Superseded) => (
                    Status::Killed,
                    Some(format!("stopped for round {} (vibe_send)", round + 1)),
                ),
                None => (Status::Killed, Some("the run closed".to_string())),
            },
            End::TimedOut(t) => (
                Status::TimedOut,
                Some(format!(
                    "ended after the tier's timeout of {} s",
                    t.as_secs_f64()
                )),
            ),
            End::Lingered(l) => by_event(Some(format!(
                "ended {} s after its final event (it did not exit by itself)",
                l.as_secs_f64()
            ))),
            End::Exited => by_event(None),
        };
        s.status = status;
        s.note = note;
        s.exit_code = exit_code;
        s.signal = signal;
        s.result = result_text;
        s.finished_at = Some(Instant::now());
        format!(
            "\n--- round {round} ended: {}{}{}\n",
            status.as_str(),
            exit_code
                .map(|c| format!(", exit code {c}"))
                .unwrap_or_default(),
            s.note
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        )
    };
    log.write(footer.as_bytes());
    worker.notify();
}

/// Keeps the last `max` characters of `text`, marking the cut at the start.
fn keep_end(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().skip(count - max).collect();
    format!("[cut: {} earlier characters] …{kept}", count - max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_across_chunks_and_overlong_ones_dropped() {
        let mut s = LineSplitter {
            line: Vec::new(),
            overflow: false,
        };
        let mut got = Vec::new();
        s.feed(b"ab", |l| got.push(l.to_vec()));
        s.feed(b"c\nde\nf", |l| got.push(l.to_vec()));
        s.finish(|l| got.push(l.to_vec()));
        assert_eq!(got, vec![b"abc".to_vec(), b"de".to_vec(), b"f".to_vec()]);
        got.clear();
        let big = vec![b'x'; MAX_EVENT_LINE + 1];
        s.feed(&big, |l| got.push(l.to_vec()));
        s.feed(b"\nok\n", |l| got.push(l.to_vec()));
        assert_eq!(got, vec![b"ok".to_vec()]);
    }

    #[test]
    fn keep_end_marks_the_cut() {
        assert_eq!(keep_end("abc", 5), "abc");
        assert_eq!(keep_end("abcdef", 2), "[cut: 4 earlier characters] …ef");
    }
}
