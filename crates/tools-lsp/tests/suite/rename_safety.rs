//! `lsp_rename` writes through the safe writer: a link planted at the temp-file name the
//! old writer used is not followed, and every file keeps its mode.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[tokio::test]
async fn rename_follows_no_planted_link_and_keeps_modes() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"d\"\nversion = \"0\"\n",
            ),
            ("util.py", "def compute(x):\n    return x * 2\n"),
            ("main.py", "from util import compute\nprint(compute(1))\n"),
        ],
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n",
    );
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "safe\n").unwrap();
    // The old writer's temp name was `.NAME.rename-PID.tmp`, opened following links.
    for name in ["util.py", "main.py"] {
        let planted = p
            .root()
            .join(format!(".{name}.rename-{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, planted).unwrap();
    }
    let main = p.root().join("main.py");
    std::fs::set_permissions(&main, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = p
        .call(
            "lsp_rename",
            json!({"file": "util.py", "line": 1, "symbol": "compute", "new_name": "calculate"}),
        )
        .await
        .unwrap();
    has(&out.text, "2 file(s)");
    assert!(p.read("main.py").contains("calculate(1)"));
    assert!(p.read("util.py").contains("def calculate"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "safe\n");
    assert_eq!(
        std::fs::metadata(&main).unwrap().permissions().mode() & 0o7777,
        0o755
    );
}

/// A server's rename edit that names a FIFO: the planning step reads through the safe
/// reader, so the rename is refused at once instead of blocking on the FIFO forever.
#[tokio::test]
async fn rename_refuses_an_edit_naming_a_fifo_without_blocking() {
    let p = Project::new(
        &[("fake.toml", ""), ("a.fake", "alpha beta\ngamma\n")],
        &super::fake_server_config(
            "rename-to-fifo",
            "start_timeout_ms = 5000\nrequest_timeout_ms = 3000\n",
        ),
    );
    let fifo = p.root().join("pipe.fake");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let call = p.call(
        "lsp_rename",
        json!({"file": "a.fake", "line": 1, "symbol": "alpha", "new_name": "omega"}),
    );
    let e = tokio::time::timeout(std::time::Duration::from_secs(60), call)
        .await
        .expect("the rename blocked on the FIFO")
        .unwrap_err();
    has(&e.to_string(), "pipe.fake");
    has(&e.to_string(), "not a regular file");
    has(&e.to_string(), "nothing was changed");
    assert_eq!(p.read("a.fake"), "alpha beta\ngamma\n");
}
