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
