//! The tests that reach a symbol, followed through pyright's references and the functions
//! around each use, and found by name where the server sees no use (a `getattr`).

use serde_json::json;
use tools_core::Surface;

const FILES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    ),
    (
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    ),
    (
        "ops.py",
        "from calc import sub\n\n\ndef twice_the_gap(a, b):\n    return 2 * sub(a, b)\n",
    ),
    (
        "tests/test_calc.py",
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
    ),
    (
        "tests/test_dynamic.py",
        "import calc\n\n\ndef test_looked_up():\n    assert getattr(calc, \"sub\")(2, 2) == 0\n",
    ),
    (
        "tests/test_ops.py",
        "from ops import twice_the_gap\n\n\ndef test_twice_the_gap():\n    assert twice_the_gap(3, 1) == 4\n",
    ),
];

#[tokio::test]
async fn the_tests_reaching_a_function_include_those_through_its_callers() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = super::with_servers(
        dir.path(),
        FILES,
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n\n[test]\non_write_ms = 60000\non_write_hold_ms = 60000\n",
    );
    let args = json!({"action": "list", "file": "calc.py", "line": 5, "symbol": "sub"});
    let out = registry.call(Surface::FULL, "test", args).await.unwrap();
    assert_eq!(
        out.text,
        "3 tests reach `sub` at calc.py:5 (2 symbols followed through pyright-langserver references; 1 found by name in the tests' text)\n\
         tests/test_calc.py:8 tests/test_calc.py::test_sub\n\
         tests/test_dynamic.py:4 tests/test_dynamic.py::test_looked_up\n\
         tests/test_ops.py:4 tests/test_ops.py::test_twice_the_gap"
    );
    let args = json!({"action": "list", "file": "calc.py", "line": 1, "symbol": "add"});
    let out = registry.call(Surface::FULL, "test", args).await.unwrap();
    assert_eq!(
        out.text,
        "1 test reaches `add` at calc.py:1 (1 symbol followed through pyright-langserver references)\n\
         tests/test_calc.py:4 tests/test_calc.py::test_add"
    );
    // The change since the last commit: `sub` now adds.
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "-m",
        "start",
    ]);
    // The write's own answer names the tests its change reaches (on by default).
    let args =
        json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"});
    let out = registry.call(Surface::FULL, "edit", args).await.unwrap();
    let tests = out.sections.iter().find(|s| s.title == "tests").unwrap();
    assert_eq!(
        tests.body,
        concat!(
            "3 tests reach this change to `sub` (2 symbols followed through pyright-langserver references; 1 found by name in the tests' text); `test run` with `affected: true` runs them\n\
         tests/test_calc.py:8 tests/test_calc.py::test_sub\n\
         tests/test_dynamic.py:4 tests/test_dynamic.py::test_looked_up\n\
         tests/test_ops.py:4 tests/test_ops.py::test_twice_the_gap\n",
            not_recorded!()
        )
    );
    let args = json!({"action": "list", "changed_since": "HEAD"});
    let out = registry.call(Surface::FULL, "test", args).await.unwrap();
    assert_eq!(
        out.text,
        "3 tests reach the change since HEAD (1 function changed: `sub`) (2 symbols followed through pyright-langserver references; 1 found by name in the tests' text)\n\
         tests/test_calc.py:8 tests/test_calc.py::test_sub\n\
         tests/test_dynamic.py:4 tests/test_dynamic.py::test_looked_up\n\
         tests/test_ops.py:4 tests/test_ops.py::test_twice_the_gap"
    );
    if tools_core::testing::require_binary("pytest", "pytest").is_some() {
        let args = json!({"action": "run", "changed_since": "HEAD"});
        let out = registry.call(Surface::FULL, "test", args).await.unwrap();
        assert_eq!(
            super::without_time(&out.text),
            "0 passed, 3 failed, 0 skipped in T s — pytest\n\
             tests/test_calc.py:9 tests/test_calc.py::test_sub — assert 4 == 2\n\
             tests/test_dynamic.py:5 tests/test_dynamic.py::test_looked_up — AssertionError: assert 4 == 0\n\
             tests/test_ops.py:5 tests/test_ops.py::test_twice_the_gap — assert 8 == 4"
        );
    }
    run.close().await;
}

#[tokio::test]
async fn a_changed_value_outside_any_function_is_followed_from_its_name() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = super::with_servers(
        dir.path(),
        &[
            FILES[0],
            (
                "limits.py",
                "LIMIT = 30\n\n\ndef allowed(n):\n    return n <= LIMIT\n",
            ),
            (
                "tests/test_limits.py",
                "from limits import allowed\n\n\ndef test_allowed():\n    assert allowed(30)\n",
            ),
        ],
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n\n[test]\non_write_ms = 60000\non_write_hold_ms = 60000\n",
    );
    let args = json!({"path": "limits.py", "old_string": "LIMIT = 30", "new_string": "LIMIT = 29"});
    let out = registry.call(Surface::FULL, "edit", args).await.unwrap();
    let tests = out.sections.iter().find(|s| s.title == "tests").unwrap();
    assert_eq!(
        tests.body,
        concat!(
            "1 test reaches this change to `LIMIT` (2 symbols followed through pyright-langserver references); `test run` with `affected: true` runs them\n\
         tests/test_limits.py:4 tests/test_limits.py::test_allowed\n",
            not_recorded!()
        )
    );
    run.close().await;
}
