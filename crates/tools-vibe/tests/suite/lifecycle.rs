//! Spawn, list, wait, send: the happy paths, on both tiers.

use serde_json::json;

use super::*;

#[tokio::test]
async fn spawn_returns_at_once_and_list_shows_running_then_done() {
    let Some(f) = fixture() else { return };
    let gate = f.path("gate");
    let brief = format!("fix the thing gate={}", gate.display());
    let out = f
        .ok("vibe_spawn", json!({"brief": brief, "label": "fixer"}))
        .await;
    // Returned while the worker is still blocked on its gate.
    let s = out.structured.clone().unwrap();
    assert_eq!(s["id"], "w1");
    assert_eq!(s["label"], "fixer");
    assert_eq!(s["tier"], "fast", "the default tier is fast");
    assert_eq!(s["status"], "running");
    assert!(
        out.text.contains("started w1 \"fixer\" on tier fast"),
        "{}",
        out.text
    );
    let log = std::path::PathBuf::from(s["log_path"].as_str().unwrap());
    assert!(log.starts_with(f.run.state_dir().unwrap()));
    assert!(out.text.contains(&log.display().to_string()));

    let running = f.ok("vibe_list", json!({})).await;
    assert!(
        running
            .text
            .contains("w1 \"fixer\" [fast] running, round 1"),
        "{}",
        running.text
    );

    std::fs::write(&gate, "").unwrap();
    let done = f
        .ok(
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 60}),
        )
        .await;
    let d = done.structured.unwrap();
    assert_eq!(d["status"], "done", "{}", done.text);
    assert_eq!(d["still_running"], false);
    assert_eq!(d["exit_code"], 0);
    let expected = format!("echo: fix the thing gate={}", gate.display());
    assert_eq!(d["result"], expected.as_str());
    assert!(
        done.text.contains(&format!("result:\n{expected}")),
        "{}",
        done.text
    );

    let listed = f.ok("vibe_list", json!({})).await;
    assert!(
        listed.text.contains("w1 \"fixer\" [fast] done, round 1"),
        "{}",
        listed.text
    );
    assert!(
        listed.text.contains(&format!("result: {expected}")),
        "{}",
        listed.text
    );

    // The log holds stdout and stderr in full, and the round's footer.
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert!(
        log_text.contains("progress: round 1 starting"),
        "{log_text}"
    );
    assert!(
        log_text.contains("stderr: hello from the worker"),
        "{log_text}"
    );
    assert!(
        log_text.contains("--- round 1 ended: done, exit code 0"),
        "{log_text}"
    );
}

#[tokio::test]
async fn stdin_tier_gets_the_brief_and_keeps_the_stdout_tail() {
    let Some(f) = fixture() else { return };
    let id = f.spawn("summarise the module final=none", "good").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    assert_eq!(s["tier"], "good");
    let result = s["result"].as_str().unwrap();
    // stdout-tail: the end of stdout, here the echoed brief; stderr is not part of it.
    assert!(
        result.ends_with("brief: summarise the module final=none"),
        "{result}"
    );
    assert!(!result.contains("stderr:"), "{result}");
}

#[tokio::test]
async fn short_wait_on_a_long_worker_says_still_running() {
    let Some(f) = fixture() else { return };
    let gate = f.path("never");
    let id = f.spawn(&format!("gate={}", gate.display()), "fast").await;
    // Once it has printed something, so the tail is not empty.
    let deadline = Instant::now() + Duration::from_secs(30);
    while f.entry(&id).await["tail"] == "" {
        assert!(
            Instant::now() < deadline,
            "the worker never printed anything"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = f
        .ok(
            "vibe_wait",
            json!({"worker_id": id, "timeout_seconds": 0.3}),
        )
        .await;
    assert!(out.text.starts_with("still running"), "{}", out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["still_running"], true);
    assert_eq!(s["status"], "running");
    assert!(out.text.contains("last output:\n"), "{}", out.text);
    // A zero timeout is a status check.
    let now = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 0}))
        .await;
    assert!(now.text.starts_with("still running"), "{}", now.text);
    f.ok("vibe_kill", json!({"worker_id": id})).await;
}

#[tokio::test]
async fn send_reruns_with_the_appended_brief() {
    let Some(f) = fixture() else { return };
    let gate = f.path("gate");
    let pids = f.path("pids1");
    let id = f
        .spawn(
            &format!(
                "first part gate={} pidfile={}",
                gate.display(),
                pids.display()
            ),
            "fast",
        )
        .await;
    let (round1_pid, _) = read_pidfile(&pids).await;
    // Round 2 must not wait on the gate: a later directive wins.
    let pids2 = f.path("pids2");
    let out = f
        .ok(
            "vibe_send",
            json!({"worker_id": id, "message": format!("second part gate={} pidfile={}", f.path("open").display(), pids2.display())}),
        )
        .await;
    assert!(out.text.contains("round 2 is running"), "{}", out.text);
    std::fs::write(f.path("open"), "").unwrap();
    // Round 1's process group was stopped before round 2 started.
    until_group_gone(round1_pid).await;
    let done = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = done.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", done.text);
    assert_eq!(s["round"], 2);
    let result = s["result"].as_str().unwrap();
    assert!(result.starts_with("echo: first part"), "{result}");
    assert!(result.contains("second part"), "{result}");
    assert!(done.text.contains("round 2"), "{}", done.text);
    let log = std::fs::read_to_string(s["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("--- round 1 ended: killed"), "{log}");
    assert!(log.contains("stopped for round 2"), "{log}");
    assert!(log.contains("progress: round 2 starting"), "{log}");

    // Sending to a finished worker starts another round too.
    let again = f
        .ok("vibe_send", json!({"worker_id": id, "message": "third"}))
        .await;
    assert!(again.text.contains("round 3 is running"), "{}", again.text);
    let done = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    assert_eq!(done.structured.unwrap()["round"], 3);
}

#[tokio::test]
async fn three_workers_at_once() {
    let Some(f) = fixture() else { return };
    let gate = f.path("gate");
    let mut ids = Vec::new();
    for (i, tier) in ["fast", "good", "fast"].iter().enumerate() {
        ids.push(
            f.spawn(&format!("job{i} gate={}", gate.display()), tier)
                .await,
        );
    }
    assert_eq!(ids, vec!["w1", "w2", "w3"]);
    for id in &ids {
        assert_eq!(f.entry(id).await["status"], "running");
    }
    std::fs::write(&gate, "").unwrap();
    for (i, id) in ids.iter().enumerate() {
        let out = f
            .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
            .await;
        let s = out.structured.unwrap();
        assert_eq!(s["status"], "done", "{}", out.text);
        assert!(s["result"].as_str().unwrap().contains(&format!("job{i}")));
    }
    let list = f.ok("vibe_list", json!({})).await;
    assert_eq!(list.structured.unwrap()["total"], 3);
}

#[tokio::test]
async fn the_five_tools_are_read_tier_and_visible_in_plan_mode() {
    let Some(f) = fixture() else { return };
    let names: Vec<String> = f
        .registry
        .list(Surface::PLAN)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        vec![
            "vibe_kill",
            "vibe_list",
            "vibe_send",
            "vibe_spawn",
            "vibe_wait"
        ]
    );
    let empty = f.ok("vibe_list", json!({})).await;
    assert!(empty.text.contains("no workers yet"), "{}", empty.text);
}
