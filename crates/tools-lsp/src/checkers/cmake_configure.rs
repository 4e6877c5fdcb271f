//! Configuring a CMake project into a private build folder, to get the compilation database
//! the C checker compiles from (`-DCMAKE_EXPORT_COMPILE_COMMANDS=ON`). The folder lies
//! outside the workspace and is removed afterwards, so checking leaves no build tree behind
//! and never reuses (or clobbers) the project's own. Errors of the configure step
//! (`CMake Error at CMakeLists.txt:4 (add_executable):`) are findings like any other.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tools_core::discovery::ProgramSearch;
use tools_core::{Run, ToolError};

use crate::checkers::capture::run_capturing_stderr;
use crate::checkers::compile_db::{self, CompileDb};
use crate::checkers::findings::Finding;

/// Lines of the configure output shown when it failed without a located error.
const OUTPUT_TAIL_LINES: usize = 20;

/// The outcome of a configure.
#[derive(Debug, Default)]
pub struct Configured {
    /// The compilation database it exported, when the configure succeeded.
    pub db: Option<CompileDb>,
    /// Errors and warnings located in the project's CMake files (paths relative to the root).
    pub findings: Vec<Finding>,
    /// The last lines of its output when it failed, for an error without a location.
    pub output_tail: Vec<String>,
    /// The private build folder: the database's entries run in it, so it lives as long as
    /// this value and is removed with it.
    pub build_dir: Option<tempfile::TempDir>,
}

/// Runs `cmake -S root -B <private folder> -DCMAKE_EXPORT_COMPILE_COMMANDS=ON` and reads
/// the database it exports. Only called in a trusted run.
pub async fn configure(
    run: &Arc<Run>,
    root: &Path,
    workspace: &Path,
    deadline: Instant,
) -> Result<Configured, ToolError> {
    let search = ProgramSearch::for_run(run);
    let cmake = search.find("cmake", root).map_err(|why| {
        ToolError::not_available(format!(
            "the C project at {} declares a CMake build, but {why}; install cmake or export compile_commands.json",
            tools_core::display_relative(workspace, root)
        ))
    })?;
    let build = tempfile::Builder::new()
        .prefix("agent-tools-cmake-")
        .tempdir()
        .map_err(|e| ToolError::internal(format!("cannot create a build folder: {e}")))?;
    let mut cmd = tools_core::child_command(run, &cmake.path);
    cmd.arg("-S")
        .arg(root)
        .arg("-B")
        .arg(build.path())
        .arg("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
        .current_dir(root);
    let remaining = deadline.saturating_duration_since(Instant::now());
    let Some((code, output)) = run_capturing_stderr(run, cmd, remaining).await? else {
        return Err(ToolError::timed_out(format!(
            "`cmake` configure in {} did not finish within the checker's time budget; raise [lsp] checker_timeout_ms",
            tools_core::display_relative(workspace, root)
        )));
    };
    let findings = cmake_findings(&output, root);
    let db_path = build.path().join("compile_commands.json");
    if code == Some(0) && db_path.is_file() {
        let db = compile_db::read(&db_path)
            .map_err(|why| ToolError::internal(format!("after `cmake` configure: {why}")))?;
        return Ok(Configured {
            db: Some(db),
            findings,
            output_tail: Vec::new(),
            build_dir: Some(build),
        });
    }
    let output_tail = if findings.is_empty() {
        let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
        let from = lines.len().saturating_sub(OUTPUT_TAIL_LINES);
        lines[from..].iter().map(|l| l.to_string()).collect()
    } else {
        Vec::new()
    };
    Ok(Configured {
        db: None,
        findings,
        output_tail,
        build_dir: None,
    })
}

/// Located errors and warnings in CMake's output: a `CMake Error at FILE:LINE (command):`
/// line, its message in the indented lines after it. Paths are made relative to `root`.
pub fn cmake_findings(output: &str, root: &Path) -> Vec<Finding> {
    let mut findings = Vec::new();
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let (severity, rest) = if let Some(r) = line.strip_prefix("CMake Error at ") {
            ("error", r)
        } else if let Some(r) = line
            .strip_prefix("CMake Warning at ")
            .or_else(|| line.strip_prefix("CMake Warning (dev) at "))
        {
            ("warning", r)
        } else {
            continue;
        };
        // `CMakeLists.txt:4 (add_executable):`
        let location = rest
            .split(" (")
            .next()
            .unwrap_or(rest)
            .trim_end_matches(':');
        let Some((path, line_no)) = location.rsplit_once(':') else {
            continue;
        };
        let Ok(line_no) = line_no.parse::<u32>() else {
            continue;
        };
        let message: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.starts_with(' ') || l.trim().is_empty())
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .take(4)
            .collect();
        let path = Path::new(path);
        let path = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        findings.push(Finding {
            path,
            line: line_no,
            col: None,
            severity: severity.into(),
            message: message.join(" "),
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configure_errors_are_located_in_the_cmake_files() {
        let output = "CMake Error at CMakeLists.txt:4 (add_executable):\n  Cannot find source file:\n\n    src/missing.c\n\n\nCMake Warning (dev) at /w/p/cmake/opts.cmake:7 (message):\n  old policy\nThis warning is for project developers.\n-- Configuring incomplete, errors occurred!\n";
        let found = cmake_findings(output, Path::new("/w/p"));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            (
                found[0].path.as_str(),
                found[0].line,
                found[0].severity.as_str()
            ),
            ("CMakeLists.txt", 4, "error")
        );
        assert_eq!(found[0].message, "Cannot find source file: src/missing.c");
        assert_eq!(
            (
                found[1].path.as_str(),
                found[1].line,
                found[1].severity.as_str()
            ),
            ("cmake/opts.cmake", 7, "warning")
        );
        assert_eq!(found[1].message, "old policy");
    }
}
