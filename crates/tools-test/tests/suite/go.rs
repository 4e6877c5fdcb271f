//! go test, really run: `go test -json` read, `file::Test` ids, build errors counted.

use serde_json::json;

use super::{run_args, workspace};

const GO_MOD: &str = "module example.com/calc\n\ngo 1.19\n";
const CALC: &str = "package mathx\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a + b }\n";
const CALC_TEST: &str = "package mathx

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

#[tokio::test]
async fn output_past_the_cap_stops_the_run_and_says_the_counts_are_partial() {
    if tools_core::testing::require_binary("go", "go").is_none() {
        return;
    }
    let loud = "package loud

import (
\t\"fmt\"
\t\"testing\"
\t\"time\"
)

func TestA(t *testing.T) {}

func TestLoud(t *testing.T) {
\tfor i := 0; i < 1000000; i++ {
\t\tfmt.Println(\"line\", i, \"of a test that talks too much\")
\t}
\ttime.Sleep(300 * time.Second)
}
";
    let ws = super::workspace_with(
        &[
            ("go.mod", "module example.com/loud\n\ngo 1.19\n"),
            ("loud_test.go", loud),
        ],
        true,
        "[test]\nmax_output_bytes = 200000\n",
    );
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "1 passed, 0 failed, 0 skipped in T s — go test (the output passed the 200000-byte cap and the run was stopped: the counts are partial)"
    );
    ws.close().await;
}
