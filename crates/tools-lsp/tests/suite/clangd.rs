//! C through clangd with `compile_flags.txt`.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[tokio::test]
async fn clangd_answers_every_action() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::new(
        &[
            ("compile_flags.txt", "-std=c11\n-Wall\n"),
            (
                "shapes.h",
                "#ifndef SHAPES_H\n#define SHAPES_H\ntypedef struct Point { int x; int y; } Point;\n/** Area of a w by h box. */\nint area(int w, int h);\n#endif\n",
            ),
            (
                "shapes.c",
                "#include \"shapes.h\"\nint area(int w, int h) { return w * h; }\n",
            ),
            (
                "main.c",
                "#include \"shapes.h\"\n#include <stdio.h>\n\nint main(void) {\n    Point p = {1, 2};\n    /* héllo wörld */ int a = area(p.x, p.y);\n    printf(\"%d\\n\", area(a, 2));\n    return 0;\n}\n",
            ),
        ],
        "",
    );
    let out = p
        .ok(json!({"action": "definition", "file": "main.c", "line": 6, "symbol": "area"}))
        .await;
    assert!(
        out.contains("shapes.c:2:5") || out.contains("shapes.h:5:5"),
        "{out}"
    );
    // The declaration is the header's prototype, wherever the definition is.
    let out = p
        .ok(json!({"action": "declaration", "file": "main.c", "line": 6, "symbol": "area"}))
        .await;
    has(&out, "1 declaration(s) of `area`");
    has(&out, "shapes.h:5:5");
    let out = p
        .ok(json!({"action": "type_definition", "file": "main.c", "line": 5, "symbol": "p", "occurrence": 1}))
        .await;
    has(&out, "shapes.h:3");
    let out = p
        .ok(json!({"action": "references", "file": "main.c", "line": 7, "symbol": "area"}))
        .await;
    has(&out, "main.c:6:31");
    has(&out, "main.c:7:20");
    let out = p
        .ok(json!({"action": "hover", "file": "main.c", "line": 6, "symbol": "area"}))
        .await;
    has(&out, "int area(int w, int h)");
    let out = p.ok(json!({"action": "symbols", "file": "shapes.h"})).await;
    has(&out, "area");
    has(&out, "Point");
    let out = p.ok(json!({"action": "symbols", "query": "area"})).await;
    has(&out, "area");
    let out = p
        .ok(json!({"action": "implementation", "file": "main.c", "line": 6, "symbol": "area"}))
        .await;
    assert!(out.contains("implementation"), "{out}");
    p.write(
        "broken.c",
        "#include \"shapes.h\"\nint f(void) { return nope + 1; }\n",
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "broken.c"}))
        .await;
    has(&out, "broken.c:2:22 error");
    has(&out, "nope");
    let out = p
        .ok(json!({"action": "code_actions", "file": "broken.c", "line": 2, "symbol": "nope"}))
        .await;
    assert!(out.contains("code action"), "{out}");
    p.close_and_check().await;
}

#[tokio::test]
async fn clangd_serves_module_cuda_hip_opencl_and_objective_c_files() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    let p = Project::new(
        &[
            // A module interface needs C++20, which clangd's default flags are not; CUDA and
            // HIP are parsed without their SDKs, which are not installed.
            (
                ".clangd",
                "If:\n  PathMatch: .*\\.cppm\nCompileFlags:\n  Add: [-std=c++20]\n---\n\
                 If:\n  PathMatch: .*\\.cu\nCompileFlags:\n  Add: [-nocudainc, -nocudalib]\n---\n\
                 If:\n  PathMatch: .*\\.hip\nCompileFlags:\n  Add: [-nogpuinc]\n",
            ),
            (
                "shapes.cppm",
                "export module shapes;\nexport int module_area(int w, int h) { return w * h; }\n",
            ),
            (
                "scale.cu",
                "__attribute__((global)) void scale_kernel(float *x) { x[0] *= 2; }\n",
            ),
            (
                "scale.hip",
                "__attribute__((global)) void hip_kernel(float *x) { x[0] *= 2; }\n",
            ),
            (
                "scale.cl",
                "__kernel void cl_kernel(__global float *x) { x[0] *= 2; }\n",
            ),
            ("area.m", "int objc_area(int w, int h) { return w * h; }\n"),
        ],
        "",
    );
    for (file, line) in [
        (
            "shapes.cppm",
            "function module_area — int (int, int)  line 2",
        ),
        ("scale.cu", "function scale_kernel — void (float *)  line 1"),
        ("scale.hip", "function hip_kernel — void (float *)  line 1"),
        (
            "scale.cl",
            // OpenCL's address spaces and kernel attribute: clang read it as OpenCL.
            "function cl_kernel — void (__global float *__private) __attribute__((device_kernel))  line 1",
        ),
        ("area.m", "function objc_area — int (int, int)  line 1"),
    ] {
        let out = p.ok(json!({"action": "symbols", "file": file})).await;
        assert_eq!(out, format!("1 symbol(s) in {file}:\n{line}"), "{file}");
    }
    p.close_and_check().await;
}

fn git(root: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// clangd's background index would land in `.cache/clangd/index` beside the compile
/// database; read calls leave the checkout exactly as it was. A workspace symbol search as
/// the first call finds what the database lists.
#[tokio::test]
async fn a_read_only_run_over_a_cpp_tree_leaves_the_checkout_as_it_was() {
    if require_binary("clangd", "clangd").is_none() || require_binary("git", "git").is_none() {
        return;
    }
    let p = Project::new(
        &[
            ("src/helper.cpp", "int helper(int x) { return x + 1; }\n"),
            (
                "src/main.cpp",
                "int helper(int x);\nint main() { return helper(1); }\n",
            ),
        ],
        "",
    );
    let root = p.root();
    let entries: Vec<_> = ["helper.cpp", "main.cpp"]
        .iter()
        .map(|f| {
            json!({"directory": root, "file": root.join("src").join(f),
                   "arguments": ["c++", "-std=c++17", "-c", format!("src/{f}")]})
        })
        .collect();
    p.write(
        "compile_commands.json",
        &serde_json::to_string_pretty(&entries).unwrap(),
    );
    git(&root, &["init", "-q", "."]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "tree"]);
    let before = git(&root, &["status", "--porcelain", "--ignored"]);
    // The very first call: clangd reads the compile database only once a file is open.
    let out = p.ok(json!({"action": "symbols", "query": "helper"})).await;
    assert_eq!(
        out,
        "1 workspace symbol(s) match `helper`:\nfunction helper  src/helper.cpp:1:5"
    );
    let out = p
        .ok(json!({"action": "references", "file": "src/main.cpp", "line": 2, "symbol": "helper"}))
        .await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "3 reference(s) of `helper` at src/main.cpp:2:",
            "src/helper.cpp:1:5  int helper(int x) { return x + 1; }",
            "src/main.cpp:1:5  int helper(int x);",
            "src/main.cpp:2:21  int main() { return helper(1); }",
        ]
    );
    // The index is written in the background: compare once the server has ended.
    p.run.close().await;
    assert_eq!(git(&root, &["status", "--porcelain", "--ignored"]), before);
    assert_eq!(before, "");
    drop(p);
}
