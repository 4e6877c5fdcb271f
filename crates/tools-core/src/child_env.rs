//! The environment every child process gets, decided once.
//!
//! A tool server runs with its user's API keys and tokens in its environment; a language
//! server, a build script, a kernel, a debuggee or a worker has no business seeing them
//! (Codex's `shell_environment_policy` makes the same call). So every child starts from an
//! empty environment and gets:
//!
//! - the minimal set in [`BASE_VARIABLES`] (and every `LC_*`): what a program needs to find
//!   its tools, its home, its locale and a temp folder, plus the tool-chain variables that
//!   say where Go, Rust, Python and Node keep their installs and caches;
//! - what the user's own configuration passes through by name or `*` pattern
//!   (`[env] pass`, and `[env] workers` for worker CLIs only).
//!
//! In an untrusted run children also get [`untrusted_pins`], so a repository's toolchain file
//! cannot pick the `cargo` or `rust-analyzer` that runs.
//!
//! A variable whose name contains `KEY`, `SECRET`, `TOKEN` or `PASSWORD` (in any case) is
//! never passed by the minimal set or by a pattern: only an exact name in the user's list
//! passes it. `PYTHONPATH`, `NODE_PATH`, `LD_PRELOAD` and proxy variables (which often carry
//! credentials) are not in the minimal set: they change what code a child loads or where its
//! traffic goes, so the user names them when wanted.

use std::ffi::{OsStr, OsString};
use std::sync::Arc;

use crate::Run;
use crate::trust::{EnvSection, UserConfig};

/// Variables every child gets when the server has them.
pub const BASE_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "LD_LIBRARY_PATH",
    // Go: where the tool chain, modules and build cache live.
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    // Rust: the rustup and cargo installs.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    // Python: the active environment and the pyenv shims on PATH.
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    // Node: version managers whose shims are on PATH.
    "NVM_DIR",
    "NVM_BIN",
];

/// Name fragments that make a variable a secret (compared case-insensitively).
pub const SECRET_FRAGMENTS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD"];

/// Whether `name` looks like it holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_FRAGMENTS.iter().any(|f| upper.contains(f))
}

/// Who a child is, for the variables only some children get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// A language server, checker, adapter, debuggee or kernel.
    Tool,
    /// A worker CLI (`vibe_spawn`): it also gets the user's `[env] workers`.
    Worker,
}

/// The environment policy of a run: the minimal set plus the user's pass-through lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct EnvPolicy {
    pass: Vec<String>,
    workers: Vec<String>,
}

impl EnvPolicy {
    /// The policy the user's `[env]` section describes.
    pub fn new(env: &EnvSection) -> Self {
        EnvPolicy {
            pass: env.pass.clone(),
            workers: env.workers.clone(),
        }
    }

    /// The policy of the user's own configuration file; an unreadable file gives the
    /// minimal set only (and a warning in the log), never the whole environment.
    pub fn from_user_config() -> Self {
        match UserConfig::load() {
            Ok(u) => EnvPolicy::new(&u.env),
            Err(e) => {
                tracing::warn!("{e}; children get the minimal environment only");
                EnvPolicy::default()
            }
        }
    }

    /// Whether a child of `kind` gets variable `name`.
    pub fn allows(&self, name: &str, kind: ChildKind) -> bool {
        let lists: &[&Vec<String>] = match kind {
            ChildKind::Tool => &[&self.pass],
            ChildKind::Worker => &[&self.pass, &self.workers],
        };
        if lists.iter().any(|l| l.iter().any(|n| n == name)) {
            return true;
        }
        if looks_secret(name) {
            return false;
        }
        if BASE_VARIABLES.contains(&name) || name.starts_with("LC_") {
            return true;
        }
        lists
            .iter()
            .any(|l| l.iter().any(|p| p.contains('*') && glob_matches(p, name)))
    }

    /// The variables of `from` a child of `kind` gets.
    pub fn filter<I>(&self, from: I, kind: ChildKind) -> Vec<(OsString, OsString)>
    where
        I: IntoIterator<Item = (OsString, OsString)>,
    {
        from.into_iter()
            .filter(|(k, _)| k.to_str().is_some_and(|k| self.allows(k, kind)))
            .collect()
    }

    /// Clears `cmd`'s environment and sets what this policy lets through from ours.
    pub fn apply(&self, cmd: &mut tokio::process::Command, kind: ChildKind) {
        cmd.env_clear();
        cmd.envs(self.filter(std::env::vars_os(), kind));
    }

    /// As [`EnvPolicy::apply`], for a blocking `std::process::Command`.
    pub fn apply_std(&self, cmd: &mut std::process::Command, kind: ChildKind) {
        cmd.env_clear();
        cmd.envs(self.filter(std::env::vars_os(), kind));
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == name;
    }
    if !name.starts_with(first) || !name.ends_with(last) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The run's environment policy: installed by whoever opened the run, else read from the
/// user's configuration on first use.
pub fn env_policy(run: &Run) -> Arc<EnvPolicy> {
    run.state(EnvPolicy::from_user_config)
}

/// A command for `program` with the run's environment policy applied: the one way every
/// tool crate builds a child (language servers, checkers, adapters, debuggees, kernels).
/// In an untrusted run the tool-chain pins of [`untrusted_pins`] are added.
pub fn child_command(run: &Run, program: impl AsRef<OsStr>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    env_policy(run).apply(&mut cmd, ChildKind::Tool);
    if !run.trusted() {
        cmd.envs(untrusted_pins());
    }
    cmd
}

/// As [`child_command`] for a worker CLI, which also gets the user's `[env] workers`.
pub fn worker_command(run: &Run, program: impl AsRef<OsStr>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    env_policy(run).apply(&mut cmd, ChildKind::Worker);
    if !run.trusted() {
        cmd.envs(untrusted_pins());
    }
    cmd
}

/// As [`child_command`], blocking (`std::process`), for short probes.
pub fn std_child_command(run: &Run, program: impl AsRef<OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    env_policy(run).apply_std(&mut cmd, ChildKind::Tool);
    if !run.trusted() {
        cmd.envs(untrusted_pins());
    }
    cmd
}

/// Variables that keep a repository from choosing the tool chain that runs: a
/// `rust-toolchain.toml` may name a toolchain by `path` (a folder of the repository's own
/// `cargo` and `rust-analyzer`, which the rustup proxies would run), and a `go.mod`
/// `toolchain` line makes `go` fetch and run another release. Untrusted children get
/// `RUSTUP_TOOLCHAIN` (the user's default toolchain) and `GOTOOLCHAIN=local`, unless the user
/// set them.
pub fn untrusted_pins() -> Vec<(OsString, OsString)> {
    let mut pins = Vec::new();
    if std::env::var_os("RUSTUP_TOOLCHAIN").is_none()
        && let Some(t) = default_rust_toolchain()
    {
        pins.push(("RUSTUP_TOOLCHAIN".into(), t.into()));
    }
    if std::env::var_os("GOTOOLCHAIN").is_none() {
        pins.push(("GOTOOLCHAIN".into(), "local".into()));
    }
    pins
}

/// The user's default rustup toolchain, asked once, from `/` (so no toolchain file of any
/// project applies). `None` without rustup.
fn default_rust_toolchain() -> Option<String> {
    static DEFAULT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            let rustup = crate::process::which("rustup")?;
            let mut cmd = std::process::Command::new(rustup);
            EnvPolicy::default().apply_std(&mut cmd, ChildKind::Tool);
            let out = cmd
                .arg("default")
                .current_dir("/")
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())?;
            let text = String::from_utf8(out.stdout).ok()?;
            let name = text.split_whitespace().next()?.to_string();
            (!name.is_empty() && name != "no").then_some(name)
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(v: Vec<(OsString, OsString)>) -> Vec<String> {
        v.into_iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn minimal_set_drops_secrets_and_unknowns() {
        let p = EnvPolicy::default();
        let env = vars(&[
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("LC_ALL", "C"),
            ("GOPATH", "/g"),
            ("OPENAI_API_KEY", "x"),
            ("GITHUB_TOKEN", "x"),
            ("db_password", "x"),
            ("PYTHONPATH", "/p"),
            ("RANDOM_THING", "x"),
        ]);
        assert_eq!(
            names(p.filter(env, ChildKind::Tool)),
            ["PATH", "HOME", "LC_ALL", "GOPATH"]
        );
    }

    #[test]
    fn user_lists_pass_by_name_and_pattern_but_secrets_only_by_name() {
        let p = EnvPolicy::new(&EnvSection {
            pass: vec!["PYTHONPATH".into(), "MY_*".into(), "*".into()],
            workers: vec!["ANTHROPIC_API_KEY".into()],
        });
        let env = vars(&[
            ("PYTHONPATH", "/p"),
            ("MY_SETTING", "1"),
            ("MY_SECRET_TOKEN", "x"),
            ("ANTHROPIC_API_KEY", "x"),
        ]);
        assert_eq!(
            names(p.filter(env.clone(), ChildKind::Tool)),
            ["PYTHONPATH", "MY_SETTING"]
        );
        assert_eq!(
            names(p.filter(env, ChildKind::Worker)),
            ["PYTHONPATH", "MY_SETTING", "ANTHROPIC_API_KEY"]
        );
    }

    #[test]
    fn glob_patterns() {
        assert!(glob_matches("AWS_*", "AWS_REGION"));
        assert!(glob_matches("*_URL", "PROXY_URL"));
        assert!(glob_matches("A*B*C", "AxxBxxC"));
        assert!(!glob_matches("A*B*C", "AxxC"));
        assert!(!glob_matches("AB*BA", "ABA"));
        assert!(glob_matches("EXACT", "EXACT"));
        assert!(!glob_matches("EXACT", "EXACTLY"));
    }
}
