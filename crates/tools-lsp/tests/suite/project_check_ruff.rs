//! The project check (`diagnostics "*"`) runs ruff beside pyright by the same rule as on
//! write: only where the project (or the user) configures ruff.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

const CONFIG: &str = "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

/// The lines of a project check that head one checker's findings.
fn checkers_run(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.ends_with("finding(s)"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn ruff_joins_the_project_check_only_where_the_project_configures_it() {
    if require_binary("pyright", "pyright").is_none() || require_binary("ruff", "ruff").is_none() {
        return;
    }
    // Two unused imports (ruff's F401 under its default rules) and one type error.
    let source = "import os\nimport sys\n\nx: int = \"a\"\n";
    let p = Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
            ),
            ("app.py", source),
        ],
        CONFIG,
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    assert_eq!(
        checkers_run(&out),
        ["python: `pyright` in . (exit 1): 1 finding(s)"],
        "{out}"
    );
    p.write(
        "pyproject.toml",
        "[project]\nname = \"app\"\nversion = \"0.1.0\"\n\n[tool.ruff]\nline-length = 100\n",
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    assert_eq!(
        checkers_run(&out),
        [
            "python: `pyright` in . (exit 1): 1 finding(s)",
            "ruff: `ruff check --output-format=concise --no-fix .` in . (exit 1): 2 finding(s)"
        ],
        "{out}"
    );
    p.close_and_check().await;
}
