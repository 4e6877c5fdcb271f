//! The elicitation gate over a scripted [`Elicitor`] (the real MCP client is driven by the
//! end-to-end tests): the form it sends per protocol version, and how replies map.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tools_ask::ElicitationGate;
use tools_core::{CallError, ElicitOutcome, Elicitor, Surface, ToolError};

use super::support::{registry, run_with};

struct Scripted {
    version: &'static str,
    replies: Mutex<Vec<Result<ElicitOutcome, ToolError>>>,
    asked: Mutex<Vec<(String, Value)>>,
}

#[tools_core::async_trait]
impl Elicitor for Scripted {
    fn protocol_version(&self) -> String {
        self.version.into()
    }
    async fn elicit(
        &self,
        message: String,
        schema: Value,
        _timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError> {
        self.asked.lock().unwrap().push((message, schema));
        self.replies.lock().unwrap().remove(0)
    }
}

fn scripted(
    version: &'static str,
    replies: Vec<Result<ElicitOutcome, ToolError>>,
) -> Arc<Scripted> {
    Arc::new(Scripted {
        version,
        replies: Mutex::new(replies),
        asked: Mutex::new(Vec::new()),
    })
}

fn multi() -> Value {
    json!({"question": "Which?", "context": "ctx", "options": [{"label": "A", "description": "first"}, {"label": "B"}], "multi_select": true})
}

#[tokio::test]
async fn outcomes_map_to_answers_skips_and_errors() {
    let (_d, run) = run_with("");
    let el = scripted(
        "2025-11-25",
        vec![
            Ok(ElicitOutcome::Accept(json!({"choices": ["B", "A"]}))),
            Ok(ElicitOutcome::Decline),
            Ok(ElicitOutcome::Cancel),
            Ok(ElicitOutcome::Accept(json!({}))),
            Err(ToolError::timed_out("nobody answered")),
            Err(ToolError::not_available("client gone")),
        ],
    );
    let reg = registry(&run, Arc::new(ElicitationGate::new(el.clone())));
    let out = reg.call(Surface::FULL, "ask_user", multi()).await.unwrap();
    assert_eq!(out.structured.unwrap()["selected"], json!(["A", "B"]));
    let (msg, schema) = el.asked.lock().unwrap()[0].clone();
    assert!(msg.starts_with("Question #1: Which?\n\nctx\n"));
    assert!(msg.contains("  1. A — first"));
    assert_eq!(
        schema["properties"]["choices"]["items"]["anyOf"][0]["const"],
        "A"
    );
    for (q, how) in [
        ("d?", "declined in the client"),
        ("c?", "cancelled"),
        ("e?", "empty form"),
    ] {
        let out = reg
            .call(Surface::FULL, "ask_user", json!({"question": q}))
            .await
            .unwrap();
        assert!(out.text.contains(how), "{}", out.text);
        assert_eq!(out.structured.unwrap()["outcome"], "skipped");
    }
    match reg
        .call(Surface::FULL, "ask_user", json!({"question": "t?"}))
        .await
    {
        Err(CallError::Tool(ToolError::TimedOut(m))) => assert!(m.contains("card #5")),
        other => panic!("{other:?}"),
    }
    match reg
        .call(Surface::FULL, "ask_user", json!({"question": "u?"}))
        .await
    {
        Err(CallError::Tool(ToolError::NotAvailable(m))) => assert!(m.contains("client gone")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn old_clients_get_one_choice_and_the_result_says_so() {
    let (_d, run) = run_with("");
    let el = scripted(
        "2025-06-18",
        vec![Ok(ElicitOutcome::Accept(json!({"choice": "B"})))],
    );
    let reg = registry(&run, Arc::new(ElicitationGate::new(el.clone())));
    let out = reg.call(Surface::FULL, "ask_user", multi()).await.unwrap();
    assert!(out.text.contains("single choice only"));
    let (msg, schema) = el.asked.lock().unwrap()[0].clone();
    assert!(msg.contains("can pick only one"));
    assert_eq!(schema["properties"]["choice"]["enum"], json!(["A", "B"]));
    assert!(schema["properties"].get("choices").is_none());
    let doctor = reg.doctor().await;
    assert!(doctor[0].detail.contains("not offered"));
}
