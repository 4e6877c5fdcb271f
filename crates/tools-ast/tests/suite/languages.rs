//! Matching semantics on every language family: a repeated metavariable matches the same code
//! only, `$_` captures nothing, `$$$` takes a sequence; the spec's Dart example.

use serde_json::json;

use super::{grep, locations, total, workspace};

/// (language, file, source, pattern with a repeated variable, same pattern with two names)
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "python",
        "a.py",
        "f(a, a)\nf(a, b)\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "rust",
        "a.rs",
        "fn m() { f(a, a); f(a, b); }\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "c",
        "a.c",
        "void m() { f(a, a); f(a, b); }\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "cpp",
        "a.cpp",
        "void m() { f(a, a); f(a, b); }\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "go",
        "a.go",
        "package p\n\nfunc m() {\n\tf(a, a)\n\tf(a, b)\n}\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "javascript",
        "a.js",
        "f(a, a);\nf(a, b);\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "typescript",
        "a.ts",
        "f(a as T, a as T);\nf(a, b);\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "tsx",
        "a.tsx",
        "f(<A/>, <A/>);\nf(<A/>, <B/>);\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "java",
        "A.java",
        "class A { void m() { f(a, a); f(a, b); } }\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "kotlin",
        "a.kt",
        "fun m() {\n    f(a, a)\n    f(a, b)\n}\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "swift",
        "a.swift",
        "f(a, a)\nf(a, b)\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "csharp",
        "a.cs",
        "class A { void M() { F(a, a); F(a, b); } }\n",
        "F($X, $X)",
        "F($X, $Y)",
    ),
    (
        "dart",
        "a.dart",
        "void m() { f(a, a); f(a, b); }\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "ruby",
        "a.rb",
        "f(a, a)\nf(a, b)\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "php",
        "a.php",
        "<?php\nf($a, $a);\nf($a, $b);\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    (
        "lua",
        "a.lua",
        "f(a, a)\nf(a, b)\n",
        "f($X, $X)",
        "f($X, $Y)",
    ),
    ("bash", "a.sh", "cp a a\ncp a b\n", "cp $X $X", "cp $X $Y"),
    (
        "json",
        "a.json",
        "{\"a\": [1, 1], \"b\": [1, 2]}\n",
        "[$X, $X]",
        "[$X, $Y]",
    ),
    (
        "yaml",
        "a.yaml",
        "x: [1, 1]\ny: [1, 2]\n",
        "[$X, $X]",
        "[$X, $Y]",
    ),
    (
        "css",
        "a.css",
        "a { margin: 1px 1px; }\nb { margin: 1px 2px; }\n",
        "$S { margin: $X $X; }",
        "$S { margin: $X $Y; }",
    ),
    (
        "html",
        "a.html",
        "<a href=\"x\" title=\"x\"></a>\n<a href=\"x\" title=\"y\"></a>\n",
        "<a href=\"$X\" title=\"$X\"></a>",
        "<a href=\"$X\" title=\"$Y\"></a>",
    ),
];

#[tokio::test]
async fn repeated_metavariables_match_the_same_code_in_every_language() {
    let mut failures = Vec::new();
    for (lang, file, src, same, different) in CASES {
        let ws = workspace(&[(file, src)]);
        let same_out = ws.call("ast_grep", grep(same, lang)).await;
        let diff_out = ws.call("ast_grep", grep(different, lang)).await;
        match (same_out, diff_out) {
            (Ok(s), Ok(d)) => {
                if total(&s) != 1 || total(&d) != 2 {
                    failures.push(format!(
                        "{lang}: `{same}` matched {} (want 1), `{different}` matched {} (want 2)\n{}\n{}",
                        total(&s),
                        total(&d),
                        s.text,
                        d.text
                    ));
                }
            }
            (a, b) => failures.push(format!("{lang}: {:?} / {:?}", a.err(), b.err())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn wildcards_and_sequences() {
    let ws = workspace(&[("a.py", "f(a, a)\nf(a, b)\nf()\nf(1, 2, 3)\n")]);
    // `$_` (and `$_X`) capture nothing, so two of them need not match the same code.
    assert_eq!(
        total(&ws.ok("ast_grep", grep("f($_, $_)", "python")).await),
        2
    );
    assert_eq!(
        total(&ws.ok("ast_grep", grep("f($_A, $_A)", "python")).await),
        2
    );
    let out = ws.ok("ast_grep", grep("f($$$ARGS)", "python")).await;
    assert_eq!(total(&out), 4);
    let s = out.structured.unwrap();
    assert_eq!(
        s["matches"][3]["multi_captures"]["ARGS"],
        json!(["1", "2", "3"])
    );
    assert_eq!(s["matches"][2]["multi_captures"]["ARGS"], json!([]));
    assert_eq!(s["matches"][1]["captures"], json!({}));
    let out = ws.ok("ast_grep", grep("f($A, $B)", "python")).await;
    let s = out.structured.unwrap();
    assert_eq!(s["matches"][1]["captures"], json!({"A": "a", "B": "b"}));
}

const DART: &str = "\
class Owner {
  void close() {
    if (controller != null) controller.dispose();
    if (focus != null) other.dispose();
    if (node != null) {
      node.dispose();
    }
    dispose(&handle);
  }
}
";

#[tokio::test]
async fn the_spec_dart_examples() {
    let ws = workspace(&[("lib/owner.dart", DART)]);
    // Same variable matches, a different one does not.
    let out = ws
        .ok("ast_grep", grep("if ($X != null) $X.dispose()", "dart"))
        .await;
    assert_eq!(locations(&out), vec!["lib/owner.dart:3:5"], "{}", out.text);
    assert!(out.text.contains("$X = controller"), "{}", out.text);
    // Braced, written as in the source.
    let out = ws
        .ok(
            "ast_grep",
            grep("if ($X != null) { $X.dispose(); }", "dart"),
        )
        .await;
    assert_eq!(locations(&out), vec!["lib/owner.dart:5:5"], "{}", out.text);
    // A bare expression, which is no Dart program on its own.
    let out = ws.ok("ast_grep", grep("$X.dispose()", "dart")).await;
    assert_eq!(total(&out), 3, "{}", out.text);
    // The language is inferred from the file.
    let out = ws
        .ok(
            "ast_grep",
            json!({"pattern": "$X.dispose()", "path": "lib/owner.dart"}),
        )
        .await;
    assert_eq!(total(&out), 3);
}
