//! jest, really run: its `--json` report read, `file::describe > name` ids.

use serde_json::json;

use super::{run_args, workspace};

const SUM_TEST: &str = "describe('sum', () => {
  test('adds', () => {
    expect(1 + 2).toBe(3)
  })

  test('carries', () => {
    expect(9 + 1).toBe(11)
  })

  test.skip('rounds', () => {
    expect(0.1 + 0.2).toBe(0.3)
  })
})
";

#[tokio::test]
async fn jest_failures_name_the_expectation_and_its_line() {
    let Some(jest) = tools_core::testing::require_binary("jest", "jest") else {
        return;
    };
    let ws = workspace(&[
        (
            "package.json",
            "{\"name\": \"sum\", \"devDependencies\": {\"jest\": \"30\"}}\n",
        ),
        ("src/sum.test.js", SUM_TEST),
    ]);
    super::link_node_modules(&jest, ws.root());
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "1 passed, 1 failed, 1 skipped in T s — jest\n\
         src/sum.test.js:7 src/sum.test.js::sum > carries — Error: expect(received).toBe(expected) // Object.is equality / Expected: 11 / Received: 10"
    );
    // The file's other tests are left out by the name filter, not skipped: only the asked
    // one that is skipped in the file counts.
    let text = ws
        .ok(run_args(json!({"ids": ["src/sum.test.js::sum > adds"]})))
        .await;
    assert_eq!(text, "1 passed, 0 failed, 0 skipped in T s — jest");
    let ids = [
        "src/sum.test.js::sum > adds",
        "src/sum.test.js::sum > rounds",
    ];
    let text = ws.ok(run_args(json!({ "ids": ids }))).await;
    assert_eq!(text, "1 passed, 0 failed, 1 skipped in T s — jest");
    ws.close().await;
}
