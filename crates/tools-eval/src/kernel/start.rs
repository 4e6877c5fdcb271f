//! Starting a kernel process: its command line, the private channel it talks over (the
//! platform layer's [`ChildChannel`]), and how to say how it ended.
//!
//! On Unix the channel is pipes on fds 3 and 4 of the child; fds 1 and 2 of the child are
//! two more pipes whose read ends the driver itself holds (fds 5 and 6), so a cell's prints,
//! its C code's writes and its subprocesses' output all come back as the cell's streams, in
//! order with everything else, while the protocol stays clean. The child's original stderr
//! (tools-core's bounded log) moves to fd 7: the driver's own diagnostics and Python's fault
//! handler write there, and a crash report quotes it. On Windows the channel is named pipes
//! the driver opens by the names in its environment; the Python driver makes its own pipes
//! for fds 1 and 2, and the log stays on the original stderr.

use std::sync::Arc;

use tools_core::platform::ChildChannel;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

use crate::Language;
use crate::discover::Interpreter;

/// The Python driver: its parts joined in order into the one program `python -c` runs.
pub(super) const PYTHON_DRIVER: &str = concat!(
    include_str!("../drivers/python/channel.py"),
    include_str!("../drivers/python/output.py"),
    include_str!("../drivers/python/display.py"),
    include_str!("../drivers/python/bridge.py"),
    include_str!("../drivers/python/magics.py"),
    include_str!("../drivers/python/ipython.py"),
    include_str!("../drivers/python/cell.py"),
    include_str!("../drivers/python/main.py"),
);
const JS_DRIVER: &str = include_str!("../drivers/js_kernel.js");
/// Runs the driver (argv[1]) in its own namespace, so `__main__` stays the user's.
pub(super) const PYTHON_BOOT: &str = "exec(compile(__import__('sys').argv.pop(1), '<eval-kernel>', 'exec'), {'__name__': '_eval_kernel'})";

/// A started kernel process and the channel it is to open.
pub(super) struct StartedProcess {
    /// The process (its own process group).
    pub child: ChildProcess,
    /// Its channel, connected once the driver has opened it.
    pub channel: ChildChannel,
}

/// Starts `interpreter` on the driver of `language`, in the workspace, with its pipes
/// installed.
pub(super) fn spawn(
    run: &Arc<Run>,
    language: Language,
    interpreter: &Interpreter,
) -> Result<StartedProcess, ToolError> {
    let mut cmd = tools_core::child_command(run, &interpreter.path);
    match language {
        Language::Python => {
            cmd.arg("-c").arg(PYTHON_BOOT).arg(PYTHON_DRIVER);
        }
        Language::Javascript => {
            // --expose-internals: the driver parses cells with Node's bundled parser.
            cmd.arg("--expose-internals").arg("-e").arg(JS_DRIVER);
        }
    }
    cmd.current_dir(run.root())
        .env("MPLBACKEND", "Agg")
        .env("PYTHONUNBUFFERED", "1")
        .env("AGENT_TOOLS_EVAL_ROOT", run.root())
        .env("PYTHONIOENCODING", "utf-8");
    let channel = ChildChannel::install(&mut cmd).map_err(|e| {
        ToolError::internal(format!(
            "cannot make the {} kernel's channel: {e}",
            language.name()
        ))
    })?;
    let child = ChildProcess::spawn(run, cmd, Pipes::None).map_err(|e| {
        ToolError::not_available(format!(
            "cannot start the {} kernel with {} ({}): {e}",
            language.name(),
            interpreter.path.display(),
            interpreter.why
        ))
    })?;
    Ok(StartedProcess { child, channel })
}

/// How a kernel process ended, in words (`None`: it could not be reaped).
pub(super) fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) => {
            if let Some(code) = s.code() {
                format!("exited with code {code}")
            } else if let Some(sig) = tools_core::platform::exit_signal(&s) {
                let name = tools_core::platform::signal_meaning(sig)
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default();
                format!("was killed by signal {sig}{name}")
            } else {
                format!("stopped ({s})")
            }
        }
        None => "stopped answering".into(),
    }
}

/// The end of a kernel's log, as a suffix for an error message (empty when there is none).
pub(super) fn log_suffix(log: &str) -> String {
    let log = log.trim();
    if log.is_empty() {
        String::new()
    } else {
        format!("; its log ends with:\n{log}")
    }
}
