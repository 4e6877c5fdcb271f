//! rust-analyzer's own related tests (`rust-analyzer/relatedTests`) beside the walk through
//! its references: the test calling a function directly is named by the server, the one
//! reaching it through another function by the walk.

use serde_json::json;
use tools_core::Surface;

const FILES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    ),
    (
        "src/lib.rs",
        "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\npub fn quadruple(x: i32) -> i32 {\n    double(double(x))\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn doubles() {\n        assert_eq!(double(2), 4);\n    }\n\n    #[test]\n    fn quadruples() {\n        assert_eq!(quadruple(1), 4);\n    }\n}\n",
    ),
];

#[tokio::test]
async fn rust_analyzers_related_tests_and_the_walk_name_every_reaching_test() {
    if tools_core::testing::require_binary("rust-analyzer", "rust-analyzer").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = super::with_servers(dir.path(), FILES, "[lsp]\nindex_wait_ms = 120000\n");
    let args = json!({"action": "list", "file": "src/lib.rs", "line": 1, "symbol": "double"});
    let out = registry.call(Surface::FULL, "test", args).await.unwrap();
    assert_eq!(
        out.text,
        "2 tests reach `double` at src/lib.rs:1 (2 symbols followed through rust-analyzer references; 1 named by the server's own related tests)\n\
         src/lib.rs:14 tests::doubles\n\
         src/lib.rs:19 tests::quadruples"
    );
    run.close().await;
}

/// A workspace whose root is a package of its own, with a member crate.
const WORKSPACE: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\nmembers = [\"crates/calc\"]\n",
    ),
    ("src/lib.rs", "pub fn app() {}\n"),
    (
        "crates/calc/Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    ),
    (
        "crates/calc/src/lib.rs",
        "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn doubles() {\n        assert_eq!(double(2), 4);\n    }\n}\n",
    ),
];

#[tokio::test]
async fn affected_tests_of_a_member_crate_run_in_that_crate() {
    if tools_core::testing::require_binary("rust-analyzer", "rust-analyzer").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = super::with_servers(
        dir.path(),
        WORKSPACE,
        "[lsp]\nindex_wait_ms = 120000\n\n[test]\ncargo = \"test\"\non_write_ms = 120000\non_write_hold_ms = 120000\n",
    );
    let args =
        json!({"path": "crates/calc/src/lib.rs", "old_string": "x * 2", "new_string": "x * 3"});
    let out = registry.call(Surface::FULL, "edit", args).await.unwrap();
    let tests = out.sections.iter().find(|s| s.title == "tests").unwrap();
    assert_eq!(
        tests.body,
        "1 test reaches this change to `double` (1 symbol followed through rust-analyzer references; 1 named by the server's own related tests); `test run` with `affected: true` runs them\n\
         crates/calc/src/lib.rs:10 tests::doubles"
    );
    let args = json!({"action": "run", "affected": true});
    let out = registry.call(Surface::FULL, "test", args).await.unwrap();
    assert_eq!(
        super::without_time(&out.text),
        "0 passed, 1 failed, 0 skipped in T s — cargo test\n\
         crates/calc/src/lib.rs:11 tests::doubles — assertion `left == right` failed / left: 6 / right: 4"
    );
    run.close().await;
}
