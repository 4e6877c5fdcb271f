//! The search engine: read each walked file (or take it from the parse cache), skip it with a
//! byte-level search for the pattern's literal tokens before parsing, parse the rest in
//! parallel on every core, and hand each tree to a per-file step (collect matches, or build
//! replacements). Results come back in path order; within a file in source order.

use std::path::PathBuf;
use std::sync::Arc;

use ast_grep_core::{Node, NodeMatch};
use rayon::prelude::*;
use tools_core::ToolError;

use crate::cache::{Cached, MAX_LACKED_LITERALS, ParseCache};
use crate::compact_tree::{CompactDoc, CompactTree};
use crate::pattern::CompiledPattern;
use crate::walk::{FileMeta, SkipReason, Walked};

/// How many leading bytes are looked at for a NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8192;

/// What a scan did, and each file's result (only files the step returned something for).
#[derive(Debug)]
pub struct Scan<T> {
    /// `(path, result)` in path order.
    pub per_file: Vec<(PathBuf, T)>,
    /// Files found unreadable, binary or not UTF-8 when read.
    pub skipped: Vec<(PathBuf, SkipReason)>,
    /// Files searched (read or cached).
    pub searched: usize,
    /// Files ruled out by the literal prefilter, never parsed.
    pub prefiltered: usize,
    /// Files parsed in this scan.
    pub parsed: usize,
    /// Files whose tree came from the cache.
    pub cached_trees: usize,
}

enum Outcome<T> {
    Skipped(SkipReason),
    Prefiltered,
    Done { parsed: bool, value: Option<T> },
}

/// Runs `step` on the tree of every walked file that may match. `cancelled` is polled per
/// file.
pub fn scan<T: Send>(
    walked: &Walked,
    pattern: &CompiledPattern,
    cache: &ParseCache,
    cancelled: &(dyn Fn() -> bool + Sync),
    step: &(dyn Fn(&CompactTree) -> Option<T> + Sync),
) -> Result<Scan<T>, ToolError> {
    let lang = pattern.lang;
    let grammar = lang.grammar();
    cache.begin_scan();
    let files = &walked.files;
    let outcomes: Vec<Outcome<T>> = files
        .par_iter()
        .map(|f| {
            if cancelled() {
                return Outcome::Prefiltered;
            }
            // A file the walk did not stat is opened now, and its size and mtime are taken
            // from the open file: one path lookup instead of two.
            let (meta, mut open) = match f.meta {
                Some(meta) => (meta, None),
                None => match open_with_meta(&f.path) {
                    Ok((file, meta)) => (meta, Some(file)),
                    Err(reason) => return Outcome::Skipped(reason),
                },
            };
            if meta.size > walked.max_file_bytes {
                return Outcome::Skipped(SkipReason::TooLarge);
            }
            let (size, mtime) = (meta.size, meta.mtime);
            let lacks = match cache.get(&f.path, size, mtime, lang) {
                Some(Cached::Tree(tree)) => {
                    if !pattern.may_match(tree.text().as_bytes()) {
                        return Outcome::Prefiltered;
                    }
                    return Outcome::Done {
                        parsed: false,
                        value: step(&tree),
                    };
                }
                Some(Cached::Lacks(lacks)) => {
                    if pattern.literals.iter().any(|l| lacks.contains(l)) {
                        return Outcome::Prefiltered;
                    }
                    Some(lacks)
                }
                None => None,
            };
            let file = match open.take() {
                Some(file) => file,
                None => match std::fs::File::open(&f.path) {
                    Ok(file) => file,
                    Err(_) => return Outcome::Skipped(SkipReason::Unreadable),
                },
            };
            let text = match read_text(file, size) {
                Ok(t) => t,
                Err(reason) => return Outcome::Skipped(reason),
            };
            if let Some(missing) = pattern.missing_literal(text.as_bytes()) {
                let mut known = lacks.map(|l| l.as_ref().clone()).unwrap_or_default();
                if known.len() >= MAX_LACKED_LITERALS {
                    known.remove(0);
                }
                known.push(missing.to_vec());
                let entry = Cached::Lacks(Arc::new(known));
                cache.put(&f.path, size, mtime, lang, entry);
                return Outcome::Prefiltered;
            }
            let Ok(tree) = CompactTree::parse(text, grammar) else {
                return Outcome::Skipped(SkipReason::Unreadable);
            };
            let tree = Arc::new(tree);
            let value = step(&tree);
            cache.put(&f.path, size, mtime, lang, Cached::Tree(tree));
            Outcome::Done {
                parsed: true,
                value,
            }
        })
        .collect();
    if cancelled() {
        return Err(ToolError::timed_out(
            "the search was cancelled before it finished; nothing was changed",
        ));
    }
    let mut scan = Scan {
        per_file: Vec::new(),
        skipped: Vec::new(),
        searched: 0,
        prefiltered: 0,
        parsed: 0,
        cached_trees: 0,
    };
    for (f, o) in files.iter().zip(outcomes) {
        match o {
            Outcome::Skipped(r) => scan.skipped.push((f.path.clone(), r)),
            Outcome::Prefiltered => {
                scan.searched += 1;
                scan.prefiltered += 1;
            }
            Outcome::Done { parsed, value } => {
                scan.searched += 1;
                if parsed {
                    scan.parsed += 1;
                } else {
                    scan.cached_trees += 1;
                }
                if let Some(v) = value {
                    scan.per_file.push((f.path.clone(), v));
                }
            }
        }
    }
    Ok(scan)
}

fn open_with_meta(path: &std::path::Path) -> Result<(std::fs::File, FileMeta), SkipReason> {
    let file = std::fs::File::open(path).map_err(|_| SkipReason::Unreadable)?;
    let meta = file.metadata().map_err(|_| SkipReason::Unreadable)?;
    Ok((file, FileMeta::of(&meta)))
}

fn read_text(mut file: std::fs::File, size: u64) -> Result<String, SkipReason> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.read_to_end(&mut bytes)
        .map_err(|_| SkipReason::Unreadable)?;
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if memchr::memchr(0, sniff).is_some() {
        return Err(SkipReason::Binary);
    }
    String::from_utf8(bytes).map_err(|_| SkipReason::NotUtf8)
}

/// One match, with everything the result shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MatchRecord {
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column (characters) of the start.
    pub col: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column of the end.
    pub end_col: usize,
    /// Byte range in the file.
    #[serde(skip)]
    pub bytes: std::ops::Range<usize>,
    /// The matched code, cut to [`MAX_MATCH_CHARS`].
    pub text: String,
    /// `$NAME` captures, in pattern order.
    pub captures: Vec<(String, String)>,
    /// `$$$NAME` captures: the source span from the first to the last node.
    pub multi_captures: Vec<(String, Vec<String>)>,
}

/// Longest matched text kept per match.
pub const MAX_MATCH_CHARS: usize = 2000;
/// Longest capture text kept.
pub const MAX_CAPTURE_CHARS: usize = 400;

type SgNode<'r> = Node<'r, CompactDoc>;

/// The start and end of a node as 1-based `(line, col, end_line, end_col)`.
pub fn node_span(n: &SgNode<'_>) -> (usize, usize, usize, usize) {
    let s = n.start_pos();
    let e = n.end_pos();
    (s.line() + 1, s.column(n) + 1, e.line() + 1, e.column(n) + 1)
}

/// Records one match.
pub fn record(pattern: &CompiledPattern, m: &NodeMatch<'_, CompactDoc>) -> MatchRecord {
    let (line, col, end_line, end_col) = node_span(m.get_node());
    let env = m.get_env();
    let captures = pattern
        .singles
        .iter()
        .filter_map(|name| {
            env.get_match(name).map(|n| {
                (
                    name.clone(),
                    crate::answer::shorten(&n.text(), MAX_CAPTURE_CHARS),
                )
            })
        })
        .collect();
    let multi_captures = pattern
        .multis
        .iter()
        .map(|name| {
            let nodes = env.get_multiple_matches(name);
            let texts = nodes
                .iter()
                .filter(|n| n.is_named())
                .map(|n| crate::answer::shorten(&n.text(), MAX_CAPTURE_CHARS))
                .collect();
            (name.clone(), texts)
        })
        .collect();
    MatchRecord {
        line,
        col,
        end_line,
        end_col,
        bytes: m.range(),
        text: crate::answer::shorten(&m.text(), MAX_MATCH_CHARS),
        captures,
        multi_captures,
    }
}

/// Every match of `pattern` in `tree`, in source order.
pub fn find_matches(pattern: &CompiledPattern, tree: &CompactTree) -> Vec<MatchRecord> {
    tree.root()
        .find_all(&pattern.pattern)
        .map(|m| record(pattern, &m))
        .collect()
}
