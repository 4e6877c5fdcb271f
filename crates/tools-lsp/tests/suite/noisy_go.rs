//! A Go module that already has errors, as real ones do: a package that does not build
//! (`legacy`), a vet finding (`report`'s printf), and callers of `ledger.Total` in its own
//! package, in two other packages and in `main`. What a write reports is held against
//! gopls's own command line (`gopls check`, the type checker the server runs) over every
//! file before and after it, and every site `go build` and `go vet` add is among it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use tools_core::testing::require_binary;

use super::noisy_python::listed;
use super::{Project, has, section};

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

#[tokio::test]
async fn a_break_on_a_go_module_with_errors_names_what_gopls_and_go_build_add() {
    if require_binary("gopls", "gopls").is_none() || require_binary("go", "go").is_none() {
        return;
    }
    let p = Project::from_fixture("go_noisy", CONFIG);
    let root = p.root();
    let before = gopls_check(&root);
    assert!(
        before.contains("legacy/legacy.go:5:17 cannot use \"unlimited\" (untyped string constant) as int value in variable declaration"),
        "the fixture has warts: {before:#?}"
    );
    let sites_before = go_build_and_vet(&root);
    assert_eq!(
        sites_before,
        BTreeSet::from([
            "legacy/legacy.go:5".to_string(),
            "report/report.go:18".to_string()
        ])
    );
    let ok = p.read(TOTAL);
    let broken = ok.replace(
        "func Total(xs []int) int {",
        "func Total(xs []int, scale int) int {",
    );
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

    for cycle in 0..2 {
        let s = section(p.write_tool(TOTAL, &broken).await);
        let shown: BTreeSet<String> = listed(&s).iter().map(|l| as_checked(l)).collect();
        assert_eq!(shown, expected, "cycle {cycle}:\n{s}");
        has(&s, "6 new diagnostic(s) after this write:");
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
        let s = section(p.write_tool(TOTAL, &ok).await);
        assert!(
            s.starts_with("no new diagnostics after this write.\n6 earlier diagnostic(s) are gone after this write:"),
            "cycle {cycle} fix:\n{s}"
        );
        assert!(!s.contains("Late"), "cycle {cycle} fix:\n{s}");
    }
    p.close_and_check().await;
}
