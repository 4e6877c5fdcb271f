//! A src-layout Python package with tests, through pyright: a write that breaks callers in
//! files nobody opened reports their errors in its own result, the fix names what is gone,
//! and break/fix cycles each attribute exactly their own change; versions checked out by
//! git outside the tools are current in the next `diagnostics`.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has, section};

const CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

const GEOMETRY: &str = "src/shapes/geometry.py";
const AREA_OK: &str = "def area(r: Rect) -> int:";
const AREA_BROKEN: &str = "def area(r: Rect, scale: int) -> int:";

#[tokio::test]
async fn pyright_attributes_breakage_in_unopened_callers_to_the_write() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", CONFIG);
    let ok = p.read(GEOMETRY);
    let broken = ok.replace(AREA_OK, AREA_BROKEN);
    // Start the server on the file about to be edited (nothing else is opened).
    let out = p
        .ok(json!({"action": "diagnostics", "file": GEOMETRY}))
        .await;
    has(&out, "no diagnostics");
    // Break: the callers in report.py and the test file (never opened) are named.
    let s = section(p.write_tool(GEOMETRY, &broken).await);
    has(&s, "new diagnostic(s) after this write");
    has(&s, "src/shapes/report.py:");
    has(&s, "tests/test_geometry.py:");
    has(&s, "scale");
    // Fix: nothing new, and the earlier ones are named as gone.
    let s = section(p.write_tool(GEOMETRY, &ok).await);
    assert!(!s.contains("new diagnostic(s)"), "{s}");
    has(&s, "earlier diagnostic(s) are gone");
    has(&s, "src/shapes/report.py:");
    // Ten break/fix cycles: each result holds exactly its own change.
    for i in 0..10 {
        let s = section(p.write_tool(GEOMETRY, &broken).await);
        has(&s, "new diagnostic(s) after this write");
        has(&s, "tests/test_geometry.py:");
        assert!(!s.contains("are gone"), "cycle {i} break: {s}");
        assert!(!s.contains("pending"), "cycle {i} break: {s}");
        let s = section(p.write_tool(GEOMETRY, &ok).await);
        assert!(!s.contains("new diagnostic(s)"), "cycle {i} fix: {s}");
        has(&s, "are gone");
        assert!(!s.contains("Late"), "cycle {i} fix: {s}");
    }
    // Versions checked out by git, outside the tools: each `diagnostics` is current.
    git(&p, &["init", "-q"]);
    git(&p, &["add", "-A"]);
    git(&p, &["commit", "-q", "-m", "ok"]);
    p.write(GEOMETRY, &broken);
    git(&p, &["commit", "-q", "-am", "broken"]);
    let out = p
        .ok(json!({"action": "diagnostics", "file": "src/shapes/report.py"}))
        .await;
    has(&out, "src/shapes/report.py:8:");
    has(&out, "scale");
    git(&p, &["checkout", "-q", "HEAD~1", "--", GEOMETRY]);
    let out = p
        .ok(json!({"action": "diagnostics", "file": "src/shapes/report.py"}))
        .await;
    has(&out, "no diagnostics");
    git(&p, &["checkout", "-q", "HEAD", "--", GEOMETRY]);
    let out = p
        .ok(json!({"action": "diagnostics", "file": "tests/test_geometry.py"}))
        .await;
    has(&out, "tests/test_geometry.py:5:");

    // A rename of the widely used `area`: every importer, the test and the aliased import
    // follow; no phantom diagnostic; the package and its test still run.
    p.write(GEOMETRY, &ok);
    let out = p.rename_cleanly(GEOMETRY, 14, "area", "compute_area").await;
    has(&out.text, "tests/test_geometry.py");
    has(&out.text, "src/shapes/units.py");
    has(
        &p.read("src/shapes/units.py"),
        "import compute_area as surface_of",
    );
    let run = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; sys.path[:0] = ['src', 'tests']; import test_geometry, shapes.units, shapes.report; \
             test_geometry.test_unit_square(); print(shapes.units.unit_area())",
        ])
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "1");
    p.close_and_check().await;
}

fn git(p: &Project, args: &[&str]) {
    let st = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}
