//! Installing one recipe into the server cache: under the recipe's lock, into a temporary
//! folder beside the final one, renamed into place only when complete, within a time bound,
//! through the run's child-process rules (own process group, minimal environment, killed
//! with the run). A failure says what the package manager said.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

use super::cache::{INSTALL_RECORD, ServerCache, io_error};
use super::managers::{self, Step};
use crate::servers::recipe::InstallRecipe;

/// The default bound on one install (a few minutes: a cold npm or pip install takes seconds,
/// a `cargo install` that compiles can take longer and gets a larger bound from its user).
pub const DEFAULT_INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

/// How often a running install reports that it is still running.
const TICK: Duration = Duration::from_secs(5);

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallOutcome {
    /// The recipe was installed now.
    Installed,
    /// It was already complete in the cache (perhaps installed by a concurrent run).
    AlreadyInstalled,
}

/// The result of one install.
#[derive(Debug, Clone)]
pub struct InstallReport {
    /// The recipe.
    pub recipe: InstallRecipe,
    /// Installed now or found installed.
    pub outcome: InstallOutcome,
    /// The install folder.
    pub dir: PathBuf,
    /// The programs its `bin/` provides.
    pub programs: Vec<String>,
    /// How long the call took.
    pub elapsed: Duration,
}

/// Installs recipes into one cache for one run.
#[derive(Clone)]
pub struct Installer {
    run: Arc<Run>,
    cache: ServerCache,
    timeout: Duration,
}

impl std::fmt::Debug for Installer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installer")
            .field("cache", &self.cache)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Removes a temporary install folder unless the install completed, so an error, a timeout
/// or a dropped (cancelled) install leaves nothing behind.
struct TempFolder(Option<PathBuf>);

impl Drop for TempFolder {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

impl Installer {
    /// An installer whose package managers run as children of `run`, installing into
    /// `cache`, each install bounded by `timeout`.
    pub fn new(run: Arc<Run>, cache: ServerCache, timeout: Duration) -> Self {
        Installer {
            run,
            cache,
            timeout,
        }
    }

    /// This installer with each install bounded by `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The cache installed into.
    pub fn cache(&self) -> &ServerCache {
        &self.cache
    }

    /// Installs `recipe` unless it is complete in the cache already. `note` receives a line
    /// when the install starts and every few seconds while it runs.
    pub async fn install(
        &self,
        recipe: &InstallRecipe,
        note: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<InstallReport, ToolError> {
        let started = Instant::now();
        recipe
            .validate()
            .map_err(|e| ToolError::invalid("recipe", e))?;
        let final_dir = self.cache.install_dir(recipe);
        let report = |outcome, programs| InstallReport {
            recipe: recipe.clone(),
            outcome,
            dir: final_dir.clone(),
            programs,
            elapsed: started.elapsed(),
        };
        if self.cache.is_installed(recipe) {
            return Ok(report(
                InstallOutcome::AlreadyInstalled,
                self.programs_of(&final_dir),
            ));
        }
        let manager = recipe.manager.program();
        if tools_core::process::which(manager).is_none() {
            return Err(ToolError::not_available(format!(
                "cannot install {recipe}: `{manager}` is not on PATH ({})",
                manager_hint(recipe)
            )));
        }
        let deadline = started + self.timeout;
        let _lock = self.cache.lock(recipe, deadline).await?;
        // A concurrent install may have completed while this one waited for the lock.
        if self.cache.is_installed(recipe) {
            return Ok(report(
                InstallOutcome::AlreadyInstalled,
                self.programs_of(&final_dir),
            ));
        }
        self.cache.remove_leftovers(recipe);
        let temp = TempFolder(Some(self.cache.new_temp_dir(recipe)?));
        let dir = temp.0.clone().unwrap_or_default();
        note(&format!("installing {recipe} into {}", final_dir.display()));
        for step in managers::steps(recipe, &dir) {
            self.run_step(recipe, &step, &dir, deadline, started, note)
                .await?;
        }
        let programs = managers::expose_programs(recipe, &dir, &final_dir)?;
        if programs.is_empty() {
            return Err(ToolError::not_available(format!(
                "{recipe} installed, but it provides no program; nothing was kept"
            )));
        }
        let record = serde_json::json!({
            "manager": recipe.manager.name(),
            "packages": recipe.packages().iter().map(|(p, v)| serde_json::json!({"package": p, "version": v})).collect::<Vec<_>>(),
            "programs": programs,
            "installed_at_unix": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            "install_seconds": started.elapsed().as_secs_f64(),
        });
        let record_path = dir.join(INSTALL_RECORD);
        std::fs::write(&record_path, record.to_string())
            .map_err(|e| io_error("write", &record_path, e))?;
        // A folder without the record is no install (a user's stray folder): replace it.
        if final_dir.exists() {
            let _ = std::fs::remove_dir_all(&final_dir);
        }
        std::fs::rename(&dir, &final_dir).map_err(|e| io_error("rename", &dir, e))?;
        std::mem::forget(temp);
        Ok(report(InstallOutcome::Installed, programs))
    }

    fn programs_of(&self, dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join("bin"))
            .map(|it| {
                it.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    async fn run_step(
        &self,
        recipe: &InstallRecipe,
        step: &Step,
        cwd: &Path,
        deadline: Instant,
        started: Instant,
        note: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<(), ToolError> {
        let mut cmd = tools_core::child_command(&self.run, &step.program);
        cmd.args(&step.args).current_dir(cwd);
        cmd.envs(registry_environment(recipe));
        cmd.envs(step.env.iter().cloned());
        let mut child = ChildProcess::spawn(&self.run, cmd, Pipes::None)?;
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
        let status = loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            tokio::select! {
                s = child.wait() => break s,
                _ = tick.tick() => note(&format!(
                    "still installing {} ({}: {:.0} s)",
                    recipe.package,
                    step.shown(),
                    started.elapsed().as_secs_f64()
                )),
                _ = tokio::time::sleep(remaining) => {
                    child.kill();
                    return Err(ToolError::timed_out(format!(
                        "installing {recipe} did not finish within {} s (`{}`); nothing was kept. \
                         A slow registry or a compile may need a larger bound \
                         (`--timeout`, or install_timeout_ms in [lsp])",
                        self.timeout.as_secs(),
                        step.shown()
                    )));
                }
            }
        };
        let status = status.map_err(|e| {
            ToolError::internal(format!("waiting for `{}` failed: {e}", step.shown()))
        })?;
        if status.success() {
            return Ok(());
        }
        // The stderr drain may still hold the last lines.
        child.stderr_read_to_end(Duration::from_secs(1)).await;
        Err(ToolError::not_available(format!(
            "installing {recipe} failed: `{}` exited with {}: {}",
            step.shown(),
            status
                .code()
                .map(|c| c.to_string())
                .unwrap_or_else(|| "a signal".into()),
            manager_message(&child.stderr().text())
        )))
    }
}

/// The variables of this process a package manager needs to reach its registry (proxies,
/// certificates, its mirror or index settings), on top of the minimal child environment.
/// Secret-looking names pass only if the user's `[env] pass` names them (the child
/// environment already carries those).
fn registry_environment(recipe: &InstallRecipe) -> Vec<(String, String)> {
    let patterns = managers::registry_variables(recipe.manager);
    std::env::vars()
        .filter(|(k, _)| !tools_core::child_env::looks_secret(k))
        .filter(|(k, _)| {
            managers::NETWORK_VARIABLES.contains(&k.as_str())
                || patterns.iter().any(|p| match p.strip_suffix('*') {
                    Some(prefix) => k.starts_with(prefix),
                    None => k == p,
                })
        })
        .collect()
}

/// The package manager's own words from its stderr: its error lines when it marks them
/// (`npm error`, `ERROR:`, `error:`), else its last lines. npm says what matters first (the
/// code, then the reason) and pip last, so a long report keeps its first four and last four
/// lines; each line is cut at 300 characters, and all are joined into one.
pub(crate) fn manager_message(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| !l.contains("A complete log of this run") && !l.contains("/_logs/"))
        .collect();
    let marked: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            let lower = l.to_ascii_lowercase();
            let npm_rest = lower
                .strip_prefix("npm error")
                .or_else(|| lower.strip_prefix("npm err!"));
            match npm_rest {
                // A bare `npm error` or one holding only a brace of a dumped object says nothing.
                Some(rest) => rest.trim().len() > 1,
                None => lower.starts_with("error") || lower.starts_with("fatal"),
            }
        })
        .collect();
    let chosen = if marked.is_empty() { &lines } else { &marked };
    if chosen.is_empty() {
        return "it printed nothing on stderr".into();
    }
    let kept: Vec<&str> = if chosen.len() > 8 {
        let mut k = chosen[..4].to_vec();
        k.push("…");
        k.extend_from_slice(&chosen[chosen.len() - 4..]);
        k
    } else {
        chosen.clone()
    };
    kept.iter()
        .map(|l| tools_core::text::cut_text(l, 300))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn manager_hint(recipe: &InstallRecipe) -> &'static str {
    use crate::servers::recipe::PackageManager::*;
    match recipe.manager {
        Npm => "npm comes with Node.js",
        Pip => "a Python 3 with the venv module and pip 22.3 or later is needed",
        Cargo => "cargo comes with a Rust toolchain, e.g. from rustup",
        Go => "go comes with the Go toolchain",
        Dotnet => "dotnet comes with the .NET SDK",
        Gem => "gem comes with Ruby",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_managers_own_error_lines_are_kept() {
        let npm = "npm error code ETARGET\nnpm error notarget No matching version found for x@9.\n\
                   npm error A complete log of this run can be found in: /root/.npm/_logs/a.log\n";
        assert_eq!(
            manager_message(npm),
            "npm error code ETARGET | npm error notarget No matching version found for x@9."
        );
        let pip = "Collecting a\nERROR: Could not find a version that satisfies the requirement a==9\nERROR: No matching distribution found for a==9\n";
        assert!(manager_message(pip).starts_with("ERROR: Could not find"));
        assert_eq!(manager_message(""), "it printed nothing on stderr");
        assert_eq!(manager_message("one\ntwo\n"), "one | two");
        let long: String = (1..=12)
            .map(|i| format!("npm error line {i}\nnpm error }}\n"))
            .collect();
        assert_eq!(
            manager_message(&long),
            "npm error line 1 | npm error line 2 | npm error line 3 | npm error line 4 | … | \
             npm error line 9 | npm error line 10 | npm error line 11 | npm error line 12"
        );
    }
}
