//! Result extraction from JSON event streams.

use serde_json::json;

use super::*;

#[tokio::test]
async fn codex_shaped_events_give_the_agent_message() {
    let Some(f) = fixture() else { return };
    let id = f.spawn("do it final=codex", "fast").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    // The agent message, not the reasoning item before it.
    assert_eq!(s["result"], "echo: do it final=codex");
}

#[tokio::test]
async fn a_configured_field_path_and_filter_pick_the_result() {
    let Some(f) = fixture() else { return };
    let id = f.spawn("final=custom", "custom").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    // The filtered event's field; the draft before it and the stats after it do not count.
    assert_eq!(s["result"], "the answer");
    assert!(out.text.contains("result:\nthe answer"), "{}", out.text);
}

#[tokio::test]
async fn json_events_without_a_message_fall_back_to_the_tail() {
    let Some(f) = fixture() else { return };
    let id = f.spawn("quiet final=none", "fast").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    assert!(s["result"].is_null());
    assert!(out.text.contains("last output:\n"), "{}", out.text);
    assert!(out.text.contains("brief: quiet final=none"), "{}", out.text);
}

#[tokio::test]
async fn a_long_result_is_capped_visibly() {
    let Some(f) = fixture() else { return };
    let long = "word ".repeat(2000);
    let id = f.spawn(&long, "fast").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    let result = s["result"].as_str().unwrap();
    assert!(
        result.contains("[cut: "),
        "{}",
        &result[result.len() - 80..]
    );
    assert!(result.chars().count() < tools_vibe::RESULT_CAP + 100);
    let list = f.ok("vibe_list", json!({})).await;
    assert!(list.text.len() < 2000, "vibe_list must cap each result");
}
