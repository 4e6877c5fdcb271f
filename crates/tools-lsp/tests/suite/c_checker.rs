//! `diagnostics "*"` on C projects: the compile commands a project declares
//! (compile_commands.json, or CMake configured into a private folder), compiled syntax-only
//! with the real gcc / cmake.

use std::sync::Arc;

use serde_json::json;
use tools_core::testing::require_binary;
use tools_core::{Config, Registry, RegistryBuilder, Run, RunOptions};

use super::{Project, has};

const HEADER: &str = "#ifndef RINGBUF_H\n#define RINGBUF_H\n#include <stddef.h>\n\ntypedef struct ringbuf {\n    unsigned char *data;\n    size_t cap, head, len;\n} ringbuf;\n\nint rb_init(ringbuf *rb, size_t cap);\nint rb_push(ringbuf *rb, unsigned char byte);\nint rb_pop(ringbuf *rb, unsigned char *out);\nconst char *rb_version(void);\n\n#endif\n";

const RINGBUF_C: &str = "#include <stdlib.h>\n#include \"ringbuf.h\"\n\nint rb_init(ringbuf *rb, size_t cap) {\n    rb->data = malloc(cap);\n    rb->cap = cap;\n    rb->head = rb->len = 0;\n    return rb->data ? 0 : -1;\n}\n\nint rb_push(ringbuf *rb, unsigned char byte) {\n    if (rb->len == rb->cap) return -1;\n    rb->data[(rb->head + rb->len++) % rb->cap] = byte;\n    return 0;\n}\n\nint rb_pop(ringbuf *rb, unsigned char *out) {\n    if (rb->len == 0) return -1;\n    *out = rb->data[rb->head];\n    rb->head = (rb->head + 1) % rb->cap;\n    rb->len--;\n    return 0;\n}\n";

/// Needs `RB_VERSION` from the compile command: a check without the entry's flags fails.
const UTIL_C: &str =
    "#include \"ringbuf.h\"\n\nconst char *rb_version(void) {\n    return RB_VERSION;\n}\n";

const TEST_C: &str = "#include <stdio.h>\n#include \"ringbuf.h\"\n\nint main(void) {\n    ringbuf rb;\n    unsigned char b;\n    rb_init(&rb, 4);\n    rb_push(&rb, 7);\n    rb_pop(&rb, &b);\n    printf(\"%s %d\\n\", rb_version(), b);\n    return b == 7 ? 0 : 1;\n}\n";

fn library_files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("include/ringbuf.h", HEADER),
        ("src/ringbuf.c", RINGBUF_C),
        ("src/util.c", UTIL_C),
        ("tests/test_ringbuf.c", TEST_C),
        ("README.md", "# ringbuf\n"),
    ]
}

/// The database a build tool would export for the library, with absolute folders as real
/// ones have, in both the `arguments` and the shell-quoted `command` forms.
fn compile_commands(root: &std::path::Path, compiler: &str) -> String {
    let root = root.display().to_string();
    json!([
        {"directory": root, "file": "src/ringbuf.c",
         "arguments": [compiler, "-std=c11", "-Wall", "-Iinclude", "-c", "src/ringbuf.c", "-o", "build/ringbuf.o"]},
        {"directory": root, "file": "src/util.c",
         "command": format!("{compiler} -std=c11 -Wall -Iinclude '-DRB_VERSION=\"1.0\"' -MD -MF build/util.d -c src/util.c -o build/util.o")},
        {"directory": format!("{root}/tests"), "file": "test_ringbuf.c",
         "command": format!("{compiler} -std=c11 -Wall -I../include -c test_ringbuf.c -o test_ringbuf.o")},
    ])
    .to_string()
}

fn c_library() -> Project {
    let p = Project::new(&library_files(), "");
    p.write("compile_commands.json", &compile_commands(&p.root(), "cc"));
    p
}

#[tokio::test]
async fn compile_commands_are_checked_syntax_only_with_each_entrys_flags() {
    if require_binary("gcc", "cc").is_none() {
        return;
    }
    let p = c_library();
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "3 file(s) compiled, 0 finding(s)");
    has(&out, "every compiled file is clean");
    // Syntax-only: no object or dependency file was written anywhere.
    assert!(!p.root().join("build").exists(), "{out}");
    assert!(!p.root().join("tests/test_ringbuf.o").exists(), "{out}");

    p.write(
        "src/util.c",
        "#include \"ringbuf.h\"\n\nconst char *rb_version(void) {\n    int unused;\n    return nope;\n}\n",
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "src/util.c:5:12 error");
    has(&out, "nope");
    has(&out, "src/util.c:4:9 warning");
    has(&out, "unused");
    let s = p
        .lsp(json!({"action": "diagnostics", "file": "*"}))
        .await
        .unwrap()
        .structured
        .unwrap();
    let findings = s["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["path"] == "src/util.c" && f["line"] == 5 && f["severity"] == "error"),
        "{s}"
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn an_error_in_a_shared_header_is_reported_once() {
    if require_binary("gcc", "cc").is_none() {
        return;
    }
    let p = c_library();
    p.write(
        "include/ringbuf.h",
        &HEADER.replace(
            "size_t cap, head, len;",
            "size_t cap, head, len;\n    nope_t tag;",
        ),
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    let header_errors = out
        .lines()
        .filter(|l| l.starts_with("include/ringbuf.h:") && l.contains(" error "))
        .count();
    assert_eq!(header_errors, 1, "{out}");
    has(&out, "3 file(s) compiled");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_database_that_names_missing_files_or_compilers_says_so() {
    if require_binary("gcc", "cc").is_none() {
        return;
    }
    let p = c_library();
    let root = p.root().display().to_string();
    p.write(
        "compile_commands.json",
        &json!([
            {"directory": root, "file": "src/ringbuf.c", "arguments": ["cc", "-Iinclude", "-c", "src/ringbuf.c"]},
            {"directory": "/nowhere/checkout", "file": "src/gone.c", "arguments": ["cc", "-c", "src/gone.c"]},
            {"directory": root, "file": "src/util.c", "arguments": ["no-such-compiler-xyz", "-c", "src/util.c"]},
            {"directory": root, "file": "tests/test_ringbuf.c"},
            {"directory": root, "file": "include/ringbuf.h", "arguments": ["cc", "-fno-such-option-xyz", "include/ringbuf.h"]},
        ])
        .to_string(),
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "2 file(s) compiled");
    // A compile that fails without a located error is reported, not taken for clean.
    has(
        &out,
        "include/ringbuf.h: `cc` exited 1 without a located error",
    );
    has(&out, "no-such-option-xyz");
    assert!(!out.contains("every compiled file is clean"), "{out}");
    has(&out, "1 entry names a file or folder that does not exist");
    has(
        &out,
        "compiler not found, its entries not checked: no-such-compiler-xyz",
    );
    has(&out, "1 malformed entry skipped");
    p.write("compile_commands.json", "{\"not\": \"a list\"}");
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "not a JSON array");
    p.close_and_check().await;
}

#[tokio::test]
async fn an_untrusted_run_compiles_nothing_and_never_runs_a_compiler_from_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in library_files() {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    // A "compiler" inside the repository that leaves a mark when it runs.
    let root = dir.path().canonicalize().unwrap();
    let evil = root.join("tools/cc");
    std::fs::create_dir_all(evil.parent().unwrap()).unwrap();
    std::fs::write(&evil, format!("#!/bin/sh\ntouch {}/ran\n", root.display())).unwrap();
    tools_core::platform::make_executable(&evil).unwrap();
    std::fs::write(
        root.join("compile_commands.json"),
        compile_commands(&root, &evil.display().to_string()),
    )
    .unwrap();
    let (run, reg) = run_with_lsp(&root, "untrusted", false);
    // `dir` outlives this first run: the trusted run below opens the same folder.
    let p = Project {
        dir: tempfile::tempdir().unwrap(),
        run,
        reg,
    };
    let err = p
        .err(json!({"action": "diagnostics", "file": "*"}))
        .await
        .to_string();
    has(&err, "untrusted workspace: the project's build was not run");
    has(&err, "compile_commands.json");
    has(&err, "--trust");
    assert!(!root.join("ran").exists(), "the workspace's compiler ran");
    p.close_and_check().await;

    // The same workspace, trusted: the entry's own compiler is the one that runs.
    let (run, reg) = run_with_lsp(&root, "trusted", true);
    let _ = reg
        .call(
            tools_core::Surface::FULL,
            "lsp",
            json!({"action": "diagnostics", "file": "*"}),
        )
        .await;
    assert!(
        root.join("ran").exists(),
        "a trusted run uses the entry's compiler"
    );
    run.close().await;
}

/// A run on `root` (trusted or not) and a registry holding the lsp family.
fn run_with_lsp(root: &std::path::Path, id: &str, trusted: bool) -> (Arc<Run>, Arc<Registry>) {
    let run = Run::new(RunOptions {
        root: root.to_path_buf(),
        conversation_id: id.into(),
        config: Config::parse("").unwrap(),
        trusted,
    })
    .unwrap();
    let fam = tools_lsp::family(&run).unwrap().unwrap();
    let reg = RegistryBuilder::new(Arc::clone(&run))
        .family(fam)
        .build()
        .unwrap();
    (run, reg)
}

const CMAKE_LISTS: &str = "cmake_minimum_required(VERSION 3.10)\nproject(ringbuf C)\nset(CMAKE_C_STANDARD 11)\nadd_library(ringbuf src/ringbuf.c src/util.c)\ntarget_include_directories(ringbuf PUBLIC include)\ntarget_compile_definitions(ringbuf PRIVATE RB_VERSION=\"1.0\")\ntarget_compile_options(ringbuf PRIVATE -Wall)\nadd_executable(test_ringbuf tests/test_ringbuf.c)\ntarget_link_libraries(test_ringbuf ringbuf)\n";

#[tokio::test]
async fn a_cmake_project_is_configured_in_a_private_folder_then_checked() {
    if require_binary("cmake", "cmake").is_none() || require_binary("gcc", "cc").is_none() {
        return;
    }
    let mut files = library_files();
    files.push(("CMakeLists.txt", CMAKE_LISTS));
    let p = Project::new(&files, "");
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "`cmake` configure");
    has(&out, "3 file(s) compiled, 0 finding(s)");
    p.write(
        "src/ringbuf.c",
        &RINGBUF_C.replace("rb->len--;", "rb->len--\n"),
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    assert!(
        out.lines()
            .any(|l| l.starts_with("src/ringbuf.c:21:") && l.contains(" error ")),
        "{out}"
    );
    // The build folder was private: nothing of CMake's is left in the workspace.
    assert!(!p.root().join("CMakeCache.txt").exists(), "{out}");
    assert!(!p.root().join("compile_commands.json").exists(), "{out}");
    assert!(!p.root().join("CMakeFiles").exists(), "{out}");

    p.write(
        "CMakeLists.txt",
        &CMAKE_LISTS.replace("tests/test_ringbuf.c", "tests/missing.c"),
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "configure in . failed");
    has(&out, "CMakeLists.txt:8 error");
    p.close_and_check().await;
}

#[tokio::test]
async fn the_check_is_bounded_in_files_and_time() {
    if require_binary("gcc", "cc").is_none() {
        return;
    }
    // More entries than one check compiles: the rest are counted, not run.
    let p = c_library();
    let root = p.root().display().to_string();
    let entries: Vec<serde_json::Value> = (0..205)
        .map(|i| json!({"directory": root, "file": format!("gen/f{i}.c"), "arguments": ["cc", "-c", format!("gen/f{i}.c")]}))
        .collect();
    p.write("compile_commands.json", &json!(entries).to_string());
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "5 more file(s) not checked (at most 200 per project)");
    has(
        &out,
        "200 entries name a file or folder that does not exist",
    );
    p.close_and_check().await;

    // A time budget too small for any compile: nothing hangs, and the answer says what was
    // left unchecked and which setting raises the budget.
    let p = Project::new(&library_files(), "[lsp]\nchecker_timeout_ms = 1\n");
    p.write("compile_commands.json", &compile_commands(&p.root(), "cc"));
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(
        &out,
        "not checked: the time budget ([lsp] checker_timeout_ms) ran out",
    );
    assert!(!out.contains("every compiled file is clean"), "{out}");
    p.close_and_check().await;
}
