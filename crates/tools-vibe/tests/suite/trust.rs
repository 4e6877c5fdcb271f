//! Briefs are data and logs stay in the run's own folder: a brief that looks like shell code
//! runs no shell, a command that would splice it into a script is refused, a link planted
//! where a log goes is never followed, and read-capped surfaces run only a tier's declared
//! read-only command.

use serde_json::json;
use tools_core::{CallError, Config, Run, RunOptions, Surface, ToolError};

use super::{fixture_with, worker_script};

/// `$(touch pwned)` as the brief of a shell-backed tier that takes it as `$1`: printed,
/// never run.
#[tokio::test]
async fn a_brief_that_looks_like_shell_code_runs_no_shell() {
    let config = r#"
[vibe.sh]
command = ["sh", "-c", "printf 'got: %s\n' \"$1\"", "sh", "{brief}"]
"#;
    let Some(fx) = fixture_with(config) else {
        return;
    };
    let id = fx
        .spawn("$(touch pwned) `touch pwned2`; touch pwned3", "sh")
        .await;
    let done = fx.until_status(&id, "done").await;
    assert_eq!(
        done["result"],
        "got: $(touch pwned) `touch pwned2`; touch pwned3"
    );
    for name in ["pwned", "pwned2", "pwned3"] {
        assert!(!fx.path(name).exists(), "{name} was created: the brief ran");
    }
}

#[test]
fn a_command_that_splices_the_brief_into_a_script_is_refused_when_the_run_opens() {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: dir.path().into(),
        conversation_id: "splice".into(),
        config: Config::parse("[vibe.fast]\ncommand = [\"sh\", \"-c\", \"echo {brief}\"]\n")
            .unwrap(),
        trusted: true,
    })
    .unwrap();
    let err = tools_vibe::family(&run).err().unwrap().to_string();
    assert!(
        err.contains("[vibe.fast]") && err.contains("$(touch pwned)"),
        "{err}"
    );
}

/// A symlink planted at the first log name (pointing outside) is neither followed nor
/// reused: the worker logs to a fresh file of its own.
#[cfg(unix)]
#[tokio::test]
async fn a_planted_link_at_the_log_path_is_not_followed() {
    let w = format!("{:?}", worker_script().display().to_string());
    let Some(fx) = fixture_with(&format!("[vibe.good]\ncommand = [\"python3\", {w}]\n")) else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "untouched\n").unwrap();
    let logs = fx.run.state_dir().unwrap().join("vibe");
    std::fs::create_dir_all(&logs).unwrap();
    std::os::unix::fs::symlink(&victim, logs.join("w1.log")).unwrap();

    let out = fx
        .ok(
            "vibe_spawn",
            json!({"brief": "final=none", "label": "l", "tier": "good"}),
        )
        .await;
    let log = out.structured.unwrap()["log_path"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(log.ends_with("w1-2.log"), "{log}");
    fx.until_status("w1", "done").await;
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched\n");
    assert!(std::fs::read_to_string(&log).unwrap().contains("round 1"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log is private");
}

/// From `plan`, a tier runs its `read_only_command`; a tier without one is refused there.
#[tokio::test]
async fn read_capped_surfaces_run_only_a_declared_read_only_command() {
    let w = format!("{:?}", worker_script().display().to_string());
    let config = format!(
        "[vibe.fast]\ncommand = [\"python3\", {w}, \"{{brief}}\"]\n\
         read_only_command = [\"python3\", {w}, \"read-only: {{brief}}\"]\n\
         [vibe.good]\ncommand = [\"python3\", {w}, \"{{brief}}\"]\n"
    );
    let Some(fx) = fixture_with(&config) else {
        return;
    };
    let err = fx
        .registry
        .call(
            Surface::PLAN,
            "vibe_spawn",
            json!({"brief": "final=none", "label": "g", "tier": "good"}),
        )
        .await
        .unwrap_err();
    match err {
        CallError::Tool(ToolError::Rejected(why)) => {
            assert!(
                why.contains("read_only_command") && why.contains("plan"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    let out = fx
        .registry
        .call(
            Surface::PLAN,
            "vibe_spawn",
            json!({"brief": "final=none", "label": "f", "tier": "fast"}),
        )
        .await
        .unwrap();
    let id = out.structured.unwrap()["id"].as_str().unwrap().to_string();
    let done = fx.until_status(&id, "done").await;
    let result = done["result"].as_str().unwrap_or_default();
    assert!(result.contains("brief: read-only: final=none"), "{done}");
}
