//! `cargo bench -p tools-test --bench test` (or `cargo xtask bench test`): the tests a write
//! names and `test run` with `affected: true`, against what an agent otherwise does — run
//! the whole suite after each edit — side by side in one run, on click 8.1.8's sdist (the
//! real-projects suite's copy, in a virtual environment of its own with pytest and click
//! installed from the registry). For each edit: the tests named and what part of the suite
//! they are, the write's own time, the affected run's time against the whole suite's
//! (pytest run directly), and the recall: how many of the tests the whole suite then fails
//! were named. Also the cost of recording what each test runs: the `test run` of the whole
//! suite that records it, against the same suite run directly.
//!
//! Prints a table; never a pass/fail. `-- --smoke` runs one edit on a three-file project of
//! its own with the `pytest` on `PATH` (each answer still checked).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{Registry, RegistryBuilder, Run, RunOptions, Surface};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A behaviour-changing edit: file, old text, new text.
type Edit = (&'static str, &'static str, &'static str);

const CLICK_EDITS: &[Edit] = &[
    (
        "src/click/utils.py",
        "        if total_length <= max_length:\n",
        "        if total_length < max_length:\n",
    ),
    (
        "src/click/utils.py",
        "        if total_length > max_length:  # too long, truncate\n",
        "        if total_length >= max_length:  # too long, truncate\n",
    ),
    (
        "src/click/formatting.py",
        "            if term_len(first) <= first_col - col_spacing:\n",
        "            if term_len(first) < first_col - col_spacing:\n",
    ),
];

const SMOKE_FILES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"cli\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    ),
    (
        "cli.py",
        "def banner():\n    return \"hello\"\n\n\nCOMMANDS = {\"greet\": banner}\n\n\ndef invoke(name):\n    return COMMANDS[name]()\n",
    ),
    (
        "tests/test_cli.py",
        "from cli import invoke\n\n\ndef test_greet():\n    assert invoke(\"greet\") == \"hello\"\n\n\ndef test_other():\n    assert 1 + 1 == 2\n",
    ),
];

const SMOKE_EDITS: &[Edit] = &[("cli.py", "return \"hello\"", "return \"hi\"")];

fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// A copy of click 8.1.8 with `.venv` holding pytest and click (editable): `None` with why
/// when the sources or the registry are not there.
fn click_project(into: &Path) -> Result<PathBuf, String> {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/projects/click-8.1.8");
    if !from.join("tests").is_dir() {
        return Err(format!(
            "{} is missing (`cargo xtask setup` fetches it)",
            from.display()
        ));
    }
    let to = into.join("click");
    let ok = Command::new("cp")
        .arg("-r")
        .arg(&from)
        .arg(&to)
        .status()
        .map_err(|e| e.to_string())?;
    if !ok.success() {
        return Err("cannot copy click's sources".into());
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let venv = Command::new(&python)
        .args(["-m", "venv", ".venv"])
        .current_dir(&to)
        .status()
        .map_err(|e| format!("{python}: {e}"))?;
    let pip = venv.success()
        && Command::new(to.join(".venv/bin/pip"))
            .args(["install", "-q", "pytest<9", "-e", "."])
            .current_dir(&to)
            .status()
            .is_ok_and(|s| s.success());
    if !pip {
        return Err("a virtual environment with pytest and click could not be made (the registry is needed)".into());
    }
    Ok(to)
}

fn registry(root: &Path) -> Res<Arc<Registry>> {
    std::fs::write(
        root.join("agent-tools.toml"),
        "[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n\n[test]\nanswer_bytes = 65536\n",
    )?;
    let mut opts = RunOptions::at(root)?;
    opts.trusted = true;
    let run = Run::new(opts)?;
    let mut builder = RegistryBuilder::new(run.clone()).family(tools_fs::family(&run));
    for family in [
        tools_lsp::family(&run)?,
        tools_ast::family(&run)?,
        tools_test::family(&run)?,
    ]
    .into_iter()
    .flatten()
    {
        builder = builder.family(family);
    }
    Ok(builder.build()?)
}

async fn call(
    registry: &Registry,
    tool: &str,
    args: Value,
) -> Res<(String, Vec<tools_core::Section>, Duration)> {
    let t = Instant::now();
    let out = registry
        .call(Surface::FULL, tool, args.clone())
        .await
        .map_err(|e| format!("{tool} {args}: {e}"))?;
    Ok((out.text, out.sections, t.elapsed()))
}

/// The whole suite run directly by the project's pytest: its time and the test functions
/// it failed (parameters dropped, as the ids `test run` takes).
fn whole_suite(root: &Path) -> Res<(Duration, Vec<String>)> {
    let venv = root.join(".venv/bin/python");
    let mut cmd = if venv.exists() {
        let mut c = Command::new(venv);
        c.args(["-m", "pytest"]);
        c
    } else {
        Command::new("pytest")
    };
    let t = Instant::now();
    let out = cmd
        .args(["-q", "-rfE", "-p", "no:cacheprovider"])
        .current_dir(root)
        .output()?;
    let took = t.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut failed: Vec<String> = text
        .lines()
        .filter_map(|l| {
            l.strip_prefix("FAILED ")
                .or_else(|| l.strip_prefix("ERROR "))
        })
        .map(|l| {
            let id = l.split(" - ").next().unwrap_or(l);
            id.split('[').next().unwrap_or(id).trim().to_string()
        })
        .collect();
    failed.sort();
    failed.dedup();
    Ok((took, failed))
}

/// The ids of a write's `tests` section (`path:line id` lines).
fn named(sections: &[tools_core::Section]) -> Vec<String> {
    let Some(s) = sections.iter().find(|s| s.title == "tests") else {
        return Vec::new();
    };
    s.body
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(' '))
        .filter(|(at, id)| at.contains(':') && id.contains("::"))
        .map(|(_, id)| id.to_string())
        .collect()
}

async fn corpus(name: &str, root: &Path, edits: &[Edit]) -> Res<()> {
    let (direct, before) = whole_suite(root)?;
    let registry = registry(root)?;
    let (text, _, recorded) = call(&registry, "test", json!({"action": "run"})).await?;
    let total = text
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse::<usize>().ok())
        .take(3)
        .sum::<usize>();
    println!(
        "{name}: the whole suite ({total} tests) {} run directly; {} as a recorded `test run` ({:.2}×)",
        secs(direct),
        secs(recorded),
        recorded.as_secs_f64() / direct.as_secs_f64().max(1e-9)
    );
    println!(
        "| edit | named | of the suite | write | affected run | whole suite | affected / whole | failing | recall |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (path, old, new) in edits {
        let (_, sections, wrote) = call(
            &registry,
            "edit",
            json!({"path": path, "old_string": old, "new_string": new}),
        )
        .await?;
        let ids = named(&sections);
        let (text, _, affected) = if ids.is_empty() {
            (String::new(), Vec::new(), Duration::ZERO)
        } else {
            call(
                &registry,
                "test",
                json!({"action": "run", "affected": true}),
            )
            .await?
        };
        let ran = text
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse::<usize>().ok())
            .take(3)
            .sum::<usize>();
        let (whole, after) = whole_suite(root)?;
        let caused: Vec<&String> = after.iter().filter(|f| !before.contains(f)).collect();
        let hit = caused.iter().filter(|f| ids.contains(f)).count();
        println!(
            "| `{}` → `{}` | {} functions, {ran} tests | {:.1} % | {} | {} | {} | {:.2}× | {} | {hit} of {} |",
            old.trim(),
            new.trim(),
            ids.len(),
            100.0 * ran as f64 / total.max(1) as f64,
            secs(wrote),
            secs(affected),
            secs(whole),
            affected.as_secs_f64() / whole.as_secs_f64().max(1e-9),
            caused.len(),
            caused.len()
        );
        for miss in caused.iter().filter(|f| !ids.contains(f)) {
            println!("  missed: {miss}");
        }
        if smoke() && (hit != caused.len() || caused.is_empty()) {
            return Err(format!(
                "{name}: the edit's failing tests {caused:?} against named {ids:?}"
            )
            .into());
        }
        call(
            &registry,
            "edit",
            json!({"path": path, "old_string": new, "new_string": old}),
        )
        .await?;
    }
    registry.run().close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> Res<()> {
    let dir = tempfile::tempdir()?;
    if smoke() {
        let root = dir.path().join("smoke");
        for (p, text) in SMOKE_FILES {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().ok_or("no parent")?)?;
            std::fs::write(p, text)?;
        }
        return corpus("smoke", &root, SMOKE_EDITS).await;
    }
    match click_project(dir.path()) {
        Ok(root) => corpus("click 8.1.8", &root, CLICK_EDITS).await,
        Err(why) => {
            println!("click 8.1.8: not measured: {why}");
            Ok(())
        }
    }
}
