//! What `ast_grep` and `ast_edit` answer: a text held to the answer budget (locations and
//! matched lines first, captures shortened, one line saying how to get more) and a structured
//! result with the same page (the same matches or diffs, trimmed the same way, within its own
//! byte budget) plus the counters a program may want (files parsed, cache).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use tools_core::text::cap_list;
use tools_core::{ToolError, ToolOutput, Workspace};

use crate::AstShared;
use crate::answer::{BudgetedText, JsonRoom, first_and_last_line, shorten, structured_budget};
use crate::pattern::CompiledPattern;
use crate::search::{MatchRecord, Scan};
use crate::walk::{SkipReason, Walked};
use tools_core::StagedFile;

/// Characters of the pattern or template echoed in a header.
const ECHO_CHARS: usize = 120;
/// Characters of the matched line shown after a location.
const MATCH_LINE_CHARS: usize = 160;
/// Characters of each kept line of a capture.
const CAPTURE_LINE_CHARS: usize = 60;
/// Skipped files listed in the structured result (the rest are counted).
const LISTED_SKIPPED: usize = 20;
/// Items of a `$$$` capture listed in the structured result (the rest are counted).
const LISTED_MULTI_ITEMS: usize = 8;

/// What the search found in one file: its matches, and when there are none, how many nodes
/// of the pattern's kind it has (for the hint of a search that found nothing).
#[derive(Debug, Default)]
pub struct FileHits {
    /// Matches in source order.
    pub matches: Vec<MatchRecord>,
    /// Nodes of the pattern's root kind, counted only in files without a match.
    pub same_kind_nodes: usize,
}

/// Which matches an `ast_grep` answer covers: `offset` skipped, then at most `max_results`.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Matches skipped, in path order then position.
    pub offset: usize,
    /// Matches covered after the offset.
    pub max_results: usize,
}

/// Everything the renderers need about the call.
pub struct CallFacts<'a> {
    /// The workspace, for relative paths.
    pub ws: &'a Workspace,
    /// The searched file or folder.
    pub scope: &'a std::path::Path,
    /// The pattern as the caller wrote it.
    pub source: &'a str,
    /// The compiled pattern.
    pub pattern: &'a CompiledPattern,
    /// What the walk found and skipped.
    pub walked: &'a Walked,
    /// Text budget in bytes.
    pub budget: usize,
}

/// The text and structured result of `ast_grep`.
pub fn grep_answer(
    facts: &CallFacts<'_>,
    shared: &AstShared,
    result: &Scan<FileHits>,
    window: Window,
) -> ToolOutput {
    let ws = facts.ws;
    let pattern = facts.pattern;
    let lang = pattern.lang;
    let total: usize = result.per_file.iter().map(|(_, f)| f.matches.len()).sum();
    let files_with = result
        .per_file
        .iter()
        .filter(|(_, f)| !f.matches.is_empty())
        .count();
    let in_window: Vec<(&PathBuf, &MatchRecord)> = result
        .per_file
        .iter()
        .flat_map(|(p, f)| f.matches.iter().map(move |m| (p, m)))
        .skip(window.offset)
        .take(window.max_results)
        .collect();
    let echo = shorten(facts.source, ECHO_CHARS);
    let hints = hints(facts, result, total);
    let head = if total == 0 {
        format!(
            "no matches for `{echo}` ({lang}) in {} file(s) under {}",
            result.searched,
            ws.display(facts.scope)
        )
    } else if window.offset > 0 {
        format!(
            "{total} match(es) in {files_with} file(s) for `{echo}` ({lang}); from match {}",
            window.offset + 1
        )
    } else {
        format!("{total} match(es) in {files_with} file(s) for `{echo}` ({lang})")
    };
    let mut text = BudgetedText::new(head, facts.budget);
    for h in &hints {
        text.push_always(&format!("\n{h}"));
    }
    if total > 0 && in_window.is_empty() {
        text.push_always(&format!(
            "\n`offset` {} is past the last match; the matches are numbered from 0 to {}",
            window.offset,
            total - 1
        ));
    }
    let skipped = skipped_all(facts.walked, result);
    let skipped_text = skipped_line(&skipped);
    let mut structured = json!({
        "pattern": facts.source,
        "language": lang.id(),
        "context": pattern.context,
        "filled_in": pattern.filled_in,
        "total_matches": total,
        "files_with_matches": files_with,
        "offset": window.offset,
        "matches": [],
        "hints": hints,
        "searched_files": result.searched,
        "prefiltered_files": result.prefiltered,
        "parsed_files": result.parsed,
        "cached_files": result.cached_trees,
        "skipped": skipped_json(ws, &skipped),
        "cache": shared.cache.stats(),
    });
    // The structured result pages with the text: a match is in both or in neither.
    let mut room = JsonRoom::new(structured_budget(facts.budget), &structured);
    let mut matches_json = Vec::new();
    for (i, (path, m)) in in_window.iter().enumerate() {
        let rel = ws.display(path);
        let block = match_block(&rel, m);
        let item = match_json(&rel, m);
        if i == 0 {
            text.push_cut(&block);
        } else if !room.fits(&item) || !text.push_block(&block) {
            break;
        }
        room.take(&item);
        matches_json.push(item);
    }
    let shown = matches_json.len();
    let next = window.offset + shown;
    if next < total && shown > 0 {
        text.push_always(&format!(
            "\n\n… {} more match(es) not shown (of {total}): pass `offset: {next}` for the next ones, or narrow `path`",
            total - next
        ));
    }
    if let Some(s) = skipped_text {
        text.push_always(&format!("\n\n{s}"));
    }
    structured["matches"] = Value::Array(matches_json);
    structured["shown"] = json!(shown);
    structured["shown_in_text"] = json!(shown);
    structured["next_offset"] = json!((next < total).then_some(next));
    structured["more_not_shown"] = json!(total.saturating_sub(next));
    ToolOutput::text(text.finish()).with_structured(structured)
}

/// One match in the text: `path:line:col  first line` and its captures on one line each kind.
fn match_block(rel: &str, m: &MatchRecord) -> String {
    let lines = m.text.lines().count();
    let first = m.text.lines().next().unwrap_or("").trim_end();
    let mut block = format!(
        "\n\n{rel}:{}:{}  {}",
        m.line,
        m.col,
        shorten(first, MATCH_LINE_CHARS)
    );
    if lines > 1 {
        block.push_str(&format!("  ({lines} lines)"));
    }
    let singles: Vec<String> = m
        .captures
        .iter()
        .map(|(name, value)| {
            format!(
                "${name} = {}",
                first_and_last_line(value, CAPTURE_LINE_CHARS)
            )
        })
        .collect();
    if !singles.is_empty() {
        block.push_str(&format!("\n    {}", singles.join("; ")));
    }
    for (name, values) in &m.multi_captures {
        let shown = match values.as_slice() {
            [] => "(nothing)".to_string(),
            [one] => first_and_last_line(one, CAPTURE_LINE_CHARS),
            many => {
                let joined = many.join("\n");
                format!(
                    "{} ({} items)",
                    first_and_last_line(&joined, CAPTURE_LINE_CHARS),
                    many.len()
                )
            }
        };
        block.push_str(&format!("\n    $$${name} = {shown}"));
    }
    block
}

/// One match in the structured result, trimmed as in the text: the matched code and each
/// capture by their first and last lines, a `$$$` capture's first items (`lines` and
/// `multi_captures_more` say what was left out; the span locates the whole match).
fn match_json(rel: &str, m: &MatchRecord) -> Value {
    let captures: serde_json::Map<String, Value> = m
        .captures
        .iter()
        .map(|(k, v)| {
            let v = first_and_last_line(v, CAPTURE_LINE_CHARS);
            (k.clone(), Value::String(v))
        })
        .collect();
    let mut more = serde_json::Map::new();
    let multi: serde_json::Map<String, Value> = m
        .multi_captures
        .iter()
        .map(|(k, items)| {
            if items.len() > LISTED_MULTI_ITEMS {
                more.insert(k.clone(), json!(items.len() - LISTED_MULTI_ITEMS));
            }
            let listed: Vec<String> = items
                .iter()
                .take(LISTED_MULTI_ITEMS)
                .map(|item| first_and_last_line(item, CAPTURE_LINE_CHARS))
                .collect();
            (k.clone(), json!(listed))
        })
        .collect();
    let mut out = json!({
        "path": rel,
        "location": format!("{rel}:{}:{}", m.line, m.col),
        "line": m.line, "col": m.col, "end_line": m.end_line, "end_col": m.end_col,
        "text": first_and_last_line(&m.text, MATCH_LINE_CHARS),
        "lines": m.text.lines().count(),
        "captures": captures,
        "multi_captures": multi,
    });
    if !more.is_empty() {
        out["multi_captures_more"] = Value::Object(more);
    }
    out
}

/// Notes on how the pattern was read that change what it can match: tokens the parser filled
/// in, and for a search that found nothing, whether nodes of the pattern's kind exist at all.
fn hints(facts: &CallFacts<'_>, result: &Scan<FileHits>, total: usize) -> Vec<String> {
    let pattern = facts.pattern;
    let mut out = Vec::new();
    let kind = pattern.root_kind_name();
    if !pattern.filled_in.is_empty() {
        out.push(format!(
            "note: the pattern is not complete {} code; the parser filled in {}, which a pattern leaves out, \
             so it matches every `{}` that starts this way",
            pattern.lang,
            pattern
                .filled_in
                .iter()
                .map(|k| format!("a missing `{k}`"))
                .collect::<Vec<_>>()
                .join(", "),
            kind.as_deref().unwrap_or("node"),
        ));
    }
    if let Some((line, col)) = pattern.unparsed_at {
        out.push(format!(
            "note: the pattern is not valid {} code from line {line}, column {col}; it is matched as the \
             parser recovered it there (as the ast-grep CLI does), which may match less than you mean",
            pattern.lang
        ));
    }
    if total == 0
        && result.searched > 0
        && let Some(kind) = kind
    {
        let same_kind: usize = result.per_file.iter().map(|(_, f)| f.same_kind_nodes).sum();
        if same_kind == 0 {
            out.push(format!(
                "hint: the pattern is read as a `{kind}` node, and no searched file that contains the pattern's \
                 words has one; check that the pattern is the whole construct as it is written in code"
            ));
        } else {
            out.push(format!(
                "hint: the pattern is read as a `{kind}` node; {same_kind} such node(s) exist in the files searched, \
                 none of this shape. Every part of the code that is not a metavariable must be in the pattern \
                 (a `pub`, attributes, generic parameters, a return type): add it, or use `$$$` where it varies"
            ));
        }
    }
    out
}

/// Type of one file's staged result, as the edit step produced it.
pub struct FileEdit {
    /// SHA-256 of the content the edit was planned from.
    pub hash: String,
    /// That content.
    pub old: String,
    /// The new content.
    pub new: String,
    /// Replacements in the file.
    pub replacements: usize,
}

/// The text and structured result of `ast_edit`; stages the change.
pub fn edit_answer(
    facts: &CallFacts<'_>,
    shared: &AstShared,
    result: Scan<FileEdit>,
    rewrite: &str,
) -> Result<ToolOutput, ToolError> {
    let ws = facts.ws;
    let lang = facts.pattern.lang;
    let skipped = skipped_all(facts.walked, &result);
    let echo = shorten(facts.source, ECHO_CHARS);
    if result.per_file.is_empty() {
        let mut text = format!(
            "no change: `{echo}` ({lang}) matched nothing to rewrite in {} file(s) under {}; nothing was staged",
            result.searched,
            ws.display(facts.scope),
        );
        if let Some(s) = skipped_line(&skipped) {
            text.push_str(&format!("\n{s}"));
        }
        return Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": Value::Null, "replacements": 0, "files": [],
            "searched_files": result.searched, "skipped": skipped_json(ws, &skipped),
        })));
    }
    let mut diffs = Vec::new();
    let mut files_json = Vec::new();
    let mut staged = Vec::new();
    let mut total = 0;
    for (path, edit) in result.per_file {
        let rel = ws.display(&path);
        total += edit.replacements;
        let d = similar::TextDiff::from_lines(&edit.old, &edit.new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{rel}"), &format!("b/{rel}"))
            .to_string();
        diffs.push(d);
        files_json
            .push(json!({"path": rel, "replacements": edit.replacements, "sha256": edit.hash}));
        staged.push(StagedFile {
            path,
            hash: Some(edit.hash),
            new_text: Some(edit.new),
            replacements: edit.replacements,
            mode: None,
        });
    }
    let nfiles = staged.len();
    let id = shared.edits.stage("ast_edit", "edit", staged)?;
    let head = format!(
        "(proposed) {total} replacement(s) in {nfiles} file(s) for `{echo}` → `{}` ({lang}). Nothing was written: \
         call resolve with edit_id \"{id}\" and action \"accept\" to write every file (or none), or \"discard\".\n",
        shorten(rewrite, ECHO_CHARS),
    );
    let mut text = BudgetedText::new(head, facts.budget);
    // The diffs shown: those that fit the text, and no more than `max_diff_lines` lines.
    let mut shown_diff = String::new();
    let mut diff_lines_left = shared.config.max_diff_lines.max(1);
    let mut shown_files = 0;
    for (i, d) in diffs.iter().enumerate() {
        if i > 0 && diff_lines_left == 0 {
            break;
        }
        let block = cut_lines(&format!("\n{d}"), diff_lines_left);
        if i == 0 {
            shown_diff.push_str(&text.push_cut(&block));
        } else if text.push_block(&block) {
            shown_diff.push_str(&block);
        } else {
            break;
        }
        shown_files += 1;
        diff_lines_left = diff_lines_left.saturating_sub(block.lines().count());
    }
    if shown_files < nfiles {
        text.push_always(&format!(
            "\n… the diffs of {} more file(s) are not shown (every replacement is staged all the same); \
             pass a narrower `path` to see them",
            nfiles - shown_files
        ));
    }
    if let Some(s) = skipped_line(&skipped) {
        text.push_always(&format!("\n{s}"));
    }
    let mut structured = json!({
        "edit_id": id,
        "replacements": total,
        "file_count": nfiles,
        "files": [],
        "diff": shown_diff,
        "diff_files_in_text": shown_files,
        "context": facts.pattern.context,
        "searched_files": result.searched,
        "prefiltered_files": result.prefiltered,
        "parsed_files": result.parsed,
        "cached_files": result.cached_trees,
        "skipped": skipped_json(ws, &skipped),
    });
    // Every file is staged; the list names as many as the structured budget holds.
    let mut room = JsonRoom::new(structured_budget(facts.budget), &structured);
    let listed: Vec<Value> = files_json
        .into_iter()
        .take_while(|f| {
            let fits = room.fits(f);
            room.take(f);
            fits
        })
        .collect();
    structured["files_more_not_shown"] = json!(nfiles - listed.len());
    structured["files"] = Value::Array(listed);
    Ok(ToolOutput::text(text.finish()).with_structured(structured))
}

/// `text` cut to its first `max_lines` lines, saying how many more there were.
fn cut_lines(text: &str, max_lines: usize) -> String {
    let lines = text.lines().count();
    if lines <= max_lines {
        return text.to_string();
    }
    let kept: Vec<&str> = text.lines().take(max_lines).collect();
    format!(
        "{}\n… [{} more diff lines]\n",
        kept.join("\n"),
        lines - max_lines
    )
}

fn skipped_all<T>(walked: &Walked, scan: &Scan<T>) -> Vec<(PathBuf, SkipReason)> {
    let mut v: Vec<_> = walked
        .skipped
        .iter()
        .cloned()
        .chain(scan.skipped.iter().cloned())
        .collect();
    v.sort();
    v
}

/// One line: how many files were skipped and why; the paths are in the structured result.
fn skipped_line(skipped: &[(PathBuf, SkipReason)]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut counts: BTreeMap<SkipReason, usize> = BTreeMap::new();
    for (_, r) in skipped {
        *counts.entry(*r).or_default() += 1;
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(r, n)| format!("{n} {}", r.as_str()))
        .collect();
    Some(format!(
        "skipped {} file(s) ({}); their paths are in the structured result",
        skipped.len(),
        summary.join(", ")
    ))
}

fn skipped_json(ws: &Workspace, skipped: &[(PathBuf, SkipReason)]) -> Value {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (_, r) in skipped {
        *counts.entry(r.as_str()).or_default() += 1;
    }
    let listed = cap_list(skipped.iter(), LISTED_SKIPPED);
    json!({
        "total": skipped.len(),
        "by_reason": counts,
        "files": listed.shown.iter().map(|(p, r)| json!({"path": ws.display(p), "reason": r})).collect::<Vec<_>>(),
        "more_not_shown": listed.more(),
    })
}
