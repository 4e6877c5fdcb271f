//! The channel gate for embedders, and the tool's semantics through it: numbering,
//! validation, typed outcomes, timeout, no human attached.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_ask::{CardKind, ChannelGate, GateError, Reply};
use tools_core::{CallError, Surface, ToolError};

use super::support::{registry, run_with};

fn tool_err(r: Result<tools_core::ToolOutput, CallError>) -> ToolError {
    match r {
        Err(CallError::Tool(e)) => e,
        other => panic!("expected a tool error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_harness_draws_numbered_cards_and_replies() {
    let (_d, run) = run_with("");
    let (gate, mut cards) = ChannelGate::channel(4);
    let reg = registry(&run, Arc::new(gate));
    let harness = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(p) = cards.recv().await {
            seen.push((p.card.number, p.card.question.clone(), p.multi_select));
            let reply = match p.card.number {
                1 => Reply::Answered {
                    selected: vec!["B".into()],
                    text: None,
                },
                2 => Reply::Answered {
                    selected: vec!["A".into(), "B".into()],
                    text: Some("and C".into()),
                },
                _ => Reply::Skipped {
                    how: "closed the card".into(),
                },
            };
            assert!(p.reply(reply));
        }
        seen
    });
    let q = |multi: bool, q: &str| json!({"question": q, "options": [{"label": "A"}, {"label": "B"}], "multi_select": multi, "allow_free_text": true});
    let one = reg
        .call(Surface::READ_ONLY, "ask_user", q(false, "first?"))
        .await
        .unwrap();
    assert_eq!(one.structured.unwrap()["selected"], json!(["B"]));
    let two = reg
        .call(Surface::FULL, "ask_user", q(true, "second?"))
        .await
        .unwrap();
    assert_eq!(
        two.text,
        "Card #2 answered.\nChosen: `A`, `B`\nTyped answer: and C"
    );
    let three = reg
        .call(Surface::FULL, "ask_user", q(false, "third?"))
        .await
        .unwrap();
    assert!(
        three
            .text
            .contains("Card #3 was skipped by the operator (closed the card)")
    );
    drop(reg);
    drop(run);
    let seen = harness.await.unwrap();
    assert_eq!(
        seen,
        vec![
            (1, "first?".into(), false),
            (2, "second?".into(), true),
            (3, "third?".into(), false)
        ]
    );
}

#[tokio::test]
async fn bad_questions_are_refused_before_any_card() {
    let (_d, run) = run_with("");
    let gate = ChannelGate::from_fn(|card| async move {
        Ok(Reply::Answered {
            selected: vec![],
            text: Some(format!("card {}", card.number)),
        })
    });
    let reg = registry(&run, Arc::new(gate));
    for (args, field) in [
        (json!({"question": ""}), "question"),
        (
            json!({"question": "q", "options": [{"label": "x"}, {"label": "X"}]}),
            "options[1].label",
        ),
        (
            json!({"question": "q", "multi_select": true}),
            "multi_select",
        ),
    ] {
        match tool_err(reg.call(Surface::FULL, "ask_user", args).await) {
            ToolError::InvalidArguments { field: f, .. } => assert_eq!(f.as_deref(), Some(field)),
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(
        tool_err(
            reg.call(Surface::FULL, "ask_user", json!({"question": 3}))
                .await
        ),
        ToolError::InvalidArguments { .. }
    ));
    // Refused questions took no number.
    let ok = reg
        .call(Surface::FULL, "ask_user", json!({"question": "name?"}))
        .await
        .unwrap();
    assert_eq!(ok.structured.unwrap()["text"], "card 1");
}

#[tokio::test]
async fn no_harness_listening_fails_at_once() {
    let (_d, run) = run_with("");
    let (gate, cards) = ChannelGate::channel(1);
    drop(cards);
    let reg = registry(&run, Arc::new(gate));
    let started = Instant::now();
    let e = tool_err(
        reg.call(Surface::FULL, "ask_user", json!({"question": "hello?"}))
            .await,
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    match e {
        ToolError::NotAvailable(m) => {
            assert!(m.contains("no human is attached"), "{m}");
            assert!(m.contains("stopped reading question cards"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_dropped_card_is_unavailable_and_silence_times_out() {
    let (_d, run) = run_with("[ask]\ntimeout_secs = 1\n");
    let (gate, mut cards) = ChannelGate::channel(1);
    let reg = registry(&run, Arc::new(gate));
    let harness = tokio::spawn(async move {
        let first = cards.recv().await.unwrap();
        drop(first);
        // Hold the second card without replying.
        let second = cards.recv().await.unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!second.reply(Reply::Skipped { how: "late".into() }));
    });
    let e = tool_err(
        reg.call(Surface::FULL, "ask_user", json!({"question": "one?"}))
            .await,
    );
    assert!(
        matches!(&e, ToolError::NotAvailable(m) if m.contains("dropped the card")),
        "{e:?}"
    );
    let e = tool_err(
        reg.call(Surface::FULL, "ask_user", json!({"question": "two?"}))
            .await,
    );
    match &e {
        ToolError::TimedOut(m) => {
            assert!(m.contains("card #2 got no answer within 1 s"), "{m}");
            assert!(m.contains("Carry on under a stated assumption"));
        }
        other => panic!("{other:?}"),
    }
    // A timed-out question is not shown again.
    let e = tool_err(
        reg.call(Surface::FULL, "ask_user", json!({"question": "two?"}))
            .await,
    );
    assert!(
        matches!(&e, ToolError::Rejected(m) if m.contains("card #2 and timed out")),
        "{e:?}"
    );
    harness.await.unwrap();
}

#[tokio::test]
async fn single_choice_harnesses_say_so() {
    let (_d, run) = run_with("");
    let gate = ChannelGate::from_fn(|card| async move {
        assert_eq!(card.kind, CardKind::Question);
        Ok(Reply::Answered {
            selected: vec![card.options[1].label.clone()],
            text: None,
        })
    })
    .single_choice();
    let reg = registry(&run, Arc::new(gate));
    let out = reg
        .call(Surface::FULL, "ask_user", json!({"question": "q", "options": [{"label": "a"}, {"label": "b"}], "multi_select": true}))
        .await
        .unwrap();
    assert!(
        out.text.contains("could offer a single choice only"),
        "{}",
        out.text
    );
    assert_eq!(out.structured.unwrap()["multi_select_offered"], false);
}

#[tokio::test]
async fn registration_needs_a_gate_and_config_is_checked() {
    let (_d, run) = run_with("");
    assert!(tools_ask::family(&run, None).unwrap().is_none());
    let (_d, run) = run_with("[ask]\ntimeout_secs = 0\n");
    let gate = Arc::new(ChannelGate::from_fn(|_| async {
        Err(GateError::Unavailable("x".into()))
    }));
    assert!(tools_ask::family(&run, Some(gate.clone())).is_err());
    let (_d, run) = run_with("[ask]\ntimeout = 3\n");
    assert!(tools_ask::family(&run, Some(gate.clone())).is_err());
    let (_d, run) = run_with("[ask]\ntimeout_secs = 42\n");
    let reg = registry(&run, gate);
    let list = reg.list(Surface::PLAN);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name, "ask_user");
    assert_eq!(list[0].tier, tools_core::Tier::Read);
    assert!(list[0].description.contains("up to 42 s"));
    assert!(list[0].input_schema["properties"]["options"].is_object());
    let doctor = reg.doctor().await;
    assert_eq!(doctor[0].resource, "question gate: channel");
}

#[tokio::test]
async fn a_cancelled_call_withdraws_its_card() {
    let (_d, run) = run_with("");
    let (gate, mut cards) = ChannelGate::channel(1);
    let reg = registry(&run, Arc::new(gate));
    // A child of the run's token: what a caller that gives up cancels.
    let cancel = run.cancellation().child_token();
    let opts = tools_core::CallOptions {
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let call = tokio::spawn({
        let reg = reg.clone();
        async move {
            reg.call_with(
                Surface::FULL,
                "ask_user",
                json!({"question": "wait?"}),
                opts,
            )
            .await
        }
    });
    let pending = cards.recv().await.unwrap();
    cancel.cancel();
    let e = tool_err(call.await.unwrap());
    assert!(
        matches!(&e, ToolError::Rejected(m) if m.contains("card #1 was withdrawn")),
        "{e:?}"
    );
    assert!(!pending.reply(Reply::Skipped { how: "late".into() }));
}
