//! Whether a diagnostics-only companion (ruff beside the Python server, eslint beside the
//! TypeScript one) is wanted for a file: only where the project configures it, or where
//! the user's own configuration names it. A project that never chose a linter would
//! otherwise get its whole default rule set beside the type checker in every write's
//! result — findings nobody on the project asked for.
//!
//! eslint's markers are its own configuration files, so finding one is the project's
//! choice already. ruff's markers include any `pyproject.toml`, so ruff also needs a
//! `ruff.toml`, a `.ruff.toml` or a `[tool.ruff]` table in a `pyproject.toml` between the
//! file and the workspace root.

use std::io::Read;
use std::path::Path;

use crate::servers::config::LspConfig;

/// The most of a `pyproject.toml` read to look for `[tool.ruff]`.
const PYPROJECT_CAP: u64 = 256 * 1024;

/// Whether the companion `language` (its table name: `ruff`, `eslint`) runs for `file`
/// in `workspace` under `cfg`.
pub fn companion_wanted(cfg: &LspConfig, language: &str, file: &Path, workspace: &Path) -> bool {
    if cfg.servers.contains_key(language) {
        // The user's configuration names it (`enabled = false` is honoured by the table).
        return true;
    }
    match language {
        "ruff" => ruff_configured(file, workspace),
        _ => true,
    }
}

/// A ruff configuration in a folder from `file`'s up to `workspace`.
fn ruff_configured(file: &Path, workspace: &Path) -> bool {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        if d.join("ruff.toml").is_file() || d.join(".ruff.toml").is_file() {
            return true;
        }
        if has_ruff_table(&d.join("pyproject.toml")) {
            return true;
        }
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    false
}

/// Whether the TOML file at `path` has a `[tool.ruff]` table (or one below it).
fn has_ruff_table(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut text = String::new();
    if f.take(PYPROJECT_CAP).read_to_string(&mut text).is_err() {
        return false;
    }
    text.lines().map(str::trim).any(|l| {
        l.strip_prefix('[')
            .map(|rest| rest.trim_start_matches('[').trim_start())
            .is_some_and(|t| t.starts_with("tool.ruff]") || t.starts_with("tool.ruff."))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, t) in files {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        }
        d
    }

    #[test]
    fn ruff_runs_only_where_the_project_or_the_user_configures_it() {
        let cfg = LspConfig::default();
        let plain = ws(&[
            ("pyproject.toml", "[project]\nname = \"x\"\n[tool.ruffle]\n"),
            ("pkg/a.py", ""),
        ]);
        let file = plain.path().join("pkg/a.py");
        assert!(!companion_wanted(&cfg, "ruff", &file, plain.path()));
        // eslint's markers are its configuration: found means wanted.
        assert!(companion_wanted(&cfg, "eslint", &file, plain.path()));
        for (name, text) in [
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\n\n[tool.ruff]\nline-length = 100\n",
            ),
            ("pyproject.toml", "[tool.ruff.lint]\nselect = [\"E\"]\n"),
            ("ruff.toml", ""),
            (".ruff.toml", ""),
        ] {
            let d = ws(&[(name, text), ("pkg/a.py", "")]);
            let file = d.path().join("pkg/a.py");
            assert!(
                companion_wanted(&cfg, "ruff", &file, d.path()),
                "{name}: {text}"
            );
        }
        // A configuration above the workspace is not the project's.
        let outer = ws(&[
            ("ruff.toml", ""),
            ("inner/pyproject.toml", "[project]\n"),
            ("inner/a.py", ""),
        ]);
        let inner = outer.path().join("inner");
        assert!(!companion_wanted(&cfg, "ruff", &inner.join("a.py"), &inner));
        // The user's own configuration asks for it.
        let mut asked = LspConfig::default();
        asked.servers.insert("ruff".into(), Default::default());
        assert!(companion_wanted(&asked, "ruff", &file, plain.path()));
    }
}
