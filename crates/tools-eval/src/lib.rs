//! # tools-eval
//!
//! The `eval` tool: Python and JavaScript cells whose variables, imports and loaded data
//! survive between calls, on kernels that are child processes of the project's own
//! interpreters (a crash, `os._exit` or a runaway loop in a cell never takes the tool server
//! down).
//!
//! - One kernel per language per run, started on first use; the driver programs ship
//!   inside this crate.
//! - The protocol runs over dedicated pipes (fds 3 and 4 of the kernel on Unix, named pipes
//!   only the kernel may open on Windows: the platform layer's
//!   [`ChildChannel`](tools_core::platform::ChildChannel)), never over its stdout or a
//!   socket; whatever the cell or its subprocesses write to fd 1/2 comes back as the cell's
//!   output (on Windows, for JavaScript, what the cell itself prints: Node cannot move its
//!   own fds 1 and 2), held to an answer budget (about 4 KB: head and tail kept, the cut
//!   counted and saying how to see the rest). A cell is interrupted with SIGINT on Unix
//!   and with a byte on a third pipe on Windows, which stops a Python cell at its next
//!   Python instruction (a blocking call such as `time.sleep` returns first) and a
//!   JavaScript cell that is awaiting; a JavaScript loop that never yields is ended with its
//!   kernel there.
//! - Python cells behave like a notebook: the last expression is displayed, `display()`,
//!   pandas tables, matplotlib figures as PNG images (downscaled to at most [`MAX_SIDE`]
//!   pixels a side), tracebacks trimmed to the user's frames with the cell's own line
//!   numbers. Where IPython is importable in the kernel's interpreter, values are formatted
//!   by IPython's own display formatter and magics run through IPython's own machinery
//!   (its shell is made on first need, so a kernel starts as fast without it); otherwise
//!   the kernel's own rendering (`repr`, `_repr_png_`, `_repr_markdown_`) and a rewrite of
//!   the common magics into plain code stand in. `%%writefile` writes through the run's
//!   `write` tool either way.
//! - `tool(name, args)` inside a cell calls the run's other tools through the registry's
//!   [`Invoker`](tools_core::Invoker), as the same surface: approval, guards and write
//!   observers apply as for the model's own calls.
//! - An idle budget (default 5 minutes, `[eval] idle_timeout_secs`) stops a cell that has
//!   neither printed nor called a tool for that long: interrupt first, kill after a grace
//!   period; the budget is paused while a bridged call is pending.
//!
//! Choices where the spec is silent: an exception in a cell is a successful call whose
//! output carries the traceback (`structured.status == "error"`), as a notebook shows it; a
//! timed-out or interrupted cell returns its partial output with a marker; a kernel that
//! dies during a cell is a tool error, and the next cell gets a fresh kernel. In JavaScript,
//! a cell is a script in one long-lived `vm` context (its declarations persist, as in
//! Node's REPL); a cell with top-level `await` or ES `import` statements runs as an async
//! function, parsed with Node's own parser, whose top-level `let`/`const`/`function`/
//! `class`/`import` bindings become globals of the context (so they persist, and the cell
//! can be run again) and whose last expression statement is the cell's value. `import()`
//! and `import` statements go through Node's ES module loader (relative specifiers from
//! the current directory, bare names from the workspace's `node_modules`); `require`
//! resolves from the workspace root.
//!
//! Workspace trust decides which interpreter a kernel runs (never one inside an untrusted
//! workspace) and that nothing of the workspace starts on its own; the files and packages
//! a cell itself requires or imports are the cell's code, which `eval`'s exec tier and its
//! approval cover, trusted run or not.
//!
//! What this crate is not for: running untrusted code safely (the kernel runs with the
//! tool server's rights), or notebooks on disk.
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use tools_core::{RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
//! let mut builder = RegistryBuilder::new(run.clone());
//! if let Some(eval) = tools_eval::family(&run).unwrap() {
//!     builder = builder.family(eval);
//! }
//! let registry = builder.build().unwrap();
//! let args = serde_json::json!({"code": "x = 40\nx + 2", "description": "add two numbers in a kernel"});
//! let out = registry.call(Surface::FULL, "eval", args).await.unwrap();
//! assert!(out.text.contains("42"));
//! run.close().await; // the kernel process ends with the run
//! # }
//! ```

mod answer;
mod cell;
mod discover;
#[cfg(feature = "testing")]
mod fuzzing;
mod image;
mod kernel;
mod label;
mod magics;
mod outputs;
mod protocol;
mod tool;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily};

pub use cell::{BridgeCall, CellEnd, CellError, CellSettings, MAX_IMAGES};
pub use discover::{Interpreter, find_node, find_python};
#[cfg(feature = "testing")]
pub use fuzzing::take_in_kernel_messages;
pub use image::{MAX_SIDE, png_size};
pub use outputs::RichOutput;
pub use tool::EvalTool;

/// A kernel language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// CPython, the project's own interpreter.
    #[default]
    #[serde(alias = "py", alias = "python3")]
    Python,
    /// Node.js.
    #[serde(alias = "js", alias = "node")]
    Javascript,
}

impl Language {
    /// `python` or `javascript`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Javascript => "javascript",
        }
    }
    /// Both languages.
    pub const ALL: [Language; 2] = [Language::Python, Language::Javascript];
}

/// Default answer budget of a cell, in characters (`[eval] max_output_chars`).
pub const DEFAULT_ANSWER_CHARS: usize = 4000;

/// The `[eval]` section of `agent-tools.toml`. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// `false` leaves the `eval` tool out of the run.
    pub enabled: Option<bool>,
    /// The idle budget in seconds (default 300): a cell with no output and no bridged call
    /// for this long is interrupted.
    pub idle_timeout_secs: Option<f64>,
    /// Seconds an interrupted cell gets to stop before its kernel is killed (default 5).
    pub interrupt_grace_secs: Option<f64>,
    /// Seconds between progress reports of a running cell (default 5).
    pub progress_interval_secs: Option<f64>,
    /// Seconds a kernel gets to start (default 30).
    pub start_timeout_secs: Option<f64>,
    /// The answer budget: most characters of a cell's answer (default 4000, about 4 KB).
    /// What a cell prints keeps its head and tail within it; its value and traceback get
    /// half each; every cut says how to see the rest.
    pub max_output_chars: Option<usize>,
    /// The Python interpreter to use instead of the project's venv / `python3`.
    pub python: Option<PathBuf>,
    /// The Node.js executable to use instead of `node` on `$PATH`.
    pub node: Option<PathBuf>,
}

fn secs(field: &str, v: Option<f64>, default: f64) -> Result<Duration, ToolError> {
    let v = v.unwrap_or(default);
    if !(v.is_finite() && v > 0.0 && v < 1e7) {
        return Err(ToolError::invalid(
            "config",
            format!("[eval] {field} must be a positive number of seconds, got {v}"),
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

impl EvalConfig {
    /// The cell limits this configuration gives (the defaults where a field is absent).
    pub fn cell_settings(&self) -> Result<CellSettings, ToolError> {
        let max = self.max_output_chars.unwrap_or(DEFAULT_ANSWER_CHARS);
        if max < 200 {
            return Err(ToolError::invalid(
                "config",
                format!("[eval] max_output_chars must be at least 200, got {max}"),
            ));
        }
        Ok(CellSettings {
            idle: secs("idle_timeout_secs", self.idle_timeout_secs, 300.0)?,
            grace: secs("interrupt_grace_secs", self.interrupt_grace_secs, 5.0)?,
            progress_every: secs("progress_interval_secs", self.progress_interval_secs, 5.0)?,
            // What a cell prints leaves room in the answer for the cut marker and a note.
            head: (max - max / 10) / 2,
            tail: (max - max / 10) / 2,
            answer_chars: max,
        })
    }

    /// How long a kernel gets to start.
    pub fn start_timeout(&self) -> Result<Duration, ToolError> {
        secs("start_timeout_secs", self.start_timeout_secs, 30.0)
    }
}

/// The `eval` family of one run: the kernel factory and its one tool.
pub struct EvalFamily {
    run: Arc<Run>,
    config: EvalConfig,
    tool: Arc<EvalTool>,
}

#[tools_core::async_trait]
impl ToolFamily for EvalFamily {
    fn name(&self) -> &str {
        "eval"
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![self.tool.clone()]
    }

    async fn doctor(&self) -> Vec<DoctorEntry> {
        let mut out = Vec::new();
        for lang in Language::ALL {
            let search = tools_core::discovery::ProgramSearch::for_run(&self.run);
            let found = discover::find(lang, &search, &self.config);
            out.push(DoctorEntry {
                family: "eval".into(),
                resource: format!("{} kernel", lang.name()),
                ok: found.is_ok(),
                detail: match found {
                    Ok(i) => format!("{} — {}", i.path.display(), i.why),
                    Err(why) => why,
                },
            });
        }
        if let Ok(s) = self.config.cell_settings() {
            out.push(DoctorEntry {
                family: "eval".into(),
                resource: "cell limits".into(),
                ok: true,
                detail: format!(
                    "idle budget {:.0} s (paused during bridged calls), interrupt grace {:.0} s, answer budget {} characters",
                    s.idle.as_secs_f64(),
                    s.grace.as_secs_f64(),
                    s.answer_chars
                ),
            });
        }
        out
    }
}

/// The `eval` family for `run`, configured from its `[eval]` section; `Ok(None)` when the
/// section says `enabled = false`. Kernels start on first use and are shut down (and their
/// process groups killed) when the run closes.
pub fn family(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    let config: EvalConfig = run.config().section("eval")?;
    if config.enabled == Some(false) {
        return Ok(None);
    }
    // Refuse a bad section now rather than at the first cell.
    config.cell_settings()?;
    config.start_timeout()?;
    let tool = Arc::new(EvalTool::new(config.clone()));
    let kernels = tool.kernels();
    run.on_close(move || {
        Box::pin(async move {
            tool::shutdown_all(&kernels).await;
        })
    });
    Ok(Some(Arc::new(EvalFamily {
        run: Arc::clone(run),
        config,
        tool,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults_and_validation() {
        let s = EvalConfig::default().cell_settings().unwrap();
        assert_eq!(s.idle, Duration::from_secs(300));
        assert_eq!(s.answer_chars, DEFAULT_ANSWER_CHARS);
        assert!(s.head + s.tail < DEFAULT_ANSWER_CHARS);
        let bad = EvalConfig {
            idle_timeout_secs: Some(-1.0),
            ..Default::default()
        };
        assert!(
            bad.cell_settings()
                .unwrap_err()
                .to_string()
                .contains("idle_timeout_secs")
        );
        let c =
            tools_core::Config::parse("[eval]\nidle_timeout_secs = 0.5\npython = \"x\"\n").unwrap();
        let e: EvalConfig = c.section("eval").unwrap();
        assert_eq!(e.idle_timeout_secs, Some(0.5));
        let c = tools_core::Config::parse("[eval]\nidle = 3\n").unwrap();
        assert!(c.section::<EvalConfig>("eval").is_err());
    }
}
