//! The tests an earlier `test run` saw running what a write changed: a function reached
//! only through a table of commands filled by a decorator (no use a language server resolves, no name in the
//! tests' text) is named once a run has recorded it, and still after a second write moved
//! its lines. pyright answers the uses, pytest runs the tests with the recorder.

use std::sync::Arc;

use serde_json::json;
use tools_core::{Registry, Run};

use super::{call, tests_section};

const FILES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"cli\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    ),
    (
        "cli.py",
        "COMMANDS = {}\n\n\ndef command(name):\n    def register(f):\n        COMMANDS[name] = f\n        return f\n\n    return register\n\n\n@command(\"greet\")\ndef banner():\n    return \"hello\"\n\n\n@command(\"leave\")\ndef farewell():\n    return \"bye\"\n\n\ndef invoke(name):\n    return COMMANDS[name]()\n",
    ),
    (
        "tests/test_cli.py",
        "import pytest\n\nfrom cli import invoke\n\n\n@pytest.mark.parametrize(\"n\", [1, 2])\ndef test_greet(n):\n    assert invoke(\"greet\") * n == \"hello\" * n\n\n\ndef test_leave():\n    assert invoke(\"leave\") == \"bye\"\n",
    ),
];

/// `files` in `dir`, with pyright and walks that wait as long as they need.
fn registry(dir: &std::path::Path, files: &[(&str, &str)]) -> (Arc<Run>, Arc<Registry>) {
    super::with_servers(
        dir,
        files,
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n\n[test]\non_write_ms = 60000\non_write_hold_ms = 60000\n",
    )
}

#[tokio::test]
async fn a_function_reached_only_at_run_time_is_named_once_a_run_recorded_it() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none()
        || tools_core::testing::require_binary("pytest", "pytest").is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = registry(dir.path(), FILES);

    // Before any run: the static walk finds nothing, and the answer says what would.
    let args =
        json!({"path": "cli.py", "old_string": "return \"bye\"", "new_string": "return \"ciao\""});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        concat!(
            "no test reaches this change to `farewell`: the search was complete (1 symbol followed through pyright-langserver references)\n",
            not_recorded!()
        )
    );

    // The whole suite, recorded while it runs.
    let out = call(&registry, "test", json!({"action": "run"})).await;
    assert_eq!(
        super::without_time(&out.text),
        "2 passed, 1 failed, 0 skipped in T s — pytest\n\
         tests/test_cli.py:12 tests/test_cli.py::test_leave — AssertionError: assert 'ciao' == 'bye'"
    );

    // `banner` is reached only through `COMMANDS`: the recording names its test, once for
    // both parameters.
    let args =
        json!({"path": "cli.py", "old_string": "return \"hello\"", "new_string": "return \"hi\""});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        "1 test reaches this change to `banner` (1 symbol followed through pyright-langserver references; 1 known from what each test ran in an earlier `test run`); `test run` with `affected: true` runs them\n\
         tests/test_cli.py:7 tests/test_cli.py::test_greet"
    );
    assert_eq!(
        super::run_affected(&registry).await,
        "0 passed, 2 failed, 0 skipped in T s — pytest\n\
         tests/test_cli.py:8 tests/test_cli.py::test_greet[1] — AssertionError: assert 'hi' == 'hello'\n\
         tests/test_cli.py:8 tests/test_cli.py::test_greet[2] — AssertionError: assert 'hihi' == 'hellohello'"
    );

    // Lines added above it move `banner`; the recorded lines moved with the write, so the
    // next change to it is still matched by line.
    let args = json!({"path": "cli.py", "old_string": "def banner():\n", "new_string": "# The greeting.\n\n\ndef banner():\n"});
    call(&registry, "edit", args).await;
    let args =
        json!({"path": "cli.py", "old_string": "return \"hi\"", "new_string": "return \"hey\""});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        "1 test reaches this change to `banner` (1 symbol followed through pyright-langserver references; 1 known from what each test ran in an earlier `test run`); `test run` with `affected: true` runs them\n\
         tests/test_cli.py:7 tests/test_cli.py::test_greet"
    );

    // A file changed outside the run: its recorded lines no longer hold, so the changed
    // function is matched by name.
    let cli = dir.path().join("cli.py");
    let text = std::fs::read_to_string(&cli).unwrap();
    std::fs::write(&cli, format!("\n\n{text}")).unwrap();
    let args =
        json!({"path": "cli.py", "old_string": "return \"hey\"", "new_string": "return \"yo\""});
    let out = call(&registry, "edit", args).await;
    assert_eq!(
        tests_section(&out),
        "1 test reaches this change to `banner` (1 symbol followed through pyright-langserver references; 1 known from what each test ran in an earlier `test run`); `test run` with `affected: true` runs them\n\
         tests/test_cli.py:7 tests/test_cli.py::test_greet"
    );

    // `list` follows a function the same way.
    let args = json!({"action": "list", "file": "cli.py", "line": 18, "symbol": "banner"});
    let out = call(&registry, "test", args).await;
    assert_eq!(
        out.text,
        "1 test reaches `banner` at cli.py:18 (1 symbol followed through pyright-langserver references; 1 known from what each test ran in an earlier `test run`)\n\
         tests/test_cli.py:7 tests/test_cli.py::test_greet"
    );

    // What was recorded is kept in the run's state folder, never in the checkout.
    let kept = run.state_dir().unwrap().join("test").join("recorded.json");
    assert!(kept.is_file(), "{kept:?}");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["agent-tools.toml", "cli.py", "pyproject.toml", "tests"]
    );
    run.close().await;
}

const VITEST_FILES: &[(&str, &str)] = &[
    (
        "package.json",
        "{\"name\": \"cli\", \"type\": \"module\", \"devDependencies\": {\"vitest\": \"3\", \"typescript\": \"5\"}}\n",
    ),
    (
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2022\", \"module\": \"esnext\", \"moduleResolution\": \"bundler\"}}\n",
    ),
    (
        "src/cli.ts",
        "class Commands {\n  greet(): string {\n    return \"hello\";\n  }\n\n  leave(): string {\n    return \"bye\";\n  }\n}\n\nexport function invoke(line: string): string {\n  const [, name] = line.split(\" \");\n  const commands = new Commands() as unknown as Record<string, () => string>;\n  return commands[name]();\n}\n",
    ),
    (
        "test/cli.test.ts",
        "import { describe, expect, it } from \"vitest\";\n\nimport { invoke } from \"../src/cli\";\n\ndescribe(\"cli\", () => {\n  it(\"greets\", () => {\n    expect(invoke(\"run greet\")).toBe(\"hello\");\n  });\n\n  it(\"greets twice\", () => {\n    expect(invoke(\"run greet\").repeat(2)).toBe(\"hellohello\");\n  });\n});\n",
    ),
    (
        "test/leave.test.ts",
        "import { expect, it } from \"vitest\";\n\nimport { invoke } from \"../src/cli\";\n\nit(\"leaves\", () => {\n  expect(invoke(\"run leave\")).toBe(\"bye\");\n});\n",
    ),
];

/// vitest records per test file: a method reached only through a lookup by a name the
/// tests never spell is named, with each test of the files that ran it, once a run recorded
/// them. typescript-language-server answers the uses, vitest runs with the recorder.
#[tokio::test]
async fn a_method_reached_only_at_run_time_is_named_with_its_test_files_tests_once_vitest_recorded_them()
 {
    let Some(vitest) = tools_core::testing::require_binary("vitest", "vitest") else {
        return;
    };
    if tools_core::testing::require_binary(
        "typescript-language-server",
        "typescript-language-server",
    )
    .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    super::link_node_modules(&vitest, dir.path());
    let (run, registry) = super::with_servers(
        dir.path(),
        VITEST_FILES,
        "[test]\non_write_ms = 60000\non_write_hold_ms = 60000\n",
    );

    let edit =
        |from: &str, to: &str| json!({"path": "src/cli.ts", "old_string": from, "new_string": to});
    let out = call(&registry, "edit", edit("return \"bye\"", "return \"ciao\"")).await;
    assert_eq!(
        tests_section(&out),
        concat!(
            "no test reaches this change to `leave`: the search was complete (1 symbol followed through typescript-language-server references)\n",
            not_recorded!()
        )
    );

    let out = call(&registry, "test", json!({"action": "run"})).await;
    assert_eq!(
        super::without_time(&out.text),
        "2 passed, 1 failed, 0 skipped in T s — vitest\n\
         test/leave.test.ts:6 test/leave.test.ts::leaves — AssertionError: expected 'ciao' to be 'bye' // Object.is equality"
    );

    // `greet` ran only in `test/cli.test.ts`: both its tests are named, not `leaves`.
    let out = call(&registry, "edit", edit("return \"hello\"", "return \"hi\"")).await;
    assert_eq!(
        tests_section(&out),
        "2 tests reach this change to `greet` (1 symbol followed through typescript-language-server references; 2 known from what each test ran in an earlier `test run`); `test run` with `affected: true` runs them\n\
         test/cli.test.ts:6 test/cli.test.ts::cli > greets\n\
         test/cli.test.ts:10 test/cli.test.ts::cli > greets twice"
    );
    assert_eq!(
        super::run_affected(&registry).await,
        "0 passed, 2 failed, 0 skipped in T s — vitest\n\
         test/cli.test.ts:7 test/cli.test.ts::cli > greets — AssertionError: expected 'hi' to be 'hello' // Object.is equality\n\
         test/cli.test.ts:11 test/cli.test.ts::cli > greets twice — AssertionError: expected 'hihi' to be 'hellohello' // Object.is equality"
    );

    // Nothing of the recording is left in the checkout.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "agent-tools.toml",
            "node_modules",
            "package.json",
            "src",
            "test",
            "tsconfig.json"
        ]
    );
    run.close().await;
}

const VALUES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"people\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    ),
    (
        "people.py",
        "PUNCTUATION = \"!\"\nFAREWELL = \"bye\"\n\n\nclass Greeter:\n    def __init__(self):\n        self.mark = PUNCTUATION\n\n    def greet(self, name):\n        return name + self.mark\n\n\nclass Leaver:\n    def __init__(self):\n        self.word = FAREWELL\n\n    def leave(self):\n        return self.word\n\n\ndef make_greeter():\n    return Greeter()\n\n\ndef make(kind):\n    return globals()[kind.capitalize()]()\n",
    ),
    (
        "tests/test_people.py",
        "from people import make, make_greeter\n\n\ndef test_greet():\n    assert make_greeter().greet(\"ann\") == \"ann!\"\n\n\ndef test_leave():\n    assert make(\"leaver\").leave() == \"bye\"\n",
    ),
];

/// A changed value is followed to the functions using it: a constructor is called through
/// its class's name, which the walk then follows; and what each test ran, once recorded,
/// leads from those functions to the tests a static walk cannot see (a class made from its
/// name at run time).
#[tokio::test]
async fn a_changed_value_reaches_the_tests_of_the_constructors_using_it() {
    if tools_core::testing::require_binary("pyright", "pyright-langserver").is_none()
        || tools_core::testing::require_binary("pytest", "pytest").is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (run, registry) = registry(dir.path(), VALUES);
    let edit =
        |from: &str, to: &str| json!({"path": "people.py", "old_string": from, "new_string": to});

    let out = call(
        &registry,
        "edit",
        edit("PUNCTUATION = \"!\"", "PUNCTUATION = \"?\""),
    )
    .await;
    assert_eq!(
        tests_section(&out),
        concat!(
            "1 test reaches this change to `PUNCTUATION` (4 symbols followed through pyright-langserver references); `test run` with `affected: true` runs them\n",
            "tests/test_people.py:4 tests/test_people.py::test_greet\n",
            not_recorded!()
        )
    );

    let out = call(&registry, "test", json!({"action": "run"})).await;
    assert_eq!(
        super::without_time(&out.text),
        "1 passed, 1 failed, 0 skipped in T s — pytest\n\
         tests/test_people.py:5 tests/test_people.py::test_greet — AssertionError: assert 'ann?' == 'ann!'"
    );

    let out = call(
        &registry,
        "edit",
        edit("FAREWELL = \"bye\"", "FAREWELL = \"ciao\""),
    )
    .await;
    assert_eq!(
        tests_section(&out),
        "1 test reaches this change to `FAREWELL` (3 symbols followed through pyright-langserver references; 1 known from what each test ran in an earlier `test run`); `test run` with `affected: true` runs them\n\
         tests/test_people.py:8 tests/test_people.py::test_leave"
    );
    run.close().await;
}
