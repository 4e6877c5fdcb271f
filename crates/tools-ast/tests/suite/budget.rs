//! The answer budget: on a large real-looking result the default text stays within about
//! 4 KB, leads with locations and matched lines, keeps internal counters out, says how to
//! get more — and asking for more returns the rest.

use std::collections::BTreeSet;

use serde_json::json;

use super::{Ws, locations, total, workspace, workspace_with};

/// Default text budget of an answer, and the structured result's (twice that: JSON repeats
/// its field names).
const TEXT_BUDGET: usize = 4096;
const STRUCTURED_BUDGET: usize = 8192;

fn structured_len(out: &tools_core::ToolOutput) -> usize {
    serde_json::to_string(out.structured.as_ref().unwrap())
        .unwrap()
        .len()
}

/// A workspace holding real Rust code: the sources of this repository's crates.
fn real_rust_workspace() -> Ws {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        collect_rs(&src, &crates, &mut files);
    }
    assert!(files.len() > 50, "{} files", files.len());
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    workspace(&refs)
}

fn collect_rs(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let p = entry.unwrap().path();
        if p.is_dir() {
            collect_rs(&p, base, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

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

#[tokio::test]
async fn real_code_answers_text_and_structured_stay_in_budget_and_page_through_everything() {
    let ws = real_rust_workspace();
    for pattern in [
        "fn $F($$$A) { $$$B }",
        "match $X { $$$A }",
        "impl $T for $S { $$$B }",
    ] {
        let args = json!({"pattern": pattern, "language": "rust"});
        let out = ws.ok("ast_grep", args.clone()).await;
        let all = total(&out) as usize;
        assert!(all > 10, "{pattern}: {all} matches");
        assert!(
            out.text.len() <= TEXT_BUDGET,
            "{pattern}: text {} bytes",
            out.text.len()
        );
        assert!(
            structured_len(&out) <= STRUCTURED_BUDGET,
            "{pattern}: structured {} bytes",
            structured_len(&out)
        );
        // The structured page is the text's page; counters are kept.
        let s = out.structured.as_ref().unwrap();
        let shown = s["shown"].as_u64().unwrap() as usize;
        assert_eq!(s["matches"].as_array().unwrap().len(), shown);
        assert_eq!(s["shown_in_text"].as_u64().unwrap() as usize, shown);
        for loc in locations(&out) {
            assert!(
                out.text.contains(&format!("{loc}  ")),
                "{loc} not in:\n{}",
                out.text
            );
        }
        assert!(s["parsed_files"].as_u64().unwrap() + s["cached_files"].as_u64().unwrap() > 0);
        assert!(s["cache"]["entries"].is_u64());
        assert_eq!(s["next_offset"], json!(shown), "{pattern}");
        assert_eq!(s["more_not_shown"], json!(all - shown));
        // Captures are trimmed the same way: no capture value spans lines.
        for m in s["matches"].as_array().unwrap() {
            for v in m["captures"].as_object().unwrap().values() {
                assert!(!v.as_str().unwrap().contains('\n'), "{v}");
            }
            for items in m["multi_captures"].as_object().unwrap().values() {
                assert!(items.as_array().unwrap().len() <= 8, "{items}");
            }
        }
        // `offset` pages through every match once, each page within budget.
        let mut seen = BTreeSet::new();
        seen.extend(locations(&out));
        let mut offset = shown;
        while offset < all {
            let mut next = args.clone();
            next["offset"] = json!(offset);
            let page = ws.ok("ast_grep", next).await;
            assert!(page.text.len() <= TEXT_BUDGET, "{}", page.text.len());
            assert!(
                structured_len(&page) <= STRUCTURED_BUDGET,
                "{}",
                structured_len(&page)
            );
            let got = locations(&page);
            assert!(!got.is_empty());
            offset += got.len();
            seen.extend(got);
        }
        assert_eq!(offset, all, "{pattern}");
        assert!(seen.len() <= all);
        // `max_results` asks for fewer, and the rest follow from `next_offset`.
        let mut few = args.clone();
        few["max_results"] = json!(3);
        let out = ws.ok("ast_grep", few.clone()).await;
        assert_eq!(locations(&out).len(), 3);
        assert_eq!(out.structured.as_ref().unwrap()["next_offset"], 3);
        assert!(
            out.text.contains("pass `offset: 3` for the next ones"),
            "{}",
            out.text
        );
        few["offset"] = json!(all - 2);
        let out = ws.ok("ast_grep", few).await;
        assert_eq!(locations(&out).len(), 2);
        assert_eq!(out.structured.as_ref().unwrap()["next_offset"], json!(null));
    }
}

#[tokio::test]
async fn a_real_edit_over_many_files_keeps_its_structured_result_in_budget() {
    let ws = real_rust_workspace();
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "$A.to_string()", "rewrite": "String::from($A)", "language": "rust"}),
        )
        .await;
    assert!(
        out.text.len() <= TEXT_BUDGET,
        "text {} bytes",
        out.text.len()
    );
    assert!(
        structured_len(&out) <= STRUCTURED_BUDGET,
        "structured {} bytes",
        structured_len(&out)
    );
    let s = out.structured.as_ref().unwrap();
    let files = s["file_count"].as_u64().unwrap();
    assert!(files > 20, "{files} files");
    let listed = s["files"].as_array().unwrap().len() as u64;
    assert!(listed > 0);
    assert_eq!(listed + s["files_more_not_shown"].as_u64().unwrap(), files);
    // The structured diff is the text's.
    let diff = s["diff"].as_str().unwrap();
    assert!(!diff.is_empty());
    assert!(out.text.contains(diff), "{diff}");
    assert!(s["replacements"].as_u64().unwrap() > files);
    let id = s["edit_id"].as_str().unwrap();
    ws.ok("resolve", json!({"edit_id": id, "action": "discard"}))
        .await;
}
