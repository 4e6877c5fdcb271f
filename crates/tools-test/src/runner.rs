//! Which runner a project's tests use, found from its own configuration, and the program
//! that runs it, found in the project's environment first (its `.venv`, its
//! `node_modules/.bin`) through the run's program search, which also decides trust.
//!
//! A file's project is the nearest folder at or above it (up to the workspace root) with a
//! configuration for its language:
//! - Python: `pytest.ini`, `pyproject.toml` with `[tool.pytest…]`, `setup.cfg` with
//!   `[tool:pytest]`, `tox.ini` with `[pytest]`, or `conftest.py`; failing those, a
//!   `pyproject.toml`, `setup.py` or `setup.cfg` (pytest also runs unittest tests).
//! - Rust: the nearest `Cargo.toml` (`cargo test` there tests that package).
//! - Go: the nearest `go.mod`.
//! - JavaScript/TypeScript: the nearest `package.json` naming `vitest` or `jest` (in its
//!   dependencies or its `test` script), or a `vitest.config.*` / `jest.config.*`.

use std::path::{Path, PathBuf};

use tools_core::ToolError;
use tools_core::discovery::ProgramSearch;

/// A test runner this crate drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerKind {
    /// `python -m pytest`, results from `--junitxml`.
    Pytest,
    /// `cargo test`, results from libtest's output.
    Cargo,
    /// `cargo nextest run`, results from its libtest-compatible JSON lines.
    Nextest,
    /// `go test -json`.
    Go,
    /// `vitest run --reporter=json`.
    Vitest,
    /// `jest --json`.
    Jest,
}

impl RunnerKind {
    /// The runner's name as answers show it.
    pub fn name(self) -> &'static str {
        match self {
            RunnerKind::Pytest => "pytest",
            RunnerKind::Cargo => "cargo test",
            RunnerKind::Nextest => "cargo nextest",
            RunnerKind::Go => "go test",
            RunnerKind::Vitest => "vitest",
            RunnerKind::Jest => "jest",
        }
    }
}

/// The languages whose tests this crate runs, as `status` and `doctor` name them.
pub const LANGUAGES: [Language; 4] = [
    Language::Python,
    Language::Rust,
    Language::Go,
    Language::JavaScript,
];

/// A language family of test files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `.py`
    Python,
    /// `.rs`
    Rust,
    /// `.go`
    Go,
    /// `.js`, `.ts`, `.jsx`, `.tsx`, `.mjs`, `.cjs`, `.mts`, `.cts`
    JavaScript,
}

impl Language {
    /// The language of `path` from its extension.
    pub fn of(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "py" => Some(Language::Python),
            "rs" => Some(Language::Rust),
            "go" => Some(Language::Go),
            "js" | "ts" | "jsx" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
                Some(Language::JavaScript)
            }
            _ => None,
        }
    }

    /// The id `status` and `doctor` use.
    pub fn id(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::JavaScript => "javascript",
        }
    }

    /// The configuration files looked for, in words.
    fn markers_text(self) -> &'static str {
        match self {
            Language::Python => {
                "pytest.ini, pyproject.toml, setup.cfg, tox.ini, conftest.py or setup.py"
            }
            Language::Rust => "Cargo.toml",
            Language::Go => "go.mod",
            Language::JavaScript => {
                "package.json naming vitest or jest, vitest.config.* or jest.config.*"
            }
        }
    }
}

/// A project's runner and where it was found.
#[derive(Debug, Clone)]
pub struct Detected {
    /// Which runner.
    pub kind: RunnerKind,
    /// The project folder the runner starts in (absolute).
    pub root: PathBuf,
    /// The configuration that named it, e.g. `pyproject.toml [tool.pytest]`.
    pub because: String,
}

/// A runner ready to start: the program and the arguments before the runner's own.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The project and runner.
    pub detected: Detected,
    /// Program and leading arguments, e.g. `[.venv/bin/python, -m, pytest]`.
    pub argv: Vec<PathBuf>,
    /// Where the program came from, in words.
    pub origin: String,
}

/// The nearest project at or above `start` (a folder) with a runner for `lang`, up to
/// `workspace`. `Err` says what was looked for.
pub fn detect(start: &Path, workspace: &Path, lang: Language) -> Result<Detected, String> {
    let mut weak: Option<Detected> = None;
    let mut dir = Some(start);
    while let Some(d) = dir {
        if let Some(found) = detect_here(d, lang, &mut weak) {
            return Ok(found);
        }
        if d == workspace {
            break;
        }
        dir = d.parent().filter(|p| p.starts_with(workspace));
    }
    weak.ok_or_else(|| {
        format!(
            "no {} found from {} up to the workspace root",
            lang.markers_text(),
            tools_core::display_relative(workspace, start)
        )
    })
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn detect_here(d: &Path, lang: Language, weak: &mut Option<Detected>) -> Option<Detected> {
    let found = |kind, because: &str| Detected {
        kind,
        root: d.to_path_buf(),
        because: because.to_string(),
    };
    match lang {
        Language::Python => {
            if d.join("pytest.ini").is_file() {
                return Some(found(RunnerKind::Pytest, "pytest.ini"));
            }
            let pyproject = read(&d.join("pyproject.toml"));
            if pyproject.contains("[tool.pytest") {
                return Some(found(RunnerKind::Pytest, "pyproject.toml [tool.pytest]"));
            }
            let setup_cfg = read(&d.join("setup.cfg"));
            if setup_cfg.contains("[tool:pytest]") {
                return Some(found(RunnerKind::Pytest, "setup.cfg [tool:pytest]"));
            }
            if read(&d.join("tox.ini")).contains("[pytest]") {
                return Some(found(RunnerKind::Pytest, "tox.ini [pytest]"));
            }
            // A conftest.py alone marks tests, not the project: the outermost one is the
            // last resort (pytest's rootdir without a configuration is where it starts).
            if d.join("conftest.py").is_file()
                && weak.as_ref().is_none_or(|w| w.because == "conftest.py")
            {
                *weak = Some(found(RunnerKind::Pytest, "conftest.py"));
            }
            if weak.as_ref().is_none_or(|w| w.because == "conftest.py") {
                for marker in ["pyproject.toml", "setup.py", "setup.cfg"] {
                    if d.join(marker).is_file() {
                        *weak = Some(found(RunnerKind::Pytest, marker));
                        break;
                    }
                }
            }
            None
        }
        Language::Rust => d
            .join("Cargo.toml")
            .is_file()
            .then(|| found(RunnerKind::Cargo, "Cargo.toml")),
        Language::Go => d
            .join("go.mod")
            .is_file()
            .then(|| found(RunnerKind::Go, "go.mod")),
        Language::JavaScript => {
            let package = read(&d.join("package.json"));
            let names = |tool: &str| {
                package.contains(&format!("\"{tool}\"")) || package.contains(&format!("{tool} "))
            };
            if names("vitest") {
                return Some(found(RunnerKind::Vitest, "package.json (vitest)"));
            }
            if names("jest") {
                return Some(found(RunnerKind::Jest, "package.json (jest)"));
            }
            let has_config = |stem: &str| {
                ["js", "ts", "mjs", "cjs", "mts", "cts", "json"]
                    .iter()
                    .any(|ext| d.join(format!("{stem}.config.{ext}")).is_file())
            };
            if has_config("vitest") {
                return Some(found(RunnerKind::Vitest, "vitest.config"));
            }
            if has_config("jest") {
                return Some(found(RunnerKind::Jest, "jest.config"));
            }
            None
        }
    }
}

/// Which runner a Cargo project uses (`[test] cargo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CargoRunner {
    /// nextest when `cargo-nextest` is installed, else cargo test.
    Auto,
    /// Always cargo test.
    Test,
    /// Always nextest (missing: the run says so).
    Nextest,
}

/// The program for `detected`, from the project's environment first. `Err` says which
/// program is missing and where it was looked for.
pub fn resolve(
    mut detected: Detected,
    search: &ProgramSearch,
    cargo: CargoRunner,
) -> Result<Resolved, String> {
    let root = detected.root.clone();
    if detected.kind == RunnerKind::Cargo
        && (cargo == CargoRunner::Nextest
            || (cargo == CargoRunner::Auto && search.find("cargo-nextest", &root).is_ok()))
    {
        detected.kind = RunnerKind::Nextest;
    }
    let find = |name: &str| search.find(name, &root);
    let (argv, origin) = match detected.kind {
        RunnerKind::Pytest => {
            // The project's interpreter decides which packages the tests import: its
            // pytest, through `-m`, runs in that environment.
            match search.project_pythons(&root).into_iter().next() {
                Some(py) => (
                    vec![py.path, "-m".into(), "pytest".into()],
                    py.shown.to_string(),
                ),
                None => {
                    let found = find("pytest").map_err(|e| missing("pytest", e, search, &root))?;
                    (vec![found.path], found.origin.to_string())
                }
            }
        }
        RunnerKind::Cargo => {
            let found = find("cargo").map_err(|e| missing("cargo", e, search, &root))?;
            (vec![found.path, "test".into()], found.origin.to_string())
        }
        RunnerKind::Nextest => {
            let cargo = find("cargo").map_err(|e| missing("cargo", e, search, &root))?;
            find("cargo-nextest").map_err(|e| missing("cargo-nextest", e, search, &root))?;
            (
                vec![cargo.path, "nextest".into(), "run".into()],
                cargo.origin.to_string(),
            )
        }
        RunnerKind::Go => {
            let found = find("go").map_err(|e| missing("go", e, search, &root))?;
            (vec![found.path, "test".into()], found.origin.to_string())
        }
        RunnerKind::Vitest => {
            let found = find("vitest").map_err(|e| missing("vitest", e, search, &root))?;
            (vec![found.path, "run".into()], found.origin.to_string())
        }
        RunnerKind::Jest => {
            let found = find("jest").map_err(|e| missing("jest", e, search, &root))?;
            (vec![found.path], found.origin.to_string())
        }
    };
    Ok(Resolved {
        detected,
        argv,
        origin,
    })
}

fn missing(_program: &str, why: String, _search: &ProgramSearch, _root: &Path) -> String {
    format!("{why}; install it in the project's environment")
}

/// The project and runner of `path` (a file), or why there is none.
pub fn project_of(path: &Path, workspace: &Path) -> Result<(Language, Detected), ToolError> {
    let lang = Language::of(path).ok_or_else(|| {
        ToolError::invalid(
            "file",
            format!(
                "`{}` is not a Python, Rust, Go or JavaScript/TypeScript file",
                tools_core::display_relative(workspace, path)
            ),
        )
    })?;
    let dir = path.parent().unwrap_or(workspace);
    let detected = detect(dir, workspace, lang)
        .map_err(|why| ToolError::not_available(format!("no {} test runner: {why}", lang.id())))?;
    Ok((lang, detected))
}
