//! Alike diagnostics on one line, in the summary of a big break and in a long list of gone
//! ones: the same error in the same file at many places (every implementation of a trait
//! missing the method a write added to it) is one line naming the places, so the answer
//! holds all of them where it would otherwise list the first
//! [`ON_WRITE_CAP`](super::findings::ON_WRITE_CAP) (or [`GONE_CAP`](super::findings::GONE_CAP))
//! and leave out the rest.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::diagnostics::findings::Finding;

/// Most places one answer names through its lines, alike ones included (a place is about
/// eight characters on an alike line, a line of its own is about ninety).
pub(crate) const SHOWN_PLACES_CAP: usize = 200;

/// `findings` with alike ones together: the groups in the order of their first member,
/// each group's members in their own order. Alike: in the same file, the same line but for
/// the position (severity, code, message and the server that reported it).
pub(crate) fn gather(findings: Vec<Finding>) -> Vec<Vec<Finding>> {
    let mut groups: Vec<Vec<Finding>> = Vec::new();
    let mut by_text: HashMap<(PathBuf, String), usize> = HashMap::new();
    for f in findings {
        let Some(key) = split(&f).map(|(_, what)| (f.file.clone(), what.to_string())) else {
            groups.push(vec![f]);
            continue;
        };
        match by_text.get(&key) {
            Some(&i) => groups[i].push(f),
            None => {
                by_text.insert(key, groups.len());
                groups.push(vec![f]);
            }
        }
    }
    groups
}

/// The lines showing `groups` in order, at most `max_lines` of them naming at most
/// `max_places` places: a group of one as its own line, a larger one as
/// `path, N times: what — at 12:5, 40:5, …` (`the first M at …` when the places run out
/// inside it). Returns the lines and how many findings they show: the first that many of
/// the groups' members in order, so that the rest can be paged from there.
pub(crate) fn lines(
    groups: &[Vec<Finding>],
    max_lines: usize,
    max_places: usize,
) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut shown = 0;
    for group in groups {
        if out.len() == max_lines || shown == max_places {
            break;
        }
        let Some(first) = group.first() else {
            continue;
        };
        if group.len() == 1 {
            out.push(first.line.clone());
            shown += 1;
            continue;
        }
        // A group of several is of parsed lines only (see `gather`).
        let what = split(first).map_or("", |(_, what)| what);
        let room = group.len().min(max_places - shown);
        let places: Vec<String> = group[..room]
            .iter()
            .filter_map(|f| split(f).map(|(at, _)| at))
            .collect();
        let path = first.json["path"].as_str().unwrap_or_default();
        let which = if room < group.len() {
            format!("the first {room} at")
        } else {
            "at".to_string()
        };
        out.push(format!(
            "{path}, {} times: {what} — {which} {}",
            group.len(),
            places.join(", ")
        ));
        shown += room;
        if room < group.len() {
            break;
        }
    }
    (out, shown)
}

/// The position a finding's line gives (`12:5`, or `12` for a gone one, whose column may
/// no longer exist) and the rest of the line after it, when the line starts with the
/// location its structured form names.
fn split(f: &Finding) -> Option<(String, &str)> {
    let path = f.json["path"].as_str()?;
    let line = f.json["line"].as_u64()?;
    let place = match f.json["col"].as_u64() {
        Some(col) => format!("{line}:{col}"),
        None => line.to_string(),
    };
    let what = f.line.strip_prefix(&format!("{path}:{place} "))?;
    Some((place, what))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn finding(path: &str, line: u64, col: u64, what: &str) -> Finding {
        Finding {
            file: PathBuf::from(format!("/p/{path}")),
            line: format!("{path}:{line}:{col} {what}"),
            json: json!({"path": path, "line": line, "col": col}),
        }
    }

    fn lines_of(groups: &[Vec<Finding>]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| g.iter().map(|f| f.line.clone()).collect())
            .collect()
    }

    #[test]
    fn alike_findings_are_gathered_in_the_order_of_their_first() {
        let groups = gather(vec![
            finding("a.rs", 3, 1, "error [E1] missing `x`"),
            finding("a.rs", 5, 2, "error [E2] other"),
            finding("a.rs", 9, 1, "error [E1] missing `x`"),
            finding("a.rs", 12, 1, "warning [E1] missing `x`"),
        ]);
        assert_eq!(
            lines_of(&groups),
            vec![
                vec![
                    "a.rs:3:1 error [E1] missing `x`".to_string(),
                    "a.rs:9:1 error [E1] missing `x`".to_string()
                ],
                vec!["a.rs:5:2 error [E2] other".to_string()],
                vec!["a.rs:12:1 warning [E1] missing `x`".to_string()],
            ]
        );
    }

    #[test]
    fn alike_lines_of_other_files_are_not_gathered_and_gone_ones_have_no_column() {
        let gone = |path: &str, line: u64| Finding {
            file: PathBuf::from(format!("/p/{path}")),
            line: format!("{path}:{line} error x"),
            json: json!({"path": path, "line": line}),
        };
        let groups = gather(vec![gone("a.rs", 3), gone("b.rs", 4), gone("a.rs", 7)]);
        assert_eq!(
            lines(&groups, 10, 200),
            (
                vec![
                    "a.rs, 2 times: error x — at 3, 7".to_string(),
                    "b.rs:4 error x".to_string()
                ],
                3
            )
        );
    }

    #[test]
    fn a_line_that_does_not_start_with_its_location_stands_alone() {
        let mut odd = finding("a.rs", 3, 1, "error x");
        odd.line = "elsewhere error x".into();
        let groups = gather(vec![odd, finding("a.rs", 4, 1, "error x")]);
        assert_eq!(groups.len(), 2);
    }

    #[test]
    fn groups_show_their_places_and_the_count_shown() {
        let groups = gather(vec![
            finding("a.rs", 3, 1, "error [E1] missing `x`"),
            finding("a.rs", 9, 1, "error [E1] missing `x`"),
            finding("a.rs", 5, 2, "error [E2] other"),
        ]);
        assert_eq!(
            lines(&groups, 50, 200),
            (
                vec![
                    "a.rs, 2 times: error [E1] missing `x` — at 3:1, 9:1".to_string(),
                    "a.rs:5:2 error [E2] other".to_string()
                ],
                3
            )
        );
    }

    #[test]
    fn the_places_run_out_inside_a_group() {
        let groups = gather(
            (1..=5)
                .map(|l| finding("a.rs", l, 1, "error same"))
                .chain([finding("a.rs", 9, 1, "error other")])
                .collect(),
        );
        assert_eq!(
            lines(&groups, 50, 3),
            (
                vec!["a.rs, 5 times: error same — the first 3 at 1:1, 2:1, 3:1".to_string()],
                3
            )
        );
    }

    #[test]
    fn the_lines_run_out_before_the_places() {
        let groups = gather(
            (1..=4)
                .map(|l| finding("a.rs", l, 1, &format!("error e{l}")))
                .collect(),
        );
        assert_eq!(
            lines(&groups, 2, 200),
            (
                vec![
                    "a.rs:1:1 error e1".to_string(),
                    "a.rs:2:1 error e2".to_string()
                ],
                2
            )
        );
    }
}
