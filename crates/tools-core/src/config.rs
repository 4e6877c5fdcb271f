//! `agent-tools.toml`: one file, one section per tool family. Every family deserialises its
//! own section; with no file at all every family runs on its defaults.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::ToolError;

/// The file name looked for at the workspace root.
pub const CONFIG_FILE_NAME: &str = "agent-tools.toml";

/// The parsed configuration file (or an empty one).
#[derive(Debug, Clone, Default)]
pub struct Config {
    table: toml::Table,
    path: Option<PathBuf>,
}

impl Config {
    /// An empty configuration: every family on its defaults.
    pub fn empty() -> Self {
        Config::default()
    }

    /// Loads `explicit` if given (it must exist), else `<root>/agent-tools.toml` if it exists,
    /// else an empty configuration.
    pub fn load(root: &Path, explicit: Option<&Path>) -> Result<Self, ToolError> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => {
                let p = root.join(CONFIG_FILE_NAME);
                p.is_file().then_some(p)
            }
        };
        let Some(path) = path else {
            return Ok(Config::empty());
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ToolError::invalid("config", format!("cannot read {}: {e}", path.display()))
        })?;
        let mut cfg = Config::parse(&text)
            .map_err(|e| ToolError::invalid("config", format!("{}: {e}", path.display())))?;
        cfg.path = Some(path);
        Ok(cfg)
    }

    /// Parses configuration text.
    pub fn parse(text: &str) -> Result<Self, ToolError> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| ToolError::invalid("config", e.to_string()))?;
        Ok(Config { table, path: None })
    }

    /// Where the configuration came from, if a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether a top-level section exists (e.g. `vibe`, whose presence turns vibe mode on).
    pub fn has_section(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    /// The raw section, if present.
    pub fn raw_section(&self, name: &str) -> Option<&toml::Value> {
        self.table.get(name)
    }

    /// Deserialises section `name`, or `T::default()` when the section is absent.
    pub fn section<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, ToolError> {
        match self.table.get(name) {
            None => Ok(T::default()),
            Some(v) => v.clone().try_into().map_err(|e: toml::de::Error| {
                ToolError::invalid("config", format!("section [{name}]: {e}"))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Default, Debug, PartialEq)]
    struct Lsp {
        #[serde(default)]
        timeout_ms: u64,
    }

    #[test]
    fn sections_default_when_absent() {
        let c = Config::parse("[lsp]\ntimeout_ms = 5\n").unwrap();
        assert_eq!(c.section::<Lsp>("lsp").unwrap(), Lsp { timeout_ms: 5 });
        assert_eq!(c.section::<Lsp>("other").unwrap(), Lsp::default());
        assert!(c.has_section("lsp"));
        assert!(Config::parse("[lsp\n").is_err());
        let bad = Config::parse("[lsp]\ntimeout_ms = \"x\"\n").unwrap();
        assert!(bad.section::<Lsp>("lsp").is_err());
    }
}
