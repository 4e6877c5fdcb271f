//! `ast_grep` results and failure cases: order, caps, the walk, language choice, bad input.

use serde_json::json;

use super::{grep, locations, total, workspace, workspace_with};

#[tokio::test]
async fn results_are_ordered_capped_and_located() {
    let mut files = Vec::new();
    let texts: Vec<String> = (0..6)
        .map(|i| format!("x = 1\nprint(v{i})\nif True:\n    print(w{i})\n"))
        .collect();
    let names: Vec<String> = (0..6).rev().map(|i| format!("pkg/m{i}.py")).collect();
    for (n, t) in names.iter().zip(&texts) {
        files.push((n.as_str(), t.as_str()));
    }
    let ws = workspace(&files);
    let out = ws
        .ok(
            "ast_grep",
            json!({"pattern": "print($A)", "max_results": 5}),
        )
        .await;
    assert_eq!(total(&out), 12);
    assert_eq!(
        locations(&out),
        vec![
            "pkg/m0.py:2:1",
            "pkg/m0.py:4:5",
            "pkg/m1.py:2:1",
            "pkg/m1.py:4:5",
            "pkg/m2.py:2:1"
        ]
    );
    assert!(
        out.text
            .contains("7 more match(es) not shown (of 12): pass `offset: 5`"),
        "{}",
        out.text
    );
    assert_eq!(out.structured.as_ref().unwrap()["more_not_shown"], 7);
    // The next page starts where the first one ended.
    let next = ws
        .ok(
            "ast_grep",
            json!({"pattern": "print($A)", "max_results": 5, "offset": 5}),
        )
        .await;
    assert_eq!(
        locations(&next),
        vec![
            "pkg/m2.py:4:5",
            "pkg/m3.py:2:1",
            "pkg/m3.py:4:5",
            "pkg/m4.py:2:1",
            "pkg/m4.py:4:5"
        ]
    );
    assert!(next.text.contains("`offset: 10`"), "{}", next.text);
    // The same query again: same answer, now from the parse cache.
    let again = ws
        .ok(
            "ast_grep",
            json!({"pattern": "print($A)", "max_results": 5}),
        )
        .await;
    assert_eq!(locations(&again), locations(&out));
    assert_eq!(again.structured.as_ref().unwrap()["cached_files"], 6);
    assert_eq!(again.structured.as_ref().unwrap()["parsed_files"], 0);
    assert!(
        ws.err(
            "ast_grep",
            json!({"pattern": "print($A)", "max_results": 0})
        )
        .await
        .contains("max_results")
    );
}

#[tokio::test]
async fn long_matches_are_cut_visibly() {
    let body: String = (0..30).map(|i| format!("    a{i} = {i}\n")).collect();
    let src = format!("def f():\n{body}");
    let ws = workspace(&[("a.py", &src)]);
    let out = ws.ok("ast_grep", grep("def $F(): $$$B", "python")).await;
    // The match is shown by its first line, the sequence by its first and last items.
    assert!(
        out.text.contains("a.py:1:1  def f():  (31 lines)"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("$$$B = a0 = 0 … [28 lines] … a29 = 29"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("a15 = 15"), "{}", out.text);
    // The structured result is trimmed the same way; its span locates the whole match.
    let m = &out.structured.as_ref().unwrap()["matches"][0];
    assert_eq!(m["text"], "def f(): … [29 lines] … a29 = 29", "{m}");
    assert_eq!(m["lines"], 31, "{m}");
    assert_eq!((&m["line"], &m["end_line"]), (&json!(1), &json!(31)), "{m}");
    assert_eq!(
        m["multi_captures"]["B"],
        json!(["a0 = 0 … [28 lines] … a29 = 29"]),
        "{m}"
    );
    // A long sequence lists its first items and counts the rest.
    let args: Vec<String> = (0..12).map(|i| format!("x{i}")).collect();
    let ws = workspace(&[("b.py", &format!("g({})\n", args.join(", ")))]);
    let out = ws.ok("ast_grep", grep("g($$$ARGS)", "python")).await;
    let m = &out.structured.as_ref().unwrap()["matches"][0];
    assert_eq!(m["multi_captures"]["ARGS"], json!(args[..8]), "{m}");
    assert_eq!(m["multi_captures_more"]["ARGS"], 4, "{m}");
    assert!(out.text.contains("(12 items)"), "{}", out.text);
}

#[tokio::test]
async fn the_walk_skips_ignored_build_binary_and_large_files() {
    let big = format!("print(1)\n{}", "x = 1\n".repeat(200));
    let ws = workspace_with(
        &[
            ("src/a.py", "print(1)\n"),
            (".gitignore", "generated/\n"),
            ("generated/g.py", "print(1)\n"),
            ("target/t.py", "print(1)\n"),
            ("node_modules/n.py", "print(1)\n"),
            ("big.py", &big),
            ("latin1.py", "print(1)\n"),
        ],
        None,
        "[ast]\nmax_file_bytes = 1000\n",
    );
    std::fs::write(ws.root().join("blob.py"), b"print(1)\n\0\0\0").unwrap();
    std::fs::write(ws.root().join("latin1.py"), b"print('\xe9')\n").unwrap();
    let out = ws.ok("ast_grep", grep("print($A)", "python")).await;
    assert_eq!(locations(&out), vec!["src/a.py:1:1"], "{}", out.text);
    let s = out.structured.as_ref().unwrap();
    assert_eq!(s["skipped"]["total"], 3, "{s}");
    assert_eq!(
        s["skipped"]["by_reason"],
        json!({"binary": 1, "not UTF-8": 1, "too large": 1})
    );
    assert!(
        out.text
            .contains("skipped 3 file(s) (1 too large, 1 binary, 1 not UTF-8)"),
        "{}",
        out.text
    );
    let listed: Vec<&str> = s["skipped"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec!["big.py", "blob.py", "latin1.py"]);
}

#[tokio::test]
async fn the_prefilter_never_parses_files_without_the_literals() {
    let ws = workspace(&[
        ("a.py", "obj.dispose()\n"),
        ("b.py", "obj.close()\n"),
        ("c.py", "x = 'dispose'\n"),
    ]);
    let out = ws.ok("ast_grep", grep("$X.dispose()", "python")).await;
    let s = out.structured.as_ref().unwrap();
    assert_eq!(total(&out), 1);
    assert_eq!(s["searched_files"], 3);
    assert_eq!(s["prefiltered_files"], 1);
    assert_eq!(s["parsed_files"], 2);
}

#[tokio::test]
async fn a_file_ruled_out_by_one_literal_is_still_searched_for_another() {
    let ws = workspace(&[
        ("a.py", "obj.dispose()\n"),
        ("b.py", "obj.close()\n"),
        ("c.py", "x = 1\n"),
    ]);
    assert_eq!(
        total(&ws.ok("ast_grep", grep("$X.dispose()", "python")).await),
        1
    );
    // b.py is remembered as lacking `dispose`; a pattern needing `close` must still read it.
    let out = ws.ok("ast_grep", grep("$X.close()", "python")).await;
    assert_eq!(total(&out), 1, "{}", out.text);
    let counts = |s: &serde_json::Value| {
        let n = |k: &str| s[k].as_u64().unwrap();
        (n("parsed_files"), n("cached_files"), n("prefiltered_files"))
    };
    assert_eq!(counts(out.structured.as_ref().unwrap()), (1, 0, 2));
    // `dispose` again: nothing is parsed. a.py's tree is cached; b.py (parsed for `close`) is
    // ruled out by its cached tree's text, c.py by the literal remembered as absent.
    let again = ws.ok("ast_grep", grep("$X.dispose()", "python")).await;
    assert_eq!(total(&again), 1);
    assert_eq!(counts(again.structured.as_ref().unwrap()), (0, 1, 2));
    // A file that changes is read again: its remembered literals no longer hold.
    std::fs::write(ws.root().join("b.py"), "obj.dispose()  # now\n").unwrap();
    let changed = ws.ok("ast_grep", grep("$X.dispose()", "python")).await;
    assert_eq!(total(&changed), 2, "{}", changed.text);
}

#[tokio::test]
async fn language_is_required_inferred_or_refused() {
    let ws = workspace(&[("a.py", "f(1)\n"), ("b.rs", "fn m() { f(1); }\n")]);
    let e = ws.err("ast_grep", json!({"pattern": "f($A)"})).await;
    assert!(
        e.contains("several languages") && e.contains("python") && e.contains("rust"),
        "{e}"
    );
    let e = ws.err("ast_grep", grep("f($A)", "cobol")).await;
    assert!(
        e.contains("unknown language `cobol`") && e.contains("dart"),
        "{e}"
    );
    // A folder with one language: inferred.
    let ws1 = workspace(&[("src/a.py", "f(1)\n"), ("README", "f(1)\n")]);
    assert_eq!(
        total(&ws1.ok("ast_grep", json!({"pattern": "f($A)"})).await),
        1
    );
    // A file: from its extension.
    let out = ws
        .ok("ast_grep", json!({"pattern": "f($A)", "path": "b.rs"}))
        .await;
    assert_eq!(locations(&out), vec!["b.rs:1:10"]);
    let e = ws
        .err("ast_grep", json!({"pattern": "f($A)", "path": "nope/x.py"}))
        .await;
    assert!(e.contains("does not exist"), "{e}");
    let e = ws
        .err(
            "ast_grep",
            json!({"pattern": "f($A)", "path": "../outside"}),
        )
        .await;
    assert!(e.contains("outside the workspace"), "{e}");
    let e = ws.err("ast_grep", json!({"path": "a.py"})).await;
    assert!(e.contains("pattern"), "{e}");
}

#[tokio::test]
async fn a_pattern_that_parses_nowhere_is_an_error_with_its_location() {
    let ws = workspace(&[("a.dart", "void m() { a.dispose(); }\n")]);
    let e = ws
        .err("ast_grep", grep("if ($X != null {\n  $X.dispose(", "dart"))
        .await;
    assert!(e.contains("does not parse as dart code"), "{e}");
    assert!(e.contains("pattern line"), "{e}");
    assert!(e.contains('^'), "{e}");
    let e = ws.err("ast_grep", grep("a; b", "python")).await;
    assert!(e.contains("one node"), "{e}");
}

#[tokio::test]
async fn no_matches_is_said_plainly() {
    let ws = workspace(&[("a.py", "f(1)\n")]);
    let out = ws.ok("ast_grep", grep("g($A)", "python")).await;
    assert!(out.text.starts_with("no matches"), "{}", out.text);
    assert_eq!(total(&out), 0);
}

#[tokio::test]
async fn disabled_by_configuration_registers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agent-tools.toml"),
        "[ast]\nenabled = false\n",
    )
    .unwrap();
    let run = tools_core::Run::new(tools_core::RunOptions::at(dir.path()).unwrap()).unwrap();
    assert!(tools_ast::family(&run).unwrap().is_none());
    std::fs::write(dir.path().join("agent-tools.toml"), "[ast]\nbogus = 1\n").unwrap();
    let run = tools_core::Run::new(tools_core::RunOptions::at(dir.path()).unwrap()).unwrap();
    assert!(tools_ast::family(&run).is_err());
}
