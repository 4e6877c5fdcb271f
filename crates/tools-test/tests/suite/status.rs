//! `status` and `doctor`: the runner per language, or why there is none.

use serde_json::json;

use super::{workspace, workspace_with};

#[tokio::test]
async fn status_and_doctor_name_the_runner_per_language_and_why_not() {
    let Some(go) = tools_core::testing::require_binary("go", "go") else {
        return;
    };
    let ws = workspace(&[
        (
            "pyproject.toml",
            "[project]\nname = \"p\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\n",
        ),
        ("svc/go.mod", "module example.com/svc\n\ngo 1.19\n"),
    ]);
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(ws.root())
        .status()
        .unwrap();
    assert!(made.success());
    let text = ws.ok(json!({"action": "status"})).await;
    assert_eq!(
        text,
        format!(
            "python: pytest for . (pyproject.toml [tool.pytest]): `.venv/bin/python -m pytest` from .venv/bin/python; records which functions each test runs\n\
             rust: no runner: no Cargo.toml found from . up to the workspace root\n\
             go: go test for svc (go.mod): `{} test` from PATH; records nothing (pytest, vitest and cargo nextest record)\n\
             javascript: no runner: no package.json naming vitest or jest, vitest.config.* or jest.config.* found from . up to the workspace root",
            go.display()
        )
    );
    let doctor: Vec<(String, bool)> = ws
        .registry
        .doctor()
        .await
        .into_iter()
        .map(|e| (format!("[{}] {}", e.family, e.resource), e.ok))
        .collect();
    assert_eq!(
        doctor,
        vec![
            ("[test] python: pytest".to_string(), true),
            ("[test] rust: no runner".to_string(), false),
            ("[test] go: go test".to_string(), true),
            ("[test] javascript: no runner".to_string(), false),
        ]
    );
    ws.close().await;
}

#[tokio::test]
async fn an_untrusted_status_says_run_is_refused() {
    let ws = workspace_with(&[("Cargo.toml", "[package]\nname = \"x\"\n")], false, "");
    let text = ws.ok(json!({"action": "status"})).await;
    let last = text.lines().last().unwrap_or_default().to_string();
    assert_eq!(
        last,
        "untrusted workspace: `run` is refused and the project's own environments are not searched; start with --trust (or list this folder under [trust] roots in ~/.config/agent-tools/config.toml) to enable it"
    );
    ws.close().await;
}
