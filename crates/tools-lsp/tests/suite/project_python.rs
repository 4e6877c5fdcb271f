//! A src-layout Python package with tests, through pyright: a write that breaks callers in
//! files nobody opened reports their errors in its own result, the fix names what is gone,
//! and break/fix cycles each attribute exactly their own change.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

const CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

const GEOMETRY: &str = "src/shapes/geometry.py";
const AREA_OK: &str = "def area(r: Rect) -> int:";
const AREA_BROKEN: &str = "def area(r: Rect, scale: int) -> int:";

#[tokio::test]
async fn pyright_attributes_breakage_in_unopened_callers_to_the_write() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", CONFIG);
    let ok = p.read(GEOMETRY);
    let broken = ok.replace(AREA_OK, AREA_BROKEN);
    // Start the server on the file about to be edited (nothing else is opened).
    let out = p
        .ok(json!({"action": "diagnostics", "file": GEOMETRY}))
        .await;
    has(&out, "no diagnostics");
    // Break: the callers in report.py and the test file (never opened) are named.
    let s = section(p.write_tool(GEOMETRY, &broken).await);
    has(&s, "new diagnostic(s) after this write");
    has(&s, "src/shapes/report.py:");
    has(&s, "tests/test_geometry.py:");
    has(&s, "scale");
    // Fix: nothing new, and the earlier ones are named as gone.
    let s = section(p.write_tool(GEOMETRY, &ok).await);
    assert!(!s.contains("new diagnostic(s)"), "{s}");
    has(&s, "earlier diagnostic(s) are gone");
    has(&s, "src/shapes/report.py:");
    // Ten break/fix cycles: each result holds exactly its own change.
    for i in 0..10 {
        let s = section(p.write_tool(GEOMETRY, &broken).await);
        has(&s, "new diagnostic(s) after this write");
        has(&s, "tests/test_geometry.py:");
        assert!(!s.contains("are gone"), "cycle {i} break: {s}");
        assert!(!s.contains("pending"), "cycle {i} break: {s}");
        let s = section(p.write_tool(GEOMETRY, &ok).await);
        assert!(!s.contains("new diagnostic(s)"), "cycle {i} fix: {s}");
        has(&s, "are gone");
        assert!(!s.contains("Late"), "cycle {i} fix: {s}");
    }
    p.close_and_check().await;
}
