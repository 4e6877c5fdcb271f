//! Workspace trust: whether this run may execute programs the repository chose.
//!
//! A repository the user did not write must not be able to run code just because an agent
//! looked at it (VS Code's restricted mode, Codex's per-project trust). A run is *trusted*
//! only when the user says so: an explicit flag from the embedder (`--trust`,
//! `RunOptions::trusted`), or the workspace root (or one of its parents) listed in the user's
//! own configuration file, which lives outside every repository:
//!
//! ```toml
//! # $XDG_CONFIG_HOME/agent-tools/config.toml (default ~/.config/agent-tools/config.toml)
//! [trust]
//! roots = ["~/src/mine", "/srv/work/team-repo"]
//!
//! [env]
//! pass = ["MY_PROXY_URL", "AWS_*"]        # passed to every child process
//! workers = ["ANTHROPIC_API_KEY"]         # passed to worker CLIs only
//!
//! [lsp]
//! auto_install = true                     # install a missing language server on first need
//! ```
//!
//! What an untrusted run skips is decided where programs are found
//! ([`crate::discovery`]) and where the repository's `agent-tools.toml` is read
//! ([`crate::Config`]); this module only holds the user's file and the wording of the one
//! line every affected answer carries.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ToolError;

/// The user's own configuration file name, under `$XDG_CONFIG_HOME/agent-tools/`.
pub const USER_CONFIG_FILE: &str = "config.toml";

/// The user's own configuration (`~/.config/agent-tools/config.toml`): which roots are
/// trusted and which environment variables children get beyond the minimal set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UserConfig {
    /// `[trust]`: the trusted roots.
    pub trust: TrustSection,
    /// `[env]`: the environment passed through to children.
    pub env: EnvSection,
    /// `[lsp]`: the language-server choices only the user may make.
    pub lsp: UserLspSection,
    /// `[daemon]`: the per-user daemon that keeps language servers warm between
    /// conversations.
    pub daemon: DaemonSection,
}

/// `[daemon]` of the user's configuration: only the user decides whether their
/// conversations share language servers through a long-lived process of theirs.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonSection {
    /// Serve every `agent-tools mcp` conversation's language servers from the per-user
    /// daemon (started on first need); `false` serves them in-process, as `--no-daemon`.
    pub enabled: bool,
    /// A server no conversation uses is stopped after this many seconds.
    pub server_idle_s: u64,
    /// The daemon exits after this many seconds with neither conversations nor servers.
    pub idle_s: u64,
}

impl Default for DaemonSection {
    /// On; servers kept ten minutes after their last conversation; the daemon leaves one
    /// minute after its last server.
    fn default() -> Self {
        DaemonSection {
            enabled: true,
            server_idle_s: 600,
            idle_s: 60,
        }
    }
}

/// `[lsp]` of the user's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UserLspSection {
    /// Install a missing language server into the user's server cache on its first need.
    pub auto_install: bool,
}

/// `[trust]` of the user's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrustSection {
    /// Folders whose repositories (the folder itself and everything below it) are trusted.
    /// A leading `~/` means the home folder.
    pub roots: Vec<String>,
}

/// `[env]` of the user's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvSection {
    /// Variable names or `*` patterns passed to every child process. A secret-looking
    /// variable (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`) is passed only when named
    /// exactly, never through a pattern.
    pub pass: Vec<String>,
    /// As `pass`, for worker CLIs (`vibe_spawn`) only: where a worker's own API key goes.
    pub workers: Vec<String>,
}

impl UserConfig {
    /// Where the user's configuration lives: `$XDG_CONFIG_HOME/agent-tools/config.toml`,
    /// else `$HOME/.config/agent-tools/config.toml` (Linux and macOS), or
    /// `%APPDATA%\agent-tools\config.toml` on Windows. `None` when no such folder can be
    /// named.
    pub fn default_path() -> Option<PathBuf> {
        let folder = crate::platform::user_folder(crate::platform::UserFolder::Config)?;
        Some(folder.join(USER_CONFIG_FILE))
    }

    /// Loads the user's configuration from [`UserConfig::default_path`]; no file is an empty
    /// configuration (nothing trusted, nothing extra passed).
    pub fn load() -> Result<Self, ToolError> {
        match Self::default_path() {
            Some(p) => Self::load_from(&p),
            None => Ok(UserConfig::default()),
        }
    }

    /// Loads `path`; a missing file is an empty configuration, a malformed one an error
    /// naming the file.
    pub fn load_from(path: &Path) -> Result<Self, ToolError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(UserConfig::default());
            }
            Err(e) => {
                return Err(ToolError::invalid(
                    "user config",
                    format!("cannot read {}: {e}", path.display()),
                ));
            }
        };
        Self::parse(&text)
            .map_err(|e| ToolError::invalid("user config", format!("{}: {e}", path.display())))
    }

    /// Parses the text of a user configuration.
    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Whether `root` is one of the trusted roots or lies below one. Both sides are
    /// canonicalised, so a symlink to a trusted folder is trusted and `..` tricks are not.
    pub fn trusts(&self, root: &Path) -> bool {
        let Ok(root) = root.canonicalize() else {
            return false;
        };
        self.trust.roots.iter().any(|listed| {
            expand_home(listed)
                .and_then(|p| p.canonicalize().ok())
                .is_some_and(|p| root.starts_with(p))
        })
    }
}

fn expand_home(listed: &str) -> Option<PathBuf> {
    let p = match listed.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None if listed == "~" => PathBuf::from(std::env::var_os("HOME")?),
        None => PathBuf::from(listed),
    };
    // A relative entry would mean "relative to wherever the server was started": refuse it.
    p.is_absolute().then_some(p)
}

/// The one line an answer carries when an untrusted run skipped `what`, e.g.
/// `untrusted workspace: the project's .venv/bin/python was not run; …`.
pub fn skipped_line(what: &str) -> String {
    format!(
        "untrusted workspace: {what}; start with --trust (or list this folder under [trust] roots in {}) to enable it",
        crate::platform::USER_CONFIG_FILE_SHOWN
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_users_configuration_as_this_os_spells_it() {
        #[cfg(windows)]
        let config = r"%APPDATA%\agent-tools\config.toml";
        #[cfg(not(windows))]
        let config = "~/.config/agent-tools/config.toml";
        assert_eq!(
            skipped_line("the project's build was not run"),
            format!(
                "untrusted workspace: the project's build was not run; start with --trust (or list \
                 this folder under [trust] roots in {config}) to enable it"
            )
        );
    }

    #[test]
    fn trusted_roots_cover_their_subfolders_only() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        let other = dir.path().join("other");
        std::fs::create_dir_all(mine.join("proj")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let cfg = UserConfig::parse(&format!(
            "[trust]\nroots = [{:?}, \"relative/ignored\"]\n",
            mine.display().to_string()
        ))
        .unwrap();
        assert!(cfg.trusts(&mine));
        assert!(cfg.trusts(&mine.join("proj")));
        assert!(!cfg.trusts(&other));
        assert!(!cfg.trusts(&mine.join("proj/../../other")));
        assert!(!UserConfig::default().trusts(&mine));
    }

    #[test]
    fn missing_file_is_empty_and_bad_file_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let none = UserConfig::load_from(&dir.path().join("absent.toml")).unwrap();
        assert!(none.trust.roots.is_empty() && none.env.pass.is_empty());
        let bad = dir.path().join("config.toml");
        std::fs::write(&bad, "[trust]\nroot = 1\n").unwrap();
        let err = UserConfig::load_from(&bad).unwrap_err().to_string();
        assert!(err.contains("config.toml"), "{err}");
    }
}
