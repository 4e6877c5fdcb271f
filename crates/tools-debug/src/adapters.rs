//! The adapter table and its discovery: which debug adapters exist, how each is started,
//! which root markers make it applicable, and whether its binary resolves here.
//!
//! The same code answers `adapters`, `doctor` and `launch`, so what the agent is told is what
//! a launch would do. An adapter is usable only as a **conjunction**: a root marker is found
//! *and* the binary resolves; with one half missing the answer says which half, and where
//! it looked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tools_core::discovery::ProgramSearch;
use tools_core::platform::HOST_OS;

use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

use crate::config::DebugConfig;

mod install_hint;
mod resolve;

pub use resolve::{Discovery, MarkerSearch, discover, resolve_adapter};

/// A debug adapter of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdapterId {
    /// Python: `python -m debugpy.adapter`, over stdio.
    Debugpy,
    /// C, C++, Rust: `lldb-dap` (or a versioned `lldb-dap-NN`), over stdio.
    Lldb,
    /// Go: `dlv dap`, over TCP on 127.0.0.1.
    Delve,
    /// Dart and Flutter: `dart debug_adapter`, over stdio.
    Dart,
}

impl AdapterId {
    /// Every adapter, in the order `adapters` lists them.
    pub const ALL: [AdapterId; 4] = [
        AdapterId::Debugpy,
        AdapterId::Lldb,
        AdapterId::Delve,
        AdapterId::Dart,
    ];

    /// The id used in parameters and configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterId::Debugpy => "debugpy",
            AdapterId::Lldb => "lldb",
            AdapterId::Delve => "delve",
            AdapterId::Dart => "dart",
        }
    }

    /// Parses an id (also a few common aliases: `python`, `lldb-dap`, `go`, `dlv`).
    pub fn parse(s: &str) -> Option<AdapterId> {
        match s.to_ascii_lowercase().as_str() {
            "debugpy" | "python" => Some(AdapterId::Debugpy),
            "lldb" | "lldb-dap" | "c" | "cpp" | "rust" => Some(AdapterId::Lldb),
            "delve" | "dlv" | "go" => Some(AdapterId::Delve),
            "dart" | "flutter" => Some(AdapterId::Dart),
            _ => None,
        }
    }

    /// Whether the adapter speaks DAP over TCP (delve) rather than stdio.
    pub fn uses_tcp(self) -> bool {
        self == AdapterId::Delve
    }

    fn default_markers(self) -> Vec<String> {
        let m: &[&str] = match self {
            AdapterId::Dart => &["pubspec.yaml"],
            AdapterId::Debugpy => &["pyproject.toml", "setup.py", "requirements.txt"],
            AdapterId::Lldb => &["Cargo.toml", "CMakeLists.txt"],
            AdapterId::Delve => &["go.mod"],
        };
        m.iter().map(|s| s.to_string()).collect()
    }
}

impl std::fmt::Display for AdapterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Oldest and newest versioned `lldb-dap-NN` names probed (Debian ships `lldb-dap-19`,
/// `lldb-dap-22`, …).
const LLDB_VERSIONS: std::ops::RangeInclusive<u32> = 11..=40;

/// One adapter's entry: how to start it and where it applies.
#[derive(Debug, Clone)]
pub struct AdapterSpec {
    /// Which adapter.
    pub id: AdapterId,
    /// Candidate commands, tried in order; the first whose program resolves wins.
    pub candidates: Vec<Vec<String>>,
    /// Root markers.
    pub markers: Vec<String>,
    /// Whether the command came from configuration.
    pub configured: bool,
}

impl AdapterSpec {
    fn builtin(id: AdapterId) -> AdapterSpec {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let candidates = match id {
            AdapterId::Debugpy => vec![v(&["python3"]), v(&["python"])],
            AdapterId::Lldb => {
                let mut c = vec![v(&["lldb-dap"])];
                for n in LLDB_VERSIONS.rev() {
                    c.push(vec![format!("lldb-dap-{n}")]);
                }
                c.push(v(&["lldb-vscode"]));
                for n in LLDB_VERSIONS.rev() {
                    c.push(vec![format!("lldb-vscode-{n}")]);
                }
                c
            }
            AdapterId::Delve => vec![v(&["dlv", "dap"])],
            AdapterId::Dart => vec![v(&["dart", "debug_adapter"])],
        };
        AdapterSpec {
            id,
            candidates,
            markers: id.default_markers(),
            configured: false,
        }
    }

    /// How the candidate list reads in a message.
    pub fn looked_for(&self) -> String {
        if self.id == AdapterId::Lldb && !self.configured {
            return format!(
                "lldb-dap, lldb-dap-NN (NN {}…{}), lldb-vscode",
                LLDB_VERSIONS.end(),
                LLDB_VERSIONS.start()
            );
        }
        self.candidates
            .iter()
            .filter_map(|c| c.first().cloned())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The whole table, built from the built-in entries and the `[debug.adapters]` overrides.
#[derive(Debug, Clone)]
pub struct AdapterTable {
    specs: Vec<AdapterSpec>,
}

impl AdapterTable {
    /// The built-in table with `config`'s overrides applied. An override of an unknown id is
    /// a configuration error naming the known ids.
    pub fn from_config(config: &DebugConfig) -> Result<AdapterTable, ToolError> {
        let mut specs: Vec<AdapterSpec> = AdapterId::ALL
            .iter()
            .map(|id| AdapterSpec::builtin(*id))
            .collect();
        for (name, ov) in &config.adapters {
            let Some(id) = AdapterId::parse(name) else {
                return Err(ToolError::invalid(
                    "config",
                    format!(
                        "[debug.adapters.{name}]: unknown adapter; the known ones are debugpy, lldb, delve, dart"
                    ),
                ));
            };
            let Some(spec) = specs.iter_mut().find(|s| s.id == id) else {
                continue;
            };
            if let Some(cmd) = &ov.command {
                if cmd.is_empty() || cmd[0].trim().is_empty() {
                    return Err(ToolError::invalid(
                        "config",
                        format!("[debug.adapters.{name}].command must name a program"),
                    ));
                }
                spec.candidates = vec![cmd.clone()];
                spec.configured = true;
            }
            if let Some(markers) = &ov.markers {
                spec.markers = markers.clone();
            }
        }
        Ok(AdapterTable { specs })
    }

    /// The entry of `id`.
    pub fn spec(&self, id: AdapterId) -> &AdapterSpec {
        // The table always holds every id (built from AdapterId::ALL).
        self.specs
            .iter()
            .find(|s| s.id == id)
            .unwrap_or(&self.specs[0])
    }

    /// Every entry.
    pub fn specs(&self) -> &[AdapterSpec] {
        &self.specs
    }
}

/// Where a marker was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerHit {
    /// The folder holding it (the project root for this adapter).
    pub dir: PathBuf,
    /// Which marker.
    pub marker: String,
}

/// Looks for one of `markers` in `start` and each parent folder up to `root` (inclusive).
pub fn find_marker(start: &Path, markers: &[String], root: &Path) -> Option<MarkerHit> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if !d.starts_with(root) {
            break;
        }
        for m in markers {
            if d.join(m).exists() {
                return Some(MarkerHit {
                    dir: d.to_path_buf(),
                    marker: m.clone(),
                });
            }
        }
        if d == root {
            break;
        }
        dir = d.parent();
    }
    None
}

/// Looks for a marker at `root` and in folders up to two levels below it (skipping hidden
/// folders and build output), for `adapters` and `doctor`, which have no program to start
/// from.
pub fn scan_marker(root: &Path, markers: &[String]) -> Option<MarkerHit> {
    fn walk(dir: &Path, markers: &[String], depth: usize) -> Option<MarkerHit> {
        for m in markers {
            if dir.join(m).exists() {
                return Some(MarkerHit {
                    dir: dir.to_path_buf(),
                    marker: m.clone(),
                });
            }
        }
        if depth == 0 {
            return None;
        }
        let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .filter(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                !n.starts_with('.')
                    && !matches!(
                        n.as_ref(),
                        "target" | "node_modules" | "venv" | "build" | "dist" | "__pycache__"
                    )
            })
            .map(|e| e.path())
            .collect();
        subdirs.sort();
        subdirs
            .iter()
            .take(200)
            .find_map(|d| walk(d, markers, depth - 1))
    }
    walk(root, markers, 2)
}

/// Whether a binary was found, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The command to start, with its program resolved to a path.
    Found {
        /// The resolved program.
        program: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// Where it came from, e.g. `the project's .venv`, `PATH`.
        origin: String,
        /// For debugpy: the interpreter that runs the debuggee (the project's own when it
        /// has one, else the adapter's).
        debuggee_python: Option<PathBuf>,
        /// Remarks on candidates that were passed over (e.g. a .venv without debugpy).
        notes: Vec<String>,
    },
    /// Nothing resolved.
    Missing {
        /// What was looked for and where.
        looked: String,
    },
}

fn path_dirs_text() -> String {
    let dirs: Vec<String> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    let capped = tools_core::text::cap_list(dirs, 8);
    let mut s = capped.shown.join(":");
    if capped.more() > 0 {
        s.push_str(&format!(" and {} more PATH entries", capped.more()));
    }
    if s.is_empty() {
        s = "(PATH is empty)".into();
    }
    format!("PATH ({s})")
}

/// Resolves adapter binaries, caching the (slow) `import debugpy` probe per interpreter.
#[derive(Clone, Default)]
pub struct Resolver {
    import_ok: Arc<Mutex<HashMap<PathBuf, bool>>>,
}

impl Resolver {
    /// A resolver with an empty cache.
    pub fn new() -> Self {
        Resolver::default()
    }

    /// Resolves `spec`'s binary for a project rooted at `project` (the marker folder, or the
    /// workspace root) inside `workspace`.
    pub async fn resolve(
        &self,
        run: &Arc<Run>,
        spec: &AdapterSpec,
        project: &Path,
        workspace: &Path,
    ) -> Resolution {
        if spec.id == AdapterId::Debugpy {
            return self.resolve_debugpy(run, spec, project, workspace).await;
        }
        let search = ProgramSearch::for_run(run);
        let mut refused = Vec::new();
        for cand in &spec.candidates {
            let Some(first) = cand.first() else { continue };
            match search.find_on_path(first, project) {
                Ok(found) => {
                    return Resolution::Found {
                        program: found.path,
                        args: cand[1..].to_vec(),
                        // A bare name comes from `PATH`, or on macOS from the Xcode
                        // command-line tools' folder (`lldb-dap` is not on `PATH` there).
                        origin: if first.contains('/') {
                            "configuration".into()
                        } else {
                            found.origin.to_string()
                        },
                        debuggee_python: None,
                        notes: Vec::new(),
                    };
                }
                Err(why) if why.contains("untrusted workspace") => refused.push(why),
                Err(_) => {}
            }
        }
        let mut looked = format!("looked for {} on {}", spec.looked_for(), path_dirs_text());
        if let Some(dirs) = search.developer_tools_list() {
            looked.push_str(&format!(" and in {dirs}"));
        }
        for why in refused {
            looked.push_str("; ");
            looked.push_str(&why);
        }
        if !spec.configured {
            looked.push_str(&format!(
                "; to install it on {}: {}",
                HOST_OS.name(),
                spec.id.install_hint(HOST_OS)
            ));
        }
        Resolution::Missing { looked }
    }

    async fn resolve_debugpy(
        &self,
        run: &Arc<Run>,
        spec: &AdapterSpec,
        project: &Path,
        workspace: &Path,
    ) -> Resolution {
        // The project's own interpreters come first (trusted runs only): a python on PATH is
        // another environment, and a debuggee run in the wrong one fails like broken code.
        let search = ProgramSearch::for_run(run);
        let project_pythons: Vec<(PathBuf, String)> = if spec.configured {
            Vec::new()
        } else {
            let mut found: Vec<(PathBuf, String)> = Vec::new();
            for dir in [project, workspace] {
                for p in search.project_pythons(dir) {
                    if !found.iter().any(|(q, _)| *q == p.path) {
                        found.push((p.path, p.shown));
                    }
                }
            }
            found
        };
        let mut notes = Vec::new();
        if !spec.configured
            && let Some(skipped) = search.skipped(project)
        {
            notes.push(skipped);
        }
        for (p, rel) in &project_pythons {
            if self.imports_debugpy(run, p).await {
                return Resolution::Found {
                    program: p.clone(),
                    args: vec!["-m".into(), "debugpy.adapter".into()],
                    origin: format!("the project's {rel}"),
                    debuggee_python: Some(p.clone()),
                    notes,
                };
            }
            notes.push(format!(
                "{rel} has no debugpy (install it there with `{} -m pip install debugpy`); \
                 the program still runs on it",
                p.display()
            ));
        }
        let debuggee_python = project_pythons.first().map(|(p, _)| p.clone());
        let mut tried = Vec::new();
        for cand in &spec.candidates {
            let Some(first) = cand.first() else { continue };
            let p = match search.find_on_path(first, project) {
                Ok(found) => found.path,
                Err(why) => {
                    tried.push(format!("{first} ({why})"));
                    continue;
                }
            };
            if self.imports_debugpy(run, &p).await {
                let args = if cand.len() > 1 {
                    cand[1..].to_vec()
                } else {
                    debugpy_adapter_args(search.trusted())
                };
                return Resolution::Found {
                    program: p.clone(),
                    args,
                    origin: if spec.configured {
                        "configuration".into()
                    } else {
                        "PATH".into()
                    },
                    debuggee_python: debuggee_python.or(Some(p)),
                    notes,
                };
            }
            tried.push(format!("{} (no debugpy module)", p.display()));
        }
        let venvs = if spec.configured || !search.trusted() {
            String::new()
        } else {
            ".venv/bin/python and venv/bin/python in the project, then ".to_string()
        };
        let mut looked = format!(
            "looked for a Python with the debugpy module: {venvs}{} on {}; tried: {}; \
             install it with `pip install debugpy`",
            spec.looked_for(),
            path_dirs_text(),
            if tried.is_empty() {
                "nothing".to_string()
            } else {
                tried.join(", ")
            }
        );
        for note in notes {
            looked.push_str("; ");
            looked.push_str(&note);
        }
        Resolution::Missing { looked }
    }

    async fn imports_debugpy(&self, run: &Arc<Run>, python: &Path) -> bool {
        if let Ok(cache) = self.import_ok.lock()
            && let Some(ok) = cache.get(python)
        {
            return *ok;
        }
        // Probed from `/`: `python -c` puts its working folder first on `sys.path`, and a
        // `debugpy.py` planted in the repository must not be what answers (or what runs).
        let mut cmd = tools_core::child_command(run, python);
        cmd.args(["-c", "import debugpy"]).current_dir("/");
        let ok = match ChildProcess::spawn(run, cmd, Pipes::None) {
            Ok(mut child) => matches!(
                tokio::time::timeout(Duration::from_secs(15), child.wait()).await,
                Ok(Ok(s)) if s.success()
            ),
            Err(_) => false,
        };
        if let Ok(mut cache) = self.import_ok.lock() {
            cache.insert(python.to_path_buf(), ok);
        }
        ok
    }
}

/// The arguments that start debugpy's adapter. The adapter runs in the project folder, and
/// `-m` would put that folder first on `sys.path`, so in an untrusted run a `debugpy.py`
/// planted there would be what starts: there the folder is dropped from `sys.path` first.
fn debugpy_adapter_args(trusted: bool) -> Vec<String> {
    if trusted {
        return vec!["-m".into(), "debugpy.adapter".into()];
    }
    vec![
        "-c".into(),
        "import sys; del sys.path[0]; import runpy; \
         runpy.run_module('debugpy.adapter', run_name='__main__', alter_sys=True)"
            .into(),
    ]
}

/// Picks the adapter for a program: `.py` → debugpy, a `.go` file or a folder of Go files →
/// delve, `.dart` → dart, an ELF executable → lldb.
pub fn adapter_for_program(path: &Path) -> Result<AdapterId, String> {
    if path.is_dir() {
        let has_go = std::fs::read_dir(path)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .any(|e| e.path().extension().is_some_and(|x| x == "go"))
            })
            .unwrap_or(false);
        return if has_go {
            Ok(AdapterId::Delve)
        } else {
            Err("it is a folder without Go files; give a script (.py, .dart), a Go package folder or .go file, or an ELF executable".into())
        };
    }
    match path.extension().and_then(|x| x.to_str()) {
        Some("py") | Some("pyw") => return Ok(AdapterId::Debugpy),
        Some("go") => return Ok(AdapterId::Delve),
        Some("dart") => return Ok(AdapterId::Dart),
        _ => {}
    }
    let mut magic = [0u8; 4];
    let is_elf = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .map(|_| &magic == b"\x7fELF")
        .unwrap_or(false);
    if is_elf {
        return Ok(AdapterId::Lldb);
    }
    Err("cannot tell which adapter debugs it: not a .py, .go or .dart file, a Go package folder, or an ELF executable; pass `adapter` to choose one".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_adapter_from_program() {
        let dir = tempfile::tempdir().unwrap();
        let py = dir.path().join("a.py");
        std::fs::write(&py, "print(1)").unwrap();
        assert_eq!(adapter_for_program(&py), Ok(AdapterId::Debugpy));
        let go_dir = dir.path().join("g");
        std::fs::create_dir(&go_dir).unwrap();
        assert!(adapter_for_program(&go_dir).is_err());
        std::fs::write(go_dir.join("main.go"), "package main").unwrap();
        assert_eq!(adapter_for_program(&go_dir), Ok(AdapterId::Delve));
        let elf = dir.path().join("bin");
        std::fs::write(&elf, b"\x7fELF\x02\x01\x01").unwrap();
        assert_eq!(adapter_for_program(&elf), Ok(AdapterId::Lldb));
        let txt = dir.path().join("notes.txt");
        std::fs::write(&txt, "hello").unwrap();
        assert!(adapter_for_program(&txt).unwrap_err().contains("adapter"));
    }

    #[test]
    fn markers_walk_up_to_the_root_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(dir.path().join("go.mod"), "").unwrap();
        let markers = vec!["go.mod".to_string()];
        assert_eq!(find_marker(&root.join("a/b"), &markers, &root), None);
        std::fs::write(root.join("a/go.mod"), "").unwrap();
        let hit = find_marker(&root.join("a/b"), &markers, &root).unwrap();
        assert_eq!(hit.dir, root.join("a"));
        assert_eq!(scan_marker(&root, &markers).unwrap().dir, root.join("a"));
    }

    #[test]
    fn overrides_replace_command_and_markers() {
        let mut cfg = DebugConfig::default();
        cfg.adapters.insert(
            "lldb".into(),
            crate::config::AdapterOverride {
                command: Some(vec!["lldb-dap-19".into()]),
                markers: Some(vec!["Makefile".into()]),
            },
        );
        let t = AdapterTable::from_config(&cfg).unwrap();
        let s = t.spec(AdapterId::Lldb);
        assert_eq!(s.candidates, vec![vec!["lldb-dap-19".to_string()]]);
        assert_eq!(s.markers, vec!["Makefile".to_string()]);
        assert_eq!(s.looked_for(), "lldb-dap-19");
        cfg.adapters.insert("gdb".into(), Default::default());
        assert!(AdapterTable::from_config(&cfg).is_err());
        let builtin = AdapterTable::from_config(&DebugConfig::default()).unwrap();
        assert!(
            builtin
                .spec(AdapterId::Lldb)
                .candidates
                .iter()
                .any(|c| c[0] == "lldb-dap-19")
        );
        assert!(
            builtin
                .spec(AdapterId::Lldb)
                .candidates
                .iter()
                .any(|c| c[0] == "lldb-dap-22")
        );
    }
}
