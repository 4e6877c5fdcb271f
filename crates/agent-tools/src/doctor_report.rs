//! The text of `agent-tools doctor`: what concerns this workspace first, the rest folded.
//!
//! Every family reports one entry per resource it could use — a server per language, a
//! grammar per bundled language, an adapter, a kernel. Printed flat, a Python repository
//! reads 21 grammar lines and the servers of six languages it does not have before anything
//! about Python. So entries are sorted into three kinds: those for a language the workspace
//! holds (shown first, in full), those that concern no language (trust, file tools, question
//! gates, workers: shown in full), and those for languages the workspace does not hold
//! (one line per family, naming each and flagging the unusable ones). `--all` prints every
//! entry in full, as the families reported them.

use tools_core::DoctorEntry;

use crate::workspace_languages::WorkspaceLanguages;

/// The languages an entry serves, or `None` when it concerns no language in particular.
pub fn entry_languages(entry: &DoctorEntry) -> Option<Vec<&'static str>> {
    let head = entry
        .resource
        .split_once(": ")
        .map(|(h, _)| h)
        .unwrap_or("");
    let langs: &[&'static str] = match entry.family.as_str() {
        "lsp" => match head {
            "" => return None,
            // One server group answers for several languages.
            "c" => &["c", "cpp"],
            "typescript" => &["typescript", "tsx", "javascript"],
            // Angular's server takes the `.html` templates of Angular projects.
            "angular" => &["html"],
            // Diagnostics-only companions beside the primary server.
            "ruff" => &["python"],
            "eslint" => &["typescript", "tsx", "javascript"],
            other => return Some(vec![known_language(other)?]),
        },
        "ast" => {
            let id = entry.resource.strip_prefix("grammar: ")?;
            return Some(vec![known_language(id)?]);
        }
        "debug" => match head {
            "debugpy" => &["python"],
            "lldb" => &["c", "cpp", "rust"],
            "delve" => &["go"],
            "dart" => &["dart"],
            _ => return None,
        },
        "test" => match head {
            "javascript" => &["javascript", "typescript", "tsx"],
            other => return Some(vec![known_language(other)?]),
        },
        "eval" => match entry.resource.strip_suffix(" kernel")? {
            "python" => &["python"],
            "javascript" => &["javascript", "typescript", "tsx"],
            _ => return None,
        },
        _ => return None,
    };
    Some(langs.to_vec())
}

/// `name` as one of the language ids entries use; `None` for a name this report cannot match
/// against the workspace (a language added in the configuration, say).
fn known_language(name: &str) -> Option<&'static str> {
    const KNOWN: &[&str] = &[
        "astro",
        "bash",
        "c",
        "cmake",
        "cpp",
        "csharp",
        "css",
        "dart",
        "dockerfile",
        "elixir",
        "erlang",
        "fortran",
        "fsharp",
        "go",
        "graphql",
        "haskell",
        "html",
        "java",
        "javascript",
        "json",
        "kotlin",
        "latex",
        "lua",
        "markdown",
        "nginx",
        "nix",
        "ocaml",
        "php",
        "prisma",
        "python",
        "rst",
        "ruby",
        "rust",
        "sass",
        "scala",
        "solidity",
        "sql",
        "svelte",
        "swift",
        "systemd",
        "terraform",
        "toml",
        "tsx",
        "typescript",
        "vim",
        "vue",
        "yaml",
        "zig",
    ];
    KNOWN.iter().copied().find(|k| *k == name)
}

/// One entry as a line: `[lsp] ok      python: pyright-langserver: root marker at .; …`.
pub fn entry_line(entry: &DoctorEntry) -> String {
    format!(
        "[{}] {} {}: {}",
        entry.family,
        if entry.ok { "ok     " } else { "missing" },
        entry.resource,
        entry.detail
    )
}

/// What a family's entries are called in the folded line.
fn noun(family: &str, n: usize) -> String {
    let one = match family {
        "lsp" => "server",
        "ast" => "grammar",
        "debug" => "adapter",
        "eval" => "kernel",
        "test" => "runner",
        _ => "entry",
    };
    if n == 1 {
        one.to_string()
    } else if one == "entry" {
        "entries".to_string()
    } else {
        format!("{one}s")
    }
}

/// The short name of an entry in the folded line: the language or adapter it is for.
fn short_name(entry: &DoctorEntry) -> &str {
    let r = entry.resource.as_str();
    r.strip_prefix("grammar: ")
        .or_else(|| r.strip_suffix(" kernel"))
        .or_else(|| r.split_once(": ").map(|(h, _)| h))
        .unwrap_or(r)
}

/// Whether the entry's program is there. A server entry is only `ok` with a root marker as
/// well, which a language the workspace does not hold never has; folded, what matters is
/// whether the server would start once the language turns up.
fn installed(entry: &DoctorEntry) -> bool {
    entry.ok || (entry.family == "lsp" && entry.detail.contains("; binary at "))
}

/// The entry lines of `doctor`: with `all`, every entry in the families' order; otherwise
/// the workspace's languages first, then the entries that concern no language, then one
/// line per family for the other languages.
pub fn render(entries: &[DoctorEntry], langs: &WorkspaceLanguages, all: bool) -> String {
    let mut out = Vec::new();
    out.push(match langs.summary() {
        Some(s) => format!("this workspace: {s}"),
        None => "this workspace: no source files of a known language".to_string(),
    });
    if all {
        out.extend(entries.iter().map(entry_line));
        return out.join("\n") + "\n";
    }
    let mut general = Vec::new();
    let mut elsewhere: Vec<&DoctorEntry> = Vec::new();
    // (family rank, files of the language served, entry): families keep their order, and
    // within one the workspace's main language leads.
    let mut here: Vec<(usize, usize, &DoctorEntry)> = Vec::new();
    let mut family_rank: Vec<&str> = Vec::new();
    for entry in entries {
        match entry_languages(entry) {
            Some(served) if served.iter().any(|l| langs.has(l)) => {
                let rank = match family_rank.iter().position(|f| *f == entry.family) {
                    Some(i) => i,
                    None => {
                        family_rank.push(&entry.family);
                        family_rank.len() - 1
                    }
                };
                let files = served.iter().map(|l| langs.count(l)).max().unwrap_or(0);
                here.push((rank, files, entry));
            }
            Some(_) => elsewhere.push(entry),
            None => general.push(entry_line(entry)),
        }
    }
    here.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    out.extend(here.iter().map(|(_, _, e)| entry_line(e)));
    out.extend(general);
    if !elsewhere.is_empty() {
        out.push("for languages not in this workspace (`doctor --all` shows each):".into());
    }
    let mut families: Vec<&str> = Vec::new();
    for e in &elsewhere {
        if !families.contains(&e.family.as_str()) {
            families.push(&e.family);
        }
    }
    for family in families {
        let of: Vec<&&DoctorEntry> = elsewhere.iter().filter(|e| e.family == family).collect();
        let usable = of.iter().filter(|e| installed(e)).count();
        let state = if usable == of.len() {
            "all available".to_string()
        } else {
            format!("{usable} available")
        };
        let names: Vec<String> = of
            .iter()
            .map(|e| {
                let name = short_name(e);
                if installed(e) {
                    name.to_string()
                } else {
                    format!("{name} (missing)")
                }
            })
            .collect();
        out.push(format!(
            "[{family}] {} {}, {state}: {}",
            of.len(),
            noun(family, of.len()),
            names.join(", ")
        ));
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(family: &str, resource: &str, ok: bool) -> DoctorEntry {
        DoctorEntry {
            family: family.into(),
            resource: resource.into(),
            ok,
            detail: "why".into(),
        }
    }

    fn entries() -> Vec<DoctorEntry> {
        vec![
            entry("trust", "workspace trust", true),
            entry("fs", "read, write, edit, apply_patch", true),
            entry("lsp", "bash: bash-language-server", false),
            entry("lsp", "c: clangd", true),
            entry("lsp", "python: pyright-langserver", true),
            DoctorEntry {
                detail: "no root marker (Cargo.toml); binary at /usr/bin/rust-analyzer".into(),
                ..entry("lsp", "rust: rust-analyzer", false)
            },
            entry("lsp", "workspace trust", true),
            entry("ast", "grammar: bash", true),
            entry("ast", "grammar: python", true),
            entry("ast", "grammar: rust", true),
            entry("debug", "debugpy: python3", true),
            entry("debug", "lldb: -", false),
            entry("eval", "python kernel", true),
            entry("eval", "javascript kernel", true),
            entry("eval", "cell limits", true),
        ]
    }

    fn python_workspace() -> WorkspaceLanguages {
        let mut langs = WorkspaceLanguages::default();
        langs.files.insert("python".into(), 4);
        langs
    }

    #[test]
    fn the_workspaces_languages_lead_and_the_rest_is_one_line_per_family() {
        let text = render(&entries(), &python_workspace(), false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            vec![
                "this workspace: python (4 files)",
                "[lsp] ok      python: pyright-langserver: why",
                "[ast] ok      grammar: python: why",
                "[debug] ok      debugpy: python3: why",
                "[eval] ok      python kernel: why",
                "[trust] ok      workspace trust: why",
                "[fs] ok      read, write, edit, apply_patch: why",
                "[lsp] ok      workspace trust: why",
                "[eval] ok      cell limits: why",
                "for languages not in this workspace (`doctor --all` shows each):",
                "[lsp] 3 servers, 2 available: bash (missing), c, rust",
                "[ast] 2 grammars, all available: bash, rust",
                "[debug] 1 adapter, 0 available: lldb (missing)",
                "[eval] 1 kernel, all available: javascript",
            ]
        );
    }

    #[test]
    fn all_lists_every_entry_as_reported() {
        let text = render(&entries(), &python_workspace(), true);
        assert_eq!(text.lines().count(), 1 + entries().len());
        for e in entries() {
            assert!(text.contains(&entry_line(&e)), "{text}");
        }
    }

    #[test]
    fn the_language_with_most_files_leads_its_family() {
        let mut langs = python_workspace();
        langs.files.insert("rust".into(), 40);
        let text = render(&entries(), &langs, false);
        let lsp: Vec<&str> = text.lines().filter(|l| l.starts_with("[lsp] ")).collect();
        assert!(lsp[0].contains("rust: rust-analyzer"), "{text}");
        assert!(lsp[1].contains("python: pyright-langserver"), "{text}");
        let first_ast = text.lines().position(|l| l.starts_with("[ast]")).unwrap();
        let last_lsp_here = text
            .lines()
            .position(|l| l.contains("python: pyright"))
            .unwrap();
        assert!(
            last_lsp_here < first_ast,
            "families keep their order:\n{text}"
        );
    }

    #[test]
    fn server_groups_serve_each_of_their_languages() {
        let mut cpp = WorkspaceLanguages::default();
        cpp.files.insert("cpp".into(), 2);
        let text = render(&entries(), &cpp, false);
        assert!(text.contains("[lsp] ok      c: clangd"), "{text}");
        assert!(text.contains("[debug] missing lldb: -"), "{text}");
        assert_eq!(
            entry_languages(&entry("lsp", "typescript: tsc", true)),
            Some(vec!["typescript", "tsx", "javascript"])
        );
        assert_eq!(
            entry_languages(&entry("lsp", "ruff: ruff", true)),
            Some(vec!["python"])
        );
        assert_eq!(entry_languages(&entry("lsp", "mylang: myls", true)), None);
    }

    #[test]
    fn test_runners_are_sorted_by_the_language_they_test() {
        let runners = vec![
            entry("test", "python: pytest", true),
            entry("test", "go: no runner", false),
            entry("test", "javascript: vitest", true),
        ];
        let text = render(&runners, &python_workspace(), false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            vec![
                "this workspace: python (4 files)",
                "[test] ok      python: pytest: why",
                "for languages not in this workspace (`doctor --all` shows each):",
                "[test] 2 runners, 1 available: go (missing), javascript",
            ]
        );
    }

    #[test]
    fn the_sass_server_is_for_sass_files_only() {
        use crate::workspace_languages::language_of_extension;
        assert_eq!(
            entry_languages(&entry("lsp", "sass: some-sass-language-server", false)),
            Some(vec!["sass"])
        );
        assert_eq!(language_of_extension("scss"), Some("sass"));
        assert_eq!(language_of_extension("sass"), Some("sass"));
        assert_eq!(language_of_extension("less"), Some("css"));
    }
}
