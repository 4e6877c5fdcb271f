//! A break too big for one answer: the result counts every affected file — the written
//! file's package first, then by import distance — lists the first lines in that order and
//! names the call that pages the rest; the pages hold exactly what pyright's command line
//! adds.

use std::collections::BTreeSet;

use serde_json::json;
use tools_core::testing::require_binary;

use super::noisy_python::{listed, pyright_cli};
use super::{Project, section};

const CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

/// Calls of `total` with one argument, `n` of them, as lines of a module body.
fn calls(callee: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("v{i} = {callee}([{i}])\n"))
        .collect()
}

/// A package whose `total` is called 3 times in its own package, 8 times in each of six
/// modules that import it, and 4 times (through a re-export) in one that imports those.
fn project() -> Project {
    let mut files: Vec<(String, String)> = vec![
        (
            "pyproject.toml".into(),
            "[project]\nname = \"pkg\"\nversion = \"0.1.0\"\n".into(),
        ),
        ("pkg/__init__.py".into(), String::new()),
        (
            "pkg/core.py".into(),
            "def total(xs: list[int]) -> int:\n    return sum(xs)\n".into(),
        ),
        (
            "pkg/helpers.py".into(),
            format!("from pkg.core import total\n\n{}", calls("total", 3)),
        ),
        ("app/__init__.py".into(), String::new()),
        ("cli/__init__.py".into(), String::new()),
        (
            "cli/run.py".into(),
            format!("from app.m0 import total\n\n{}", calls("total", 4)),
        ),
    ];
    for m in 0..6 {
        files.push((
            format!("app/m{m}.py"),
            format!("from pkg.core import total\n\n{}", calls("total", 8)),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Project::new(&refs, CONFIG)
}

/// `lines` in the order a summary shows them: by file in `files` order, then by position.
fn in_summary_order(lines: &BTreeSet<String>, files: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let mut mine: Vec<(u32, u32, String)> = lines
            .iter()
            .filter(|l| l.starts_with(&format!("{f}:")))
            .map(|l| {
                let mut at = l
                    .split([':', ' '])
                    .skip(1)
                    .map(|n| n.parse::<u32>().unwrap());
                (at.next().unwrap(), at.next().unwrap(), l.clone())
            })
            .collect();
        mine.sort();
        out.extend(mine.into_iter().map(|(_, _, l)| l));
    }
    out
}

#[tokio::test]
async fn a_big_break_is_counted_per_file_nearest_first_and_paged_with_offset() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = project();
    let before = pyright_cli(&p.root());
    let broken = "def total(xs: list[int], scale: int) -> int:\n    return sum(xs) * scale\n";
    p.write("pkg/core.py", broken);
    let added: BTreeSet<String> = pyright_cli(&p.root())
        .difference(&before)
        .cloned()
        .collect();
    p.write(
        "pkg/core.py",
        "def total(xs: list[int]) -> int:\n    return sum(xs)\n",
    );
    assert_eq!(added.len(), 55, "{added:#?}");

    let s = section(p.write_tool("pkg/core.py", broken).await);
    let files = [
        "pkg/helpers.py",
        "app/m0.py",
        "app/m1.py",
        "app/m2.py",
        "app/m3.py",
        "app/m4.py",
        "app/m5.py",
        "cli/run.py",
    ];
    let ordered = in_summary_order(&added, &files);
    let mut want = vec![
        "55 new diagnostic(s) after this write, in 8 file(s) — more than the 50 listed here; per file, the written file's package first, then by import distance:".to_string(),
        "  pkg/helpers.py: 3 (the written file's package)".into(),
    ];
    want.extend((0..6).map(|m| format!("  app/m{m}.py: 8 (imports it)")));
    want.push("  cli/run.py: 4 (2 imports away)".into());
    want.push("The first 50, in that order:".into());
    want.extend(ordered[..50].iter().cloned());
    want.push(
        "… 5 more: `lsp` action `diagnostics` with `write: 1` and `offset: 50` lists the next ones"
            .into(),
    );
    assert_eq!(s.lines().collect::<Vec<_>>(), want, "{s}");

    // The next page holds the rest, exactly.
    let page = p
        .ok(json!({"action": "diagnostics", "write": 1, "offset": 50}))
        .await;
    let mut want =
        vec!["write #1: new diagnostics 51–55 of 55, in the order its result gave:".to_string()];
    want.extend(ordered[50..].iter().cloned());
    assert_eq!(page.lines().collect::<Vec<_>>(), want, "{page}");
    assert_eq!(listed(&page).len(), 5);

    // Past the end, and a write that kept no list, are clear errors.
    let e = p
        .err(json!({"action": "diagnostics", "write": 1, "offset": 55}))
        .await;
    assert_eq!(
        e.to_string(),
        tools_core::ToolError::invalid(
            "offset",
            "`offset` 55 is past the end of write #1's 55 new diagnostic(s)"
        )
        .to_string()
    );
    let fix = section(
        p.write_tool(
            "pkg/core.py",
            "def total(xs: list[int]) -> int:\n    return sum(xs)\n",
        )
        .await,
    );
    assert!(
        fix.starts_with("no new diagnostics after this write.\n55 earlier diagnostic(s) are gone"),
        "{fix}"
    );
    let e = p.err(json!({"action": "diagnostics", "write": 2})).await;
    assert_eq!(
        e.to_string(),
        tools_core::ToolError::invalid("write", "write #2 has no kept list of new diagnostics (kept: #1; the last 16 writes whose list was cut)").to_string()
    );
    p.close_and_check().await;
}
