//! IPython syntax that people type by reflex (`%pip`, `%cd`, `!cmd`, `%%bash`, `%%timeit`, …),
//! rewritten into plain Python before the cell runs, for kernels whose interpreter cannot
//! import IPython (where it can, IPython's own machinery runs the magics). Every magic becomes
//! a call to the `__kernel__` helper object the Python driver installs in `builtins`.
//!
//! Line magics are rewritten one line into one line, so tracebacks keep the cell's own line
//! numbers. A magic the kernel does not support is refused before anything runs, naming the
//! package that would provide it and the supported ones.

/// Line magics the Python kernel understands.
pub const LINE_MAGICS: &[&str] = &["pip", "cd", "pwd", "env", "time", "timeit", "matplotlib"];
/// Cell magics (`%%name` on the first line) the Python kernel understands.
pub const CELL_MAGICS: &[&str] = &["bash", "sh", "time", "timeit", "writefile", "file"];

/// Magics that come from a package's IPython extension rather than IPython itself.
const EXTENSION_MAGICS: &[(&str, &str)] = &[
    ("lprun", "line_profiler"),
    ("memit", "memory_profiler"),
    ("mprun", "memory_profiler"),
];

/// Why a magic the kernel lacks cannot run, and what would provide it.
fn unsupported(magic: &str, name: &str) -> String {
    let package = EXTENSION_MAGICS
        .iter()
        .find(|(m, _)| *m == name)
        .map_or_else(
            || "IPython (`%pip install ipython`, then run the cell again)".to_string(),
            |(_, pkg)| {
                format!("IPython and {pkg} (`%pip install ipython {pkg}`, then `%load_ext {pkg}`)")
            },
        );
    format!(
        "`{magic}` is not a magic of this kernel: its interpreter cannot import IPython, which provides \
         it; it needs {package}. Without IPython the kernel has its own: {}; or write plain Python",
        supported()
    )
}

/// Why a cell could not be rewritten: the 1-based line and a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MagicError {
    /// The 1-based line of the cell.
    pub line: usize,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// A Python string literal holding `s` (JSON string syntax is valid Python).
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn supported() -> String {
    let line: Vec<String> = LINE_MAGICS.iter().map(|m| format!("%{m}")).collect();
    let cell: Vec<String> = CELL_MAGICS.iter().map(|m| format!("%%{m}")).collect();
    format!(
        "supported: {}, {}, !cmd, x = !cmd",
        line.join(", "),
        cell.join(", ")
    )
}

/// Rewrites every magic in a Python cell into plain Python. Cells without magics come back
/// unchanged.
pub fn rewrite_python(code: &str) -> Result<String, MagicError> {
    rewrite_at(code, 0)
}

fn rewrite_at(code: &str, offset: usize) -> Result<String, MagicError> {
    let first = code.lines().next().unwrap_or("");
    if let Some(rest) = first.trim_start().strip_prefix("%%") {
        return rewrite_cell_magic(code, rest, offset);
    }
    let mut out = String::with_capacity(code.len());
    let mut in_string: Option<&'static str> = None;
    for (i, line) in code.split_inclusive('\n').enumerate() {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let rewritten = if in_string.is_none() {
            rewrite_line(body, i + offset)?
        } else {
            None
        };
        in_string = track_triple_quotes(body, in_string);
        match rewritten {
            Some(r) => out.push_str(&r),
            None => out.push_str(body),
        }
        out.push_str(newline);
    }
    Ok(out)
}

fn rewrite_cell_magic(code: &str, header: &str, offset: usize) -> Result<String, MagicError> {
    let (name, args) = split_word(header);
    let body = match code.find('\n') {
        Some(i) => &code[i + 1..],
        None => "",
    };
    match name {
        "bash" | "sh" => Ok(format!("__kernel__.bash({})\n", lit(body))),
        "writefile" | "file" => Ok(format!(
            "__kernel__.writefile({}, {})\n",
            lit(args.trim()),
            lit(body)
        )),
        "time" => {
            let body = rewrite_at(body, offset + 1)?;
            Ok(format!(
                "__kernel__.time({}, offset={})\n",
                lit(&body),
                offset + 1
            ))
        }
        "timeit" => {
            let (number, repeat, setup) = timeit_options(args);
            let body = rewrite_at(body, offset + 1)?;
            Ok(format!(
                "__kernel__.timeit({}, setup={}, number={number}, repeat={repeat})\n",
                lit(&body),
                lit(if setup.trim().is_empty() {
                    "pass"
                } else {
                    setup
                }),
            ))
        }
        _ => Err(MagicError {
            line: offset + 1,
            message: unsupported(&format!("%%{name}"), name),
        }),
    }
}

/// `-n N` and `-r R` options of `%timeit`, then the statement. `None` lets the kernel pick.
fn timeit_options(args: &str) -> (String, String, &str) {
    let mut number = "None".to_string();
    let mut repeat = "None".to_string();
    let mut rest = args.trim_start();
    loop {
        let (flag, after) = split_word(rest);
        let target = match flag {
            "-n" => &mut number,
            "-r" => &mut repeat,
            _ => break,
        };
        let (value, after) = split_word(after);
        if value.is_empty() || !value.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        *target = value.to_string();
        rest = after.trim_start();
    }
    (number, repeat, rest)
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// The rewritten line, or `None` when the line has no magic.
fn rewrite_line(line: &str, index: usize) -> Result<Option<String>, MagicError> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    if let Some(expr) = magic_expr(trimmed, index)? {
        return Ok(Some(format!("{indent}{expr}")));
    }
    // `target = !cmd` / `target = %magic args`
    if let Some(eq) = find_assignment(trimmed) {
        let (target, value) = (&trimmed[..eq], trimmed[eq + 1..].trim_start());
        if value.starts_with('!') || starts_magic(value) {
            let value = match value.strip_prefix('!') {
                Some(cmd) if !cmd.starts_with('=') => {
                    let cmd = cmd.strip_prefix('!').unwrap_or(cmd);
                    format!("__kernel__.sh({}, capture=True)", lit(cmd.trim()))
                }
                _ => match magic_expr(value, index)? {
                    Some(e) => e,
                    None => return Ok(None),
                },
            };
            return Ok(Some(format!("{indent}{} = {value}", target.trim_end())));
        }
    }
    Ok(None)
}

fn starts_magic(s: &str) -> bool {
    s.strip_prefix('%')
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_alphabetic())
}

/// `x = ` or `a, b = ` at the start of a line: the index of the `=`.
fn find_assignment(s: &str) -> Option<usize> {
    let eq = s.find('=')?;
    let target = s[..eq].trim_end();
    if target.is_empty() || s[eq + 1..].starts_with('=') {
        return None;
    }
    let ok = target.split(',').all(|part| {
        let p = part.trim();
        !p.is_empty()
            && p.split('.').all(|seg| {
                let mut cs = seg.chars();
                cs.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    && cs.all(|c| c.is_alphanumeric() || c == '_')
            })
    });
    ok.then_some(eq)
}

/// The Python expression for a line that starts with `!` or `%name`, else `None`.
fn magic_expr(trimmed: &str, index: usize) -> Result<Option<String>, MagicError> {
    if let Some(cmd) = trimmed.strip_prefix("!!") {
        return Ok(Some(format!(
            "__kernel__.sh({}, capture=True)",
            lit(cmd.trim())
        )));
    }
    if let Some(cmd) = trimmed.strip_prefix('!') {
        if cmd.starts_with('=') {
            return Ok(None);
        }
        return Ok(Some(format!("__kernel__.sh({})", lit(cmd.trim()))));
    }
    if trimmed.starts_with("%%") {
        return Err(MagicError {
            line: index + 1,
            message: "a cell magic (`%%…`) must be the first line of the cell".into(),
        });
    }
    if !starts_magic(trimmed) {
        return Ok(None);
    }
    let (name, args) = split_word(&trimmed[1..]);
    let args = args.trim();
    let expr = match name {
        "pip" => format!("__kernel__.pip({})", lit(args)),
        "cd" => format!("__kernel__.cd({})", lit(args)),
        "pwd" => "__kernel__.pwd()".to_string(),
        "env" => format!("__kernel__.env({})", lit(args)),
        "time" => format!("__kernel__.time({}, offset={index})", lit(args)),
        "timeit" => {
            let (number, repeat, stmt) = timeit_options(args);
            format!(
                "__kernel__.timeit({}, number={number}, repeat={repeat})",
                lit(stmt)
            )
        }
        "matplotlib" => format!("__kernel__.matplotlib({})", lit(args)),
        other => {
            return Err(MagicError {
                line: index + 1,
                message: unsupported(&format!("%{other}"), other),
            });
        }
    };
    Ok(Some(expr))
}

/// Follows `"""` / `'''` strings across lines, so a `%` or `!` inside one is left alone.
fn track_triple_quotes(line: &str, mut state: Option<&'static str>) -> Option<&'static str> {
    let mut rest = line;
    loop {
        match state {
            Some(delim) => match rest.find(delim) {
                Some(i) => {
                    rest = &rest[i + 3..];
                    state = None;
                }
                None => return state,
            },
            None => {
                let code = match rest.find('#') {
                    Some(i) => &rest[..i],
                    None => rest,
                };
                let dq = code.find("\"\"\"");
                let sq = code.find("'''");
                let (i, delim) = match (dq, sq) {
                    (Some(a), Some(b)) if b < a => (b, "'''"),
                    (Some(a), _) => (a, "\"\"\""),
                    (None, Some(b)) => (b, "'''"),
                    (None, None) => return None,
                };
                rest = &rest[i + 3..];
                state = Some(delim);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> String {
        rewrite_python(s).unwrap()
    }

    #[test]
    fn plain_code_is_unchanged() {
        let code = "x = 1\nif x != 2:\n    y = x % 3\nprint(x)";
        assert_eq!(rw(code), code);
    }

    #[test]
    fn line_magics_keep_line_numbers_and_indent() {
        let out = rw(
            "%pip install ./pkg.whl\nfor i in range(2):\n    !echo hi\nfiles = !ls -1\n%cd /tmp\n%env A=1\nx = %pwd",
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[0], r#"__kernel__.pip("install ./pkg.whl")"#);
        assert_eq!(lines[2], r#"    __kernel__.sh("echo hi")"#);
        assert_eq!(lines[3], r#"files = __kernel__.sh("ls -1", capture=True)"#);
        assert_eq!(lines[4], r#"__kernel__.cd("/tmp")"#);
        assert_eq!(lines[5], r#"__kernel__.env("A=1")"#);
        assert_eq!(lines[6], r#"x = __kernel__.pwd()"#);
    }

    #[test]
    fn time_and_timeit() {
        assert_eq!(
            rw("a = 1\n%time sum(range(10))"),
            "a = 1\n__kernel__.time(\"sum(range(10))\", offset=1)"
        );
        assert_eq!(
            rw("%timeit -n 10 -r 2 f(x)"),
            "__kernel__.timeit(\"f(x)\", number=10, repeat=2)"
        );
        let out = rw("%%timeit x = list(range(100))\nsorted(x)\n");
        assert_eq!(
            out,
            "__kernel__.timeit(\"sorted(x)\\n\", setup=\"x = list(range(100))\", number=None, repeat=None)\n"
        );
        let out = rw("%%time\ny = 2\n!echo hi\n");
        assert!(out.starts_with(
            "__kernel__.time(\"y = 2\\n__kernel__.sh(\\\"echo hi\\\")\\n\", offset=1)"
        ));
    }

    #[test]
    fn writefile_takes_its_arguments_and_the_body() {
        assert_eq!(
            rw("%%writefile -a 'my file.txt'\nline one\n"),
            "__kernel__.writefile(\"-a 'my file.txt'\", \"line one\\n\")\n"
        );
        assert_eq!(
            rw("%%file mod.py\nX = 1\n"),
            "__kernel__.writefile(\"mod.py\", \"X = 1\\n\")\n"
        );
    }

    #[test]
    fn bash_cell_magic_takes_the_body() {
        assert_eq!(
            rw("%%bash\necho \"$HOME\"\nls | wc -l\n"),
            "__kernel__.bash(\"echo \\\"$HOME\\\"\\nls | wc -l\\n\")\n"
        );
    }

    #[test]
    fn magics_inside_strings_are_left_alone() {
        let code = "s = \"\"\"\n%pip install x\n!rm -rf /\n\"\"\"\n!echo after";
        let out = rw(code);
        assert!(out.contains("\n%pip install x\n!rm -rf /\n"));
        assert!(out.ends_with("__kernel__.sh(\"echo after\")"));
    }

    #[test]
    fn unknown_magics_are_refused_with_the_supported_list() {
        let err = rewrite_python("x = 1\n%load_ext autoreload").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("%load_ext"));
        assert!(err.message.contains("%pip"));
        let err = rewrite_python("%%script python\nhello").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("%%bash"));
        let err = rewrite_python("%lprun -f f f(1)").unwrap_err();
        assert!(
            err.message
                .contains("it needs IPython and line_profiler (`%pip install ipython line_profiler`, then `%load_ext line_profiler`)"),
            "{}",
            err.message
        );
        let err = rewrite_python("x = 1\n%%bash\nls").unwrap_err();
        assert!(err.message.contains("first line"));
    }

    #[test]
    fn not_equal_and_modulo_are_not_magics() {
        assert_eq!(rw("x = (1\n!= 2)"), "x = (1\n!= 2)");
        assert_eq!(rw("y = (5\n% 3)"), "y = (5\n% 3)");
        assert_eq!(rw("a == !x"), "a == !x");
    }
}
