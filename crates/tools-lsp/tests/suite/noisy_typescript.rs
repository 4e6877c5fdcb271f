//! A TypeScript library that already has errors, whose tests form a second project
//! (`test/tsconfig.json`, stricter): an error in `src/legacy.ts`, an implicit `any` on a
//! global (TS7017) and an unused local in the tests. What a write, a preview or a rename
//! reports is held against `tsc` over both projects before and after it: every error it
//! adds is named, none it had before is.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::json;
use tools_core::testing::require_binary;

use super::noisy_python::listed;
use super::{Project, section, started_by_the_first_call};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const TOTAL: &str = "src/total.ts";

/// `tsc --noEmit` over the library and its test project, as the lines a write's result
/// prints (`path:line:col error [code] message`), both projects' together.
fn tsc_both(root: &Path) -> BTreeSet<String> {
    let tsc = tools_core::testing::which("tsc").unwrap();
    let mut lines = BTreeSet::new();
    // Both projects at once: tsc is slow to start.
    let runs: Vec<std::process::Child> = [".", "test"]
        .iter()
        .map(|project| {
            std::process::Command::new(&tsc)
                .args(["--noEmit", "-p", project])
                .current_dir(root)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        for l in String::from_utf8_lossy(&out.stdout).lines() {
            // src/report.ts(5,22): error TS2554: Expected 2 arguments, but got 1.
            let Some((file, rest)) = l.split_once('(') else {
                continue;
            };
            let Some((at, rest)) = rest.split_once("): ") else {
                continue;
            };
            let Some((severity, rest)) = rest.split_once(" TS") else {
                continue;
            };
            let Some((code, message)) = rest.split_once(": ") else {
                continue;
            };
            let (line, col) = at.split_once(',').unwrap();
            lines.insert(format!("{file}:{line}:{col} {severity} [{code}] {message}"));
        }
    }
    lines
}

/// `line` is one of `text`'s lines, whole.
#[track_caller]
fn has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "expected the line {line:?} in:\n{text}"
    );
}

fn servers_installed() -> bool {
    require_binary("typescript-language-server", "typescript-language-server").is_some()
        && require_binary("typescript", "tsc").is_some()
}

/// What `tsc` reports over both projects before any change (the fixture's warts).
fn warts() -> BTreeSet<String> {
    [
        "src/legacy.ts:2:14 error [2322] Type 'string' is not assignable to type 'number'.",
        "test/browser.ts:2:41 error [7017] Element implicitly has an 'any' type because type 'typeof globalThis' has no index signature.",
        "test/total.test.ts:4:7 error [6133] 'unused' is declared but its value is never read.",
    ]
    .map(String::from)
    .into()
}

/// The file as it is, as broken (`total` takes a second parameter), and what `tsc` adds
/// over both projects when the break is on disk; the file is put back before returning.
fn what_the_break_adds(p: &Project) -> (String, String, BTreeSet<String>) {
    let root = p.root();
    let ok = p.read(TOTAL);
    let broken = ok.replace(
        "export function total(xs: number[]): number {",
        "export function total(xs: number[], scale: number): number {",
    );
    assert_ne!(ok, broken);
    p.write(TOTAL, &broken);
    let after = tsc_both(&root);
    p.write(TOTAL, &ok);
    let before = warts();
    assert!(after.is_superset(&before), "{after:#?}");
    let expected: BTreeSet<String> = after.difference(&before).cloned().collect();
    // Three callers in the library, one in the tests.
    assert_eq!(expected.len(), 4, "{expected:#?}");
    (ok, broken, expected)
}

#[tokio::test]
async fn first_write_during_the_first_analysis_then_ten_break_fix_cycles_name_what_tsc_adds() {
    if !servers_installed() {
        return;
    }
    let p = Project::from_fixture("ts_noisy", &started_by_the_first_call(CONFIG));
    assert_eq!(tsc_both(&p.root()), warts());
    let (ok, broken, expected) = what_the_break_adds(&p);
    // Cycle 0's break is the run's first call: the server starts for it, and the callers
    // in both projects are opened only then.
    for cycle in 0..10 {
        let s = section(p.write_tool(TOTAL, &broken).await);
        assert_eq!(listed(&s), expected, "cycle {cycle} break:\n{s}");
        assert!(
            s.starts_with("4 new diagnostic(s) after this write:"),
            "cycle {cycle} break:\n{s}"
        );
        let s = section(p.write_tool(TOTAL, &ok).await);
        assert!(
            s.starts_with(
                "no new diagnostics after this write.\n4 earlier diagnostic(s) are gone after this write:"
            ),
            "cycle {cycle} fix:\n{s}"
        );
        assert!(!s.contains("Late"), "cycle {cycle} fix:\n{s}");
    }
    assert_eq!(tsc_both(&p.root()), warts());
    p.close_and_check().await;
}

#[tokio::test]
async fn a_preview_after_queries_on_the_callers_predicts_the_break_and_the_write_reports_it() {
    if !servers_installed() {
        return;
    }
    let p = Project::from_fixture("ts_noisy", CONFIG);
    let (ok, broken, expected) = what_the_break_adds(&p);
    // Queries on callers in both projects and on the written file open them.
    for (file, line) in [
        ("src/report.ts", 5),
        ("src/stats.ts", 5),
        ("test/total.test.ts", 6),
        (TOTAL, 2),
    ] {
        p.ok(json!({"action": "hover", "file": file, "line": line, "symbol": "total"}))
            .await;
    }
    p.ok(json!({"action": "references", "file": TOTAL, "line": 2, "symbol": "total"}))
        .await;
    let pv = p.preview(TOTAL, &broken).await;
    assert_eq!(listed(&pv.text), expected, "{}", pv.text);
    assert!(
        pv.text
            .starts_with("predicted: 4 new diagnostic(s) if this change is written:"),
        "{}",
        pv.text
    );
    // The prediction stayed out of the run's ledger: the write reports the same lines.
    let written = p.accept(&pv.id).await.unwrap();
    assert_eq!(listed(&written), expected, "{written}");
    has_line(&written, "4 new diagnostic(s) after this write:");
    // The servers are back on the disk: a preview of the fix predicts them gone.
    let pv = p.preview(TOTAL, &ok).await;
    assert!(
        pv.text.starts_with(
            "predicted: no new diagnostics if this change is written.\npredicted: 4 earlier diagnostic(s) would be gone:\n"
        ),
        "{}",
        pv.text
    );
    p.discard(&pv.id).await;
    p.close_and_check().await;
}

#[tokio::test]
async fn a_rename_across_both_projects_reports_no_pre_existing_error() {
    if !servers_installed() {
        return;
    }
    let p = Project::from_fixture("ts_noisy", &started_by_the_first_call(CONFIG));
    assert_eq!(tsc_both(&p.root()), warts());
    // The rename is the run's first call: the server starts for it.
    // The check may go on after the answer: its findings come with the next call's.
    let (out, text) = p
        .rename_checked(json!({"file": TOTAL, "line": 2, "symbol": "total", "new_name": "sum"}))
        .await;
    has_line(
        &out.text,
        "renamed `total` at src/total.ts:2 to `sum`: 8 edit(s) in 4 file(s)",
    );
    assert_eq!(
        tsc_both(&p.root()),
        warts(),
        "the rename changed no finding"
    );
    assert_eq!(listed(&text), BTreeSet::new(), "{text}");
    p.close_and_check().await;
}
