//! A Svelte app whose helper module is used from a `.ts` file and a `.svelte` component: a
//! `.ts` file's own tsserver never reads the component, so references and renames from the
//! `.ts` definition also ask the tsserver that carries `typescript-svelte-plugin`, and merge.
//! One run (its servers started once) goes through: references before `svelte` is installed
//! in the project (the plugin then reads no component, and the answer says so); references
//! naming the component's uses by path:line once it is; a definition from the component
//! (svelte-language-server's) landing on the `.ts` export; a rename that edits the `.ts` and
//! `.svelte` uses, after which `svelte-check` finds no error; and the rename back from the
//! component, which reaches the `.ts` files too.

use std::path::Path;

use serde_json::json;
use tools_core::testing::require_binary;

use super::Project;
use super::mixed_components::{Component, round_trip};
use super::mixed_vue::places;

const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

/// The `svelte` package installed beside `svelte-check`, linked into the project as its
/// dependency (the plugin and svelte-check read Svelte's compiler and types from there).
fn link_svelte(p: &Project, svelte_check: &Path) {
    let svelte = tools_core::testing::node_modules_of(svelte_check).join("svelte");
    assert!(
        svelte.join("package.json").is_file(),
        "no svelte beside {svelte_check:?}"
    );
    std::fs::create_dir_all(p.root().join("node_modules")).unwrap();
    crate::suite::link_dir(&svelte, p.root().join("node_modules/svelte")).unwrap();
}

/// `svelte-check`'s machine output for the project: its `ERROR`/`WARNING` lines and the
/// closing `COMPLETED` line, without the time stamps.
fn svelte_check(p: &Project, program: &Path) -> Vec<String> {
    let out = std::process::Command::new(program)
        .args(["--tsconfig", "./tsconfig.json", "--output", "machine"])
        .current_dir(p.root())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest.to_string()))
        .filter(|l| !l.starts_with("START "))
        .collect()
}

#[tokio::test]
async fn svelte_uses_are_found_and_renamed_from_the_ts_definition() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("svelte-language-server", "svelteserver").is_none()
    {
        return;
    }
    let Some(check) = require_binary("svelte-check", "svelte-check") else {
        return;
    };
    let p = Project::from_fixture("svelte_app", CONFIG);
    let refs_args = json!({"action": "references", "file": "src/lib/counter.ts", "line": 1, "symbol": "makeCounter"});

    // Without `svelte` in node_modules the plugin reads no component: the answer says so.
    let refs = p.ok(refs_args).await;
    let three = "3 reference(s) of `makeCounter` at src/lib/counter.ts:1:\n";
    let at = refs
        .find(three)
        .unwrap_or_else(|| panic!("no head in:\n{refs}"));
    let leads: Vec<&str> = refs[..at]
        .lines()
        .filter(|l| !l.starts_with("(not final: "))
        .collect();
    assert_eq!(
        leads,
        [
            "(.svelte files were not searched: typescript-svelte-plugin reads them only where `svelte` is installed, and there is no node_modules/svelte from . up (`npm install` in the project))"
        ],
        "{refs}"
    );
    assert_eq!(
        places(&refs[at..]),
        ["src/lib/counter.ts:1", "src/main.ts:1", "src/main.ts:3"],
        "{refs}"
    );

    link_svelte(&p, &check);
    let component = Component {
        path: "src/lib/Clicker.svelte",
        co_server: "typescript-language-server (typescript+svelte)",
        server: "svelteserver",
    };
    round_trip(&p, &component, |p| {
        // The file count is the project's and Svelte's own types: only the problems matter.
        let checked = svelte_check(p, &check);
        assert!(
            checked.len() == 1
                && checked[0].starts_with("COMPLETED ")
                && checked[0].ends_with(" FILES 0 ERRORS 0 WARNINGS 0 FILES_WITH_PROBLEMS"),
            "{checked:?}"
        );
    })
    .await;
    p.close_and_check().await;
}
