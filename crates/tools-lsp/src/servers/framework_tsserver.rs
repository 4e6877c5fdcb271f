//! The tsserver that sees single-file components: typescript-language-server started with
//! a component framework's TypeScript plugin (`@vue/typescript-plugin`, the TypeScript half
//! of Vue language tools' hybrid mode; `typescript-svelte-plugin`; `@astrojs/ts-plugin`), so
//! one TypeScript program holds the project's `.ts` files and its `.vue`, `.svelte` or
//! `.astro` components together.
//!
//! Why a second tsserver rather than the plugin in the plain one: the plugin loads the
//! framework's compiler into tsserver (seconds of start-up), which a project without
//! components must not pay; and a `.ts` file's own server then keeps answering exactly as
//! before. It runs only for a project that uses the framework (a `.vue` file asked about,
//! or a `package.json` up to the workspace root that depends on `vue`, `svelte` or `astro`).
//!
//! The plugin is the one installed beside the servers (never the project's own copy: a
//! plugin is code tsserver runs), found beside typescript-language-server or inside the
//! Vue server's install.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::servers::discover::{self, Resolution};
use crate::servers::supervisor::{Located, ServerSupervisor};

/// A component framework whose files tsserver reads through a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameworkPlugin {
    /// The components' file extension (`vue`).
    pub extension: &'static str,
    /// The LSP language id of those files.
    pub language_id: &'static str,
    /// The plugin's npm package.
    pub package: &'static str,
    /// The dependency in `package.json` that makes a project one of this framework's.
    pub dependency: &'static str,
    /// Installed servers whose own `node_modules` ship the plugin as a dependency.
    pub shipped_by: &'static [&'static str],
    /// Whether tsserver reads the component files themselves through the plugin (Vue's
    /// does: a `.vue` file is asked of it too); otherwise the plugin only lets `.ts` files
    /// see the components (Svelte's, Astro's), and a component is left to its own server.
    pub opens_components: bool,
    /// Whether the plugin reads the components only of a project where the framework's
    /// package is installed (`node_modules/<dependency>` from the project up), as Svelte's
    /// does: elsewhere it stays silent, so the answer says the components were not searched.
    pub needs_installed: bool,
}

/// The frameworks whose plugin tsserver is given.
pub const PLUGINS: &[FrameworkPlugin] = &[
    FrameworkPlugin {
        extension: "vue",
        language_id: "vue",
        package: "@vue/typescript-plugin",
        dependency: "vue",
        shipped_by: &["vue-language-server"],
        opens_components: true,
        needs_installed: false,
    },
    FrameworkPlugin {
        extension: "svelte",
        language_id: "svelte",
        package: "typescript-svelte-plugin",
        dependency: "svelte",
        shipped_by: &[],
        opens_components: false,
        needs_installed: true,
    },
    FrameworkPlugin {
        extension: "astro",
        language_id: "astro",
        package: "@astrojs/ts-plugin",
        dependency: "astro",
        shipped_by: &[],
        opens_components: false,
        needs_installed: false,
    },
];

/// The only TypeScript server whose initialization options take tsserver plugins
/// (`plugins: [{name, location, languages}]`).
const PLUGIN_HOST: &str = "typescript-language-server";

/// The most of a `package.json` read to look for a dependency.
const PACKAGE_JSON_CAP: u64 = 512 * 1024;

/// Where the plugin-carrying tsserver for `file` runs, if `file`'s project uses a
/// framework of [`PLUGINS`]: `Ok(None)` when it uses none (nothing else to ask), `Err`
/// with why when it does but that server cannot run here (the answer says so).
pub fn locate(sup: &ServerSupervisor, file: &Path) -> Result<Option<Located>, String> {
    let ws = sup.workspace();
    let Some(ts) = sup.table().iter().find(|s| s.language == "typescript") else {
        return Ok(None);
    };
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let opened = PLUGINS
        .iter()
        .any(|p| p.extension == ext && p.opens_components);
    if !opened && !ts.extensions.iter().any(|e| e.eq_ignore_ascii_case(&ext)) {
        return Ok(None);
    }
    let used: Vec<&FrameworkPlugin> = PLUGINS
        .iter()
        .filter(|p| {
            (p.extension == ext && p.opens_components) || depends_on(file, ws, p.dependency)
        })
        .collect();
    if used.is_empty() {
        return Ok(None);
    }
    let names = used
        .iter()
        .map(|p| format!(".{}", p.extension))
        .collect::<Vec<_>>()
        .join(", ");
    let Some(root) = crate::servers::roots::server_root("typescript", &ts.markers, file, ws) else {
        return Err(format!(
            "{names} files were not searched: no folder from the file up to the workspace root holds one of {}",
            ts.markers.join(", ")
        ));
    };
    let search = sup.config().program_search(ws);
    let (candidate, program) = match discover::resolve(&ts.candidates, &root, &search) {
        Resolution::Found { candidate, path } => (candidate, path),
        Resolution::Missing { looked_for, .. } => {
            return Err(format!(
                "{names} files were not searched: none of {} is installed",
                looked_for.join(", ")
            ));
        }
    };
    if candidate.program() != PLUGIN_HOST {
        return Err(format!(
            "{names} files were not searched: the TypeScript server here is {}, and only {PLUGIN_HOST} is given the frameworks' tsserver plugins",
            candidate.program()
        ));
    }
    if let Some(p) = used
        .iter()
        .find(|p| p.needs_installed && !installed(&root, p.dependency))
    {
        return Err(format!(
            ".{} files were not searched: {} reads them only where `{}` is installed, and there is no node_modules/{} from {} up (`npm install` in the project)",
            p.extension,
            p.package,
            p.dependency,
            p.dependency,
            tools_core::display_relative(ws, &root),
        ));
    }
    let mut plugins = Vec::new();
    for p in &used {
        let Some(location) = plugin_location(&program, p) else {
            return Err(format!(
                ".{} files were not searched: {} is not installed beside {PLUGIN_HOST} (`npm install {}` there)",
                p.extension, p.package, p.package
            ));
        };
        let languages: Vec<&str> = if p.opens_components {
            vec![p.language_id]
        } else {
            Vec::new()
        };
        plugins.push(json!({
            "name": p.package,
            "location": location.display().to_string(),
            "languages": languages,
        }));
    }
    let mut spec = ts.clone();
    spec.language = std::iter::once("typescript")
        .chain(used.iter().map(|p| p.dependency))
        .collect::<Vec<_>>()
        .join("+");
    for p in used.iter().filter(|p| p.opens_components) {
        spec.extensions.push(p.extension.to_string());
        spec.language_ids
            .push((p.extension.to_string(), p.language_id.to_string()));
    }
    let mut init = spec
        .initialization_options
        .take()
        .unwrap_or_else(|| json!({}));
    if !init.is_object() {
        init = json!({});
    }
    match init.get_mut("plugins").and_then(Value::as_array_mut) {
        Some(existing) => existing.extend(plugins),
        None => init["plugins"] = Value::Array(plugins),
    }
    spec.initialization_options = Some(init);
    Ok(Some(Located {
        spec,
        root,
        candidate,
        program,
    }))
}

/// A folder tsserver can resolve `plugin` from (`<folder>/node_modules/<package>`): the
/// `node_modules` that typescript-language-server was installed in, else one that ships it
/// inside a framework server's own install.
fn plugin_location(program: &Path, plugin: &FrameworkPlugin) -> Option<PathBuf> {
    let mut installs = vec![program.to_path_buf()];
    installs.extend(plugin.shipped_by.iter().filter_map(|s| {
        tools_core::process::which(s).or_else(|| tools_core::discovery::find_in_server_cache(s))
    }));
    for install in installs {
        let Ok(real) = install.canonicalize() else {
            continue;
        };
        // `…/node_modules/<server package>/bin/<program>`: the shared `node_modules`, then
        // the server package's own.
        let Some(modules) = real
            .ancestors()
            .find(|d| d.file_name().is_some_and(|n| n == "node_modules"))
        else {
            continue;
        };
        let mut folders: Vec<PathBuf> = modules
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        if let Ok(below) = real.strip_prefix(modules) {
            let mut package = modules.to_path_buf();
            for part in below.components().take(2) {
                package.push(part);
                if !part.as_os_str().to_string_lossy().starts_with('@') {
                    break;
                }
            }
            folders.push(package);
        }
        if let Some(found) = folders.into_iter().find(|f| {
            f.join("node_modules")
                .join(plugin.package)
                .join("package.json")
                .is_file()
        }) {
            return Some(found);
        }
    }
    None
}

/// Whether a `package.json` in a folder from `file`'s up to `workspace` lists `dependency`
/// among its dependencies of any kind.
fn depends_on(file: &Path, workspace: &Path, dependency: &str) -> bool {
    file.ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(workspace))
        .any(|d| package_lists(&d.join("package.json"), dependency))
}

/// Whether `package` resolves from `folder` as Node resolves a package: a
/// `node_modules/<package>/package.json` in `folder` or any folder above it.
pub(crate) fn installed(folder: &Path, package: &str) -> bool {
    folder.ancestors().any(|d| {
        d.join("node_modules")
            .join(package)
            .join("package.json")
            .is_file()
    })
}

/// Whether the `package.json` at `path` lists `dependency`.
fn package_lists(path: &Path, dependency: &str) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut text = String::new();
    if f.take(PACKAGE_JSON_CAP).read_to_string(&mut text).is_err() {
        return false;
    }
    let Ok(manifest) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .iter()
    .any(|k| manifest[k].get(dependency).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_a_vue_one_by_its_package_json_up_to_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        std::fs::create_dir_all(ws.join("app/src")).unwrap();
        std::fs::write(
            ws.join("app/package.json"),
            r#"{"name": "a", "dependencies": {"vue": "^3.5.0"}}"#,
        )
        .unwrap();
        assert!(depends_on(&ws.join("app/src/main.ts"), ws, "vue"));
        assert!(!depends_on(&ws.join("app/src/main.ts"), ws, "svelte"));
        assert!(!depends_on(&ws.join("other/main.ts"), ws, "vue"));
        // Above the workspace does not count, and a broken manifest is no dependency.
        assert!(!depends_on(
            &ws.join("app/src/main.ts"),
            &ws.join("app/src"),
            "vue"
        ));
        std::fs::write(ws.join("app/package.json"), "{\"dependencies\": {\"vue\"").unwrap();
        assert!(!depends_on(&ws.join("app/src/main.ts"), ws, "vue"));
    }

    #[test]
    fn a_package_is_installed_when_node_modules_from_the_folder_up_hold_it() {
        let d = tempfile::tempdir().unwrap();
        let app = d.path().join("apps/web");
        std::fs::create_dir_all(&app).unwrap();
        assert!(!installed(&app, "svelte"));
        // A folder named like the package is not an install: its package.json is.
        let svelte = d.path().join("node_modules/svelte");
        std::fs::create_dir_all(&svelte).unwrap();
        assert!(!installed(&app, "svelte"));
        std::fs::write(svelte.join("package.json"), "{}").unwrap();
        assert!(installed(&app, "svelte"));
        assert!(!installed(&app, "vue"));
    }

    #[test]
    fn the_plugin_is_found_in_the_node_modules_of_the_server_or_inside_a_framework_server() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let cli = top.join("node_modules/typescript-language-server/lib/cli.mjs");
        std::fs::create_dir_all(cli.parent().unwrap()).unwrap();
        std::fs::write(&cli, "").unwrap();
        let vue = PLUGINS[0];
        let none = FrameworkPlugin {
            shipped_by: &[],
            ..vue
        };
        assert_eq!(plugin_location(&cli, &none), None);
        let shipped =
            top.join("node_modules/typescript-language-server/node_modules/@vue/typescript-plugin");
        std::fs::create_dir_all(&shipped).unwrap();
        std::fs::write(shipped.join("package.json"), "{}").unwrap();
        assert_eq!(
            plugin_location(&cli, &none),
            Some(top.join("node_modules/typescript-language-server"))
        );
        let beside = top.join("node_modules/@vue/typescript-plugin");
        std::fs::create_dir_all(&beside).unwrap();
        std::fs::write(beside.join("package.json"), "{}").unwrap();
        assert_eq!(plugin_location(&cli, &none), Some(top.clone()));
    }
}
