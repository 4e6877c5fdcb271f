//! Bad input gets a clear error and loses nothing; vibe mode off means no tools.

use serde_json::json;
use tools_core::ToolError;

use super::*;

fn invalid_field(r: Result<ToolOutput, CallError>) -> (Option<String>, String) {
    match r {
        Err(CallError::Tool(ToolError::InvalidArguments { field, message })) => (field, message),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[tokio::test]
async fn unknown_ids_tiers_and_empty_text_are_refused() {
    let Some(f) = fixture() else { return };
    let (field, msg) = invalid_field(f.call("vibe_wait", json!({"worker_id": "w7"})).await);
    assert_eq!(field.as_deref(), Some("worker_id"));
    assert!(
        msg.contains("no worker `w7`") && msg.contains("no workers yet"),
        "{msg}"
    );

    let (field, msg) = invalid_field(
        f.call(
            "vibe_spawn",
            json!({"brief": "x", "label": "l", "tier": "turbo"}),
        )
        .await,
    );
    assert_eq!(field.as_deref(), Some("tier"));
    assert!(
        msg.contains("unknown tier `turbo`") && msg.contains("`fast`"),
        "{msg}"
    );

    let (field, _) = invalid_field(
        f.call("vibe_spawn", json!({"brief": "  \n", "label": "l"}))
            .await,
    );
    assert_eq!(field.as_deref(), Some("brief"));
    let (field, _) = invalid_field(f.call("vibe_spawn", json!({"label": "l"})).await);
    assert!(field.is_none() || field.as_deref() == Some("brief"));
    let (field, _) = invalid_field(
        f.call(
            "vibe_spawn",
            json!({"brief": "b", "label": "l", "extra": 1}),
        )
        .await,
    );
    assert!(field.is_none() || field.as_deref() == Some("extra"));

    // Nothing was started by the refused calls.
    assert_eq!(
        f.ok("vibe_list", json!({})).await.structured.unwrap()["total"],
        0
    );

    let id = f.spawn("final=done", "fast").await;
    let (field, msg) = invalid_field(
        f.call("vibe_send", json!({"worker_id": id, "message": ""}))
            .await,
    );
    assert_eq!(field.as_deref(), Some("message"), "{msg}");
    let (field, msg) = invalid_field(f.call("vibe_kill", json!({"worker_id": "w2"})).await);
    assert_eq!(field.as_deref(), Some("worker_id"));
    assert!(msg.contains("the workers of this run are: w1"), "{msg}");
    let (field, _) = invalid_field(
        f.call("vibe_wait", json!({"worker_id": id, "timeout_seconds": -1}))
            .await,
    );
    assert_eq!(field.as_deref(), Some("timeout_seconds"));
    // The worker is untouched by all that.
    let done = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    assert_eq!(done.structured.unwrap()["status"], "done");
    assert_eq!(f.entry(&id).await["round"], 1);
}

#[tokio::test]
async fn an_empty_label_is_derived_from_the_brief() {
    let Some(f) = fixture() else { return };
    let out = f
        .ok(
            "vibe_spawn",
            json!({"brief": "rename the parser\nmore", "label": " "}),
        )
        .await;
    assert_eq!(out.structured.unwrap()["label"], "rename the parser");
}

#[tokio::test]
async fn a_missing_program_is_not_available_and_adds_no_worker() {
    let w = format!("{:?}", worker_script().display().to_string());
    let config = format!(
        "[vibe.fast]\ncommand = [\"python3\", {w}, \"{{brief}}\"]\n\
         [vibe.good]\ncommand = [\"no-such-worker-cli-xyz\", \"{{brief}}\"]\n\
         [vibe.jailed]\ncommand = [\"python3\"]\ncwd = \"../..\"\n"
    );
    let Some(f) = fixture_with(&config) else {
        return;
    };
    let r = f
        .call(
            "vibe_spawn",
            json!({"brief": "b", "label": "l", "tier": "good"}),
        )
        .await;
    match r {
        Err(CallError::Tool(ToolError::NotAvailable(m))) => {
            assert!(
                m.contains("no-such-worker-cli-xyz") && m.contains("[vibe.good]"),
                "{m}"
            )
        }
        other => panic!("expected not available, got {other:?}"),
    }
    let r = f
        .call(
            "vibe_spawn",
            json!({"brief": "b", "label": "l", "tier": "jailed"}),
        )
        .await;
    assert!(
        matches!(r, Err(CallError::Tool(ToolError::NotAvailable(_)))),
        "{r:?}"
    );
    assert_eq!(
        f.ok("vibe_list", json!({})).await.structured.unwrap()["total"],
        0
    );
    // The next worker still gets w1.
    assert_eq!(f.spawn("final=done", "fast").await, "w1");

    let doctor = f.registry.doctor().await;
    let by = |r: &str| doctor.iter().find(|d| d.resource == r).unwrap().clone();
    assert!(by("tier fast").ok, "{:?}", by("tier fast"));
    assert!(by("tier fast").detail.contains("brief in arguments"));
    let good = by("tier good");
    assert!(
        !good.ok && good.detail.contains("not on the worker's PATH"),
        "{good:?}"
    );
    assert!(!by("tier jailed").ok);
}

#[tokio::test]
async fn the_running_limit_refuses_more_workers() {
    let w = format!("{:?}", worker_script().display().to_string());
    let config = format!(
        "[vibe]\nmax_running = 1\n[vibe.fast]\ncommand = [\"python3\", {w}, \"{{brief}}\"]\n"
    );
    let Some(f) = fixture_with(&config) else {
        return;
    };
    let gate = f.path("gate");
    let id = f.spawn(&format!("gate={}", gate.display()), "fast").await;
    let r = f
        .call("vibe_spawn", json!({"brief": "b", "label": "l"}))
        .await;
    match r {
        Err(CallError::Tool(ToolError::Rejected(m))) => assert!(m.contains("limit is 1"), "{m}"),
        other => panic!("expected rejected, got {other:?}"),
    }
    std::fs::write(&gate, "").unwrap();
    f.ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    assert_eq!(f.spawn("final=done", "fast").await, "w2");
}

#[test]
fn no_vibe_table_means_no_tools() {
    let dir = tempfile::tempdir().unwrap();
    let open = |text: &str| {
        Run::new(RunOptions {
            root: dir.path().into(),
            conversation_id: "c".into(),
            config: Config::parse(text).unwrap(),
            trusted: true,
        })
        .unwrap()
    };
    assert!(tools_vibe::family(&open("")).unwrap().is_none());
    assert!(tools_vibe::family(&open("[lsp]\n")).unwrap().is_none());
    assert!(
        tools_vibe::family(&open("[vibe]\nmax_running = 2\n"))
            .unwrap()
            .is_none()
    );
    let err = tools_vibe::family(&open("[vibe.fast]\ncommand = []\n"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("[vibe.fast]"), "{err}");
    let err = tools_vibe::family(&open("[vibe.fast]\ncommand = [\"x\"]\nresult = \"xml\"\n"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("vibe"), "{err}");
}

#[tokio::test]
async fn an_oversized_brief_is_refused_and_the_running_round_survives() {
    let Some(f) = fixture() else { return };
    let big = "x".repeat(tools_vibe::MAX_ARG_BRIEF + 1);
    let (field, msg) = invalid_field(
        f.call("vibe_spawn", json!({"brief": big, "label": "l"}))
            .await,
    );
    assert_eq!(field.as_deref(), Some("brief"));
    assert!(msg.contains("write the details to a file"), "{msg}");

    let gate = f.path("gate");
    let id = f.spawn(&format!("gate={}", gate.display()), "fast").await;
    let (field, _) = invalid_field(
        f.call("vibe_send", json!({"worker_id": id, "message": big}))
            .await,
    );
    assert_eq!(field.as_deref(), Some("message"));
    let e = f.entry(&id).await;
    assert_eq!(
        (e["status"].as_str(), e["round"].as_i64()),
        (Some("running"), Some(1))
    );
    std::fs::write(&gate, "").unwrap();
    let done = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    assert_eq!(done.structured.unwrap()["status"], "done");
}
