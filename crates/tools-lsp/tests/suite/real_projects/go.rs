//! go-cmp 0.5.9 as Debian packages it (golang-github-google-go-cmp-dev, its Go sources under
//! /usr/share/gocode) through gopls: a definition from compare.go into path.go, a breaking
//! change of a helper that two other files call, and a rename of that helper after which
//! the module's own tests (`go test ./...`, offline) still pass.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{copy_of_folder, definition, has_line, run_in};
use crate::suite::section;

const GO_CMP: &str = "deb:golang-github-google-go-cmp-dev@0.5.9-1";
const MODULE: &str = "usr/share/gocode/src/github.com/google/go-cmp";

/// Waits sized for a whole module's first analysis on a busy two-core machine.
const CONFIG: &str =
    "[lsp]\ndiagnostics_wait_ms = 60000\nindex_wait_ms = 60000\nrequest_timeout_ms = 120000\n";

const PATH_GO: &str = "cmp/path.go";
const HELPER: &str = "func isExported(id string) bool {";

#[tokio::test]
async fn go_cmp_definition_breaking_write_and_rename_keep_its_tests_green() {
    if require_binary("gopls", "gopls").is_none() {
        return;
    }
    let p = copy_of_folder(GO_CMP, MODULE, CONFIG).unwrap_or_else(|e| panic!("{e}"));
    // Navigation: the comparer's use of the helper leads to its definition.
    let out = definition(&p, "cmp/compare.go", 385, "isExported").await;
    has_line(&out, "cmp/path.go:377:6  func isExported(id string) bool {");

    let original = p.read(PATH_GO);
    assert!(
        original.contains(HELPER),
        "go-cmp 0.5.9's {PATH_GO} changed"
    );
    let broken = original.replacen(HELPER, "func isExported(id string, strict bool) bool {", 1);
    // A breaking write: one parameter more; both callers in other files are named, and
    // writing the original back reports them gone.
    let s = section(p.write_tool(PATH_GO, &broken).await);
    has_line(&s, "2 new diagnostic(s) after this write:");
    has_line(
        &s,
        "cmp/compare.go:385:42 error [WrongArgCount] not enough arguments in call to isExported …",
    );
    has_line(
        &s,
        "cmp/report_reflect.go:202:46 error [WrongArgCount] not enough arguments in call to isExported …",
    );
    let s = section(p.write_tool(PATH_GO, &original).await);
    has_line(
        &s,
        "  cmp/compare.go:385 error [WrongArgCount] not enough arguments in call to isExported …",
    );
    has_line(
        &s,
        "  cmp/report_reflect.go:202 error [WrongArgCount] not enough arguments in call to isExported …",
    );

    // The check may go on after the answer: its findings come with the next call's.
    let (_, text) = p.rename_checked(json!({"file": PATH_GO, "line": 377, "symbol": "isExported", "new_name": "isPublicName"})).await;
    // A rename across three files; then the module's own tests.
    has_line(
        &text,
        "renamed `isExported` at cmp/path.go:377 to `isPublicName`: 4 edit(s) in 3 file(s)",
    );
    let tests = run_in(
        &p,
        "go",
        &["test", "./..."],
        // Nothing to download: go-cmp needs only the standard library.
        &[("GOPROXY", "off"), ("GOFLAGS", "-mod=mod")],
    )
    .unwrap_or_else(|e| panic!("go-cmp's tests after the rename: {e}"));
    let passed: Vec<&str> = tests
        .lines()
        .filter_map(|l| l.strip_prefix("ok  \t"))
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(
        passed,
        [
            "github.com/google/go-cmp/cmp",
            "github.com/google/go-cmp/cmp/cmpopts",
            "github.com/google/go-cmp/cmp/internal/diff",
            "github.com/google/go-cmp/cmp/internal/function",
            "github.com/google/go-cmp/cmp/internal/value",
        ],
        "go-cmp's tests after the rename: {tests}"
    );
    p.close_and_check().await;
}
