//! Locating the hunks of an `*** Update File` in the file and applying them.
//!
//! Hunks are located in order, each searched from where the previous one ended: exact
//! match first, then ignoring trailing whitespace, then ignoring surrounding whitespace.
//! The file keeps its own conventions: every line keeps its own line break (`\r\n` or
//! `\n`), lines a hunk inserts take the break of the line they replace or, past those, the
//! file's usual one, a missing break at the end of the file stays missing, and a leading
//! UTF-8 BOM stays.

use tools_core::ToolError;

use crate::patch_text::Hunk;

/// The UTF-8 byte-order mark.
const BOM: &str = "\u{feff}";

/// One line of a file and the break that ends it (`""` for a last line without one).
#[derive(Debug, Clone)]
struct Line {
    text: String,
    eol: &'static str,
}

fn split_lines(body: &str) -> Vec<Line> {
    body.split_inclusive('\n')
        .map(|l| match l.strip_suffix("\r\n") {
            Some(t) => Line {
                text: t.to_string(),
                eol: "\r\n",
            },
            None => match l.strip_suffix('\n') {
                Some(t) => Line {
                    text: t.to_string(),
                    eol: "\n",
                },
                None => Line {
                    text: l.to_string(),
                    eol: "",
                },
            },
        })
        .collect()
}

/// Where `needle` starts in `lines` at or after `start` (at the very end with `at_eof`).
fn find_block(lines: &[Line], needle: &[String], start: usize, at_eof: bool) -> Option<usize> {
    if needle.is_empty() {
        return Some(if at_eof { lines.len() } else { start });
    }
    if needle.len() > lines.len() {
        return None;
    }
    let norms: [fn(&str) -> &str; 3] = [|s| s, |s| s.trim_end(), |s| s.trim()];
    for norm in norms {
        let fits =
            |at: usize| (0..needle.len()).all(|k| norm(&lines[at + k].text) == norm(&needle[k]));
        if at_eof {
            let at = lines.len() - needle.len();
            if at >= start && fits(at) {
                return Some(at);
            }
            continue;
        }
        if let Some(at) = (start..=lines.len() - needle.len()).find(|&at| fits(at)) {
            return Some(at);
        }
    }
    None
}

/// Applies `hunks` to `original`, or says which hunk does not apply.
pub(crate) fn apply_hunks(
    original: &str,
    hunks: &[Hunk],
    shown: &str,
) -> Result<String, ToolError> {
    let (bom, body) = match original.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", original),
    };
    let mut lines = split_lines(body);
    let crlf = lines.iter().filter(|l| l.eol == "\r\n").count();
    let lf = lines.iter().filter(|l| l.eol == "\n").count();
    let usual: &'static str = if crlf > lf { "\r\n" } else { "\n" };
    let ends_without_break = !body.is_empty() && !body.ends_with('\n');
    let mut cursor = 0;
    for (n, h) in hunks.iter().enumerate() {
        if let Some(anchor) = &h.anchor {
            match (cursor..lines.len())
                .find(|&k| lines[k].text.trim() == anchor.trim())
                .or_else(|| (cursor..lines.len()).find(|&k| lines[k].text.contains(anchor.trim())))
            {
                Some(k) => cursor = k + 1,
                None => {
                    return Err(ToolError::invalid(
                        "patch",
                        format!(
                            "hunk {} of `{shown}` (patch line {}): the anchor `@@ {anchor}` is not in the file after line {cursor}; no file was changed",
                            n + 1,
                            h.patch_line
                        ),
                    ));
                }
            }
        }
        let Some(at) = find_block(&lines, &h.old, cursor, h.at_eof) else {
            let first = h.old.first().map(|s| s.as_str()).unwrap_or("");
            return Err(ToolError::invalid(
                "patch",
                format!(
                    "hunk {} of `{shown}` (patch line {}) does not apply: its {} context/removed lines (starting {:?}) \
                     are not in the file after line {cursor}; re-read the file and regenerate the hunk; no file was changed",
                    n + 1,
                    h.patch_line,
                    h.old.len(),
                    first
                ),
            ));
        };
        let replaced: Vec<&'static str> =
            lines[at..at + h.old.len()].iter().map(|l| l.eol).collect();
        let new_lines: Vec<Line> = h
            .new
            .iter()
            .enumerate()
            .map(|(k, t)| Line {
                text: t.clone(),
                eol: replaced.get(k).copied().unwrap_or(usual),
            })
            .collect();
        lines.splice(at..at + h.old.len(), new_lines);
        cursor = at + h.new.len();
    }
    // Only the last line may lack a break, and only if the file's last line did.
    let last = lines.len().saturating_sub(1);
    for (k, l) in lines.iter_mut().enumerate() {
        if k == last && ends_without_break {
            l.eol = "";
        } else if l.eol.is_empty() {
            l.eol = usual;
        }
    }
    let mut out = String::with_capacity(original.len() + 64);
    out.push_str(bom);
    for l in &lines {
        out.push_str(&l.text);
        out.push_str(l.eol);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch_text::{PatchOp, parse_patch};

    fn hunks_of(patch: &str) -> Vec<Hunk> {
        match parse_patch(patch).unwrap().remove(0) {
            PatchOp::Update { hunks, .. } => hunks,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_and_applies_with_fuzz_and_anchors() {
        let hunks = hunks_of(
            "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1  \n+    return 2\n*** End Patch\n",
        );
        let src = "def g():\n    return 1\ndef f():\n    return 1\n";
        let out = apply_hunks(src, &hunks, "a.py").unwrap();
        assert_eq!(out, "def g():\n    return 1\ndef f():\n    return 2\n");
    }

    #[test]
    fn end_of_file_hunks_match_the_end() {
        let hunks = hunks_of(
            "*** Begin Patch\n*** Update File: a\n@@\n x\n+tail\n*** End of File\n*** End Patch",
        );
        assert_eq!(
            apply_hunks("x\ny\nx\n", &hunks, "a").unwrap(),
            "x\ny\nx\ntail\n"
        );
    }

    #[test]
    fn crlf_bom_and_a_missing_final_break_are_kept() {
        let hunks = hunks_of(
            "*** Begin Patch\n*** Update File: a\n@@\n a\n-b\n+B\n+inserted\n c\n*** End Patch",
        );
        assert_eq!(
            apply_hunks("\u{feff}a\r\nb\r\nc\r\n", &hunks, "a").unwrap(),
            "\u{feff}a\r\nB\r\ninserted\r\nc\r\n"
        );
        assert_eq!(
            apply_hunks("a\nb\nc", &hunks, "a").unwrap(),
            "a\nB\ninserted\nc"
        );
        // Mixed files: untouched lines keep their own breaks.
        assert_eq!(
            apply_hunks("a\nb\r\nc\n", &hunks, "a").unwrap(),
            "a\nB\r\ninserted\nc\n"
        );
        let append = hunks_of(
            "*** Begin Patch\n*** Update File: a\n@@\n c\n+d\n*** End of File\n*** End Patch",
        );
        assert_eq!(apply_hunks("a\r\nc", &append, "a").unwrap(), "a\r\nc\r\nd");
    }
}
