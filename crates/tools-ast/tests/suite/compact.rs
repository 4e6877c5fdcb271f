//! The compact trees searches run on must be tree-sitter's trees node for node: checked on real
//! code this machine has (the Python standard library, the Rust crates cargo fetched for this
//! build, C headers, Go's standard library, JavaScript packages), not only on snippets.

use std::path::{Path, PathBuf};

use ast_grep_core::source::SgNode;
use ast_grep_core::{AstGrep, Doc, Node};
use ast_grep_language::SupportLang;
use tools_ast::{CompactTree, Lang};

/// Everything ast-grep reads of a node (but `is_named_leaf`, which compact trees widen on
/// purpose: see `CompactNode`). The parent only `with_parent`: tree-sitter's walk up is slow
/// on large files, and equal children everywhere make parents equal anyway.
fn describe<D: Doc>(n: &Node<'_, D>, with_parent: bool) -> String {
    let (s, e) = (n.start_pos(), n.end_pos());
    let inner = n.get_inner_node();
    let parent = with_parent.then(|| n.parent().map(|p| p.range()));
    format!(
        "{} {} {:?} {:?} {:?} {}{}{}{}{} {:?} {parent:?} {:?}",
        n.kind(),
        n.kind_id(),
        n.range(),
        (s.line(), s.column(n)),
        (e.line(), e.column(n)),
        u8::from(n.is_named()),
        u8::from(n.is_leaf()),
        u8::from(inner.is_missing()),
        u8::from(n.is_error()),
        u8::from(inner.is_extra()),
        n.children().map(|c| c.range().start).collect::<Vec<_>>(),
        n.text(),
    )
}

/// Asserts that `src` gives the same nodes in both trees.
fn assert_same_trees(src: &str, grammar: SupportLang, with_parent: bool, what: &str) -> usize {
    let compact = CompactTree::parse(src.to_string(), grammar).unwrap();
    let ts = AstGrep::new(src, grammar);
    let (ours, theirs) = (compact.root(), ts.root());
    for (a, b) in ours.dfs().zip(theirs.dfs()) {
        let (da, db) = (describe(&a, with_parent), describe(&b, with_parent));
        assert_eq!(da, db, "{what}: first differing node");
    }
    assert_eq!(ours.dfs().count(), theirs.dfs().count(), "{what}");
    assert_eq!(compact.text(), src);
    compact.node_count()
}

#[test]
fn compact_trees_equal_tree_sitter_trees_on_edge_cases() {
    let cases = [
        (
            "def f(a, b):\n    # note\n    if a is None:\n        return b  # µ\n    x = [1, 2,]\n",
            SupportLang::Python,
        ),
        ("fn main() { let x = (1 + ; }", SupportLang::Rust),
        (
            "class A { void f() { if (x != null) { x.dispose(); } } }",
            SupportLang::Dart,
        ),
        ("const a = `x${b}y`; /* c */ f(a,)", SupportLang::JavaScript),
        ("", SupportLang::Go),
    ];
    for (src, grammar) in cases {
        assert_same_trees(src, grammar, true, &format!("{grammar}: {src}"));
    }
}

/// Up to `limit` files under `dir` with extension `ext`, in path order.
fn files(dir: &Path, ext: &str, limit: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries.into_iter().rev() {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == ext) {
                out.push(p);
            }
        }
        if out.len() >= limit {
            break;
        }
    }
    out.truncate(limit);
    out
}

fn python_stdlib() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

#[test]
fn compact_trees_equal_tree_sitter_trees_on_real_code() {
    let cargo_sources = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .map(|c| c.join("registry/src"));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpora: Vec<(&str, Option<PathBuf>, &str)> = vec![
        ("python", python_stdlib(), "py"),
        ("rust", cargo_sources, "rs"),
        ("c", Some(PathBuf::from("/usr/include")), "h"),
        ("go", Some(PathBuf::from("/usr/lib/go/src")), "go"),
        ("javascript", Some(repo.join(".tools")), "js"),
    ];
    let mut checked = Vec::new();
    for (id, dir, ext) in corpora {
        let Some(dir) = dir.filter(|d| d.is_dir()) else {
            continue;
        };
        let grammar: SupportLang = Lang::from_id(id).unwrap().grammar();
        let mut nodes = 0;
        let found = files(&dir, ext, 25);
        for path in &found {
            let Ok(src) = std::fs::read_to_string(path) else {
                continue;
            };
            if src.len() > 256 << 10 {
                continue;
            }
            nodes += assert_same_trees(&src, grammar, false, &path.display().to_string());
        }
        checked.push(format!("{id}: {} files, {nodes} nodes", found.len()));
    }
    // Python and Rust sources are there wherever these tests build and run.
    assert!(checked.len() >= 2, "too few corpora found: {checked:?}");
    eprintln!("compared: {}", checked.join("; "));
}
