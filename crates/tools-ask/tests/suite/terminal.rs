//! The terminal card through a real pseudo-terminal: answer, multi-select, retry after a bad
//! line, free text, skip, timeout, and a permission card.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tools_ask::{ApproveMode, Card, CardKind, CardOption, QuestionGate, Reply, TerminalGate};
use tools_core::{Approval, ApprovalRequest, Approver, CallError, Surface, Tier, ToolError};

use super::pty::{Pty, open_pair};
use super::support::{registry, run_with};

fn colours(multi: bool) -> serde_json::Value {
    json!({
        "question": "Which colours?",
        "context": "The theme depends on it.",
        "options": [
            {"label": "Red", "description": "warm"},
            {"label": "Blue"},
            {"label": "Green", "description": "calm"}
        ],
        "multi_select": multi,
    })
}

#[tokio::test]
async fn answers_multi_select_and_skip_through_a_pty() {
    tools_core::testing::exercised("pseudo-terminal");
    let pty = Pty::open();
    let (_d, run) = run_with("");
    let reg = registry(&run, Arc::new(TerminalGate::with_device(&pty.slave_path)));

    // Card #1: single choice; a bad line is explained and asked again.
    let call = tokio::spawn({
        let reg = reg.clone();
        async move { reg.call(Surface::FULL, "ask_user", colours(false)).await }
    });
    pty.wait_for("#1> ", 1).await;
    let screen = pty.screen();
    assert!(screen.contains("Question #1: Which colours?"), "{screen}");
    assert!(screen.contains("The theme depends on it."));
    assert!(screen.contains("  1. Red — warm"));
    assert!(screen.contains("  2. Blue\n") || screen.contains("  2. Blue\r\n"));
    assert!(screen.contains("Pick one: type its number, 1-3."));
    assert!(screen.contains("Skip: press Enter on an empty line"));
    pty.type_line("9");
    pty.wait_for("9 is not an option", 1).await;
    pty.wait_for("#1> ", 2).await;
    pty.type_line("2");
    let out = call.await.unwrap().unwrap();
    assert_eq!(out.text, "Card #1 answered.\nChosen: `Blue`");
    let s = out.structured.unwrap();
    assert_eq!(s["card"], 1);
    assert_eq!(s["selected"], json!(["Blue"]));
    assert_eq!(s["gate"], "terminal");

    // Card #2: several at once.
    let call = tokio::spawn({
        let reg = reg.clone();
        async move { reg.call(Surface::PLAN, "ask_user", colours(true)).await }
    });
    pty.wait_for("#2> ", 1).await;
    assert!(
        pty.screen()
            .contains("type their numbers separated by commas or spaces (e.g. 1,3)")
    );
    pty.type_line("3, 1");
    let out = call.await.unwrap().unwrap();
    assert_eq!(out.structured.unwrap()["selected"], json!(["Red", "Green"]));

    // Card #3: free text.
    let call = tokio::spawn({
        let reg = reg.clone();
        async move {
            reg.call(
                Surface::FULL,
                "ask_user",
                json!({"question": "Name of the app?"}),
            )
            .await
        }
    });
    pty.wait_for("#3> ", 1).await;
    assert!(pty.screen().contains("Type your answer."));
    pty.type_line("  Lighthouse ");
    let out = call.await.unwrap().unwrap();
    assert_eq!(out.structured.unwrap()["text"], "Lighthouse");

    // Card #4: skipped is a success that says to carry on and not ask again.
    let call = tokio::spawn({
        let reg = reg.clone();
        async move {
            reg.call(Surface::FULL, "ask_user", json!({"question": "Tabs or spaces?", "options": [{"label": "tabs"}, {"label": "spaces"}]})).await
        }
    });
    pty.wait_for("#4> ", 1).await;
    pty.type_line("");
    let out = call.await.unwrap().unwrap();
    assert!(out.text.starts_with("Card #4 was skipped"), "{}", out.text);
    assert!(out.text.contains("Do not ask this again"));
    assert_eq!(out.structured.unwrap()["outcome"], "skipped");
    pty.wait_for("(#4 skipped)", 1).await;

    // Asking the skipped question again is refused without a card.
    let again = reg
        .call(
            Surface::FULL,
            "ask_user",
            json!({"question": "tabs  or SPACES?", "allow_free_text": true}),
        )
        .await;
    match again {
        Err(CallError::Tool(ToolError::Rejected(m))) => assert!(m.contains("card #4"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(!pty.screen().contains("#5> "));
}

#[tokio::test]
async fn a_silent_terminal_times_out_with_an_error() {
    tools_core::testing::exercised("pseudo-terminal");
    let pty = Pty::open();
    let (_d, run) = run_with("[ask]\ntimeout_secs = 1\n");
    let reg = registry(&run, Arc::new(TerminalGate::with_device(&pty.slave_path)));
    let err = reg
        .call(
            Surface::FULL,
            "ask_user",
            json!({"question": "Anyone there?"}),
        )
        .await
        .unwrap_err();
    match err {
        CallError::Tool(ToolError::TimedOut(m)) => {
            assert!(m.contains("card #1 got no answer within 1 s"), "{m}");
            assert!(m.contains("Do not ask this again"));
        }
        other => panic!("{other:?}"),
    }
    pty.wait_for("(#1 timed out", 1).await;
}

#[tokio::test]
async fn permission_cards_on_the_terminal() {
    tools_core::testing::exercised("pseudo-terminal");
    let pty = Pty::open();
    let (_d, run) = run_with("");
    let gate: Arc<dyn QuestionGate> = Arc::new(TerminalGate::with_device(&pty.slave_path));
    let approver = Arc::new(tools_ask::approver(&run, ApproveMode::Ask, Some(gate)).unwrap());
    let req = ApprovalRequest {
        tool: "write".into(),
        tier: Tier::Write,
        args: json!({"path": "a.txt", "content": "hi"}),
        surface: Surface::FULL,
    };
    let ask = tokio::spawn({
        let (a, r) = (approver.clone(), req.clone());
        async move { a.approve(&r).await }
    });
    pty.wait_for("#1> ", 1).await;
    let screen = pty.screen();
    assert!(
        screen
            .contains("Permission #1: Allow the agent to run `write` (write tier: changes files)?"),
        "{screen}"
    );
    assert!(screen.contains("\"path\": \"a.txt\""));
    assert!(screen.contains("Type y (yes) or n (no)"));
    pty.type_line("y");
    assert_eq!(ask.await.unwrap(), Approval::Approved);

    let ask = tokio::spawn({
        let (a, r) = (approver.clone(), req.clone());
        async move { a.approve(&r).await }
    });
    pty.wait_for("#2> ", 1).await;
    pty.type_line("");
    assert!(
        matches!(ask.await.unwrap(), Approval::Denied(m) if m.contains("refused it on permission card #2"))
    );
}

#[tokio::test]
async fn typeahead_does_not_answer_the_card() {
    tools_core::testing::exercised("pseudo-terminal");
    let pty = Pty::open();
    // Keys pressed before any card exists.
    pty.type_line("1");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let gate = TerminalGate::with_device(&pty.slave_path);
    let card = Card {
        number: 7,
        kind: CardKind::Question,
        question: "Really?".into(),
        context: None,
        options: vec![
            CardOption {
                label: "yes".into(),
                description: None,
            },
            CardOption {
                label: "no".into(),
                description: None,
            },
        ],
        allow_free_text: false,
        multi_select: false,
    };
    let ask = tokio::spawn(async move { gate.ask(&card, Duration::from_secs(20)).await });
    pty.wait_for("#7> ", 1).await;
    pty.type_line("no");
    assert_eq!(
        ask.await.unwrap(),
        Ok(Reply::Answered {
            selected: vec!["no".into()],
            text: None
        })
    );
}

#[tokio::test]
async fn a_hung_up_terminal_is_unavailable() {
    tools_core::testing::exercised("pseudo-terminal");
    let (master, slave, path) = open_pair();
    let (_d, run) = run_with("");
    let reg = registry(&run, Arc::new(TerminalGate::with_device(&path)));
    let call = tokio::spawn({
        let reg = reg.clone();
        async move {
            reg.call(
                Surface::FULL,
                "ask_user",
                json!({"question": "still there?"}),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The human's side goes away: the terminal hangs up.
    drop(master);
    match call.await.unwrap() {
        Err(CallError::Tool(ToolError::NotAvailable(m))) => {
            assert!(m.contains("card #1 could not be shown"), "{m}");
            assert!(m.contains("terminal"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    drop(slave);
}

#[tokio::test]
async fn doctor_reports_the_terminal() {
    let (_d, run) = run_with("");
    let pty = Pty::open();
    let reg = registry(&run, Arc::new(TerminalGate::with_device(&pty.slave_path)));
    let d = reg.doctor().await;
    assert!(d[0].ok, "{d:?}");
    assert!(
        d[0].detail.contains("cards are drawn on /dev/pts/"),
        "{d:?}"
    );
    let reg = registry(
        &run,
        Arc::new(TerminalGate::with_device("/nonexistent/tty")),
    );
    let d = reg.doctor().await;
    assert!(
        !d[0].ok && d[0].detail.contains("will fail at once"),
        "{d:?}"
    );
}
