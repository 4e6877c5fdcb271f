//! A Cargo workspace of three crates through rust-analyzer: exactly one server for the
//! whole workspace; a rename right after start succeeds and leaves the workspace building
//! with no phantom diagnostic; a write that breaks callers in other, unopened crates names
//! them in its own result (rust-analyzer's `cargo check` after the save), and the fix names
//! what is gone, ten break/fix cycles in a row (each write runs `cargo check`: about 4 s a
//! write here, under two minutes for the whole test).

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

// rust-analyzer indexes the standard library on start; on a loaded machine that takes
// a while. Generous bounds: every wait ends as soon as the server is settled.
const CONFIG: &str = "[lsp]\nindex_wait_ms = 180000\ndiagnostics_wait_ms = 180000\n";

const LIB: &str = "crates/geometry/src/lib.rs";

pub(super) fn rust_analyzer_works() -> bool {
    // `~/.cargo/bin/rust-analyzer` may be a rustup proxy without the component behind it.
    require_binary("rust-analyzer", "rust-analyzer").is_some()
        && std::process::Command::new("rust-analyzer")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
}

fn cargo_check(p: &Project) -> std::process::Output {
    std::process::Command::new("cargo")
        .args(["check", "--workspace", "--quiet", "--offline"])
        .current_dir(p.root())
        .output()
        .unwrap()
}

#[tokio::test]
async fn one_rust_analyzer_for_a_cargo_workspace_with_settled_diagnostics() {
    if !rust_analyzer_works() {
        return;
    }
    let p = Project::from_fixture("cargo_ws", CONFIG);
    // A rename right after start: the server's project is loaded first.
    let out = p.rename_cleanly(LIB, 12, "area", "surface").await;
    has(&out.text, "renamed `area`");
    has(&out.text, "crates/report/src/lib.rs");
    has(&out.text, "crates/cli/src/main.rs");
    let built = cargo_check(&p);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    // Files of all three crates: still one server, at the workspace root.
    for f in ["crates/report/src/lib.rs", "crates/cli/src/main.rs"] {
        let out = p.ok(json!({"action": "diagnostics", "file": f})).await;
        has(&out, "no diagnostics");
    }
    let status = p.lsp(json!({"action": "status"})).await.unwrap();
    let servers = status.structured.unwrap()["servers"].clone();
    // The workspace's other languages (its TOML manifests) have entries of their own.
    let servers: Vec<_> = servers
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["language"] == "rust")
        .collect();
    // One entry for the language: the running server at the workspace root.
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0]["root"], ".", "{servers:?}");
    assert_eq!(servers[0]["state"], "running", "{servers:?}");
    has(&status.text, "rust");
    // A workspace symbol is listed once.
    let out = p.ok(json!({"action": "symbols", "query": "surface"})).await;
    assert_eq!(out.matches("function surface").count(), 1, "{out}");

    // Break the signature: the callers in the two other crates are named.
    let ok = p.read(LIB);
    let broken = ok.replace(
        "pub fn surface(r: &Rect) -> u32 {",
        "pub fn surface(r: &Rect, scale: u32) -> u32 {",
    );
    assert_ne!(ok, broken);
    for cycle in 0..10 {
        let s = section(p.write_tool(LIB, &broken).await);
        has(&s, "new diagnostic(s) after this write");
        // `cargo check` stops at the first crate that fails (report), so cli is not
        // checked while report is broken.
        has(&s, "crates/report/src/lib.rs:");
        assert!(!s.contains("pending"), "cycle {cycle}: {s}");
        assert!(!s.contains("are gone"), "cycle {cycle}: {s}");
        let s = section(p.write_tool(LIB, &ok).await);
        assert!(!s.contains("new diagnostic(s)"), "cycle {cycle}: {s}");
        has(&s, "earlier diagnostic(s) are gone");
        has(&s, "crates/report/src/lib.rs:");
        assert!(!s.contains("Late"), "cycle {cycle}: {s}");
    }
    assert_eq!(p.server_pids().await.len(), 1);
    p.close_and_check().await;
}
