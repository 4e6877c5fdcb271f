//! # tools-debug
//!
//! The `debug` tool: a Debug Adapter Protocol client, the adapter table and a supervisor that
//! keeps one debug session per conversation.
//!
//! - The protocol: DAP over tools-core's `Transport` (`Dap` protocol): typed requests from
//!   `dap-types` with unset optional fields stripped, tolerant event decoding, and the
//!   `runInTerminal` reverse request answered by running the process ourselves.
//! - The adapters ([`AdapterId`]): debugpy (preferring the project's `.venv`/`venv` Python),
//!   lldb-dap (including Debian's versioned `lldb-dap-NN`), delve (DAP over TCP), dart;
//!   overridable in `[debug.adapters.<id>]` ([`AdapterOverride`]); usable only when a root
//!   marker **and** the binary are found.
//! - A session: one live debuggee — the start-up order, bounded waits, teardown.
//! - [`DebugSupervisor`]: the session rules (one per conversation, a hard TTL, second launch
//!   rejected, crashed or hung adapter cleared) and every operation.
//! - [`DebugTool`]: the `debug` tool itself (tier `exec`, not parallel-safe).
//! - Breakpoints by name and with options: `breakpoints` takes a symbol's name path (placed
//!   on its first line of code, resolved through the run's symbol sources: a language
//!   server's document symbols or the bundled grammars), a `condition`, a `hit_condition`
//!   and a `log_message` (a logpoint); each option is refused where the adapter's
//!   `initialize` answer does not declare it.
//! - [`BreakpointsFollowEdits`]: a write observer that moves the breakpoints of a file the
//!   run's tools edit with their lines (or drops them with their deleted lines, saying so in
//!   the write's answer) and sends them again to a live session.
//!
//! Choices where the spec is silent: a session whose program has ended no longer blocks a
//! new `launch`; `continue` on a program that is still running keeps waiting for the next
//! stop; breakpoints outlive a program's end or a crashed adapter and apply to the next
//! `launch`, while `terminate` clears them unless called with `keep_breakpoints: true`;
//! `attach` never kills the debuggee. Listings (`stack`, `variables`, `output`) hold to an
//! answer budget of about 4 KB of text: within the spec's caps (30 frames, 50 children)
//! they show as many as fit, and name the `offset` that shows the next ones; `output`
//! shows its latest part unless an `offset` asks for another.
//!
//! What this crate is not for: building the program (use `gcc -g`, `go build`, …) or
//! language-server queries.
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use tools_core::{RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
//! let mut builder = RegistryBuilder::new(run.clone());
//! if let Some(debug) = tools_debug::family(&run).unwrap() {
//!     builder = builder.family(debug);
//! }
//! let registry = builder.build().unwrap();
//! // `debug` is tier exec: absent from the plan surface.
//! assert!(registry.list(Surface::PLAN).iter().all(|t| t.name != "debug"));
//! let adapters = registry.call(Surface::FULL, "debug", serde_json::json!({"operation": "adapters"})).await.unwrap();
//! assert!(adapters.text.contains("debugpy"));
//! run.close().await;
//! # }
//! ```

mod adapters;
mod config;
mod error;
#[cfg(feature = "testing")]
mod fuzzing;
mod line_moves;
mod protocol;
mod report;
mod session;
mod supervisor;
mod tool;

use std::sync::Arc;

use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily, WriteObserver};

pub use adapters::AdapterId;
pub use config::{AdapterOverride, DebugConfig};
#[cfg(feature = "testing")]
pub use fuzzing::decode_adapter_message;
pub use session::Resume;
pub use supervisor::{AttachTarget, BreakpointRequest, BreakpointsFollowEdits, DebugSupervisor};
pub use tool::{DebugArgs, DebugTool, Operation};

/// The `debug` family of one run: the `debug` tool over a [`DebugSupervisor`].
pub struct DebugFamily {
    tool: Arc<DebugTool>,
}

impl DebugFamily {
    /// The supervisor (for embedders that drive sessions directly).
    pub fn supervisor(&self) -> &Arc<DebugSupervisor> {
        self.tool.supervisor()
    }
}

#[tools_core::async_trait]
impl ToolFamily for DebugFamily {
    fn name(&self) -> &str {
        "debug"
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![self.tool.clone() as Arc<dyn Tool>]
    }
    fn observers(&self) -> Vec<Arc<dyn WriteObserver>> {
        vec![Arc::new(BreakpointsFollowEdits::new(Arc::clone(
            self.tool.supervisor(),
        ))) as Arc<dyn WriteObserver>]
    }
    async fn doctor(&self) -> Vec<DoctorEntry> {
        self.tool.supervisor().doctor().await
    }
}

/// The `debug` family for `run`, configured from the `[debug]` section. `Ok(None)` when
/// `[debug] enabled = false`. The session is ended (adapter and debuggee killed) when the
/// run closes.
pub fn family(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    let config: DebugConfig = run.config().section("debug")?;
    if !config.enabled {
        return Ok(None);
    }
    let supervisor = DebugSupervisor::new(run, config)?;
    let weak = Arc::downgrade(&supervisor);
    run.on_close(move || {
        Box::pin(async move {
            if let Some(s) = weak.upgrade() {
                s.shutdown().await;
            }
        })
    });
    Ok(Some(Arc::new(DebugFamily {
        tool: Arc::new(DebugTool::new(supervisor)),
    })))
}
