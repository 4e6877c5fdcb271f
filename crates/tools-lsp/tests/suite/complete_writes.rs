//! A write's result names every error the project's own checker reports because of it,
//! also in files nobody opened and that reach the changed item only through another
//! module: the users and implementors of what the write changed are asked of the server
//! before the write and opened, so a server that diagnoses only open documents
//! (rust-analyzer's own checks in an untrusted run, tsserver) reports them too. Each test
//! compares the write's result with the checker run on the written tree, file and line.

use std::collections::BTreeSet;

use tools_core::testing::require_binary;

use super::{Project, section};

/// Every `path:line` a text names at the start of a line, for files ending in one of `exts`.
fn sites(text: &str, exts: &[&str]) -> BTreeSet<(String, u32)> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.trim_start().splitn(3, ':');
            let file = parts.next()?;
            // `path:line:col …`, or `path:line …` for a diagnostic that is gone.
            let rest = parts.next()?;
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let line = rest[..digits].parse().ok()?;
            exts.iter()
                .any(|e| file.ends_with(e))
                .then(|| (file.to_string(), line))
        })
        .collect()
}

/// Every `path:line` of an error in `out`, as `path(line,col): error` (tsc) or
/// `path:line:col: error` (cargo's short format).
fn checker_errors(out: &str, exts: &[&str]) -> BTreeSet<(String, u32)> {
    let mut found = BTreeSet::new();
    for l in out.lines().filter(|l| l.contains(": error")) {
        if let Some((file, rest)) = l.split_once('(')
            && let Some(line) = rest.split(',').next().and_then(|n| n.parse().ok())
            && exts.iter().any(|e| file.ends_with(e))
        {
            found.insert((file.to_string(), line));
            continue;
        }
        found.extend(sites(l, exts));
    }
    found
}

const RUST_CONFIG: &str = "[lsp]\nindex_wait_ms = 180000\ndiagnostics_wait_ms = 60000\n";

/// `cargo check` of the workspace and its tests, built outside the workspace (`target`).
fn cargo_check(p: &Project, target: &std::path::Path) -> BTreeSet<(String, u32)> {
    let out = std::process::Command::new("cargo")
        .args([
            "check",
            "--workspace",
            "--tests",
            "--keep-going",
            "--offline",
            "--quiet",
            "--message-format=short",
        ])
        .env("CARGO_TARGET_DIR", target)
        .current_dir(p.root())
        .output()
        .unwrap();
    checker_errors(&String::from_utf8_lossy(&out.stderr), &[".rs"])
}

#[tokio::test]
async fn a_broken_trait_and_signature_name_every_site_cargo_check_reports() {
    if require_binary("rust-analyzer", "rust-analyzer").is_none()
        || require_binary("cargo", "cargo").is_none()
    {
        return;
    }
    // Untrusted: rust-analyzer runs no `cargo check` of its own, and diagnoses only the
    // files that are open.
    let p = Project::from_fixture_with_trust("cargo_traits", RUST_CONFIG, false);
    let target = tempfile::tempdir().unwrap();
    let lib = "crates/shapes/src/lib.rs";
    let ok = p.read(lib);

    // A required method: every implementor in the other crates breaks.
    let more = ok.replace(
        "    fn area(&self) -> u32;\n",
        "    fn area(&self) -> u32;\n    /// Its name.\n    fn name(&self) -> String;\n",
    );
    let s = section(p.write_tool(lib, &more).await);
    let want = cargo_check(&p, target.path());
    assert_eq!(
        want,
        BTreeSet::from([
            ("crates/circle/src/lib.rs".to_string(), 11),
            ("crates/square/src/lib.rs".to_string(), 11)
        ]),
        "cargo check's own sites"
    );
    assert!(
        sites(&s, &[".rs"]).is_superset(&want),
        "every site cargo check reports is named:\n{s}"
    );
    assert!(!s.contains("pending"), "{s}");

    // Back, then a required parameter: every caller breaks, the test module's too.
    let s = section(p.write_tool(lib, &ok).await);
    assert!(!s.contains("new diagnostic(s)"), "{s}");
    let param = ok.replace(
        "pub fn scaled(s: &dyn Shape, k: u32) -> u32 {",
        "pub fn scaled(s: &dyn Shape, k: u32, offset: u32) -> u32 {",
    );
    let s = section(p.write_tool(lib, &param).await);
    let want = cargo_check(&p, target.path());
    assert_eq!(
        want,
        BTreeSet::from([
            ("crates/circle/src/lib.rs".to_string(), 19),
            ("crates/square/src/lib.rs".to_string(), 23)
        ]),
        "cargo check's own sites (it does not check app, whose dependency fails)"
    );
    let named = sites(&s, &[".rs"]);
    assert!(
        named.is_superset(&want),
        "every site cargo check reports is named:\n{s}"
    );
    // And the caller cargo could not reach yet, as the fixed dependency would show it.
    assert!(
        named.contains(&("crates/app/src/main.rs".to_string(), 8)),
        "{s}"
    );
    assert!(!s.contains("pending"), "{s}");
    p.close_and_check().await;
}

const TS_CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

/// A library, an index that re-exports it, and a caller that imports only the index: the
/// import scan of the written file finds the index, never the caller.
const TS_FILES: &[(&str, &str)] = &[
    (
        "package.json",
        "{\"name\": \"calc\", \"version\": \"1.0.0\", \"private\": true, \"type\": \"module\"}\n",
    ),
    (
        "tsconfig.json",
        "{\"compilerOptions\": {\"target\": \"ES2020\", \"module\": \"ES2020\", \"moduleResolution\": \"node\", \"strict\": true, \"noEmit\": true}, \"include\": [\"src\"]}\n",
    ),
    (
        "src/lib/scale.ts",
        "/** `x` times `k`. */\nexport function scale(x: number, k: number): number {\n  return x * k;\n}\n",
    ),
    ("src/index.ts", "export { scale } from \"./lib/scale\";\n"),
    (
        "src/app/main.ts",
        "import { scale } from \"../index\";\n\nexport function twice(x: number): number {\n  return scale(x, 2);\n}\n\nexport const six = scale(3, 2);\n",
    ),
];

fn tsc(p: &Project) -> BTreeSet<(String, u32)> {
    let tsc = tools_core::testing::which("tsc").unwrap();
    let out = std::process::Command::new(tsc)
        .args(["--noEmit", "-p", ".", "--pretty", "false"])
        .current_dir(p.root())
        .output()
        .unwrap();
    checker_errors(&String::from_utf8_lossy(&out.stdout), &[".ts"])
}

#[tokio::test]
async fn a_caller_through_a_re_export_in_a_never_opened_file_is_named() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("typescript", "tsc").is_none()
    {
        return;
    }
    let p = Project::new(TS_FILES, TS_CONFIG);
    let lib = "src/lib/scale.ts";
    let ok = p.read(lib);
    let broken = ok.replace("k: number)", "k: number, offset: number)");
    let s = section(p.write_tool(lib, &broken).await);
    let want = tsc(&p);
    assert_eq!(
        want,
        BTreeSet::from([
            ("src/app/main.ts".to_string(), 4),
            ("src/app/main.ts".to_string(), 7)
        ]),
        "tsc's own sites"
    );
    assert_eq!(sites(&s, &[".ts"]), want, "{s}");
    let s = section(p.write_tool(lib, &ok).await);
    assert!(!s.contains("new diagnostic(s)"), "{s}");
    assert_eq!(
        sites(&s, &[".ts"]),
        want,
        "the fix names the same sites as gone:\n{s}"
    );
    p.close_and_check().await;
}

const PY_CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 30000\n";

/// A helper that a module re-exports, a test that calls it through the re-export, and a
/// direct caller.
const PY_FILES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"conv\"\nversion = \"0.1.0\"\n",
    ),
    ("conv/__init__.py", ""),
    (
        "conv/_internal.py",
        "def to_native(s: str, encoding: str = \"ascii\") -> str:\n    return s.encode(encoding).decode(encoding)\n",
    ),
    (
        "conv/utils.py",
        "from conv._internal import to_native\n\n__all__ = [\"to_native\"]\n",
    ),
    (
        "conv/compat.py",
        "from conv._internal import to_native\n\nNATIVE = to_native(\"a\")\n",
    ),
    (
        "tests/test_utils.py",
        "from conv import utils\n\n\ndef test_native() -> None:\n    assert utils.to_native(\"x\") == \"x\"\n",
    ),
];

fn pyright_errors(p: &Project) -> BTreeSet<(String, u32)> {
    super::noisy_python::pyright_cli(&p.root())
        .iter()
        .flat_map(|l| sites(l, &[".py"]))
        .collect()
}

#[tokio::test]
async fn a_call_through_a_re_export_is_named() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::new(PY_FILES, PY_CONFIG);
    assert!(pyright_errors(&p).is_empty());
    let file = "conv/_internal.py";
    let ok = p.read(file);
    let broken = ok.replace("encoding: str = \"ascii\")", "encoding: str, strict: bool)");
    let s = section(p.write_tool(file, &broken).await);
    let want = pyright_errors(&p);
    assert_eq!(
        want,
        BTreeSet::from([
            ("conv/compat.py".to_string(), 3),
            ("tests/test_utils.py".to_string(), 5)
        ]),
        "pyright's own sites"
    );
    assert_eq!(sites(&s, &[".py"]), want, "{s}");
    p.close_and_check().await;
}
