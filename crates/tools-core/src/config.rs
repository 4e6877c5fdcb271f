//! `agent-tools.toml`: one file, one section per tool family. Every family deserialises its
//! own section; with no file at all every family runs on its defaults.
//!
//! A file that comes from the repository (the root's `agent-tools.toml`, or an explicit file
//! inside the workspace) is written by whoever wrote the repository. In an untrusted run it
//! may tune limits and server settings, but every key that names a program, an argument list
//! or environment ([`PROGRAM_KEYS`], and server settings such as `python.pythonPath` or
//! `check.overrideCommand`) is dropped before any family reads it, and the dropped
//! keys are remembered so `doctor` and `status` can say which ([`Config::ignored_keys`]).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::ToolError;

/// The file name looked for at the workspace root.
pub const CONFIG_FILE_NAME: &str = "agent-tools.toml";

/// Keys that name a program, its arguments, its environment or an interpreter, in any
/// section (with a string or list value; `env` with any value). Server `settings` and `initialization_options` are data for the server and are
/// kept whole.
pub const PROGRAM_KEYS: &[&str] = &[
    "command",
    "commands",
    "read_only_command",
    "program",
    "args",
    "env",
    "python",
    "node",
    "interpreter",
];

/// Subtrees that are a server's own data: kept, except for the entries
/// [`names_program_in_settings`] recognises.
const DATA_KEYS: &[&str] = &["settings", "initialization_options"];

/// Fragments of server-setting names that point a server at a program or an interpreter
/// (`python.pythonPath`, `rust-analyzer.check.overrideCommand`, `typescript.tsdk`,
/// `tsserver.path`, `cargo.buildScripts.overrideCommand`, `server.extraEnv`, tsserver
/// `plugins`, …),
/// compared case-insensitively.
const PROGRAM_SETTING_FRAGMENTS: &[&str] = &[
    "command",
    "path",
    "executable",
    "interpreter",
    "env",
    "tsdk",
    "wrapper",
    "binary",
    "plugin",
];

/// Whether a server-setting name may point the server at a program (an untrusted run drops
/// it; a few harmless path lists such as `extraPaths` go with them).
fn names_program_in_settings(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    PROGRAM_SETTING_FRAGMENTS.iter().any(|f| lower.contains(f))
}

/// The parsed configuration file (or an empty one).
#[derive(Debug, Clone, Default)]
pub struct Config {
    table: toml::Table,
    path: Option<PathBuf>,
    from_repository: bool,
    ignored: Vec<String>,
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
        cfg.from_repository = inside(&path, root);
        cfg.path = Some(path);
        Ok(cfg)
    }

    /// Whether this configuration came from a file inside the workspace (the repository's
    /// own), as opposed to one the user or the embedding harness gave.
    pub fn from_repository(&self) -> bool {
        self.from_repository
    }

    /// Marks this configuration as the repository's own (or not).
    pub fn with_origin(mut self, from_repository: bool) -> Self {
        self.from_repository = from_repository;
        self
    }

    /// The configuration an untrusted or trusted run reads: unchanged when `trusted` or not
    /// from the repository; otherwise without any entry that names a program, its arguments
    /// or its environment (the module's `PROGRAM_KEYS`).
    pub fn for_trust(mut self, trusted: bool) -> Self {
        if trusted || !self.from_repository {
            return self;
        }
        let mut ignored = Vec::new();
        strip_program_keys(&mut self.table, "", &mut ignored);
        ignored.sort();
        self.ignored = ignored;
        self
    }

    /// The dotted keys an untrusted run dropped (e.g. `lsp.servers.python.command`).
    pub fn ignored_keys(&self) -> &[String] {
        &self.ignored
    }

    /// Parses configuration text.
    pub fn parse(text: &str) -> Result<Self, ToolError> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| ToolError::invalid("config", e.to_string()))?;
        Ok(Config {
            table,
            ..Config::default()
        })
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

/// Whether `path` lies inside `root` (both resolved; a path that cannot be resolved is taken
/// as given).
fn inside(path: &Path, root: &Path) -> bool {
    let resolve = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let root = resolve(root);
    let path = if path.is_absolute() {
        resolve(path)
    } else {
        // A relative `--config` is relative to where the server was started, which may be
        // the workspace itself.
        std::env::current_dir()
            .map(|d| resolve(&d.join(path)))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    path.starts_with(root)
}

fn strip_program_keys(table: &mut toml::Table, prefix: &str, ignored: &mut Vec<String>) {
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let dotted = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        // `python` is also a language name (`[lsp.servers.python]`): a program key names a
        // program only with a string or list value; `env` is a table of variables.
        let names_program = PROGRAM_KEYS.contains(&key.as_str())
            && (key == "env" || !matches!(table.get(&key), Some(toml::Value::Table(_))));
        if names_program {
            table.remove(&key);
            ignored.push(dotted);
        } else if let Some(toml::Value::Table(inner)) = table.get_mut(&key) {
            if DATA_KEYS.contains(&key.as_str()) {
                strip_program_settings(inner, &dotted, ignored);
            } else {
                strip_program_keys(inner, &dotted, ignored);
            }
        }
    }
}

/// In a server's `settings` or `initialization_options`: drops every entry whose name may
/// point the server at a program, at any depth (a dotted key such as
/// `"python.pythonPath"` is one name).
fn strip_program_settings(table: &mut toml::Table, prefix: &str, ignored: &mut Vec<String>) {
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let dotted = format!("{prefix}.{key}");
        let last = key.rsplit('.').next().unwrap_or(&key);
        if names_program_in_settings(last) {
            table.remove(&key);
            ignored.push(dotted);
        } else if let Some(toml::Value::Table(inner)) = table.get_mut(&key) {
            strip_program_settings(inner, &dotted, ignored);
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

    #[test]
    fn untrusted_repository_config_loses_every_program_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE_NAME),
            "[lsp]\nrequest_timeout_ms = 7\n[lsp.servers.python]\ncommand = [\"evil\"]\n\
             settings = { python = { pythonPath = \".venv/bin/python\", analysis = { typeCheckingMode = \"strict\" } } }\n[vibe.fast]\ncommand = [\"sh\"]\n\
             env = { A = \"1\" }\ntimeout_seconds = 3\n[eval]\npython = \"x\"\n",
        )
        .unwrap();
        let cfg = Config::load(dir.path(), None).unwrap();
        assert!(cfg.from_repository());
        let trusted = cfg.clone().for_trust(true);
        assert!(trusted.ignored_keys().is_empty());
        let untrusted = cfg.for_trust(false);
        assert_eq!(
            untrusted.ignored_keys(),
            [
                "eval.python",
                "lsp.servers.python.command",
                "lsp.servers.python.settings.python.pythonPath",
                "vibe.fast.command",
                "vibe.fast.env"
            ]
        );
        let lsp = untrusted.raw_section("lsp").unwrap();
        assert_eq!(lsp["request_timeout_ms"].as_integer(), Some(7));
        let settings = &lsp["servers"]["python"]["settings"]["python"];
        assert!(settings.get("pythonPath").is_none());
        assert_eq!(
            settings["analysis"]["typeCheckingMode"].as_str(),
            Some("strict")
        );
        // A configuration handed over by the embedder is not the repository's.
        let given = Config::parse("[eval]\npython = \"x\"\n").unwrap();
        assert!(
            given
                .for_trust(false)
                .raw_section("eval")
                .unwrap()
                .get("python")
                .is_some()
        );
    }

    #[test]
    fn an_explicit_file_outside_the_workspace_is_the_users_own() {
        let ws = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let mine = elsewhere.path().join("mine.toml");
        std::fs::write(&mine, "[eval]\npython = \"/usr/bin/python3\"\n").unwrap();
        let cfg = Config::load(ws.path(), Some(&mine)).unwrap();
        assert!(!cfg.from_repository());
        assert!(cfg.for_trust(false).ignored_keys().is_empty());
        let inside = ws.path().join("other.toml");
        std::fs::write(&inside, "[eval]\npython = \"x\"\n").unwrap();
        let cfg = Config::load(ws.path(), Some(&inside)).unwrap();
        assert!(cfg.from_repository());
        assert_eq!(cfg.for_trust(false).ignored_keys(), ["eval.python"]);
    }
}
