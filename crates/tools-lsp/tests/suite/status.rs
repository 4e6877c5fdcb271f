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
    // Every process of the server with its memory: the line says what the structured
    // result holds, largest first, and the run's total closes the report.
    let python = s["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["language"] == "python" && e["state"] == "running")
        .unwrap();
    let mut processes: Vec<(String, u64)> = python["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["rss_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(python["processes"][0]["pid"], python["pid"], "{python}");
    assert!(processes.iter().all(|(_, rss)| *rss > 0), "{python}");
    let total: u64 = processes.iter().map(|(_, rss)| rss).sum();
    assert_eq!(python["rss_bytes"], total, "{python}");
    processes.sort_by_key(|(_, rss)| std::cmp::Reverse(*rss));
    let mib = |b: u64| format!("{} MiB", b.div_ceil(1024 * 1024));
    let named: Vec<String> = processes
        .iter()
        .map(|(n, r)| format!("{n} {}", mib(*r)))
        .collect();
    let count = match processes.len() {
        1 => "1 process".to_string(),
        n => format!("{n} processes"),
    };
    assert_eq!(
        lines[1],
        format!(
            "python: memory of pyright-langserver: {} in {count} — {}",
            mib(total),
            named.join(", ")
        ),
        "{text}"
    );
    assert_eq!(s["rss_bytes"], total, "{s}");
    assert!(
        lines.contains(
            &format!(
                "language servers in all: {} in {} process(es)",
                mib(total),
                processes.len()
            )
            .as_str()
        ),
        "{text}"
    );
    p.close_and_check().await;
}
