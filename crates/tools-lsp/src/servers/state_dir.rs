//! A server's own state folder outside the project: some servers (jdtls) must be told
//! where to keep their index, and the project is the wrong place. A candidate's argument
//! `{state_dir}` becomes `$XDG_CACHE_HOME/agent-tools/state/LANGUAGE/HASH` (the tools' cache
//! folder of each OS, see `tools_core::platform::user_folder`), one folder per project
//! root, created on first use.
//!
//! clangd keeps its background index beside the compile database it reads
//! (`.cache/clangd/index` in the checkout). The argument `{compile_commands_dir}` (in
//! `--compile-commands-dir={compile_commands_dir}`) becomes a folder of the state folder
//! holding a link to the project's `compile_commands.json`, so the index lands there; with
//! no database the argument is dropped (clangd then writes no index into the project).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The placeholder a candidate's argument may hold.
pub const STATE_DIR: &str = "{state_dir}";

/// The placeholder for a folder outside the project that holds (a link to) its compile
/// database.
pub const COMPILE_COMMANDS_DIR: &str = "{compile_commands_dir}";

/// The tools' cache folder ([`tools_core::platform::user_folder`]: on Linux
/// `$XDG_CACHE_HOME/agent-tools`, else `~/.cache/agent-tools`), else one in the temporary
/// folder.
fn cache_home() -> PathBuf {
    tools_core::platform::user_folder(tools_core::platform::UserFolder::Cache)
        .unwrap_or_else(|| std::env::temp_dir().join(tools_core::platform::APP_FOLDER))
}

/// The state folder of `language`'s server for `root` (not created).
pub fn state_dir(language: &str, root: &Path) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    let safe: String = language
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    cache_home()
        .join("state")
        .join(safe)
        .join(format!("{:016x}", h.finish()))
}

/// `args` with every `{state_dir}` replaced by the state folder of `language` for `root`,
/// which is created when an argument names it, and every argument holding
/// `{compile_commands_dir}` either naming the mirror of `root`'s compile database or, with
/// none, left out.
pub fn expand_args(args: &[String], language: &str, root: &Path) -> Vec<String> {
    if !args
        .iter()
        .any(|a| a.contains(STATE_DIR) || a.contains(COMPILE_COMMANDS_DIR))
    {
        return args.to_vec();
    }
    let dir = state_dir(language, root);
    let mirror = if args.iter().any(|a| a.contains(COMPILE_COMMANDS_DIR)) {
        mirror_compile_database(&dir, root)
    } else {
        None
    };
    if args.iter().any(|a| a.contains(STATE_DIR)) {
        // A folder that cannot be created leaves the server to report it when it starts.
        let _ = std::fs::create_dir_all(&dir);
    }
    let shown = dir.display().to_string();
    args.iter()
        .filter_map(|a| {
            if a.contains(COMPILE_COMMANDS_DIR) {
                let m = mirror.as_ref()?;
                Some(a.replace(COMPILE_COMMANDS_DIR, &m.display().to_string()))
            } else {
                Some(a.replace(STATE_DIR, &shown))
            }
        })
        .collect()
}

/// The compile database clangd would read for `root`: `compile_commands.json` in the root,
/// else in its `build` folder (clangd's own search order within a folder).
pub fn compile_database(root: &Path) -> Option<PathBuf> {
    ["compile_commands.json", "build/compile_commands.json"]
        .iter()
        .map(|rel| root.join(rel))
        .find(|p| p.is_file())
}

/// A folder under `state` whose `compile_commands.json` is a link to `root`'s database (a
/// copy where links are unavailable), or `None` when `root` has no database or the folder
/// cannot be made — then clangd reads the project's own and the caller drops the argument.
fn mirror_compile_database(state: &Path, root: &Path) -> Option<PathBuf> {
    let db = compile_database(root)?;
    let dir = state.join("compile-db");
    std::fs::create_dir_all(&dir).ok()?;
    let link = dir.join("compile_commands.json");
    // A link left by an earlier start may name a database that moved (root → build).
    if std::fs::symlink_metadata(&link).is_ok() {
        std::fs::remove_file(&link).ok()?;
    }
    tools_core::platform::link_file(&db, &link).ok()?;
    Some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_becomes_one_folder_per_root_outside_it() {
        let root = Path::new("/some/project");
        let args = vec!["-data".to_string(), STATE_DIR.to_string()];
        let out = expand_args(&args, "java", root);
        assert_eq!(out[0], "-data");
        assert!(!out[1].contains(STATE_DIR));
        assert!(!Path::new(&out[1]).starts_with(root));
        assert_eq!(out[1], state_dir("java", root).display().to_string());
        assert_ne!(
            state_dir("java", root),
            state_dir("java", Path::new("/other"))
        );
        let plain = vec!["--stdio".to_string()];
        assert_eq!(expand_args(&plain, "java", root), plain);
    }

    #[test]
    fn the_compile_database_is_read_through_a_link_outside_the_project() {
        let cache = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let state = cache.path().join("state");
        let args = vec![
            "--use-dirty-headers".to_string(),
            format!("--compile-commands-dir={COMPILE_COMMANDS_DIR}"),
        ];
        // No database: the argument is dropped.
        assert_eq!(
            mirror_compile_database(&state, project.path()),
            None,
            "no database, no mirror"
        );
        std::fs::create_dir_all(project.path().join("build")).unwrap();
        std::fs::write(project.path().join("build/compile_commands.json"), "[]").unwrap();
        let dir = mirror_compile_database(&state, project.path()).unwrap();
        assert_eq!(dir, state.join("compile-db"));
        assert_eq!(
            std::fs::read_link(dir.join("compile_commands.json")).unwrap(),
            project.path().join("build/compile_commands.json")
        );
        // The root's own database wins, and a second start relinks.
        std::fs::write(project.path().join("compile_commands.json"), "[]").unwrap();
        let dir = mirror_compile_database(&state, project.path()).unwrap();
        assert_eq!(
            std::fs::read_link(dir.join("compile_commands.json")).unwrap(),
            project.path().join("compile_commands.json")
        );
        let expanded = expand_args(&args, "c", project.path());
        assert_eq!(expanded[0], "--use-dirty-headers");
        let named = expanded[1].strip_prefix("--compile-commands-dir=").unwrap();
        assert!(!Path::new(named).starts_with(project.path()), "{named}");
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(
            expand_args(&args, "c", bare.path()),
            ["--use-dirty-headers"]
        );
    }
}
