//! Ending workers: kill, failure, the watchdogs, and closing the run.

use serde_json::json;

use super::*;

#[tokio::test]
async fn kill_ends_the_whole_process_group() {
    let Some(f) = fixture() else { return };
    let pids = f.path("pids");
    let id = f
        .spawn(
            &format!("child=1 sleep=600 pidfile={}", pids.display()),
            "fast",
        )
        .await;
    let (pid, grandchild) = read_pidfile(&pids).await;
    let pgid = f.entry(&id).await["pid"].as_i64().unwrap() as i32;
    assert!(alive(grandchild), "the grandchild should be running");
    assert!(group_members(pgid).contains(&grandchild));
    let out = f.ok("vibe_kill", json!({"worker_id": id})).await;
    assert!(out.text.starts_with("killed"), "{}", out.text);
    let s = out.structured.unwrap();
    assert_eq!(s["was_running"], true);
    assert_eq!(s["worker"]["status"], "killed");
    until_group_gone(pgid).await;
    assert!(!alive(pid) && !alive(grandchild));
    // Killing it again is harmless and says so.
    let again = f.ok("vibe_kill", json!({"worker_id": id})).await;
    assert!(
        again.text.starts_with("it had already finished"),
        "{}",
        again.text
    );
    assert_eq!(f.entry(&id).await["status"], "killed");
}

#[tokio::test]
async fn a_failing_worker_shows_failed_with_exit_code_and_tail() {
    let Some(f) = fixture() else { return };
    let id = f.spawn("break it final=none exit=3", "fast").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "failed", "{}", out.text);
    assert_eq!(s["exit_code"], 3);
    assert!(out.text.contains("failed, round 1"), "{}", out.text);
    assert!(out.text.contains("exit code 3"), "{}", out.text);
    assert!(out.text.contains("last output:\n"), "{}", out.text);
    assert!(
        out.text.contains("brief: break it final=none exit=3"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("stderr: hello from the worker"),
        "{}",
        out.text
    );
    let list = f.ok("vibe_list", json!({})).await;
    assert!(
        list.text.contains("w1 \"test\" [fast] failed"),
        "{}",
        list.text
    );
}

#[tokio::test]
async fn the_terminal_event_decides_over_the_exit_code() {
    let Some(f) = fixture() else { return };
    // A failure event with exit 0 is a failure …
    let a = f.spawn("final=failed exit=0", "fast").await;
    // … and a success event followed by exit 1 is a success.
    let b = f.spawn("recovered final=done exit=1", "fast").await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": a, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "failed", "{}", out.text);
    assert_eq!(s["exit_code"], 0);
    assert!(
        out.text
            .contains("its final event reported failure: it broke"),
        "{}",
        out.text
    );
    let out = f
        .ok("vibe_wait", json!({"worker_id": b, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    assert_eq!(s["exit_code"], 1);
    assert!(
        out.text.contains("after its final event reported success"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn a_worker_lingering_after_its_final_event_is_ended() {
    let Some(f) = fixture() else { return };
    let pids = f.path("pids");
    let id = f
        .spawn(
            &format!("final=done linger=600 pidfile={}", pids.display()),
            "fast",
        )
        .await;
    let (pid, _) = read_pidfile(&pids).await;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "done", "{}", out.text);
    assert!(
        out.text
            .contains("after its final event (it did not exit by itself)"),
        "{}",
        out.text
    );
    assert!(
        s["result"]
            .as_str()
            .unwrap()
            .starts_with("echo: final=done")
    );
    until_group_gone(pid).await;
}

#[tokio::test]
async fn the_stall_watchdog_marks_a_silent_worker() {
    let Some(f) = fixture() else { return };
    let id = f.spawn("silent=600", "stall").await;
    // vibe_wait returns early on a stall rather than sitting out its timeout.
    let out = f
        .ok(
            "vibe_wait",
            json!({"worker_id": id, "timeout_seconds": 600}),
        )
        .await;
    assert!(
        out.text.starts_with("still running, but stalled"),
        "{}",
        out.text
    );
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "stalled");
    assert_eq!(s["still_running"], true);
    // Waiting again on a worker already stalled waits for real (here: until its timeout).
    let again = f
        .ok(
            "vibe_wait",
            json!({"worker_id": id, "timeout_seconds": 0.3}),
        )
        .await;
    assert!(
        again.text.starts_with("still running: the wait timed out"),
        "{}",
        again.text
    );
    assert!(again.text.contains("stalled"), "{}", again.text);
    let list = f.ok("vibe_list", json!({})).await;
    assert!(list.text.contains("stalled, round 1"), "{}", list.text);
    assert!(list.text.contains("no output for"), "{}", list.text);
    f.ok("vibe_kill", json!({"worker_id": id})).await;
    assert_eq!(f.entry(&id).await["status"], "killed");
}

#[tokio::test]
async fn output_brings_a_stalled_worker_back_to_running() {
    let Some(f) = fixture() else { return };
    let gate = f.path("gate");
    // Silent first, then prints progress while waiting for the gate.
    let id = f
        .spawn(&format!("silent=2 gate={}", gate.display()), "stall")
        .await;
    f.until_status(&id, "stalled").await;
    f.until_status(&id, "running").await;
    std::fs::write(&gate, "").unwrap();
    f.until_status(&id, "done").await;
}

#[tokio::test]
async fn a_worker_past_its_timeout_is_ended_as_timed_out() {
    let Some(f) = fixture() else { return };
    let pids = f.path("pids");
    let id = f
        .spawn(
            &format!("child=1 sleep=600 pidfile={}", pids.display()),
            "short",
        )
        .await;
    let pgid = f.entry(&id).await["pid"].as_i64().unwrap() as i32;
    let out = f
        .ok("vibe_wait", json!({"worker_id": id, "timeout_seconds": 60}))
        .await;
    let s = out.structured.unwrap();
    assert_eq!(s["status"], "timed out", "{}", out.text);
    assert!(
        out.text.contains("ended after the tier's timeout of 0.5 s"),
        "{}",
        out.text
    );
    until_group_gone(pgid).await;
    // On a slow machine the timeout may come before the grandchild was even started.
    if let Ok(text) = std::fs::read_to_string(&pids) {
        let grandchild: i32 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(!alive(grandchild));
    }
}

#[tokio::test]
async fn closing_the_run_leaves_no_worker_process() {
    let Some(f) = fixture() else { return };
    let mut groups = Vec::new();
    let mut ids = Vec::new();
    for (i, tier) in ["fast", "good", "stall"].iter().enumerate() {
        let pids = f.path(&format!("pids{i}"));
        ids.push(
            f.spawn(
                &format!("child=1 sleep=600 pidfile={}", pids.display()),
                tier,
            )
            .await,
        );
        let (pid, grandchild) = read_pidfile(&pids).await;
        groups.push((pid, grandchild));
    }
    // A wait in flight when the run closes returns instead of outliving it.
    let reg = f.registry.clone();
    let waiter = tokio::spawn(async move {
        reg.call(
            Surface::FULL,
            "vibe_wait",
            json!({"worker_id": "w1", "timeout_seconds": 600}),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    f.run.close().await;
    for (pid, grandchild) in &groups {
        until_group_gone(*pid).await;
        assert!(!alive(*grandchild));
    }
    let waited = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .expect("vibe_wait outlived the run")
        .unwrap();
    // Either it saw the worker killed or it was cancelled with the run; never an endless wait.
    if let Ok(out) = waited {
        assert!(out.text.contains("w1"), "{}", out.text);
    }
    let list = f.run.state(tools_vibe::WorkerList::default);
    for id in &ids {
        let snap = list.get(id).unwrap().snapshot(5);
        assert_eq!(snap.status, tools_vibe::Status::Killed, "{id}");
        assert_eq!(snap.note.as_deref(), Some("the run closed"), "{id}");
    }
    // New calls on a closed run are refused.
    assert!(f.call("vibe_list", json!({})).await.is_err());
}

#[tokio::test]
async fn dropping_the_run_kills_workers_too() {
    let Some(f) = fixture() else { return };
    let pids = f.path("pids");
    f.spawn(
        &format!("child=1 sleep=600 pidfile={}", pids.display()),
        "fast",
    )
    .await;
    let (pid, grandchild) = read_pidfile(&pids).await;
    let Fixture { dir, run, registry } = f;
    drop(registry);
    drop(run);
    until_group_gone(pid).await;
    assert!(!alive(grandchild));
    drop(dir);
}
