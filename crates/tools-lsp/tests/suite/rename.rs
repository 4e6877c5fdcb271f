//! `lsp_rename` through real servers: every use in three files changed and the project
//! still runs / compiles; a refused rename changes nothing; a failure part-way restores
//! every file; the tool is absent on the plan surface.

use std::sync::atomic::Ordering;

use serde_json::json;
use tools_core::testing::require_binary;
use tools_core::{CallError, Surface, ToolError, ToolOutput};

use super::{Project, has};

/// `lsp_rename` of `symbol` at `file:line` to `new_name`.
async fn rename(
    p: &Project,
    file: &str,
    line: u32,
    symbol: &str,
    new_name: &str,
) -> Result<ToolOutput, CallError> {
    p.call(
        "lsp_rename",
        json!({"file": file, "line": line, "symbol": symbol, "new_name": new_name}),
    )
    .await
}

/// Makes the write of the `n`th file of a rename fail (0: none fails).
fn fail_write_number(p: &Project, n: usize) {
    p.run
        .state(tools_lsp::rename::InjectWriteFailure::default)
        .0
        .store(n, Ordering::SeqCst);
}

fn py_project() -> Project {
    Project::new(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"d\"\nversion = \"0\"\n",
            ),
            ("util.py", "def compute(x):\n    return x * 2\n"),
            ("a.py", "from util import compute\n\nA = compute(1)\n"),
            (
                "b.py",
                "import util\n\nB = util.compute(2) + util.compute(3)\n",
            ),
            (
                "main.py",
                "from a import A\nfrom b import B\nfrom util import compute\nprint(A + B + compute(0))\n",
            ),
        ],
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n",
    )
}

fn snapshot(p: &Project, files: &[&str]) -> Vec<String> {
    files.iter().map(|f| p.read(f)).collect()
}

#[tokio::test]
async fn pyright_rename_across_three_files_all_or_nothing() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = py_project();
    let files = ["util.py", "a.py", "b.py", "main.py"];
    // Absent on the plan surface.
    assert!(
        p.reg
            .list(Surface::PLAN)
            .iter()
            .all(|t| t.name != "lsp_rename")
    );
    assert!(matches!(
        p.reg.call(Surface::PLAN, "lsp_rename", json!({})).await,
        Err(CallError::UnknownTool { .. })
    ));
    // A refused rename (not a symbol: a keyword) changes nothing.
    let before = snapshot(&p, &files);
    let e = rename(&p, "util.py", 2, "return", "x").await.unwrap_err();
    assert!(matches!(e, CallError::Tool(ToolError::Rejected(_))), "{e}");
    has(&e.to_string(), "nothing was changed");
    assert_eq!(snapshot(&p, &files), before);
    // An injected failure on the second file leaves every file unchanged.
    fail_write_number(&p, 2);
    let e = rename(&p, "util.py", 1, "compute", "calculate")
        .await
        .unwrap_err();
    has(&e.to_string(), "restored");
    assert_eq!(snapshot(&p, &files), before);
    fail_write_number(&p, 0);
    // The real rename.
    let out = rename(&p, "util.py", 1, "compute", "calculate")
        .await
        .unwrap();
    has(&out.text, "edit(s) in 4 file(s)");
    assert_eq!(out.touched.len(), 4);
    for f in files {
        let t = p.read(f);
        assert!(!t.contains("compute"), "{f}: {t}");
        assert!(t.contains("calculate"), "{f}: {t}");
    }
    // The project still runs.
    let st = std::process::Command::new("python3")
        .arg("main.py")
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&st.stdout).trim(), "12");
    // Queries after the rename see the new text.
    let d = p
        .ok(json!({"action": "definition", "file": "main.py", "line": 4, "symbol": "calculate"}))
        .await;
    has(&d, "util.py:1:5");
    p.close_and_check().await;
}

#[tokio::test]
async fn typescript_rename_across_three_files() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("typescript", "tsc").is_none()
    {
        return;
    }
    let p = Project::new(
        &[
            (
                "package.json",
                "{\"name\": \"d\", \"version\": \"1.0.0\"}\n",
            ),
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true, \"module\": \"commonjs\", \"target\": \"es2020\"}, \"include\": [\"src\"]}\n",
            ),
            (
                "src/util.ts",
                "export function compute(x: number): number {\n  return x * 2;\n}\n",
            ),
            (
                "src/a.ts",
                "import { compute } from './util';\nexport const A = compute(1);\n",
            ),
            (
                "src/b.ts",
                "import * as util from './util';\nexport const B = util.compute(2);\n",
            ),
        ],
        "",
    );
    let out = rename(&p, "src/util.ts", 1, "compute", "calculate")
        .await
        .unwrap();
    has(&out.text, "in 3 file(s)");
    for f in ["src/util.ts", "src/a.ts", "src/b.ts"] {
        let t = p.read(f);
        assert!(!t.contains("compute"), "{f}: {t}");
    }
    // A name the server refuses.
    let before = p.read("src/util.ts");
    let e = rename(&p, "src/util.ts", 2, "2", "x").await.unwrap_err();
    has(&e.to_string(), "nothing was changed");
    assert_eq!(p.read("src/util.ts"), before);
    // The project still compiles.
    let tsc = tools_core::testing::which("tsc").unwrap();
    let st = std::process::Command::new(tsc)
        .args(["--noEmit", "-p", "."])
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stdout)
    );
    p.close_and_check().await;
}
