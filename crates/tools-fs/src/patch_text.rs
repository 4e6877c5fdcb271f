//! The `*** Begin Patch` envelope as text: its grammar and the parser that turns it into
//! file operations. Nothing here touches the disk; `patch_plan` locates the hunks and
//! `patch` applies them.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (every following line starts with +)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional, right after Update File)
//! @@ optional anchor line
//!  context line
//! -removed line
//! +added line
//! *** End of File           (optional: the hunk ends at the end of the file)
//! *** End Patch
//! ```

use tools_core::ToolError;

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    /// Create a file with these lines.
    Add {
        /// Path as written in the patch.
        path: String,
        /// The new content.
        content: String,
    },
    /// Delete a file.
    Delete {
        /// Path as written in the patch.
        path: String,
    },
    /// Change a file (and maybe move it).
    Update {
        /// Path as written in the patch.
        path: String,
        /// New path, if moved.
        move_to: Option<String>,
        /// The hunks, in order.
        hunks: Vec<Hunk>,
    },
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    /// The text after `@@`, a line to seek to before matching.
    pub anchor: Option<String>,
    /// Lines the file must contain (context and removed lines).
    pub old: Vec<String>,
    /// Lines that replace them (context and added lines).
    pub new: Vec<String>,
    /// Whether the hunk must end at the end of the file.
    pub at_eof: bool,
    /// The 1-based line of the `@@` in the patch text, for messages.
    pub patch_line: usize,
}

fn perr(line: usize, msg: impl std::fmt::Display) -> ToolError {
    ToolError::invalid("patch", format!("patch line {line}: {msg}"))
}

/// Parses the envelope.
pub fn parse_patch(text: &str) -> Result<Vec<PatchOp>, ToolError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() && lines[i].trim().is_empty() {
        i += 1;
    }
    if lines.get(i).map(|l| l.trim()) != Some("*** Begin Patch") {
        return Err(perr(i + 1, "a patch must start with `*** Begin Patch`"));
    }
    i += 1;
    let mut ops = Vec::new();
    let mut ended = false;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "*** End Patch" {
            ended = true;
            break;
        }
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            i += 1;
            let mut content = String::new();
            while i < lines.len() && !lines[i].starts_with("*** ") {
                let Some(rest) = lines[i].strip_prefix('+') else {
                    return Err(perr(
                        i + 1,
                        "every line of an added file must start with `+`",
                    ));
                };
                content.push_str(rest);
                content.push('\n');
                i += 1;
            }
            ops.push(PatchOp::Add {
                path: p.trim().to_string(),
                content,
            });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            ops.push(PatchOp::Delete {
                path: p.trim().to_string(),
            });
            i += 1;
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            i += 1;
            let mut move_to = None;
            if let Some(m) = lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
                move_to = Some(m.trim().to_string());
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while i < lines.len() {
                let l = lines[i];
                if l.trim() == "*** End of File" {
                    match hunks.last_mut() {
                        Some(h) => h.at_eof = true,
                        None => return Err(perr(i + 1, "`*** End of File` before any hunk")),
                    }
                    i += 1;
                    continue;
                }
                if l.starts_with("*** ") {
                    break;
                }
                if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    hunks.push(Hunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        patch_line: i + 1,
                        ..Default::default()
                    });
                    i += 1;
                    continue;
                }
                if hunks.is_empty() {
                    hunks.push(Hunk {
                        patch_line: i + 1,
                        ..Default::default()
                    });
                }
                let Some(h) = hunks.last_mut() else { break };
                match l.chars().next() {
                    Some(' ') => {
                        h.old.push(l[1..].to_string());
                        h.new.push(l[1..].to_string());
                    }
                    None => {
                        h.old.push(String::new());
                        h.new.push(String::new());
                    }
                    Some('-') => h.old.push(l[1..].to_string()),
                    Some('+') => h.new.push(l[1..].to_string()),
                    _ => {
                        return Err(perr(
                            i + 1,
                            format!(
                                "expected a line starting with ' ', '-', '+' or '@@', got {l:?}"
                            ),
                        ));
                    }
                }
                i += 1;
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err(perr(
                    i,
                    format!("`*** Update File: {}` has no hunks", p.trim()),
                ));
            }
            ops.push(PatchOp::Update {
                path: p.trim().to_string(),
                move_to,
                hunks,
            });
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(perr(
                i + 1,
                format!(
                    "expected `*** Add File:`, `*** Update File:`, `*** Delete File:` or `*** End Patch`, got {line:?}"
                ),
            ));
        }
    }
    if !ended {
        return Err(perr(
            lines.len(),
            "the patch does not end with `*** End Patch`",
        ));
    }
    if ops.is_empty() {
        return Err(ToolError::invalid("patch", "the patch changes no file"));
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_malformed_envelopes() {
        assert!(parse_patch("*** Update File: a\n").is_err());
        assert!(parse_patch("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").is_err());
        assert!(parse_patch("*** Begin Patch\n*** Update File: a\n@@\n-x\n").is_err());
        assert!(parse_patch("*** Begin Patch\n*** End Patch").is_err());
    }
}
