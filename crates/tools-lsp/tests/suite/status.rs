//! `lsp status` reads from this workspace's point of view: its languages first, most files
//! first; a language with a marker but no files here is folded into one line; process ids
//! and uptimes only in the structured result.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[tokio::test]
async fn status_leads_with_the_workspace_languages() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let mut files: Vec<(String, String)> = (0..6)
        .map(|i| {
            (
                format!("pkg/m{i}.py"),
                format!("def f{i}() -> int:\n    return {i}\n"),
            )
        })
        .collect();
    files.push((
        "pyproject.toml".into(),
        "[project]\nname = \"pkg\"\n".into(),
    ));
    files.push(("scripts/build.sh".into(), "#!/bin/sh\necho build\n".into()));
    // A Go module marker without a single Go file.
    files.push((
        "tools/go.mod".into(),
        "module example.com/tools\n\ngo 1.19\n".into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let p = Project::new(
        &refs,
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n",
    );
    // Start python's server, so a running line and its pid exist.
    p.ok(json!({"action": "symbols", "file": "pkg/m0.py"}))
        .await;
    let out = p.lsp(json!({"action": "status"})).await.unwrap();
    let text = out.text.clone();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("python: running"), "{text}");
    let bash = lines.iter().position(|l| l.starts_with("bash:"));
    assert!(bash.is_some_and(|b| b > 0), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("go:")), "{text}");
    has(&text, "configured, but no files here: go");
    // The pid is for programs.
    assert!(!text.contains("pid "), "{text}");
    let s = out.structured.unwrap();
    assert!(
        s["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["pid"].as_i64().is_some()),
        "{s}"
    );
    assert_eq!(s["files_by_language"]["python"], 6, "{s}");
    p.close_and_check().await;
}
