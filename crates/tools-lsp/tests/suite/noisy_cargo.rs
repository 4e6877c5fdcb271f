//! A Cargo workspace that already has warts, as real ones do: warnings in four crates
//! (one only in a test module), a crate that does not build (`legacy`), a trait declared in
//! one crate and implemented in another, and callers of `shapes::total` in two crates and
//! their tests. What a write, a preview or a rename reports through rust-analyzer is held
//! against `cargo check --workspace --tests --keep-going` over the same tree before and
//! after it: every finding cargo adds is named, none it had before is.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};
use tools_core::testing::require_binary;

use super::noisy_python::listed;
use super::{Project, fixture_copy, has, section, started_by_the_first_call};

// rust-analyzer's checks build in the project's own tree, never in a build directory the
// environment names (another project's).
const CONFIG: &str = "[lsp]\nindex_wait_ms = 180000\ndiagnostics_wait_ms = 180000\n[lsp.servers.rust.settings.rust-analyzer.cargo]\ntargetDir = \"target/server\"\n";
const SHAPES: &str = "crates/shapes/src/lib.rs";
const TOTAL_OK: &str = "pub fn total(xs: &[u32]) -> u32 {\n    xs.iter().sum()\n}";
const TOTAL_BROKEN: &str =
    "pub fn total(xs: &[u32], scale: u32) -> u32 {\n    xs.iter().sum::<u32>() * scale\n}";

fn rust_analyzer_works() -> bool {
    // `~/.cargo/bin/rust-analyzer` may be a rustup proxy without the component behind it.
    require_binary("rust-analyzer", "rust-analyzer").is_some()
        && std::process::Command::new("rust-analyzer")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
}

/// `cargo check --workspace --tests --keep-going` over the project: every error and
/// warning with a place, as the lines a write's result prints them
/// (`path:line:col severity [code] message`).
fn cargo_check(root: &Path) -> BTreeSet<String> {
    let out = std::process::Command::new("cargo")
        .args([
            "check",
            "--workspace",
            "--tests",
            "--keep-going",
            "--offline",
            "--message-format=json",
        ])
        .current_dir(root)
        // The checker's own build directory: the server's check must not find its work done.
        .env("CARGO_TARGET_DIR", root.join("target/checker"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-message")
        .filter_map(|m| {
            let msg = &m["message"];
            let level = msg["level"].as_str()?;
            if !matches!(level, "error" | "warning") {
                return None;
            }
            let span = msg["spans"]
                .as_array()?
                .iter()
                .find(|s| s["is_primary"] == true)?;
            let code = msg["code"]["code"]
                .as_str()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            Some(format!(
                "{}:{}:{} {level}{code} {}",
                span["file_name"].as_str()?,
                span["line_start"],
                span["column_start"],
                msg["message"].as_str()?.lines().next()?
            ))
        })
        .collect()
}

/// A result's lines without the mark of a message longer than its first line.
fn shown(section: &str) -> BTreeSet<String> {
    listed(section)
        .into_iter()
        .map(|l| l.trim_end_matches(" …").to_string())
        .collect()
}

/// What `cargo check` adds when the project's `total` takes a second parameter: the four
/// calls in `forms` and `report` (one in `report`'s tests); `cli`, whose dependencies then
/// fail, is not checked.
fn what_the_break_adds(p: &Project) -> (String, String, BTreeSet<String>) {
    let (ok, broken, added, _) = what_the_break_changes(p);
    (ok, broken, added)
}

/// [`what_the_break_adds`], and what `cargo check` says the fix adds back over the broken
/// tree: the warnings of `report`, which rustc does not give for a crate that fails.
fn what_the_break_changes(p: &Project) -> (String, String, BTreeSet<String>, BTreeSet<String>) {
    let root = p.root();
    let before = cargo_check(&root);
    assert_eq!(before, warts(), "the fixture's warts");
    let ok = p.read(SHAPES);
    let broken = ok.replace(TOTAL_OK, TOTAL_BROKEN);
    assert_ne!(ok, broken);
    p.write(SHAPES, &broken);
    let after = cargo_check(&root);
    p.write(SHAPES, &ok);
    let added: BTreeSet<String> = after.difference(&before).cloned().collect();
    assert_eq!(added.len(), 4, "{added:#?}");
    let back: BTreeSet<String> = before.difference(&after).cloned().collect();
    (ok, broken, added, back)
}

/// What `cargo check` reports on the fixture as it is.
fn warts() -> BTreeSet<String> {
    [
        "crates/forms/src/lib.rs:4:5 warning [unused_imports] unused import: `std::collections::HashMap`",
        "crates/legacy/src/lib.rs:4:24 error [E0308] mismatched types",
        "crates/report/src/lib.rs:13:9 warning [unused_variables] unused variable: `width`",
        "crates/report/src/lib.rs:23:13 warning [unused_variables] unused variable: `stale`",
        "crates/shapes/src/lib.rs:14:4 warning [dead_code] function `rounding_mode` is never used",
        "crates/shapes/src/lib.rs:15:9 warning [unused_variables] unused variable: `spare`",
    ]
    .map(String::from)
    .into()
}

/// rust-analyzer's own check of the broken call sites (it needs no build): each call cargo
/// names, at its argument list, and `cli`'s call, which cargo does not reach while the
/// crates it depends on fail.
fn own_check_of_the_break() -> BTreeSet<String> {
    [
        "crates/cli/src/main.rs:6:41 error [E0107] expected 2 arguments, found 1",
        "crates/forms/src/lib.rs:26:26 error [E0107] expected 2 arguments, found 1",
        "crates/report/src/lib.rs:8:17 error [E0107] expected 2 arguments, found 1",
        "crates/report/src/lib.rs:14:33 error [E0107] expected 2 arguments, found 1",
        "crates/report/src/lib.rs:24:33 error [E0107] expected 2 arguments, found 1",
    ]
    .map(String::from)
    .into()
}

/// Everything a write of the break must name: what cargo adds, and rust-analyzer's own
/// findings at the same calls.
fn the_break(cargo_added: &BTreeSet<String>) -> BTreeSet<String> {
    cargo_added
        .union(&own_check_of_the_break())
        .cloned()
        .collect()
}

/// What a break says of the two warnings of `report` that rustc stops giving while the
/// crate does not build: not that they are gone.
const SILENCED: &str =
    "2 earlier diagnostic(s) not reported while the new errors stand (hidden, not fixed).";

/// `line` is one of `section`'s lines, whole.
#[track_caller]
fn has_line(section: &str, line: &str) {
    assert!(
        section.lines().any(|l| l == line),
        "expected the line {line:?} in:\n{section}"
    );
}

/// The fix's result `s`: nothing new, and exactly the break's lines gone. A failure shows
/// the break's result `after` whole too: the fix is judged against what the break said.
#[track_caller]
fn fixed(s: &str, broke: usize, after: &str) {
    assert!(
        s.starts_with(&format!(
            "no new diagnostics after this write.\n{broke} earlier diagnostic(s) are gone after this write:"
        )),
        "{s}\nafter the break:\n{after}"
    );
    assert!(!s.contains("Late"), "{s}\nafter the break:\n{after}");
}

/// What `cargo check` reports on the tree as it is now that rust-analyzer's own state lacks
/// (asked file by file with `lsp` action `diagnostics`). rust-analyzer 1.95 at times
/// publishes a file with a finding of its check and then again without it before the check
/// ends, and says nothing more of the file until its next check: its state then is not
/// cargo's, and no answer drawn from it can be.
async fn missing_from_the_server(p: &Project) -> BTreeSet<String> {
    let cargo = cargo_check(&p.root());
    let files: BTreeSet<&str> = cargo.iter().filter_map(|l| l.split(':').next()).collect();
    let mut server = BTreeSet::new();
    for file in files {
        server.extend(shown(
            &p.ok(json!({"action": "diagnostics", "file": file})).await,
        ));
    }
    cargo.difference(&server).cloned().collect()
}

/// The findings `cargo check` reports on the tree as it is, in files no write of these
/// tests touches, that `said` (the answers an assertion showed whole) lists as gone — or,
/// in a file whose findings neither the break nor the fix changes (the `legacy` crate,
/// which depends on nothing written), as new: a file nothing wrote keeps its findings, so
/// rust-analyzer dropped them within a check (1.95 does, before the first write too, and
/// publishes them again with its next check, where they read as new).
fn dropped_by_the_server(p: &Project, said: &str) -> BTreeSet<String> {
    // Files the break or the fix changes findings of: the written one and its callers'.
    let changing: BTreeSet<String> = own_check_of_the_break()
        .iter()
        .filter_map(|l| l.split(':').next())
        .chain([SHAPES])
        .map(String::from)
        .collect();
    cargo_check(&p.root())
        .into_iter()
        .filter(|finding| {
            let mut parts = finding.splitn(3, ':');
            let (Some(file), Some(line)) = (parts.next(), parts.next()) else {
                return false;
            };
            let gone = format!("  {file}:{line} ");
            let new = format!("{file}:{line}:");
            file != SHAPES
                && said.lines().any(|l| {
                    l.starts_with(&gone) || (!changing.contains(file) && l.starts_with(&new))
                })
        })
        .collect()
}

/// What a case's own check says when rust-analyzer's state lacked what cargo reports at a
/// point the case cannot judge without it (see [`judged_against_cargo`]).
const NOT_JUDGED: &str = "rust-analyzer's state lacks what cargo reports";

/// Runs `case` on a project `open` makes, again on a fresh one (three tries in all) when
/// it failed while rust-analyzer's own state lacked a finding cargo reports (see
/// [`missing_from_the_server`]; the case may find so itself, saying [`NOT_JUDGED`]), or
/// after it dropped a finding of a file nothing wrote (see
/// [`dropped_by_the_server`]): each answer is judged against cargo, which only holds while
/// the server reports what cargo does. Any other failure is the test's at once.
async fn judged_against_cargo(open: impl Fn() -> Project, case: impl AsyncFn(&Project)) {
    use futures::FutureExt;
    for attempt in 1..=3 {
        let p = open();
        match std::panic::AssertUnwindSafe(case(&p)).catch_unwind().await {
            Ok(()) => {
                p.close_and_check().await;
                return;
            }
            Err(failure) => {
                let missing = missing_from_the_server(&p).await;
                let said = failure.downcast_ref::<String>().map_or("", String::as_str);
                let dropped = dropped_by_the_server(&p, said);
                let lacked = said.contains(NOT_JUDGED);
                if (missing.is_empty() && dropped.is_empty() && !lacked) || attempt == 3 {
                    std::panic::resume_unwind(failure);
                }
                eprintln!(
                    "attempt {attempt} is not judged: rust-analyzer's state lacks what cargo reports: {missing:#?}; \
                     or it dropped, mid-check, findings of files no write touched: {dropped:#?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn first_write_during_the_first_analysis_calls_nothing_old_new_and_says_why() {
    if !rust_analyzer_works() {
        return;
    }
    let open = || Project::from_fixture("cargo_noisy", &started_by_the_first_call(CONFIG));
    // Each answer is judged against cargo, which holds only while rust-analyzer's state
    // holds what cargo reports (its checks have left a crate's findings out now and then).
    judged_against_cargo(open, async |p: &Project| {
        let (ok, broken, added, back) = what_the_break_changes(p);
        assert_eq!(back.len(), 2, "{back:#?}");
        let expected = the_break(&added);
        // The write is the run's first call: rust-analyzer starts for it, with the written
        // text already on the disk, and its first `cargo check` reads that text.
        let s = section(p.write_tool(SHAPES, &broken).await);
        let first = s.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "no state before this change — rust-analyzer started for it and read the written text from \
             the disk: the diagnostics of files this change did not touch were taken as they are, not \
             judged; ask `lsp` action `diagnostics` for a caller",
            "{s}"
        );
        for line in shown(&s) {
            assert!(expected.contains(&line), "{line} predates the write:\n{s}");
        }
        // Once that check is over, a caller's errors are there to be asked for…
        let caller = p
            .ok(json!({"action": "diagnostics", "file": "crates/forms/src/lib.rs"}))
            .await;
        has(
            &caller,
            "crates/forms/src/lib.rs:26:9 error [E0061] this function takes 2 arguments but 1 argument was supplied",
        );
        // …and from then on each write names exactly what cargo adds over the tree before it:
        // a break its errors, and the one line about the warnings it silences; the first fix
        // the warnings the break silenced (the run never saw the project before the first
        // break, so it cannot tell them for old ones coming back), the next fixes nothing new.
        for cycle in 0..3 {
            let s = section(p.write_tool(SHAPES, &ok).await);
            let back = if cycle == 0 {
                back.clone()
            } else {
                BTreeSet::new()
            };
            assert_eq!(shown(&s), back, "cycle {cycle} fix:\n{s}");
            has_line(&s, "9 earlier diagnostic(s) are gone after this write:");
            assert!(!s.contains("no state before"), "cycle {cycle} fix:\n{s}");
            let s = section(p.write_tool(SHAPES, &broken).await);
            assert_eq!(shown(&s), expected, "cycle {cycle} break:\n{s}");
            has_line(&s, SILENCED);
        }
        p.write_tool(SHAPES, &ok).await;
        assert_eq!(cargo_check(&p.root()), warts());
    })
    .await;
}

/// A run whose rust-analyzer starts as the run opens (the default), with the break as the
/// run's first call, made at once: rust-analyzer's first `cargo check` is still to come or
/// under way when the written text reaches the disk, and reads it.
#[tokio::test]
async fn first_write_while_rust_analyzer_started_with_the_run_loads_calls_nothing_old_new() {
    if !rust_analyzer_works() {
        return;
    }
    // What the break changes is taken on a copy no server watches: the run's own tree is
    // never touched before its first call.
    let probe = Project::from_fixture("cargo_noisy", &started_by_the_first_call(CONFIG));
    let (ok, broken, added, back) = what_the_break_changes(&probe);
    // The lock file the checker made: the run's tree has it, as a checkout of an
    // application has it, or not, as a library's has not (rust-analyzer's first check
    // writes it then).
    let lock = probe.read("Cargo.lock");
    probe.close_and_check().await;
    let expected = the_break(&added);
    let rest = ": the diagnostics of files this change did not touch were taken as they are, \
                not judged; ask `lsp` action `diagnostics` for a caller";
    let with_the_run = format!(
        "no state before this change — rust-analyzer started with the run, and its first check, \
         not over when the written text reached the disk, read that text{rest}"
    );
    let for_it = format!(
        "no state before this change — rust-analyzer started for it and read the written text \
         from the disk{rest}"
    );
    // The break made at once (it reaches the supervisor before the run's start and starts
    // rust-analyzer itself), or once the rust-analyzer the run's start started is up.
    for (up_first, locked) in [(false, true), (true, true), (false, false), (true, false)] {
        let open = || {
            let dir = fixture_copy("cargo_noisy");
            if locked {
                std::fs::write(dir.path().join("Cargo.lock"), &lock).unwrap();
            }
            Project::open_in(dir, CONFIG, true)
        };
        judged_against_cargo(open, async |p: &Project| {
            if up_first {
                p.wait_for_a_server_started_with_the_run().await;
            }
            let s = section(p.write_tool(SHAPES, &broken).await);
            let case = format!("up first: {up_first}, locked: {locked}");
            let first = s.lines().next().unwrap_or_default();
            // Its first check had not ended when the written text reached the disk: nothing it
            // says of a file the write did not touch is called new. (Had it ended — a machine
            // slow to make the write — the state before is that check's, and the break is
            // named whole.)
            // The run's start may also win the race to start it for a break made at once.
            assert!(!(up_first && first == for_it), "{case}, first break:\n{s}");
            let no_state_before = first == with_the_run || first == for_it;
            if no_state_before {
                for line in shown(&s) {
                    assert!(
                        expected.contains(&line),
                        "{case}: {line} predates the write:\n{s}"
                    );
                }
                // Nothing judged the break: the first fix is judged against the server's
                // state after it, which must hold what cargo reports on the broken tree
                // (rust-analyzer's first check has left a crate's findings out).
                let missing = missing_from_the_server(p).await;
                assert!(
                    missing.is_empty(),
                    "{case}: {NOT_JUDGED} after the break: {missing:#?}"
                );
            } else {
                assert_eq!(shown(&s), expected, "{case}, first break:\n{s}");
                has_line(&s, SILENCED);
            }
            // From the first fix on, each write names exactly what cargo adds over the tree
            // before it: the first fix the warnings the break silenced when the run never saw
            // them before the break. A failure shows the break before the fix whole: the fix
            // is judged against what the break said.
            let mut broke = s;
            for cycle in 0..3 {
                let s = section(p.write_tool(SHAPES, &ok).await);
                let back = if cycle == 0 && no_state_before {
                    back.clone()
                } else {
                    BTreeSet::new()
                };
                let fix = format!("{case}, cycle {cycle} fix:\n{s}\nafter the break:\n{broke}");
                assert_eq!(shown(&s), back, "{fix}");
                assert!(
                    s.lines()
                        .any(|l| l == "9 earlier diagnostic(s) are gone after this write:"),
                    "{fix}"
                );
                assert!(!s.contains("no state before"), "{fix}");
                broke = section(p.write_tool(SHAPES, &broken).await);
                let s = &broke;
                assert_eq!(shown(s), expected, "{case}, cycle {cycle} break:\n{s}");
                has_line(s, SILENCED);
            }
            p.write_tool(SHAPES, &ok).await;
        })
        .await;
    }
}

#[tokio::test]
async fn ten_break_fix_cycles_across_crates_attribute_exactly() {
    if !rust_analyzer_works() {
        return;
    }
    let probe = Project::from_fixture("cargo_noisy", &started_by_the_first_call(CONFIG));
    let (ok, broken, added) = what_the_break_adds(&probe);
    // The lock file the checker made, as the run's tree had it when the checker ran there.
    let lock = probe.read("Cargo.lock");
    probe.close_and_check().await;
    let expected = the_break(&added);
    let open = || {
        let dir = fixture_copy("cargo_noisy");
        std::fs::write(dir.path().join("Cargo.lock"), &lock).unwrap();
        Project::open_in(dir, CONFIG, true)
    };
    judged_against_cargo(open, async |p: &Project| {
        // A query starts the server and waits for its first analysis.
        p.ok(json!({"action": "hover", "file": SHAPES, "line": 10, "symbol": "total"}))
            .await;
        for cycle in 0..10 {
            let broke = section(p.write_tool(SHAPES, &broken).await);
            assert_eq!(shown(&broke), expected, "cycle {cycle} break:\n{broke}");
            has_line(&broke, "9 new diagnostic(s) after this write:");
            has_line(&broke, SILENCED);
            assert!(!broke.contains("Late"), "cycle {cycle} break:\n{broke}");
            // The warnings of a crate that stops building go quiet with the break and come
            // back with the fix: the fix never calls them new.
            let s = section(p.write_tool(SHAPES, &ok).await);
            fixed(&s, expected.len(), &broke);
        }
    })
    .await;
}

#[tokio::test]
async fn a_preview_after_queries_on_the_callers_predicts_the_break_and_the_write_reports_it() {
    if !rust_analyzer_works() {
        return;
    }
    let p = Project::from_fixture("cargo_noisy", CONFIG);
    let (ok, broken, added) = what_the_break_adds(&p);
    // Queries on the callers in all three crates and on the written file open them.
    for (file, line) in [
        ("crates/report/src/lib.rs", 8),
        ("crates/forms/src/lib.rs", 26),
        ("crates/cli/src/main.rs", 6),
        (SHAPES, 10),
    ] {
        p.ok(json!({"action": "hover", "file": file, "line": line, "symbol": "total"}))
            .await;
    }
    p.ok(json!({"action": "references", "file": SHAPES, "line": 10, "symbol": "total"}))
        .await;
    // Unsaved text reaches rust-analyzer's own check, not `cargo check`: the prediction
    // is the former, and says the latter runs only on the write.
    let pv = p.preview(SHAPES, &broken).await;
    assert_eq!(shown(&pv.text), own_check_of_the_break(), "{}", pv.text);
    has(
        &pv.text,
        "predicted: 5 new diagnostic(s) if this change is written:",
    );
    has(&pv.text, "cargo check");
    // The prediction stayed out of the run's ledger: the write reports all of the break.
    let written = p.accept(&pv.id).await.unwrap();
    assert_eq!(shown(&written), the_break(&added), "{written}");
    // The servers are back on the disk: the fix is previewed as taking the break back.
    let pv = p.preview(SHAPES, &ok).await;
    has(
        &pv.text,
        "predicted: no new diagnostics if this change is written.",
    );
    p.discard(&pv.id).await;
    p.close_and_check().await;
}

#[tokio::test]
async fn a_rename_of_a_trait_method_across_crates_reports_no_pre_existing_error() {
    if !rust_analyzer_works() {
        return;
    }
    let p = Project::from_fixture("cargo_noisy", &started_by_the_first_call(CONFIG));
    let before = cargo_check(&p.root());
    assert_eq!(before, warts());
    // The rename is the run's first call: the server starts for it. `area` is declared in
    // `shapes`, implemented twice in `forms` and called in `report`.
    // The check may go on after the answer: its findings come with the next call's.
    let (out, text) = p
        .rename_checked(json!({"file": SHAPES, "line": 6, "symbol": "area", "new_name": "surface"}))
        .await;
    has(&out.text, "edit(s) in 3 file(s)");
    assert_eq!(
        cargo_check(&p.root()),
        before,
        "the rename changed no finding"
    );
    assert_eq!(shown(&text), BTreeSet::new(), "{text}");
    p.close_and_check().await;
}

/// Waits (at most three minutes) until the lock file is there and `status` says the
/// rust-analyzer started with the run is at rest (not `(indexing)`): its first check,
/// which wrote the lock file, is over.
async fn wait_until_checked_with_a_lock_file(p: &Project) {
    p.wait_for_a_server_started_with_the_run().await;
    for _ in 0..1800 {
        let status = p.ok(json!({"action": "status"})).await;
        let idle = status
            .lines()
            .any(|l| l == "rust: running rust-analyzer for root .");
        if idle && p.root().join("Cargo.lock").exists() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("rust-analyzer's first check did not end within three minutes");
}

/// A library that does not commit its `Cargo.lock` (no `target/` either), opened with
/// rust-analyzer started with the run: its first `cargo check` writes the lock file. The
/// first write, once the server is up, names exactly what cargo adds — its errors as well
/// as rust-analyzer's own — and the fix exactly those as gone.
#[tokio::test]
async fn a_first_write_on_a_workspace_without_a_lock_file_names_what_cargo_adds() {
    if !rust_analyzer_works() {
        return;
    }
    // What the break changes is taken on a copy no server watches (cargo writes its lock
    // file there, not in the run's tree).
    let probe = Project::from_fixture("cargo_noisy", &started_by_the_first_call(CONFIG));
    let (ok, broken, added) = what_the_break_adds(&probe);
    probe.close_and_check().await;
    let expected = the_break(&added);
    let dir = fixture_copy("cargo_noisy");
    for gone in ["Cargo.lock", "target"] {
        assert!(!dir.path().join(gone).exists(), "{gone}");
    }
    let p = Project::open_in(dir, CONFIG, true);
    // The write comes once rust-analyzer's first check has written the lock file and ended,
    // with no call before it that would hand the server the news of the lock file.
    wait_until_checked_with_a_lock_file(&p).await;
    let broke = section(p.write_tool(SHAPES, &broken).await);
    assert_eq!(shown(&broke), expected, "{broke}");
    assert!(
        broke.starts_with("9 new diagnostic(s) after this write:\n"),
        "{broke}"
    );
    has_line(&broke, SILENCED);
    let s = section(p.write_tool(SHAPES, &ok).await);
    fixed(&s, expected.len(), &broke);
    let gone: BTreeSet<String> = s.lines().skip(2).map(|l| l.trim().to_string()).collect();
    // The gone lines name the place by line only.
    let without_column: BTreeSet<String> = expected
        .iter()
        .map(|l| {
            let (place, rest) = l.split_once(' ').unwrap();
            let line = place.rsplit_once(':').unwrap().0;
            format!("{line} {rest}")
        })
        .collect();
    assert_eq!(gone, without_column, "{s}");
    assert_eq!(cargo_check(&p.root()), warts());
    p.close_and_check().await;
}

/// A manifest changed outside the tools just before a write: rust-analyzer, told of it by
/// the write, loads the project again and checks it from the disk, where the written text
/// already is. That check's findings are the write's, not the state before it: the first
/// line says there is no state before, nothing is called old that cargo adds, and the
/// writes after it are judged exactly again.
#[tokio::test]
async fn a_write_after_a_manifest_changed_outside_says_its_check_read_the_written_text() {
    if !rust_analyzer_works() {
        return;
    }
    let p = Project::from_fixture("cargo_noisy", CONFIG);
    let (ok, broken, added, back) = what_the_break_changes(&p);
    let expected = the_break(&added);
    // Once its first check is over, nothing is in the way of the next write.
    let caller = p
        .ok(json!({"action": "diagnostics", "file": "crates/forms/src/lib.rs"}))
        .await;
    has(
        &caller,
        "crates/forms/src/lib.rs:4:5 warning [unused_imports] unused import: `std::collections::HashMap`",
    );
    let manifest = p.read("Cargo.toml");
    p.write("Cargo.toml", &format!("{manifest}exclude = [\"vendor\"]\n"));
    let s = section(p.write_tool(SHAPES, &broken).await);
    let first = s.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "no state before this change — rust-analyzer checked the project again after the written text \
         reached the disk, before the write was handed to it, and that check read it: the diagnostics \
         of files this change did not touch were taken as they are, not judged; ask `lsp` action \
         `diagnostics` for a caller",
        "{s}"
    );
    for line in shown(&s) {
        assert!(expected.contains(&line), "{line} predates the write:\n{s}");
    }
    let s = section(p.write_tool(SHAPES, &ok).await);
    assert_eq!(shown(&s), back, "{s}");
    has_line(&s, "9 earlier diagnostic(s) are gone after this write:");
    let s = section(p.write_tool(SHAPES, &broken).await);
    assert_eq!(shown(&s), expected, "{s}");
    p.write_tool(SHAPES, &ok).await;
    p.close_and_check().await;
}
