//! How `lsp status` reads: the languages of *this* workspace first, ordered by how many of
//! its files they have, and every configured language without files here folded into one
//! closing line — so a repository with a few shell scripts does not open with "bash:
//! missing binary". Process ids and uptimes are for programs: they stay in the structured
//! result. The supervisor gathers the facts; this module only arranges the lines.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::servers::discover;
use crate::servers::supervisor::ServerSupervisor;

/// `lsp status`: the supervisor's lines arranged for a reader, with the same structured
/// result plus the file count of each language.
pub async fn status(sup: &ServerSupervisor) -> (String, Value) {
    let (text, mut structured) = sup.status().await;
    let scan = discover::scan_workspace(sup.table(), sup.workspace());
    let languages: Vec<String> = sup.table().iter().map(|s| s.language.clone()).collect();
    let states = states_by_language(&structured);
    let arranged = arrange(&text, &scan.files, &languages, &states);
    structured["files_by_language"] = json!(scan.files);
    (arranged, structured)
}

/// The first state the structured result gives each language (`missing_binary`, …).
fn states_by_language(structured: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for s in structured["servers"].as_array().into_iter().flatten() {
        if let (Some(l), Some(st)) = (s["language"].as_str(), s["state"].as_str()) {
            out.entry(l.to_string())
                .or_insert_with(|| st.replace('_', " "));
        }
    }
    out
}

/// Groups `text`'s lines by the language they start with (`python: …`), orders the groups
/// by the language's file count (most first, then the table's order), folds the groups of
/// languages without files and without a server of this run into one line, and keeps lines
/// of no language (notes) at the end.
pub fn arrange(
    text: &str,
    files: &BTreeMap<String, usize>,
    languages: &[String],
    states: &BTreeMap<String, String>,
) -> String {
    // Longest names first, so `c` never claims a `cpp: …` line.
    let mut by_length: Vec<&String> = languages.iter().collect();
    by_length.sort_by_key(|l| std::cmp::Reverse(l.len()));
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut notes = Vec::new();
    for line in text.lines() {
        let lang = by_length
            .iter()
            .find(|l| line.starts_with(&format!("{l}: ")))
            .map(|l| l.to_string());
        match lang {
            Some(l) => match groups.iter_mut().find(|(g, _)| *g == l) {
                Some((_, lines)) => lines.push(without_internals(line)),
                None => groups.push((l, vec![without_internals(line)])),
            },
            None => notes.push(line.to_string()),
        }
    }
    let order = |l: &str| languages.iter().position(|x| x == l).unwrap_or(usize::MAX);
    groups.sort_by_key(|(l, _)| {
        (
            std::cmp::Reverse(files.get(l).copied().unwrap_or(0)),
            order(l),
        )
    });
    let mut out: Vec<String> = Vec::new();
    let mut absent: Vec<String> = Vec::new();
    for (lang, lines) in groups {
        let has_files = files.get(&lang).copied().unwrap_or(0) > 0;
        // A server of this run (a companion stopped while idle too) keeps its lines.
        let of_this_run = lines
            .iter()
            .any(|l| l.contains(": running ") || l.contains(": stopped — "));
        if has_files || of_this_run {
            out.extend(lines);
        } else {
            absent.push(match states.get(&lang) {
                Some(state) => format!("{lang} ({state})"),
                None => lang,
            });
        }
    }
    if !absent.is_empty() {
        out.push(format!(
            "configured, but no files here: {}",
            absent.join(", ")
        ));
    }
    out.extend(notes);
    out.join("\n")
}

/// A line with the process id and uptime taken out of its parenthesis: `(pid 12, up 3s,
/// indexing)` becomes `(indexing)`, and `(pid 12, up 3s)` goes.
fn without_internals(line: &str) -> String {
    let Some(open) = line.find(" (pid ") else {
        return line.to_string();
    };
    let Some(close) = line[open..].find(')').map(|c| open + c) else {
        return line.to_string();
    };
    let inner = &line[open + 2..close];
    let kept: Vec<&str> = inner
        .split(", ")
        .filter(|part| !part.starts_with("pid ") && !part.starts_with("up "))
        .collect();
    let middle = if kept.is_empty() {
        String::new()
    } else {
        format!(" ({})", kept.join(", "))
    };
    format!("{}{middle}{}", &line[..open], &line[close + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs() -> Vec<String> {
        ["python", "c", "cpp", "bash", "go"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn the_workspace_languages_come_first_most_files_first() {
        let text = "python: running pyright-langserver for root . (pid 12, up 3s)\n\
                    bash: missing binary for root . (marker found) — looked for bash-language-server in PATH\n\
                    cpp: not started yet for root .; clangd resolves at /x/clangd\n\
                    go: missing binary for root sub (marker found) — looked for gopls in PATH\n\
                    (untrusted workspace: …)";
        let files = BTreeMap::from([
            ("python".to_string(), 40),
            ("bash".to_string(), 3),
            ("cpp".to_string(), 120),
        ]);
        let states = BTreeMap::from([("go".to_string(), "missing binary".to_string())]);
        let out = arrange(text, &files, &langs(), &states);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("cpp: "), "{out}");
        assert_eq!(lines[1], "python: running pyright-langserver for root .");
        assert!(lines[2].starts_with("bash: "), "{out}");
        assert_eq!(
            lines[3],
            "configured, but no files here: go (missing binary)"
        );
        assert_eq!(lines[4], "(untrusted workspace: …)");
    }

    #[test]
    fn internals_leave_the_text_and_states_stay() {
        assert_eq!(
            without_internals(
                "rust: running rust-analyzer for root . (pid 9, up 12s, indexing, restarted after 1 failure(s))"
            ),
            "rust: running rust-analyzer for root . (indexing, restarted after 1 failure(s))"
        );
        assert_eq!(
            without_internals(
                "python: running pyright-langserver for root . (pid 9, up 4s, indexing: 1890 file(s) to analyze, about 140 s more at its pace)"
            ),
            "python: running pyright-langserver for root . (indexing: 1890 file(s) to analyze, about 140 s more at its pace)"
        );
        assert_eq!(
            without_internals("go: crashed (exit 2)"),
            "go: crashed (exit 2)"
        );
    }
}
