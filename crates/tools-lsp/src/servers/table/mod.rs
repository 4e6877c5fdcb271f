//! The built-in server and checker tables, merged with the `[lsp]` configuration.
//!
//! One entry per *server group*: C and C++ share clangd, TypeScript and JavaScript share
//! typescript-language-server, so each group gets one server per root. The built-in entries
//! live one file per family of languages; this module holds the types, the merge with the
//! user's `[lsp.servers.NAME]` entries, and (in `trust`) what an untrusted run changes.
//!
//! An entry may be a *companion* (ruff beside the Python type checker, eslint beside
//! tsserver): it serves its extensions for diagnostics only, next to the primary entry that
//! answers navigation. An entry may also *stand in* for another (PHPantom for intelephense):
//! it serves that entry's files only for the requests whose capability the other's server
//! does not announce (intelephense renames only with a licence key).

mod data;
mod dotnet_jvm;
mod functional;
mod native;
mod python;
mod scripting;
mod sdk;
mod trust;
mod web;

use std::collections::BTreeMap;

use crate::servers::config::LspConfig;
use crate::servers::recipe::{InstallRecipe, PackageManager};

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

/// What an entry's server does with the project that matters when the run is untrusted.
#[derive(Debug, Clone, PartialEq)]
pub enum TrustNeed {
    /// It reads the project's files and runs none of its code.
    ReadsOnly,
    /// It runs project code through features these options switch off; an untrusted run
    /// merges them into both the initialization options and the settings (under
    /// `settings_section`), over whatever the configuration said.
    Restricted {
        /// The section of the settings the options go under (`rust-analyzer`).
        settings_section: String,
        /// The options that switch the project-code features off.
        off: serde_json::Value,
    },
    /// It cannot work without running project code (a build tool's import, a JavaScript
    /// configuration file): an untrusted run leaves the entry out.
    TrustedOnly,
}

/// One language's server entry.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The language (server group) name, e.g. `python`, `c`, `typescript`; for a companion,
    /// the server's name (`ruff`, `eslint`), which tags its diagnostics.
    pub language: String,
    /// Candidate commands in order of preference.
    pub candidates: Vec<Candidate>,
    /// Root markers.
    pub markers: Vec<String>,
    /// File extensions without the dot.
    pub extensions: Vec<String>,
    /// Whole file names served whatever their extension (`Dockerfile`, `CMakeLists.txt`).
    pub file_names: Vec<String>,
    /// The LSP `languageId` of extensions whose id is not the group name.
    pub language_ids: Vec<(String, String)>,
    /// Settings (JSON) for `workspace/configuration`.
    pub settings: serde_json::Value,
    /// `initializationOptions`, if any.
    pub initialization_options: Option<serde_json::Value>,
    /// The project's own checker for `diagnostics "*"`.
    pub checkers: Vec<Candidate>,
    /// A diagnostics-only companion of the primary entry for the same files.
    pub companion: bool,
    /// With no root marker above a file, the server serves the workspace root (languages
    /// whose files stand alone: YAML, JSON, Markdown, Dockerfile).
    pub workspace_fallback: bool,
    /// What an untrusted run changes.
    pub trust: TrustNeed,
    /// The entry serves its files only inside a project it recognises: one of its markers
    /// sits in the file's folder or above it (Angular's server takes the `.html` templates
    /// of an Angular project; other `.html` files go to the next entry that serves them).
    pub project_only: bool,
    /// The entry this one stands in for: it is asked, for that entry's files, only what the
    /// other's running server does not offer (its `initialize` capabilities lack it), and
    /// it is never a file's primary server.
    pub stands_in: Option<String>,
}

/// Servers whose `initialize` capabilities offer no `workspace/symbol` (data and markup
/// formats, whose files declare no code symbols, and Angular's template server). A search
/// started from nothing does not start them only to be told so, and a run does not start them
/// when it starts; one already running is still asked.
const NO_WORKSPACE_SYMBOLS: &[&str] = &[
    "vscode-json-language-server",
    "yaml-language-server",
    "tombi",
    "vscode-css-language-server",
    "vscode-html-language-server",
    "ngserver",
];

impl ServerSpec {
    /// Whether the entry's preferred server is known to offer no workspace symbol search
    /// (a data or markup format: its files declare no code symbols).
    pub(crate) fn offers_no_workspace_symbols(&self) -> bool {
        self.candidates
            .first()
            .is_some_and(|c| NO_WORKSPACE_SYMBOLS.contains(&c.program()))
    }
    /// An empty entry for `language`: no candidates, markers or extensions.
    pub fn new(language: &str) -> Self {
        ServerSpec {
            language: language.to_string(),
            candidates: vec![],
            markers: vec![],
            extensions: vec![],
            file_names: vec![],
            language_ids: vec![],
            settings: serde_json::Value::Null,
            initialization_options: None,
            checkers: vec![],
            companion: false,
            workspace_fallback: false,
            trust: TrustNeed::ReadsOnly,
            project_only: false,
            stands_in: None,
        }
    }

    /// Whether this entry is the primary server for files with extension `ext` (a companion
    /// never is: see [`ServerSpec::assists`]).
    pub fn handles(&self, ext: &str) -> bool {
        !self.companion
            && self.stands_in.is_none()
            && self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext))
    }

    /// Whether this entry is the primary server for `file` in `workspace`, by extension or
    /// whole name.
    pub fn serves(&self, file: &std::path::Path, workspace: &std::path::Path) -> bool {
        if self.companion || self.stands_in.is_some() {
            return false;
        }
        self.matches(file, workspace)
    }

    /// Whether this entry is a diagnostics-only companion for `file` in `workspace`.
    pub fn assists(&self, file: &std::path::Path, workspace: &std::path::Path) -> bool {
        self.companion && self.matches(file, workspace)
    }

    /// Whether `file` in `workspace` is one of the entry's files, by extension or whole
    /// name, whatever its role (primary, companion or stand-in).
    pub(crate) fn matches_file(&self, file: &std::path::Path, workspace: &std::path::Path) -> bool {
        self.matches(file, workspace)
    }

    fn matches(&self, file: &std::path::Path, workspace: &std::path::Path) -> bool {
        let by_ext = file
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)));
        let by_name = file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|name| self.file_names.iter().any(|n| n == name));
        (by_ext || by_name) && (!self.project_only || self.in_own_project(file, workspace))
    }

    /// Whether one of the entry's markers sits in `file`'s folder or above it, up to
    /// `workspace` (a marker above the workspace is not the workspace's: a checkout inside
    /// an Angular project's folder is not an Angular project).
    fn in_own_project(&self, file: &std::path::Path, workspace: &std::path::Path) -> bool {
        file.ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(workspace))
            .any(|d| self.markers.iter().any(|m| d.join(m).exists()))
    }

    /// The LSP `languageId` of files with extension `ext` (the group name when the entry
    /// names none).
    pub fn language_id(&self, ext: &str) -> String {
        crate::client::language_id(&self.language_ids, ext, &self.language)
    }

    // Builders for the family files: each reads as the entry it describes.

    fn candidate(mut self, parts: &[&str], recipe: Option<InstallRecipe>) -> Self {
        let c = Candidate::of(parts);
        self.candidates.push(match recipe {
            Some(r) => c.installed_by(r),
            None => c,
        });
        self
    }
    fn markers(mut self, markers: &[&str]) -> Self {
        self.markers = strs(markers);
        self
    }
    fn extensions(mut self, extensions: &[&str]) -> Self {
        self.extensions = strs(extensions);
        self
    }
    fn file_names(mut self, names: &[&str]) -> Self {
        self.file_names = strs(names);
        self
    }
    fn ids(mut self, pairs: &[(&str, &str)]) -> Self {
        self.language_ids = pairs
            .iter()
            .map(|(e, id)| (e.to_string(), id.to_string()))
            .collect();
        self
    }
    fn settings(mut self, settings: serde_json::Value) -> Self {
        self.settings = settings;
        self
    }
    fn init(mut self, init: serde_json::Value) -> Self {
        self.initialization_options = Some(init);
        self
    }
    fn checker(mut self, parts: &[&str]) -> Self {
        self.checkers.push(Candidate::of(parts));
        self
    }
    fn companion(mut self) -> Self {
        self.companion = true;
        self
    }
    fn anywhere(mut self) -> Self {
        self.workspace_fallback = true;
        self
    }
    fn project_only(mut self) -> Self {
        self.project_only = true;
        self
    }
    fn stands_in_for(mut self, language: &str) -> Self {
        self.stands_in = Some(language.to_string());
        self
    }
    fn trust(mut self, need: TrustNeed) -> Self {
        self.trust = need;
        self
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn npm(package: &str, version: &str) -> Option<InstallRecipe> {
    Some(InstallRecipe::new(PackageManager::Npm, package, version))
}

fn pip(package: &str, version: &str) -> Option<InstallRecipe> {
    Some(InstallRecipe::new(PackageManager::Pip, package, version))
}

fn cargo(package: &str, version: &str) -> Option<InstallRecipe> {
    Some(InstallRecipe::new(PackageManager::Cargo, package, version))
}

fn go(module: &str, version: &str) -> Option<InstallRecipe> {
    Some(InstallRecipe::new(PackageManager::Go, module, version))
}

fn dotnet(package: &str, version: &str) -> Option<InstallRecipe> {
    Some(InstallRecipe::new(PackageManager::Dotnet, package, version))
}

/// Every built-in entry, unsorted.
fn builtin() -> Vec<ServerSpec> {
    let mut all = Vec::new();
    all.extend(python::entries());
    all.extend(web::entries());
    all.extend(data::entries());
    all.extend(native::entries());
    all.extend(dotnet_jvm::entries());
    all.extend(scripting::entries());
    all.extend(functional::entries());
    all
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
        let entry = table
            .entry(lang.clone())
            .or_insert_with(|| ServerSpec::new(lang));
        // A user's command for a program the table knows keeps the table's install recipe,
        // so `servers install` and the install hints still name it.
        let builtin_candidates = entry.candidates.clone();
        let keep_recipe = |command: &Vec<String>| {
            let c = Candidate::command(command.clone());
            match builtin_candidates
                .iter()
                .find(|b| b.program() == c.program())
                .and_then(|b| b.install.clone())
            {
                Some(recipe) => c.installed_by(recipe),
                None => c,
            }
        };
        if let Some(cmds) = &o.commands {
            entry.candidates = cmds
                .iter()
                .filter(|c| !c.is_empty())
                .map(keep_recipe)
                .collect();
        }
        if let Some(cmd) = &o.command
            && !cmd.is_empty()
        {
            entry.candidates = vec![keep_recipe(cmd)];
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
    trust::apply(&mut table, cfg.trusted);
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
mod tests;
