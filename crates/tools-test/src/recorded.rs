//! What each test ran, as recorded by this run's earlier `test run`s (see
//! [`crate::recorder`]): per project, the functions each test started, with their lines
//! and the digest of their file's text when recorded. It sees what a static walk cannot
//! (a command run through a test runner's `invoke`, dynamic dispatch, decorators), but
//! only for tests that ran. Kept in memory and in the run's state folder (`recorded.json`),
//! outside the checkout.
//!
//! A write's changed lines are matched by line while the file's text before the write is
//! the text recorded (a write then carries the recorded lines over to its new text, so the
//! next write still matches by line), and by the changed functions' names once the file
//! changed some other way. Functions are kept by their path in the workspace, so a change
//! reaches the tests of every project that ran it (a Cargo workspace's integration tests
//! running a member crate's code through the binary).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub use crate::digest::digest;
use serde::{Deserialize, Serialize};

use crate::TestShared;
use crate::listing::{TestItem, tests_in};
use crate::recorder::Output;
use crate::runner::{Detected, Language, detect};

/// The recorded functions and tests of every project of the run, keyed by the project's
/// folder relative to the workspace (`""` for the workspace itself).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Recorded {
    projects: BTreeMap<String, ProjectRecord>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ProjectRecord {
    functions: Vec<Function>,
    tests: BTreeMap<String, TestRecord>,
}

/// A function as it was when recorded.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Function {
    /// Its file, relative to the workspace, with `/`.
    path: String,
    /// The digest of that file's text its lines belong to.
    digest: String,
    first: usize,
    last: usize,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TestRecord {
    file: String,
    line: usize,
    functions: Vec<usize>,
}

/// A recorded test reaching a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedTest {
    /// Its project's key (see [`project_key`]).
    pub project: String,
    /// Its id, as `list` names it.
    pub id: String,
    /// Its file, relative to the project.
    pub file: String,
    /// The line of its definition when recorded.
    pub line: usize,
}

/// What changed in one file, to match against the recording.
#[derive(Debug)]
pub struct ChangedFile<'a> {
    /// The file, relative to the workspace, with `/`.
    pub file: &'a str,
    /// The digest of its text before the change (see [`digest`]).
    pub old_digest: &'a str,
    /// The changed lines of its text before the change (1-based, inclusive).
    pub old_lines: &'a [(usize, usize)],
    /// The names of the functions changed (of the new text).
    pub names: &'a [String],
}

/// The key of the project in `project_root` in a workspace at `workspace`: its folder
/// relative to the workspace, `""` for the workspace itself.
pub fn project_key(workspace: &Path, project_root: &Path) -> String {
    project_root
        .strip_prefix(workspace)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| project_root.to_string_lossy().into_owned())
}

/// The tests `found` (of any project of the workspace `workspace`; `detected` is the
/// changed file's own, `lang` its language), at their lines now (from their file's own
/// listing, when it still has them); those whose file or project is gone are left out.
/// Each file is read and listed once, however many of its tests were found.
pub fn as_items(
    found: Vec<RecordedTest>,
    workspace: &Path,
    detected: &Detected,
    lang: Language,
) -> Vec<TestItem> {
    let own = project_key(workspace, &detected.root);
    let mut projects: HashMap<String, Option<Detected>> = HashMap::new();
    let mut listed: HashMap<PathBuf, Option<Vec<TestItem>>> = HashMap::new();
    let mut out = Vec::new();
    for t in found {
        let Some(project) = projects
            .entry(t.project.clone())
            .or_insert_with(|| {
                if t.project == own {
                    return Some(detected.clone());
                }
                let root = workspace.join(&t.project);
                detect(&root, workspace, lang)
                    .ok()
                    .filter(|d| d.root == root)
            })
            .as_ref()
        else {
            continue;
        };
        let path = project.root.join(&t.file);
        let Some(listing) = listed.entry(path.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some(tests_in(&path, &text, project))
        }) else {
            continue;
        };
        let line = listing
            .iter()
            .find(|i| i.id == t.id)
            .map_or(t.line, |i| i.line);
        out.push(TestItem {
            path,
            line,
            end: line,
            id: t.id,
        });
    }
    out
}

/// The key of `path`'s project (see [`project_key`]) and `path` relative to the
/// workspace, with `/`: what a change to it is matched by.
pub fn keys_of(workspace: &Path, detected: &Detected, path: &Path) -> (String, String) {
    (
        project_key(workspace, &detected.root),
        tools_core::display_relative(workspace, path).replace('\\', "/"),
    )
}

/// `path` (relative to the project `project`, with `/`; `..` allowed) relative to the
/// workspace; `None` when it leaves the workspace.
fn in_workspace(project: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in project.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Adds to `reach` the tests this run's earlier `test run`s saw running the functions
/// `changed`, or a function using a changed value (`reach.value_users`, taken).
pub(crate) fn add_recorded(
    ctx: &tools_core::CallCtx,
    shared: &TestShared,
    reach: &mut crate::reach::Reach,
    changed: &[crate::changes::ChangedSymbol],
) {
    let users = std::mem::take(&mut reach.value_users);
    reach.add_recorded(recorded_for(ctx, shared, &[changed, &users].concat()));
}

/// The tests this run's earlier `test run`s saw running the functions `changed` (none
/// when recording is off).
pub(crate) fn recorded_for(
    ctx: &tools_core::CallCtx,
    shared: &TestShared,
    changed: &[crate::changes::ChangedSymbol],
) -> Vec<TestItem> {
    if !shared.config.record {
        return Vec::new();
    }
    changed
        .iter()
        .flat_map(|c| {
            reaching_now(
                shared,
                ctx.run.root(),
                &c.path,
                &[(c.line, c.line)],
                std::slice::from_ref(&c.name),
            )
        })
        .collect()
}

/// The recorded tests of `path`'s project that ran its lines `lines` as the file is now (or,
/// once it changed since the recording, its functions `names`), as items; none when the
/// project's runner records nothing or the file cannot be read.
fn reaching_now(
    shared: &TestShared,
    workspace: &Path,
    path: &Path,
    lines: &[(usize, usize)],
    names: &[String],
) -> Vec<TestItem> {
    let Ok((_, detected)) = crate::runner::project_of(path, workspace) else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Some(lang) = Language::of(path) else {
        return Vec::new();
    };
    let (_, file) = keys_of(workspace, &detected, path);
    let found = tools_core::lock_unpoisoned(&shared.recorded).reaching(&ChangedFile {
        file: &file,
        old_digest: &digest(text.as_bytes()),
        old_lines: lines,
        names,
    });
    as_items(found, workspace, &detected, lang)
}

impl Recorded {
    /// Whether anything was recorded for the project `project`.
    pub fn has(&self, project: &str) -> bool {
        self.projects
            .get(project)
            .is_some_and(|p| !p.tests.is_empty())
    }

    /// Whether a function of `file` (relative to the workspace) is recorded, whatever
    /// project's tests ran it.
    pub fn has_file(&self, file: &str) -> bool {
        self.projects
            .values()
            .any(|p| p.functions.iter().any(|f| f.path == file))
    }

    /// Adds what a run recorded for `project` (its paths relative to that project): each
    /// test that ran and passed replaces what was recorded for it before; one that `failed`
    /// adds to it (it stopped at its failure, likely in a change being tried, and ran less
    /// than it does once the code is right again); the others keep theirs. Functions
    /// outside the workspace are left out.
    pub fn merge(&mut self, project: &str, outputs: Vec<Output>, failed: &dyn Fn(&str) -> bool) {
        let entry = self.projects.entry(project.to_string()).or_default();
        let mut tests: BTreeMap<String, (String, usize, Vec<Function>)> = BTreeMap::new();
        for (id, t) in std::mem::take(&mut entry.tests) {
            let functions = t
                .functions
                .iter()
                .filter_map(|i| entry.functions.get(*i).cloned())
                .collect();
            tests.insert(id, (t.file, t.line, functions));
        }
        let mut fresh: BTreeMap<String, (String, usize, Vec<Function>)> = BTreeMap::new();
        for out in outputs {
            for t in out.tests {
                let functions = t.functions.iter().filter_map(|i| {
                    let (path, first, last, name) = out.functions.get(*i)?;
                    Some(Function {
                        path: in_workspace(project, path)?,
                        digest: out.files.get(path).cloned().unwrap_or_default(),
                        first: *first,
                        last: *last,
                        name: name.clone(),
                    })
                });
                // xdist may run one function's parameters in two workers.
                let slot = fresh
                    .entry(t.id)
                    .or_insert_with(|| (t.file.clone(), t.line, Vec::new()));
                slot.2.extend(functions);
            }
        }
        for (id, mut now) in fresh {
            if failed(&id)
                && let Some((_, _, before)) = tests.remove(&id)
            {
                now.2.extend(before);
            }
            tests.insert(id, now);
        }
        let mut index: HashMap<Function, usize> = HashMap::new();
        let mut functions: Vec<Function> = Vec::new();
        for (id, (file, line, fs)) in tests {
            let mut refs: Vec<usize> = fs
                .into_iter()
                .map(|f| {
                    *index.entry(f.clone()).or_insert_with(|| {
                        functions.push(f);
                        functions.len() - 1
                    })
                })
                .collect();
            refs.sort_unstable();
            refs.dedup();
            entry.tests.insert(
                id,
                TestRecord {
                    file,
                    line,
                    functions: refs,
                },
            );
        }
        entry.functions = functions;
    }

    /// The recorded tests, of every project, that ran a function `change` touched.
    pub fn reaching(&self, change: &ChangedFile) -> Vec<RecordedTest> {
        let mut out = Vec::new();
        for (project, p) in &self.projects {
            let hit: Vec<bool> = p
                .functions
                .iter()
                .map(|f| {
                    f.path == change.file
                        && if f.digest == change.old_digest {
                            change
                                .old_lines
                                .iter()
                                .any(|(a, b)| *a <= f.last && f.first <= *b)
                        } else {
                            change.names.contains(&f.name)
                        }
                })
                .collect();
            if !hit.contains(&true) {
                continue;
            }
            out.extend(
                p.tests
                    .iter()
                    .filter(|(_, t)| t.functions.iter().any(|i| hit.get(*i) == Some(&true)))
                    .map(|(id, t)| RecordedTest {
                        project: project.clone(),
                        id: id.clone(),
                        file: t.file.clone(),
                        line: t.line,
                    }),
            );
        }
        out
    }

    /// Carries the recorded lines of `file` (relative to the workspace) over a change whose
    /// texts have the digests `(old, new)` and whose line diff is `ops`, for the functions
    /// recorded against the old text: the next change then still matches by line.
    pub fn carry_over(
        &mut self,
        file: &str,
        (old_digest, new_digest): (&str, &str),
        ops: &[similar::DiffOp],
    ) {
        if old_digest == new_digest {
            return;
        }
        for f in self
            .projects
            .values_mut()
            .flat_map(|p| p.functions.iter_mut())
            .filter(|f| f.path == file && f.digest == old_digest)
        {
            f.first = new_line(ops, f.first, false);
            f.last = new_line(ops, f.last, true).max(f.first);
            f.digest = new_digest.to_string();
        }
    }

    /// Keeps the record in `file` (written whole, then renamed into place).
    pub fn save(&self, file: &Path) -> std::io::Result<()> {
        let part = file.with_extension("json.part");
        std::fs::write(&part, serde_json::to_vec(self)?)?;
        std::fs::rename(&part, file)
    }
}

/// Where line `line` (1-based) of the old text is in the new one: its own place when it
/// was kept, else the first (`last == false`) or last line of what replaced it.
fn new_line(ops: &[similar::DiffOp], line: usize, last: bool) -> usize {
    let at = line.saturating_sub(1);
    for op in ops {
        let old = op.old_range();
        let new = op.new_range();
        let inside = old.contains(&at) || (old.is_empty() && old.start == at);
        if !inside {
            continue;
        }
        if let similar::DiffOp::Equal { .. } = op {
            return new.start + (at - old.start) + 1;
        }
        if old.is_empty() {
            // A pure insertion before this line: look on.
            continue;
        }
        return if last && !new.is_empty() {
            new.end
        } else {
            new.start + 1
        };
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::OutputTest;

    fn output(file_text: &str) -> Output {
        Output {
            files: [("m.py".to_string(), digest(file_text.as_bytes()))].into(),
            functions: vec![
                ("m.py".into(), 1, 2, "a".into()),
                ("m.py".into(), 5, 6, "b".into()),
            ],
            tests: vec![
                OutputTest {
                    id: "t.py::test_a".into(),
                    file: "t.py".into(),
                    line: 3,
                    functions: vec![0],
                },
                OutputTest {
                    id: "t.py::test_b".into(),
                    file: "t.py".into(),
                    line: 7,
                    functions: vec![0, 1],
                },
            ],
        }
    }

    const OLD: &str = "def a():\n    return 1\n\n\ndef b():\n    return a()\n";

    fn ids(found: Vec<RecordedTest>) -> Vec<String> {
        found.into_iter().map(|t| t.id).collect()
    }

    #[test]
    fn a_change_reaches_the_tests_that_ran_its_lines_and_is_carried_over_to_the_next() {
        let mut rec = Recorded::default();
        rec.merge("", vec![output(OLD)], &|_| false);
        let reaching = |rec: &Recorded, old: &str, lines: &[(usize, usize)]| {
            ids(rec.reaching(&ChangedFile {
                file: "m.py",
                old_digest: &digest(old.as_bytes()),
                old_lines: lines,
                names: &[],
            }))
        };
        assert_eq!(reaching(&rec, OLD, &[(6, 6)]), ["t.py::test_b"]);
        assert_eq!(
            reaching(&rec, OLD, &[(2, 2)]),
            ["t.py::test_a", "t.py::test_b"]
        );
        // Two lines added above `b`: its lines move, and a change of them still matches.
        let new = "def a():\n    return 1\n\n\n# one\n# two\ndef b():\n    return a()\n";
        let (from, to) = (digest(OLD.as_bytes()), digest(new.as_bytes()));
        let diff = crate::changes::LineDiff::of(OLD, new);
        rec.carry_over("m.py", (&from, &to), diff.ops());
        assert_eq!(reaching(&rec, new, &[(8, 8)]), ["t.py::test_b"]);
        assert_eq!(reaching(&rec, new, &[(5, 6)]), Vec::<String>::new());
    }

    #[test]
    fn a_file_changed_some_other_way_matches_by_name_and_a_passing_run_replaces_a_tests_record() {
        let mut rec = Recorded::default();
        rec.merge("", vec![output(OLD)], &|_| false);
        let names = ["b".to_string()];
        let other = ChangedFile {
            file: "m.py",
            old_digest: &digest(b"changed elsewhere\n"),
            old_lines: &[(1, 1)],
            names: &names,
        };
        assert_eq!(ids(rec.reaching(&other)), ["t.py::test_b"]);
        // test_b ran again without reaching `b`: failing (one of its parameters), it keeps
        // what it ran before; passing, it replaces it.
        let mut again = output(OLD);
        again.tests = vec![OutputTest {
            id: "t.py::test_b".into(),
            file: "t.py".into(),
            line: 7,
            functions: vec![0],
        }];
        rec.merge("", vec![again.clone()], &|id| id == "t.py::test_b");
        assert_eq!(ids(rec.reaching(&other)), ["t.py::test_b"]);
        rec.merge("", vec![again], &|_| false);
        assert_eq!(ids(rec.reaching(&other)), Vec::<String>::new());
        assert!(rec.has("") && !rec.has("sub"));
    }
}
