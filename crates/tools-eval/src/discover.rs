//! Which interpreter a kernel runs, and why: the same code answers `doctor` and starts the
//! kernels, so what `doctor` says is what a cell gets.
//!
//! Python: `[eval] python` from the configuration, else the project's own `.venv/bin/python`
//! or `venv/bin/python` (the environment the project's code expects), else `python3` on
//! `$PATH`. A `python3` on `$PATH` that is a launcher script (a pyenv shim costs about 90 ms
//! per start) is resolved once to the real executable it runs. JavaScript: `[eval] node`,
//! else `node` on `$PATH`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tools_core::process::is_executable;
pub use tools_core::process::which;

use crate::Language;

/// An interpreter found for a kernel, with the reason it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The executable to start.
    pub path: PathBuf,
    /// Why this one, in words for `doctor` and for error messages.
    pub why: String,
}

/// Whether `p` is a `#!` script rather than a binary (a shim or launcher).
fn is_script(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .map(|_| &head == b"#!")
        .unwrap_or(false)
}

/// Resolves a launcher script to the interpreter it runs (`sys.executable`), once per
/// process and workspace: the lookup itself pays the launcher's start-up cost. It runs in
/// the workspace, where a launcher such as pyenv picks its version (`.python-version`).
fn resolve_python_launcher(p: &Path, root: &Path) -> Option<PathBuf> {
    type Cache = Mutex<HashMap<(PathBuf, PathBuf), Option<PathBuf>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (p.to_path_buf(), root.to_path_buf());
    if let Ok(c) = cache.lock()
        && let Some(hit) = c.get(&key)
    {
        return hit.clone();
    }
    let resolved = std::process::Command::new(p)
        .args(["-c", "import sys; print(sys.executable)"])
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()))
        .filter(|real| is_executable(real));
    if let Ok(mut c) = cache.lock() {
        c.insert(key, resolved.clone());
    }
    resolved
}

fn configured(root: &Path, given: &Path, what: &str) -> Result<Interpreter, String> {
    let candidate = if given.is_absolute() {
        Some(given.to_path_buf())
    } else if given.components().count() > 1 {
        Some(root.join(given))
    } else {
        which(&given.to_string_lossy())
    };
    match candidate {
        Some(p) if is_executable(&p) => Ok(Interpreter {
            why: format!("[eval] {what} in agent-tools.toml"),
            path: p,
        }),
        _ => Err(format!(
            "[eval] {what} = {:?} in agent-tools.toml is not an executable file",
            given.display().to_string()
        )),
    }
}

/// The Python interpreter for a workspace at `root`, or why there is none.
pub fn find_python(root: &Path, configured_path: Option<&Path>) -> Result<Interpreter, String> {
    if let Some(given) = configured_path {
        return configured(root, given, "python");
    }
    for venv in [".venv", "venv"] {
        let p = root.join(venv).join("bin").join("python");
        if is_executable(&p) {
            return Ok(Interpreter {
                path: p,
                why: format!("the project's own virtual environment ({venv}/)"),
            });
        }
    }
    let Some(found) = which("python3") else {
        return Err(
            "no .venv/bin/python or venv/bin/python in the workspace and no python3 on PATH".into(),
        );
    };
    if is_script(&found) {
        return match resolve_python_launcher(&found, root) {
            Some(real) => Ok(Interpreter {
                why: format!(
                    "python3 on PATH ({} is a launcher script, resolved to the interpreter it runs)",
                    found.display()
                ),
                path: real,
            }),
            None => Ok(Interpreter {
                why: "python3 on PATH (a launcher script that could not be resolved; each start pays its cost)".to_string(),
                path: found,
            }),
        };
    }
    Ok(Interpreter {
        path: found,
        why: "python3 on PATH (no .venv/ or venv/ in the workspace)".into(),
    })
}

/// The Node.js executable, or why there is none.
pub fn find_node(root: &Path, configured_path: Option<&Path>) -> Result<Interpreter, String> {
    if let Some(given) = configured_path {
        return configured(root, given, "node");
    }
    match which("node") {
        Some(p) => Ok(Interpreter {
            path: p,
            why: "node on PATH".into(),
        }),
        None => Err("no node on PATH".into()),
    }
}

/// The interpreter for `language`.
pub fn find(
    language: Language,
    root: &Path,
    config: &crate::EvalConfig,
) -> Result<Interpreter, String> {
    match language {
        Language::Python => find_python(root, config.python.as_deref()),
        Language::Javascript => find_node(root, config.node.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn exe(p: &Path, body: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn prefers_the_project_venv_then_config() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv/bin/python");
        exe(&venv, "\x7fELF");
        let found = find_python(dir.path(), None).unwrap();
        assert_eq!(found.path, venv);
        assert!(found.why.contains("venv/"));
        let dotvenv = dir.path().join(".venv/bin/python");
        exe(&dotvenv, "\x7fELF");
        assert_eq!(find_python(dir.path(), None).unwrap().path, dotvenv);
        let custom = dir.path().join("tools/py");
        exe(&custom, "\x7fELF");
        let found = find_python(dir.path(), Some(Path::new("tools/py"))).unwrap();
        assert_eq!(found.path, custom);
        assert!(found.why.contains("agent-tools.toml"));
        let err = find_python(dir.path(), Some(Path::new("nope/py"))).unwrap_err();
        assert!(err.contains("not an executable"), "{err}");
    }

    #[test]
    fn detects_launcher_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let shim = dir.path().join("shim");
        exe(&shim, "#!/bin/sh\nexec true\n");
        assert!(is_script(&shim));
        let bin = dir.path().join("bin");
        exe(&bin, "\x7fELF....");
        assert!(!is_script(&bin));
        // A launcher is asked once for the interpreter it runs, in the workspace.
        let launcher = dir.path().join("python3");
        exe(&launcher, "#!/bin/sh\necho \"$PWD/real\"\n");
        let real = dir.path().join("real");
        exe(&real, "\x7fELF....");
        assert_eq!(resolve_python_launcher(&launcher, dir.path()), Some(real));
        let broken = dir.path().join("broken");
        exe(&broken, "#!/bin/sh\nexit 1\n");
        assert_eq!(resolve_python_launcher(&broken, dir.path()), None);
    }
}
