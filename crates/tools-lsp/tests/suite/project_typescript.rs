//! A TypeScript library with tests through typescript-language-server (tsserver diagnoses
//! only open files): a rename right after start keeps `tsc` passing with no phantom
//! diagnostic; the files importing a written one are opened as baseline, so a break in them
//! is named in the write's own result and the fix names what is gone, cycle after cycle.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const GEOMETRY: &str = "src/geometry.ts";

fn tsc(p: &Project) -> std::process::Output {
    let tsc = tools_core::testing::which("tsc").unwrap();
    std::process::Command::new(tsc)
        .args(["--noEmit", "-p", "."])
        .current_dir(p.root())
        .output()
        .unwrap()
}

#[tokio::test]
async fn typescript_names_broken_importers_and_renames_cleanly() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("typescript", "tsc").is_none()
    {
        return;
    }
    let p = Project::from_fixture("ts_lib", CONFIG);
    // Rename right after start.
    let out = p.rename_cleanly(GEOMETRY, 8, "area", "surface").await;
    has(&out.text, "test/geometry.test.ts");
    has(&out.text, "src/report.ts");
    let built = tsc(&p);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stdout)
    );

    let ok = p.read(GEOMETRY);
    let broken = ok.replace(
        "export function surface(r: Rect): number {",
        "export function surface(r: Rect, scale: number): number {",
    );
    assert_ne!(ok, broken);
    for cycle in 0..10 {
        let s = section(p.write_tool(GEOMETRY, &broken).await);
        has(&s, "new diagnostic(s) after this write");
        has(&s, "src/report.ts:");
        has(&s, "test/geometry.test.ts:");
        assert!(!s.contains("are gone"), "cycle {cycle}: {s}");
        assert!(!s.contains("pending"), "cycle {cycle}: {s}");
        let s = section(p.write_tool(GEOMETRY, &ok).await);
        assert!(!s.contains("new diagnostic(s)"), "cycle {cycle}: {s}");
        has(&s, "earlier diagnostic(s) are gone");
        has(&s, "src/report.ts:");
        assert!(!s.contains("Late"), "cycle {cycle}: {s}");
    }
    // Changed outside the tools (as a checkout would): the next answer is current.
    p.write(
        "src/report.ts",
        &p.read("src/report.ts")
            .replace("surface(r)", "surface(r, 2)"),
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "src/report.ts"}))
        .await;
    has(&out, "src/report.ts:");
    has(&out, "Expected 1 arguments");
    p.close_and_check().await;
}
