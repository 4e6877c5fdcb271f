//! A breaking edit while pyright is still on its first analysis of a large project (Django's
//! shape: a helper called from several packages and the tests, in a tree whose analysis
//! outlasts the bound): the write's result names every broken call, since pyright answers
//! references during its analysis and checks the open files before any other.

use std::collections::BTreeSet;

use serde_json::json;
use tools_core::testing::require_binary;

use super::noisy_python::listed;
use super::{Project, section};

/// A bound the first analysis of the filler modules outlasts (about 11 s of pyright's time
/// on its own), long enough for the callers, checked first, to be published.
const CONFIG: &str = "[lsp]\nindex_wait_ms = 10000\ndiagnostics_wait_ms = 3000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

const CLOCK: &str = "pkg/clock.py";
const ASKED: &str = "def is_aware(value):\n    return value is not None\n";
const STRICT: &str = "def is_aware(value, *, strict):\n    return value is not None\n";

/// The callers: (path, text). Every call of `is_aware` breaks under `STRICT`.
const CALLERS: &[(&str, &str)] = &[
    (
        "pkg/forms.py",
        "from pkg.clock import is_aware\n\n\ndef clean(v):\n    return is_aware(v)\n",
    ),
    (
        "db/ops.py",
        "from pkg import clock\n\nA = clock.is_aware(1)\nB = clock.is_aware(2)\n",
    ),
    (
        "admin/filters.py",
        "from pkg.clock import is_aware as aware\n\nX = aware(None)\n",
    ),
    (
        "tests/test_clock.py",
        "from pkg.clock import is_aware\n\n\ndef test_it():\n    assert is_aware(3)\n",
    ),
];

/// Modules that keep pyright's first analysis busy: nested inference, checked after the
/// open files.
fn filler(n: usize) -> String {
    let mut out = String::from("def g0(x):\n    return [x, {'k': x}]\n");
    for i in 1..40 {
        out.push_str(&format!(
            "\n\ndef g{i}(x):\n    return g{}(x) + g{}([x])\n",
            i - 1,
            i - 1
        ));
    }
    out.push_str(&format!("\n\nV{n} = g39(1)\n"));
    out
}

fn project() -> Project {
    let mut files: Vec<(String, String)> = vec![
        (
            "pyproject.toml".into(),
            "[project]\nname = \"pkg\"\nversion = \"0.1.0\"\n".into(),
        ),
        ("pkg/__init__.py".into(), String::new()),
        (CLOCK.into(), ASKED.into()),
        ("db/__init__.py".into(), String::new()),
        ("admin/__init__.py".into(), String::new()),
        ("filler/__init__.py".into(), String::new()),
    ];
    files.extend(CALLERS.iter().map(|(p, t)| (p.to_string(), t.to_string())));
    for n in 0..300 {
        files.push((format!("filler/m{n}.py"), filler(n)));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Project::new(&refs, CONFIG)
}

#[tokio::test]
async fn a_break_during_a_long_first_analysis_names_every_broken_call() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = project();
    // A query starts the server; the write follows while its first analysis runs.
    p.ok(json!({"action": "hover", "file": CLOCK, "line": 1, "symbol": "is_aware"}))
        .await;
    // Meanwhile the status says how far the analysis is, once its pace is known.
    let mut line = String::new();
    for _ in 0..100 {
        let status = p.ok(json!({"action": "status"})).await;
        line = status.lines().next().unwrap_or_default().to_string();
        if line.contains("(indexing: ") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let [left, secs] = numbers(&line)[..] else {
        panic!("{line}");
    };
    assert_eq!(
        line,
        format!(
            "python: running pyright-langserver for root . (indexing: {left} file(s) to analyze, \
             about {secs} s more at its pace)"
        )
    );
    assert!((1..=300).contains(&left), "{line}");
    let s = section(p.write_tool(CLOCK, STRICT).await);
    let missing = |at: &str| {
        format!("{at} error [reportCallIssue] Argument missing for parameter \"strict\"")
    };
    let want: BTreeSet<String> = [
        "admin/filters.py:3:5",
        "db/ops.py:3:5",
        "db/ops.py:4:5",
        "pkg/forms.py:5:12",
        "tests/test_clock.py:5:12",
    ]
    .iter()
    .map(|at| missing(at))
    .collect();
    assert_eq!(listed(&s), want, "{s}");
    let first = s.lines().next().unwrap_or_default();
    // Where the analysis is far from its end (it is on this machine: about 11 s of
    // pyright's own time), it is not waited for: the first line says so, how far it was,
    // and which files were judged.
    if first.starts_with("first analysis unfinished") {
        let [ms, left, secs, ..] = numbers(first)[..] else {
            panic!("{s}");
        };
        assert_eq!(
            first,
            format!(
                "first analysis unfinished — pyright-langserver was still on its first analysis of the \
                 project after {ms} ms (not waited for: {left} file(s) still to analyze, about {secs} s more \
                 at its pace): the 4 file(s) it names as using what this change altered were checked before \
                 and after it and are judged here; the diagnostics of other files this change did not touch \
                 were taken as they are, not judged; ask `lsp` action `diagnostics` for a file to see it once \
                 the analysis is over"
            ),
            "{s}"
        );
        assert!((1..=300).contains(&left), "{s}");
    } else {
        assert_eq!(first, "5 new diagnostic(s) after this write:", "{s}");
    }
    p.close_and_check().await;
}

/// The numbers in `line`, in order.
fn numbers(line: &str) -> Vec<u64> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect()
}
