//! Compact syntax trees: what a searched file is parsed into, matched against and cached as.
//!
//! A tree-sitter tree costs about 120 bytes per node (28 bytes per byte of Python source);
//! keeping one per searched file made the parse cache the largest cost of a first search
//! (every new page of it is touched for the first time) and left gigabytes resident after
//! it. Each file is therefore parsed by tree-sitter once, copied into flat arrays in one
//! cursor walk (26 bytes per node), and the tree-sitter tree is dropped at once, so its
//! memory is reused by the next parse while it is still hot.
//!
//! The arrays implement ast-grep's [`Doc`] and [`SgNode`], so ast-grep's own pattern
//! matching, metavariable environment and rewrite templates run on them unchanged. Nodes
//! are stored in pre-order, so a node's subtree is one index range: the depth-first walk
//! that every search does is a loop over an array instead of a tree-cursor walk across the
//! FFI boundary.
//!
//! Not for: incremental re-parsing (a changed file is parsed again) and tree edits
//! ([`Doc::do_edit`] refuses).

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use ast_grep_core::source::{Doc, Edit, SgNode};
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::{AstGrep, Position};
use ast_grep_language::SupportLang;

/// No parent (the root).
const NONE: u32 = u32::MAX;
/// `flags` bits.
const NAMED: u16 = 1;
const EXTRA: u16 = 2;
const MISSING: u16 = 4;
/// tree-sitter's kind id of an ERROR node.
const ERROR_KIND: u16 = u16::MAX;

/// One node, apart from its kind (kept in a separate array so the kind filter of a search
/// reads 2 bytes per node).
#[derive(Clone, Copy)]
struct NodeRec {
    /// The field it fills in its parent, 0 for none.
    field: u16,
    flags: u16,
    parent: u32,
    /// One past the last node of its subtree (pre-order): the next sibling, if any.
    subtree_end: u32,
    child_count: u32,
    start: u32,
    end: u32,
}

/// Bytes a compact tree takes per node.
pub const BYTES_PER_NODE: usize = std::mem::size_of::<NodeRec>() + std::mem::size_of::<u16>();

struct TreeData {
    src: String,
    lang: SupportLang,
    ts_lang: tree_sitter::Language,
    kinds: Box<[u16]>,
    nodes: Box<[NodeRec]>,
    /// Byte offset of the start of each line, for positions.
    line_starts: Box<[u32]>,
}

/// The ast-grep document of a compact tree. Cloning is cheap (shared).
#[derive(Clone)]
pub struct CompactDoc {
    data: Arc<TreeData>,
}

/// A parsed file: its text and compact syntax tree.
pub struct CompactTree {
    root: AstGrep<CompactDoc>,
}

impl CompactTree {
    /// Parses `src` with `lang`'s grammar. Fails only when the parser gives no tree or the
    /// file is too large for 32-bit offsets.
    pub fn parse(src: String, lang: SupportLang) -> Result<CompactTree, String> {
        if src.len() >= NONE as usize {
            return Err("the file is too large to parse (4 GiB or more)".into());
        }
        let ts_lang = lang.get_ts_language();
        let tree = with_parser(&ts_lang, |p| p.parse(src.as_bytes(), None))?
            .ok_or_else(|| format!("the {lang} parser produced no tree"))?;
        let (kinds, nodes) = SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let (kinds, nodes) = &mut *scratch;
            kinds.clear();
            nodes.clear();
            flatten(&tree, kinds, nodes)?;
            // Exact-size copies: the growing buffers stay with the thread, warm for the next
            // file, and the cache holds no slack.
            Ok::<_, String>((Box::from(&kinds[..]), Box::from(&nodes[..])))
        })?;
        drop(tree);
        let lines = memchr::memchr_iter(b'\n', src.as_bytes()).count();
        let mut line_starts = Vec::with_capacity(lines + 1);
        line_starts.push(0u32);
        line_starts.extend(memchr::memchr_iter(b'\n', src.as_bytes()).map(|i| i as u32 + 1));
        let line_starts = line_starts.into_boxed_slice();
        Ok(CompactTree {
            root: AstGrep::doc(CompactDoc {
                data: Arc::new(TreeData {
                    src,
                    lang,
                    ts_lang,
                    kinds,
                    nodes,
                    line_starts,
                }),
            }),
        })
    }

    /// The root node, for ast-grep's matching.
    pub fn root(&self) -> ast_grep_core::Node<'_, CompactDoc> {
        self.root.root()
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        &self.root.root().get_doc().data.src
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.root.root().get_doc().data.kinds.len()
    }

    /// Bytes held: text, nodes and line table.
    pub fn memory_cost(&self) -> usize {
        let d = &self.root.root().get_doc().data;
        d.src.len() + d.kinds.len() * BYTES_PER_NODE + d.line_starts.len() * 4
    }
}

thread_local! {
    /// Per-thread buffers the cursor walk fills before the exact-size copy. They keep the
    /// capacity of the largest file parsed on their thread (about 6 bytes per byte of
    /// source, so at most 24 MiB under the default 4 MiB file cap).
    static SCRATCH: RefCell<(Vec<u16>, Vec<NodeRec>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// One parser per thread and grammar: creating one per file costs allocations.
    static PARSERS: RefCell<Vec<(tree_sitter::Language, tree_sitter::Parser)>> =
        const { RefCell::new(Vec::new()) };
}

fn with_parser<T>(
    lang: &tree_sitter::Language,
    f: impl FnOnce(&mut tree_sitter::Parser) -> T,
) -> Result<T, String> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let i = match parsers.iter().position(|(l, _)| l == lang) {
            Some(i) => i,
            None => {
                let mut p = tree_sitter::Parser::new();
                p.set_language(lang).map_err(|e| e.to_string())?;
                parsers.push((lang.clone(), p));
                parsers.len() - 1
            }
        };
        let parser = &mut parsers[i].1;
        // A parse that stopped part-way keeps state a new document must not resume.
        parser.reset();
        Ok(f(parser))
    })
}

/// Copies `tree` into pre-order arrays with one cursor walk.
fn flatten(
    tree: &tree_sitter::Tree,
    kinds: &mut Vec<u16>,
    nodes: &mut Vec<NodeRec>,
) -> Result<(), String> {
    let mut cursor = tree.walk();
    let mut open: Vec<u32> = Vec::new();
    loop {
        let node = cursor.node();
        let index = u32::try_from(nodes.len())
            .ok()
            .filter(|i| *i < NONE)
            .ok_or("the file has too many syntax nodes")?;
        let parent = open.last().copied().unwrap_or(NONE);
        if let Some(p) = nodes.get_mut(parent as usize) {
            p.child_count += 1;
        }
        let flags = if node.is_named() { NAMED } else { 0 }
            | if node.is_extra() { EXTRA } else { 0 }
            | if node.is_missing() { MISSING } else { 0 };
        kinds.push(node.kind_id());
        nodes.push(NodeRec {
            field: cursor.field_id().map_or(0, |f| f.get()),
            flags,
            parent,
            subtree_end: index + 1,
            child_count: 0,
            start: node.start_byte() as u32,
            end: node.end_byte() as u32,
        });
        if cursor.goto_first_child() {
            open.push(index);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(());
            }
            if let Some(p) = open.pop() {
                nodes[p as usize].subtree_end = nodes.len() as u32;
            }
        }
    }
}

impl TreeData {
    fn position(&self, byte: u32) -> Position {
        let line = self.line_starts.partition_point(|s| *s <= byte) - 1;
        let column = byte - self.line_starts[line];
        Position::new(line, column as usize, byte as usize)
    }
}

impl Doc for CompactDoc {
    type Source = String;
    type Lang = SupportLang;
    type Node<'r> = CompactNode<'r>;

    fn get_lang(&self) -> &SupportLang {
        &self.data.lang
    }
    fn get_source(&self) -> &String {
        &self.data.src
    }
    fn do_edit(&mut self, _edit: &Edit<String>) -> Result<(), String> {
        Err("compact trees are read-only: parse the edited text again".into())
    }
    fn root_node(&self) -> CompactNode<'_> {
        CompactNode {
            data: &self.data,
            index: 0,
        }
    }
    fn get_node_text<'a>(&'a self, node: &CompactNode<'a>) -> Cow<'a, str> {
        let rec = node.rec();
        let range = rec.start as usize..rec.end as usize;
        match self.data.src.get(range.clone()) {
            Some(s) => Cow::Borrowed(s),
            None => String::from_utf8_lossy(&self.data.src.as_bytes()[range]),
        }
    }
}

/// A node of a [`CompactTree`].
#[derive(Clone, Copy)]
pub struct CompactNode<'r> {
    data: &'r TreeData,
    index: u32,
}

impl<'r> CompactNode<'r> {
    fn rec(&self) -> &'r NodeRec {
        &self.data.nodes[self.index as usize]
    }
    fn at(&self, index: u32) -> CompactNode<'r> {
        CompactNode {
            data: self.data,
            index,
        }
    }
}

/// The children of a node, first to last.
pub struct Children<'r> {
    data: &'r TreeData,
    next: u32,
    left: u32,
}

impl<'r> Iterator for Children<'r> {
    type Item = CompactNode<'r>;
    fn next(&mut self) -> Option<CompactNode<'r>> {
        if self.left == 0 {
            return None;
        }
        let index = self.next;
        self.next = self.data.nodes[index as usize].subtree_end;
        self.left -= 1;
        Some(CompactNode {
            data: self.data,
            index,
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Children<'_> {}

/// Whether `bytes` hold anything but whitespace.
fn has_content(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| !b.is_ascii_whitespace())
}

impl<'r> SgNode<'r> for CompactNode<'r> {
    fn parent(&self) -> Option<Self> {
        let p = self.rec().parent;
        (p != NONE).then(|| self.at(p))
    }
    fn children(&self) -> impl ExactSizeIterator<Item = Self> {
        Children {
            data: self.data,
            next: self.index + 1,
            left: self.rec().child_count,
        }
    }
    fn kind(&self) -> Cow<'_, str> {
        let kind = self.kind_id();
        Cow::Borrowed(self.data.ts_lang.node_kind_for_id(kind).unwrap_or(""))
    }
    fn kind_id(&self) -> u16 {
        self.data.kinds[self.index as usize]
    }
    fn node_id(&self) -> usize {
        self.index as usize
    }
    fn range(&self) -> std::ops::Range<usize> {
        let r = self.rec();
        r.start as usize..r.end as usize
    }
    fn start_pos(&self) -> Position {
        self.data.position(self.rec().start)
    }
    fn end_pos(&self) -> Position {
        self.data.position(self.rec().end)
    }
    fn dfs(&self) -> impl Iterator<Item = Self> {
        let data = self.data;
        (self.index..self.rec().subtree_end).map(move |index| CompactNode { data, index })
    }
    fn child(&self, nth: usize) -> Option<Self> {
        self.children().nth(nth)
    }
    fn next(&self) -> Option<Self> {
        let parent = self.parent()?;
        let next = self.rec().subtree_end;
        (next < parent.rec().subtree_end).then(|| self.at(next))
    }
    fn is_named(&self) -> bool {
        self.rec().flags & NAMED != 0
    }
    /// No named child, or text that no child covers (the number of CSS `1px`, whose only
    /// child is the unit; the characters of a Go string around an escape sequence).
    /// ast-grep compares such a node by its text when it checks that a repeated
    /// metavariable matched the same code, and by its children otherwise: with only the
    /// first half, `margin: $X $X` matched `margin: 1px 2px`.
    fn is_named_leaf(&self) -> bool {
        let src = self.data.src.as_bytes();
        let rec = self.rec();
        let mut covered = rec.start as usize;
        let mut named_child = false;
        let mut uncovered = false;
        for c in self.children() {
            let r = c.rec();
            named_child |= c.is_named();
            uncovered |= has_content(&src[covered..(r.start as usize).max(covered)]);
            covered = covered.max(r.end as usize);
        }
        uncovered |= has_content(&src[covered..(rec.end as usize).max(covered)]);
        !named_child || uncovered
    }
    fn is_leaf(&self) -> bool {
        self.rec().child_count == 0
    }
    fn is_missing(&self) -> bool {
        self.rec().flags & MISSING != 0
    }
    fn is_error(&self) -> bool {
        self.kind_id() == ERROR_KIND
    }
    fn is_extra(&self) -> bool {
        self.rec().flags & EXTRA != 0
    }
    fn field(&self, name: &str) -> Option<Self> {
        let id = self.data.ts_lang.field_id_for_name(name)?;
        self.child_by_field_id(id.get())
    }
    fn field_children(&self, field_id: Option<u16>) -> impl Iterator<Item = Self> {
        let id = field_id.filter(|id| *id != 0);
        self.children()
            .filter(move |c| id.is_some_and(|id| c.rec().field == id))
    }
    fn child_by_field_id(&self, field_id: u16) -> Option<Self> {
        if field_id == 0 {
            return None;
        }
        self.children().find(|c| c.rec().field == field_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ast_grep_core::Pattern;
    use ast_grep_core::tree_sitter::StrDoc;

    fn both(src: &str, lang: SupportLang) -> (CompactTree, AstGrep<StrDoc<SupportLang>>) {
        (
            CompactTree::parse(src.to_string(), lang).unwrap(),
            AstGrep::new(src, lang),
        )
    }

    #[test]
    fn siblings_and_fields() {
        let src = "def f(a, b):\n    return a\n";
        let (compact, ts) = both(src, SupportLang::Python);
        let ours = compact
            .root()
            .dfs()
            .find(|n| n.kind() == "function_definition")
            .unwrap();
        let theirs = ts
            .root()
            .dfs()
            .find(|n| n.kind() == "function_definition")
            .unwrap();
        for field in ["name", "parameters", "body", "nothing"] {
            assert_eq!(
                ours.field(field).map(|n| n.text().into_owned()),
                theirs.field(field).map(|n| n.text().into_owned()),
                "{field}"
            );
        }
        assert_eq!(siblings(&ours), siblings(&theirs));
    }

    /// Each child's next and previous sibling.
    fn siblings<D: Doc>(
        n: &ast_grep_core::Node<'_, D>,
    ) -> Vec<[Option<std::ops::Range<usize>>; 2]> {
        n.children()
            .map(|c| [c.next().map(|n| n.range()), c.prev().map(|n| n.range())])
            .collect()
    }

    #[test]
    fn patterns_match_the_same() {
        let src = "if a is None:\n    pass\nif b is not None:\n    x = 1\nif c is None: y()\n";
        let (compact, ts) = both(src, SupportLang::Python);
        let p = Pattern::new("if $X is None: $$$B", SupportLang::Python);
        let ours: Vec<_> = compact.root().find_all(&p).map(|m| m.range()).collect();
        let theirs: Vec<_> = ts.root().find_all(&p).map(|m| m.range()).collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours.len(), 2);
    }

    #[test]
    fn a_node_with_text_no_child_covers_compares_by_text() {
        let leafy = |src: &str, lang: SupportLang, kind: &str| -> Vec<bool> {
            let t = CompactTree::parse(src.to_string(), lang).unwrap();
            let root = t.root();
            root.dfs()
                .filter(|n| n.kind() == kind)
                .map(|n| n.is_named_leaf())
                .collect()
        };
        // `1px`: the unit is the only child; the number is the node's own text.
        assert_eq!(
            leafy("a { margin: 1px 2; }", SupportLang::Css, "integer_value"),
            [true, true]
        );
        // A call's children cover all its text but whitespace: compared by children.
        assert_eq!(leafy("f(a,  b)\n", SupportLang::Python, "call"), [false]);
        let p = Pattern::new("f($X, $X)", SupportLang::Go);
        let matches = |src: &str| {
            let t = CompactTree::parse(src.to_string(), SupportLang::Go).unwrap();
            t.root().find_all(&p).count()
        };
        assert_eq!(matches("package m\nvar _ = f(\"a\\n\", \"a\\n\")\n"), 1);
        assert_eq!(matches("package m\nvar _ = f(\"a\\n\", \"b\\n\")\n"), 0);
        assert_eq!(matches("package m\nvar _ = f(g(a,  b), g(a, b))\n"), 1);
    }

    #[test]
    fn edits_are_refused() {
        let (compact, _) = both("x = 1\n", SupportLang::Python);
        let mut doc = compact.root().get_doc().clone();
        let edit = Edit {
            position: 0,
            deleted_length: 1,
            inserted_text: b"y".to_vec(),
        };
        assert!(doc.do_edit(&edit).is_err());
    }
}
