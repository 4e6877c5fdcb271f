//! The round trip Svelte and Astro projects share: a helper module `src/lib/counter.ts`
//! exporting `makeCounter`, used twice from `src/main.ts` and twice from one component.
//! References from the `.ts` definition name the component's uses by path:line (merged from
//! the tsserver that carries the framework's plugin); a definition and references from the
//! component (its own server's) reach the `.ts` files; a rename from the `.ts` file edits
//! the component too and the framework's checker stays clean; the rename back from the
//! component, which its server makes by aliasing the import, reaches the `.ts` files too
//! and restores every file.

use serde_json::json;

use super::Project;
use super::mixed_vue::{from_head, places};

/// One framework's names in the shared fixture layout.
pub(super) struct Component<'a> {
    /// The component's path (`src/lib/Clicker.svelte`).
    pub path: &'a str,
    /// How the answers name the tsserver carrying the plugin
    /// (`typescript-language-server (typescript+svelte)`).
    pub co_server: &'a str,
    /// How the answers name the component's own server (`svelteserver`).
    pub server: &'a str,
}

/// The lines of a rename's answer without its check lines, which may come with the next
/// answer instead.
fn edit_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            !l.starts_with("the check goes on: ") && !l.starts_with("checked after writing: ")
        })
        .collect()
}

/// Runs the round trip on `p`; `project_clean` asserts the framework's own checker finds
/// no problem (after the rename and after the rename back).
pub(super) async fn round_trip(p: &Project, c: &Component<'_>, project_clean: impl Fn(&Project)) {
    let files = [c.path, "src/lib/counter.ts", "src/main.ts"];
    let before: Vec<String> = files.iter().map(|f| p.read(f)).collect();
    let in_component = |line| format!("{}:{line}", c.path);
    let mut all = vec![
        in_component(2),
        in_component(4),
        "src/lib/counter.ts:1".to_string(),
        "src/main.ts:1".to_string(),
        "src/main.ts:3".to_string(),
    ];
    all.sort();

    let refs = p
        .ok(json!({"action": "references", "file": "src/lib/counter.ts", "line": 1, "symbol": "makeCounter"}))
        .await;
    let refs = from_head(
        &refs,
        "5 reference(s) of `makeCounter` at src/lib/counter.ts:1:\n",
    );
    assert_eq!(places(refs), all, "{refs}");

    let def = p
        .ok(json!({"action": "definition", "file": c.path, "line": 4, "symbol": "makeCounter"}))
        .await;
    let def = from_head(
        &def,
        &format!("1 definition(s) of `makeCounter` at {}:\n", in_component(4)),
    );
    assert_eq!(places(def), ["src/lib/counter.ts:1"], "{def}");
    let refs = p
        .ok(json!({"action": "references", "file": c.path, "line": 4, "symbol": "makeCounter"}))
        .await;
    let refs = from_head(
        &refs,
        &format!("5 reference(s) of `makeCounter` at {}:\n", in_component(4)),
    );
    assert_eq!(places(refs), all, "{refs}");

    // The check may go on after the answer: its findings come with the next call's.
    let (out, checked) = p
        .rename_checked(json!({"file": "src/lib/counter.ts", "line": 1,
            "symbol": "makeCounter", "new_name": "makeTally"}))
        .await;
    assert!(!checked.contains("new diagnostic(s)"), "phantom: {checked}");
    let component_edits = format!("  {}: 2 edit(s)", c.path);
    let mut listed = [
        component_edits.as_str(),
        "  src/lib/counter.ts: 1 edit(s)",
        "  src/main.ts: 2 edit(s)",
    ];
    listed.sort();
    let mut expected = vec![
        "renamed `makeCounter` at src/lib/counter.ts:1 to `makeTally`: 5 edit(s) in 3 file(s)"
            .to_string(),
    ];
    expected.extend(listed.iter().map(|l| l.to_string()));
    expected.push(format!(
        "2 of those edit(s) come from {}, which reads files typescript-language-server does not: {}, {}",
        c.co_server,
        in_component(2),
        in_component(4)
    ));
    assert_eq!(edit_lines(&out.text), expected, "{}", out.text);
    let lines: Vec<&str> = checked.lines().collect();
    let pair = [
        "checked after writing: typescript-language-server links all 3 reference(s) of `makeCounter` from before to `makeTally`".to_string(),
        format!(
            "checked after writing: {} links all 5 reference(s) of `makeCounter` from before to `makeTally`",
            c.co_server
        ),
    ];
    assert!(lines.windows(2).any(|w| w == pair), "{checked}");
    for (f, old) in files.iter().zip(&before) {
        assert_eq!(p.read(f), old.replace("makeCounter", "makeTally"), "{f}");
    }
    project_clean(p);

    // The component's own server reads the renamed export too.
    let d = p.ok(json!({"action": "diagnostics", "file": c.path})).await;
    assert_eq!(
        d.trim_end(),
        format!("no diagnostics in {} ({})", c.path, c.server)
    );
    // And back from the component: its server renames it there by aliasing the import
    // (`makeTally as makeCounter`); its references in the `.ts` files join the edit, and
    // the import takes the plain name.
    let (out, checked) = p
        .rename_checked(json!({"file": c.path, "line": 4,
            "symbol": "makeTally", "new_name": "makeCounter"}))
        .await;
    assert!(!checked.contains("new diagnostic(s)"), "phantom: {checked}");
    let mut expected = vec![format!(
        "renamed `makeTally` at {} to `makeCounter`: 5 edit(s) in 3 file(s)",
        in_component(4)
    )];
    expected.extend(listed.iter().map(|l| l.to_string()));
    expected.push(format!(
        "3 of those edit(s) are references {} reports under the old name that its rename left out, renamed in the same change: src/lib/counter.ts:1, src/main.ts:1, src/main.ts:3",
        c.server
    ));
    assert_eq!(edit_lines(&out.text), expected, "{}", out.text);
    let back = format!(
        "checked after writing: {} links all 5 reference(s) of `makeTally` from before to `makeCounter`",
        c.server
    );
    assert!(checked.lines().any(|l| l == back), "{checked}");
    for (f, old) in files.iter().zip(&before) {
        assert_eq!(&p.read(f), old, "{f}");
    }
    project_clean(p);
}
