//! What each ecosystem's package manager is asked to do, and how the programs it installed
//! are exposed in the install folder's `bin/` (the one folder discovery searches).
//!
//! Choices per ecosystem:
//! - **npm** runs the packages' lifecycle scripts (no `--ignore-scripts`): several servers
//!   fetch or check a native part in `postinstall` (esbuild-based ones, biome's platform
//!   package check), and the same code runs anyway the moment the server starts, so skipping
//!   the scripts would only break installs without protecting anyone. The install runs in the
//!   cache folder with the minimal child environment, never in the project.
//! - **pip** installs into a private virtual environment per package (`python3 -m venv
//!   --without-pip`, then `python3 -m pip --python VENV install`, pip 22.3 or later: seeding
//!   the venv with its own pip costs more than the install itself). A venv is not relocatable, so the
//!   scripts' `#!` lines written for the temporary folder are rewritten for the final one
//!   before the folder is renamed.
//! - **cargo**, **go** and **dotnet** write self-contained programs into `bin/` directly.
//! - **gem** programs need `GEM_HOME`/`GEM_PATH` to find their gems, so `bin/` holds small
//!   `sh` wrappers that set them relative to the install folder.

use std::path::{Path, PathBuf};

use tools_core::ToolError;

use super::cache::io_error;
use crate::servers::recipe::{InstallRecipe, PackageManager};

/// One command of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    /// The program (a bare name looked up on `PATH`, or a path inside the install folder).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it on top of the child environment.
    pub env: Vec<(String, String)>,
}

impl Step {
    fn new(program: impl Into<PathBuf>, args: Vec<String>) -> Self {
        Step {
            program: program.into(),
            args,
            env: Vec::new(),
        }
    }

    /// The command as a user would type it, for messages.
    pub fn shown(&self) -> String {
        let name = self
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The first argument (the manager's verb) and the last (the package), without the
        // folder paths in between.
        let mut words = vec![name];
        match self.args.as_slice() {
            [first, .., last] if self.args.len() > 2 => {
                words.extend([first.clone(), "…".into(), last.clone()])
            }
            args => words.extend(args.iter().cloned()),
        }
        words.join(" ")
    }
}

fn owned(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The commands that install `recipe` into `dir` (the temporary install folder).
pub(crate) fn steps(recipe: &InstallRecipe, dir: &Path) -> Vec<Step> {
    let d = dir.display().to_string();
    let packages = recipe.packages();
    match recipe.manager {
        PackageManager::Npm => {
            let mut args = owned(&[
                "install",
                "--prefix",
                &d,
                "--no-save",
                "--no-package-lock",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--omit=dev",
                "--loglevel=error",
            ]);
            args.extend(packages.iter().map(|(p, v)| format!("{p}@{v}")));
            vec![Step::new("npm", args)]
        }
        PackageManager::Pip => {
            let venv = dir.join("venv");
            let python = venv.join("bin/python").display().to_string();
            let mut args = owned(&[
                "-m",
                "pip",
                "--python",
                &python,
                "install",
                "--no-input",
                "--disable-pip-version-check",
                "--quiet",
            ]);
            args.extend(packages.iter().map(|(p, v)| format!("{p}=={v}")));
            vec![
                Step::new(
                    "python3",
                    owned(&["-m", "venv", "--without-pip", &venv.display().to_string()]),
                ),
                Step::new("python3", args),
            ]
        }
        PackageManager::Cargo => packages
            .iter()
            .map(|(p, v)| {
                Step::new(
                    "cargo",
                    owned(&["install", "--locked", "--root", &d, "--version", v, p]),
                )
            })
            .collect(),
        PackageManager::Go => packages
            .iter()
            .map(|(p, v)| {
                let mut s = Step::new("go", vec!["install".into(), format!("{p}@{v}")]);
                s.env
                    .push(("GOBIN".into(), dir.join("bin").display().to_string()));
                s
            })
            .collect(),
        PackageManager::Dotnet => {
            let bin = dir.join("bin").display().to_string();
            packages
                .iter()
                .map(|(p, v)| {
                    Step::new(
                        "dotnet",
                        owned(&["tool", "install", "--tool-path", &bin, "--version", v, p]),
                    )
                })
                .collect()
        }
        PackageManager::Gem => {
            let gems = dir.join("gems");
            let g = gems.display().to_string();
            let b = gems.join("bin").display().to_string();
            packages
                .iter()
                .map(|(p, v)| {
                    Step::new(
                        "gem",
                        owned(&[
                            "install",
                            "--install-dir",
                            &g,
                            "--bindir",
                            &b,
                            "--no-document",
                            "--version",
                            v,
                            p,
                        ]),
                    )
                })
                .collect()
        }
    }
}

/// Name patterns (besides the proxy and certificate variables every install gets) that
/// `manager` reads to reach its registry: a mirror, an index URL, its own configuration.
/// Secret-looking names among them pass only when the user's `[env] pass` names them.
pub(crate) fn registry_variables(manager: PackageManager) -> &'static [&'static str] {
    match manager {
        PackageManager::Npm => &["npm_config_*", "NPM_CONFIG_*", "NODE_EXTRA_CA_CERTS"],
        PackageManager::Pip => &["PIP_*", "REQUESTS_CA_BUNDLE"],
        PackageManager::Cargo => &["CARGO_*"],
        PackageManager::Go => &["GO*"],
        PackageManager::Dotnet => &["DOTNET_*", "NUGET_*"],
        PackageManager::Gem => &["GEM_*", "RUBYGEMS_*"],
    }
}

/// Proxy and certificate variables every package manager needs to reach its registry
/// through a corporate proxy or a private certificate authority.
pub(crate) const NETWORK_VARIABLES: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// Links the programs the packages provide into `dir/bin` and makes the folder work once it
/// is renamed to `final_dir`. Returns the program names, sorted.
pub(crate) fn expose_programs(
    recipe: &InstallRecipe,
    dir: &Path,
    final_dir: &Path,
) -> Result<Vec<String>, ToolError> {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| io_error("create", &bin, e))?;
    match recipe.manager {
        PackageManager::Npm => {
            for (package, _) in recipe.packages() {
                for name in npm_bins(&dir.join("node_modules").join(package))? {
                    link(&bin, &name, &format!("../node_modules/.bin/{name}"))?;
                }
            }
        }
        PackageManager::Pip => {
            let venv = dir.join("venv");
            for (package, _) in recipe.packages() {
                for name in pip_scripts(&venv, package)? {
                    link(&bin, &name, &format!("../venv/bin/{name}"))?;
                }
            }
            rewrite_script_headers(&venv.join("bin"), dir, final_dir)?;
        }
        PackageManager::Gem => {
            let gem_bin = dir.join("gems/bin");
            for name in file_names(&gem_bin) {
                write_gem_wrapper(&bin, &name)?;
            }
        }
        PackageManager::Cargo | PackageManager::Go | PackageManager::Dotnet => {}
    }
    let mut names: Vec<String> = file_names(&bin)
        .into_iter()
        .filter(|n| tools_core::process::is_executable(&bin.join(n)))
        .collect();
    names.sort();
    Ok(names)
}

fn file_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|it| {
            it.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

fn link(bin: &Path, name: &str, target: &str) -> Result<(), ToolError> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Ok(());
    }
    let at = bin.join(name);
    let _ = std::fs::remove_file(&at);
    tools_core::platform::link_file(Path::new(target), &at).map_err(|e| io_error("link", &at, e))
}

/// The `bin` names of an installed npm package (`"bin": "cli.js"` means the package's own
/// name without its scope).
fn npm_bins(package_dir: &Path) -> Result<Vec<String>, ToolError> {
    let manifest = package_dir.join("package.json");
    let text = std::fs::read_to_string(&manifest).map_err(|e| io_error("read", &manifest, e))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| ToolError::internal(format!("{}: {e}", manifest.display())))?;
    Ok(match &json["bin"] {
        serde_json::Value::String(_) => json["name"]
            .as_str()
            .map(|n| vec![n.rsplit('/').next().unwrap_or(n).to_string()])
            .unwrap_or_default(),
        serde_json::Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    })
}

/// The scripts a PyPI distribution installed into the venv's `bin/`, from its `RECORD`
/// (console scripts and data scripts alike, e.g. ruff's and ty's native programs).
fn pip_scripts(venv: &Path, package: &str) -> Result<Vec<String>, ToolError> {
    let normal = |s: &str| s.to_ascii_lowercase().replace(['-', '.'], "_");
    let wanted = normal(package);
    let lib = venv.join("lib");
    let mut out = Vec::new();
    for py in std::fs::read_dir(&lib)
        .map_err(|e| io_error("read", &lib, e))?
        .flatten()
    {
        let site = py.path().join("site-packages");
        for entry in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // `jedi_language_server-0.47.0.dist-info`: the distribution name, then its version.
            let dist = name.split('-').next().unwrap_or("");
            if !(name.ends_with(".dist-info") && normal(dist) == wanted) {
                continue;
            }
            let record = std::fs::read_to_string(entry.path().join("RECORD")).unwrap_or_default();
            for line in record.lines() {
                let path = line.split(',').next().unwrap_or("");
                if let Some(script) = path.strip_prefix("../../../bin/")
                    && !script.contains('/')
                {
                    out.push(script.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// Rewrites the temporary folder's path in the first lines of every script in `venv_bin`
/// (the `#!` line, or pip's `exec` trampoline for long paths) to the final folder's path.
fn rewrite_script_headers(venv_bin: &Path, from: &Path, to: &Path) -> Result<(), ToolError> {
    let (from, to) = (from.display().to_string(), to.display().to_string());
    for name in file_names(venv_bin) {
        let path = venv_bin.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > 4 * 1024 * 1024 {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if !bytes.starts_with(b"#!") {
            continue;
        }
        // Only the header: the first 512 bytes hold the interpreter line(s) of any script.
        let head_len = bytes.len().min(512);
        let Ok(head) = std::str::from_utf8(&bytes[..head_len]) else {
            continue;
        };
        if !head.contains(&from) {
            continue;
        }
        let mut new = head.replace(&from, &to).into_bytes();
        new.extend_from_slice(&bytes[head_len..]);
        // Same folder, same inode replaced in one step; the mode is kept by writing in place.
        std::fs::write(&path, new).map_err(|e| io_error("rewrite", &path, e))?;
    }
    Ok(())
}

/// A wrapper in `bin/` that runs a gem's program with the install's gems on `GEM_PATH`.
fn write_gem_wrapper(bin: &Path, name: &str) -> Result<(), ToolError> {
    if name.contains(['/', '\'', '"', '$', '`', '\\']) {
        return Ok(());
    }
    let at = bin.join(name);
    let script = format!(
        "#!/bin/sh\nhere=$(cd \"$(dirname \"$0\")/..\" && pwd)\n\
         GEM_HOME=\"$here/gems\" GEM_PATH=\"$here/gems\" exec \"$here/gems/bin/{name}\" \"$@\"\n"
    );
    std::fs::write(&at, script).map_err(|e| io_error("write", &at, e))?;
    tools_core::platform::make_executable(&at).map_err(|e| io_error("chmod", &at, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_manager_installs_into_the_given_folder_only() {
        let dir = Path::new("/cache/.tmp-x");
        let npm = InstallRecipe::new(PackageManager::Npm, "typescript-language-server", "5.3.0")
            .with_companion("typescript", "5.9.3");
        let s = steps(&npm, dir);
        assert_eq!(s.len(), 1);
        assert!(
            s[0].args
                .windows(2)
                .any(|w| w == ["--prefix", "/cache/.tmp-x"])
        );
        assert!(s[0].args.ends_with(&[
            "typescript-language-server@5.3.0".to_string(),
            "typescript@5.9.3".to_string()
        ]));
        let pip = steps(
            &InstallRecipe::new(PackageManager::Pip, "jedi-language-server", "0.47.0"),
            dir,
        );
        assert_eq!(pip[1].program, Path::new("python3"));
        assert!(
            pip[1]
                .args
                .windows(2)
                .any(|w| w == ["--python", "/cache/.tmp-x/venv/bin/python"])
        );
        assert_eq!(pip[1].args.last().unwrap(), "jedi-language-server==0.47.0");
        let go = steps(
            &InstallRecipe::new(PackageManager::Go, "golang.org/x/tools/gopls", "v0.20.0"),
            dir,
        );
        assert_eq!(
            go[0].env,
            [("GOBIN".to_string(), "/cache/.tmp-x/bin".to_string())]
        );
        assert_eq!(go[0].shown(), "go install golang.org/x/tools/gopls@v0.20.0");
        assert_eq!(s[0].shown(), "npm install … typescript@5.9.3");
    }

    #[cfg(unix)]
    #[test]
    fn venv_script_headers_follow_the_rename() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let tmp = dir.path().join(".tmp-a");
        let script = bin.join("tool");
        std::fs::write(
            &script,
            format!("#!{}/venv/bin/python\nimport sys\n", tmp.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let fin = dir.path().join("pip-a@1");
        rewrite_script_headers(&bin, &tmp, &fin).unwrap();
        let text = std::fs::read_to_string(&script).unwrap();
        assert_eq!(
            text,
            format!("#!{}/venv/bin/python\nimport sys\n", fin.display())
        );
        let mode = std::fs::metadata(&script).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}
