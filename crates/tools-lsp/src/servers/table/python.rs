//! Python: the type-checking servers in order of preference, and ruff beside them as a
//! diagnostics-only companion.

use super::{ServerSpec, npm, pip};

const MARKERS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "pyrightconfig.json",
    "Pipfile",
];

pub(super) fn entries() -> Vec<ServerSpec> {
    // The same analysis settings under each server's own section.
    let analysis = serde_json::json!({
        "diagnosticMode": "workspace",
        "autoSearchPaths": true,
        "useLibraryCodeForTypes": true,
    });
    let python = ServerSpec::new("python")
        .candidate(
            &["pyright-langserver", "--stdio"],
            npm("pyright", "1.1.414"),
        )
        .candidate(
            &["basedpyright-langserver", "--stdio"],
            pip("basedpyright", "1.40.2"),
        )
        .candidate(&["pylsp"], pip("python-lsp-server[all]", "1.15.0"))
        .candidate(
            &["jedi-language-server"],
            pip("jedi-language-server", "0.45.1"),
        )
        .candidate(&["ty", "server"], pip("ty", "0.0.104"))
        .candidate(&["pyrefly", "lsp"], pip("pyrefly", "1.4.1"))
        .markers(MARKERS)
        .extensions(&["py", "pyi"])
        // pyright and basedpyright diagnose every file of the workspace (not only the open
        // ones), so a write that breaks an importer nobody opened is seen. Settings sent
        // replace the servers' defaults for the whole section: the search paths their
        // command line uses (`src/` among them, so a src-layout package's tests import the
        // package, not an installed copy or a bundled stub) are asked for again.
        .settings(serde_json::json!({
            "python": {"analysis": analysis.clone()},
            "basedpyright": {"analysis": analysis},
        }))
        .checker(&["pyright"])
        .checker(&["basedpyright"])
        .checker(&["mypy", "."]);
    // ruff lints; its findings stand beside the type checker's, tagged `ruff`.
    let ruff = ServerSpec::new("ruff")
        .candidate(&["ruff", "server"], pip("ruff", "0.17.5"))
        .markers(&[
            "pyproject.toml",
            "ruff.toml",
            ".ruff.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
        ])
        .extensions(&["py", "pyi"])
        .ids(&[("py", "python"), ("pyi", "python")])
        .checker(&["ruff", "check", "--output-format=concise", "--no-fix", "."])
        .companion();
    vec![python, ruff]
}
