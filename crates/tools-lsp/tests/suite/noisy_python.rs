//! A Python package that already has errors, as real ones do: 36 modules under strict
//! pyright, a missing optional dependency, untyped helpers in every module. What a write,
//! a preview or a rename reports is held against the pyright CLI's own output over the
//! project before and after it: every error the CLI adds is named, none it had before is.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};
use tools_core::testing::require_binary;

use super::{Project, has, section, started_by_the_first_call};

const CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

/// The module every caller imports.
pub const CORE: &str = "src/ledgerkit/core.py";
/// Its signature as the project has it.
pub const TOTAL_OK: &str = "def total(xs: list[int]) -> int:\n    return sum(xs)\n";
/// The breaking change: one more parameter.
pub const TOTAL_BROKEN: &str =
    "def total(xs: list[int], scale: int) -> int:\n    return sum(xs) * scale\n";
/// A fresh copy of the noisy package (`tests/fixtures/projects/py_noisy`): strict pyright,
/// an optional dependency that is not installed (`msgspec`, imported by every third
/// module), untyped helpers (strict findings) in all 33 numbered modules and in `core.py`
/// itself, and callers of `core.total` in every fourth module, in `use.py` and in the
/// tests. Served by pyright under `config`.
pub fn noisy_project_with(config: &str) -> Project {
    Project::from_fixture("py_noisy", config)
}

/// [`noisy_project_with`] the suite's pyright configuration.
pub fn noisy_project() -> Project {
    noisy_project_with(CONFIG)
}

/// The pyright CLI's errors and warnings over the project, as the lines a write's result
/// prints them (`path:line:col severity [rule] message`).
pub fn pyright_cli(root: &Path) -> BTreeSet<String> {
    let out = std::process::Command::new("pyright")
        .arg("--outputjson")
        .arg("-p")
        .arg(root)
        .current_dir(root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("pyright --outputjson: {e}: {out:?}"));
    let root = std::fs::canonicalize(root).unwrap();
    report["generalDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| matches!(d["severity"].as_str(), Some("error" | "warning")))
        .map(|d| {
            let file = std::fs::canonicalize(d["file"].as_str().unwrap()).unwrap();
            let rel = file.strip_prefix(&root).unwrap().display().to_string();
            let start = &d["range"]["start"];
            let rule = d["rule"]
                .as_str()
                .map(|r| format!(" [{r}]"))
                .unwrap_or_default();
            let msg = d["message"].as_str().unwrap();
            let first = msg.lines().next().unwrap_or("").trim();
            let more = if msg.lines().count() > 1 { " …" } else { "" };
            format!(
                "{rel}:{}:{} {}{rule} {first}{more}",
                start["line"].as_u64().unwrap() + 1,
                start["character"].as_u64().unwrap() + 1,
                d["severity"].as_str().unwrap()
            )
        })
        .collect()
}

/// The diagnostic lines (`path:line:col …`) of a write's or a preview's section, in
/// order, without the late block of an earlier write.
pub fn listed(section: &str) -> BTreeSet<String> {
    section
        .lines()
        .take_while(|l| !l.starts_with("Late diagnostics"))
        .take_while(|l| !l.contains("earlier diagnostic(s)"))
        .map(str::trim)
        .filter(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .map(str::to_string)
        .collect()
}

/// What the CLI reports after and did not before.
fn added(before: &BTreeSet<String>, after: &BTreeSet<String>) -> BTreeSet<String> {
    after.difference(before).cloned().collect()
}

fn broken_core(p: &Project) -> String {
    p.read(CORE).replace(TOTAL_OK, TOTAL_BROKEN)
}

/// The written file's text as it is and as broken, and what pyright's command line adds when
/// the break is on disk; the file is put back before returning, so the run starts from "ok".
fn what_the_break_adds(p: &Project) -> (String, String, BTreeSet<String>) {
    let before = pyright_cli(&p.root());
    let ok = p.read(CORE);
    let broken = broken_core(p);
    p.write(CORE, &broken);
    let expected = added(&before, &pyright_cli(&p.root()));
    p.write(CORE, &ok);
    (ok, broken, expected)
}

#[tokio::test]
async fn first_write_during_the_first_analysis_names_exactly_what_it_broke() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    // Both ways an agent meets a server still busy with its first analysis: a query
    // just before the write, or the write as the first call of the run.
    for query_first in [true, false] {
        let p = noisy_project();
        let before = pyright_cli(&p.root());
        assert!(before.len() > 30, "the fixture has warts: {before:#?}");
        let ok = p.read(CORE);
        if query_first {
            p.ok(json!({"action": "diagnostics", "file": CORE})).await;
        }
        let s = section(p.write_tool(CORE, &broken_core(&p)).await);
        let after = pyright_cli(&p.root());
        let expected = added(&before, &after);
        assert_eq!(expected.len(), 21, "{expected:#?}");
        assert_eq!(listed(&s), expected, "query first: {query_first}\n{s}");
        has(&s, "21 new diagnostic(s) after this write:");
        // The fix takes back exactly those, and calls nothing new.
        let s = section(p.write_tool(CORE, &ok).await);
        assert!(
            s.starts_with("no new diagnostics after this write.\n"),
            "{s}"
        );
        has(&s, "21 earlier diagnostic(s) are gone after this write:");
        assert_eq!(pyright_cli(&p.root()), before);
        p.close_and_check().await;
    }
}

#[tokio::test]
async fn ten_break_fix_cycles_on_a_noisy_package_attribute_exactly() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = noisy_project();
    let (ok, broken, expected) = what_the_break_adds(&p);
    for i in 0..10 {
        let s = section(p.write_tool(CORE, &broken).await);
        assert_eq!(listed(&s), expected, "cycle {i} break:\n{s}");
        assert!(!s.contains("Late"), "cycle {i} break:\n{s}");
        let s = section(p.write_tool(CORE, &ok).await);
        assert!(
            s.starts_with("no new diagnostics after this write.\n"),
            "cycle {i} fix:\n{s}"
        );
        assert!(!s.contains("Late"), "cycle {i} fix:\n{s}");
        has(
            &s,
            &format!("{} earlier diagnostic(s) are gone", expected.len()),
        );
    }
    p.close_and_check().await;
}

/// The break and fix cycles of a run whose pyright starts as the run opens (the default):
/// the break is the run's first call, made at once, while pyright is still on its first
/// check of the package.
#[tokio::test]
async fn first_write_while_pyright_started_with_the_run_checks_then_break_fix_cycles_attribute_exactly()
 {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    // What the break adds is taken on a copy no server watches: the run's own tree is
    // never touched before its first call.
    let probe = noisy_project_with(&started_by_the_first_call(CONFIG));
    let (ok, broken, expected) = what_the_break_adds(&probe);
    probe.close_and_check().await;
    assert_eq!(expected.len(), 21, "{expected:#?}");
    // The break made at once (it reaches the supervisor before the run's start and starts
    // pyright itself), or once the pyright the run's start started is up and checking.
    for up_first in [false, true] {
        let p = noisy_project();
        if up_first {
            p.wait_for_a_server_started_with_the_run().await;
        }
        for i in 0..5 {
            let s = section(p.write_tool(CORE, &broken).await);
            assert_eq!(
                listed(&s),
                expected,
                "up first: {up_first}, cycle {i} break:\n{s}"
            );
            assert!(
                s.starts_with("21 new diagnostic(s) after this write:\n"),
                "up first: {up_first}, cycle {i} break:\n{s}"
            );
            assert!(
                !s.contains("Late"),
                "up first: {up_first}, cycle {i} break:\n{s}"
            );
            let s = section(p.write_tool(CORE, &ok).await);
            assert!(
                s.starts_with("no new diagnostics after this write.\n21 earlier diagnostic(s) are gone after this write:"),
                "up first: {up_first}, cycle {i} fix:\n{s}"
            );
            assert!(
                !s.contains("Late"),
                "up first: {up_first}, cycle {i} fix:\n{s}"
            );
        }
        p.close_and_check().await;
    }
}

/// The late block of a write's section — the earlier write it names, that write's
/// diagnostic lines in it and how many it says are gone — if there is one.
pub fn late_block(section: &str) -> Option<(u64, BTreeSet<String>, usize)> {
    let mut lines = section
        .lines()
        .skip_while(|l| !l.starts_with("Late diagnostics of the earlier write #"));
    let header = lines.next()?;
    let number = header
        .trim_start_matches("Late diagnostics of the earlier write #")
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    let gone = header
        .rsplit(", ")
        .next()?
        .trim_end_matches(" gone.")
        .parse()
        .ok()?;
    let rest: Vec<&str> = lines.collect();
    Some((number, listed(&rest.join("\n")), gone))
}

/// How many earlier diagnostics a write's own result says are gone.
fn own_gone(section: &str) -> usize {
    section
        .lines()
        .take_while(|l| !l.starts_with("Late diagnostics"))
        .find_map(|l| l.strip_suffix(" earlier diagnostic(s) are gone after this write:"))
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test]
async fn ten_break_fix_cycles_past_every_settle_bound_attribute_late_arrivals_to_their_write() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    // Every write's own settle is cut after 1 ms, as on a machine too loaded for its bound:
    // what a write causes arrives late, while the next write — its undoing — is made.
    let config = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 1\nstart_timeout_ms = 60000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
    let p = noisy_project_with(config);
    let (ok, broken, expected) = what_the_break_adds(&p);
    // A query starts the server (a write waits for a server's start no longer than for
    // its diagnostics); the cycles begin once its first analysis is over.
    p.ok(json!({"action": "hover", "file": "src/ledgerkit/use.py", "line": 6, "symbol": "total"}))
        .await;
    p.wait_for_the_first_analysis().await;
    let pending = "diagnostics pending — pyright-langserver had not settled after 1 ms";
    let mut fix_gone = None;
    for i in 0..10u64 {
        let (break_no, fix_no) = (2 * i + 1, 2 * i + 2);
        let b = section(p.write_tool(CORE, &broken).await);
        assert!(b.starts_with(pending), "cycle {i} break:\n{b}");
        // The previous fix's late arrivals add nothing, and take away the rest of the break.
        match (late_block(&b), fix_gone) {
            (Some((n, lines, gone)), Some(own)) => {
                assert_eq!(
                    (n, lines),
                    (fix_no - 2, BTreeSet::new()),
                    "cycle {i} break:\n{b}"
                );
                assert_eq!(own + gone, expected.len(), "cycle {i} break:\n{b}");
            }
            (None, Some(own)) => assert_eq!(own, expected.len(), "cycle {i} break:\n{b}"),
            (late, None) => assert!(late.is_none(), "cycle {i} break:\n{b}"),
        }
        let own = listed(&b);
        let f = section(p.write_tool(CORE, &ok).await);
        assert!(f.starts_with(pending), "cycle {i} fix:\n{f}");
        // The fix is never blamed: what the break caused is named as the break's.
        assert_eq!(listed(&f), BTreeSet::new(), "cycle {i} fix:\n{f}");
        let late = late_block(&f).map(|(n, lines, _)| (n, lines));
        let late_lines = late.clone().map(|(_, l)| l).unwrap_or_default();
        if own.len() < expected.len() {
            assert_eq!(late.map(|(n, _)| n), Some(break_no), "cycle {i} fix:\n{f}");
        }
        assert!(own.is_disjoint(&late_lines), "cycle {i}:\n{b}\n{f}");
        let attributed: BTreeSet<String> = own.union(&late_lines).cloned().collect();
        assert_eq!(attributed, expected, "cycle {i}:\n{b}\n{f}");
        fix_gone = Some(own_gone(&f));
    }
    p.close_and_check().await;
}

#[tokio::test]
async fn a_preview_after_queries_on_the_callers_predicts_the_break_and_the_write_reports_it() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = noisy_project();
    let (ok, broken, expected) = what_the_break_adds(&p);
    // Queries on the caller and the written file open them in the server.
    p.ok(json!({"action": "hover", "file": "src/ledgerkit/use.py", "line": 6, "symbol": "total"}))
        .await;
    p.ok(json!({"action": "hover", "file": CORE, "line": 4, "symbol": "total"}))
        .await;
    let pv = p.preview(CORE, &broken).await;
    assert_eq!(listed(&pv.text), expected, "{}", pv.text);
    has(
        &pv.text,
        &format!(
            "predicted: {} new diagnostic(s) if this change is written:",
            expected.len()
        ),
    );
    // The prediction stayed out of the run's ledger: the write reports the same lines.
    let written = p.accept(&pv.id).await.unwrap();
    assert_eq!(listed(&written), expected, "{written}");
    // The servers are back on the disk: a preview of the fix predicts them gone.
    let pv = p.preview(CORE, &ok).await;
    has(
        &pv.text,
        "predicted: no new diagnostics if this change is written.",
    );
    has(
        &pv.text,
        &format!(
            "predicted: {} earlier diagnostic(s) would be gone:",
            expected.len()
        ),
    );
    p.discard(&pv.id).await;
    p.close_and_check().await;
}

#[tokio::test]
async fn a_first_analysis_cut_short_by_its_bound_says_so_first_and_calls_nothing_old_new() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    // The first analysis of 36 strict modules takes pyright longer than 1 ms.
    let config = "[lsp]\nindex_wait_ms = 1\ndiagnostics_wait_ms = 2\nstart_timeout_ms = 60000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
    let p = noisy_project_with(config);
    let (ok, broken, expected) = what_the_break_adds(&p);

    // A query starts the server; the write follows while its first analysis runs.
    p.ok(json!({"action": "hover", "file": "src/ledgerkit/use.py", "line": 6, "symbol": "total"}))
        .await;
    let s = section(p.write_tool(CORE, &broken).await);
    let first = s.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("first analysis unfinished — pyright-langserver was still on its first analysis of the project after 1 ms"),
        "{s}"
    );
    has(&s, "ask `lsp` action `diagnostics` for a file");
    for line in listed(&s) {
        assert!(expected.contains(&line), "{line} predates the write:\n{s}");
    }
    // Once the analysis is over, the caller's error is there to be asked for (asked
    // again while the answer is not final, or does not show it yet: with bounds this short
    // pyright may answer before it re-checked the caller)…
    let want = "src/ledgerkit/use.py:6:12 error [reportCallIssue] Argument missing for parameter \"scale\"";
    let mut caller = String::new();
    for _ in 0..120 {
        caller = p
            .ok(json!({"action": "diagnostics", "file": "src/ledgerkit/use.py"}))
            .await;
        if caller.contains(want) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    has(&caller, want);
    // …and the next write, the fix, names nothing old as new or as late.
    let s = section(p.write_tool(CORE, &ok).await);
    assert_eq!(listed(&s), BTreeSet::new(), "not the fix's doing:\n{s}");
    assert!(!s.contains("Late diagnostics"), "{s}");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_rename_on_a_noisy_package_reports_no_pre_existing_error() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = noisy_project();
    let before = pyright_cli(&p.root());
    // The rename is the run's first call: the server starts for it.
    // The check may go on after the answer: its findings come with the next call's.
    let (out, text) = p
        .rename_checked(
            json!({"file": CORE, "line": 4, "symbol": "total", "new_name": "grand_total"}),
        )
        .await;
    has(&out.text, "edit(s) in 12 file(s)");
    assert_eq!(
        pyright_cli(&p.root()),
        before,
        "the rename changed no finding"
    );
    assert!(listed(&text).is_empty(), "{text}");
    p.close_and_check().await;
}

/// The two-file package of the report: `core.py` (`def total(xs)`) and `use.py` calling it.
#[tokio::test]
async fn a_preview_after_a_hover_on_the_caller_predicts_the_break_and_the_write_reports_it() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    for trial in 0..2 {
        let p = Project::new(
            &[
                (
                    "pyproject.toml",
                    "[project]\nname = \"pkg\"\nversion = \"0.1.0\"\n",
                ),
                ("pkg/__init__.py", ""),
                ("pkg/core.py", "def total(xs):\n    return sum(xs)\n"),
                (
                    "pkg/use.py",
                    "from pkg.core import total\n\nprint(total([1, 2]))\n",
                ),
            ],
            CONFIG,
        );
        let hover = p
            .ok(json!({"action": "hover", "file": "pkg/use.py", "line": 3, "symbol": "total"}))
            .await;
        has(&hover, "(function) def total(xs: Unknown) -> int");
        let broken = "def total(xs, scale):\n    return sum(xs) * scale\n";
        let want =
            "pkg/use.py:3:7 error [reportCallIssue] Argument missing for parameter \"scale\"";
        let pv = p.preview("pkg/core.py", broken).await;
        assert_eq!(
            listed(&pv.text),
            BTreeSet::from([want.to_string()]),
            "trial {trial}: {}",
            pv.text
        );
        let written = p.accept(&pv.id).await.unwrap();
        assert_eq!(
            listed(&written),
            BTreeSet::from([want.to_string()]),
            "trial {trial}: {written}"
        );
        has(&written, "1 new diagnostic(s) after this write:");
        p.close_and_check().await;
    }
}
