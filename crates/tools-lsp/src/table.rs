//! The built-in server and checker tables, merged with the `[lsp]` configuration.
//!
//! One entry per *server group*: C and C++ share clangd, TypeScript and JavaScript share
//! typescript-language-server, so each group gets one server per root.

use std::collections::BTreeMap;

use crate::config::LspConfig;
use crate::recipe::{InstallRecipe, PackageManager};

/// A candidate command for a server or a checker: program and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Program and arguments; the program is looked up by the discovery rules.
    pub command: Vec<String>,
    /// How the built-in table installs it, when a package manager can.
    pub install: Option<InstallRecipe>,
}

impl Candidate {
    /// A candidate running `command`, with no install recipe (the user's configuration, or a
    /// program that comes with a toolchain).
    pub fn command(command: Vec<String>) -> Self {
        Candidate {
            command,
            install: None,
        }
    }
    fn of(parts: &[&str]) -> Self {
        Candidate::command(parts.iter().map(|s| s.to_string()).collect())
    }
    /// This candidate, installable by `recipe`.
    pub fn installed_by(mut self, recipe: InstallRecipe) -> Self {
        self.install = Some(recipe);
        self
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
            Candidate::of(&["pyright-langserver", "--stdio"]).installed_by(InstallRecipe::new(
                PackageManager::Npm,
                "pyright",
                "1.1.414",
            )),
            Candidate::of(&["basedpyright-langserver", "--stdio"]).installed_by(
                InstallRecipe::new(PackageManager::Pip, "basedpyright", "1.40.2"),
            ),
            Candidate::of(&["pylsp"]).installed_by(InstallRecipe::new(
                PackageManager::Pip,
                "python-lsp-server",
                "1.15.0",
            )),
            Candidate::of(&["jedi-language-server"]).installed_by(InstallRecipe::new(
                PackageManager::Pip,
                "jedi-language-server",
                "0.47.0",
            )),
            Candidate::of(&["ty", "server"]).installed_by(InstallRecipe::new(
                PackageManager::Pip,
                "ty",
                "1.0.0",
            )),
            Candidate::of(&["pyrefly", "lsp"]).installed_by(InstallRecipe::new(
                PackageManager::Pip,
                "pyrefly",
                "1.5.0",
            )),
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
            // Every member, and past the first crate that fails: `diagnostics "*"` lists
            // the errors of every crate whose dependencies build (cargo 1.74 or newer).
            vec![Candidate::of(&[
                "cargo",
                "check",
                "--message-format=short",
                "--workspace",
                "--keep-going",
            ])],
        ),
        spec(
            "c",
            // Headers open in the server are read from their open text, not the disk:
            // a written header is first shown to its includers at its text from before
            // the write (see the `dependents` module). clangd 15 or newer.
            vec![Candidate::of(&["clangd", "--use-dirty-headers"])],
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
            vec![
                Candidate::of(&["typescript-language-server", "--stdio"]).installed_by(
                    InstallRecipe::new(PackageManager::Npm, "typescript-language-server", "5.3.0")
                        .with_companion("typescript", "5.9.3"),
                ),
            ],
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
            vec![
                Candidate::of(&["bash-language-server", "start"]).installed_by(InstallRecipe::new(
                    PackageManager::Npm,
                    "bash-language-server",
                    "5.8.1",
                )),
            ],
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
                .map(|c| Candidate::command(c.clone()))
                .collect();
        }
        if let Some(cmd) = &o.command
            && !cmd.is_empty()
        {
            entry.candidates = vec![Candidate::command(cmd.clone())];
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
    if !cfg.trusted
        && let Some(rust) = table.get_mut("rust")
    {
        restrict_rust_analyzer(rust);
    }
    if !cfg.trusted
        && let Some(ts) = table.get_mut("typescript")
        && let Some(tsserver) = global_tsserver()
    {
        pin_tsserver(ts, &tsserver);
    }
    for (lang, c) in &cfg.checkers {
        if let Some(entry) = table.get_mut(lang) {
            if let Some(cmds) = &c.commands {
                entry.checkers = cmds
                    .iter()
                    .filter(|c| !c.is_empty())
                    .map(|c| Candidate::command(c.clone()))
                    .collect();
            }
            if let Some(cmd) = &c.command
                && !cmd.is_empty()
            {
                entry.checkers = vec![Candidate::command(cmd.clone())];
            }
        }
    }
    table.into_values().collect()
}

/// rust-analyzer in an untrusted run: build scripts, proc macros and check-on-save run the
/// project's code, so they are switched off in both the initialization options and the
/// answers to `workspace/configuration`, over whatever the configuration said.
fn restrict_rust_analyzer(spec: &mut ServerSpec) {
    let off = serde_json::json!({
        "cargo": {"buildScripts": {"enable": false}},
        "procMacro": {"enable": false},
        "checkOnSave": false,
    });
    let mut init = spec
        .initialization_options
        .take()
        .unwrap_or_else(|| serde_json::json!({}));
    merge_json(&mut init, &off);
    spec.initialization_options = Some(init);
    if !spec.settings.is_object() {
        spec.settings = serde_json::json!({});
    }
    let section = &mut spec.settings["rust-analyzer"];
    if !section.is_object() {
        *section = serde_json::json!({});
    }
    merge_json(section, &off);
}

/// The `tsserver.js` of a TypeScript installed outside any project: next to `tsc` on `PATH`
/// or in the server cache, or beside `typescript-language-server` in its `node_modules`.
fn global_tsserver() -> Option<std::path::PathBuf> {
    let real = |name: &str| {
        tools_core::process::which(name)
            .or_else(|| tools_core::discovery::find_in_server_cache(name))
            .and_then(|p| p.canonicalize().ok())
    };
    let mut candidates = Vec::new();
    // `…/typescript/bin/tsc` → `…/typescript/lib/tsserver.js`
    if let Some(tsc) = real("tsc")
        && let Some(pkg) = tsc.parent().and_then(|b| b.parent())
    {
        candidates.push(pkg.join("lib/tsserver.js"));
    }
    // `…/node_modules/typescript-language-server/lib/cli.mjs` → its own or a sibling typescript
    if let Some(cli) = real("typescript-language-server")
        && let Some(pkg) = cli.parent().and_then(|l| l.parent())
    {
        candidates.push(pkg.join("node_modules/typescript/lib/tsserver.js"));
        if let Some(modules) = pkg.parent() {
            candidates.push(modules.join("typescript/lib/tsserver.js"));
        }
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// typescript-language-server in an untrusted run: it would run the workspace's own
/// `node_modules/typescript/lib/tsserver.js` before anything else, so it is pointed at the
/// TypeScript installed outside the project.
fn pin_tsserver(spec: &mut ServerSpec, tsserver: &std::path::Path) {
    let mut init = spec
        .initialization_options
        .take()
        .unwrap_or_else(|| serde_json::json!({}));
    merge_json(
        &mut init,
        &serde_json::json!({"tsserver": {"path": tsserver.display().to_string()}}),
    );
    spec.initialization_options = Some(init);
}

/// Writes every leaf of `over` into `base`, creating objects on the way.
fn merge_json(base: &mut serde_json::Value, over: &serde_json::Value) {
    match (base.as_object_mut(), over.as_object()) {
        (Some(b), Some(o)) => {
            for (k, v) in o {
                let slot = b.entry(k.clone()).or_insert(serde_json::Value::Null);
                if v.is_object() && slot.is_object() {
                    merge_json(slot, v);
                } else {
                    *slot = v.clone();
                }
            }
        }
        _ => *base = over.clone(),
    }
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

    #[test]
    fn untrusted_rust_analyzer_runs_no_project_code_whatever_the_settings_say() {
        let mut cfg = LspConfig::default();
        cfg.servers.insert(
            "rust".into(),
            ServerOverride {
                initialization_options: Some(toml::toml! { [procMacro] enable = true }.into()),
                ..Default::default()
            },
        );
        let untrusted = server_table(&cfg);
        let ra = untrusted.iter().find(|s| s.language == "rust").unwrap();
        let init = ra.initialization_options.as_ref().unwrap();
        assert_eq!(init["procMacro"]["enable"], false);
        assert_eq!(init["cargo"]["buildScripts"]["enable"], false);
        assert_eq!(init["checkOnSave"], false);
        assert_eq!(ra.settings["rust-analyzer"]["procMacro"]["enable"], false);
        cfg.trusted = true;
        let trusted = server_table(&cfg);
        let ra = trusted.iter().find(|s| s.language == "rust").unwrap();
        assert_eq!(
            ra.initialization_options.as_ref().unwrap()["procMacro"]["enable"],
            true
        );
        assert!(ra.settings.is_null());
    }

    #[test]
    fn a_pinned_tsserver_keeps_the_other_initialization_options() {
        let mut t = server_table(&LspConfig {
            trusted: true,
            ..Default::default()
        });
        let ts = t.iter_mut().find(|s| s.language == "typescript").unwrap();
        ts.initialization_options =
            Some(serde_json::json!({"preferences": {"quoteStyle": "single"}}));
        pin_tsserver(ts, std::path::Path::new("/opt/ts/lib/tsserver.js"));
        let init = ts.initialization_options.as_ref().unwrap();
        assert_eq!(init["tsserver"]["path"], "/opt/ts/lib/tsserver.js");
        assert_eq!(init["preferences"]["quoteStyle"], "single");
    }
}
