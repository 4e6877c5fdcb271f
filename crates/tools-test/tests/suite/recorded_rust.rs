//! A Cargo workspace's tests recorded with LLVM's coverage under cargo-nextest: the
//! integration tests that run the package's binary (made by a macro, so no `fn` names
//! them) reach a private helper of a member crate that no reference leads a test to, and
//! they are named once a run recorded them. rust-analyzer answers the uses, nextest runs
//! the instrumented tests, rustup's llvm-tools read their profiles.

use serde_json::json;

use super::{call, tests_section};

const FILES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "[package]\nname = \"greet\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntext = { path = \"crates/text\" }\n\n[workspace]\nmembers = [\"crates/text\"]\n",
    ),
    (
        "src/main.rs",
        "fn main() {\n    let name = std::env::args().nth(1).unwrap_or_default();\n    println!(\"{}\", text::shout(&name));\n}\n",
    ),
    (
        "tests/cli.rs",
        "use std::process::Command;\n\nmacro_rules! greets {\n    ($test:ident, $name:expr, $want:expr) => {\n        #[test]\n        fn $test() {\n            let out = Command::new(env!(\"CARGO_BIN_EXE_greet\")).arg($name).output().unwrap();\n            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), $want);\n        }\n    };\n}\n\ngreets!(greets_ann, \"ann\", \"ANN!\");\ngreets!(greets_bob, \"bob\", \"BOB!\");\n",
    ),
    // A test binary named as the root package's: each test is placed in its own package.
    (
        "crates/text/tests/cli.rs",
        "#[test]\nfn shouts() {\n    assert_eq!(text::shout(\"a\"), \"A!\");\n}\n",
    ),
    (
        "crates/text/Cargo.toml",
        "[package]\nname = \"text\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    ),
    (
        "crates/text/src/lib.rs",
        "/// The greeting for `name`, loud.\npub fn shout(name: &str) -> String {\n    decorate(&name.to_uppercase())\n}\n\nfn decorate(s: &str) -> String {\n    format!(\"{s}!\")\n}\n\npub fn whisper(name: &str) -> String {\n    name.to_lowercase()\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn whispers() {\n        assert_eq!(super::whisper(\"A\"), \"a\");\n    }\n}\n",
    ),
];

/// Whether cargo-nextest and rustup's llvm-tools are here to record with; a skip of either
/// is recorded (llvm-tools' fails under CI, where setup installs them).
fn can_record() -> bool {
    if tools_core::testing::which("cargo-nextest").is_none() {
        tools_core::testing::skipped_optional("cargo-nextest", "`cargo-nextest` is not on PATH");
        return false;
    }
    if !llvm_tools() {
        tools_core::testing::skipped("llvm-tools", "rustup's llvm-tools are not installed");
        return false;
    }
    true
}

/// Whether rustup's llvm-tools are in the active toolchain.
fn llvm_tools() -> bool {
    let Ok(out) = std::process::Command::new("rustc")
        .args(["--print", "target-libdir"])
        .output()
    else {
        return false;
    };
    let libdir = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    libdir
        .parent()
        .is_some_and(|target| target.join("bin").join("llvm-profdata").is_file())
}

#[tokio::test]
async fn integration_tests_running_the_binary_are_named_once_nextest_recorded_them() {
    if !can_record() {
        return;
    }
    if tools_core::testing::require_binary("rust-analyzer", "rust-analyzer").is_none() {
        return;
    }
    tools_core::testing::exercised("cargo-nextest");
    tools_core::testing::exercised("llvm-tools");
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = super::with_servers(
        dir.path(),
        FILES,
        "[lsp]\nindex_wait_ms = 120000\n\n[test]\non_write_ms = 120000\non_write_hold_ms = 120000\n",
    );

    let status = call(&registry, "test", json!({"action": "status"})).await;
    let cargo = tools_core::testing::which("cargo").unwrap();
    assert_eq!(
        status.text.lines().nth(1).unwrap_or_default(),
        format!(
            "rust: cargo nextest for . (Cargo.toml): `{} nextest run` from PATH; records which functions each test runs",
            cargo.display()
        )
    );

    // The whole workspace: the member's two tests, and the two running the binary, recorded.
    let out = call(&registry, "test", json!({"action": "run"})).await;
    assert_eq!(
        super::without_time(&out.text),
        "4 passed, 0 failed, 0 skipped in T s — cargo nextest"
    );

    // `decorate` is private to the member crate: its own integration test calls what calls
    // it, but only what the tests ran leads to the two running the binary.
    let args = json!({"path": "crates/text/src/lib.rs", "old_string": "format!(\"{s}!\")", "new_string": "format!(\"{s}?\")"});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        "3 tests reach this change to `decorate` (3 symbols followed through rust-analyzer references; 2 known from what each test ran in an earlier `test run`); `test run` with `affected: true` runs them\n\
         crates/text/tests/cli.rs:2 shouts\n\
         tests/cli.rs:13 greets_ann\n\
         tests/cli.rs:14 greets_bob"
    );
    let ran = super::run_affected(&registry).await;
    let mut lines: Vec<&str> = ran.lines().collect();
    // nextest runs tests in parallel: failures come in the order they end.
    lines[1..].sort();
    assert_eq!(
        lines,
        [
            "0 passed, 3 failed, 0 skipped in T s — cargo nextest",
            "crates/text/tests/cli.rs:3 shouts — assertion `left == right` failed / left: \"A?\" / right: \"A!\"",
            "tests/cli.rs:13 greets_ann — assertion `left == right` failed / left: \"ANN?\" / right: \"ANN!\"",
            "tests/cli.rs:14 greets_bob — assertion `left == right` failed / left: \"BOB?\" / right: \"BOB!\"",
        ]
    );

    // No profile of the instrumented build is left in the checkout (build scripts and the
    // tests' programs write theirs in the run's state folder).
    let left: Vec<_> = ignore::WalkBuilder::new(dir.path())
        .hidden(false)
        .git_ignore(false)
        .build()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "profraw"))
        .map(|e| e.path().to_path_buf())
        .collect();
    assert_eq!(left, Vec::<std::path::PathBuf>::new());
    run.close().await;
}

/// A project whose cargo configuration sets target rustflags (which replace the
/// `build.rustflags` instrumenting the build): its tests run, nothing is recorded, and the
/// answer says why.
#[tokio::test]
async fn a_run_that_records_nothing_says_why() {
    if !can_record() {
        return;
    }
    let ws = super::workspace_with(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                ".cargo/config.toml",
                "[target.'cfg(all())']\nrustflags = [\"-C\", \"debuginfo=0\"]\n",
            ),
            (
                "src/lib.rs",
                "pub fn one() -> i32 {\n    1\n}\n\n#[test]\nfn is_one() {\n    assert_eq!(one(), 1);\n}\n",
            ),
        ],
        true,
        "",
    );
    let text = ws.ok(super::run_args(json!({}))).await;
    assert_eq!(
        text,
        "1 passed, 0 failed, 0 skipped in T s — cargo nextest\n\
         not recorded (later writes name only the tests a static walk finds): cargo nextest ran the tests but they wrote no coverage profile (a `target.<triple>.rustflags` of the project's cargo configuration replaces the `build.rustflags` that instruments the build)"
    );
    ws.close().await;
}
