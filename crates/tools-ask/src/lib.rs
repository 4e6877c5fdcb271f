//! # tools-ask
//!
//! `ask_user` — the only way a run asks its operator anything — and the permission gate
//! for write and exec calls, both drawn as the same kind of **numbered card** through a
//! [`QuestionGate`]:
//!
//! - [`ElicitationGate`]: in `mcp` mode, an MCP `elicitation/create` form through
//!   [`tools_core::Elicitor`]: a flat form with `choice` (one option) or `choices`
//!   (several), `text` for a typed answer, and a required boolean `allow` on permission
//!   cards.
//! - [`TerminalGate`]: a card on the controlling terminal (`/dev/tty`, never stdout), used
//!   by `agent-tools mcp --ask tty` and `agent-tools call`.
//! - [`ChannelGate`]: for embedders — a channel or a closure; the harness draws the card.
//!
//! Every card of a run gets the next number (`#1`, `#2`, …; questions and permission cards
//! share the sequence); it is shown on the card and returned in the result.
//!
//! ## Outcomes
//!
//! | outcome | result | the model is told |
//! |---|---|---|
//! | answered | success: chosen labels (card order) and/or the typed text | the answer |
//! | skipped (declined, cancelled, an empty form or line) | **success** | not an answer; carry on under a stated assumption, do not ask again |
//! | timed out | error `timed_out` | the same instruction |
//! | no human attached (no terminal, client gone) | error `not_available`, **at once** | do not call `ask_user` again; carry on under a stated assumption |
//!
//! An accepted but empty form is a skip, never an empty answer. A question that was skipped
//! or timed out is refused (error `rejected`) if asked again in the same run.
//!
//! Validation refuses, before any card is shown: an empty question, empty or duplicate
//! option labels (ignoring case), more than 20 options, labels over 120 characters,
//! `multi_select` without options, and no options with `allow_free_text: false`.
//!
//! ## Configuration
//!
//! ```toml
//! [ask]
//! timeout_secs = 300           # how long a question card waits (default 300 s)
//! approval_timeout_secs = 300  # how long a permission card waits (default: timeout_secs)
//! ```
//!
//! ## Registration
//!
//! [`family`] registers `ask_user` (tier read) only when a gate is given. In `mcp` mode the
//! facade gives one when the client declared the elicitation capability in `initialize`, or
//! when `--ask tty` is set; otherwise `ask_user` is absent from `tools/list`.
//!
//! ## Permission cards
//!
//! [`GateApprover`] implements [`tools_core::Approver`] for `--approve ask|auto|deny`:
//! `auto` approves, `deny` refuses every write and exec call, `ask` draws a yes/no card
//! (elicitation: a required boolean `allow`; terminal: `y`/`n`, Enter refuses). Anything but
//! an explicit yes — no gate, a skip, an empty form, a timeout — is a denial whose reason
//! says why (fail-closed); the registry then does not run the call.
//!
//! ## Multi-select and protocol versions
//!
//! Multi-select needs the 2025-11-25 elicitation schema (an array of enum items). A client
//! that negotiated 2025-06-18 gets a single-choice `choice` field instead; the message says
//! only one can be picked, and the result notes that other options may apply.
//!
//! ## The newest MCP protocol (2026-07-28)
//!
//! rmcp 3.11 also speaks 2026-07-28, which has no `initialize` and no server-to-client
//! requests. Elicitation there is a multi-round-trip call: `tools/call` answers with an
//! `input_required` result carrying the `elicitation/create` request and an opaque
//! `requestState`; the client answers it and retries the same call with `inputResponses`
//! (rmcp: `CallToolResponse::InputRequired`, sent only to peers on 2026-07-28 or newer).
//! What happens, checked with the MCP Python SDK 2.3 against our binary:
//!
//! - In its default `mode="auto"` the SDK negotiates 2026-07-28. It sends its capabilities
//!   (elicitation included) in every request's `_meta`, and its `call_tool` drives
//!   `input_required` rounds through the `elicitation_callback`.
//! - tools-mcp hands the run an [`tools_core::Elicitor`] when those capabilities declare
//!   elicitation. The tool call runs in the background; when this crate's gate asks, the
//!   `tools/call` round ends with `input_required` (the form, and a handle as
//!   `requestState`); the retry's `inputResponses` reach the waiting gate, and the call goes
//!   on — to its result or to the next question. Questions, multi-select (the 2025-11-25
//!   schema) and permission cards all work this way; nothing in this crate differs.
//! - A client on 2026-07-28 that declares no elicitation gets no `ask_user`, and
//!   `--approve ask` denies every write and exec call, saying no human is attached.
//! - With `mode="legacy"` (the `initialize` handshake) the same questions go out as
//!   `elicitation/create` server-to-client requests. A client pinned to 2025-06-18 gets
//!   single-choice forms.
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::sync::Arc;
//! use tools_ask::{ChannelGate, Reply};
//! use tools_core::{RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
//! let gate = ChannelGate::from_fn(|card| async move {
//!     Ok(Reply::Answered { selected: vec![card.options[0].label.clone()], text: None })
//! });
//! let family = tools_ask::family(&run, Some(Arc::new(gate))).unwrap().unwrap();
//! let registry = RegistryBuilder::new(run.clone()).family(family).build().unwrap();
//! let out = registry
//!     .call(Surface::PLAN, "ask_user", serde_json::json!({
//!         "question": "Which database?",
//!         "options": [{"label": "Postgres"}, {"label": "SQLite"}],
//!     }))
//!     .await
//!     .unwrap();
//! assert!(out.text.contains("Card #1 answered"));
//! # }
//! ```

mod approve;
mod card;
mod elicit;
mod gate;
mod question;
mod terminal;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily};

pub use approve::{ApproveMode, GateApprover};
pub use card::{
    ALLOW, Card, CardKind, CardOption, DENY, MAX_ANSWER_CHARS, MAX_CONTEXT_CHARS,
    MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS, Reply,
};
pub use elicit::ElicitationGate;
pub use gate::{ChannelGate, GateAbilities, GateError, PendingCard, QuestionGate};
pub use question::{OptionArg, QuestionArgs};
pub use terminal::TerminalGate;
pub use tool::{AskUserTool, PROCEED_INSTRUCTION};

/// The `[ask]` section of `agent-tools.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskConfig {
    /// How long a question card waits for an answer, in seconds (default 300).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// How long a permission card waits, in seconds (default: `timeout_secs`).
    #[serde(default)]
    pub approval_timeout_secs: Option<u64>,
}

/// The question timeout when none is configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

impl AskConfig {
    /// The `[ask]` section of `run`'s configuration (defaults when absent).
    pub fn of(run: &Run) -> Result<AskConfig, ToolError> {
        let cfg: AskConfig = run.config().section("ask")?;
        if cfg.timeout_secs == Some(0) || cfg.approval_timeout_secs == Some(0) {
            return Err(ToolError::invalid(
                "config",
                "section [ask]: timeouts must be at least 1 second",
            ));
        }
        Ok(cfg)
    }
    /// How long a question waits.
    pub fn timeout(&self) -> Duration {
        self.timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TIMEOUT)
    }
    /// How long a permission card waits.
    pub fn approval_timeout(&self) -> Duration {
        self.approval_timeout_secs
            .map(Duration::from_secs)
            .unwrap_or_else(|| self.timeout())
    }
}

/// The `ask` family: `ask_user` over one gate.
pub struct AskFamily {
    gate: Arc<dyn QuestionGate>,
    tool: Arc<AskUserTool>,
}

/// Wires `ask_user` for `run` through `gate`. `Ok(None)` when there is no gate (the
/// registration rule: no human to ask, no tool).
pub fn family(
    run: &Arc<Run>,
    gate: Option<Arc<dyn QuestionGate>>,
) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    let cfg = AskConfig::of(run)?;
    let Some(gate) = gate else {
        return Ok(None);
    };
    let tool = Arc::new(AskUserTool::new(run, Arc::clone(&gate), cfg.timeout()));
    Ok(Some(Arc::new(AskFamily { gate, tool })))
}

/// The permission approver for `run` in `mode`, drawing cards through `gate`, with the
/// `[ask]` approval timeout.
pub fn approver(
    run: &Arc<Run>,
    mode: ApproveMode,
    gate: Option<Arc<dyn QuestionGate>>,
) -> Result<GateApprover, ToolError> {
    let cfg = AskConfig::of(run)?;
    Ok(GateApprover::new(run, mode, gate, cfg.approval_timeout()))
}

#[tools_core::async_trait]
impl ToolFamily for AskFamily {
    fn name(&self) -> &str {
        "ask"
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![self.tool.clone() as Arc<dyn Tool>]
    }
    async fn doctor(&self) -> Vec<DoctorEntry> {
        let (ok, detail) = match self.gate.status() {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        vec![DoctorEntry {
            family: "ask".into(),
            resource: format!("question gate: {}", self.gate.name()),
            ok,
            detail,
        }]
    }
}
