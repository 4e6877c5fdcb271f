//! The built-in server and checker tables, merged with the `[lsp]` configuration.
//!
//! One entry per *server group*: C and C++ share clangd, TypeScript and JavaScript share
//! typescript-language-server, so each group gets one server per root.

use std::collections::BTreeMap;

use crate::config::LspConfig;

/// A candidate command for a server or a checker: program and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Program and arguments; the program is looked up by the discovery rules.
    pub command: Vec<String>,
}

impl Candidate {
    fn of(parts: &[&str]) -> Self {
        Candidate {
            command: parts.iter().map(|s| s.to_string()).collect(),
        }
    }
    /// The program name.
    pub fn program(&self) -> &str {
        self.command.first().map(String::as_str).unwrap_or("")
    }
}

/// One language's server entry.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The language (server group) name, e.g. `python`, `c`, `typescript`.
    pub language: String,
    /// Candidate commands in order of preference.
    pub candidates: Vec<Candidate>,
    /// Root markers.
    pub markers: Vec<String>,
    /// File extensions without the dot.
    pub extensions: Vec<String>,
    /// Settings (JSON) for `workspace/configuration`.
    pub settings: serde_json::Value,
    /// `initializationOptions`, if any.
    pub initialization_options: Option<serde_json::Value>,
    /// The project's own checker for `diagnostics "*"`.
    pub checkers: Vec<Candidate>,
}

impl ServerSpec {
    /// Whether this server handles files with extension `ext`.
    pub fn handles(&self, ext: &str) -> bool {
        self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext))
    }
}

/// The LSP `languageId` of a file extension.
pub fn language_id(ext: &str, group: &str) -> String {
    match ext.to_ascii_lowercase().as_str() {
        "py" | "pyi" => "python",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "rs" => "rust",
        "dart" => "dart",
        "sh" | "bash" => "shellscript",
        _ => group,
    }
    .to_string()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn builtin() -> Vec<ServerSpec> {
    let spec = |language: &str,
                candidates: Vec<Candidate>,
                markers: &[&str],
                extensions: &[&str],
                checkers: Vec<Candidate>| ServerSpec {
        language: language.to_string(),
        candidates,
        markers: strs(markers),
        extensions: strs(extensions),
        settings: serde_json::Value::Null,
        initialization_options: None,
        checkers,
    };
    let mut python = spec(
        "python",
        vec![
            Candidate::of(&["pyright-langserver", "--stdio"]),
            Candidate::of(&["basedpyright-langserver", "--stdio"]),
            Candidate::of(&["pylsp"]),
            Candidate::of(&["jedi-language-server"]),
            Candidate::of(&["ty", "server"]),
            Candidate::of(&["pyrefly", "lsp"]),
        ],
        &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
            "pyrightconfig.json",
            "Pipfile",
        ],
        &["py", "pyi"],
        vec![
            Candidate::of(&["pyright"]),
            Candidate::of(&["basedpyright"]),
            Candidate::of(&["mypy", "."]),
        ],
    );
    // pyright and basedpyright diagnose every file of the workspace (not only the open
    // ones), so a write that breaks an importer nobody opened is seen.
    python.settings = serde_json::json!({
        "python": {"analysis": {"diagnosticMode": "workspace"}},
        "basedpyright": {"analysis": {"diagnosticMode": "workspace"}},
    });
    vec![
        python,
        spec(
            "rust",
            vec![Candidate::of(&["rust-analyzer"])],
            &["Cargo.toml"],
            &["rs"],
            vec![Candidate::of(&["cargo", "check", "--message-format=short"])],
        ),
        spec(
            "c",
            vec![Candidate::of(&["clangd"])],
            &[
                "compile_commands.json",
                "compile_flags.txt",
                ".clangd",
                "CMakeLists.txt",
                "Makefile",
                "meson.build",
            ],
            &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
            vec![],
        ),
        spec(
            "go",
            vec![Candidate::of(&["gopls"])],
            &["go.mod", "go.work"],
            &["go"],
            vec![Candidate::of(&["go", "vet", "./..."])],
        ),
        spec(
            "typescript",
            vec![Candidate::of(&["typescript-language-server", "--stdio"])],
            &["tsconfig.json", "jsconfig.json", "package.json"],
            &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
            vec![Candidate::of(&["tsc", "--noEmit", "--pretty", "false"])],
        ),
        spec(
            "dart",
            vec![Candidate::of(&["dart", "language-server"])],
            &["pubspec.yaml"],
            &["dart"],
            vec![Candidate::of(&["dart", "analyze"])],
        ),
        spec(
            "bash",
            vec![Candidate::of(&["bash-language-server", "start"])],
            &[".git", ".shellcheckrc"],
            &["sh", "bash"],
            vec![],
        ),
    ]
}

fn to_json(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// The server table: the built-in entries with the configuration's overrides applied and
/// its new languages added. Sorted by language.
pub fn server_table(cfg: &LspConfig) -> Vec<ServerSpec> {
    let mut table: BTreeMap<String, ServerSpec> = builtin()
        .into_iter()
        .map(|s| (s.language.clone(), s))
        .collect();
    for (lang, o) in &cfg.servers {
        if o.enabled == Some(false) {
            table.remove(lang);
            continue;
        }
        let entry = table.entry(lang.clone()).or_insert_with(|| ServerSpec {
            language: lang.clone(),
            candidates: vec![],
            markers: vec![],
            extensions: vec![],
            settings: serde_json::Value::Null,
            initialization_options: None,
            checkers: vec![],
        });
        if let Some(cmds) = &o.commands {
            entry.candidates = cmds
                .iter()
                .filter(|c| !c.is_empty())
                .map(|c| Candidate { command: c.clone() })
                .collect();
        }
        if let Some(cmd) = &o.command
            && !cmd.is_empty()
        {
            entry.candidates = vec![Candidate {
                command: cmd.clone(),
            }];
        }
        if let Some(m) = &o.markers {
            entry.markers = m.clone();
        }
        if let Some(e) = &o.extensions {
            entry.extensions = e
                .iter()
                .map(|x| x.trim_start_matches('.').to_string())
                .collect();
        }
        if let Some(s) = &o.settings {
            entry.settings = to_json(s);
        }
        if let Some(i) = &o.initialization_options {
            entry.initialization_options = Some(to_json(i));
        }
    }
    for (lang, c) in &cfg.checkers {
        if let Some(entry) = table.get_mut(lang) {
            if let Some(cmds) = &c.commands {
                entry.checkers = cmds
                    .iter()
                    .filter(|c| !c.is_empty())
                    .map(|c| Candidate { command: c.clone() })
                    .collect();
            }
            if let Some(cmd) = &c.command
                && !cmd.is_empty()
            {
                entry.checkers = vec![Candidate {
                    command: cmd.clone(),
                }];
            }
        }
    }
    table.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerOverride;

    #[test]
    fn overrides_replace_and_extend() {
        let mut cfg = LspConfig::default();
        cfg.servers.insert(
            "python".into(),
            ServerOverride {
                command: Some(vec!["pylsp".into()]),
                ..Default::default()
            },
        );
        cfg.servers.insert(
            "zig".into(),
            ServerOverride {
                command: Some(vec!["zls".into()]),
                markers: Some(vec!["build.zig".into()]),
                extensions: Some(vec![".zig".into()]),
                ..Default::default()
            },
        );
        cfg.servers.insert(
            "dart".into(),
            ServerOverride {
                enabled: Some(false),
                ..Default::default()
            },
        );
        let t = server_table(&cfg);
        let py = t.iter().find(|s| s.language == "python").unwrap();
        assert_eq!(py.candidates, vec![Candidate::of(&["pylsp"])]);
        assert!(py.markers.contains(&"pyproject.toml".to_string()));
        let zig = t.iter().find(|s| s.language == "zig").unwrap();
        assert!(zig.handles("zig"));
        assert!(t.iter().all(|s| s.language != "dart"));
        assert_eq!(language_id("tsx", "typescript"), "typescriptreact");
    }
}
