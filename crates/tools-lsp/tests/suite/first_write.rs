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

/// Writes `file` of the `fixture` project with `from` replaced by `to`, in a fresh run each
/// time: through the write tool, whose result must name every one of `expected` under the
/// new diagnostics, and as a plain write, which must report nothing new.
async fn first_write_breaks(
    fixture: &str,
    file: &str,
    (from, to): (&str, &str),
    expected: &[&str],
) {
    for plain in [false, true] {
        let p = Project::from_fixture(fixture, CONFIG);
        let broken = p.read(file).replace(from, to);
        let s = section(
            p.write_tool_with(json!({"path": file, "text": broken, "plain": plain}))
                .await,
        );
        assert!(!s.contains("pending"), "{s}");
        if plain {
            assert!(!s.contains("new diagnostic(s)"), "{s}");
        } else {
            has(&s, "new diagnostic(s) after this write");
            for e in expected {
                has(&s, e);
            }
        }
        p.close_and_check().await;
    }
}

#[tokio::test]
async fn first_write_to_a_ts_module_names_its_unopened_importers() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none() {
        return;
    }
    first_write_breaks(
        "ts_lib",
        "src/geometry.ts",
        (
            "export function area(r: Rect): number {",
            "export function area(r: Rect, scale: number): number {",
        ),
        &[
            "src/report.ts:",
            "test/geometry.test.ts:",
            "Expected 2 arguments",
        ],
    )
    .await;
}

#[tokio::test]
async fn first_write_to_a_c_header_names_its_unopened_includers() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    first_write_breaks(
        "c_lib",
        "include/shapes.h",
        (
            "int rect_area(const struct rect *r);",
            "int rect_area(const struct rect *r, int scale);",
        ),
        &["src/shapes.c:", "tests/test_shapes.c:"],
    )
    .await;
}
