//! A C library with a header, a test program and compile_commands.json through clangd
//! (it diagnoses only open files): the files including a written header are opened as
//! baseline, so a break in them is named in the write's own result and the fix names what
//! is gone, ten times over; a file changed outside the tools is current in the next
//! `diagnostics`.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const HEADER: &str = "include/shapes.h";

#[tokio::test]
async fn clangd_names_broken_includers_of_a_written_header() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::from_fixture("c_lib", CONFIG);
    let out = p.ok(json!({"action": "diagnostics", "file": HEADER})).await;
    has(&out, "no diagnostics");
    let ok = p.read(HEADER);
    let broken = ok.replace(
        "int rect_area(const struct rect *r);",
        "int rect_area(const struct rect *r, int scale);",
    );
    assert_ne!(ok, broken);
    for cycle in 0..10 {
        let s = section(p.write_tool(HEADER, &broken).await);
        has(&s, "new diagnostic(s) after this write");
        has(&s, "tests/test_shapes.c:");
        has(&s, "src/shapes.c:");
        assert!(!s.contains("are gone"), "cycle {cycle}: {s}");
        assert!(!s.contains("pending"), "cycle {cycle}: {s}");
        let s = section(p.write_tool(HEADER, &ok).await);
        assert!(!s.contains("new diagnostic(s)"), "cycle {cycle}: {s}");
        has(&s, "earlier diagnostic(s) are gone");
        has(&s, "tests/test_shapes.c:");
        assert!(!s.contains("Late"), "cycle {cycle}: {s}");
    }
    // Changed outside the tools: the next answer is current.
    p.write(
        "tests/test_shapes.c",
        &p.read("tests/test_shapes.c")
            .replace("rect_area(&r)", "rect_area(&r, 2)"),
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "tests/test_shapes.c"}))
        .await;
    has(&out, "tests/test_shapes.c:6:");
    has(&out, "Too many arguments");
    p.close_and_check().await;
}
