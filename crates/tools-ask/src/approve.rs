//! The permission gate: an [`Approver`] whose `ask` mode draws a yes/no card through the
//! same question gate `ask_user` uses. Fail-closed: with no gate, no human, no answer or a
//! skip, the call is denied and the reason says so.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tools_core::text::cut_text;
use tools_core::{Approval, ApprovalRequest, Approver, Run};

use crate::card::{ALLOW, Card, CardKind, CardNumbers, CardOption, DENY, Reply};
use crate::gate::{GateError, QuestionGate};

/// The longest argument summary shown on a permission card.
const MAX_ARGS_CHARS: usize = 1_500;

/// What the approver does for write and exec calls (`--approve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApproveMode {
    /// Ask the human on a yes/no card; deny when nobody can answer.
    Ask,
    /// Approve everything (the surface already caps what is visible).
    #[default]
    Auto,
    /// Deny every write and exec call.
    Deny,
}

impl FromStr for ApproveMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ask" => Ok(ApproveMode::Ask),
            "auto" => Ok(ApproveMode::Auto),
            "deny" => Ok(ApproveMode::Deny),
            other => Err(format!(
                "unknown approval mode `{other}`; use ask, auto or deny"
            )),
        }
    }
}

/// The approver behind `--approve ask|auto|deny`.
pub struct GateApprover {
    mode: ApproveMode,
    gate: Option<Arc<dyn QuestionGate>>,
    timeout: Duration,
    numbers: Arc<CardNumbers>,
}

impl GateApprover {
    /// An approver for `run` in `mode`; in `ask` mode cards go through `gate` (none: every
    /// write and exec call is denied) and wait up to `timeout`.
    pub fn new(
        run: &Run,
        mode: ApproveMode,
        gate: Option<Arc<dyn QuestionGate>>,
        timeout: Duration,
    ) -> Self {
        GateApprover {
            mode,
            gate,
            timeout,
            numbers: CardNumbers::of(run),
        }
    }

    /// The mode.
    pub fn mode(&self) -> ApproveMode {
        self.mode
    }
}

/// The permission card for `req`.
pub fn permission_card(number: u64, req: &ApprovalRequest) -> Card {
    let args = match &req.args {
        Value::Object(m) if m.is_empty() => "(no arguments)".to_string(),
        v => serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()),
    };
    let what = match req.tier {
        tools_core::Tier::Exec => "starts or controls a process",
        _ => "changes files",
    };
    Card {
        number,
        kind: CardKind::Permission,
        question: format!(
            "Allow the agent to run `{}` ({} tier: {what})?",
            req.tool, req.tier
        ),
        context: Some(format!("Arguments:\n{}", cut_text(&args, MAX_ARGS_CHARS))),
        options: vec![
            CardOption {
                label: ALLOW.into(),
                description: Some("run this call once".into()),
            },
            CardOption {
                label: DENY.into(),
                description: Some("refuse it".into()),
            },
        ],
        allow_free_text: false,
        multi_select: false,
    }
}

#[tools_core::async_trait]
impl Approver for GateApprover {
    async fn approve(&self, req: &ApprovalRequest) -> Approval {
        match self.mode {
            ApproveMode::Auto => return Approval::Approved,
            ApproveMode::Deny => {
                return Approval::Denied(
                    "write and exec calls are refused in this run (--approve deny); do the work with read tools or \
                     tell the operator what you would change"
                        .into(),
                );
            }
            ApproveMode::Ask => {}
        }
        let Some(gate) = &self.gate else {
            return Approval::Denied(
                "approval is required (--approve ask) but no human is attached to approve it (no question gate: \
                 the client declared no elicitation and no terminal was configured), so it is refused \
                 (fail-closed); nothing was run"
                    .into(),
            );
        };
        let card = permission_card(self.numbers.next(), req);
        let n = card.number;
        match gate.ask(&card, self.timeout).await {
            Ok(Reply::Answered { selected, .. }) if selected.iter().any(|s| s == ALLOW) => {
                Approval::Approved
            }
            Ok(Reply::Answered { .. }) => {
                Approval::Denied(format!("the operator refused it on permission card #{n}"))
            }
            Ok(Reply::Skipped { how }) => Approval::Denied(format!(
                "permission card #{n} was not approved ({how}); nothing was run"
            )),
            Err(GateError::TimedOut(t)) => Approval::Denied(format!(
                "permission card #{n} got no answer within {} s, so it is refused (fail-closed); nothing was run",
                t.as_secs()
            )),
            Err(GateError::Unavailable(why)) => Approval::Denied(format!(
                "permission card #{n} could not be shown ({why}), so it is refused (fail-closed); nothing was run"
            )),
        }
    }
}
