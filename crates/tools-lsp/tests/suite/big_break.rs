//! A break too big for one answer: the result counts every affected file — the written
//! file's package first, then by import distance — lists the first ones in that order, the
//! alike ones of a file on one line naming their places, and names the call that pages the
//! rest; the answer and the pages hold exactly what pyright's command line adds.

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

/// Calls of `total` in each of the six modules importing it.
const CALLS_PER_MODULE: usize = 36;

/// A package whose `total` is called 3 times in its own package, [`CALLS_PER_MODULE`] times
/// in each of six modules that import it, and 4 times (through a re-export) in one that
/// imports those.
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
            format!(
                "from pkg.core import total\n\n{}",
                calls("total", CALLS_PER_MODULE)
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Project::new(&refs, CONFIG)
}

/// The places (`line:col`) of the first `n` calls [`calls`] writes, and the line pyright
/// gives each in `file`.
fn call_sites(file: &str, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let at = format!("{}:{}", i + 3, format!("v{i} = ").len() + 1);
            let line = format!(
                "{file}:{at} error [reportCallIssue] Argument missing for parameter \"scale\""
            );
            (at, line)
        })
        .collect()
}

/// The answer's line for the calls of `file` from the first to the `shown`th of `n`.
fn alike_line(file: &str, n: usize, shown: usize) -> String {
    let places: Vec<String> = call_sites(file, shown)
        .into_iter()
        .map(|(at, _)| at)
        .collect();
    let which = if shown < n {
        format!("the first {shown} at")
    } else {
        "at".into()
    };
    format!(
        "{file}, {n} times: error [reportCallIssue] Argument missing for parameter \"scale\" — {which} {}",
        places.join(", ")
    )
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
    // The files in the order the answer gives them, and how many calls each has.
    let mut files = vec![("pkg/helpers.py".to_string(), 3)];
    files.extend((0..6).map(|m| (format!("app/m{m}.py"), CALLS_PER_MODULE)));
    files.push(("cli/run.py".to_string(), 4));
    let every: Vec<String> = files
        .iter()
        .flat_map(|(f, n)| call_sites(f, *n).into_iter().map(|(_, line)| line))
        .collect();
    assert_eq!(
        added,
        every.iter().cloned().collect::<BTreeSet<_>>(),
        "pyright's command line adds one error per call"
    );
    assert_eq!(every.len(), 223);

    let s = section(p.write_tool("pkg/core.py", broken).await);
    let mut want = vec![
        "223 new diagnostic(s) after this write, in 8 file(s) — more than fit here; per file, the written file's package first, then by import distance:".to_string(),
        "  pkg/helpers.py: 3 (the written file's package)".into(),
    ];
    want.extend((0..6).map(|m| format!("  app/m{m}.py: {CALLS_PER_MODULE} (imports it)")));
    want.push("  cli/run.py: 4 (2 imports away)".into());
    // 200 places at most: the last module's calls are cut after 17 of them.
    want.push("The first 200 in that order, alike ones on one line:".into());
    want.push(alike_line("pkg/helpers.py", 3, 3));
    want.extend((0..5).map(|m| alike_line(&format!("app/m{m}.py"), 36, 36)));
    want.push(alike_line("app/m5.py", 36, 17));
    want.push(
        "… 23 more: `lsp` action `diagnostics` with `write: 1` and `offset: 200` lists the next ones"
            .into(),
    );
    assert_eq!(s.lines().collect::<Vec<_>>(), want, "{s}");

    // The next page holds the rest, exactly: the last module's other calls, then the
    // farthest file's.
    let page = p
        .ok(json!({"action": "diagnostics", "write": 1, "offset": 200}))
        .await;
    let mut want =
        vec!["write #1: new diagnostics 201–223 of 223, in the order its result gave:".to_string()];
    want.extend(every[200..].iter().cloned());
    assert_eq!(page.lines().collect::<Vec<_>>(), want, "{page}");
    assert_eq!(listed(&page).len(), 23);

    // Past the end, and a write that kept no list, are clear errors.
    let e = p
        .err(json!({"action": "diagnostics", "write": 1, "offset": 223}))
        .await;
    assert_eq!(
        e.to_string(),
        tools_core::ToolError::invalid(
            "offset",
            "`offset` 223 is past the end of write #1's 223 new diagnostic(s)"
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
    // The gone ones, alike ones of a file on one line (their old lines, in path order),
    // within the same 200 places.
    let gone = |file: &str, shown: usize| {
        let places: Vec<String> = (3..3 + shown).map(|l| l.to_string()).collect();
        let which = if shown < 36 {
            format!("the first {shown} at")
        } else {
            "at".into()
        };
        format!(
            "  {file}, 36 times: error [reportCallIssue] Argument missing for parameter \"scale\" — {which} {}",
            places.join(", ")
        )
    };
    let mut want = vec![
        "no new diagnostics after this write.".to_string(),
        "223 earlier diagnostic(s) are gone after this write:".into(),
    ];
    want.extend((0..5).map(|m| gone(&format!("app/m{m}.py"), 36)));
    want.push(gone("app/m5.py", 20));
    want.push("… 23 more not shown (of 223)".into());
    assert_eq!(fix.lines().collect::<Vec<_>>(), want, "{fix}");
    let e = p.err(json!({"action": "diagnostics", "write": 2})).await;
    assert_eq!(
        e.to_string(),
        tools_core::ToolError::invalid("write", "write #2 has no kept list of new diagnostics (kept: #1; the last 16 writes whose list was cut)").to_string()
    );
    p.close_and_check().await;
}
