//! A TypeScript monorepo of two packages and a test project, each with its own
//! `tsconfig.json` (project references): the very first call of a run sees every project, and
//! a rename reaches every project and leaves `tsc -b` green.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

fn tools_present() -> bool {
    require_binary("typescript-language-server", "typescript-language-server").is_some()
        && require_binary("typescript", "tsc").is_some()
}

/// `tsc -b` over the whole monorepo: its output when it fails.
fn tsc_build(p: &Project) -> Result<(), String> {
    let tsc = tools_core::testing::which("tsc").unwrap();
    let out = std::process::Command::new(tsc)
        .args(["-b", "--pretty", "false"])
        .current_dir(p.root())
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

#[tokio::test]
async fn a_workspace_symbol_search_as_the_first_call_covers_every_project() {
    if !tools_present() {
        return;
    }
    let p = Project::from_fixture("ts_monorepo", CONFIG);
    let out = p
        .ok(json!({"action": "symbols", "query": "describeArea"}))
        .await;
    // The package manifests and configurations are JSON, whose server has no workspace
    // symbol search: it is not started for one.
    assert_eq!(
        out,
        "1 workspace symbol(s) match `describeArea`:\nfunction describeArea  packages/app/src/main.ts:3:1"
    );
    let out = p
        .ok(json!({"action": "symbols", "query": "negativeSideThrows"}))
        .await;
    assert_eq!(
        out,
        "1 workspace symbol(s) match `negativeSideThrows`:\nfunction negativeSideThrows  test/errors.test.ts:4:1"
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn a_rename_reaches_every_project_and_leaves_the_build_green() {
    if !tools_present() {
        return;
    }
    let p = Project::from_fixture("ts_monorepo", CONFIG);
    tsc_build(&p).unwrap();
    let (out, _) = p
        .rename_checked(
            json!({"file": "packages/core/src/errors.ts", "line": 2, "symbol": "ShapeError",
                   "new_name": "BadShapeError"}),
        )
        .await;
    // The edits, with or without the line saying the check goes on.
    assert_eq!(
        out.text
            .lines()
            .filter(|l| !l.starts_with("the check goes on: "))
            .take(5)
            .collect::<Vec<_>>(),
        [
            "renamed `ShapeError` at packages/core/src/errors.ts:2 to `BadShapeError`: 8 edit(s) in 4 file(s)",
            "  packages/app/src/main.ts: 2 edit(s)",
            "  packages/core/src/errors.ts: 1 edit(s)",
            "  packages/core/src/index.ts: 3 edit(s)",
            "  test/errors.test.ts: 2 edit(s)",
        ],
        "{}",
        out.full_text()
    );
    assert_eq!(
        p.read("packages/core/src/index.ts")
            .lines()
            .take(3)
            .collect::<Vec<_>>(),
        [
            "import { BadShapeError } from \"./errors\";",
            "",
            "export { BadShapeError };"
        ]
    );
    for (file, line) in [("packages/app/src/main.ts", 1), ("test/errors.test.ts", 1)] {
        let text = p.read(file);
        assert!(
            text.lines()
                .nth(line - 1)
                .unwrap()
                .starts_with("import { BadShapeError, checkedArea }"),
            "{file}:\n{text}"
        );
        assert!(!text.contains("ShapeError,") || text.contains("BadShapeError,"));
    }
    tsc_build(&p).unwrap();
    p.close_and_check().await;
}
