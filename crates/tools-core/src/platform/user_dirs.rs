//! The per-user folders the tools keep their own files in (installed servers, servers'
//! state, the write journal), where each OS keeps such folders.
//!
//! - Linux and other Unix: the XDG rules, `$XDG_CACHE_HOME/agent-tools` else
//!   `~/.cache/agent-tools`, `$XDG_STATE_HOME/agent-tools` else
//!   `~/.local/state/agent-tools` (a relative XDG value is ignored, as the rules say).
//!   Written here rather than asked of `directories`, which also falls back to the
//!   password database when `HOME` is unset: that would change where today's folders are.
//! - macOS: `~/Library/Caches/agent-tools` and `~/Library/Application Support/agent-tools`.
//! - Windows: `%LOCALAPPDATA%\agent-tools\cache` and `%LOCALAPPDATA%\agent-tools\state`
//!   (the local, not the roaming, application data: caches and state belong to one machine).
//!
//! The macOS and Windows base folders come from the `directories` crate (the Known Folder
//! API on Windows); the layout under each base is [`layout`], a pure function tested for
//! every OS.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The name of the tools' own folder under each base.
pub const APP_FOLDER: &str = "agent-tools";

/// The user's configuration file as answers name it: the way a person of this OS would
/// type it (a path with the user's own folders in it would not fit every reader).
#[cfg(not(windows))]
pub const USER_CONFIG_FILE_SHOWN: &str = "~/.config/agent-tools/config.toml";
/// The user's configuration file as answers name it: the way a person of this OS would
/// type it (a path with the user's own folders in it would not fit every reader).
#[cfg(windows)]
pub const USER_CONFIG_FILE_SHOWN: &str = r"%APPDATA%\agent-tools\config.toml";

/// Which per-user folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserFolder {
    /// Files that can be made again (installed servers, servers' indexes).
    Cache,
    /// Files that must outlive a crash (the write journal).
    State,
    /// The user's own configuration (`config.toml`: trusted roots, auto-install). People
    /// edit it by hand, so on macOS it stays where command-line tools keep theirs
    /// (`~/.config`, or `$XDG_CONFIG_HOME`) rather than under `~/Library`; on Windows it is
    /// the roaming `%APPDATA%`.
    Config,
}

/// Whose folder rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderRules {
    /// The XDG base directories (Linux, other Unix).
    Xdg,
    /// macOS's Library folders.
    MacOs,
    /// Windows' local application data.
    Windows,
}

/// The tools' own folder of `kind` for this user, on this OS; `None` when none can be
/// named (on Unix: no usable XDG variable and no `HOME`).
pub fn user_folder(kind: UserFolder) -> Option<PathBuf> {
    #[cfg(not(any(target_os = "macos", windows)))]
    {
        xdg_folder(kind)
    }
    #[cfg(target_os = "macos")]
    {
        let dirs = directories::BaseDirs::new()?;
        let base = match kind {
            UserFolder::Cache => dirs.cache_dir(),
            UserFolder::State => dirs.data_local_dir(),
            UserFolder::Config => return xdg_folder(kind),
        };
        Some(layout(FolderRules::MacOs, kind, base))
    }
    #[cfg(windows)]
    {
        let dirs = directories::BaseDirs::new()?;
        let base = match kind {
            UserFolder::Config => dirs.config_dir(),
            UserFolder::Cache | UserFolder::State => dirs.data_local_dir(),
        };
        Some(layout(FolderRules::Windows, kind, base))
    }
}

/// The tools' folder of `kind` by the XDG rules, from this process's environment.
#[cfg(not(windows))]
fn xdg_folder(kind: UserFolder) -> Option<PathBuf> {
    let var = match kind {
        UserFolder::Cache => "XDG_CACHE_HOME",
        UserFolder::State => "XDG_STATE_HOME",
        UserFolder::Config => "XDG_CONFIG_HOME",
    };
    let base = xdg_base(kind, std::env::var_os(var), std::env::var_os("HOME"))?;
    Some(layout(FolderRules::Xdg, kind, &base))
}

/// The XDG base folder of `kind` from its variable's value `var` and `home`: `var` when it
/// is an absolute path, else `home`'s `.cache`, `.local/state` or `.config`.
pub fn xdg_base(
    kind: UserFolder,
    var: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    if let Some(v) = var.map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(v);
    }
    let home = PathBuf::from(home.filter(|h| !h.is_empty())?);
    Some(match kind {
        UserFolder::Cache => home.join(".cache"),
        UserFolder::State => home.join(".local").join("state"),
        UserFolder::Config => home.join(".config"),
    })
}

/// The tools' folder of `kind` under the OS's `base` folder for it (the XDG base, macOS's
/// `~/Library/Caches` or `~/Library/Application Support`, Windows' `%LOCALAPPDATA%`).
pub fn layout(rules: FolderRules, kind: UserFolder, base: &Path) -> PathBuf {
    let own = base.join(APP_FOLDER);
    match (rules, kind) {
        (FolderRules::Xdg | FolderRules::MacOs, _) => own,
        // The roaming base holds only the configuration.
        (FolderRules::Windows, UserFolder::Config) => own,
        // One base holds both on Windows: a folder each.
        (FolderRules::Windows, UserFolder::Cache) => own.join("cache"),
        (FolderRules::Windows, UserFolder::State) => own.join("state"),
    }
}

/// The folder for this user's live sockets (the per-user daemon's): `$XDG_RUNTIME_DIR/agent-tools`
/// on Linux when that variable names an absolute folder (it is private to the user and
/// emptied at logout), else `run` in the state folder. `None` when no state folder can be
/// named either.
pub fn runtime_folder() -> Option<PathBuf> {
    #[cfg(not(any(target_os = "macos", windows)))]
    if let Some(v) = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return Some(v.join(APP_FOLDER));
    }
    Some(user_folder(UserFolder::State)?.join("run"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    // The XDG rules are Unix's: `/x/cache` is not an absolute path on Windows.
    #[cfg(unix)]
    #[test]
    fn xdg_takes_an_absolute_variable_else_the_home_folder() {
        use UserFolder::*;
        assert_eq!(
            xdg_base(Cache, os("/x/cache"), os("/h")),
            Some("/x/cache".into())
        );
        assert_eq!(
            xdg_base(Cache, os("rel"), os("/h")),
            Some("/h/.cache".into())
        );
        assert_eq!(xdg_base(Cache, None, os("/h")), Some("/h/.cache".into()));
        assert_eq!(
            xdg_base(State, os(""), os("/h")),
            Some("/h/.local/state".into())
        );
        assert_eq!(xdg_base(State, None, os("")), None);
        assert_eq!(xdg_base(Config, None, os("/h")), Some("/h/.config".into()));
        assert_eq!(xdg_base(Cache, None, None), None);
    }

    #[test]
    fn each_os_keeps_the_tools_folders_under_its_own_base() {
        use FolderRules::*;
        use UserFolder::*;
        let at = |r, k, b: &str| layout(r, k, Path::new(b));
        assert_eq!(
            at(Xdg, Cache, "/h/.cache"),
            Path::new("/h/.cache/agent-tools")
        );
        assert_eq!(
            at(Xdg, State, "/h/.local/state"),
            Path::new("/h/.local/state/agent-tools")
        );
        assert_eq!(
            at(MacOs, Cache, "/Users/u/Library/Caches"),
            Path::new("/Users/u/Library/Caches/agent-tools")
        );
        assert_eq!(
            at(MacOs, State, "/Users/u/Library/Application Support"),
            Path::new("/Users/u/Library/Application Support/agent-tools")
        );
        let local = "C:/Users/u/AppData/Local";
        assert_eq!(
            at(Windows, Cache, local),
            Path::new(local).join("agent-tools").join("cache")
        );
        assert_eq!(
            at(Windows, State, local),
            Path::new(local).join("agent-tools").join("state")
        );
        assert_eq!(
            at(Xdg, Config, "/h/.config"),
            Path::new("/h/.config/agent-tools")
        );
        let roaming = "C:/Users/u/AppData/Roaming";
        assert_eq!(
            at(Windows, Config, roaming),
            Path::new(roaming).join("agent-tools")
        );
    }

    #[cfg(not(any(target_os = "macos", windows)))]
    #[test]
    fn on_linux_the_folders_follow_the_xdg_variables() {
        // Only reads the variables: the test environment's own.
        let cache = user_folder(UserFolder::Cache);
        let expected = xdg_base(
            UserFolder::Cache,
            std::env::var_os("XDG_CACHE_HOME"),
            std::env::var_os("HOME"),
        )
        .map(|b| b.join("agent-tools"));
        assert_eq!(cache, expected);
    }
}
