//! The functions a change touched since a git revision: `git diff -U0 REV` gives the changed
//! lines of each file, and the run's symbol sources give the innermost function or method
//! around each of them. These are where the walk to the reaching tests starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, SymbolSources, ToolError};

/// A changed function: its file, the line of its name, its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedSymbol {
    /// The file (absolute).
    pub path: PathBuf,
    /// The line of its name (1-based).
    pub line: usize,
    /// Its name.
    pub name: String,
    /// A value outside any function (a constant, a class attribute), not a function: the
    /// tests that ran the functions using it reach it.
    pub value: bool,
}

/// The changed line ranges (1-based, inclusive) per file, from `git diff -U0` output.
pub fn changed_lines(diff: &str, root: &Path) -> Vec<(PathBuf, Vec<(usize, usize)>)> {
    let mut out: Vec<(PathBuf, Vec<(usize, usize)>)> = Vec::new();
    for line in diff.lines() {
        if let Some(file) = line.strip_prefix("+++ b/") {
            out.push((root.join(file), Vec::new()));
        } else if line.starts_with("+++ ") {
            // `+++ /dev/null`: the file was deleted; nothing of it runs any more.
            out.push((PathBuf::new(), Vec::new()));
        } else if let Some(hunk) = line.strip_prefix("@@ ") {
            let Some(new) = hunk.split(' ').find(|p| p.starts_with('+')) else {
                continue;
            };
            let (start, count) = match new[1..].split_once(',') {
                Some((s, c)) => (s.parse().unwrap_or(0), c.parse().unwrap_or(1)),
                None => (new[1..].parse().unwrap_or(0), 1),
            };
            // A pure deletion (`+N,0`) changed what surrounds line N.
            let end = if count == 0 { start } else { start + count - 1 };
            if let Some((_, ranges)) = out.last_mut() {
                ranges.push((start.max(1), end.max(1)));
            }
        }
    }
    out.retain(|(p, r)| !p.as_os_str().is_empty() && !r.is_empty());
    out
}

/// `git diff -U0 --no-color REV --` in the workspace root.
async fn git_diff(
    run: &std::sync::Arc<Run>,
    rev: &str,
    paths: &[PathBuf],
) -> Result<String, ToolError> {
    if rev.starts_with('-') {
        return Err(ToolError::invalid(
            "changed_since",
            "a revision cannot start with `-`",
        ));
    }
    let mut cmd = tools_core::child_command(run, "git");
    cmd.args(["diff", "-U0", "--no-color", "--no-ext-diff", rev, "--"])
        .args(paths)
        .current_dir(run.root());
    let mut child = ChildProcess::spawn(run, cmd, Pipes::StdoutOnly)?;
    let mut out = String::new();
    if let Some(mut stdout) = child.take_stdout() {
        let read = stdout.read_to_string(&mut out);
        if tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .is_err()
        {
            return Err(ToolError::timed_out(
                "`git diff` did not finish within 30 s",
            ));
        }
    }
    let status = child.wait().await.ok();
    child.stderr_read_to_end(Duration::from_secs(1)).await;
    if !status.is_some_and(|s| s.success()) {
        return Err(ToolError::invalid(
            "changed_since",
            format!(
                "`git diff {rev}` failed: {}",
                crate::report::one_line(&child.stderr().last_lines(3))
            ),
        ));
    }
    Ok(out)
}

/// The functions and methods changed since `rev`, innermost first per change.
pub async fn changed_since(
    run: &std::sync::Arc<Run>,
    rev: &str,
) -> Result<Vec<ChangedSymbol>, ToolError> {
    changed_in(run, rev, &[]).await
}

/// As [`changed_since`], in `paths` only (all files when empty).
pub async fn changed_in(
    run: &std::sync::Arc<Run>,
    rev: &str,
    paths: &[PathBuf],
) -> Result<Vec<ChangedSymbol>, ToolError> {
    let diff = git_diff(run, rev, paths).await?;
    let mut out: Vec<ChangedSymbol> = Vec::new();
    for (path, ranges) in changed_lines(&diff, run.root()) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Some(found) = functions_at(run, &path, &text, &ranges).await {
            for changed in found.functions {
                if !out.contains(&changed) {
                    out.push(changed);
                }
            }
        }
    }
    Ok(out)
}

/// The line diff of a file's text before and after a write, made once for every use of it:
/// the changed lines on either side, and where the old text's lines went.
pub struct LineDiff {
    ops: Vec<similar::DiffOp>,
}

impl LineDiff {
    /// The diff of `old` and `new`, line by line.
    pub fn of(old: &str, new: &str) -> LineDiff {
        LineDiff {
            ops: similar::TextDiff::from_lines(old, new).ops().to_vec(),
        }
    }

    /// The lines of the new text (1-based, inclusive ranges) that differ from the old; a
    /// deletion is the two lines around where the removed text stood (it may have ended a
    /// function).
    pub fn changed_in_new(&self) -> Vec<(usize, usize)> {
        self.changed_on(similar::DiffOp::new_range)
    }

    /// The lines of the old text (1-based, inclusive ranges) the new one no longer has as
    /// they were; an insertion is the two lines of the old text around where it went in.
    pub fn changed_in_old(&self) -> Vec<(usize, usize)> {
        self.changed_on(similar::DiffOp::old_range)
    }

    /// The diff's operations, in order.
    pub fn ops(&self) -> &[similar::DiffOp] {
        &self.ops
    }

    /// The changed lines on one side (`side` picks it), an empty range standing for the two
    /// lines around it.
    fn changed_on(
        &self,
        side: fn(&similar::DiffOp) -> std::ops::Range<usize>,
    ) -> Vec<(usize, usize)> {
        self.ops
            .iter()
            .filter(|op| !matches!(op, similar::DiffOp::Equal { .. }))
            .map(|op| {
                let r = side(op);
                if r.is_empty() {
                    (r.start.max(1), r.start + 1)
                } else {
                    (r.start + 1, r.end)
                }
            })
            .collect()
    }
}

/// The name a symbol is called by in the code, from how its source spells it: gopls'
/// `(*FlagSet).Set` is called `Set`, `Point.norm` is `norm`; `None` for an anonymous one
/// (the TypeScript server's `<function>`, `… callback`), which no use names.
pub fn called_name(spelled: &str) -> Option<String> {
    let last = spelled.rsplit('.').next().unwrap_or(spelled).trim();
    let ident = !last.is_empty()
        && !last.starts_with(|c: char| c.is_ascii_digit())
        && last
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    ident.then(|| last.to_string())
}

/// Whether `kind` (a source's plain word) is something that runs: a function, method or
/// constructor.
pub fn is_callable(kind: &str) -> bool {
    kind.contains("function") || kind.contains("method") || kind.contains("constructor")
}

/// The line (1-based) of `name` in the symbol whose range starts at byte `start` of
/// `text`: the range may open with decorators or doc comments.
pub fn name_line(text: &str, start: usize, name: &str) -> usize {
    let first = tools_core::line_number(text, start);
    text.lines()
        .enumerate()
        .skip(first - 1)
        .find(|(_, l)| l.contains(name))
        .map_or(first, |(i, _)| i + 1)
}

/// The innermost symbol around the byte range `from..to` that code can name: the innermost
/// callable with a name, else (an anonymous function inside a variable's value, such as
/// `const Check = make((inst) => …)`) the innermost named symbol around it, with its name.
pub fn named_around(
    symbols: &[tools_core::SourceSymbol],
    from: usize,
    to: usize,
) -> Option<(&tools_core::SourceSymbol, String)> {
    let around = |callable: bool| {
        symbols
            .iter()
            .filter(|s| s.range.start <= from && to <= s.range.end)
            .filter(|s| !callable || is_callable(&s.kind))
            .filter_map(|s| Some((s, called_name(s.path.last()?)?)))
            .min_by_key(|(s, _)| s.range.len())
    };
    around(true).or_else(|| around(false))
}

/// The innermost named symbol that is not a callable nor a container of code (a module,
/// namespace or package) overlapping `from..to`: a variable, constant, field or class.
fn value_at(
    symbols: &[tools_core::SourceSymbol],
    from: usize,
    to: usize,
) -> Option<(&tools_core::SourceSymbol, String)> {
    symbols
        .iter()
        .filter(|s| s.range.start < to && from < s.range.end)
        .filter(|s| {
            !is_callable(&s.kind)
                && !["module", "namespace", "package", "file"]
                    .iter()
                    .any(|k| s.kind.contains(k))
        })
        .filter_map(|s| Some((s, called_name(s.path.last()?)?)))
        .min_by_key(|(s, _)| s.range.len())
}

/// What a set of changed lines of one file touches.
#[derive(Debug, Default)]
pub struct Touched {
    /// The innermost functions or methods around the changed lines.
    pub functions: Vec<ChangedSymbol>,
    /// Changed line ranges outside any function (module level: not followed).
    pub outside: Vec<(usize, usize)>,
}

/// The innermost function or method around each range of `ranges` in `text` (the file
/// `path` as it is now), from the run's symbol sources; `None` when no source serves it.
pub async fn functions_at(
    run: &Run,
    path: &Path,
    text: &str,
    ranges: &[(usize, usize)],
) -> Option<Touched> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let byte = |line: usize| starts.get(line - 1).copied().unwrap_or(text.len());
    for source in SymbolSources::for_run(run).ordered() {
        let Ok(Some(found)) = source.symbols(path, text).await else {
            continue;
        };
        let mut out = Touched::default();
        let functions: Vec<_> = found
            .symbols
            .iter()
            .filter(|s| is_callable(&s.kind))
            .collect();
        for (a, b) in ranges {
            let (from, to) = (byte(*a), byte(*b + 1).max(byte(*a) + 1));
            let touched: Vec<_> = functions
                .iter()
                .filter(|s| s.range.start < to && from < s.range.end)
                .collect();
            if touched.is_empty()
                && !text[from.min(text.len())..to.min(text.len())]
                    .trim()
                    .is_empty()
            {
                // A changed value outside any function (`LIMIT = 30`, a class attribute) is
                // followed from its own name: the functions using it reach the tests.
                match value_at(&found.symbols, from, to) {
                    Some((s, name)) => {
                        let changed = ChangedSymbol {
                            path: path.to_path_buf(),
                            line: tools_core::line_number(text, s.range.start),
                            name,
                            value: true,
                        };
                        if !out.functions.contains(&changed) {
                            out.functions.push(changed);
                        }
                    }
                    None => out.outside.push((*a, *b)),
                }
            }
            // The innermost: no other touched function inside it.
            for s in &touched {
                let has_inner = touched.iter().any(|o| {
                    o.range != s.range
                        && s.range.start <= o.range.start
                        && o.range.end <= s.range.end
                });
                if has_inner {
                    continue;
                }
                // An anonymous function is followed from the named symbol around it.
                let Some((s, name)) = (match s.path.last().and_then(|n| called_name(n)) {
                    Some(name) => Some((**s, name)),
                    None => named_around(&found.symbols, s.range.start, s.range.end),
                }) else {
                    continue;
                };
                let line = name_line(text, s.range.start, &name);
                let changed = ChangedSymbol {
                    path: path.to_path_buf(),
                    line,
                    name,
                    value: false,
                };
                if !out.functions.contains(&changed) {
                    out.functions.push(changed);
                }
            }
        }
        return Some(out);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_is_followed_by_the_name_its_uses_call_it() {
        assert_eq!(called_name("(*FlagSet).Set").as_deref(), Some("Set"));
        assert_eq!(called_name("Point.norm").as_deref(), Some("norm"));
        assert_eq!(called_name("tidy").as_deref(), Some("tidy"));
        assert_eq!(called_name("$ZodCheck").as_deref(), Some("$ZodCheck"));
        assert_eq!(called_name("<function>"), None);
        assert_eq!(
            called_name("core.$constructor(\"$ZodCustom\") callback"),
            None
        );
    }

    #[test]
    fn an_anonymous_function_is_followed_from_the_named_symbol_around_it() {
        let sym =
            |path: &[&str], kind: &str, range: std::ops::Range<usize>| tools_core::SourceSymbol {
                path: path.iter().map(|p| p.to_string()).collect(),
                kind: kind.into(),
                range,
                body: None,
            };
        // `const $ZodCheckMaxLength = make("…", (inst) => { inst.check = (p) => … })`.
        let symbols = vec![
            sym(&["$ZodCheckMaxLength"], "variable", 0..100),
            sym(
                &[
                    "$ZodCheckMaxLength",
                    "make(\"$ZodCheckMaxLength\") callback",
                ],
                "function",
                30..99,
            ),
            sym(&["$ZodCheckMaxLength", "<function>"], "function", 50..90),
        ];
        let (s, name) = named_around(&symbols, 60, 61).unwrap();
        assert_eq!(
            (name.as_str(), s.range.clone()),
            ("$ZodCheckMaxLength", 0..100)
        );
        // A named callable inside wins over the variable around it.
        let mut named = symbols.clone();
        named.push(sym(&["$ZodCheckMaxLength", "check"], "method", 55..70));
        let (s, name) = named_around(&named, 60, 61).unwrap();
        assert_eq!((name.as_str(), s.range.clone()), ("check", 55..70));
        assert!(named_around(&symbols, 150, 151).is_none());
    }

    #[test]
    fn hunks_give_the_new_sides_lines() {
        let diff = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -6 +6 @@ def sub(a, b):\n-    return a + b\n+    return a - b\n@@ -9,2 +8,0 @@\n-x\n-y\n+++ /dev/null\n@@ -1 +0,0 @@\n";
        assert_eq!(
            changed_lines(diff, Path::new("/w")),
            vec![(PathBuf::from("/w/calc.py"), vec![(6, 6), (8, 8)])]
        );
    }

    #[test]
    fn a_write_changes_the_lines_that_differ_in_its_new_text() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nx\ny\nd\n";
        let in_new = |old, new| LineDiff::of(old, new).changed_in_new();
        assert_eq!(in_new(old, new), vec![(2, 2), (4, 5)]);
        // A removed line: the lines around where it stood.
        assert_eq!(in_new("a\nb\nc\n", "a\nc\n"), vec![(1, 2)]);
        assert_eq!(in_new("same\n", "same\n"), vec![]);
        // The same changes, on the old text's side.
        let in_old = |old, new| LineDiff::of(old, new).changed_in_old();
        assert_eq!(in_old(old, new), vec![(2, 2), (3, 4)]);
        assert_eq!(in_old("a\nb\nc\n", "a\nc\n"), vec![(2, 2)]);
        assert_eq!(in_old("a\nc\n", "a\nb\nc\n"), vec![(1, 2)]);
    }
}
