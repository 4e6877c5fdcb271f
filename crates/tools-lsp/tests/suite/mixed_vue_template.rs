//! A component's template uses of a binding its `<script setup>` declares (`@press=
//! "handleDigit"`, `{{ handleDigit.length }}`). The Vue servers link them through the
//! `vue` package's types: where `vue` is installed they answer them; where it is not (a
//! checkout before `npm install`) they list and rename only the script's, and the template
//! is read as text, said in the first line and in the structured result.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;
use super::mixed_vue::{from_head, link_vue};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const FILE: &str = "src/components/CalculatorInput.vue";

const REFERENCES: &str = "\
6 reference(s) of `handleDigit` at src/components/CalculatorInput.vue:8:
src/components/CalculatorInput.vue:8:7  const handleDigit = (d: number) => {
src/components/CalculatorInput.vue:13:18  digits.forEach(handleDigit);
src/components/CalculatorInput.vue:20:50  <button v-for=\"d in digits\" :key=\"d\" @click=\"handleDigit(d)\">{{ d }}</button>
src/components/CalculatorInput.vue:21:34  <DigitKey :digit=\"0\" @press=\"handleDigit\" />
src/components/CalculatorInput.vue:22:26  <button :aria-label=\"handleDigit.name\" @click=\"pressAll\">all</button>
src/components/CalculatorInput.vue:23:15  <small>{{ handleDigit.length }} argument</small>";

const READ: &str = "(4 use(s) of `handleDigit` in the component's template were read from its text, not from the servers: `vue` is not installed here (no node_modules/vue from src/components up), so the Vue servers cannot link a template to its script; `npm install` in the project lets them)";

fn servers() -> bool {
    require_binary("typescript-language-server", "typescript-language-server").is_some()
        && require_binary("@vue/language-server", "vue-language-server").is_some()
}

/// References of `handleDigit` from its declaration, then its rename to `pressDigit`: the
/// answer's text and structured result, and the component after it.
async fn references_and_rename(p: &Project) -> (String, serde_json::Value, String) {
    let refs = p
        .ok(json!({"action": "references", "file": FILE, "line": 8, "symbol": "handleDigit"}))
        .await;
    let (out, checked) = p
        .rename_checked(
            json!({"file": FILE, "line": 8, "symbol": "handleDigit", "new_name": "pressDigit"}),
        )
        .await;
    assert!(!checked.contains("new diagnostic(s)"), "phantom: {checked}");
    let text: Vec<&str> = out
        .text
        .lines()
        .filter(|l| !l.starts_with("the check goes on: "))
        .collect();
    (
        refs,
        out.structured.unwrap(),
        format!("{}\n{}", text.join("\n"), p.read(FILE)),
    )
}

#[tokio::test]
async fn without_vue_installed_template_uses_are_read_from_the_component() {
    if !servers() {
        return;
    }
    let p = Project::from_fixture("vue_app", CONFIG);
    let before = p.read(FILE);
    let (refs, structured, after) = references_and_rename(&p).await;
    assert_eq!(from_head(&refs, READ), format!("{READ}\n{REFERENCES}"));
    let refs_structured = p
        .lsp(json!({"action": "references", "file": FILE, "line": 13, "symbol": "pressDigit"}))
        .await
        .unwrap();
    assert_eq!(
        refs_structured.structured.unwrap()["read_from_template"],
        json!([
            "src/components/CalculatorInput.vue:20:50",
            "src/components/CalculatorInput.vue:21:34",
            "src/components/CalculatorInput.vue:22:26",
            "src/components/CalculatorInput.vue:23:15"
        ])
    );
    assert_eq!(
        structured["read_from_template"],
        json!([
            "src/components/CalculatorInput.vue:20",
            "src/components/CalculatorInput.vue:21",
            "src/components/CalculatorInput.vue:22",
            "src/components/CalculatorInput.vue:23"
        ])
    );
    assert_eq!(
        after,
        format!(
            "renamed `handleDigit` at {FILE}:8 to `pressDigit`: 6 edit(s) in 1 file(s)\n  {FILE}: 6 edit(s)\n4 of those edit(s) are uses in the component's template read from its text, not from the servers (`vue` is not installed here (no node_modules/vue from src/components up), so the Vue servers cannot link a template to its script; `npm install` in the project lets them): {FILE}:20, {FILE}:21, {FILE}:22, {FILE}:23\n{}",
            before.replace("handleDigit", "pressDigit")
        )
    );
    p.close_and_check().await;
}

#[tokio::test]
async fn with_vue_installed_the_servers_answer_template_uses_themselves() {
    if !servers() {
        return;
    }
    let Some(vue_tsc) = require_binary("vue-tsc", "vue-tsc") else {
        return;
    };
    let p = Project::from_fixture("vue_app", CONFIG);
    link_vue(&p, &vue_tsc);
    let before = p.read(FILE);
    let (refs, structured, after) = references_and_rename(&p).await;
    assert_eq!(from_head(&refs, "6 reference(s)"), REFERENCES);
    assert_eq!(structured.get("read_from_template"), None);
    assert_eq!(
        after,
        format!(
            "renamed `handleDigit` at {FILE}:8 to `pressDigit`: 6 edit(s) in 1 file(s)\n  {FILE}: 6 edit(s)\n{}",
            before.replace("handleDigit", "pressDigit")
        )
    );
    let checked = super::mixed_vue::vue_tsc(&p, &vue_tsc);
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    p.close_and_check().await;
}
