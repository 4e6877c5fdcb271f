//! Bounded work on user input: patterns nested thousands of levels deep are refused before
//! anything recurses over them, and rewrite templates with thousands of metavariables are
//! expanded in linear time, stop at a size limit, and stop when the call is cancelled.

use serde_json::json;
use tools_core::{CallOptions, Surface};

use super::{grep, total, workspace, workspace_with};

#[tokio::test]
async fn a_5000_deep_pattern_is_refused_and_the_registry_keeps_serving() {
    let ws = workspace(&[("a.py", "f(g(x))\nitems = [[1], [2]]\ntotal = a + b + c\n")]);
    let nested_calls = format!("{}x{}", "f(".repeat(5000), ")".repeat(5000));
    let nested_lists = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    // No brackets at all: a left-leaning chain of 5,000 additions is as deep a tree.
    let long_sum = vec!["a"; 5000].join(" + ");
    for pattern in [&nested_calls, &nested_lists, &long_sum] {
        for surface in [Surface::READ_ONLY, Surface::FULL] {
            let err = ws
                .registry
                .call(surface, "ast_grep", grep(pattern, "python"))
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains("nests too deeply"), "{err}");
            assert!(err.contains("pattern"), "{err}");
        }
        let err = ws
            .err(
                "ast_edit",
                json!({"pattern": pattern, "rewrite": "y", "language": "python"}),
            )
            .await;
        assert!(err.contains("nests too deeply"), "{err}");
    }
    // Patterns as deep as real ones still work, and so does the next call.
    let out = ws.ok("ast_grep", grep("f(g($X))", "python")).await;
    assert_eq!(total(&out), 1, "{}", out.text);
    let out = ws.ok("ast_grep", grep("$A + $B + $C", "python")).await;
    assert_eq!(total(&out), 1, "{}", out.text);
}

#[tokio::test]
async fn a_template_of_8000_captures_is_expanded_whole_and_bounded() {
    let ws = workspace(&[("a.py", "dispose(handle)\n")]);
    let template = "$X ".repeat(8000);
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": template, "language": "python"}),
        )
        .await;
    let s = out.structured.as_ref().unwrap();
    assert_eq!(s["replacements"], 1, "{s}");
    // The diff of one 56,000-byte line is cut to the answer budget.
    assert!(out.text.len() <= 4096, "{} bytes", out.text.len());
    let id = s["edit_id"].as_str().unwrap().to_string();
    ws.ok("resolve", json!({"edit_id": id, "action": "accept"}))
        .await;
    let written = ws.read("a.py");
    assert_eq!(written.matches("handle").count(), 8000);

    // The same template over a file whose result would pass `max_file_bytes`: refused with
    // the reason, nothing staged.
    let src: String = (0..40).map(|i| format!("dispose(handle_{i})\n")).collect();
    let ws = workspace_with(&[("b.py", &src)], None, "[ast]\nmax_file_bytes = 200000\n");
    let err = ws
        .err(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": template, "language": "python"}),
        )
        .await;
    assert!(err.contains("larger than 200000 bytes"), "{err}");
    assert!(err.contains("nothing was staged"), "{err}");
    assert_eq!(ws.read("b.py"), src);
}

#[tokio::test]
async fn an_oversized_template_is_refused() {
    let ws = workspace(&[("a.py", "dispose(handle)\n")]);
    let err = ws
        .err(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "$X ".repeat(30_000), "language": "python"}),
        )
        .await;
    assert!(err.contains("rewrite template is 90000 bytes"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_rewrite_stops_and_stages_nothing() {
    // Compound captures make every replacement parse its instantiated template (to decide on
    // parentheses): thousands of them take long enough to cancel in the middle.
    let line = "dispose(a + b)\n".repeat(50);
    let files: Vec<(String, String)> = (0..40)
        .map(|i| (format!("pkg/m{i}.py"), line.clone()))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let ws = workspace(&refs);
    let template = "$X.close() or ".repeat(600) + "None";
    let cancel = tokio_util::sync::CancellationToken::new();
    let opts = CallOptions {
        cancel: Some(cancel.clone()),
        ..CallOptions::default()
    };
    let registry = ws.registry.clone();
    let call = tokio::spawn(async move {
        registry
            .call_with(
                Surface::FULL,
                "ast_edit",
                json!({"pattern": "dispose($X)", "rewrite": template, "language": "python"}),
                opts,
            )
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    cancel.cancel();
    let err = call.await.unwrap().unwrap_err().to_string();
    assert!(err.contains("cancelled"), "{err}");
    assert!(err.contains("nothing was"), "{err}");
    // Nothing was staged: the next edit is the first.
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "close($X)", "path": "pkg/m0.py"}),
        )
        .await;
    assert_eq!(out.structured.as_ref().unwrap()["edit_id"], "edit_1");
}
