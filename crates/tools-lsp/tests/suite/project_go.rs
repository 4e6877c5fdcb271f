//! A Go module with two packages through gopls: a write that breaks the other package and
//! `main` names both in its own result, the fix names what is gone, ten times over; a file
//! changed outside the tools is current in the next `diagnostics`.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const GEOMETRY: &str = "geometry/geometry.go";

#[tokio::test]
async fn gopls_attributes_breakage_in_other_packages_to_the_write() {
    if require_binary("gopls", "gopls").is_none() || require_binary("go", "go").is_none() {
        return;
    }
    let p = Project::from_fixture("go_mod", CONFIG);
    let out = p
        .ok(json!({"action": "diagnostics", "file": GEOMETRY}))
        .await;
    has(&out, "no diagnostics");
    let ok = p.read(GEOMETRY);
    let broken = ok.replace(
        "func Area(r Rect) int {",
        "func Area(r Rect, scale int) int {",
    );
    assert_ne!(ok, broken);
    for cycle in 0..10 {
        let s = section(p.write_tool(GEOMETRY, &broken).await);
        has(&s, "new diagnostic(s) after this write");
        has(&s, "report/report.go:");
        has(&s, "main.go:");
        assert!(!s.contains("are gone"), "cycle {cycle}: {s}");
        assert!(!s.contains("pending"), "cycle {cycle}: {s}");
        let s = section(p.write_tool(GEOMETRY, &ok).await);
        assert!(!s.contains("new diagnostic(s)"), "cycle {cycle}: {s}");
        has(&s, "earlier diagnostic(s) are gone");
        has(&s, "report/report.go:");
        assert!(!s.contains("Late"), "cycle {cycle}: {s}");
    }
    // Changed outside the tools: the next answer is current.
    p.write(
        "report/report.go",
        &p.read("report/report.go")
            .replace("geometry.Area(r))", "geometry.Area(r, 2))"),
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "report/report.go"}))
        .await;
    has(&out, "report/report.go:12:");
    has(&out, "too many arguments");
    p.close_and_check().await;
}
