//! Sass through some-sass-language-server: a definition and references across `@use`
//! modules, which vscode-css-language-server (the server `.scss` went to before) cannot
//! resolve.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

const THEME: &str = "$brand-color: #336699;\n\n@mixin card($pad) {\n  padding: $pad;\n}\n";
const MAIN: &str =
    "@use \"theme\";\n\n.card {\n  @include theme.card(4px);\n  color: theme.$brand-color;\n}\n";

#[tokio::test]
async fn some_sass_follows_use_modules() {
    if require_binary("some-sass-language-server", "some-sass-language-server").is_none() {
        return;
    }
    let p = Project::new(
        &[
            (
                "package.json",
                "{\"name\": \"styles\", \"private\": true}\n",
            ),
            ("styles/_theme.scss", THEME),
            ("styles/main.scss", MAIN),
        ],
        "[lsp]\nindex_wait_ms = 60000\n",
    );
    let out = p
        .ok(json!({"action": "definition", "file": "styles/main.scss", "line": 5, "symbol": "$brand-color"}))
        .await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "1 definition(s) of `$brand-color` at styles/main.scss:5:",
            "styles/_theme.scss:1:1  $brand-color: #336699;"
        ]
    );
    let out = p
        .ok(json!({"action": "references", "file": "styles/main.scss", "line": 4, "symbol": "card"}))
        .await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "2 reference(s) of `card` at styles/main.scss:4:",
            "styles/_theme.scss:3:8  @mixin card($pad) {",
            "styles/main.scss:4:18  @include theme.card(4px);",
        ]
    );
    p.close_and_check().await;
}
