//! A Go module that already has errors, as real ones do: a package that does not build
//! (`legacy`), a vet finding (`report`'s printf), and callers of `ledger.Total` in its own
//! package, in two other packages and in `main`. What a write, a preview or a rename
//! reports is held against gopls's own command line (`gopls check`, the type checker the server runs) over every
//! file before and after it, and every site `go build` and `go vet` add is among it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::json;
use tools_core::testing::require_binary;

use super::noisy_python::listed;
use super::{Project, has, section, started_by_the_first_call};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const TOTAL: &str = "ledger/total.go";

/// Every `.go` file of the module, relative to `root`, in path order.
fn go_files(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = ignore::WalkBuilder::new(root)
        .build()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "go"))
        .map(|e| e.path().strip_prefix(root).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

/// `gopls check` over every file: `path:line:col message` (the message's first line).
fn gopls_check(root: &Path) -> BTreeSet<String> {
    let out = Command::new("gopls")
        .arg("check")
        .args(go_files(root))
        .current_dir(root)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let root = std::fs::canonicalize(root).unwrap();
    text.lines()
        .filter_map(|l| {
            let (file, rest) = l.split_once(".go:")?;
            let rel = Path::new(&format!("{file}.go"))
                .strip_prefix(&root)
                .ok()?
                .display()
                .to_string();
            let (line, rest) = rest.split_once(':')?;
            let (col, msg) = rest.split_once(": ")?;
            let col = col.split('-').next()?;
            Some(format!("{rel}:{line}:{col} {msg}"))
        })
        .collect()
}

/// The `path:line` of every site `go build ./...` and `go vet ./...` report.
fn go_build_and_vet(root: &Path) -> BTreeSet<String> {
    let mut sites = BTreeSet::new();
    for args in [&["build", "./..."][..], &["vet", "./..."][..]] {
        let out = Command::new("go")
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        for l in String::from_utf8_lossy(&out.stderr).lines() {
            let l = l.trim_start_matches("vet: ");
            let mut parts = l.splitn(3, ':');
            if let (Some(file), Some(line)) = (parts.next(), parts.next())
                && file.ends_with(".go")
                && line.parse::<u32>().is_ok()
            {
                sites.insert(format!("{file}:{line}"));
            }
        }
    }
    sites
}

/// A result's diagnostic line as `gopls check` prints it: `path:line:col message`.
fn as_checked(line: &str) -> String {
    let (loc, rest) = line.split_once(' ').unwrap();
    let rest = rest
        .trim_start_matches("error ")
        .trim_start_matches("warning ");
    let rest = match rest.strip_prefix('[') {
        Some(r) => r.split_once("] ").map(|(_, m)| m).unwrap_or(r),
        None => rest,
    };
    format!("{loc} {}", rest.trim_end_matches(" …"))
}

fn tools_installed() -> bool {
    require_binary("gopls", "gopls").is_some() && require_binary("go", "go").is_some()
}

/// What `gopls check` says of the module before any change must show its warts, and
/// `go build`/`go vet` exactly these two sites.
fn warts(root: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let before = gopls_check(root);
    assert!(
        before.contains("legacy/legacy.go:5:17 cannot use \"unlimited\" (untyped string constant) as int value in variable declaration"),
        "the fixture has warts: {before:#?}"
    );
    let sites_before = go_build_and_vet(root);
    assert_eq!(
        sites_before,
        BTreeSet::from([
            "legacy/legacy.go:5".to_string(),
            "report/report.go:18".to_string()
        ])
    );
    (before, sites_before)
}

/// The file as it is, as broken (`Total` takes a second parameter), what `gopls check`
/// adds when the break is on disk, and the `path:line` sites `go build`/`go vet` add; the
/// file is put back before returning.
fn what_the_break_adds(p: &Project) -> (String, String, BTreeSet<String>, BTreeSet<String>) {
    let root = p.root();
    let (before, sites_before) = warts(&root);
    let ok = p.read(TOTAL);
    let broken = ok.replace(
        "func Total(xs []int) int {",
        "func Total(xs []int, scale int) int {",
    );
    assert_ne!(ok, broken);
    p.write(TOTAL, &broken);
    let expected: BTreeSet<String> = gopls_check(&root).difference(&before).cloned().collect();
    let sites: BTreeSet<String> = go_build_and_vet(&root)
        .difference(&sites_before)
        .cloned()
        .collect();
    p.write(TOTAL, &ok);
    // Its own package twice, two other packages and main: six call sites.
    assert_eq!(expected.len(), 6, "{expected:#?}");
    assert!(!sites.is_empty());
    (ok, broken, expected, sites)
}

/// A result's diagnostic lines as `gopls check` prints them.
fn shown(section: &str) -> BTreeSet<String> {
    listed(section).iter().map(|l| as_checked(l)).collect()
}

/// Whether every `path:line` site in `sites` is among `shown`.
#[track_caller]
fn covers_sites(shown: &BTreeSet<String>, sites: &BTreeSet<String>, s: &str) {
    let lines: BTreeSet<String> = shown
        .iter()
        .map(|l| {
            let loc = l.split(' ').next().unwrap();
            loc.rsplit_once(':').unwrap().0.to_string()
        })
        .collect();
    assert!(
        sites.is_subset(&lines),
        "go build/vet sites {sites:?} not in:\n{s}"
    );
}

#[tokio::test]
async fn first_write_during_the_first_analysis_then_ten_break_fix_cycles_name_what_gopls_and_go_build_add()
 {
    if !tools_installed() {
        return;
    }
    let p = Project::from_fixture("go_noisy", &started_by_the_first_call(CONFIG));
    let (ok, broken, expected, sites) = what_the_break_adds(&p);
    // Cycle 0's break is the run's first call: gopls starts for it and loads the module.
    for cycle in 0..10 {
        let s = section(p.write_tool(TOTAL, &broken).await);
        let found = shown(&s);
        assert_eq!(found, expected, "cycle {cycle}:\n{s}");
        assert!(
            s.starts_with("6 new diagnostic(s) after this write:"),
            "cycle {cycle}:\n{s}"
        );
        covers_sites(&found, &sites, &s);
        let s = section(p.write_tool(TOTAL, &ok).await);
        assert!(
            s.starts_with("no new diagnostics after this write.\n6 earlier diagnostic(s) are gone after this write:"),
            "cycle {cycle} fix:\n{s}"
        );
        assert!(!s.contains("Late"), "cycle {cycle} fix:\n{s}");
    }
    p.close_and_check().await;
}

/// The break and fix cycles of a run whose gopls starts as the run opens (the default): the
/// break is the run's first call, made at once, while gopls is still loading the module and
/// before its analyzers (the printf check of `report`) have published.
#[tokio::test]
async fn first_write_while_gopls_started_with_the_run_loads_then_break_fix_cycles_name_what_gopls_adds()
 {
    if !tools_installed() {
        return;
    }
    // What the break adds is taken on a copy no server watches: the run's own tree is
    // never touched before its first call.
    let probe = Project::from_fixture("go_noisy", &started_by_the_first_call(CONFIG));
    let (ok, broken, expected, sites) = what_the_break_adds(&probe);
    probe.close_and_check().await;
    // The break made at once (it reaches the supervisor before the run's start and starts
    // gopls itself), or once the gopls the run's start started is up and loading.
    for up_first in [false, true] {
        let p = Project::from_fixture("go_noisy", CONFIG);
        if up_first {
            p.wait_for_a_server_started_with_the_run().await;
        }
        for cycle in 0..5 {
            let s = section(p.write_tool(TOTAL, &broken).await);
            let found = shown(&s);
            assert_eq!(found, expected, "up first: {up_first}, cycle {cycle}:\n{s}");
            assert!(
                s.starts_with("6 new diagnostic(s) after this write:"),
                "up first: {up_first}, cycle {cycle}:\n{s}"
            );
            covers_sites(&found, &sites, &s);
            let s = section(p.write_tool(TOTAL, &ok).await);
            assert!(
                s.starts_with("no new diagnostics after this write.\n6 earlier diagnostic(s) are gone after this write:"),
                "up first: {up_first}, cycle {cycle} fix:\n{s}"
            );
            assert!(
                !s.contains("Late"),
                "up first: {up_first}, cycle {cycle} fix:\n{s}"
            );
        }
        p.close_and_check().await;
    }
}

#[tokio::test]
async fn a_preview_after_queries_on_the_callers_predicts_the_break_and_the_write_reports_it() {
    if !tools_installed() {
        return;
    }
    let p = Project::from_fixture("go_noisy", CONFIG);
    let (ok, broken, expected, sites) = what_the_break_adds(&p);
    // Queries on callers in three packages and on the written file open them.
    for (file, line) in [
        ("report/report.go", 12),
        ("stats/stats.go", 11),
        ("cmd/ledger/main.go", 13),
        (TOTAL, 5),
    ] {
        p.ok(json!({"action": "hover", "file": file, "line": line, "symbol": "Total"}))
            .await;
    }
    p.ok(json!({"action": "references", "file": TOTAL, "line": 5, "symbol": "Total"}))
        .await;
    let pv = p.preview(TOTAL, &broken).await;
    assert_eq!(shown(&pv.text), expected, "{}", pv.text);
    assert!(
        pv.text
            .starts_with("predicted: 6 new diagnostic(s) if this change is written:"),
        "{}",
        pv.text
    );
    // The prediction stayed out of the run's ledger: the write reports the same lines.
    let written = p.accept(&pv.id).await.unwrap();
    let found = shown(&written);
    assert_eq!(found, expected, "{written}");
    covers_sites(&found, &sites, &written);
    // The server is back on the disk: a preview of the fix predicts them gone.
    let pv = p.preview(TOTAL, &ok).await;
    has(
        &pv.text,
        "predicted: no new diagnostics if this change is written.",
    );
    has(
        &pv.text,
        "predicted: 6 earlier diagnostic(s) would be gone:",
    );
    p.discard(&pv.id).await;
    p.close_and_check().await;
}

#[tokio::test]
async fn a_rename_across_packages_reports_no_pre_existing_error() {
    if !tools_installed() {
        return;
    }
    let p = Project::from_fixture("go_noisy", &started_by_the_first_call(CONFIG));
    let root = p.root();
    let (before, sites_before) = warts(&root);
    // The rename is the run's first call: the server starts for it.
    // The check may go on after the answer: its findings come with the next call's.
    let (out, text) = p
        .rename_checked(json!({"file": TOTAL, "line": 5, "symbol": "Total", "new_name": "Sum"}))
        .await;
    has(&out.text, "edit(s) in 5 file(s)");
    assert_eq!(gopls_check(&root), before, "the rename changed no finding");
    assert_eq!(go_build_and_vet(&root), sites_before);
    assert_eq!(listed(&text), BTreeSet::new(), "{text}");
    p.close_and_check().await;
}
