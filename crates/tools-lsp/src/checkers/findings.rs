//! What a checker prints, read back: one finding per line in the formats checkers use —
//! `path:LINE:COL: severity: message` (rustc, gcc, clang, go, mypy without the column),
//! `path(LINE,COL): severity CODE: message` (tsc), `path:LINE:COL - severity: message`
//! (pyright), `severity - path:LINE:COL - message - code` (dart) — and the cap on how many
//! are listed. Shared by every checker; uses nothing else of the crate.

/// Most findings listed.
pub const CHECKER_CAP: usize = 100;

/// One finding parsed from a checker's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Path as printed by the checker.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, when given.
    pub col: Option<u32>,
    /// `error`, `warning`, `note`, …
    pub severity: String,
    /// The message.
    pub message: String,
}

fn digits(s: &str) -> (Option<u32>, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return (None, s);
    }
    (s[..end].parse().ok(), &s[end..])
}

fn split_severity(msg: &str) -> (String, String) {
    let m = msg.trim();
    for sev in ["error", "warning", "note", "info", "information", "hint"] {
        if let Some(rest) = m.strip_prefix(sev) {
            // `error: x`, `error[E0425]: x`, `error TS2304: x`, `error - x`
            let rest = rest.trim_start();
            let (code, rest) = if let Some(r) = rest.strip_prefix('[') {
                match r.find(']') {
                    Some(i) => (Some(&r[..i]), &r[i + 1..]),
                    None => (None, rest),
                }
            } else if !rest.starts_with(':') && !rest.starts_with('-') {
                match rest.find(':') {
                    Some(i) if !rest[..i].contains(' ') => (Some(&rest[..i]), &rest[i..]),
                    _ => (None, rest),
                }
            } else {
                (None, rest)
            };
            let rest = rest.trim_start_matches([':', '-', ' ']).trim();
            let sev = if sev == "information" { "info" } else { sev };
            let msg = match code {
                Some(c) => format!("[{c}] {rest}"),
                None => rest.to_string(),
            };
            return (sev.to_string(), msg);
        }
    }
    ("error".into(), m.to_string())
}

/// Parses one line of checker output, if it names a location.
pub fn parse_line(line: &str) -> Option<Finding> {
    let t = line.trim();
    // dart: `error - lib/a.dart:3:5 - message - code`
    for sev in ["error", "warning", "info"] {
        if let Some(rest) = t.strip_prefix(&format!("{sev} - ")) {
            let mut parts = rest.splitn(2, " - ");
            let loc = parts.next()?;
            let msg = parts.next().unwrap_or("");
            let mut f = parse_colon_loc(loc)?;
            f.severity = sev.into();
            f.message = msg.to_string();
            return Some(f);
        }
    }
    // tsc: `src/a.ts(3,5): error TS2304: Cannot find name 'x'.`
    if let Some(open) = t.find('(')
        && let Some(close) = t[open..].find("):")
    {
        let inside = &t[open + 1..open + close];
        let mut nums = inside.split(',');
        if let (Some(l), Some(c)) = (nums.next(), nums.next())
            && let (Ok(l), Ok(c)) = (l.trim().parse::<u32>(), c.trim().parse::<u32>())
        {
            let (severity, message) = split_severity(&t[open + close + 2..]);
            return Some(Finding {
                path: t[..open].to_string(),
                line: l,
                col: Some(c),
                severity,
                message,
            });
        }
    }
    parse_colon_loc(t)
}

/// `path:L[:C]: message` or `path:L:C - severity: message` (pyright).
fn parse_colon_loc(t: &str) -> Option<Finding> {
    let mut search = 0;
    while let Some(i) = t[search..].find(':') {
        let at = search + i;
        let (line, rest) = digits(&t[at + 1..]);
        if let Some(line) = line {
            let path = t[..at].trim();
            if path.is_empty() || path.contains(' ') && !path.contains('/') {
                return None;
            }
            let (col, rest) = match rest.strip_prefix(':') {
                Some(r) => {
                    let (c, r2) = digits(r);
                    if c.is_some() { (c, r2) } else { (None, rest) }
                }
                None => (None, rest),
            };
            let rest = rest.trim_start_matches([':', ' ']);
            let rest = rest.strip_prefix("- ").unwrap_or(rest);
            let (severity, message) = split_severity(rest);
            return Some(Finding {
                path: path.to_string(),
                line,
                col,
                severity,
                message,
            });
        }
        search = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_common_formats() {
        let f = parse_line("src/main.rs:2:5: error[E0425]: cannot find value `x` in this scope")
            .unwrap();
        assert_eq!(
            (f.path.as_str(), f.line, f.col),
            ("src/main.rs", 2, Some(5))
        );
        assert_eq!(f.severity, "error");
        assert_eq!(f.message, "[E0425] cannot find value `x` in this scope");
        let f = parse_line("src/a.ts(3,7): error TS2304: Cannot find name 'y'.").unwrap();
        assert_eq!((f.line, f.col), (3, Some(7)));
        assert_eq!(f.message, "[TS2304] Cannot find name 'y'.");
        let f =
            parse_line("  /w/p/a.py:4:9 - error: \"z\" is not defined (reportUndefinedVariable)")
                .unwrap();
        assert_eq!((f.path.as_str(), f.line, f.col), ("/w/p/a.py", 4, Some(9)));
        assert_eq!(f.severity, "error");
        let f = parse_line("a.py:4: error: Name \"z\" is not defined  [name-defined]").unwrap();
        assert_eq!((f.line, f.col), (4, None));
        let f = parse_line("./main.go:6:2: undefined: x").unwrap();
        assert_eq!(f.message, "undefined: x");
        let f = parse_line("  error - lib/a.dart:3:5 - Undefined name 'x'. - undefined_identifier")
            .unwrap();
        assert_eq!((f.path.as_str(), f.line), ("lib/a.dart", 3));
        assert!(parse_line("Compiling foo v0.1.0").is_none());
        assert!(parse_line("0 errors, 0 warnings").is_none());
    }
}
