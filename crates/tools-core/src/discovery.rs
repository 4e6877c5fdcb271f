//! Where a program may be found: the one place that decides, so the language-server,
//! debug-adapter and kernel discovery cannot disagree about workspace trust.
//!
//! Trusted run: the project's own binary folders ([`LOCAL_BIN_DIRS`], from the project root
//! up to the workspace root) come before `$PATH`, and the project's own interpreters
//! (`.venv/bin/python`, `venv/bin/python`) before one on `$PATH`: a server or kernel from
//! another environment answers about other packages.
//!
//! Untrusted run (see [`crate::trust`]): nothing inside the workspace is executed. Project
//! binary folders and interpreters are not searched, a `$PATH` entry that is relative or lies
//! inside the workspace is dropped, and a program given as a path inside the workspace is
//! refused. What was skipped is said in one line ([`ProgramSearch::skipped`]).
//!
//! Trusted or not, the per-user server cache ([`server_cache_root`], where
//! `agent-tools servers install` puts language servers) is searched after `$PATH`: it is the
//! user's, not the repository's, and a program the user installed on purpose wins over it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::Run;
use crate::process::is_executable;
use crate::trust::skipped_line;

/// The project-local binary folders, in order of preference (a virtual environment keeps its
/// programs in `Scripts` on Windows; npm's `.bin` holds `.cmd` launchers there).
pub const LOCAL_BIN_DIRS: [&str; 3] = crate::platform::LOCAL_BIN_DIRS;

/// The files a program called `name` may be in `dir`, in the order this OS tries them
/// (on Windows `name.exe`, `name.cmd`, … by `PATHEXT`: npm installs servers as `.cmd`
/// launchers).
fn program_in(dir: &Path, name: &str) -> Option<PathBuf> {
    crate::platform::program_file_names(name)
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| is_executable(p))
}

/// The project-local virtual environments, in order of preference.
pub const VENV_DIRS: [&str; 2] = [".venv", "venv"];

/// The per-user server cache: the tools' cache folder's `servers`
/// ([`crate::platform::user_folder`]: on Linux `$XDG_CACHE_HOME/agent-tools/servers`, else
/// `$HOME/.cache/agent-tools/servers`; `~/Library/Caches/agent-tools/servers` on macOS;
/// `%LOCALAPPDATA%\agent-tools\cache\servers` on Windows). `None` when no cache folder
/// can be named (on Linux: neither variable set, or the XDG one relative, which the XDG
/// rules say to ignore).
pub fn server_cache_root() -> Option<PathBuf> {
    crate::platform::user_folder(crate::platform::UserFolder::Cache).map(|c| c.join("servers"))
}

/// The `bin` folders of the completed installs in `cache` (folders named `MANAGER-PACKAGE@VERSION`),
/// by package, the newest version of each first (so after a pin moves on, the new install
/// wins over the one left behind). An install in progress lives in a folder whose name
/// starts with `.`, so it is never searched before it is complete.
pub fn cache_bin_dirs(cache: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    let mut dirs: Vec<(String, Vec<VersionPart>, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let bin = e.path().join("bin");
            (!name.starts_with('.') && bin.is_dir()).then(|| {
                let (package, version) = name.rsplit_once('@').unwrap_or((&name, ""));
                (package.to_string(), version_parts(version), bin)
            })
        })
        .collect();
    dirs.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    dirs.into_iter().map(|(_, _, bin)| bin).collect()
}

/// One dot- or dash-separated part of a version: numbers compare as numbers, and a number
/// sorts after text (`1.0.0` after `1.0.0-rc1`'s `rc1` at the same place).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum VersionPart {
    Text(String),
    Number(u64),
}

fn version_parts(version: &str) -> Vec<VersionPart> {
    version
        .trim_start_matches('v')
        .split(['.', '-', '+'])
        .map(|p| match p.parse::<u64>() {
            Ok(n) => VersionPart::Number(n),
            Err(_) => VersionPart::Text(p.to_string()),
        })
        .collect()
}

/// `name` in the bin folders of the user's server cache, for lookups that happen outside a
/// run's [`ProgramSearch`] (the cache is the user's, so trust does not matter here).
pub fn find_in_server_cache(name: &str) -> Option<PathBuf> {
    if name.is_empty() || crate::platform::is_path_like(name) {
        return None;
    }
    cache_bin_dirs(&server_cache_root()?)
        .into_iter()
        .find_map(|d| program_in(&d, name))
}

/// Where a found program came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A project-local folder, e.g. `.venv/bin` (relative to the workspace root).
    Project(String),
    /// A `$PATH` entry.
    Path,
    /// A path given as such (by the configuration or the caller).
    Given,
    /// The per-user server cache (`agent-tools servers install`).
    Cache,
    /// The folder where the OS keeps the developer tools it installs (macOS: the Xcode
    /// command-line tools).
    DeveloperTools(String),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Project(dir) => write!(f, "the project's {dir}"),
            Origin::Path => f.write_str("PATH"),
            Origin::Given => f.write_str("the configured path"),
            Origin::Cache => f.write_str("the server cache"),
            Origin::DeveloperTools(dir) => write!(f, "the OS's developer tools ({dir})"),
        }
    }
}

/// A program that may be run, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundProgram {
    /// The executable.
    pub path: PathBuf,
    /// Where it came from.
    pub origin: Origin,
}

/// A project interpreter (`.venv/bin/python`) of a trusted run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPython {
    /// The interpreter.
    pub path: PathBuf,
    /// Its path relative to the workspace root, for messages.
    pub shown: String,
}

/// The program search of one run: its workspace root and whether it is trusted.
#[derive(Debug, Clone)]
pub struct ProgramSearch {
    workspace: PathBuf,
    trusted: bool,
    server_cache: Option<PathBuf>,
    /// Where the OS keeps its own developer tools off `PATH`, searched after it.
    developer_tools: Vec<PathBuf>,
}

impl ProgramSearch {
    /// The search for `run` (its root and trust).
    pub fn for_run(run: &Run) -> Self {
        ProgramSearch::new(run.root(), run.trusted())
    }

    /// A search for a workspace at `workspace`, trusted or not.
    pub fn new(workspace: &Path, trusted: bool) -> Self {
        ProgramSearch {
            workspace: workspace
                .canonicalize()
                .unwrap_or_else(|_| workspace.to_path_buf()),
            trusted,
            server_cache: server_cache_root(),
            developer_tools: crate::platform::DEVELOPER_TOOL_DIRS
                .iter()
                .map(PathBuf::from)
                .collect(),
        }
    }

    /// This search with `dirs` as the OS's developer tool folders (tests stand one in for
    /// macOS's Xcode command-line tools).
    pub fn with_developer_tools(mut self, dirs: Vec<PathBuf>) -> Self {
        self.developer_tools = dirs;
        self
    }

    /// The OS's developer tool folders searched after `$PATH` (those outside the
    /// workspace, for an untrusted run).
    fn developer_tool_dirs(&self) -> Vec<PathBuf> {
        self.developer_tools
            .iter()
            .filter(|d| self.trusted || !self.inside_workspace(d))
            .cloned()
            .collect()
    }

    /// This search with `cache` as the server cache (`None`: no cache is searched).
    pub fn with_server_cache(mut self, cache: Option<PathBuf>) -> Self {
        self.server_cache = cache;
        self
    }

    /// The server cache this search uses, if any.
    pub fn server_cache(&self) -> Option<&Path> {
        self.server_cache.as_deref()
    }

    /// The `bin` folders of the server cache searched after `$PATH`. An untrusted run drops a
    /// cache that lies inside the workspace (an `XDG_CACHE_HOME` pointing into it).
    pub fn cache_dirs(&self) -> Vec<PathBuf> {
        match &self.server_cache {
            Some(c) if self.trusted || !self.inside_workspace(c) => cache_bin_dirs(c),
            _ => Vec::new(),
        }
    }

    /// Whether project-local programs may run.
    pub fn trusted(&self) -> bool {
        self.trusted
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    fn inside_workspace(&self, p: &Path) -> bool {
        let abs = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        abs.starts_with(&self.workspace)
    }

    /// `project` and each parent up to the workspace root (only `project` when it lies
    /// outside the workspace).
    fn project_chain<'a>(&self, project: &'a Path) -> Vec<&'a Path> {
        let mut out = Vec::new();
        let mut cur = Some(project);
        while let Some(d) = cur {
            out.push(d);
            if d == self.workspace || !d.starts_with(&self.workspace) {
                break;
            }
            cur = d.parent();
        }
        out
    }

    /// The project-local binary folders searched for a project at `project`, nearest first.
    /// Empty for an untrusted run.
    pub fn local_bin_dirs(&self, project: &Path) -> Vec<PathBuf> {
        if !self.trusted {
            return Vec::new();
        }
        self.project_chain(project)
            .into_iter()
            .flat_map(|d| LOCAL_BIN_DIRS.iter().map(move |b| d.join(b)))
            .collect()
    }

    /// The `$PATH` entries a program may come from. An untrusted run drops relative entries
    /// and entries inside the workspace (a `PATH` with `.` or `./bin` in it would otherwise
    /// run the repository's programs).
    pub fn path_dirs(&self) -> Vec<PathBuf> {
        match std::env::var_os("PATH") {
            Some(path) => self.usable_dirs_of(&path),
            None => Vec::new(),
        }
    }

    /// The entries of a `PATH` value this search may use.
    fn usable_dirs_of(&self, path: &std::ffi::OsStr) -> Vec<PathBuf> {
        std::env::split_paths(path)
            .filter(|d| self.trusted || (d.is_absolute() && !self.inside_workspace(d)))
            .collect()
    }

    /// Every folder searched for a bare program name, in order.
    pub fn search_dirs(&self, project: &Path) -> Vec<PathBuf> {
        let mut dirs = self.local_bin_dirs(project);
        dirs.extend(self.path_dirs());
        dirs.extend(self.developer_tool_dirs());
        dirs.extend(self.cache_dirs());
        dirs
    }

    /// The `PATH` a child started for `project` gets: the existing project-local binary
    /// folders (trusted runs only) before the usable `$PATH` entries, so a server that starts
    /// helpers finds the same ones.
    pub fn child_path(&self, project: &Path) -> OsString {
        let mut dirs: Vec<PathBuf> = self
            .local_bin_dirs(project)
            .into_iter()
            .filter(|d| d.is_dir())
            .collect();
        dirs.extend(self.path_dirs());
        dirs.extend(self.developer_tool_dirs());
        dirs.extend(self.cache_dirs());
        std::env::join_paths(dirs).unwrap_or_default()
    }

    /// Finds `program` for a project at `project`: a bare name through
    /// [`ProgramSearch::search_dirs`], a name with a `/` as a path (relative to `project`).
    /// An untrusted run refuses a path inside the workspace; the error says why.
    pub fn find(&self, program: &str, project: &Path) -> Result<FoundProgram, String> {
        if program.is_empty() {
            return Err("the program name is empty".into());
        }
        if crate::platform::is_path_like(program) {
            let p = if Path::new(program).is_absolute() {
                PathBuf::from(program)
            } else {
                project.join(program)
            };
            if !self.trusted && self.inside_workspace(&p) {
                return Err(skipped_line(&format!(
                    "`{program}` lies inside the workspace and was not run"
                )));
            }
            return if is_executable(&p) {
                Ok(FoundProgram {
                    path: p,
                    origin: Origin::Given,
                })
            } else {
                Err(format!("`{program}` is not an executable file"))
            };
        }
        let local = self.local_bin_dirs(project);
        for d in &local {
            if let Some(p) = program_in(d, program) {
                return Ok(FoundProgram {
                    origin: Origin::Project(self.shown(d)),
                    path: p,
                });
            }
        }
        for d in self.path_dirs() {
            if let Some(p) = program_in(&d, program) {
                return Ok(FoundProgram {
                    path: p,
                    origin: Origin::Path,
                });
            }
        }
        if let Some(found) = self.in_developer_tools(program) {
            return Ok(found);
        }
        for d in self.cache_dirs() {
            if let Some(p) = program_in(&d, program) {
                return Ok(FoundProgram {
                    path: p,
                    origin: Origin::Cache,
                });
            }
        }
        Err(format!(
            "`{program}` was not found in {}",
            self.where_text(project)
        ))
    }

    /// `program` in the OS's developer tool folders, if one holds it.
    fn in_developer_tools(&self, program: &str) -> Option<FoundProgram> {
        self.developer_tool_dirs().into_iter().find_map(|d| {
            program_in(&d, program).map(|path| FoundProgram {
                path,
                origin: Origin::DeveloperTools(d.display().to_string()),
            })
        })
    }

    /// As [`ProgramSearch::find`], but a bare name is looked up on the usable `$PATH`
    /// entries, then the OS's developer tool folders, only (for programs no project installs
    /// locally, such as debug adapters).
    pub fn find_on_path(&self, program: &str, project: &Path) -> Result<FoundProgram, String> {
        if crate::platform::is_path_like(program) || program.is_empty() {
            return self.find(program, project);
        }
        self.path_dirs()
            .into_iter()
            .find_map(|d| program_in(&d, program))
            .map(|path| FoundProgram {
                path,
                origin: Origin::Path,
            })
            .or_else(|| self.in_developer_tools(program))
            .ok_or_else(|| match self.developer_tools_list() {
                Some(dirs) => format!("`{program}` is not on PATH nor in {dirs}"),
                None => format!("`{program}` is not on PATH"),
            })
    }

    /// The OS's developer tool folders searched after `$PATH`, in words (`None` where the
    /// OS has none).
    pub fn developer_tools_list(&self) -> Option<String> {
        let dirs = self.developer_tool_dirs();
        (!dirs.is_empty()).then(|| {
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// Where a bare name is looked for, in words, e.g. `./{.venv/bin,venv/bin,node_modules/.bin}
    /// (and the same under each parent up to the workspace root), then $PATH, then the server
    /// cache`.
    pub fn where_text(&self, project: &Path) -> String {
        let tools = self
            .developer_tools_list()
            .map(|dirs| format!(", then the OS's developer tools ({dirs})"))
            .unwrap_or_default();
        if self.trusted {
            format!(
                "{}/{{{}}} (and the same under each parent up to the workspace root), then $PATH{tools}, then the server cache",
                self.shown(project),
                LOCAL_BIN_DIRS.join(",")
            )
        } else {
            format!(
                "$PATH outside the workspace{tools}, then the server cache (untrusted workspace: project-local folders are not searched)"
            )
        }
    }

    /// The project's own interpreters (`.venv/bin/python`, `venv/bin/python`, from
    /// `project` up to the workspace root), nearest first. Empty for an untrusted run.
    pub fn project_pythons(&self, project: &Path) -> Vec<ProjectPython> {
        if !self.trusted {
            return Vec::new();
        }
        let mut out: Vec<ProjectPython> = Vec::new();
        for d in self.project_chain(project) {
            for venv in VENV_DIRS {
                let programs = d.join(venv).join(crate::platform::VENV_PROGRAMS);
                let Some(p) = program_in(&programs, "python") else {
                    continue;
                };
                if !out.iter().any(|q| q.path == p) {
                    out.push(ProjectPython {
                        shown: self.shown(&p),
                        path: p,
                    });
                }
            }
        }
        out
    }

    /// For an untrusted run: one line naming the project-local programs that exist for
    /// `project` but were not considered (`None` when trusted or when there are none).
    pub fn skipped(&self, project: &Path) -> Option<String> {
        if self.trusted {
            return None;
        }
        let trusted_view = ProgramSearch {
            workspace: self.workspace.clone(),
            trusted: true,
            server_cache: None,
            developer_tools: Vec::new(),
        };
        let present: Vec<String> = trusted_view
            .local_bin_dirs(project)
            .into_iter()
            .filter(|d| d.is_dir())
            .map(|d| self.shown(&d))
            .collect();
        (!present.is_empty()).then(|| {
            skipped_line(&format!(
                "project-local programs ({}) were not run",
                present.join(", ")
            ))
        })
    }

    /// `p` relative to the workspace (`.` for the root itself), absolute outside it.
    fn shown(&self, p: &Path) -> String {
        // The workspace is canonical (on Windows with the verbatim `\\?\` prefix), a project
        // folder as the caller spelled it: the canonical form of `p` is tried too.
        let canonical = p.canonicalize().ok();
        let relative = p.strip_prefix(&self.workspace).ok().or_else(|| {
            canonical
                .as_deref()
                .and_then(|c| c.strip_prefix(&self.workspace).ok())
        });
        match relative {
            Some(r) if r.as_os_str().is_empty() => ".".into(),
            Some(r) => r.display().to_string(),
            None => p.display().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    // Programs are found by their mode bits here; on Windows by `PATHEXT`.
    #[cfg(unix)]
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    /// npm installs a server in `node_modules/.bin` as a `.cmd` launcher, and a virtual
    /// environment keeps its interpreter in `Scripts`: both found by their bare names.
    #[cfg(windows)]
    #[test]
    fn npm_launchers_and_a_venvs_scripts_are_found_by_bare_name() {
        use super::*;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let bin = ws.join("node_modules").join(".bin");
        std::fs::create_dir_all(&bin).unwrap();
        // npm's shims: one without an extension (for POSIX shells) and the `.cmd` one.
        std::fs::write(bin.join("pyright-langserver"), "#!/bin/sh\n").unwrap();
        std::fs::write(bin.join("pyright-langserver.cmd"), "@echo off\r\n").unwrap();
        let scripts = ws.join(".venv").join("Scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        std::fs::write(scripts.join("python.exe"), "").unwrap();
        let search = ProgramSearch::new(ws, true).with_server_cache(None);
        let found = search.find("pyright-langserver", ws).unwrap();
        assert_eq!(found.path, bin.join("pyright-langserver.cmd"));
        // Its origin is the project's folder, relative to the workspace (which is
        // canonical, with Windows' verbatim prefix, while the project path is not).
        assert_eq!(found.origin, Origin::Project(r"node_modules\.bin".into()));
        let pythons = search.project_pythons(ws);
        assert_eq!(pythons.len(), 1, "{pythons:?}");
        assert_eq!(pythons[0].path, scripts.join("python.exe"));
        assert!(search.find("missing-server", ws).is_err());
    }

    #[cfg(unix)]
    fn exe(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// macOS keeps `lldb-dap`, `clangd` and `sourcekit-lsp` in the Xcode command-line tools'
    /// folder, off `PATH`: a program missing from `PATH` is found there (a folder stands in
    /// for it), after `PATH`, and said so; a folder inside an untrusted workspace is not
    /// searched.
    #[cfg(unix)]
    #[test]
    fn the_oss_developer_tools_are_found_after_path_and_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let tools = dir.path().join("CommandLineTools/usr/bin");
        exe(&tools.join("lldb-dap-for-tests"));
        exe(&tools.join("sh"));
        let search = ProgramSearch::new(&ws, false)
            .with_server_cache(None)
            .with_developer_tools(vec![tools.clone()]);
        let origin = Origin::DeveloperTools(tools.display().to_string());
        for found in [
            search.find("lldb-dap-for-tests", &ws).unwrap(),
            search.find_on_path("lldb-dap-for-tests", &ws).unwrap(),
        ] {
            assert_eq!(
                found,
                FoundProgram {
                    path: tools.join("lldb-dap-for-tests"),
                    origin: origin.clone()
                }
            );
        }
        assert_eq!(
            origin.to_string(),
            format!("the OS's developer tools ({})", tools.display())
        );
        // `PATH` first: its `sh` wins.
        assert_eq!(search.find("sh", &ws).unwrap().origin, Origin::Path);
        assert_eq!(
            search.find_on_path("no-such-tool", &ws).unwrap_err(),
            format!("`no-such-tool` is not on PATH nor in {}", tools.display())
        );
        assert_eq!(
            search.where_text(&ws),
            format!(
                "$PATH outside the workspace, then the OS's developer tools ({}), then the server cache (untrusted workspace: project-local folders are not searched)",
                tools.display()
            )
        );
        // A developer tools folder planted inside an untrusted workspace runs nothing.
        let planted = ws.join("tools");
        exe(&planted.join("lldb-dap-for-tests"));
        let inside = ProgramSearch::new(&ws, false)
            .with_server_cache(None)
            .with_developer_tools(vec![planted]);
        assert_eq!(
            inside.find_on_path("lldb-dap-for-tests", &ws).unwrap_err(),
            "`lldb-dap-for-tests` is not on PATH"
        );
    }

    #[cfg(unix)]
    #[test]
    fn trusted_runs_prefer_project_folders_untrusted_runs_never_use_them() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let sub = ws.join("pkg");
        std::fs::create_dir_all(&sub).unwrap();
        exe(&ws.join(".venv/bin/sh"));
        exe(&ws.join("venv/bin/python"));
        exe(&ws.join("node_modules/.bin/planted"));

        let trusted = ProgramSearch::new(&ws, true);
        let found = trusted.find("sh", &sub).unwrap();
        assert_eq!(found.path, ws.join(".venv/bin/sh"));
        assert_eq!(found.origin, Origin::Project(".venv/bin".into()));
        assert_eq!(trusted.project_pythons(&sub).len(), 1);
        assert!(trusted.find("planted", &sub).is_ok());
        assert!(trusted.skipped(&sub).is_none());

        let untrusted = ProgramSearch::new(&ws, false);
        let sh = untrusted.find("sh", &sub).unwrap();
        assert_eq!(sh.origin, Origin::Path);
        assert!(!sh.path.starts_with(&ws));
        assert!(untrusted.project_pythons(&sub).is_empty());
        let err = untrusted.find("planted", &sub).unwrap_err();
        assert!(err.contains("untrusted workspace"), "{err}");
        let err = untrusted
            .find("./node_modules/.bin/planted", &ws)
            .unwrap_err();
        assert!(err.contains("--trust"), "{err}");
        let line = untrusted.skipped(&sub).unwrap();
        assert!(
            line.contains(".venv/bin") && line.contains("--trust"),
            "{line}"
        );
        assert!(
            untrusted
                .child_path(&sub)
                .to_str()
                .unwrap()
                .split(':')
                .all(|d| !d.starts_with(ws.to_str().unwrap()))
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_server_cache_comes_after_path_and_skips_installs_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let cache = dir.path().canonicalize().unwrap().join("cache");
        exe(&cache.join("npm-demo@1.0.0/bin/demo-cached-server"));
        exe(&cache.join(".tmp-npm-half@1.0.0-1/bin/half-made-server"));
        exe(&cache.join("npm-demo@1.0.0/bin/sh"));
        exe(&cache.join("npm-demo@1.10.0/bin/demo-cached-server"));
        exe(&cache.join("npm-demo@1.9.0/bin/demo-cached-server"));
        for trusted in [false, true] {
            let search = ProgramSearch::new(&ws, trusted).with_server_cache(Some(cache.clone()));
            let found = search.find("demo-cached-server", &ws).unwrap();
            assert_eq!(found.origin, Origin::Cache);
            // The newest install of a package first: 1.10.0 over 1.9.0 over 1.0.0.
            assert_eq!(
                found.path,
                cache.join("npm-demo@1.10.0/bin/demo-cached-server")
            );
            assert!(search.find("half-made-server", &ws).is_err());
            // PATH first: the cache never shadows what the user has.
            assert_eq!(search.find("sh", &ws).unwrap().origin, Origin::Path);
            let child_path = search.child_path(&ws);
            assert!(
                child_path.to_string_lossy().ends_with(&format!(
                    "npm-demo@1.9.0/bin:{}",
                    cache.join("npm-demo@1.0.0/bin").display()
                )),
                "{child_path:?}"
            );
        }
        // A cache inside an untrusted workspace is the repository's, not the user's.
        let planted = ws.join("cache");
        exe(&planted.join("npm-x@1/bin/planted-server"));
        let untrusted = ProgramSearch::new(&ws, false).with_server_cache(Some(planted.clone()));
        assert!(untrusted.find("planted-server", &ws).is_err());
        let trusted = ProgramSearch::new(&ws, true).with_server_cache(Some(planted));
        assert!(trusted.find("planted-server", &ws).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn untrusted_runs_drop_path_entries_inside_the_workspace_and_relative_ones() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("bin")).unwrap();
        let path = std::env::join_paths([
            ws.join("bin"),
            PathBuf::from("."),
            PathBuf::from("/usr/bin"),
            ws.join("missing/../bin"),
        ])
        .unwrap();
        assert_eq!(
            ProgramSearch::new(&ws, false).usable_dirs_of(&path),
            [PathBuf::from("/usr/bin")]
        );
        assert_eq!(ProgramSearch::new(&ws, true).usable_dirs_of(&path).len(), 4);
    }
}
