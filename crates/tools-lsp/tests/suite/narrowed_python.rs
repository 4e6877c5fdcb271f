//! A src-layout Python package whose pyright configuration narrows the program to the
//! package (`include = ["src/pkg"]`, as psf/requests does), with tests outside it that
//! import a re-exported name: references as the very first call of a run wait for pyright
//! to know its files; references, renames and a breaking write's result reach the importers
//! outside the program — the tests still run after the rename (checked by running them with
//! the Python here). The tests find the package through `extraPaths`, as pyright's users
//! configure a src layout.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

const IMPL: &str = "def to_native(value: str) -> str:\n    return value.strip()\n";
const UTILS: &str = "# to_native is re-exported here for older callers.\nfrom ._impl import (  # noqa: F401\n    to_native,\n)\n";
const CLIENT: &str =
    "from ._impl import to_native\n\n\ndef clean(v: str) -> str:\n    return to_native(v)\n";
const TEST_UTILS: &str = "from pkg.utils import (\n    to_native,\n)\n\n\ndef test_to_native():\n    assert to_native(\" a \") == \"a\"\n";
const TEST_ALIAS: &str = "from pkg.utils import to_native as native\n\n\ndef test_native():\n    assert native(\" b \") == \"b\"\n";
/// Uses through the module imported whole, as click's tests call its helpers.
const TEST_MODULE: &str = "import pkg.utils\nimport pkg.utils as u\n\n\ndef test_module():\n    assert pkg.utils.to_native(\" c \") == \"c\"\n    assert u.to_native(\" d \") == \"d\"\n";
/// A local function of the same name: not an import of the package's, never renamed.
const TEST_LOCAL: &str =
    "def to_native(v):\n    return v\n\n\ndef test_local():\n    assert to_native(1) == 1\n";

fn project() -> Option<Project> {
    require_binary("pyright", "pyright-langserver")?;
    Some(Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"pkg\"\nversion = \"0\"\n\n[tool.pyright]\ninclude = [\"src/pkg\"]\nextraPaths = [\"src\"]\n",
            ),
            ("src/pkg/__init__.py", ""),
            ("src/pkg/_impl.py", IMPL),
            ("src/pkg/utils.py", UTILS),
            ("src/pkg/client.py", CLIENT),
            ("tests/test_utils.py", TEST_UTILS),
            ("tests/test_alias.py", TEST_ALIAS),
            ("tests/test_local.py", TEST_LOCAL),
            ("tests/test_module.py", TEST_MODULE),
        ],
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n",
    ))
}

#[tokio::test]
async fn the_first_references_of_a_run_cover_the_program_and_the_importers_outside_it() {
    let Some(p) = project() else {
        return;
    };
    let out = p
        .ok(json!({"action": "references", "file": "src/pkg/_impl.py", "line": 1, "symbol": "to_native"}))
        .await;
    assert_eq!(
        out,
        "9 reference(s) of `to_native` at src/pkg/_impl.py:1:\n\
         src/pkg/_impl.py:1:5  def to_native(value: str) -> str:\n\
         src/pkg/client.py:1:20  from ._impl import to_native\n\
         src/pkg/client.py:5:12  return to_native(v)\n\
         src/pkg/utils.py:3:5  to_native,\n\
         tests/test_alias.py:1:23  from pkg.utils import to_native as native\n\
         tests/test_module.py:6:22  assert pkg.utils.to_native(\" c \") == \"c\"\n\
         tests/test_module.py:7:14  assert u.to_native(\" d \") == \"d\"\n\
         tests/test_utils.py:2:5  to_native,\n\
         tests/test_utils.py:7:12  assert to_native(\" a \") == \"a\""
    );
}

#[tokio::test]
async fn a_rename_reaches_the_importers_a_narrowed_program_leaves_out_and_the_tests_still_run() {
    let Some(p) = project() else {
        return;
    };
    let (out, check) = p
        .rename_checked(json!({"file": "src/pkg/_impl.py", "line": 1, "symbol": "to_native", "new_name": "to_text"}))
        .await;
    // The check after writing holds pyright to its references and reports no new
    // diagnostics (the renamed imports resolve: pyright sees the tests through `extraPaths`).
    let lines: Vec<&str> = check.lines().collect();
    assert!(
        lines.contains(&"checked after writing: pyright-langserver links all 4 reference(s) of `to_native` from before to `to_text`"),
        "{check}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.ends_with("new diagnostic(s) after this write:")),
        "{check}"
    );
    let text = out.full_text();
    let listing: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  ") || l.contains(" of those edit(s) "))
        .collect();
    assert_eq!(
        listing,
        [
            "  src/pkg/_impl.py: 1 edit(s)",
            "  src/pkg/client.py: 2 edit(s)",
            "  src/pkg/utils.py: 1 edit(s)",
            "  tests/test_alias.py: 1 edit(s)",
            "  tests/test_module.py: 2 edit(s)",
            "  tests/test_utils.py: 2 edit(s)",
            "5 of those edit(s) are in files the configuration of pyright-langserver leaves out of its program, found through their imports: tests/test_alias.py:1, tests/test_module.py:6, tests/test_module.py:7, tests/test_utils.py:2, tests/test_utils.py:7",
        ],
        "{text}"
    );
    assert_eq!(
        p.read("src/pkg/_impl.py"),
        IMPL.replace("to_native", "to_text")
    );
    // The comment keeps its words: only code is renamed.
    assert_eq!(
        p.read("src/pkg/utils.py"),
        UTILS.replace("    to_native,", "    to_text,")
    );
    assert_eq!(
        p.read("src/pkg/client.py"),
        CLIENT.replace("to_native", "to_text")
    );
    assert_eq!(
        p.read("tests/test_utils.py"),
        TEST_UTILS
            .replace("assert to_native(", "assert to_text(")
            .replace("    to_native,", "    to_text,")
    );
    assert_eq!(
        p.read("tests/test_alias.py"),
        TEST_ALIAS.replace("import to_native as", "import to_text as")
    );
    assert_eq!(
        p.read("tests/test_module.py"),
        TEST_MODULE.replace(".to_native(", ".to_text(")
    );
    assert_eq!(p.read("tests/test_local.py"), TEST_LOCAL);
    // The renamed project still works: each test module imports and its test passes.
    let python = require_binary("python3", "python3").unwrap();
    let run = std::process::Command::new(python)
        .current_dir(p.root())
        .env("PYTHONPATH", "src:tests")
        .args([
            "-c",
            "import test_utils, test_alias, test_local, test_module\n\
             test_utils.test_to_native(); test_alias.test_native(); test_local.test_local()\n\
             test_module.test_module()\n\
             print('ok')",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "ok\n",
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[tokio::test]
async fn a_breaking_write_names_the_callers_the_narrowed_program_leaves_out() {
    let Some(p) = project() else {
        return;
    };
    // pyright's own program holds only `src/pkg`: the callers in the tests are found through
    // their imports and opened, so the break names them as well, and the fix clears them.
    let broken = IMPL.replace("(value: str)", "(value: str, encoding: str)");
    let missing = "error [reportCallIssue] Argument missing for parameter \"encoding\"";
    assert_eq!(
        super::section(p.write_tool("src/pkg/_impl.py", &broken).await),
        format!(
            "5 new diagnostic(s) after this write:\n\
             src/pkg/client.py:5:12 {missing}\n\
             tests/test_alias.py:5:12 {missing}\n\
             tests/test_module.py:6:12 {missing}\n\
             tests/test_module.py:7:12 {missing}\n\
             tests/test_utils.py:7:12 {missing}"
        )
    );
    assert_eq!(
        super::section(p.write_tool("src/pkg/_impl.py", IMPL).await),
        format!(
            "no new diagnostics after this write.\n\
             5 earlier diagnostic(s) are gone after this write:\n  \
             src/pkg/client.py:5 {missing}\n  \
             tests/test_alias.py:5 {missing}\n  \
             tests/test_module.py:6 {missing}\n  \
             tests/test_module.py:7 {missing}\n  \
             tests/test_utils.py:7 {missing}"
        )
    );
}
