//! Cross-check against the ast-grep CLI on real code: the `.py` files of the machine Python's
//! standard library, copied into a temp dir. Our match set must equal the CLI's, and an
//! accepted rewrite must leave the same files as the CLI's `-U`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::workspace;

fn stdlib_dir() -> Option<PathBuf> {
    let python = tools_core::testing::require_binary("python3", "python3")?;
    let out = Command::new(python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.is_dir().then_some(p)
}

/// Copies the standard library's `.py` files (not site-packages) under `dest`; `limit` keeps
/// only the first files in path order.
fn copy_corpus(dest: &Path, limit: Option<usize>) -> usize {
    let Some(src) = stdlib_dir() else {
        return 0;
    };
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if name != "site-packages" && name != "__pycache__" && !name.starts_with('.') {
                    stack.push(p);
                }
            } else if ft.is_file() && name.ends_with(".py") && !name.starts_with('.') {
                files.push(p);
            }
        }
    }
    files.sort();
    if let Some(n) = limit {
        files.truncate(n);
    }
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(f, &to).unwrap();
    }
    files.len()
}

/// One match: file relative to the searched folder, byte range, matched text.
pub type MatchKey = (String, usize, usize, String);

/// The ast-grep CLI's matches of `pattern` in `language` under `dir`.
pub fn cli_matches(cli: &Path, dir: &Path, pattern: &str, language: &str) -> BTreeSet<MatchKey> {
    let out = Command::new(cli)
        .args(["run", "-p", pattern, "-l", language, "--json=compact", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success() || out.stdout.starts_with(b"["),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let file = m["file"]
                .as_str()
                .unwrap()
                .trim_start_matches("./")
                .to_string();
            (
                file,
                m["range"]["byteOffset"]["start"].as_u64().unwrap() as usize,
                m["range"]["byteOffset"]["end"].as_u64().unwrap() as usize,
                m["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Our matches of `pattern` in `language` under `dir`, with the tools' walk and cache.
pub fn our_matches(
    dir: &Path,
    pattern: &str,
    language: &str,
    cache: &tools_ast::ParseCache,
) -> BTreeSet<MatchKey> {
    let cfg = tools_ast::AstConfig::default();
    let lang = tools_ast::Lang::from_id(language).unwrap();
    let found = tools_ast::search_files(dir, lang, pattern, &cfg, cache).unwrap();
    let mut set = BTreeSet::new();
    for (path, ms) in found {
        let rel = path
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for m in ms {
            set.insert((
                rel.clone(),
                m.bytes.start,
                m.bytes.end,
                text[m.bytes.clone()].to_string(),
            ));
        }
    }
    set
}

#[test]
fn match_sets_equal_the_cli_on_the_standard_library() {
    let Some(cli) = tools_core::testing::require_binary("ast-grep-cli", "ast-grep") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let n = copy_corpus(dir.path(), None);
    assert!(n > 500, "only {n} standard-library files found");
    // One cache for all patterns, as within one run: later patterns reuse the trees.
    let cache = tools_ast::ParseCache::new(tools_ast::AstConfig::default().cache_max_bytes);
    for pattern in [
        "self.$X = $X",
        "$X = $X",
        "$X.append($Y)",
        "if $X is None: $$$B",
        "def $F(self, $$$ARGS): $$$BODY",
        "raise $E from $_",
        "$A == $A",
    ] {
        let theirs = cli_matches(&cli, dir.path(), pattern, "python");
        let ours = our_matches(dir.path(), pattern, "python", &cache);
        let only_cli: Vec<_> = theirs.difference(&ours).take(5).collect();
        let only_ours: Vec<_> = ours.difference(&theirs).take(5).collect();
        assert!(
            only_cli.is_empty() && only_ours.is_empty(),
            "`{pattern}`: {} CLI vs {} ours; only CLI: {only_cli:?}; only ours: {only_ours:?}",
            theirs.len(),
            ours.len()
        );
        assert!(!ours.is_empty(), "`{pattern}` found nothing");
    }
}

#[tokio::test]
async fn accepted_rewrite_equals_the_cli_update_all() {
    let Some(cli) = tools_core::testing::require_binary("ast-grep-cli", "ast-grep") else {
        return;
    };
    let ws = workspace(&[]);
    let n = copy_corpus(ws.root(), Some(400));
    assert!(n > 100);
    let theirs = tempfile::tempdir().unwrap();
    copy_corpus(theirs.path(), Some(400));
    for (pattern, rewrite) in [
        ("$X.append($Y)", "$X.insert(len($X), $Y)"),
        ("if $C:\n    $$$B", "if ($C):\n    $$$B"),
    ] {
        let out = ws
            .ok(
                "ast_edit",
                json!({"pattern": pattern, "rewrite": rewrite, "language": "python"}),
            )
            .await;
        let id = out.structured.unwrap()["edit_id"]
            .as_str()
            .unwrap()
            .to_string();
        ws.ok("resolve", json!({"edit_id": id, "action": "accept"}))
            .await;
        let st = Command::new(&cli)
            .args([
                "run", "-p", pattern, "-r", rewrite, "-l", "python", "-U", ".",
            ])
            .current_dir(theirs.path())
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
    let mut differ = Vec::new();
    for e in walk(ws.root()) {
        let rel = e.strip_prefix(ws.root()).unwrap();
        let a = std::fs::read(&e).unwrap();
        let b = std::fs::read(theirs.path().join(rel)).unwrap();
        if a != b {
            differ.push(rel.display().to_string());
        }
    }
    assert!(
        differ.is_empty(),
        "files differ from the CLI's -U: {differ:?}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
