//! A server's own state folder outside the project: some servers (jdtls) must be told
//! where to keep their index, and the project is the wrong place. A candidate's argument
//! `{state_dir}` becomes `$XDG_CACHE_HOME/agent-tools/state/LANGUAGE/HASH`, one folder per
//! project root, created on first use.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The placeholder a candidate's argument may hold.
pub const STATE_DIR: &str = "{state_dir}";

/// The user's cache folder: `$XDG_CACHE_HOME`, else `~/.cache`, else the temporary folder.
fn cache_home() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x);
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(h).join(".cache");
    }
    std::env::temp_dir()
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
        .join("agent-tools/state")
        .join(safe)
        .join(format!("{:016x}", h.finish()))
}

/// `args` with every `{state_dir}` replaced by the state folder of `language` for `root`,
/// which is created when an argument names it.
pub fn expand_args(args: &[String], language: &str, root: &Path) -> Vec<String> {
    if !args.iter().any(|a| a.contains(STATE_DIR)) {
        return args.to_vec();
    }
    let dir = state_dir(language, root);
    // A folder that cannot be created leaves the server to report it when it starts.
    let _ = std::fs::create_dir_all(&dir);
    let shown = dir.display().to_string();
    args.iter().map(|a| a.replace(STATE_DIR, &shown)).collect()
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
}
