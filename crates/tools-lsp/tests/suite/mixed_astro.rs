//! An Astro site whose helper module is used from a `.ts` file and from an `.astro`
//! component's frontmatter: a `.ts` file's own tsserver never reads the component, so
//! references and renames from the `.ts` definition also ask the tsserver that carries
//! `@astrojs/ts-plugin`, and merge. One run (its servers started once) goes through:
//! references from the `.ts` definition naming the component's uses by path:line; a
//! definition and references from the component (the Astro server's) reaching the `.ts`
//! files; a rename that edits the `.ts` and `.astro` uses, after which `astro-check` (the
//! check of `@astrojs/check`) finds no error; and the rename back from the component.

use std::path::Path;

use tools_core::testing::require_binary;

use super::Project;
use super::mixed_components::{Component, round_trip};

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

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
    let component = Component {
        path: "src/components/Clicker.astro",
        co_server: "typescript-language-server (typescript+astro)",
        server: "astro-ls",
    };
    round_trip(&p, &component, |p| {
        assert_eq!(
            astro_check(p, &check),
            [
                "Result (3 files): ",
                "- 0 errors",
                "- 0 warnings",
                "- 0 hints"
            ]
        );
    })
    .await;
    p.close_and_check().await;
}
