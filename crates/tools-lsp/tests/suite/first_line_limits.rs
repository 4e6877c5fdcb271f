//! Answers limited by trust, a missing capability or projects left unloaded say so in their
//! first line, with what to do — each held to its exact text with a real server.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

/// The line every trust limit ends with.
const TRUST_HOW: &str = "start with --trust (or list this folder under [trust] roots in ~/.config/agent-tools/config.toml) to enable it";

#[tokio::test]
async fn a_rename_on_intelephense_without_a_licence_says_it_offers_none() {
    if require_binary("intelephense", "intelephense").is_none() {
        return;
    }
    // Without the PHPantom stand-in (the servers suite renames through it).
    let p = Project::new(
        &[(
            "index.php",
            "<?php\nfunction area(int $w, int $h): int { return $w * $h; }\n$total = area(2, 3);\necho $total;\n",
        )],
        "[lsp.servers.phpantom]\nenabled = false\n",
    );
    let e = p
        .call(
            "lsp_rename",
            json!({"file": "index.php", "line": 3, "symbol": "area", "new_name": "surface"}),
        )
        .await
        .expect_err("intelephense cannot rename");
    assert_eq!(
        e.to_string(),
        "not available here: intelephense does not offer rename: its initialize capabilities \
         have no renameProvider (intelephense renames only with a licence key); nothing was \
         changed — rename with `ast_edit` (pattern and rewrite, then `resolve`), or give php a \
         server that renames under [lsp.servers.php] in agent-tools.toml"
    );
    assert!(p.read("index.php").contains("area(2, 3)"));
}

#[tokio::test]
async fn untrusted_rust_diagnostics_lead_with_check_on_save_being_off() {
    if require_binary("rust-analyzer", "rust-analyzer").is_none() {
        return;
    }
    let p = Project::with_trust(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"moved\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            // A use after move: only `cargo check` (the borrow checker) reports it.
            (
                "src/lib.rs",
                "pub fn twice(v: Vec<u8>) -> usize {\n    let w = v;\n    v.len() + w.len()\n}\n",
            ),
        ],
        "",
        false,
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "src/lib.rs"}))
        .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "untrusted workspace: rust-analyzer's check on save (cargo check) is off, so these \
             are only rust-analyzer's own diagnostics — the compiler's errors and warnings \
             (borrow checking, most type errors, lints) are not among them; {TRUST_HOW}"
        ),
        "{out}"
    );
    // Under load the server may still be indexing: that caveat comes after the limit.
    assert!(
        lines[1..lines.len() - 1]
            .iter()
            .all(|l| l.starts_with("(not final: rust-analyzer")),
        "{out}"
    );
    assert_eq!(
        lines.last(),
        Some(&"no diagnostics in src/lib.rs (rust-analyzer)"),
        "{out}"
    );
}

#[tokio::test]
async fn untrusted_python_type_checking_leads_with_the_interpreter_it_uses() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::with_trust(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"app\"\nversion = \"0\"\n",
            ),
            ("app.py", "import venvonly\n\nprint(venvonly.VALUE)\n"),
        ],
        "",
        false,
    );
    // A project environment holding a package nothing else has.
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(p.root())
        .status()
        .unwrap();
    assert!(made.success());
    let site = std::fs::read_dir(p.root().join(".venv/lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages/venvonly");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("__init__.py"), "VALUE = 1\n").unwrap();
    let out = p
        .ok(json!({"action": "diagnostics", "file": "app.py"}))
        .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "untrusted workspace: pyright-langserver resolves imports with the Python on PATH, \
             not the project's .venv/bin/python, so a package installed only there shows as \
             unresolved; {TRUST_HOW}"
        )
    );
    assert_eq!(
        lines[1..],
        [
            "1 diagnostic(s) in app.py:",
            "app.py:1:8 error [reportMissingImports] Import \"venvonly\" could not be resolved",
        ]
    );
}

/// A C project of its own (compile database and one source file) per folder `p00`…
fn c_projects(n: usize) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for i in 0..n {
        files.push((
            format!("p{i:02}/f.c"),
            format!("int proj_{i:02}(void) {{ return {i}; }}\n"),
        ));
        files.push((
            format!("p{i:02}/compile_commands.json.in"),
            format!(
                "[{{\"directory\": \"@ROOT@/p{i:02}\", \"file\": \"f.c\", \"command\": \"cc -c f.c\"}}]\n"
            ),
        ));
    }
    files
}

/// The languages of the servers running now (from `status`).
async fn running_languages(p: &Project) -> Vec<String> {
    let status = p.lsp(json!({"action": "status"})).await.unwrap();
    status.structured.unwrap()["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["pid"].is_i64())
        .map(|s| s["language"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn projects_past_the_cap_lead_a_workspace_symbol_search() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (".clangd", ""),
            ("main.c", "int main_fn(void) { return 0; }\n"),
        ],
        "",
    );
    for (rel, text) in c_projects(25) {
        match rel.strip_suffix(".in") {
            Some(base) => p.write(
                base,
                &text.replace("@ROOT@", &p.root().display().to_string()),
            ),
            None => p.write(&rel, &text),
        }
    }
    let out = p
        .ok(json!({"action": "symbols", "query": "proj_2", "file": "main.c"}))
        .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "1 of 25 projects were not loaded for clangd (at most 24 are opened), so what lies in \
         them may be missing; pass `file` to search from one of them",
        "{out}"
    );
    // Whatever clangd's index holds by now, every match is exact and none comes from the
    // project left out (the 25th in path order).
    let shown = lines[1].strip_suffix(" workspace symbol(s) match `proj_2`:");
    let count: usize = shown.and_then(|n| n.parse().ok()).expect(&out);
    assert_eq!(lines.len(), 2 + count, "{out}");
    let possible: Vec<String> = (20..24)
        .map(|i| format!("function proj_{i}  p{i}/f.c:1:5"))
        .collect();
    for l in &lines[2..] {
        assert!(possible.iter().any(|m| m == l), "{l}\n{out}");
    }
}

#[tokio::test]
async fn a_workspace_symbol_search_starts_no_server_that_cannot_search() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::new(
        &[
            ("package.json", "{\"name\": \"tree\"}\n"),
            ("main.c", "int main_fn(void) { return 0; }\n"),
        ],
        "",
    );
    p.write(
        "compile_commands.json",
        &format!(
            "[{{\"directory\": \"{}\", \"file\": \"main.c\", \"command\": \"cc -c main.c\"}}]\n",
            p.root().display()
        ),
    );
    let out = p.ok(json!({"action": "symbols", "query": "main_fn"})).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "1 workspace symbol(s) match `main_fn`:",
            "function main_fn  main.c:1:5"
        ]
    );
    assert_eq!(running_languages(&p).await, ["c"]);
}
