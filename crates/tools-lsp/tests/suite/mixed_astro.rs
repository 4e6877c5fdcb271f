//! An Astro site whose helper module is used from a `.ts` file and from an `.astro`
//! component's frontmatter: a `.ts` file's own tsserver never reads the component, so
//! references and renames from the `.ts` definition also ask the tsserver that carries
//! `@astrojs/ts-plugin`, and merge. One run (its servers started once) goes through:
//! references from the `.ts` definition naming the component's uses by path:line; a
//! definition and references from the component (the Astro server's) reaching the `.ts`
//! files; a rename that edits the `.ts` and `.astro` uses, after which `astro-check` (the
//! check of `@astrojs/check`) finds no error; and the rename back from the component.

use std::path::Path;

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;
use super::mixed_vue::{from_head, places};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";
const FILES: &[&str] = &[
    "src/components/Clicker.astro",
    "src/lib/counter.ts",
    "src/main.ts",
];

/// `astro-check`'s closing lines (its result), after it exited 0 (no error).
fn astro_check(p: &Project, program: &Path) -> Vec<String> {
    let out = std::process::Command::new(program)
        .env("NO_COLOR", "1")
        .current_dir(p.root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let at = stdout
        .find("Result (")
        .unwrap_or_else(|| panic!("no result in:\n{stdout}"));
    stdout[at..]
        .trim_end()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn astro_uses_are_found_and_renamed_from_the_ts_definition() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("@astrojs/language-server", "astro-ls").is_none()
    {
        return;
    }
    let Some(check) = require_binary("@astrojs/check", "astro-check") else {
        return;
    };
    let p = Project::from_fixture("astro_app", CONFIG);
    let before: Vec<String> = FILES.iter().map(|f| p.read(f)).collect();
    let all = [
        "src/components/Clicker.astro:2",
        "src/components/Clicker.astro:4",
        "src/lib/counter.ts:1",
        "src/main.ts:1",
        "src/main.ts:3",
    ];

    let refs = p
        .ok(json!({"action": "references", "file": "src/lib/counter.ts", "line": 1, "symbol": "makeCounter"}))
        .await;
    let refs = from_head(
        &refs,
        "5 reference(s) of `makeCounter` at src/lib/counter.ts:1:\n",
    );
    assert_eq!(places(refs), all, "{refs}");

    let def = p
        .ok(json!({"action": "definition", "file": "src/components/Clicker.astro", "line": 4, "symbol": "makeCounter"}))
        .await;
    let def = from_head(
        &def,
        "1 definition(s) of `makeCounter` at src/components/Clicker.astro:4:\n",
    );
    assert_eq!(places(def), ["src/lib/counter.ts:1"], "{def}");
    let refs = p
        .ok(json!({"action": "references", "file": "src/components/Clicker.astro", "line": 4, "symbol": "makeCounter"}))
        .await;
    let refs = from_head(
        &refs,
        "5 reference(s) of `makeCounter` at src/components/Clicker.astro:4:\n",
    );
    assert_eq!(places(refs), all, "{refs}");

    // The check may go on after the answer: its findings come with the next call's.
    let (out, checked) = p
        .rename_checked(json!({"file": "src/lib/counter.ts", "line": 1,
            "symbol": "makeCounter", "new_name": "makeTally"}))
        .await;
    assert!(!checked.contains("new diagnostic(s)"), "phantom: {checked}");
    assert_eq!(
        out.text
            .lines()
            .filter(|l| !l.starts_with("the check goes on: ")
                && !l.starts_with("checked after writing: "))
            .collect::<Vec<_>>(),
        [
            "renamed `makeCounter` at src/lib/counter.ts:1 to `makeTally`: 5 edit(s) in 3 file(s)",
            "  src/components/Clicker.astro: 2 edit(s)",
            "  src/lib/counter.ts: 1 edit(s)",
            "  src/main.ts: 2 edit(s)",
            "2 of those edit(s) come from typescript-language-server (typescript+astro), which reads files typescript-language-server does not: src/components/Clicker.astro:2, src/components/Clicker.astro:4",
        ],
        "{}",
        out.text
    );
    let lines: Vec<&str> = checked.lines().collect();
    assert!(
        lines.windows(2).any(|w| w
            == [
                "checked after writing: typescript-language-server links all 3 reference(s) of `makeCounter` from before to `makeTally`",
                "checked after writing: typescript-language-server (typescript+astro) links all 5 reference(s) of `makeCounter` from before to `makeTally`",
            ]),
        "{checked}"
    );
    for (f, old) in FILES.iter().zip(&before) {
        assert_eq!(p.read(f), old.replace("makeCounter", "makeTally"), "{f}");
    }
    assert_eq!(
        astro_check(&p, &check),
        [
            "Result (3 files): ",
            "- 0 errors",
            "- 0 warnings",
            "- 0 hints"
        ]
    );

    // The component's own server reads the renamed export too.
    let d = p
        .ok(json!({"action": "diagnostics", "file": "src/components/Clicker.astro"}))
        .await;
    assert_eq!(
        d.trim_end(),
        "no diagnostics in src/components/Clicker.astro (astro-ls)"
    );
    // And back from the component: the Astro server renames it there by aliasing the
    // import; its references in the `.ts` files join the edit, and the import takes the
    // plain name.
    let (out, checked) = p
        .rename_checked(json!({"file": "src/components/Clicker.astro", "line": 4,
            "symbol": "makeTally", "new_name": "makeCounter"}))
        .await;
    assert!(!checked.contains("new diagnostic(s)"), "phantom: {checked}");
    assert_eq!(
        out.text
            .lines()
            .filter(|l| !l.starts_with("the check goes on: ")
                && !l.starts_with("checked after writing: "))
            .collect::<Vec<_>>(),
        [
            "renamed `makeTally` at src/components/Clicker.astro:4 to `makeCounter`: 5 edit(s) in 3 file(s)",
            "  src/components/Clicker.astro: 2 edit(s)",
            "  src/lib/counter.ts: 1 edit(s)",
            "  src/main.ts: 2 edit(s)",
            "3 of those edit(s) are references astro-ls reports under the old name that its rename left out, renamed in the same change: src/lib/counter.ts:1, src/main.ts:1, src/main.ts:3",
        ],
        "{}",
        out.text
    );
    assert!(
        checked.lines().any(|l| l
            == "checked after writing: astro-ls links all 5 reference(s) of `makeTally` from before to `makeCounter`"),
        "{checked}"
    );
    for (f, old) in FILES.iter().zip(&before) {
        assert_eq!(&p.read(f), old, "{f}");
    }
    assert_eq!(
        astro_check(&p, &check),
        [
            "Result (3 files): ",
            "- 0 errors",
            "- 0 warnings",
            "- 0 hints"
        ]
    );
    p.close_and_check().await;
}
