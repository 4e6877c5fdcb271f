//! TypeScript through typescript-language-server and TypeScript 5.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

pub fn ts_files() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "package.json",
            "{\"name\": \"demo\", \"version\": \"1.0.0\"}\n",
        ),
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n",
        ),
        (
            "src/shape.ts",
            "export interface Shape {\n  area(): number;\n}\n\n/** A square of side s. */\nexport class Square implements Shape {\n  constructor(private s: number) {}\n  area(): number {\n    return this.s * this.s;\n  }\n}\n\nexport function total(shapes: Shape[]): number {\n  return shapes.reduce((acc, s) => acc + s.area(), 0);\n}\n",
        ),
        (
            "src/main.ts",
            "import { Square, total } from './shape';\n\nconst sq = new Square(2);\nconst label = \"héllo😀\"; const t = total([sq]);\nconsole.log(label, t, total([]));\n",
        ),
    ]
}

#[tokio::test]
async fn typescript_language_server_answers_every_action() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("typescript", "tsc").is_none()
    {
        return;
    }
    let p = Project::new(&ts_files(), "");
    let out = p
        .ok(json!({"action": "definition", "file": "src/main.ts", "line": 4, "symbol": "total"}))
        .await;
    has(&out, "src/shape.ts:13:17");
    let out = p
        .ok(json!({"action": "references", "file": "src/shape.ts", "line": 13, "symbol": "total"}))
        .await;
    has(&out, "src/main.ts:4:35");
    has(&out, "src/main.ts:5:23");
    let out = p
        .ok(json!({"action": "hover", "file": "src/main.ts", "line": 3, "symbol": "Square"}))
        .await;
    has(&out, "Square");
    let out = p
        .ok(json!({"action": "implementation", "file": "src/shape.ts", "line": 1, "symbol": "Shape"}))
        .await;
    has(&out, "src/shape.ts:6:14");
    let out = p
        .ok(json!({"action": "type_definition", "file": "src/main.ts", "line": 3, "symbol": "sq"}))
        .await;
    has(&out, "src/shape.ts:6:14");
    let out = p
        .ok(json!({"action": "symbols", "file": "src/shape.ts"}))
        .await;
    has(&out, "class Square");
    has(&out, "interface Shape");
    let out = p.ok(json!({"action": "symbols", "query": "Square"})).await;
    has(&out, "Square");
    p.write("src/bad.ts", "const n: number = 'text';\nexport { n };\n");
    let out = p
        .ok(json!({"action": "diagnostics", "file": "src/bad.ts"}))
        .await;
    has(&out, "src/bad.ts:1:7 error [2322]");
    let out = p
        .ok(json!({"action": "code_actions", "file": "src/bad.ts", "line": 1, "symbol": "n"}))
        .await;
    assert!(out.contains("code action"), "{out}");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_clean_file_written_clean_again_is_not_left_pending() {
    // typescript-language-server publishes nothing for a file whose diagnostics were empty
    // and stay empty: a write must not wait for a publish that never comes (it used to
    // answer "pending" after the whole bound), and must still see what a write breaks.
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("typescript", "tsc").is_none()
    {
        return;
    }
    let p = Project::new(&ts_files(), "[lsp]\ndiagnostics_wait_ms = 30000\n");
    let shape = ts_files()[2].1;
    for comment in ["// one", "// two"] {
        let s = p
            .write_tool("src/shape.ts", &format!("{comment}\n{shape}"))
            .await;
        assert!(s.as_deref().is_none_or(|s| !s.contains("pending")), "{s:?}");
    }
    let broken = shape.replace("return this.s * this.s;", "return this.s * 'x';");
    let s = p
        .write_tool("src/shape.ts", &broken)
        .await
        .expect("a section");
    has(&s, "1 new diagnostic(s) after this write");
    has(&s, "src/shape.ts:9:");
    let s = p
        .write_tool("src/shape.ts", shape)
        .await
        .expect("a section");
    has(&s, "earlier diagnostic(s) are gone after this write");
    assert!(!s.contains("pending"), "{s}");
    p.close_and_check().await;
}
