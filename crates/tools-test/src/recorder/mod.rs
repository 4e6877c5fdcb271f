//! Recording which functions each test runs, while the runner runs it: for pytest, a
//! plugin of ours (`agent_tools_reach.py`, loaded with `-p`) written into the run's state
//! folder, outside the checkout, and its output read back after the run. No package is
//! needed in the project's environment; the plugin's Python works from 3.8 on.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The plugin's source.
const PLUGIN: &str = include_str!("agent_tools_reach.py");
/// The module name `-p` loads.
const PLUGIN_MODULE: &str = "agent_tools_reach";

/// One recording under way: where the plugin is and where it writes.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The folder holding the plugin (put first on `PYTHONPATH`).
    plugin_dir: PathBuf,
    /// The plugin writes `<prefix>-<worker>.json`.
    prefix: PathBuf,
}

impl Recording {
    /// Writes the plugin into `state` (the run's test folder) for the `n`th run; `None`
    /// when it cannot be written (the run then goes on unrecorded).
    pub fn prepare(state: &Path, n: usize) -> Option<Recording> {
        let plugin_dir = state.join("recorder");
        let file = plugin_dir.join(format!("{PLUGIN_MODULE}.py"));
        let current = std::fs::read_to_string(&file).ok();
        if current.as_deref() != Some(PLUGIN) {
            std::fs::create_dir_all(&plugin_dir).ok()?;
            std::fs::write(&file, PLUGIN).ok()?;
        }
        Some(Recording {
            plugin_dir,
            prefix: state.join(format!("reach-{n}")),
        })
    }

    /// pytest's arguments that load the plugin.
    pub fn pytest_args(&self) -> [OsString; 2] {
        ["-p".into(), PLUGIN_MODULE.into()]
    }

    /// The environment the plugin needs: `PYTHONPATH` with its folder first (before
    /// `inherited`, the value the child would otherwise get), where to write, and the
    /// project's folder its paths are relative to.
    pub fn env(
        &self,
        inherited: Option<&std::ffi::OsStr>,
        project: &Path,
    ) -> Vec<(&'static str, OsString)> {
        let mut paths = vec![self.plugin_dir.clone()];
        if let Some(old) = inherited {
            paths.extend(std::env::split_paths(old));
        }
        let python_path =
            std::env::join_paths(paths).unwrap_or_else(|_| self.plugin_dir.clone().into());
        vec![
            ("PYTHONPATH", python_path),
            ("AGENT_TOOLS_REACH_OUT", self.prefix.clone().into()),
            ("AGENT_TOOLS_REACH_ROOT", project.into()),
        ]
    }

    /// What the run's processes wrote (one file per pytest process: xdist's workers each
    /// write their own), removed once read. Unreadable files are skipped.
    pub fn take(&self) -> Vec<Output> {
        let Some(dir) = self.prefix.parent() else {
            return Vec::new();
        };
        let Some(stem) = self.prefix.file_name().and_then(|s| s.to_str()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return out;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(rest) = name.strip_prefix(stem).and_then(|r| r.strip_prefix('-')) else {
                continue;
            };
            if !rest.ends_with(".json") && !rest.ends_with(".json.part") {
                continue;
            }
            let path = entry.path();
            if rest.ends_with(".json")
                && let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(parsed) = serde_json::from_str::<Output>(&text)
            {
                out.push(parsed);
            }
            let _ = std::fs::remove_file(&path);
        }
        out
    }
}

/// What one pytest process recorded (see the plugin's doc).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Output {
    /// The digest (sha256, hex) of each file with a recorded function, as it was read.
    pub files: std::collections::BTreeMap<String, String>,
    /// `[path, first line, last line, name]`.
    pub functions: Vec<(String, usize, usize, String)>,
    /// The tests run.
    pub tests: Vec<OutputTest>,
}

/// One test of an [`Output`].
#[derive(Debug, Clone, Deserialize)]
pub struct OutputTest {
    /// Its id, as `list` names it.
    pub id: String,
    /// Its file, relative to the project.
    pub file: String,
    /// The line of its definition.
    pub line: usize,
    /// Indexes into [`Output::functions`].
    pub functions: Vec<usize>,
}
