//! The `ask_user` tool: validates the question, numbers the card, asks the gate, and turns
//! the reply into one of four typed outcomes — answered, skipped (success), timed out
//! (error), unavailable (error, at once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tools_core::{CallCtx, Run, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::card::{Card, CardNumbers, Reply};
use crate::gate::{GateError, QuestionGate};
use crate::question::QuestionArgs;

/// What the model is told to do whenever it gets no answer.
pub const PROCEED_INSTRUCTION: &str = "Do not ask this again. Carry on under a stated assumption: choose what \
     seems most reasonable, say in your reply which assumption you made and why, and proceed.";

/// Questions of this run that got no answer, so a repeat is refused instead of shown again.
#[derive(Default)]
struct Unanswered(Mutex<HashMap<String, (u64, &'static str)>>);

fn question_key(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// `ask_user`, bound to one gate.
pub struct AskUserTool {
    gate: Arc<dyn QuestionGate>,
    timeout: Duration,
    numbers: Arc<CardNumbers>,
    unanswered: Arc<Unanswered>,
}

impl AskUserTool {
    /// The tool for `run`, asking through `gate`, waiting up to `timeout` per question.
    pub fn new(run: &Run, gate: Arc<dyn QuestionGate>, timeout: Duration) -> Self {
        AskUserTool {
            gate,
            timeout,
            numbers: CardNumbers::of(run),
            unanswered: run.state(Unanswered::default),
        }
    }

    fn remember(&self, question: &str, card: u64, what: &'static str) {
        if let Ok(mut m) = self.unanswered.0.lock() {
            m.insert(question_key(question), (card, what));
        }
    }
}

#[tools_core::async_trait]
impl Tool for AskUserTool {
    fn name(&self) -> &str {
        "ask_user"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        format!(
            "Ask the human operator a question and wait for the answer (up to {} s). The question is shown as a \
             numbered card (#1, #2, … per run). Use it only when the answer changes what you do and you cannot \
             find it out yourself; a question written as a plain chat message would end your turn instead. Give \
             `options` ({{label, description?}}, at most 20, unique labels) when the answer is a choice, \
             `multi_select` when several may apply, `allow_free_text` to accept a typed answer (default: true \
             without options, false with them), and `context` saying why you ask. Outcomes: answered (the chosen \
             labels and/or text); skipped — a success: carry on under a stated assumption and do not ask again; \
             timed out — an error with the same instruction; no human attached — fails at once.",
            self.timeout.as_secs()
        )
    }
    fn input_schema(&self) -> Value {
        schema_for::<QuestionArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: QuestionArgs = parse_args(args)?;
        // Validate before taking a number, so refused questions leave no gaps.
        args.clone().into_card(0)?;
        if let Ok(m) = self.unanswered.0.lock()
            && let Some((n, what)) = m.get(&question_key(&args.question))
        {
            return Err(ToolError::rejected(format!(
                "this question was already asked as card #{n} and {what}. {PROCEED_INSTRUCTION}"
            )));
        }
        let card = args.into_card(self.numbers.next())?;
        let multi_offered = card.multi_select && self.gate.abilities().multi_select;
        let result = tokio::select! {
            r = self.gate.ask(&card, self.timeout) => r,
            _ = ctx.cancel.cancelled() => {
                return Err(ToolError::rejected(format!("card #{} was withdrawn: the call was cancelled", card.number)));
            }
        };
        let n = card.number;
        match result {
            Ok(Reply::Answered { selected, text }) => Ok(answered(
                &card,
                self.gate.name(),
                multi_offered,
                selected,
                text,
            )),
            Ok(Reply::Skipped { how }) => {
                self.remember(&card.question, n, "was skipped");
                Ok(ToolOutput::text(format!(
                    "Card #{n} was skipped by the operator ({how}). This is not an error and not an answer. \
                     {PROCEED_INSTRUCTION}"
                ))
                .with_structured(json!({
                    "card": n, "outcome": "skipped", "how": how, "gate": self.gate.name(),
                    "instruction": PROCEED_INSTRUCTION,
                })))
            }
            Err(GateError::TimedOut(after)) => {
                self.remember(&card.question, n, "timed out");
                Err(ToolError::timed_out(format!(
                    "card #{n} got no answer within {} s (the operator may be away). {PROCEED_INSTRUCTION}",
                    after.as_secs()
                )))
            }
            Err(GateError::Unavailable(why)) => Err(ToolError::not_available(format!(
                "card #{n} could not be shown: no human is attached to answer ({why}). Do not call ask_user \
                 again in this run; carry on under a stated assumption and say which one you made."
            ))),
        }
    }
}

fn answered(
    card: &Card,
    gate: &str,
    multi_offered: bool,
    selected: Vec<String>,
    text: Option<String>,
) -> ToolOutput {
    let n = card.number;
    let mut lines = vec![format!("Card #{n} answered.")];
    if !selected.is_empty() {
        let which: Vec<String> = selected.iter().map(|s| format!("`{s}`")).collect();
        lines.push(format!("Chosen: {}", which.join(", ")));
    }
    if let Some(t) = &text {
        lines.push(format!("Typed answer: {t}"));
    }
    if card.multi_select && !multi_offered {
        lines.push(
            "Note: this client could offer a single choice only (multi-select needs the 2025-11-25 elicitation \
             schema), so other options may apply too."
                .into(),
        );
    }
    ToolOutput::text(lines.join("\n")).with_structured(json!({
        "card": n,
        "outcome": "answered",
        "selected": selected,
        "text": text,
        "gate": gate,
        "multi_select_offered": multi_offered,
    }))
}
