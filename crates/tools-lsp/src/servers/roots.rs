//! Workspace roots: which folder one server serves.
//!
//! The nearest root marker names a *project*; many projects belong to a larger
//! *workspace* that one server should load as a whole — otherwise a Cargo workspace gets
//! one rust-analyzer per member crate (each loading the whole workspace anyway), edits in
//! one member are invisible to the others, and workspace symbols come back once per server.
//!
//! Every rule here reads files only (TOML, JSON, YAML by line): nothing from the repository
//! is executed (no `cargo metadata`, no build scripts), so an untrusted checkout cannot run
//! code by being looked at.
//!
//! - rust: the Cargo workspace a crate belongs to, found as cargo does — walking up from
//!   the crate to the first `Cargo.toml` with a `[workspace]` table whose `members` match
//!   the crate and whose `exclude` does not (or the one `package.workspace` names).
//! - go: the nearest `go.work` above the module.
//! - typescript: the outermost folder with `pnpm-workspace.yaml`, a `package.json` with
//!   `workspaces`, or a `tsconfig.json` with `references`.
//! - python and c: the outermost folder holding one of the server's markers (nested
//!   projects share one server; clangd finds each file's `compile_commands.json` itself,
//!   pyright each file's nearest configuration).
//! - every other language: the nearest marker, unchanged.

use std::path::{Path, PathBuf};

use crate::servers::discover::find_root;

/// Largest manifest read while looking for a workspace (bigger ones are skipped).
const MANIFEST_CAP: u64 = 1 << 20;

pub(crate) fn read_small(p: &Path) -> Option<String> {
    let meta = std::fs::metadata(p).ok()?;
    if !meta.is_file() || meta.len() > MANIFEST_CAP {
        return None;
    }
    std::fs::read_to_string(p).ok()
}

/// The folders from `start` up to `workspace` (both included), nearest first; empty when
/// `start` is outside the workspace.
fn ancestors_within<'a>(start: &'a Path, workspace: &'a Path) -> Vec<&'a Path> {
    if !start.starts_with(workspace) {
        return Vec::new();
    }
    start
        .ancestors()
        .take_while(|d| d.starts_with(workspace))
        .collect()
}

/// The root one server of `language` should serve for a file whose nearest project root
/// is `nearest` (see the module doc). Always `nearest` or one of its ancestors inside
/// `workspace`.
pub fn workspace_root(
    language: &str,
    markers: &[String],
    nearest: &Path,
    workspace: &Path,
) -> PathBuf {
    let found = match language {
        "rust" => cargo_workspace(nearest, workspace),
        "go" => ancestors_within(nearest, workspace)
            .into_iter()
            .find(|d| d.join("go.work").is_file())
            .map(Path::to_path_buf),
        "typescript" => ancestors_within(nearest, workspace)
            .into_iter()
            .rev()
            .find(|d| is_js_workspace(d))
            .map(Path::to_path_buf),
        "python" | "c" => outermost_marker(markers, nearest, workspace),
        _ => None,
    };
    found.unwrap_or_else(|| nearest.to_path_buf())
}

fn outermost_marker(markers: &[String], nearest: &Path, workspace: &Path) -> Option<PathBuf> {
    ancestors_within(nearest, workspace)
        .into_iter()
        .rev()
        .find(|d| markers.iter().any(|m| d.join(m).exists()))
        .map(Path::to_path_buf)
}

/// Whether `dir` declares a JavaScript/TypeScript workspace.
fn is_js_workspace(dir: &Path) -> bool {
    if dir.join("pnpm-workspace.yaml").is_file() {
        return true;
    }
    let has_key = |file: &str, key: &str| {
        read_small(&dir.join(file))
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&strip_json_comments(&t)).ok())
            .is_some_and(|v| v.get(key).is_some_and(|k| !k.is_null()))
    };
    has_key("package.json", "workspaces") || has_key("tsconfig.json", "references")
}

/// `tsconfig.json` allows comments and trailing commas; drop the comments (outside
/// strings) and the trailing commas so a strict JSON parser accepts it.
pub(crate) fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: a comma followed (after blanks) by `}` or `]`.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    let mut in_str = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_str {
            cleaned.push(c);
            if c == '\\' && i + 1 < bytes.len() {
                cleaned.push(bytes[i + 1]);
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            cleaned.push(c);
        } else if c == ',' {
            let next = bytes[i + 1..].iter().find(|n| !n.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                cleaned.push(c);
            }
        } else {
            cleaned.push(c);
        }
        i += 1;
    }
    cleaned
}

/// The Cargo workspace root of the crate at `krate` (a folder with a `Cargo.toml`), found
/// the way cargo finds it; `None` when the crate is its own root.
fn cargo_workspace(krate: &Path, workspace: &Path) -> Option<PathBuf> {
    let manifest = read_small(&krate.join("Cargo.toml"))?;
    let own: toml::Table = manifest.parse().ok()?;
    if own.contains_key("workspace") {
        return Some(krate.to_path_buf());
    }
    // `package.workspace = "../.."` names the root explicitly.
    if let Some(explicit) = own
        .get("package")
        .and_then(|p| p.get("workspace"))
        .and_then(toml::Value::as_str)
    {
        let root = tools_core::normalize_lexically(&krate.join(explicit));
        return root.starts_with(workspace).then_some(root);
    }
    for dir in ancestors_within(krate, workspace).into_iter().skip(1) {
        let Some(text) = read_small(&dir.join("Cargo.toml")) else {
            continue;
        };
        let Ok(table) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(ws) = table.get("workspace").and_then(toml::Value::as_table) else {
            continue;
        };
        let Ok(rel) = krate.strip_prefix(dir) else {
            continue;
        };
        let patterns = |key: &str| -> Vec<String> {
            ws.get(key)
                .and_then(toml::Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(toml::Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        if patterns("exclude")
            .iter()
            .any(|e| rel.starts_with(Path::new(e.trim_end_matches('/'))))
        {
            return None;
        }
        if patterns("members").iter().any(|m| member_matches(m, rel)) {
            return Some(dir.to_path_buf());
        }
        // Cargo stops at the first workspace above a crate: a crate it does not list is
        // an error to cargo, so the crate's own folder is the honest root.
        return None;
    }
    None
}

/// Whether the member pattern `pattern` (a path, possibly with globs) names `rel`.
fn member_matches(pattern: &str, rel: &Path) -> bool {
    let pattern = pattern.trim_end_matches('/');
    if Path::new(pattern) == rel {
        return true;
    }
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(rel))
        .unwrap_or(false)
}

/// The root a server of `language` serves for `file`: the nearest marker folder, widened
/// to its workspace. `None` when no marker is found.
pub fn server_root(
    language: &str,
    markers: &[String],
    file: &Path,
    workspace: &Path,
) -> Option<PathBuf> {
    let nearest = find_root(file, markers, workspace)?;
    Some(workspace_root(language, markers, &nearest, workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        for (p, t) in files {
            let path = ws.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        }
        (dir, ws)
    }

    fn m(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cargo_members_share_the_workspace_root_and_excluded_crates_do_not() {
        let (_d, ws) = tree(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"crates/*\", \"tool\"]\nexclude = [\"crates/old\"]\n",
            ),
            ("crates/a/Cargo.toml", "[package]\nname = \"a\"\n"),
            ("crates/a/src/lib.rs", ""),
            ("crates/old/Cargo.toml", "[package]\nname = \"old\"\n"),
            ("crates/old/src/lib.rs", ""),
            ("tool/Cargo.toml", "[package]\nname = \"tool\"\n"),
            ("tool/src/main.rs", ""),
            ("stray/Cargo.toml", "[package]\nname = \"stray\"\n"),
            ("stray/src/lib.rs", ""),
            (
                "far/x/Cargo.toml",
                "[package]\nname = \"x\"\nworkspace = \"../..\"\n",
            ),
            ("far/x/src/lib.rs", ""),
        ]);
        let markers = m(&["Cargo.toml"]);
        let root = |f: &str| server_root("rust", &markers, &ws.join(f), &ws).unwrap();
        assert_eq!(root("crates/a/src/lib.rs"), ws);
        assert_eq!(root("tool/src/main.rs"), ws);
        assert_eq!(root("crates/old/src/lib.rs"), ws.join("crates/old"));
        assert_eq!(root("stray/src/lib.rs"), ws.join("stray"));
        assert_eq!(root("far/x/src/lib.rs"), ws);
    }

    #[test]
    fn go_work_js_workspaces_and_nested_python_projects() {
        let (_d, ws) = tree(&[
            ("go.work", "go 1.19\nuse ./svc\n"),
            ("svc/go.mod", "module svc\n"),
            ("svc/main.go", ""),
            ("web/package.json", "{\"workspaces\": [\"packages/*\"]}"),
            ("web/packages/ui/package.json", "{\"name\": \"ui\"}"),
            ("web/packages/ui/index.ts", ""),
            (
                "app/tsconfig.json",
                "{ // project references\n \"references\": [{\"path\": \"./lib\"},],\n}",
            ),
            ("app/lib/tsconfig.json", "{}"),
            ("app/lib/x.ts", ""),
            ("solo/package.json", "{\"name\": \"solo\"}"),
            ("solo/a.ts", ""),
            ("py/pyproject.toml", ""),
            ("py/sub/setup.py", ""),
            ("py/sub/m.py", ""),
        ]);
        let go = m(&["go.mod", "go.work"]);
        assert_eq!(
            server_root("go", &go, &ws.join("svc/main.go"), &ws),
            Some(ws.clone())
        );
        let ts = m(&["tsconfig.json", "package.json"]);
        assert_eq!(
            server_root("typescript", &ts, &ws.join("web/packages/ui/index.ts"), &ws),
            Some(ws.join("web"))
        );
        assert_eq!(
            server_root("typescript", &ts, &ws.join("app/lib/x.ts"), &ws),
            Some(ws.join("app"))
        );
        assert_eq!(
            server_root("typescript", &ts, &ws.join("solo/a.ts"), &ws),
            Some(ws.join("solo"))
        );
        let py = m(&["pyproject.toml", "setup.py"]);
        assert_eq!(
            server_root("python", &py, &ws.join("py/sub/m.py"), &ws),
            Some(ws.join("py"))
        );
        // Other languages keep the nearest marker.
        assert_eq!(
            server_root("zig", &m(&["setup.py"]), &ws.join("py/sub/m.py"), &ws),
            Some(ws.join("py/sub"))
        );
    }

    #[test]
    fn json_with_comments_and_trailing_commas_parses() {
        let t = strip_json_comments("{\"a\": \"// not a comment\", /* c */ \"b\": [1,],}");
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["a"], "// not a comment");
        assert_eq!(v["b"], serde_json::json!([1]));
    }
}
