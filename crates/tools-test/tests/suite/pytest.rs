//! pytest, really run: counts, failure lines, collection errors, listing and paging.

use serde_json::json;

use super::{run_args, workspace};

const PYPROJECT: &str = "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n";
const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n";
const TESTS: &str = "from calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_sub():\n    result = sub(3, 1)\n    assert result == 2\n\n\nclass TestMore:\n    def test_add_zero(self):\n        assert add(0, 0) == 0\n";
const CONFTEST: &str =
    "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n";

fn python_project() -> super::Ws {
    workspace(&[
        ("pyproject.toml", PYPROJECT),
        ("calc.py", CALC),
        ("tests/conftest.py", CONFTEST),
        ("tests/test_calc.py", TESTS),
    ])
}

#[tokio::test]
async fn a_run_leads_with_the_counts_then_one_line_per_failure() {
    if tools_core::testing::require_binary("pytest", "pytest").is_none() {
        return;
    }
    let ws = python_project();
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "2 passed, 1 failed, 0 skipped in T s — pytest\n\
         tests/test_calc.py:10 tests/test_calc.py::test_sub — assert 4 == 2"
    );
    // A file's tests, and ids, give the same failure.
    let text = ws.ok(run_args(json!({"file": "tests/test_calc.py"}))).await;
    assert_eq!(
        text.lines().next(),
        Some("2 passed, 1 failed, 0 skipped in T s — pytest")
    );
    let text = ws
        .ok(run_args(
            json!({"ids": ["tests/test_calc.py::TestMore::test_add_zero"]}),
        ))
        .await;
    assert_eq!(text, "1 passed, 0 failed, 0 skipped in T s — pytest");
    // A source file runs the tests of the files that import it.
    let text = ws.ok(run_args(json!({"file": "calc.py"}))).await;
    assert_eq!(
        text,
        "2 passed, 1 failed, 0 skipped in T s — pytest\n\
         tests/test_calc.py:10 tests/test_calc.py::test_sub — assert 4 == 2"
    );
    ws.close().await;
}

#[tokio::test]
async fn list_names_each_test_with_its_line_and_node_id() {
    let ws = python_project();
    let text = ws
        .ok(json!({"action": "list", "file": "tests/test_calc.py"}))
        .await;
    assert_eq!(
        text,
        "3 tests for tests/test_calc.py\n\
         tests/test_calc.py:4 tests/test_calc.py::test_add\n\
         tests/test_calc.py:8 tests/test_calc.py::test_sub\n\
         tests/test_calc.py:14 tests/test_calc.py::TestMore::test_add_zero"
    );
    let text = ws.ok(json!({"action": "list", "symbol": "sub"})).await;
    assert_eq!(
        text,
        "1 test that name `sub`\ntests/test_calc.py:8 tests/test_calc.py::test_sub"
    );
    let text = ws
        .ok(json!({"action": "list", "file": "calc.py", "symbol": "add"}))
        .await;
    assert_eq!(
        text,
        "2 tests in calc.py that name `add`\n\
         tests/test_calc.py:4 tests/test_calc.py::test_add\n\
         tests/test_calc.py:14 tests/test_calc.py::TestMore::test_add_zero"
    );
    ws.close().await;
}

#[tokio::test]
async fn a_collection_error_counts_as_a_failure_with_its_exception() {
    if tools_core::testing::require_binary("pytest", "pytest").is_none() {
        return;
    }
    let ws = workspace(&[
        ("pyproject.toml", PYPROJECT),
        ("tests/test_ok.py", "def test_ok():\n    pass\n"),
        (
            "tests/test_broken.py",
            "import no_such_module\n\n\ndef test_never():\n    pass\n",
        ),
    ]);
    let text = ws.ok(run_args(json!({}))).await;
    assert_eq!(
        text,
        "0 passed, 1 failed, 0 skipped in T s — pytest\n\
         tests/test_broken.py:1 tests/test_broken.py — ModuleNotFoundError: No module named 'no_such_module'"
    );
    ws.close().await;
}
