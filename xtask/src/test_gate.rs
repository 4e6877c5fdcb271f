//! Whether code is test-only: a `#[cfg(test)]` or `testing`-feature gate on an item or on
//! the `mod` line that declares a file. Tidy's test-hook rule and the platform-calls rule
//! both ask, so it sits below both.

use std::path::{Path, PathBuf};

/// Whether an attribute line gates what follows to tests or the `testing` feature.
pub(crate) fn is_test_gate(attribute: &str) -> bool {
    let a = attribute.replace(' ', "");
    a.starts_with("#[cfg(")
        && !a.contains("not(")
        && (a.contains("(test") || a.contains(",test") || a.contains("feature=\"testing\""))
}

/// Whether the `mod` line that declares the file `rel` is gated to tests (then the whole
/// file is).
pub(crate) fn declared_under_test_gate(repo: &Path, rel: &Path) -> Result<bool, String> {
    let Some(stem) = rel.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
        return Ok(false);
    };
    let Some(dir) = rel.parent() else {
        return Ok(false);
    };
    let parents: Vec<PathBuf> = if stem == "mod" || stem == "lib" || stem == "main" {
        return Ok(false);
    } else {
        let mut candidates = vec![dir.join("lib.rs"), dir.join("main.rs"), dir.join("mod.rs")];
        candidates.push(dir.with_extension("rs"));
        candidates
    };
    for parent in parents {
        let Ok(text) = std::fs::read_to_string(repo.join(&parent)) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let decl = line.trim_start();
            let decl = decl.strip_prefix("pub ").unwrap_or(decl);
            let decl = decl.strip_prefix("pub(crate) ").unwrap_or(decl);
            if decl == format!("mod {stem};") {
                return Ok(attributes_above(&lines, i).any(is_test_gate));
            }
        }
    }
    Ok(false)
}

/// The attribute lines directly above line `i` (doc comments skipped).
pub(crate) fn attributes_above<'a>(
    lines: &'a [&'a str],
    i: usize,
) -> impl Iterator<Item = &'a str> + 'a {
    lines[..i]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
        .filter(|l| l.starts_with("#["))
}
