//! The card: what every gate shows a human, whether it asks a question or for permission.
//! One type for both so a harness renders one kind of card, and one numbering per run so
//! "#3" in the conversation means the same card on every gate.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use tools_core::Run;

/// The most options a question may offer. More is a menu nobody reads; the model is told to
/// narrow the choice instead.
pub const MAX_OPTIONS: usize = 20;
/// The longest option label (labels are returned verbatim, so they are refused, not cut).
pub const MAX_LABEL_CHARS: usize = 120;
/// Longer questions are cut visibly on the card.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// Longer contexts and descriptions are cut visibly on the card.
pub const MAX_CONTEXT_CHARS: usize = 4_000;
/// Longer option descriptions are cut visibly on the card.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// Longer typed answers are cut visibly before they reach the model.
pub const MAX_ANSWER_CHARS: usize = 8_000;

/// The label of the "yes" option of a permission card.
pub const ALLOW: &str = "allow";
/// The label of the "no" option of a permission card.
pub const DENY: &str = "deny";

/// What a card asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CardKind {
    /// A question from `ask_user`.
    Question,
    /// "May this write or exec call run?" — options [`ALLOW`] and [`DENY`].
    Permission,
}

/// One choice on a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardOption {
    /// The label; returned verbatim when chosen.
    pub label: String,
    /// What choosing it means (already cut to [`MAX_DESCRIPTION_CHARS`]).
    pub description: Option<String>,
}

/// A card as every gate shows it. Texts are already cut to the caps above.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Card {
    /// The run-wide card number (`#1`, `#2`, …), shown on the card and returned.
    pub number: u64,
    /// Question or permission.
    pub kind: CardKind,
    /// What is asked.
    pub question: String,
    /// Why it is asked and what the answer changes.
    pub context: Option<String>,
    /// The choices, in order; numbered from 1 on the terminal.
    pub options: Vec<CardOption>,
    /// Whether a typed answer is accepted.
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    pub multi_select: bool,
}

impl Card {
    /// The labels, in order.
    pub fn labels(&self) -> Vec<&str> {
        self.options.iter().map(|o| o.label.as_str()).collect()
    }

    /// The option whose label equals `label` (exactly, then ignoring case and outer spaces).
    pub fn find_label(&self, label: &str) -> Option<&str> {
        let trimmed = label.trim();
        self.options
            .iter()
            .find(|o| o.label == label)
            .or_else(|| {
                self.options
                    .iter()
                    .find(|o| o.label.eq_ignore_ascii_case(trimmed))
            })
            .map(|o| o.label.as_str())
    }

    /// The card's body as plain text — question, context, numbered options with their
    /// descriptions — without the input instructions, which depend on the gate. Gates and
    /// harnesses that draw the card themselves can reuse it.
    pub fn body_text(&self) -> String {
        let mut body = String::new();
        match self.kind {
            CardKind::Question => {
                body.push_str(&format!("Question #{}: {}\n", self.number, self.question))
            }
            CardKind::Permission => {
                body.push_str(&format!("Permission #{}: {}\n", self.number, self.question))
            }
        }
        if let Some(c) = &self.context {
            body.push('\n');
            body.push_str(c);
            body.push('\n');
        }
        if self.kind == CardKind::Question && !self.options.is_empty() {
            body.push('\n');
            for (i, o) in self.options.iter().enumerate() {
                match &o.description {
                    Some(d) => body.push_str(&format!("  {}. {} — {}\n", i + 1, o.label, d)),
                    None => body.push_str(&format!("  {}. {}\n", i + 1, o.label)),
                }
            }
        }
        body
    }
}

/// A human's reply to a card, as a gate reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Chosen labels (each one of the card's labels) and/or typed text; never both empty.
    Answered {
        /// The labels chosen, in card order.
        selected: Vec<String>,
        /// The typed answer, if any (trimmed, non-empty).
        text: Option<String>,
    },
    /// The human chose not to answer (declined, cancelled, an empty form or line).
    Skipped {
        /// How it was skipped, e.g. `declined in the client`.
        how: String,
    },
}

impl Reply {
    /// An answer, or a skip when both the selection and the text are empty — an empty
    /// accepted form is not an answer.
    pub fn answer(selected: Vec<String>, text: Option<String>, empty_how: &str) -> Reply {
        let text = text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        if selected.is_empty() && text.is_none() {
            return Reply::Skipped {
                how: empty_how.to_string(),
            };
        }
        Reply::Answered { selected, text }
    }
}

/// The run's card counter, kept in `run.state()` so questions and permission prompts of one
/// run share one sequence.
#[derive(Debug, Default)]
pub struct CardNumbers(AtomicU64);

impl CardNumbers {
    /// The counter of `run`.
    pub fn of(run: &Run) -> std::sync::Arc<CardNumbers> {
        run.state(CardNumbers::default)
    }
    /// The next number: 1, 2, 3, …
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_answers_are_skips() {
        assert!(matches!(
            Reply::answer(vec![], Some("  ".into()), "empty form"),
            Reply::Skipped { how } if how == "empty form"
        ));
        assert_eq!(
            Reply::answer(vec![], Some(" x ".into()), "e"),
            Reply::Answered {
                selected: vec![],
                text: Some("x".into())
            }
        );
    }

    #[test]
    fn labels_match_ignoring_case() {
        let card = Card {
            number: 1,
            kind: CardKind::Question,
            question: "q".into(),
            context: None,
            options: vec![CardOption {
                label: "Postgres".into(),
                description: Some("robust".into()),
            }],
            allow_free_text: false,
            multi_select: false,
        };
        assert_eq!(card.find_label(" postgres "), Some("Postgres"));
        assert_eq!(card.find_label("mysql"), None);
        assert!(card.body_text().contains("  1. Postgres — robust"));
        assert!(card.body_text().starts_with("Question #1: q"));
    }
}
