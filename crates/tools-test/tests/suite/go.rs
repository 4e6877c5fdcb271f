//! go test, really run: `go test -json` read, `file::Test` ids, build errors counted.

use serde_json::json;

use super::{run_args, workspace};

const GO_MOD: &str = "module example.com/calc\n\ngo 1.19\n";
const CALC: &str = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a + b }\n";
const CALC_TEST: &str = "package calc

import \"testing\"

func TestAdd(t *testing.T) {
\tif Add(1, 2) != 3 {
\t\tt.Fatal(\"add\")
\t}
}

func TestSub(t *testing.T) {
\tif got := Sub(3, 1); got != 2 {
\t\tt.Errorf(\"Sub(3, 1) = %d, want 2\", got)
\t}
}
";

#[tokio::test]
async fn go_test_json_gives_the_failing_line_and_message() {
    if tools_core::testing::require_binary("go", "go").is_none() {
        return;
    }
    let ws = workspace(&[
        ("go.mod", GO_MOD),
        ("mathx/calc.go", CALC),
        ("mathx/calc_test.go", CALC_TEST),
    ]);
    let text = ws
        .ok(json!({"action": "list", "file": "mathx/calc.go"}))
        .await;
    assert_eq!(
        text,
        "2 tests for mathx/calc.go\n\
         mathx/calc_test.go:5 mathx/calc_test.go::TestAdd\n\
         mathx/calc_test.go:11 mathx/calc_test.go::TestSub"
    );
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "1 passed, 1 failed, 0 skipped in T s — go test\n\
         mathx/calc_test.go:13 mathx/calc_test.go::TestSub — Sub(3, 1) = 4, want 2"
    );
    let text = ws
        .ok(run_args(json!({"ids": ["mathx/calc_test.go::TestAdd"]})))
        .await;
    assert_eq!(text, "1 passed, 0 failed, 0 skipped in T s — go test");
    std::fs::write(
        ws.root().join("mathx/calc.go"),
        CALC.replace("return a + b }\n\nfunc Sub", "return a + c }\n\nfunc Sub"),
    )
    .unwrap();
    let text = ws.ok(run_args(json!({"file": "mathx/calc_test.go"}))).await;
    assert_eq!(
        text,
        "0 passed, 1 failed, 0 skipped in T s — go test\n\
         mathx/calc.go:3 ./mathx (build) — undefined: c"
    );
    ws.close().await;
}
