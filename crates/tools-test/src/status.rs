//! `status` and the family's doctor entries: the runner per language for this workspace
//! (a project at the root or in a folder just below it), and where none is found, why.

use std::path::{Path, PathBuf};

use tools_core::discovery::ProgramSearch;
use tools_core::{DoctorEntry, Run, ToolOutput};

use crate::recorder::will_record;
use crate::runner::{CargoRunner, LANGUAGES, Language, detect, resolve};

/// Folders looked in for a project: the root and the folders right below it (sorted),
/// at most this many.
const MAX_FOLDERS: usize = 200;

fn candidate_folders(root: &Path) -> Vec<PathBuf> {
    let mut below: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_dir()
                        && !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                            n.starts_with('.') || n == "node_modules" || n == "target"
                        })
                })
                .collect()
        })
        .unwrap_or_default();
    below.sort();
    below.truncate(MAX_FOLDERS);
    let mut out = vec![root.to_path_buf()];
    out.extend(below);
    out
}

/// One language's finding: `(ok, runner or "no runner", detail)`; with `record`, the
/// detail says whether a run records what each test runs.
fn finding(run: &Run, lang: Language, cargo: CargoRunner, record: bool) -> (bool, String, String) {
    let root = run.root();
    let search = ProgramSearch::for_run(run);
    let found = candidate_folders(root)
        .into_iter()
        .find_map(|d| detect(&d, root, lang).ok().filter(|det| det.root == d));
    let Some(detected) = found else {
        let why = detect(root, root, lang).err().unwrap_or_default();
        return (false, "no runner".into(), why);
    };
    let at = tools_core::display_relative(root, &detected.root);
    let because = detected.because.clone();
    let kind_name = detected.kind.name().to_string();
    match resolve(detected, &search, cargo) {
        Ok(r) => {
            let name = r.detected.kind.name().to_string();
            let argv: Vec<String> = r
                .argv
                .iter()
                .map(|p| tools_core::display_relative(root, p))
                .collect();
            let mut found = format!(
                "for {at} ({because}): `{}` from {}",
                argv.join(" "),
                r.origin
            );
            if run.trusted() {
                if record {
                    found.push_str(&match will_record(&r, cargo, &search) {
                        Ok(true) => "; records which functions each test runs".to_string(),
                        Ok(false) => "; records nothing (pytest, vitest and cargo nextest record)"
                            .to_string(),
                        Err(why) => format!("; records nothing: {why}"),
                    });
                }
                (true, name, found)
            } else {
                // Found, but this run will not start it.
                (
                    false,
                    name,
                    format!("{found}; untrusted workspace: `run` is refused"),
                )
            }
        }
        Err(why) => (false, kind_name, format!("for {at} ({because}), but {why}")),
    }
}

/// The text of `test status` (`record`: `[test] record`).
pub fn status(run: &Run, cargo: CargoRunner, record: bool) -> ToolOutput {
    let mut lines = Vec::new();
    for lang in LANGUAGES {
        let (ok, runner, detail) = finding(run, lang, cargo, record);
        lines.push(if ok {
            format!("{}: {runner} {detail}", lang.id())
        } else if runner == "no runner" {
            format!("{}: no runner: {detail}", lang.id())
        } else {
            format!("{}: {runner} cannot run {detail}", lang.id())
        });
    }
    if !run.trusted() {
        lines.push(tools_core::trust::skipped_line(
            "`run` is refused and the project's own environments are not searched",
        ));
    }
    ToolOutput::text(lines.join("\n"))
}

/// The doctor entries: one per language.
pub fn doctor(run: &Run, cargo: CargoRunner, record: bool) -> Vec<DoctorEntry> {
    LANGUAGES
        .iter()
        .map(|lang| {
            let (ok, runner, detail) = finding(run, *lang, cargo, record);
            DoctorEntry {
                family: "test".into(),
                resource: format!("{}: {runner}", lang.id()),
                ok,
                detail,
            }
        })
        .collect()
}
