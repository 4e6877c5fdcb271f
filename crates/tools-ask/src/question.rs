//! `ask_user`'s arguments and their validation: a question that cannot be answered is
//! refused before any human sees it.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::Deserialize;
use tools_core::ToolError;
use tools_core::text::cut_text;

use crate::card::{
    Card, CardKind, CardOption, MAX_CONTEXT_CHARS, MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS,
    MAX_OPTIONS, MAX_QUESTION_CHARS,
};

/// One choice offered to the human.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionArg {
    /// A short label; it is what comes back when chosen. Unique within the question.
    pub label: String,
    /// Optional: what choosing it means.
    #[serde(default)]
    pub description: Option<String>,
}

/// The arguments of `ask_user`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionArgs {
    /// What to ask, as one clear question.
    pub question: String,
    /// Optional: why you ask, and what the answer changes.
    #[serde(default)]
    pub context: Option<String>,
    /// Choices, each `{label, description?}` (at most 20).
    #[serde(default)]
    pub options: Vec<OptionArg>,
    /// Whether a typed answer is accepted. Defaults to true when there are no options,
    /// false otherwise.
    #[serde(default)]
    pub allow_free_text: Option<bool>,
    /// Whether several options may be chosen (needs options).
    #[serde(default)]
    pub multi_select: bool,
}

impl QuestionArgs {
    /// Validates the question and turns it into card `number`: an empty question,
    /// empty or duplicate labels (ignoring case), too many options, `multi_select` without
    /// options and a question that admits no answer at all are refused.
    pub fn into_card(self, number: u64) -> Result<Card, ToolError> {
        let question = self.question.trim();
        if question.is_empty() {
            return Err(ToolError::invalid(
                "question",
                "the question is empty; write what you want to know",
            ));
        }
        if self.options.len() > MAX_OPTIONS {
            return Err(ToolError::invalid(
                "options",
                format!(
                    "{} options given, at most {MAX_OPTIONS} are allowed; narrow the choice or ask in two steps",
                    self.options.len()
                ),
            ));
        }
        let mut seen = HashSet::new();
        let mut options = Vec::with_capacity(self.options.len());
        for (i, o) in self.options.into_iter().enumerate() {
            let label = o.label.trim().to_string();
            if label.is_empty() {
                return Err(ToolError::invalid(
                    format!("options[{i}].label"),
                    "the label is empty",
                ));
            }
            if label.chars().count() > MAX_LABEL_CHARS {
                return Err(ToolError::invalid(
                    format!("options[{i}].label"),
                    format!(
                        "the label is longer than {MAX_LABEL_CHARS} characters; put the detail in `description`"
                    ),
                ));
            }
            if !seen.insert(label.to_lowercase()) {
                return Err(ToolError::invalid(
                    format!("options[{i}].label"),
                    format!(
                        "the label `{label}` is given twice; option labels must be unique (ignoring case)"
                    ),
                ));
            }
            let description = o
                .description
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty())
                .map(|d| cut_text(&d, MAX_DESCRIPTION_CHARS));
            options.push(CardOption { label, description });
        }
        if self.multi_select && options.is_empty() {
            return Err(ToolError::invalid(
                "multi_select",
                "`multi_select` needs `options` to choose from; give options or drop `multi_select`",
            ));
        }
        let allow_free_text = self.allow_free_text.unwrap_or(options.is_empty());
        if options.is_empty() && !allow_free_text {
            return Err(ToolError::invalid(
                "allow_free_text",
                "with no `options` and `allow_free_text: false` the question has no possible answer; \
                 give options or allow a typed answer",
            ));
        }
        let context = self
            .context
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .map(|c| cut_text(&c, MAX_CONTEXT_CHARS));
        Ok(Card {
            number,
            kind: CardKind::Question,
            question: cut_text(question, MAX_QUESTION_CHARS),
            context,
            options,
            allow_free_text,
            multi_select: self.multi_select,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(v: serde_json::Value) -> Result<Card, ToolError> {
        tools_core::parse_args::<QuestionArgs>(v)?.into_card(1)
    }

    fn field(e: ToolError) -> Option<String> {
        match e {
            ToolError::InvalidArguments { field, .. } => field,
            other => panic!("not invalid arguments: {other:?}"),
        }
    }

    #[test]
    fn refuses_unanswerable_questions() {
        assert_eq!(
            field(card(json!({"question": "  "})).unwrap_err()).as_deref(),
            Some("question")
        );
        let dup = json!({"question": "q", "options": [{"label": "A"}, {"label": " a "}]});
        assert_eq!(
            field(card(dup).unwrap_err()).as_deref(),
            Some("options[1].label")
        );
        let multi = json!({"question": "q", "multi_select": true});
        assert_eq!(
            field(card(multi).unwrap_err()).as_deref(),
            Some("multi_select")
        );
        let none = json!({"question": "q", "allow_free_text": false});
        assert_eq!(
            field(card(none).unwrap_err()).as_deref(),
            Some("allow_free_text")
        );
        let empty_label = json!({"question": "q", "options": [{"label": ""}]});
        assert_eq!(
            field(card(empty_label).unwrap_err()).as_deref(),
            Some("options[0].label")
        );
        let many: Vec<_> = (0..21).map(|i| json!({"label": format!("o{i}")})).collect();
        assert_eq!(
            field(card(json!({"question": "q", "options": many})).unwrap_err()).as_deref(),
            Some("options")
        );
        assert!(card(json!({"question": "q", "bogus": 1})).is_err());
    }

    #[test]
    fn defaults_free_text_to_no_options() {
        let c = card(json!({"question": "name?"})).unwrap();
        assert!(c.allow_free_text);
        let c = card(json!({"question": "q", "options": [{"label": "A", "description": " "}]}))
            .unwrap();
        assert!(!c.allow_free_text);
        assert_eq!(c.options[0].description, None);
        let long = "x".repeat(3000);
        let c = card(json!({"question": long})).unwrap();
        assert!(c.question.contains("[cut: 1000 more characters]"));
    }
}
