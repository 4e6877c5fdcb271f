//! A diagnostics-only companion (ruff beside pyright) is stopped once nothing has asked
//! anything of it for `[lsp] companion_idle_s`, and the next write that needs it starts it
//! again and still reports what it finds.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, section};

/// ruff as the project configures it, pyright as the primary, and companions stopped after
/// one idle second.
const CONFIG: &str = "[lsp]\ncompanion_idle_s = 1\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
const RUFF_RUNNING: &str = "ruff: running ruff for root .";

fn ruff_running(status: &str) -> bool {
    status.lines().any(|l| l == RUFF_RUNNING)
}

#[tokio::test]
async fn an_idle_companion_is_stopped_and_the_next_write_starts_it_again() {
    if require_binary("pyright", "pyright-langserver").is_none()
        || require_binary("ruff", "ruff").is_none()
    {
        return;
    }
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"app\"\nversion = \"0.1.0\"\n\n[tool.ruff]\nline-length = 100\n",
            ),
            ("app.py", "x = 1\n"),
        ],
        CONFIG,
    );
    let s = section(p.write_tool("app.py", "import os\nx = 1\n").await);
    assert_eq!(
        s,
        "2 new diagnostic(s) after this write:\n\
         app.py:1:1 warning [I001] Import block is un-sorted or un-formatted … (ruff)\n\
         app.py:1:8 warning [F401] `os` imported but unused … (ruff)"
    );
    // Stopped once idle: looked for over a bound far past the idle second.
    let mut status = String::new();
    for _ in 0..100 {
        status = p.ok(json!({"action": "status"})).await;
        if !ruff_running(&status) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(!ruff_running(&status), "{status}");
    assert!(
        status.lines().any(|l| l
            == "ruff: stopped — ruff for root . had nothing asked of it for 1s; \
                the next write or check that needs it starts it again"),
        "{status}"
    );
    assert!(
        status
            .lines()
            .any(|l| l == "python: running pyright-langserver for root ."),
        "the primary stays up:\n{status}"
    );
    // The next write needs ruff: it starts again, and its new finding is this write's.
    let s = section(
        p.write_tool("app.py", "import os\nimport sys\nx = 1\n")
            .await,
    );
    assert_eq!(
        s,
        "1 new diagnostic(s) after this write:\n\
         app.py:2:8 warning [F401] `sys` imported but unused … (ruff)"
    );
    let status = p.ok(json!({"action": "status"})).await;
    assert!(ruff_running(&status), "{status}");
    p.close_and_check().await;
}
