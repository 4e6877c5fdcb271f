//! The server table seen from acquisition: for a workspace, each entry's state (needed here?
//! where does each candidate's program come from: the project, `PATH`, the cache, nowhere?),
//! which recipe a name given on the command line means, and the one-line install hint the
//! failing call, `status` and `doctor` carry.

use serde_json::{Value, json};
use tools_core::discovery::{FoundProgram, Origin, ProgramSearch};
use tools_core::platform::HOST_OS;

use super::system_install::system_install;
use crate::servers::recipe::InstallRecipe;
use crate::servers::table::{Candidate, ServerSpec};

/// One candidate of an entry, and where its program is.
#[derive(Debug, Clone)]
pub struct CandidateState {
    /// The program the candidate runs.
    pub program: String,
    /// How the built-in table installs it, if it can.
    pub recipe: Option<InstallRecipe>,
    /// Where the program was found, if anywhere.
    pub found: Option<FoundProgram>,
}

/// One table entry's state for a workspace.
#[derive(Debug, Clone)]
pub struct EntryState {
    /// The entry (language group) name.
    pub language: String,
    /// How many files of the entry's extensions the workspace holds.
    pub files: usize,
    /// Its candidates, in order of preference.
    pub candidates: Vec<CandidateState>,
}

impl EntryState {
    /// Whether the workspace holds files this entry serves.
    pub fn needed(&self) -> bool {
        self.files > 0
    }
    /// Whether some candidate's program was found.
    pub fn available(&self) -> bool {
        self.candidates.iter().any(|c| c.found.is_some())
    }
    /// The first candidate the table can install.
    pub fn installable(&self) -> Option<&InstallRecipe> {
        self.candidates.iter().find_map(|c| c.recipe.as_ref())
    }
}

/// The state of every entry of `table` for the workspace `search` looks at: needed ones
/// first, then by name.
pub fn entry_states(table: &[ServerSpec], search: &ProgramSearch) -> Vec<EntryState> {
    let scan = crate::servers::discover::scan_workspace(table, search.workspace());
    let mut states: Vec<EntryState> = table
        .iter()
        .map(|spec| EntryState {
            language: spec.language.clone(),
            files: scan.files.get(&spec.language).copied().unwrap_or(0),
            candidates: spec
                .candidates
                .iter()
                .map(|c| CandidateState {
                    program: c.program().to_string(),
                    recipe: c.install.clone(),
                    found: search
                        .find(c.program(), search.workspace())
                        .ok()
                        .filter(|f| !rustup_proxy_without_component(&f.path, c.program())),
                })
                .collect(),
        })
        .collect();
    states.sort_by(|a, b| {
        b.needed()
            .cmp(&a.needed())
            .then_with(|| a.language.cmp(&b.language))
    });
    states
}

/// Whether `path` is rustup's proxy for `program` (a link to `rustup` beside it) while the
/// active toolchain lacks the component: the proxy exists for every component rustup knows
/// and fails when run. Asked outside the workspace, so a repository's toolchain file plays
/// no part, and with rustup's auto-install off.
fn rustup_proxy_without_component(path: &std::path::Path, program: &str) -> bool {
    let rustup = path.with_file_name("rustup");
    if path.file_name().is_some_and(|n| n == "rustup")
        || !tools_core::platform::same_file(path, &rustup)
    {
        return false;
    }
    !std::process::Command::new(&rustup)
        .args(["which", program])
        .current_dir(std::env::temp_dir())
        .env("RUSTUP_AUTO_INSTALL", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

fn where_text(found: &Option<FoundProgram>, cache: Option<&std::path::Path>) -> String {
    match found {
        None => "missing".into(),
        Some(f) => {
            let place = match &f.origin {
                Origin::Cache => "cache",
                Origin::Path => "PATH",
                Origin::Project(_) => "project",
                Origin::Given => "given",
                Origin::DeveloperTools(_) => "system",
            };
            let shown = match (cache, &f.origin) {
                (Some(c), Origin::Cache) => f
                    .path
                    .strip_prefix(c)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| f.path.display().to_string()),
                _ => f.path.display().to_string(),
            };
            format!("{place:<7} {shown}")
        }
    }
}

/// The listing `agent-tools servers` prints: for an entry the workspace needs, one line per
/// candidate; for the others one line (the candidate that was found, else the first, and how
/// many more there are), so forty entries stay readable. The entry's name and whether the
/// workspace needs it lead its first line; a missing program that can be installed carries
/// the command that installs it.
pub fn render_states(states: &[EntryState], cache: Option<&std::path::Path>) -> String {
    let mut out = vec![format!(
        "{:<14} {:<10} {:<30} WHERE",
        "ENTRY", "NEEDED", "SERVER"
    )];
    for s in states {
        let needed = if s.needed() {
            format!("yes ({})", s.files)
        } else {
            "no".into()
        };
        let shown: Vec<&CandidateState> = if s.needed() {
            s.candidates.iter().collect()
        } else {
            s.candidates
                .iter()
                .find(|c| c.found.is_some())
                .or(s.candidates.first())
                .into_iter()
                .collect()
        };
        let others = s.candidates.len() - shown.len();
        for (i, c) in shown.into_iter().enumerate() {
            let (lang, need) = if i == 0 {
                (s.language.as_str(), needed.as_str())
            } else {
                ("", "")
            };
            let mut line = format!(
                "{lang:<14} {need:<10} {:<30} {}",
                c.program,
                where_text(&c.found, cache)
            );
            match (&c.found, &c.recipe) {
                (None, Some(r)) => {
                    line.push_str(&format!(" — `{}`", install_command(r)));
                }
                (None, None) => match system_install(&c.program, HOST_OS) {
                    Some(how) => line.push_str(&format!(
                        " (no install recipe; on {}: {how})",
                        HOST_OS.name()
                    )),
                    None => line.push_str(" (no install recipe)"),
                },
                _ => {}
            }
            if others > 0 {
                line.push_str(&format!(" (+{others} other candidates)"));
            }
            out.push(line.trim_end().to_string());
        }
        if s.candidates.is_empty() {
            out.push(format!(
                "{:<14} {needed:<10} (no server configured)",
                s.language
            ));
        }
    }
    let needed_missing: Vec<&str> = states
        .iter()
        .filter(|s| s.needed() && !s.available())
        .map(|s| s.language.as_str())
        .collect();
    if !needed_missing.is_empty() {
        out.push(format!(
            "needed here but missing: {}; `agent-tools servers install --needed` installs them",
            needed_missing.join(", ")
        ));
    }
    if let Some(c) = cache {
        out.push(format!("server cache: {}", c.display()));
    }
    out.join("\n")
}

/// The same facts as [`render_states`], for programs.
pub fn states_json(states: &[EntryState], cache: Option<&std::path::Path>) -> Value {
    let entries: Vec<Value> = states
        .iter()
        .map(|s| {
            json!({
                "entry": s.language,
                "files": s.files,
                "needed": s.needed(),
                "candidates": s.candidates.iter().map(|c| json!({
                    "program": c.program,
                    "where": match &c.found {
                        None => "missing",
                        Some(f) => match f.origin {
                            Origin::Cache => "cache",
                            Origin::Path => "path",
                            Origin::Project(_) => "project",
                            Origin::Given => "given",
                            Origin::DeveloperTools(_) => "os_developer_tools",
                        },
                    },
                    "path": c.found.as_ref().map(|f| f.path.display().to_string()),
                    "install": c.recipe.as_ref().map(|r| json!({
                        "manager": r.manager.name(),
                        "package": r.package,
                        "version": r.version,
                        "command": install_command(r),
                    })),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"cache": cache.map(|c| c.display().to_string()), "entries": entries})
}

/// The command that installs `recipe`: `agent-tools servers install PACKAGE`.
pub fn install_command(recipe: &InstallRecipe) -> String {
    format!("agent-tools servers install {}", recipe.package)
}

/// For an entry none of whose programs was found: the one line naming the command that
/// installs its first installable candidate (`None` when the table has no recipe for it).
pub fn install_hint(spec: &ServerSpec) -> Option<String> {
    spec.candidates
        .iter()
        .find_map(|c| c.install.as_ref())
        .map(|r| format!("`{}` installs {r}", install_command(r)))
}

/// A candidate the name given to `servers install` means, with its entry's name.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// The entry (language group).
    pub language: String,
    /// The candidate (it has a recipe).
    pub candidate: Candidate,
}

impl Chosen {
    /// The candidate's recipe.
    pub fn recipe(&self) -> Option<&InstallRecipe> {
        self.candidate.install.as_ref()
    }
}

/// Which installable candidate `name` means: a package name (`pyright`,
/// `@vue/language-server`), a program name (`pyright-langserver`), or an entry name
/// (`python`: its first installable candidate). The error lists what can be installed.
pub fn choose(table: &[ServerSpec], name: &str) -> Result<Chosen, String> {
    let installable = || {
        table.iter().flat_map(|s| {
            s.candidates
                .iter()
                .filter(|c| c.install.is_some())
                .map(move |c| (s, c))
        })
    };
    let by = |pred: &dyn Fn(&ServerSpec, &Candidate) -> bool| {
        installable()
            .find(|(s, c)| pred(s, c))
            .map(|(s, c)| Chosen {
                language: s.language.clone(),
                candidate: c.clone(),
            })
    };
    let unscoped = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    // A scoped package's last part names it only when no other package ends the same way
    // (`language-server` is both @vue/… and @astrojs/…).
    let mut by_last_part: Vec<String> = installable()
        .filter_map(|(_, c)| c.install.as_ref().map(|r| r.package.clone()))
        .filter(|p| p.contains('/') && unscoped(p) == name)
        .collect();
    by_last_part.sort();
    by_last_part.dedup();
    if by_last_part.len() > 1 {
        return Err(format!(
            "`{name}` could be any of {}: name the whole package",
            by_last_part.join(", ")
        ));
    }
    by(&|_, c| c.install.as_ref().is_some_and(|r| r.package == name))
        .or_else(|| {
            by(&|_, c| {
                c.install
                    .as_ref()
                    .is_some_and(|r| unscoped(&r.package) == name)
            })
        })
        .or_else(|| by(&|_, c| c.program() == name))
        .or_else(|| by(&|s, _| s.language == name))
        .ok_or_else(|| {
            let mut names: Vec<String> =
                installable().filter_map(|(_, c)| c.install.as_ref().map(|r| r.package.clone())).collect();
            names.dedup();
            if names.is_empty() {
                format!("`{name}` is not a server the table can install (no entry has an install recipe)")
            } else {
                format!(
                    "`{name}` is not a server the table can install; installable: {}",
                    names.join(", ")
                )
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in table, its vue server under a program name no machine has, so the
    /// entry reads as missing wherever the tests run.
    fn table() -> Vec<ServerSpec> {
        let mut t =
            crate::servers::table::server_table(&crate::servers::config::LspConfig::default());
        let vue = t.iter_mut().find(|s| s.language == "vue").unwrap();
        let recipe = vue.candidates[0].install.clone().unwrap();
        vue.candidates = vec![
            Candidate::command(vec!["agent-tools-test-absent-vue-server".into()])
                .installed_by(recipe),
        ];
        t
    }

    #[test]
    fn a_server_is_named_by_package_program_or_entry() {
        let t = table();
        for name in [
            "@vue/language-server",
            "agent-tools-test-absent-vue-server",
            "vue",
        ] {
            let c = choose(&t, name).unwrap();
            assert_eq!(c.language, "vue", "{name}");
            assert_eq!(c.recipe().unwrap().version, "2.2.10");
        }
        let err = choose(&t, "language-server").unwrap_err();
        assert!(
            err.contains("@astrojs/language-server") && err.contains("@vue/language-server"),
            "{err}"
        );
        let err = choose(&t, "no-such-server").unwrap_err();
        assert!(err.contains("@vue/language-server"), "{err}");
        let vue = t.iter().find(|s| s.language == "vue").unwrap();
        assert_eq!(
            install_hint(vue).unwrap(),
            "`agent-tools servers install @vue/language-server` installs @vue/language-server 2.2.10 (npm)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_rustup_proxy_counts_only_with_its_component() {
        let dir = tempfile::tempdir().unwrap();
        let rustup = dir.path().join("rustup");
        // A stand-in rustup: `which` succeeds for `present` only.
        std::fs::write(
            &rustup,
            "#!/bin/sh\n[ \"$1\" = which ] && [ \"$2\" = present ]\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rustup, std::fs::Permissions::from_mode(0o755)).unwrap();
        for name in ["present", "absent"] {
            std::os::unix::fs::symlink("rustup", dir.path().join(name)).unwrap();
        }
        std::fs::hard_link(&rustup, dir.path().join("absent-hard")).unwrap();
        assert!(!rustup_proxy_without_component(
            &dir.path().join("present"),
            "present"
        ));
        assert!(rustup_proxy_without_component(
            &dir.path().join("absent"),
            "absent"
        ));
        assert!(rustup_proxy_without_component(
            &dir.path().join("absent-hard"),
            "absent-hard"
        ));
        // Not a proxy: a program of its own.
        let own = dir.path().join("own");
        std::fs::write(&own, "#!/bin/sh\n").unwrap();
        assert!(!rustup_proxy_without_component(&own, "own"));
    }

    #[test]
    fn needed_entries_come_first_and_missing_ones_name_their_install() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("App.vue"), "<template/>\n").unwrap();
        let search = ProgramSearch::new(&ws, false).with_server_cache(None);
        let states = entry_states(&table(), &search);
        assert_eq!(states[0].language, "vue");
        assert!(states[0].needed() && !states[0].available());
        assert!(states[1..].iter().all(|s| !s.needed()));
        let text = render_states(&states, None);
        let vue_line = text.lines().find(|l| l.starts_with("vue ")).unwrap();
        assert!(
            vue_line.contains("yes (1)")
                && vue_line.contains("missing")
                && vue_line.contains("`agent-tools servers install @vue/language-server`"),
            "{vue_line}"
        );
        assert!(text.contains("needed here but missing: vue"), "{text}");
        // An entry the workspace does not need is one line.
        let python: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("python "))
            .take(2)
            .collect();
        assert!(python[0].contains("other candidates)"), "{text}");
        assert!(!python[1].starts_with(' '), "{text}");
        let json = states_json(&states, None);
        assert_eq!(json["entries"][0]["candidates"][0]["where"], "missing");
    }
}
