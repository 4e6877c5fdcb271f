//! vitest, really run: its JSON report read, `file::describe > name` ids.

use serde_json::json;

use super::{run_args, workspace};

const SUM_TEST: &str = "import { describe, expect, it } from 'vitest'

describe('sum', () => {
  it('adds', () => {
    expect(1 + 2).toBe(3)
  })

  it('carries', () => {
    expect(9 + 1).toBe(11)
  })

  it.skip('rounds', () => {
    expect(0.1 + 0.2).toBe(0.3)
  })
})
";

#[tokio::test]
async fn vitest_failures_name_the_expectation_and_its_line() {
    let Some(vitest) = tools_core::testing::require_binary("vitest", "vitest") else {
        return;
    };
    let ws = workspace(&[
        (
            "package.json",
            "{\"name\": \"sum\", \"type\": \"module\", \"devDependencies\": {\"vitest\": \"3\"}}\n",
        ),
        ("src/sum.test.js", SUM_TEST),
    ]);
    super::link_node_modules(&vitest, ws.root());
    let text = ws
        .ok(json!({"action": "list", "file": "src/sum.test.js"}))
        .await;
    assert_eq!(
        text,
        "3 tests for src/sum.test.js\n\
         src/sum.test.js:4 src/sum.test.js::sum > adds\n\
         src/sum.test.js:8 src/sum.test.js::sum > carries\n\
         src/sum.test.js:12 src/sum.test.js::sum > rounds"
    );
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "1 passed, 1 failed, 1 skipped in T s — vitest\n\
         src/sum.test.js:9 src/sum.test.js::sum > carries — AssertionError: expected 10 to be 11 // Object.is equality"
    );
    // The file's other tests are left out by the name filter, not skipped: only the asked
    // one that is skipped in the file counts.
    let text = ws
        .ok(run_args(json!({"ids": ["src/sum.test.js::sum > adds"]})))
        .await;
    assert_eq!(text, "1 passed, 0 failed, 0 skipped in T s — vitest");
    let ids = [
        "src/sum.test.js::sum > adds",
        "src/sum.test.js::sum > rounds",
    ];
    let text = ws.ok(run_args(json!({ "ids": ids }))).await;
    assert_eq!(text, "1 passed, 0 failed, 1 skipped in T s — vitest");
    ws.close().await;
}
