//! The template scan's exact positions, what it leaves out, the shadowing cases and which
//! declarations count, on components written inline.

use super::scan::{Found, Use, setup_declaration, template_uses};
use super::*;

const COMPONENT: &str = r#"<script setup lang="ts">
import { ref, computed as derive } from "vue";

const shown = ref("0");
const handleDigit = (d: number) => {
  shown.value += d;
};
</script>

<template>
  <div :class="{ handleDigit: true, active: shown }">
    <!-- handleDigit in a comment -->
    <button v-for="d in [1, 2]" :key="d" @click="handleDigit(d)">{{ d }}</button>
    <Key :press="handleDigit" :text="'handleDigit'" :obj="{ handleDigit }" />
    <span title="handleDigit">{{ handleDigit.length }} {{ shown.handleDigit }}</span>
    <template v-if="true"><i @click="() => [...handleDigit.name]" /></template>
  </div>
</template>
"#;

/// `(line, column)` of each use, 1-based, with whether it is a shorthand.
fn places(text: &str, uses: &[Use]) -> Vec<(usize, usize, bool)> {
    uses.iter()
        .map(|u| {
            let line_start = text[..u.start].rfind('\n').map_or(0, |p| p + 1);
            (
                text[..u.start].matches('\n').count() + 1,
                u.start - line_start + 1,
                u.shorthand,
            )
        })
        .collect()
}

#[test]
fn template_uses_are_expressions_and_interpolations_not_keys_members_strings_or_plain_attributes() {
    let Some(Found::Uses(uses)) = template_uses(COMPONENT, "handleDigit") else {
        panic!("no template");
    };
    assert_eq!(
        places(COMPONENT, &uses),
        [
            (13, 50, false),
            (14, 18, false),
            (14, 61, true),
            (15, 34, false),
            (16, 48, false),
        ]
    );
}

#[test]
fn a_name_the_template_declares_too_is_not_read() {
    let text = COMPONENT.replace("v-for=\"d in", "v-for=\"handleDigit in");
    assert_eq!(
        template_uses(&text, "handleDigit"),
        Some(Found::Shadowed(text.find("\"handleDigit in").unwrap() + 1))
    );
    let slot =
        "<template>\n  <List #item=\"{ handleDigit }\">{{ handleDigit }}</List>\n</template>\n";
    assert!(matches!(
        template_uses(slot, "handleDigit"),
        Some(Found::Shadowed(_))
    ));
}

#[test]
fn only_top_level_setup_bindings_and_imports_are_declarations() {
    let at = |s: &str| COMPONENT.find(s).unwrap();
    assert_eq!(
        setup_declaration(COMPONENT, "handleDigit"),
        Some(at("handleDigit ="))
    );
    assert_eq!(setup_declaration(COMPONENT, "ref"), Some(at("ref,")));
    assert_eq!(setup_declaration(COMPONENT, "derive"), Some(at("derive }")));
    // An imported name renamed locally is not the local binding; a parameter is no
    // top-level binding.
    assert_eq!(setup_declaration(COMPONENT, "computed"), None);
    assert_eq!(setup_declaration(COMPONENT, "d"), None);
    let plain = COMPONENT.replace("<script setup lang=\"ts\">", "<script lang=\"ts\">");
    assert_eq!(setup_declaration(&plain, "handleDigit"), None);
}

#[test]
fn uses_are_read_only_where_vue_is_not_installed_and_for_the_binding_the_servers_found() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("src/Calc.vue");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let decl = Range {
        start: Position::new(4, 6),
        end: Position::new(4, 17),
    };
    let found = uses(
        &file,
        COMPONENT,
        "handleDigit",
        &[decl],
        Encoding::Utf16,
        "src",
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        found.lead,
        "(5 use(s) of `handleDigit` in the component's template were read from its text, not from the servers: `vue` is not installed here (no node_modules/vue from src up), so the Vue servers cannot link a template to its script; `npm install` in the project lets them)"
    );
    assert_eq!(
        found.ranges[2],
        (
            Range {
                start: Position::new(13, 60),
                end: Position::new(13, 71)
            },
            true
        )
    );
    assert_eq!(
        found.edits("handleDigit", "press")[2].new_text,
        "handleDigit: press"
    );
    assert_eq!(found.edits("handleDigit", "press")[0].new_text, "press");
    // Another binding of the same name (the servers did not answer for this declaration).
    let elsewhere = Range {
        start: Position::new(3, 6),
        end: Position::new(3, 17),
    };
    assert!(
        uses(
            &file,
            COMPONENT,
            "handleDigit",
            &[elsewhere],
            Encoding::Utf16,
            "src"
        )
        .unwrap()
        .is_none()
    );
    // With `vue` installed the servers link the template themselves.
    let vue = d.path().join("node_modules/vue");
    std::fs::create_dir_all(&vue).unwrap();
    std::fs::write(vue.join("package.json"), "{}").unwrap();
    assert!(
        uses(
            &file,
            COMPONENT,
            "handleDigit",
            &[decl],
            Encoding::Utf16,
            "src"
        )
        .unwrap()
        .is_none()
    );
}
