//! One live debug session: the adapter process, its DAP client, the start-up sequence and
//! the operations on a running debuggee.
//!
//! Start-up order (what editors' users taught the debugger MCP servers the hard way):
//! `initialize` → `launch`/`attach` **sent without awaiting** → on `initialized`, the
//! breakpoints and exception filters → `configurationDone` → then await the launch response
//! and the first stop, each with a bounded wait. A debuggee that exits at once may take the
//! `configurationDone` response with it: a closed stream there counts as completion.
//!
//! Every wait is bounded: continue and the steps return "still running" after their bound so
//! that a later `pause` can get in (the registry serialises `debug` calls).
//!
//! One job per file: `start` (the adapter process, the launch arguments, the start-up
//! sequence) and `control` (breakpoints, stops, steps and inspection of a started session);
//! here the session's types, the breakpoint arguments both send, and the teardown.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dap_types::requests as rq;
use tools_core::process::ChildProcess;

use crate::adapters::AdapterId;
use crate::protocol::{BreakpointState, DapClient, StopEvent};

mod breakpoint_spec;
mod control;
mod start;

pub use breakpoint_spec::{BreakpointSpec, unsupported};

/// What the caller asked the debuggee to do last, to normalise the reason of the next stop
/// (some adapters report a pause as "exception" or "step").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// Run (launch, continue).
    Run,
    /// A step.
    Step,
    /// A pause.
    Pause,
}

/// The stop reason in our words: `breakpoint`, `step`, `pause`, `exception`, `entry`, or the
/// adapter's own word when it is none of those.
pub fn normalise_reason(raw: &str, hit_breakpoints: &[u64], requested: Requested) -> String {
    let raw_l = raw.to_ascii_lowercase();
    if raw_l.contains("breakpoint") || !hit_breakpoints.is_empty() {
        return "breakpoint".into();
    }
    match requested {
        Requested::Pause => return "pause".into(),
        Requested::Step if matches!(raw_l.as_str(), "step" | "pause" | "goto" | "unknown" | "") => {
            return "step".into();
        }
        _ => {}
    }
    match raw_l.as_str() {
        "step" | "goto" => "step".into(),
        "pause" => "pause".into(),
        "entry" => "entry".into(),
        "exception" | "signal" | "panic" => "exception".into(),
        _ => raw.to_string(),
    }
}

/// How to start a session.
#[derive(Debug, Clone)]
pub enum StartKind {
    /// Start `program` under the adapter.
    Launch {
        /// The program (script, package folder, executable), absolute.
        program: PathBuf,
        /// Its arguments.
        args: Vec<String>,
    },
    /// Connect to a running debuggee.
    Attach {
        /// debugpy (`--listen`) port; Dart uses `vm_service_uri` instead.
        port: Option<u16>,
        /// Host of `port`, default 127.0.0.1.
        host: String,
        /// Process id (delve, lldb).
        pid: Option<u32>,
        /// Dart VM-service URI.
        vm_service_uri: Option<String>,
    },
}

/// Everything needed to start an adapter for one session.
#[derive(Debug, Clone)]
pub struct StartPlan {
    /// Which adapter.
    pub adapter: AdapterId,
    /// The resolved program of the adapter.
    pub adapter_program: PathBuf,
    /// Its arguments.
    pub adapter_args: Vec<String>,
    /// The project folder (marker folder): the adapter's working directory.
    pub project_dir: PathBuf,
    /// For debugpy: the interpreter of the debuggee.
    pub debuggee_python: Option<PathBuf>,
    /// Launch or attach.
    pub kind: StartKind,
    /// Where a delve build may put its binary (outside the user's tree).
    pub scratch_dir: PathBuf,
}

/// Bounds of one session.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// One ordinary request.
    pub request: Duration,
    /// Adapter start-up up to `initialized` and the launch response.
    pub startup: Duration,
}

/// A breakpoint line as requested and as the adapter bound it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakpointResult {
    /// The line asked for.
    pub requested_line: u64,
    /// What the adapter said (None before the adapter saw it).
    pub state: Option<BreakpointState>,
}

/// One live session.
pub struct Session {
    /// A number unique within the run (ties the TTL timer to this session).
    pub id: u64,
    /// Which adapter.
    pub adapter: AdapterId,
    /// What was started, for messages (`launch app.py`, `attach 127.0.0.1:5678`).
    pub target: String,
    /// Whether we attached (the debuggee is not ours to kill).
    pub attached: bool,
    /// When it started.
    pub started: Instant,
    /// When its hard TTL ends.
    pub deadline: Instant,
    /// The adapter process (none when we connected to an adapter the debuggee runs itself,
    /// as `python -m debugpy --listen` does).
    pub process: Option<ChildProcess>,
    /// The DAP client.
    pub client: DapClient,
    caps: dap_types::Capabilities,
    /// What we asked for last (normalises the next stop reason).
    pub requested: Requested,
    /// The thread of the last stop.
    pub last_thread: Option<u64>,
    scratch_binary: Option<PathBuf>,
}

/// The result of waiting for the debuggee after starting or resuming it.
#[derive(Debug, Clone)]
pub enum WaitOutcome {
    /// Stopped.
    Stopped(StopEvent),
    /// Still running when the bound ran out.
    StillRunning,
    /// The debuggee ended.
    Terminated {
        /// Its exit code, when the adapter reported one.
        exit_code: Option<i64>,
    },
    /// The adapter's connection closed without a termination.
    AdapterGone,
}

impl Session {
    /// Whether the adapter process has exited, and how.
    pub fn adapter_exit(&mut self) -> Option<std::process::ExitStatus> {
        self.process.as_mut().and_then(|p| p.try_status())
    }

    /// The last `n` lines the adapter wrote to stderr (empty when it is not our process).
    pub fn adapter_stderr(&self, n: usize) -> String {
        self.process
            .as_ref()
            .map(|p| p.stderr().last_lines(n))
            .unwrap_or_default()
    }

    /// The adapter's process id, when it is our process.
    pub fn adapter_pid(&self) -> Option<i32> {
        self.process.as_ref().map(|p| p.pid())
    }

    /// Ends the session: `disconnect` (terminating the debuggee unless we attached), close
    /// the pipe, a short grace, then kill the adapter's group, the debuggee and any
    /// `runInTerminal` process. Never leaves a process behind; bounded.
    pub async fn teardown(&mut self) {
        let alive = !self.client.transport().is_closed();
        if alive {
            let args = dap_types::DisconnectArguments {
                restart: None,
                terminate_debuggee: Some(!self.attached),
                suspend_debuggee: None,
            };
            // lldb-dap 19 aborts right after answering `disconnect`; the answer is enough.
            let _ = self
                .client
                .request_within::<rq::Disconnect>(&args, Duration::from_secs(3))
                .await;
            self.client.transport().close_writer().await;
        }
        if let Some(p) = self.process.as_mut() {
            let _ = p.shutdown(Duration::from_millis(500)).await;
        }
        let (pid, children) = self
            .client
            .update(|s| (s.debuggee_pid, std::mem::take(&mut s.terminal_children)))
            .unwrap_or((None, Vec::new()));
        drop(children);
        if !self.attached
            && let Some(pid) = pid
        {
            kill_debuggee(pid, self.adapter_pid().unwrap_or(0));
        }
        if let Some(bin) = &self.scratch_binary {
            let _ = std::fs::remove_file(bin);
        }
    }
}

fn source_of(path: &Path) -> dap_types::Source {
    dap_types::Source {
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        path: Some(path.display().to_string()),
        source_reference: None,
        presentation_hint: None,
        origin: None,
        sources: None,
        adapter_data: None,
        checksums: None,
    }
}

fn breakpoints_arguments(
    file: &Path,
    specs: &[BreakpointSpec],
) -> dap_types::SetBreakpointsArguments {
    dap_types::SetBreakpointsArguments {
        source: source_of(file),
        breakpoints: Some(breakpoint_spec::source_breakpoints(specs)),
        lines: None,
        source_modified: None,
    }
}

fn breakpoint_results(
    specs: &[BreakpointSpec],
    resp: &dap_types::SetBreakpointsResponse,
) -> Vec<BreakpointResult> {
    specs
        .iter()
        .enumerate()
        .map(|(i, b)| BreakpointResult {
            requested_line: b.line,
            state: resp.breakpoints.get(i).map(BreakpointState::from_dap),
        })
        .collect()
}

/// Kills a debuggee we started, if it outlived its adapter (some adapters start it in a
/// process group of its own).
fn kill_debuggee(pid: i32, adapter_pid: i32) {
    if pid <= 1 || pid == std::process::id() as i32 || pid == adapter_pid {
        return;
    }
    tools_core::platform::kill_leftover(pid);
}

/// Continue or one of the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// `continue`.
    Continue,
    /// `next`.
    StepOver,
    /// `stepIn`.
    StepIn,
    /// `stepOut`.
    StepOut,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_are_normalised() {
        assert_eq!(
            normalise_reason("function breakpoint", &[], Requested::Run),
            "breakpoint"
        );
        assert_eq!(
            normalise_reason("step", &[3], Requested::Step),
            "breakpoint"
        );
        assert_eq!(
            normalise_reason("exception", &[], Requested::Pause),
            "pause"
        );
        assert_eq!(normalise_reason("step", &[], Requested::Pause), "pause");
        assert_eq!(normalise_reason("pause", &[], Requested::Step), "step");
        assert_eq!(
            normalise_reason("exception", &[], Requested::Step),
            "exception"
        );
        assert_eq!(normalise_reason("signal", &[], Requested::Run), "exception");
        assert_eq!(normalise_reason("entry", &[], Requested::Run), "entry");
        assert_eq!(normalise_reason("goto", &[], Requested::Run), "step");
        assert_eq!(normalise_reason("trace", &[], Requested::Run), "trace");
    }
}
