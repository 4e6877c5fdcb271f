//! The permission gate through a registry: `auto`, `deny`, and `ask` with and without a
//! human — a denied call never runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tools_ask::{ALLOW, ApproveMode, ChannelGate, DENY, GateError, QuestionGate, Reply};
use tools_core::{CallCtx, CallError, RegistryBuilder, Surface, Tier, Tool, ToolError, ToolOutput};

use super::support::run_with;

#[derive(Default)]
struct Counting(AtomicUsize);

#[tools_core::async_trait]
impl Tool for Counting {
    fn name(&self) -> &str {
        "touch"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "counts".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("done"))
    }
}

async fn attempt(
    mode: ApproveMode,
    gate: Option<Arc<dyn QuestionGate>>,
) -> (Result<ToolOutput, CallError>, usize) {
    let (_d, run) = run_with("[ask]\napproval_timeout_secs = 1\n");
    let tool = Arc::new(Counting::default());
    let approver = tools_ask::approver(&run, mode, gate).unwrap();
    let reg = RegistryBuilder::new(run.clone())
        .tool(tool.clone())
        .approver(Arc::new(approver))
        .build()
        .unwrap();
    let r = reg.call(Surface::FULL, "touch", json!({"n": 1})).await;
    (r, tool.0.load(Ordering::SeqCst))
}

fn denied(r: Result<ToolOutput, CallError>) -> String {
    match r {
        Err(CallError::Tool(ToolError::Rejected(m))) => m,
        other => panic!("expected a denial, got {other:?}"),
    }
}

fn replying(reply: Result<Reply, GateError>) -> Option<Arc<dyn QuestionGate>> {
    Some(Arc::new(ChannelGate::from_fn(move |c| {
        let reply = reply.clone();
        async move {
            assert_eq!(c.kind, tools_ask::CardKind::Permission);
            assert_eq!(c.labels(), vec![ALLOW, DENY]);
            reply
        }
    })))
}

#[tokio::test]
async fn modes_decide_write_calls() {
    let (r, n) = attempt(ApproveMode::Auto, None).await;
    assert!(r.is_ok() && n == 1);
    let (r, n) = attempt(
        ApproveMode::Deny,
        replying(Ok(Reply::Answered {
            selected: vec!["allow".into()],
            text: None,
        })),
    )
    .await;
    assert!(denied(r).contains("--approve deny"));
    assert_eq!(n, 0);
}

#[tokio::test]
async fn ask_mode_is_fail_closed() {
    let (r, n) = attempt(ApproveMode::Ask, None).await;
    let m = denied(r);
    assert!(
        m.contains("no human is attached") && m.contains("fail-closed"),
        "{m}"
    );
    assert_eq!(n, 0);

    let (r, n) = attempt(
        ApproveMode::Ask,
        replying(Ok(Reply::Answered {
            selected: vec!["allow".into()],
            text: None,
        })),
    )
    .await;
    assert_eq!(r.unwrap().text, "done");
    assert_eq!(n, 1);

    for (reply, needle) in [
        (
            Ok(Reply::Answered {
                selected: vec!["deny".into()],
                text: None,
            }),
            "refused it on permission card #1",
        ),
        (
            Ok(Reply::Skipped {
                how: "declined in the client".into(),
            }),
            "declined in the client",
        ),
        (
            Err(GateError::Unavailable("no terminal".into())),
            "could not be shown (no terminal)",
        ),
    ] {
        let (r, n) = attempt(ApproveMode::Ask, replying(reply)).await;
        assert!(denied(r).contains(needle));
        assert_eq!(n, 0);
    }

    // Silence: the card times out (approval_timeout_secs = 1) and the call is denied.
    let (gate, mut cards) = ChannelGate::channel(1);
    let holder = tokio::spawn(async move {
        let held = cards.recv().await;
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        drop(held);
    });
    let (r, n) = attempt(ApproveMode::Ask, Some(Arc::new(gate))).await;
    assert!(denied(r).contains("no answer within 1 s"));
    assert_eq!(n, 0);
    holder.await.unwrap();
}

#[test]
fn modes_parse() {
    assert_eq!("ask".parse::<ApproveMode>(), Ok(ApproveMode::Ask));
    assert!(
        "maybe"
            .parse::<ApproveMode>()
            .unwrap_err()
            .contains("ask, auto or deny")
    );
}
