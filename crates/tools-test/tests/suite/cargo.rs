//! cargo test and nextest, really run: libtest names as ids, panics as messages, build
//! errors counted.

use serde_json::json;

use super::{run_args, workspace_with};

const MANIFEST: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }

    #[test]
    fn subtracts() {
        assert_eq!(sub(3, 1), 2);
    }

    #[test]
    #[ignore]
    fn slow() {}
}
";

#[tokio::test]
async fn cargo_test_failures_name_the_panic_and_its_line() {
    if tools_core::testing::require_binary("cargo", "cargo").is_none() {
        return;
    }
    let ws = calc_crate("test");
    let text = ws.ok(json!({"action": "list", "file": "src/lib.rs"})).await;
    assert_eq!(
        text,
        "3 tests for src/lib.rs\n\
         src/lib.rs:14 tests::adds\n\
         src/lib.rs:19 tests::subtracts\n\
         src/lib.rs:25 tests::slow"
    );
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "1 passed, 2 failed, 1 skipped in T s — cargo test\n\
         src/lib.rs:20 tests::subtracts — assertion `left == right` failed / left: 4 / right: 2\n\
         tests/api.rs:3 from_outside — two and two"
    );
    let text = ws.ok(run_args(json!({"ids": ["tests::adds"]}))).await;
    assert_eq!(text, "1 passed, 0 failed, 0 skipped in T s — cargo test");
    let err = ws.err(run_args(json!({"ids": ["tests::nope"]}))).await;
    assert_eq!(
        err,
        "invalid arguments (`ids`): cargo test ran no test for `tests::nope`: no such test (`list` with the file shows its ids)"
    );
    let text = ws.ok(run_args(json!({"file": "tests/api.rs"}))).await;
    assert_eq!(
        text,
        "0 passed, 1 failed, 0 skipped in T s — cargo test\n\
         tests/api.rs:3 from_outside — two and two"
    );
    // A build error runs no test: it is the failure.
    std::fs::write(
        ws.root().join("src/lib.rs"),
        LIB.replace("    a + b\n}\n\npub fn sub", "    a + c\n}\n\npub fn sub"),
    )
    .unwrap();
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "0 passed, 1 failed, 0 skipped in T s — cargo test\n\
         src/lib.rs:2 (build) — error[E0425]: cannot find value `c` in this scope"
    );
    ws.close().await;
}

fn calc_crate(runner: &str) -> super::Ws {
    workspace_with(
        &[
            ("Cargo.toml", MANIFEST),
            ("src/lib.rs", LIB),
            (
                "tests/api.rs",
                "#[test]\nfn from_outside() {\n    assert!(calc::add(2, 2) == 5, \"two and two\");\n}\n",
            ),
        ],
        true,
        &format!("[test]\ncargo = \"{runner}\"\n"),
    )
}

#[tokio::test]
async fn nextest_answers_as_cargo_test_does() {
    if tools_core::testing::which("cargo-nextest").is_none() {
        tools_core::testing::skipped_optional("cargo-nextest", "`cargo-nextest` is not on PATH");
        return;
    }
    tools_core::testing::exercised("cargo-nextest");
    let ws = calc_crate("nextest");
    let text = ws.ok(run_args(json!({}))).await;
    let mut lines: Vec<&str> = text.lines().collect();
    // nextest runs test binaries in parallel: failures come in the order they end.
    lines[1..].sort();
    assert_eq!(
        lines,
        vec![
            "1 passed, 2 failed, 1 skipped in T s — cargo nextest",
            "src/lib.rs:20 tests::subtracts — assertion `left == right` failed / left: 4 / right: 2",
            "tests/api.rs:3 from_outside — two and two",
        ]
    );
    let text = ws.ok(run_args(json!({"ids": ["tests::adds"]}))).await;
    assert_eq!(text, "1 passed, 0 failed, 0 skipped in T s — cargo nextest");
    // An id nextest's filter matches nowhere is no such test, not a failed build.
    let err = ws.err(run_args(json!({"ids": ["tests::nowhere"]}))).await;
    assert_eq!(
        err,
        "invalid arguments (`ids`): cargo nextest ran no test for `tests::nowhere`: no such test (`list` with the file shows its ids); it said: error: no tests to run"
    );
    ws.close().await;
}
