//! The answer budget: on a large real-looking result the default text stays within about
//! 4 KB, leads with locations and matched lines, keeps internal counters out, says how to
//! get more — and asking for more returns the rest.

use std::collections::BTreeSet;

use serde_json::json;

use super::{locations, total, workspace, workspace_with};

/// A module of `n` functions with long bodies.
fn big_module(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            let body: String = (0..25)
                .map(|j| {
                    format!("    let value_{j} = compute_{prefix}_{i}(input, {j}) * factor_{j};\n")
                })
                .collect();
            format!("fn {prefix}_{i}(input: u64) -> u64 {{\n{body}    input\n}}\n\n")
        })
        .collect()
}

#[tokio::test]
async fn fifty_matches_with_whole_function_captures_fit_in_4_kb_and_page_on() {
    let a = big_module("alpha", 30);
    let b = big_module("beta", 30);
    let ws = workspace(&[("src/alpha.rs", &a), ("src/beta.rs", &b)]);
    let args = json!({"pattern": "fn $F($$$A) -> $R { $$$B }", "language": "rust"});
    let out = ws.ok("ast_grep", args.clone()).await;
    assert_eq!(total(&out), 60);
    assert!(
        out.text.len() <= 4096,
        "{} bytes:\n{}",
        out.text.len(),
        out.text
    );
    // Locations and matched lines first; the captured body by its first and last lines.
    assert!(
        out.text
            .contains("src/alpha.rs:1:1  fn alpha_0(input: u64) -> u64 {  (28 lines)"),
        "{}",
        out.text
    );
    assert!(out.text.contains("$$$B = let value_0"), "{}", out.text);
    assert!(!out.text.contains("value_12"), "{}", out.text);
    // No counters in the text; they are in the structured result.
    for internal in ["ruled out", "parsed", "parse cache", "bytes"] {
        assert!(
            !out.text.contains(internal),
            "`{internal}` in:\n{}",
            out.text
        );
    }
    let s = out.structured.as_ref().unwrap();
    assert_eq!(s["parsed_files"], 2);
    assert!(s["cache"].is_object());
    // One line says how to get more, and `offset` pages through everything once.
    let shown = s["shown_in_text"].as_u64().unwrap() as usize;
    assert!((5..50).contains(&shown), "{shown}");
    assert!(
        out.text
            .contains(&format!("pass `offset: {shown}` for the next ones")),
        "{}",
        out.text
    );
    let mut seen: Vec<String> = locations(&out)[..shown].to_vec();
    let mut offset = shown;
    while offset < 60 {
        let mut next = args.clone();
        next["offset"] = json!(offset);
        let page = ws.ok("ast_grep", next).await;
        assert!(page.text.len() <= 4096, "{}", page.text.len());
        let n = page.structured.as_ref().unwrap()["shown_in_text"]
            .as_u64()
            .unwrap() as usize;
        assert!(n > 0);
        seen.extend(locations(&page)[..n].iter().cloned());
        offset += n;
    }
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), 60, "every match once");
    assert_eq!(seen.len(), 60, "every match once");
}

#[tokio::test]
async fn the_budget_is_configurable_per_tool() {
    let a = big_module("alpha", 30);
    let ws = workspace_with(
        &[("src/alpha.rs", &a)],
        None,
        "[ast]\ngrep_answer_bytes = 16384\nedit_answer_bytes = 1024\n",
    );
    let out = ws
        .ok(
            "ast_grep",
            json!({"pattern": "fn $F($$$A) -> $R { $$$B }", "language": "rust"}),
        )
        .await;
    assert!(
        out.text.len() > 4096 && out.text.len() <= 16384,
        "{}",
        out.text.len()
    );
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "input", "rewrite": "source", "language": "rust"}),
        )
        .await;
    assert!(out.text.len() <= 1024, "{}:\n{}", out.text.len(), out.text);
    assert!(
        out.text.contains("call resolve with edit_id"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn an_edit_over_many_files_shows_the_diffs_that_fit_and_says_the_rest_are_staged() {
    let files: Vec<(String, String)> = (0..20)
        .map(|i| (format!("src/m{i:02}.rs"), big_module(&format!("m{i}"), 3)))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let ws = workspace(&refs);
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "$A * $B", "rewrite": "$B * $A", "language": "rust"}),
        )
        .await;
    assert!(out.text.len() <= 4096, "{} bytes", out.text.len());
    assert!(
        out.text
            .starts_with("(proposed) 1500 replacement(s) in 20 file(s)"),
        "{}",
        out.text
    );
    assert!(out.text.contains("--- a/src/m00.rs"), "{}", out.text);
    assert!(
        out.text
            .contains("more file(s) are not shown (every replacement is staged all the same)"),
        "{}",
        out.text
    );
    let s = out.structured.as_ref().unwrap();
    let id = s["edit_id"].as_str().unwrap().to_string();
    let done = ws
        .ok("resolve", json!({"edit_id": id, "action": "accept"}))
        .await;
    assert!(done.text.contains("written to 20 file(s)"), "{}", done.text);
    assert!(
        ws.read("src/m19.rs")
            .contains("factor_3 * compute_m19_2(input, 3)")
    );
}
