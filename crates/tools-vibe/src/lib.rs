//! # tools-vibe
//!
//! Background workers: the five `vibe_*` tools let an agent hand a brief to another coding
//! agent CLI (a *worker*), keep working, and collect the result later.
//!
//! | tool | arguments | what it does |
//! |---|---|---|
//! | `vibe_spawn` | `brief`, `label`, `tier?` | starts a worker and returns at once with its id (`w1`, `w2`, …) |
//! | `vibe_send` | `worker_id`, `message` | appends the message to the brief and runs it again (the next *round*); a running round is stopped first |
//! | `vibe_wait` | `worker_id`, `timeout_seconds?` | blocks until the worker finishes, stalls, or the timeout (default 300 s) passes — then "still running", not an error |
//! | `vibe_kill` | `worker_id` | ends the worker's process group (SIGTERM, SIGKILL after 2 s) |
//! | `vibe_list` | — | id, label, tier, status, round, elapsed time and the final result (capped) |
//!
//! All five are tier `read`: the approval gate belongs to the workers' own tools, where the
//! editing happens. What this crate is not for: running the agent loop of a worker, or
//! talking to a model — the worker is whatever CLI the configuration names.
//!
//! ## Vibe mode: configuration
//!
//! The tools are registered only when `agent-tools.toml` has a `[vibe]` table with at least
//! one tier; [`family`] returns `Ok(None)` otherwise. One sub-table per tier:
//!
//! ```toml
//! [vibe]
//! max_running = 8                 # workers running at once (default 8)
//!
//! [vibe.fast]
//! command = ["codex", "exec", "--json", "--full-auto", "--skip-git-repo-check", "{brief}"]
//! result = "json-events"
//! timeout_seconds = 1800          # per round; past it the worker shows `timed out`
//! stall_seconds = 300             # no output this long → `stalled` (default 300)
//!
//! [vibe.good]
//! command = ["claude", "-p", "--output-format", "stream-json", "--verbose",
//!            "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Read,Edit,Write"]
//! result = "json-events"          # no {brief}: the brief goes to stdin, which is then closed
//! cwd = "."                       # relative to the workspace root, must stay inside it
//! env = { CLAUDE_CODE_MAX_OUTPUT_TOKENS = "16000" }
//! ```
//!
//! - `command`: an argument containing `{brief}` gets the brief substituted (at most 120 KiB,
//!   the kernel's limit for one argument). The brief always stays one argument: a command
//!   that would put it into the code a shell or interpreter runs (`["sh", "-c", "echo
//!   {brief}"]`, `["python3", "-c", "{brief}"]`) is refused when the run opens; write
//!   `["sh", "-c", "mycli \"$1\"", "sh", "{brief}"]` instead. Without `{brief}` anywhere the brief is written to
//!   the worker's stdin and stdin is closed; otherwise stdin is `/dev/null` — `codex exec` and
//!   `opencode run` wait forever on an open stdin.
//! - `result = "stdout-tail"` (default): the end of stdout is the result and the exit code
//!   decides done or failed.
//! - `result = "json-events"`: stdout is one JSON event per line. The final message comes from
//!   the built-in shapes of `claude` (`result` event), `codex` (`item.completed` with an
//!   `agent_message`) and `opencode` (`text` events), or from `result_field` (a dotted path
//!   such as `item.text`, optionally narrowed by `result_filter = { "item.type" =
//!   "agent_message" }`). The status comes from the terminal event — `result` (failed when
//!   `is_error`), `turn.completed` / `turn.failed`, `step_finish` (unless its reason is
//!   `tool-calls`) — and only without one from the exit code: known CLIs exit 0 while work is
//!   still running, or 1 after an error they recovered from. A worker still alive
//!   `linger_seconds` (default 10) after its terminal event is ended, keeping that status.
//! - `read_only_command`: the command used when `vibe_spawn` is called from a read-capped
//!   surface (`plan`, `read-only`), e.g. `["codex", "exec", "--sandbox", "read-only",
//!   "{brief}"]` or `["claude", "-p", "--permission-mode", "plan", "{brief}"]`. A tier without
//!   one is refused on those surfaces (a worker there could change files or run programs).
//! - Trust and environment: in an untrusted workspace (see `tools_core::trust`) the
//!   repository's `agent-tools.toml` cannot name programs, so its tiers are dropped and vibe
//!   mode is off unless the user trusts the workspace (`--trust`). A worker starts from the
//!   minimal environment of `tools_core::child_env` plus the user's `[env] workers` list (its
//!   own API key, e.g. `ANTHROPIC_API_KEY`) and the tier's `env`; logs are created private
//!   (0600) with `O_EXCL|O_NOFOLLOW` in the run's own folder.
//! - The program is looked up on the worker's `PATH` (the tier's `env.PATH` if set); a
//!   program with a `/` is taken relative to the tier's `cwd`. `agent-tools doctor` reports
//!   each tier's command and whether it resolves, using the same lookup.
//!
//! Each worker round runs in its own process group in the workspace (or the tier's `cwd`),
//! registered with the run, with `AGENT_TOOLS_WORKER_ID` and `AGENT_TOOLS_WORKER_ROUND` in its
//! environment. Its stdout and stderr go to a bounded in-memory tail and, in full, to
//! `<run state dir>/vibe/<id>.log` (the path is in every result). The final result is capped
//! at 4000 characters in tool results; `vibe_list` shows 600 per worker and at most 50
//! workers. Closing the run kills every worker; `vibe_wait` never outlives the run.
//!
//! Statuses: `running`; `stalled` (alive, but silent for `stall_seconds`; output brings it
//! back to `running`; `vibe_wait` returns early when a worker stalls while it waits);
//! `done`; `failed` (terminal error event, non-zero exit, signal, or could not start — with
//! the exit code and the output tail); `killed` (`vibe_kill`, a `vibe_send` restart, or the
//! run closed); `timed out`. Elapsed time is that of the current round.
//!
//! ## Running the example CLIs without prompts
//!
//! No human is attached to a worker: anything that asks for approval blocks it until the
//! stall watchdog notices. Give every worker its own approval policy up front:
//!
//! - **codex exec**: `--full-auto` (workspace-write sandbox, approvals on failure only), or
//!   `-c approval_policy="never" --sandbox workspace-write` for no approvals at all; add
//!   `--json` for `result = "json-events"` and `--skip-git-repo-check` outside a git checkout.
//! - **claude -p**: `--permission-mode acceptEdits` plus `--allowedTools "Bash,Read,Edit,Write"`
//!   (or `--dangerously-skip-permissions` inside a sandbox you trust); add
//!   `--output-format stream-json --verbose` for `json-events`.
//! - **opencode run**: set `"permission": {"edit": "allow", "bash": "allow"}` in the
//!   worker's `opencode.json` (or through `env = { OPENCODE_CONFIG = "…" }`) so that no
//!   permission is asked; add `--format json` for `json-events`.
//!
//! ## Giving a worker its own agent-tools surface
//!
//! A worker can use the same tools through its own MCP server: point its MCP configuration at
//! `agent-tools mcp --surface full` (the server opens its own run, in the worker's directory).
//! For example `codex exec -c 'mcp_servers.agent_tools.command="agent-tools"' -c
//! 'mcp_servers.agent_tools.args=["mcp","--surface","full"]' …`, or for `claude -p` a file
//! given with `--mcp-config`:
//!
//! ```json
//! {"mcpServers": {"agent-tools": {"command": "agent-tools", "args": ["mcp", "--surface", "full"]}}}
//! ```
//!
//! Workers never get `ask_user`: no human answers a worker, so the question gate is not wired
//! for them (a worker's MCP client has no elicitation to offer, and the gate fails closed
//! instead of blocking). Leave `vibe` out of a worker's configuration too, so workers do not
//! spawn workers.
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use tools_core::{Config, RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! let mut opts = RunOptions::at(dir.path()).unwrap();
//! opts.config = Config::parse("[vibe.fast]\ncommand = [\"echo\", \"done: {brief}\"]\n").unwrap();
//! let run = Run::new(opts).unwrap();
//! let vibe = tools_vibe::family(&run).unwrap().expect("a [vibe] table turns vibe mode on");
//! let registry = RegistryBuilder::new(run.clone()).family(vibe).build().unwrap();
//! let spawned = registry
//!     .call(Surface::FULL, "vibe_spawn", serde_json::json!({"brief": "tidy up", "label": "demo"}))
//!     .await
//!     .unwrap();
//! assert!(spawned.text.contains("w1"));
//! let done = registry
//!     .call(Surface::FULL, "vibe_wait", serde_json::json!({"worker_id": "w1", "timeout_seconds": 30}))
//!     .await
//!     .unwrap();
//! assert!(done.text.contains("done: tidy up"), "{}", done.text);
//! run.close().await;
//! # }
//! ```

mod config;
mod events;
mod log;
mod tools;
mod worker;

use std::sync::{Arc, Weak};

use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily};

pub use config::{BRIEF_PLACEHOLDER, DEFAULT_TIER, ResultFormat, TierConfig, VibeConfig};
pub use events::{EventMeaning, EventReader, Terminal};
pub use worker::{
    MAX_ARG_BRIEF, MAX_BRIEF, RESULT_CAP, Status, Worker, WorkerList, WorkerSnapshot, worker_cwd,
};

use tools::{Shared, VibeKill, VibeList, VibeSend, VibeSpawn, VibeWait};

/// The configuration section this family reads.
pub const SECTION: &str = "vibe";

/// The vibe family of one run: the five tools over the run's worker list.
pub struct VibeFamily {
    shared: Arc<Shared>,
    run: Weak<Run>,
}

impl VibeFamily {
    /// The family for `run` with an explicit configuration (for harnesses that do not use
    /// `agent-tools.toml`). The configuration is checked first. Every family built for one
    /// run shares that run's worker list.
    pub fn new(run: &Arc<Run>, config: VibeConfig) -> Result<Self, ToolError> {
        config.validate()?;
        let list = run.state(WorkerList::default);
        list.install_close_hook(run);
        Ok(VibeFamily {
            shared: Arc::new(Shared { config, list }),
            run: Arc::downgrade(run),
        })
    }

    /// The run's worker list.
    pub fn workers(&self) -> &Arc<WorkerList> {
        &self.shared.list
    }
}

/// The vibe family for `run`, from the `[vibe]` section of its configuration. `Ok(None)`
/// when there is no `[vibe]` table or it names no tier (vibe mode off: the five tools are
/// absent); an error when the section is malformed.
pub fn family(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    if !run.config().has_section(SECTION) {
        return Ok(None);
    }
    let mut config: VibeConfig = run.config().section(SECTION)?;
    // An untrusted run dropped the repository's worker commands: those tiers do not exist.
    let ignored = run.config().ignored_keys();
    config
        .tiers
        .retain(|name, _| !ignored.contains(&format!("{SECTION}.{name}.command")));
    if config.tiers.is_empty() {
        return Ok(None);
    }
    Ok(Some(Arc::new(VibeFamily::new(run, config)?)))
}

#[tools_core::async_trait]
impl ToolFamily for VibeFamily {
    fn name(&self) -> &str {
        "vibe"
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let s = &self.shared;
        vec![
            Arc::new(VibeSpawn(Arc::clone(s))),
            Arc::new(VibeSend(Arc::clone(s))),
            Arc::new(VibeWait(Arc::clone(s))),
            Arc::new(VibeKill(Arc::clone(s))),
            Arc::new(VibeList(Arc::clone(s))),
        ]
    }

    async fn doctor(&self) -> Vec<DoctorEntry> {
        let Some(run) = self.run.upgrade() else {
            return Vec::new();
        };
        self.shared
            .config
            .tiers
            .iter()
            .map(|(name, tier)| {
                let command = tier.command.join(" ");
                let resolved = worker_cwd(&run, tier)
                    .map_err(|e| e.to_string())
                    .and_then(|cwd| tier.resolve_program(&cwd));
                let brief = if tier.brief_in_args() {
                    "brief in arguments"
                } else {
                    "brief on stdin"
                };
                let (ok, detail) = match resolved {
                    Ok(p) => (true, format!("{command} → {} ({brief})", p.display())),
                    Err(why) => (false, format!("{command}: {why}")),
                };
                DoctorEntry {
                    family: "vibe".into(),
                    resource: format!("tier {name}"),
                    ok,
                    detail,
                }
            })
            .collect()
    }
}
