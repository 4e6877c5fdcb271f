//! The first write of a fresh run to a file no server has open, for servers that diagnose
//! only open documents (tsserver, clangd): the files importing it were never opened either,
//! yet what the write breaks in them is in that write's own result — they are seen against
//! the written file's text from before the write first. Written by other means (no text
//! from before is known), the importers stay baseline: nothing is reported as new that
//! might have been there before.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

#[tokio::test]
async fn first_write_to_a_ts_module_names_its_unopened_importers() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none() {
        return;
    }
    let module = "src/geometry.ts";
    for plain in [false, true] {
        let p = Project::from_fixture("ts_lib", CONFIG);
        let broken = p.read(module).replace(
            "export function area(r: Rect): number {",
            "export function area(r: Rect, scale: number): number {",
        );
        let s = section(
            p.write_tool_with(json!({"path": module, "text": broken, "plain": plain}))
                .await,
        );
        assert!(!s.contains("pending"), "{s}");
        if plain {
            assert!(!s.contains("new diagnostic(s)"), "{s}");
        } else {
            has(&s, "new diagnostic(s) after this write");
            has(&s, "src/report.ts:");
            has(&s, "test/geometry.test.ts:");
            has(&s, "Expected 2 arguments");
        }
        p.close_and_check().await;
    }
}

#[tokio::test]
async fn first_write_to_a_c_header_names_its_unopened_includers() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let header = "include/shapes.h";
    for plain in [false, true] {
        let p = Project::from_fixture("c_lib", CONFIG);
        let broken = p.read(header).replace(
            "int rect_area(const struct rect *r);",
            "int rect_area(const struct rect *r, int scale);",
        );
        let s = section(
            p.write_tool_with(json!({"path": header, "text": broken, "plain": plain}))
                .await,
        );
        assert!(!s.contains("pending"), "{s}");
        if plain {
            assert!(!s.contains("new diagnostic(s)"), "{s}");
        } else {
            has(&s, "new diagnostic(s) after this write");
            has(&s, "src/shapes.c:");
            has(&s, "tests/test_shapes.c:");
        }
        p.close_and_check().await;
    }
}
