//! Readers of each runner's machine-readable output into a [`Report`](crate::report::Report):
//! JUnit XML (pytest), `go test -json`, the JSON report of vitest and jest, and libtest's
//! output (cargo test). Each is a pure function of the runner's output, so it is tested on
//! the real runners' output and on hand-made edge cases alike.

pub mod gojson;
pub mod jsjson;
pub mod junit;
pub mod libtest;

use std::path::Path;

/// `file:line` for a failure location: `file` (relative to `base` or to a folder above it
/// inside the workspace, or absolute) shown relative to the workspace root.
pub fn location(workspace: &Path, base: &Path, file: &str, line: usize) -> String {
    let rel = file.strip_prefix("./").unwrap_or(file);
    // A Cargo workspace's member prints its paths from the workspace's root, above the
    // member's folder the runner ran in.
    let p = base
        .ancestors()
        .take_while(|a| a.starts_with(workspace))
        .map(|a| a.join(rel))
        .find(|p| p.exists())
        .unwrap_or_else(|| base.join(rel));
    let shown = tools_core::display_relative(workspace, &tools_core::normalize_lexically(&p));
    format!("{shown}:{line}")
}

/// The first `path:LINE` in `text` where the path ends with one of `suffixes` (`.py`, …):
/// `(path, line)`. Accepts `path:LINE:COL`, `path:LINE: msg` and `(path:LINE:COL)`.
pub fn find_location<'a>(text: &'a str, suffixes: &[&str]) -> Option<(&'a str, usize)> {
    text.lines().find_map(|l| line_location(l, suffixes))
}

/// As [`find_location`], the last one.
pub fn find_last_location<'a>(text: &'a str, suffixes: &[&str]) -> Option<(&'a str, usize)> {
    text.lines().rev().find_map(|l| line_location(l, suffixes))
}

fn line_location<'a>(line: &'a str, suffixes: &[&str]) -> Option<(&'a str, usize)> {
    for suffix in suffixes {
        let mut from = 0;
        while let Some(i) = line[from..].find(&format!("{suffix}:")) {
            let end = from + i + suffix.len();
            let start = line[..end]
                .rfind(|c: char| c.is_whitespace() || c == '(' || c == '\'' || c == '"')
                .map_or(0, |s| s + 1);
            let digits: String = line[end + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse::<usize>()
                && start < end
            {
                let path = &line[start..end];
                let path = path.strip_prefix("file://").unwrap_or(path);
                return Some((path, n));
            }
            from = end + 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_found_in_the_shapes_runners_print() {
        assert_eq!(
            find_location("    at /w/src/sum.test.ts:7:20", &[".ts"]),
            Some(("/w/src/sum.test.ts", 7))
        );
        assert_eq!(
            find_location("test_calc.py:8: AssertionError", &[".py"]),
            Some(("test_calc.py", 8))
        );
        assert_eq!(
            find_location("  --> src/lib.rs:3:5", &[".rs"]),
            Some(("src/lib.rs", 3))
        );
        assert_eq!(find_location("no place here.py", &[".py"]), None);
    }
}
