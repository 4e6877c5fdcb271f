//! The MCP elicitation gate: a card becomes one `elicitation/create` form through
//! [`tools_core::Elicitor`] (tools-mcp implements it over the client connection).
//!
//! The form is flat, as elicitation requires:
//!
//! | property  | when | schema |
//! |---|---|---|
//! | `choice`  | options, single select (or multi-select on a 2025-06-18 client) | string enum; titles `label — description` (`oneOf` const/title on 2025-11-25, `enum` + `enumNames` on 2025-06-18) |
//! | `choices` | options, multi-select, client on 2025-11-25 or newer | array of enum items (`items.anyOf` const/title) |
//! | `text`    | `allow_free_text` | string |
//! | `allow`   | permission cards | boolean, required |
//!
//! The question, the context and the numbered options with their descriptions go in the
//! message, with what to do (pick one / several, type, decline to skip). `accept` with a
//! choice or text is the answer; `decline` and `cancel` are skips; an `accept` whose form
//! is empty (nothing chosen, no text) is a skip too, never an empty answer.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tools_core::text::cut_text;
use tools_core::{ElicitOutcome, Elicitor, ToolError};

use crate::card::{ALLOW, Card, CardKind, DENY, MAX_ANSWER_CHARS, Reply};
use crate::gate::{GateAbilities, GateError, QuestionGate};

/// The first protocol version whose elicitation schema has multi-select (arrays of enum
/// items) and titled `oneOf` enums.
pub const MULTI_SELECT_PROTOCOL: &str = "2025-11-25";

/// Asks through the MCP client's elicitation (form mode).
pub struct ElicitationGate {
    elicitor: Arc<dyn Elicitor>,
}

impl ElicitationGate {
    /// A gate over `elicitor`.
    pub fn new(elicitor: Arc<dyn Elicitor>) -> Self {
        ElicitationGate { elicitor }
    }

    fn modern(&self) -> bool {
        // Protocol versions are ISO dates, so string order is time order.
        self.elicitor.protocol_version().as_str() >= MULTI_SELECT_PROTOCOL
    }
}

/// The elicitation message and requested schema for `card`; `modern` says whether the
/// client negotiated [`MULTI_SELECT_PROTOCOL`] or newer.
pub fn form_for(card: &Card, modern: bool) -> (String, Value) {
    let mut message = card.body_text();
    let mut props = Map::new();
    let mut required = Vec::new();
    if card.kind == CardKind::Permission {
        props.insert(
            "allow".into(),
            json!({"type": "boolean", "title": "Allow this call", "description": "true runs it once; false refuses it"}),
        );
        required.push("allow");
        message.push_str("\nSet `allow` and accept to decide; decline to refuse.");
        return (message, object_schema(props, required));
    }
    let titles: Vec<String> = card
        .options
        .iter()
        .map(|o| match &o.description {
            Some(d) => format!("{} — {}", o.label, d),
            None => o.label.clone(),
        })
        .collect();
    let labels = card.labels();
    let several = card.multi_select && modern;
    message.push('\n');
    if !card.options.is_empty() {
        if several {
            let any_of: Vec<Value> = labels
                .iter()
                .zip(&titles)
                .map(|(l, t)| json!({"const": l, "title": t}))
                .collect();
            props.insert(
                "choices".into(),
                json!({"type": "array", "title": "Choose one or more", "items": {"anyOf": any_of}}),
            );
            message.push_str("Choose one or more options in `choices`.");
        } else {
            let title = if card.multi_select {
                "Choose one (this client can pick only one)"
            } else {
                "Choose one"
            };
            let schema = if modern {
                let one_of: Vec<Value> = labels
                    .iter()
                    .zip(&titles)
                    .map(|(l, t)| json!({"const": l, "title": t}))
                    .collect();
                json!({"type": "string", "title": title, "oneOf": one_of})
            } else {
                json!({"type": "string", "title": title, "enum": labels, "enumNames": titles})
            };
            props.insert("choice".into(), schema);
            if card.multi_select {
                message.push_str(
                    "Several options may apply, but this client's protocol (before 2025-11-25) can pick only one: \
                     choose the most important in `choice`",
                );
                if card.allow_free_text {
                    message.push_str(" and name the others in `text`");
                }
                message.push('.');
            } else {
                message.push_str("Choose one option in `choice`.");
            }
        }
        if !card.allow_free_text {
            required.push(if several { "choices" } else { "choice" });
        }
    }
    if card.allow_free_text {
        let title = if card.options.is_empty() {
            "Your answer"
        } else {
            "Or type an answer"
        };
        props.insert(
            "text".into(),
            json!({"type": "string", "title": title, "description": "An answer in your own words"}),
        );
        message.push_str(if card.options.is_empty() {
            " Type your answer in `text`."
        } else {
            " You may also type an answer in `text`."
        });
    }
    message.push_str(" Decline to skip the question.");
    (message, object_schema(props, required))
}

fn object_schema(props: Map<String, Value>, required: Vec<&str>) -> Value {
    let mut schema = json!({"type": "object", "properties": props});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// Reads an accepted form back into a reply. Values that are not the card's labels are
/// kept as typed text rather than dropped (a client that lets the human type into an enum
/// field still gets its answer through), and an empty form is a skip.
pub fn reply_from_form(card: &Card, content: &Value) -> Reply {
    if card.kind == CardKind::Permission {
        return match content.get("allow") {
            Some(Value::Bool(true)) => Reply::Answered {
                selected: vec![ALLOW.into()],
                text: None,
            },
            Some(Value::Bool(false)) => Reply::Answered {
                selected: vec![DENY.into()],
                text: None,
            },
            _ => Reply::Skipped {
                how: "accepted the permission form without setting `allow`".into(),
            },
        };
    }
    let mut picked: Vec<String> = Vec::new();
    let mut stray: Vec<String> = Vec::new();
    let mut take = |v: &Value| {
        if let Some(s) = v.as_str() {
            match card.find_label(s) {
                Some(l) if !picked.iter().any(|p| p == l) => picked.push(l.to_string()),
                Some(_) => {}
                None if !s.trim().is_empty() => stray.push(s.trim().to_string()),
                None => {}
            }
        }
    };
    if let Some(v) = content.get("choice") {
        take(v);
    }
    if let Some(Value::Array(items)) = content.get("choices") {
        items.iter().for_each(&mut take);
    }
    let order = card.labels();
    picked.sort_by_key(|p| order.iter().position(|l| l == p));
    if !card.multi_select {
        picked.truncate(1);
    }
    let mut text = content
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string);
    if !stray.is_empty() {
        let extra = stray.join(", ");
        text = Some(match text {
            Some(t) if !t.trim().is_empty() => format!("{t} ({extra})"),
            _ => extra,
        });
    }
    Reply::answer(
        picked,
        text.map(|t| cut_text(&t, MAX_ANSWER_CHARS)),
        "accepted an empty form (nothing chosen, nothing typed)",
    )
}

#[tools_core::async_trait]
impl QuestionGate for ElicitationGate {
    fn name(&self) -> &str {
        "mcp-elicitation"
    }
    fn abilities(&self) -> GateAbilities {
        GateAbilities {
            multi_select: self.modern(),
        }
    }
    fn status(&self) -> Result<String, String> {
        Ok(format!(
            "cards are MCP elicitation forms (protocol {}; multi-select {})",
            self.elicitor.protocol_version(),
            if self.modern() {
                "offered"
            } else {
                "not offered: it needs 2025-11-25"
            }
        ))
    }
    async fn ask(&self, card: &Card, timeout: Duration) -> Result<Reply, GateError> {
        let (message, schema) = form_for(card, self.modern());
        // The client may hold the request past our timeout; bound it here as well.
        let asked = self.elicitor.elicit(message, schema, timeout);
        let outcome = match tokio::time::timeout(timeout + Duration::from_millis(200), asked).await
        {
            Err(_) | Ok(Err(ToolError::TimedOut(_))) => return Err(GateError::TimedOut(timeout)),
            Ok(Err(e)) => {
                return Err(GateError::Unavailable(format!(
                    "the MCP client could not show the card: {e}"
                )));
            }
            Ok(Ok(o)) => o,
        };
        Ok(match outcome {
            ElicitOutcome::Accept(content) => reply_from_form(card, &content),
            ElicitOutcome::Decline => Reply::Skipped {
                how: "declined in the client".into(),
            },
            ElicitOutcome::Cancel => Reply::Skipped {
                how: "dismissed (cancelled) in the client".into(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::CardOption;

    fn card(multi: bool, text: bool) -> Card {
        Card {
            number: 2,
            kind: CardKind::Question,
            question: "Which?".into(),
            context: Some("it matters".into()),
            options: vec![
                CardOption {
                    label: "A".into(),
                    description: Some("first".into()),
                },
                CardOption {
                    label: "B".into(),
                    description: None,
                },
            ],
            allow_free_text: text,
            multi_select: multi,
        }
    }

    #[test]
    fn multi_select_only_on_new_protocols() {
        let (msg, s) = form_for(&card(true, false), true);
        assert_eq!(s["properties"]["choices"]["type"], "array");
        assert_eq!(
            s["properties"]["choices"]["items"]["anyOf"][0],
            json!({"const": "A", "title": "A — first"})
        );
        assert_eq!(s["required"], json!(["choices"]));
        assert!(msg.contains("Question #2: Which?") && msg.contains("it matters"));
        let (msg, s) = form_for(&card(true, true), false);
        assert!(s["properties"].get("choices").is_none());
        assert_eq!(s["properties"]["choice"]["enum"], json!(["A", "B"]));
        assert_eq!(
            s["properties"]["choice"]["enumNames"],
            json!(["A — first", "B"])
        );
        assert!(s.get("required").is_none());
        assert!(msg.contains("can pick only one"));
        let (_, s) = form_for(&card(false, false), true);
        assert_eq!(
            s["properties"]["choice"]["oneOf"][1],
            json!({"const": "B", "title": "B"})
        );
    }

    #[test]
    fn forms_read_back_into_typed_replies() {
        let c = card(true, true);
        assert_eq!(
            reply_from_form(&c, &json!({"choices": ["B", "A", "B"]})),
            Reply::Answered {
                selected: vec!["A".into(), "B".into()],
                text: None
            }
        );
        assert!(matches!(
            reply_from_form(&c, &json!({})),
            Reply::Skipped { .. }
        ));
        assert!(matches!(
            reply_from_form(&c, &json!({"text": "", "choices": []})),
            Reply::Skipped { .. }
        ));
        assert_eq!(
            reply_from_form(&c, &json!({"choice": "C"})),
            Reply::Answered {
                selected: vec![],
                text: Some("C".into())
            }
        );
        let mut p = card(false, false);
        p.kind = CardKind::Permission;
        assert!(matches!(
            reply_from_form(&p, &json!({})),
            Reply::Skipped { .. }
        ));
        assert_eq!(
            reply_from_form(&p, &json!({"allow": true})),
            Reply::Answered {
                selected: vec![ALLOW.into()],
                text: None
            }
        );
    }
}
