//! Go through gopls and Debian's Go.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[tokio::test]
async fn gopls_answers_every_action() {
    if require_binary("gopls", "gopls").is_none() || require_binary("go", "go").is_none() {
        return;
    }
    let p = Project::new(
        &[
            ("go.mod", "module example.com/demo\n\ngo 1.19\n"),
            (
                "shape.go",
                "package main\n\n// Shape has an area.\ntype Shape interface {\n\tArea() int\n}\n\n// Square is a shape.\ntype Square struct{ S int }\n\n// Area of the square.\nfunc (q Square) Area() int { return q.S * q.S }\n",
            ),
            (
                "main.go",
                "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar s Shape = Square{S: 2}\n\tlabel := \"héllo😀\"; fmt.Println(label, s.Area())\n}\n",
            ),
        ],
        "",
    );
    let out = p
        .ok(json!({"action": "definition", "file": "main.go", "line": 6, "symbol": "Square"}))
        .await;
    has(&out, "shape.go:9:6");
    let out = p
        .ok(json!({"action": "definition", "file": "main.go", "line": 7, "symbol": "Area"}))
        .await;
    has(&out, "shape.go:5:2");
    let out = p
        .ok(json!({"action": "implementation", "file": "shape.go", "line": 4, "symbol": "Shape"}))
        .await;
    has(&out, "shape.go:9:6");
    let out = p
        .ok(json!({"action": "type_definition", "file": "main.go", "line": 6, "symbol": "s", "occurrence": 1}))
        .await;
    has(&out, "shape.go:4:6");
    let out = p
        .ok(json!({"action": "references", "file": "shape.go", "line": 9, "symbol": "Square"}))
        .await;
    has(&out, "main.go:6:16");
    let out = p
        .ok(json!({"action": "hover", "file": "main.go", "line": 6, "symbol": "Square"}))
        .await;
    has(&out, "Square is a shape");
    let out = p.ok(json!({"action": "symbols", "file": "shape.go"})).await;
    has(&out, "Square");
    let out = p.ok(json!({"action": "symbols", "query": "Square"})).await;
    has(&out, "Square");
    p.write(
        "bad.go",
        "package main\n\nfunc bad() int { return missing }\n",
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "bad.go"}))
        .await;
    has(&out, "bad.go:3:25 error");
    has(&out, "missing");
    let out = p
        .ok(json!({"action": "code_actions", "file": "bad.go", "line": 3, "symbol": "missing"}))
        .await;
    assert!(out.contains("code action"), "{out}");
    p.close_and_check().await;
}
