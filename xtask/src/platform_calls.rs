//! Tidy rule: OS-specific code lives in the platform layer only.
//!
//! Everything that differs between Linux, macOS and Windows sits behind the small functions
//! of `crates/tools-core/src/platform/`; a crate that builds for every OS names no `libc::`,
//! `std::os::unix`, `windows_sys::`, OS `cfg` or `/proc` path in its library code. This rule
//! reads the library sources of the crates in [`PORTABLE_CRATES`] (outside the platform
//! layer) and reports every line that does. Test code (`#[cfg(test)] mod … { … }` blocks
//! and files declared under a test gate) and comments are not read: a test that plants a
//! FIFO or a symbolic link is about one OS by nature.

use std::path::{Path, PathBuf};

use crate::finding::{Finding, finding};

/// Crates whose library code is portable: their OS-specific code goes through the
/// platform layer. A crate joins the list once it builds for every target.
pub const PORTABLE_CRATES: &[&str] = &[
    "crates/tools-core",
    "crates/tools-fs",
    "crates/tools-mcp",
    "crates/tools-ast",
    "crates/tools-debug",
    "crates/tools-ask",
    "crates/tools-serve",
    "crates/tools-vibe",
    "crates/tools-lsp",
    "crates/tools-daemon",
    "crates/tools-test",
    "crates/tools-eval",
];

/// The one folder where OS-specific code belongs.
pub const PLATFORM_LAYER: &str = "crates/tools-core/src/platform";

/// What OS-specific code looks like in a line of Rust.
const OS_SPECIFIC: &[&str] = &[
    "libc::",
    "std::os::unix",
    "std::os::fd",
    "std::os::linux",
    "std::os::windows",
    "windows_sys::",
    "\"/proc",
    "cfg(unix",
    "cfg(windows",
    "cfg!(unix",
    "cfg!(windows",
    "target_os",
    "target_family",
];

/// Every OS-specific line among `files` (relative to `repo`) that is outside the platform
/// layer, in the library code of a portable crate.
pub fn check(repo: &Path, files: &[PathBuf]) -> Result<Vec<Finding>, String> {
    let mut out = Vec::new();
    for rel in files.iter().filter(|f| in_scope(f)) {
        if crate::test_gate::declared_under_test_gate(repo, rel)? {
            continue;
        }
        let text = std::fs::read_to_string(repo.join(rel))
            .map_err(|e| format!("cannot read {}: {e}", rel.display()))?;
        out.extend(os_specific_lines(rel, &text));
    }
    Ok(out)
}

/// A Rust file of a portable crate's `src/`, not in the platform layer.
fn in_scope(rel: &Path) -> bool {
    rel.extension().is_some_and(|e| e == "rs")
        && !rel.starts_with(PLATFORM_LAYER)
        && PORTABLE_CRATES
            .iter()
            .any(|c| rel.starts_with(Path::new(c).join("src")))
}

/// The findings of one file's text.
fn os_specific_lines(rel: &Path, text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && let Some((_, next)) = lines.peek()
            && next.trim_start().starts_with("mod ")
            && next.trim_end().ends_with('{')
        {
            // Skip to the brace that closes the test block.
            let mut depth = 0usize;
            for (_, l) in lines.by_ref() {
                depth += l.matches('{').count();
                depth = depth.saturating_sub(l.matches('}').count());
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        let code = line.find("//").map_or(line, |at| &line[..at]);
        if let Some(what) = OS_SPECIFIC.iter().find(|p| code.contains(**p)) {
            out.push(finding(
                rel,
                Some(i + 1),
                format!(
                    "`{what}` outside the platform layer: put what differs by OS behind a \
                     small function in {PLATFORM_LAYER}/ (with its Windows and macOS side) \
                     and call that"
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_calls_are_found_outside_the_platform_layer_and_outside_tests_only() {
        let rel = Path::new("crates/tools-core/src/sweep.rs");
        let text = "//! doc naming `/proc` and libc::kill\n\
                    fn f() { unsafe { libc::kill(1, 9) }; }\n\
                    fn g() { let _ = std::fs::read(\"/proc/self/stat\"); } // libc::x\n\
                    #[cfg(test)]\n\
                    mod tests {\n    fn h() { std::os::unix::fs::symlink(\"a\", \"b\"); }\n}\n";
        let found: Vec<String> = os_specific_lines(rel, text)
            .iter()
            .map(|f| format!("{}:{}", f.path.display(), f.line.unwrap_or(0)))
            .collect();
        assert_eq!(
            found,
            vec![
                "crates/tools-core/src/sweep.rs:2",
                "crates/tools-core/src/sweep.rs:3"
            ]
        );
        assert!(in_scope(Path::new("crates/tools-fs/src/write.rs")));
        assert!(!in_scope(Path::new(
            "crates/tools-core/src/platform/unix/fs.rs"
        )));
        assert!(!in_scope(Path::new(
            "crates/tools-fs/tests/suite/hostile.rs"
        )));
        assert!(in_scope(Path::new("crates/tools-lsp/src/server.rs")));
        assert!(in_scope(Path::new("crates/tools-eval/src/lib.rs")));
        assert!(!in_scope(Path::new("xtask/src/main.rs")));
    }
}
