//! `auto_install = true`: the first need of a server whose binary is missing installs it
//! into the user's cache (with progress notifications while it runs, when the call has a
//! progress sink), then the server starts as if it had been there. A write does not wait for
//! an install: it starts one in the background and says so, and a later write is checked
//! by the installed server. Only when the root marker
//! exists: the binary must be the one missing half. An install that failed is not tried again
//! in the same run (every call would wait for the same failure); the error says how to retry.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tools_core::{Progress, ToolError};

use super::acquire::{Installer, ServerCache};
use crate::servers::supervisor::{Located, ServerSupervisor};

/// The auto-installs that failed in this run: install folder name → the error.
#[derive(Default)]
struct FailedInstalls(Mutex<HashMap<String, String>>);

/// The background installs a write started that have not ended: install folder names.
#[derive(Default)]
struct InstallsUnderWay(Mutex<HashSet<String>>);

impl ServerSupervisor {
    /// After `locate(file)` failed with `missing` while a write is observed: when
    /// `auto_install` would install the entry's server, starts that install in the
    /// background (once per run and recipe) and returns the line the write's result shows.
    /// `None` when nothing is installed (auto_install off, no root marker, no recipe, or the
    /// install failed earlier in this run).
    pub(crate) fn install_in_background(self: &Arc<Self>, file: &Path) -> Option<String> {
        if !self.config().auto_install {
            return None;
        }
        let spec = crate::servers::discover::spec_for(self.table(), file, self.workspace())?;
        crate::servers::roots::server_root(&spec.language, &spec.markers, file, self.workspace())?;
        let recipe = spec.candidates.iter().find_map(|c| c.install.clone())?;
        let run = self.open_run()?;
        let key = ServerCache::folder_name(&recipe);
        let failed = run.state(FailedInstalls::default);
        if failed.0.lock().ok()?.contains_key(&key) {
            return None;
        }
        let under_way = run.state(InstallsUnderWay::default);
        let line = format!(
            "diagnostics unavailable for this write: auto_install is installing {recipe} for the {} files in the background; later writes are checked by it",
            spec.language
        );
        if !under_way.0.lock().ok()?.insert(key.clone()) {
            return Some(line);
        }
        let sup = Arc::clone(self);
        let file = file.to_path_buf();
        let language = spec.language.clone();
        tokio::spawn(async move {
            let missing =
                ToolError::not_available(format!("no {language} server for {}", file.display()));
            if let Err(e) = sup.install_on_first_need(&file, missing).await {
                tracing::warn!("auto_install on write: {e}");
            }
            if let Ok(mut m) = under_way.0.lock() {
                m.remove(&key);
            }
        });
        Some(line)
    }

    /// After `locate(file)` failed with `missing`: installs the entry's first installable
    /// server when `auto_install` is on and only the binary is missing, then locates again.
    /// Otherwise (or when the install fails) the original error, with the install's.
    pub(crate) async fn install_on_first_need(
        &self,
        file: &Path,
        missing: ToolError,
    ) -> Result<Located, ToolError> {
        if !self.config().auto_install {
            return Err(missing);
        }
        let Some(spec) = crate::servers::discover::spec_for(self.table(), file, self.workspace())
        else {
            return Err(missing);
        };
        let has_root = crate::servers::roots::server_root(
            &spec.language,
            &spec.markers,
            file,
            self.workspace(),
        )
        .is_some();
        let recipe = spec.candidates.iter().find_map(|c| c.install.clone());
        let (true, Some(recipe), Some(run)) = (has_root, recipe, self.open_run()) else {
            return Err(missing);
        };
        let missing = bare(&missing);
        let failed = run.state(FailedInstalls::default);
        let key = ServerCache::folder_name(&recipe);
        if let Some(earlier) = failed.0.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Err(ToolError::not_available(format!(
                "{missing}; auto_install of {recipe} failed earlier in this run ({earlier}); \
                 `{}` retries it",
                super::acquire::install_command(&recipe)
            )));
        }
        let cache = ServerCache::from_env()?;
        let installer = Installer::new(run, cache, self.config().install_timeout());
        let progress = Progress::current();
        let step = AtomicU64::new(0);
        let note = |line: &str| {
            let n = step.fetch_add(1, Ordering::SeqCst) + 1;
            progress.report(n as f64, None, Some(format!("auto_install: {line}")));
        };
        tracing::info!("auto_install: installing {recipe} for {}", file.display());
        match installer.install(&recipe, &note).await {
            Ok(report) => {
                note(&format!(
                    "{recipe} ready in {:.1} s; starting the {} server",
                    report.elapsed.as_secs_f64(),
                    spec.language
                ));
                self.locate(file)
            }
            Err(e) => {
                if let Ok(mut m) = failed.0.lock() {
                    m.insert(key, bare(&e));
                }
                Err(ToolError::not_available(format!(
                    "{missing}; auto_install tried {recipe} and failed: {}",
                    bare(&e)
                )))
            }
        }
    }
}

/// An error's message without its kind prefix (`not available here: `), for embedding one
/// error in another.
fn bare(e: &ToolError) -> String {
    match e {
        ToolError::NotAvailable(m)
        | ToolError::TimedOut(m)
        | ToolError::Rejected(m)
        | ToolError::Internal(m) => m.clone(),
        other => other.to_string(),
    }
}
