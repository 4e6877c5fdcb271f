//! A Vue 3 app whose composables are used from `.ts` files and from `.vue` components: a
//! `.ts` file's own tsserver never reads the components, so references, definitions and
//! renames also ask the tsserver that carries `@vue/typescript-plugin`, and merge. One run
//! (its servers started once) goes through: a rename the two servers of a `.vue` file edit
//! differently, refused with nothing changed; references from the `.ts` definition naming
//! every `.vue` use by path:line; a definition from a component; a rename that edits every
//! `.ts` and `.vue` use, after which `vue-tsc --noEmit` passes.

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const FILES: &[&str] = &[
    "src/components/Badge.vue",
    "src/components/Clicker.vue",
    "src/components/Total.vue",
    "src/composables/counter.ts",
    "src/composables/label.ts",
    "src/main.ts",
];

/// The `vue` package installed beside `vue-tsc`, linked into the project as its
/// dependency (vue-tsc and the plugin read Vue's types from the project).
pub(super) fn link_vue(p: &Project, vue_tsc: &std::path::Path) {
    let vue = tools_core::testing::node_modules_of(vue_tsc).join("vue");
    assert!(
        vue.join("package.json").is_file(),
        "no vue beside {vue_tsc:?}"
    );
    std::fs::create_dir_all(p.root().join("node_modules")).unwrap();
    crate::suite::link_dir(&vue, p.root().join("node_modules/vue")).unwrap();
}

pub(super) fn vue_tsc(p: &Project, program: &std::path::Path) -> std::process::Output {
    std::process::Command::new(program)
        .args(["--noEmit", "-p", "."])
        .current_dir(p.root())
        .output()
        .unwrap()
}

/// The answer from its head line on: a server still loading may lead it with a
/// "(not final: …)" line, which says so and is the only thing allowed before the head.
pub(super) fn from_head<'a>(text: &'a str, head: &str) -> &'a str {
    let at = text
        .find(head)
        .unwrap_or_else(|| panic!("no {head:?} in:\n{text}"));
    for lead in text[..at].lines() {
        assert!(lead.starts_with("(not final: "), "{text}");
    }
    &text[at..]
}

/// Every `path:line` the located answer lists, in its order.
pub(super) fn places(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|loc| {
            loc.rsplit_once(':')
                .map_or(loc, |(place, _)| place)
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn vue_uses_are_found_and_renamed_from_the_ts_definition() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("@vue/language-server", "vue-language-server").is_none()
    {
        return;
    }
    let Some(vue_tsc_program) = require_binary("vue-tsc", "vue-tsc") else {
        return;
    };
    let p = Project::from_fixture("vue_app", CONFIG);
    link_vue(&p, &vue_tsc_program);
    let before: Vec<String> = FILES.iter().map(|f| p.read(f)).collect();

    // The Vue server gives a shorthand property its old name as a prefix
    // (`{ text: shown }`), tsserver renames it in place: one range, two edits.
    let refused = p
        .call(
            "lsp_rename",
            json!({"file": "src/components/Badge.vue", "line": 4, "symbol": "text", "new_name": "caption"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("edit the same place of src/components/Badge.vue differently for renaming `text` at src/components/Badge.vue:4; nothing was changed"),
        "{refused}"
    );
    let after: Vec<String> = FILES.iter().map(|f| p.read(f)).collect();
    assert_eq!(after, before);

    let refs = p
        .ok(json!({"action": "references", "file": "src/composables/counter.ts", "line": 6, "symbol": "useCounter"}))
        .await;
    let refs = from_head(
        &refs,
        "7 reference(s) of `useCounter` at src/composables/counter.ts:6:\n",
    );
    assert_eq!(
        places(refs),
        [
            "src/components/Clicker.vue:2",
            "src/components/Clicker.vue:4",
            "src/components/Total.vue:2",
            "src/components/Total.vue:4",
            "src/composables/counter.ts:6",
            "src/main.ts:1",
            "src/main.ts:3",
        ],
        "{refs}"
    );

    let def = p
        .ok(json!({"action": "definition", "file": "src/components/Total.vue", "line": 4, "symbol": "useCounter"}))
        .await;
    let def = from_head(
        &def,
        "1 definition(s) of `useCounter` at src/components/Total.vue:4:\n",
    );
    assert_eq!(places(def), ["src/composables/counter.ts:6"], "{def}");

    // The check may go on after the answer: its findings come with the next call's.
    let (out, checked) = p
        .rename_checked(json!({"file": "src/composables/counter.ts", "line": 6,
            "symbol": "useCounter", "new_name": "useTally"}))
        .await;
    assert!(!checked.contains("new diagnostic(s)"), "phantom: {checked}");
    let mut lines = out
        .text
        .lines()
        .filter(|l| !l.starts_with("the check goes on: "));
    assert_eq!(
        lines.next(),
        Some(
            "renamed `useCounter` at src/composables/counter.ts:6 to `useTally`: 7 edit(s) in 4 file(s)"
        ),
        "{}",
        out.text
    );
    assert_eq!(
        lines.next(),
        Some("  src/components/Clicker.vue: 2 edit(s)"),
        "{}",
        out.text
    );
    assert!(
        checked.lines().any(|l| l == "checked after writing: typescript-language-server (typescript+vue) links all 7 reference(s) of `useCounter` from before to `useTally`"),
        "{checked}"
    );
    for f in FILES {
        let text = p.read(f);
        assert!(!text.contains("useCounter"), "{f}:\n{text}");
    }
    assert_eq!(
        p.read("src/components/Total.vue"),
        before[2].replace("useCounter", "useTally")
    );
    let checked = vue_tsc(&p, &vue_tsc_program);
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    p.close_and_check().await;
}

/// With a TypeScript server that is not given tsserver plugins (vtsls configured in its
/// place), a `.ts` file's references still answer, and the first line says the `.vue`
/// files were not searched and why.
#[tokio::test]
async fn without_a_plugin_host_the_answer_says_vue_files_were_not_searched() {
    if require_binary("@vtsls/language-server", "vtsls").is_none() {
        return;
    }
    let config = format!("{CONFIG}[lsp.servers.typescript]\ncommand = [\"vtsls\", \"--stdio\"]\n");
    let p = Project::from_fixture("vue_app", &config);
    let refs = p
        .ok(json!({"action": "references", "file": "src/main.ts", "line": 3, "symbol": "useCounter"}))
        .await;
    let head = "3 reference(s) of `useCounter` at src/main.ts:3:\n";
    let at = refs
        .find(head)
        .unwrap_or_else(|| panic!("no head in:\n{refs}"));
    let leads: Vec<&str> = refs[..at]
        .lines()
        .filter(|l| !l.starts_with("(not final: "))
        .collect();
    assert_eq!(
        leads,
        [
            "(.vue files were not searched: the TypeScript server here is vtsls, and only typescript-language-server is given the frameworks' tsserver plugins)"
        ],
        "{refs}"
    );
    assert_eq!(
        places(&refs[at..]),
        [
            "src/composables/counter.ts:6",
            "src/main.ts:1",
            "src/main.ts:3"
        ],
        "{refs}"
    );
    p.close_and_check().await;
}
