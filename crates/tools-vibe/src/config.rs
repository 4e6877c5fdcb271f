//! The `[vibe]` section of `agent-tools.toml`: one sub-table per worker tier, saying which CLI
//! runs a worker of that tier and how to read its result. Also the one place that resolves a
//! tier's program, shared by `vibe_spawn` and `doctor` so both give the same answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tools_core::process::is_executable;

use serde::Deserialize;
use tools_core::{Surface, Tier, ToolError};

/// The placeholder replaced by the brief in a command argument.
pub const BRIEF_PLACEHOLDER: &str = "{brief}";

/// The tier `vibe_spawn` uses when the caller names none.
pub const DEFAULT_TIER: &str = "fast";

/// Shells and interpreters: after a flag such as `-c` or `-e` their next argument is code.
const CODE_RUNNERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox", "python", "node", "perl",
    "ruby", "php", "lua", "pwsh", "deno", "bun",
];

/// Whether `arg` is a flag after which a shell or interpreter reads code (`-c`, `-lc`,
/// `-e`, `--eval`, `--command`, `--print`).
fn is_code_flag(arg: &str) -> bool {
    matches!(arg, "--eval" | "--command" | "--print" | "-p")
        || (arg.starts_with('-')
            && !arg.starts_with("--")
            && arg[1..].chars().any(|c| c == 'c' || c == 'e'))
}

/// Refuses a command that puts `{brief}` into the code a shell or interpreter runs
/// (`sh -c "echo {brief}"`, `python3 -c {brief}`): the brief `$(touch pwned)` would run.
/// Given as an argument of its own after the script (`["sh", "-c", "mycli \"$1\"", "sh",
/// "{brief}"]`) it is data.
fn check_brief_is_one_argument(command: &[String]) -> Result<(), String> {
    let mut rest = command;
    // `env [-i] [NAME=value …] program …` runs `program`.
    while let Some(first) = rest.first()
        && first.rsplit('/').next() == Some("env")
    {
        rest = &rest[1..];
        while rest
            .first()
            .is_some_and(|a| a.starts_with('-') || a.contains('='))
        {
            rest = &rest[1..];
        }
    }
    let Some(first) = rest.first() else {
        return Ok(());
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !(CODE_RUNNERS.contains(&program) || CODE_RUNNERS.contains(&base)) {
        return Ok(());
    }
    for pair in rest[1..].windows(2) {
        if is_code_flag(&pair[0]) && pair[1].contains(BRIEF_PLACEHOLDER) {
            return Err(format!(
                "`{}` puts the brief into the code `{program}` runs, so a brief such as `$(touch pwned)` would run; \
                 give `{BRIEF_PLACEHOLDER}` as an argument of its own after the script and refer to it there, e.g. \
                 [\"sh\", \"-c\", \"mycli \\\"$1\\\"\", \"sh\", \"{BRIEF_PLACEHOLDER}\"]",
                pair[1]
            ));
        }
    }
    Ok(())
}

/// The whole `[vibe]` section: global limits plus one [`TierConfig`] per sub-table.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct VibeConfig {
    /// How many workers may run at once in one run (default 8); a spawn beyond it is refused.
    #[serde(default)]
    pub max_running: Option<usize>,
    /// The tiers by name (`fast`, `good`, or any other sub-table name).
    #[serde(flatten)]
    pub tiers: BTreeMap<String, TierConfig>,
}

impl VibeConfig {
    /// The running-worker cap in force.
    pub fn max_running(&self) -> usize {
        self.max_running.unwrap_or(8).max(1)
    }

    /// Checks every tier (non-empty command, sane durations, a field path for custom
    /// extraction), so a broken file is reported when the run opens, not at the first spawn.
    pub fn validate(&self) -> Result<(), ToolError> {
        for (name, tier) in &self.tiers {
            tier.validate(name)?;
        }
        Ok(())
    }

    /// The tier called `name`, or an error listing the configured ones.
    pub fn tier(&self, name: &str) -> Result<&TierConfig, ToolError> {
        self.tiers.get(name).ok_or_else(|| {
            ToolError::invalid(
                "tier",
                format!(
                    "unknown tier `{name}`; the configured tiers are: {}",
                    self.tier_names()
                ),
            )
        })
    }

    /// The tier used when the caller names none: `fast` if configured, else the only tier.
    pub fn default_tier(&self) -> Result<&str, ToolError> {
        if self.tiers.contains_key(DEFAULT_TIER) {
            return Ok(DEFAULT_TIER);
        }
        match self.tiers.keys().next() {
            Some(only) if self.tiers.len() == 1 => Ok(only),
            _ => Err(ToolError::invalid(
                "tier",
                format!(
                    "no `{DEFAULT_TIER}` tier is configured, so `tier` must be given; the configured tiers are: {}",
                    self.tier_names()
                ),
            )),
        }
    }

    fn tier_names(&self) -> String {
        if self.tiers.is_empty() {
            return "(none: add a [vibe.fast] table with a `command` to agent-tools.toml)".into();
        }
        self.tiers
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How the final result of a worker is read from its output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultFormat {
    /// The end of stdout is the result; the exit code decides done or failed.
    #[default]
    StdoutTail,
    /// Stdout is a stream of JSON events, one per line; the final message and the terminal
    /// status come from the events (see the crate docs for the rules).
    JsonEvents,
}

/// One worker tier, e.g. `[vibe.fast]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    /// The program and its arguments. An argument containing `{brief}` gets the brief
    /// substituted (the brief stays one argument: it is never spliced into a shell or
    /// interpreter script, see `TierConfig::validate`); with no such argument the brief is
    /// written to stdin, which is then closed.
    #[serde(default)]
    pub command: Vec<String>,
    /// The command used when the worker is spawned from a read-capped surface (`plan`,
    /// `read-only`): an invocation of the CLI that cannot change files or run programs, e.g.
    /// `["codex", "exec", "--sandbox", "read-only", "{brief}"]` or
    /// `["claude", "-p", "--permission-mode", "plan", "{brief}"]`. Without it the tier cannot
    /// be spawned from those surfaces.
    #[serde(default)]
    pub read_only_command: Option<Vec<String>>,
    /// The working directory, relative to the workspace root (default: the root). It must
    /// stay inside the workspace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Extra environment variables for the worker.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A wall-clock limit per round; past it the worker is ended and shows `timed out`.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// `stdout-tail` (default) or `json-events`.
    #[serde(default)]
    pub result: ResultFormat,
    /// With `json-events`: a dotted path (e.g. `item.text`) whose string value, in the last
    /// event that has one, is the final message. Without it the known CLIs' shapes are used.
    #[serde(default)]
    pub result_field: Option<String>,
    /// With `result_field`: only events whose fields equal these values count, e.g.
    /// `{ "item.type" = "agent_message" }`.
    #[serde(default)]
    pub result_filter: BTreeMap<String, String>,
    /// After this long without any output a running worker shows `stalled` (default 300).
    #[serde(default)]
    pub stall_seconds: Option<f64>,
    /// A worker still alive this long after its final event is ended (default 10).
    #[serde(default)]
    pub linger_seconds: Option<f64>,
}

impl TierConfig {
    fn validate(&self, name: &str) -> Result<(), ToolError> {
        let bad = |why: String| ToolError::invalid("config", format!("[vibe.{name}]: {why}"));
        match self.command.first() {
            None => return Err(bad("`command` is missing or empty; give the worker CLI and its arguments, e.g. [\"codex\", \"exec\", \"{brief}\"]".into())),
            Some(p) if p.trim().is_empty() => return Err(bad("the program (first element of `command`) is empty".into())),
            Some(_) => {}
        }
        check_brief_is_one_argument(&self.command)
            .map_err(|why| bad(format!("`command`: {why}")))?;
        if let Some(ro) = &self.read_only_command {
            if ro.first().is_none_or(|p| p.trim().is_empty()) {
                return Err(bad("`read_only_command` must name a program".into()));
            }
            check_brief_is_one_argument(ro)
                .map_err(|why| bad(format!("`read_only_command`: {why}")))?;
        }
        for (key, v) in [
            ("timeout_seconds", self.timeout_seconds),
            ("stall_seconds", self.stall_seconds),
            ("linger_seconds", self.linger_seconds),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(bad(format!(
                    "`{key}` must be a positive number of seconds, got {v}"
                )));
            }
        }
        if !self.result_filter.is_empty() && self.result_field.is_none() {
            return Err(bad("`result_filter` needs `result_field`".into()));
        }
        if let Some(f) = &self.result_field
            && (f.is_empty() || f.split('.').any(str::is_empty))
        {
            return Err(bad(format!(
                "`result_field` `{f}` is not a dotted path like `item.text`"
            )));
        }
        Ok(())
    }

    /// The tier as it runs from `surface`: itself on the full surface; on a read-capped
    /// surface (`plan`, `read-only`) with `read_only_command` as its command, or an error
    /// when it declares none.
    pub fn for_surface(&self, name: &str, surface: Surface) -> Result<TierConfig, ToolError> {
        if surface.max_tier >= Tier::Exec {
            return Ok(self.clone());
        }
        match &self.read_only_command {
            Some(ro) => Ok(TierConfig {
                command: ro.clone(),
                ..self.clone()
            }),
            None => Err(ToolError::rejected(format!(
                "tier `{name}` declares no `read_only_command`, so it cannot run from the {} surface \
                 (a worker could change files or run programs there); add one to [vibe.{name}], e.g. \
                 [\"codex\", \"exec\", \"--sandbox\", \"read-only\", \"{{brief}}\"]",
                surface.name
            ))),
        }
    }

    /// Whether the brief goes into an argument (else it goes to stdin).
    pub fn brief_in_args(&self) -> bool {
        self.command.iter().any(|a| a.contains(BRIEF_PLACEHOLDER))
    }

    /// The arguments after the program, with the brief substituted.
    pub fn args_for(&self, brief: &str) -> Vec<String> {
        self.command
            .iter()
            .skip(1)
            .map(|a| a.replace(BRIEF_PLACEHOLDER, brief))
            .collect()
    }

    /// The stall watchdog's limit.
    pub fn stall_after(&self) -> Duration {
        Duration::from_secs_f64(self.stall_seconds.unwrap_or(300.0))
    }

    /// How long a worker may linger after its final event.
    pub fn linger_after(&self) -> Duration {
        Duration::from_secs_f64(self.linger_seconds.unwrap_or(10.0))
    }

    /// The per-round wall-clock limit, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_seconds.map(Duration::from_secs_f64)
    }

    /// The `PATH` the worker will see: the tier's `env.PATH` if set, else ours.
    fn search_path(&self) -> Option<std::ffi::OsString> {
        match self.env.get("PATH") {
            Some(p) => Some(p.into()),
            None => std::env::var_os("PATH"),
        }
    }

    /// Resolves the program: a name with a `/` is taken relative to `cwd`; a bare name is
    /// looked up on the worker's `PATH`. The error says where it looked.
    pub fn resolve_program(&self, cwd: &Path) -> Result<PathBuf, String> {
        let program = self.command.first().map(String::as_str).unwrap_or("");
        if program.contains('/') {
            let p = cwd.join(program);
            return if is_executable(&p) {
                Ok(p)
            } else {
                Err(format!(
                    "`{program}` is not an executable file (looked at {})",
                    p.display()
                ))
            };
        }
        let Some(path) = self.search_path() else {
            return Err(format!("`{program}` cannot be looked up: PATH is not set"));
        };
        std::env::split_paths(&path)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
            .ok_or_else(|| format!("`{program}` is not on the worker's PATH"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> VibeConfig {
        tools_core::Config::parse(text)
            .unwrap()
            .section::<VibeConfig>("vibe")
            .unwrap()
    }

    #[test]
    fn tiers_and_defaults() {
        let c = parse(
            "[vibe]\nmax_running = 3\n[vibe.fast]\ncommand = [\"echo\", \"done: {brief}\"]\n\
             [vibe.good]\ncommand = [\"cat\"]\nresult = \"json-events\"\nresult_field = \"item.text\"\n",
        );
        c.validate().unwrap();
        assert_eq!(c.max_running(), 3);
        assert_eq!(c.default_tier().unwrap(), "fast");
        let fast = c.tier("fast").unwrap();
        assert!(fast.brief_in_args());
        assert_eq!(fast.args_for("hi"), vec!["done: hi"]);
        assert_eq!(fast.result, ResultFormat::StdoutTail);
        let good = c.tier("good").unwrap();
        assert!(!good.brief_in_args());
        assert_eq!(good.result, ResultFormat::JsonEvents);
        let err = c.tier("slow").unwrap_err().to_string();
        assert!(
            err.contains("unknown tier `slow`") && err.contains("`fast`, `good`"),
            "{err}"
        );
        assert!(good.resolve_program(Path::new("/")).is_ok());
    }

    #[test]
    fn bad_tiers_are_reported() {
        let c = parse("[vibe.fast]\ncommand = []\n");
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("[vibe.fast]")
        );
        let c = parse("[vibe.fast]\ncommand = [\"x\"]\nstall_seconds = -1\n");
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("stall_seconds")
        );
        let c = parse("[vibe.fast]\ncommand = [\"x\"]\nresult_field = \"a..b\"\n");
        assert!(c.validate().is_err());
        let bad = tools_core::Config::parse("[vibe.fast]\ncommand = [\"x\"]\nbogus = 1\n").unwrap();
        assert!(bad.section::<VibeConfig>("vibe").is_err());
        let only = parse("[vibe.good]\ncommand = [\"x\"]\n");
        assert_eq!(only.default_tier().unwrap(), "good");
        let two = parse("[vibe.a]\ncommand = [\"x\"]\n[vibe.b]\ncommand = [\"x\"]\n");
        assert!(two.default_tier().is_err());
        let missing = two.tier("a").unwrap().resolve_program(Path::new("/"));
        assert!(missing.unwrap_err().contains("not on the worker's PATH"));
    }

    #[test]
    fn a_brief_is_never_spliced_into_code() {
        let spliced = parse("[vibe.fast]\ncommand = [\"sh\", \"-c\", \"echo {brief}\"]\n");
        let err = spliced.validate().unwrap_err().to_string();
        assert!(err.contains("$(touch pwned)"), "{err}");
        let py = parse(
            "[vibe.fast]\ncommand = [\"/usr/bin/python3.11\", \"-c\", \"print('{brief}')\"]\n",
        );
        assert!(py.validate().is_err());
        let positional = parse(
            "[vibe.fast]\ncommand = [\"sh\", \"-c\", \"echo \\\"$1\\\"\", \"sh\", \"{brief}\"]\n",
        );
        positional.validate().unwrap();
        let args = positional.tier("fast").unwrap().args_for("$(touch pwned)");
        assert_eq!(args, ["-c", "echo \"$1\"", "sh", "$(touch pwned)"]);
        let ro = parse(
            "[vibe.fast]\ncommand = [\"x\"]\nread_only_command = [\"bash\", \"-c\", \"{brief}!\"]\n",
        );
        assert!(ro.validate().is_err());
    }

    #[test]
    fn read_capped_surfaces_need_a_read_only_command() {
        let c = parse(
            "[vibe.fast]\ncommand = [\"cli\", \"{brief}\"]\nread_only_command = [\"cli\", \"--read-only\", \"{brief}\"]\n\
             [vibe.good]\ncommand = [\"cli\", \"{brief}\"]\n",
        );
        c.validate().unwrap();
        let fast = c.tier("fast").unwrap();
        assert_eq!(
            fast.for_surface("fast", Surface::FULL).unwrap().command[1],
            "{brief}"
        );
        assert_eq!(
            fast.for_surface("fast", Surface::PLAN).unwrap().command[1],
            "--read-only"
        );
        let err = c
            .tier("good")
            .unwrap()
            .for_surface("good", Surface::READ_ONLY)
            .unwrap_err()
            .to_string();
        assert!(err.contains("read_only_command"), "{err}");
    }
}
