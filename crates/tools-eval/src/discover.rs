//! Which interpreter a kernel runs, and why: the same code answers `doctor` and starts the
//! kernels, so what `doctor` says is what a cell gets.
//!
//! Python: `[eval] python` from the configuration, else the project's own `.venv/bin/python`
//! or `venv/bin/python` (the environment the project's code expects; trusted runs only, see
//! [`tools_core::discovery`]), else `python3` on `$PATH`. A `python3` on `$PATH` that is a
//! launcher script (a pyenv shim costs about 90 ms per start) is resolved once to the real
//! executable it runs. JavaScript: `[eval] node`, else `node` on `$PATH`. An untrusted run
//! never picks an interpreter inside the workspace (and says so: what a cell itself
//! imports from the workspace is still the cell's own code).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use tools_core::child_env::{ChildKind, EnvPolicy};
use tools_core::discovery::ProgramSearch;
use tools_core::process::is_executable;

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
/// process and workspace: the lookup itself pays the launcher's start-up cost. In a trusted
/// run it runs in the workspace, where a launcher such as pyenv picks its version
/// (`.python-version`); in an untrusted one from `/`, isolated (`-I`), so nothing of the
/// repository is read. Either way it gets the minimal environment, never our secrets, and
/// at most [`PROBE_TIMEOUT`]: a launcher that hangs is killed (with what it started) and
/// counts as one that could not be resolved.
fn resolve_python_launcher(p: &Path, root: &Path, trusted: bool) -> Option<PathBuf> {
    type Cache = Mutex<HashMap<(PathBuf, PathBuf), Option<PathBuf>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let cwd = if trusted { root } else { Path::new("/") };
    let key = (p.to_path_buf(), cwd.to_path_buf());
    if let Ok(c) = cache.lock()
        && let Some(hit) = c.get(&key)
    {
        return hit.clone();
    }
    let mut cmd = std::process::Command::new(p);
    EnvPolicy::default().apply_std(&mut cmd, ChildKind::Tool);
    if !trusted {
        cmd.arg("-I");
    }
    cmd.args(["-c", "import sys; print(sys.executable)"])
        .current_dir(cwd);
    let resolved = run_probe(cmd, PROBE_TIMEOUT)
        .map(|out| PathBuf::from(out.trim()))
        .filter(|real| is_executable(real));
    if let Ok(mut c) = cache.lock() {
        c.insert(key, resolved.clone());
    }
    resolved
}

/// How long an interpreter probe may take: a launcher that starts a real interpreter
/// answers in well under a second; one that hangs must not hang the kernel start.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of a probe's answer read (it prints one path).
const PROBE_MAX_BYTES: u64 = 64 * 1024;

/// Runs `cmd` (in a process group of its own, stdin empty, stderr discarded) and returns
/// what it printed when it exits with success within `timeout`; otherwise `None`, and
/// the whole group is killed (a launcher script's interpreter too).
fn run_probe(mut cmd: std::process::Command, timeout: Duration) -> Option<String> {
    use std::io::Read;
    tools_core::platform::detach_from_our_group(&mut cmd);
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    // The answer is read on a thread of its own, so a probe that prints without end
    // cannot block the wait below.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.take(PROBE_MAX_BYTES).read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => break None,
        }
    };
    // Whatever it left running in its group goes too, so the reader sees the pipe close.
    if let Ok(pid) = i32::try_from(child.id()) {
        tools_core::platform::kill_leftover(pid);
    }
    let _ = child.wait();
    let out = reader.join().ok()?;
    if !status?.success() {
        return None;
    }
    String::from_utf8(out).ok()
}

fn configured(search: &ProgramSearch, given: &Path, what: &str) -> Result<Interpreter, String> {
    let text = given.to_string_lossy();
    let found = if given.is_absolute() || given.components().count() > 1 {
        search.find(
            &format!("{}", search.workspace().join(given).display()),
            search.workspace(),
        )
    } else {
        search.find_on_path(&text, search.workspace())
    };
    match found {
        Ok(f) => Ok(Interpreter {
            why: format!("[eval] {what} in agent-tools.toml"),
            path: f.path,
        }),
        Err(why) if why.contains("untrusted workspace") => Err(why),
        Err(_) => Err(format!(
            "[eval] {what} = {:?} in agent-tools.toml is not an executable file",
            given.display().to_string()
        )),
    }
}

/// The Python interpreter for the workspace `search` covers, or why there is none.
pub fn find_python(
    search: &ProgramSearch,
    configured_path: Option<&Path>,
) -> Result<Interpreter, String> {
    if let Some(given) = configured_path {
        return configured(search, given, "python");
    }
    let root = search.workspace();
    if let Some(own) = search.project_pythons(root).into_iter().next() {
        // `.venv/bin/python` on Unix, `.venv\Scripts\python.exe` on Windows: the folder.
        let venv = Path::new(&own.shown)
            .parent()
            .and_then(Path::parent)
            .map_or_else(|| own.shown.clone(), |p| p.display().to_string());
        return Ok(Interpreter {
            path: own.path,
            why: format!("the project's own virtual environment ({venv}/)"),
        });
    }
    let skipped = search
        .skipped(root)
        .map(|line| format!("; {line}"))
        .unwrap_or_default();
    // Windows' installers name the interpreter `python.exe` only.
    let Ok(found) = search
        .find_on_path("python3", root)
        .or_else(|_| search.find_on_path("python", root))
        .map(|f| f.path)
    else {
        return Err(format!(
            "no .venv/bin/python or venv/bin/python in the workspace and no python3 or python \
             on PATH{skipped}"
        ));
    };
    if is_script(&found) {
        return match resolve_python_launcher(&found, root, search.trusted()) {
            Some(real) => Ok(Interpreter {
                why: format!(
                    "python3 on PATH ({} is a launcher script, resolved to the interpreter it runs){skipped}",
                    found.display()
                ),
                path: real,
            }),
            None => Ok(Interpreter {
                why: format!(
                    "python3 on PATH (a launcher script that could not be resolved; each start pays its cost){skipped}"
                ),
                path: found,
            }),
        };
    }
    let why = if skipped.is_empty() {
        "python3 on PATH (no .venv/ or venv/ in the workspace)".to_string()
    } else {
        format!("python3 on PATH{skipped}")
    };
    Ok(Interpreter { path: found, why })
}

/// The Node.js executable, or why there is none.
pub fn find_node(
    search: &ProgramSearch,
    configured_path: Option<&Path>,
) -> Result<Interpreter, String> {
    if let Some(given) = configured_path {
        return configured(search, given, "node");
    }
    let untrusted = if search.trusted() {
        String::new()
    } else {
        "; untrusted workspace: never a node inside it, though a cell may still require or import \
         the workspace's own files and node_modules packages (that is the cell's code)"
            .to_string()
    };
    match search.find_on_path("node", search.workspace()) {
        Ok(f) => Ok(Interpreter {
            path: f.path,
            why: format!("node on PATH{untrusted}"),
        }),
        Err(_) => Err("no node on PATH".into()),
    }
}

/// The interpreter for `language` in the workspace `search` covers.
pub fn find(
    language: Language,
    search: &ProgramSearch,
    config: &crate::EvalConfig,
) -> Result<Interpreter, String> {
    match language {
        Language::Python => find_python(search, config.python.as_deref()),
        Language::Javascript => find_node(search, config.node.as_deref()),
    }
}

// The project layouts of its tests are Unix's (`venv/bin/python`, scripts run by their `#!`).
#[cfg(all(test, unix))]
mod tests;
