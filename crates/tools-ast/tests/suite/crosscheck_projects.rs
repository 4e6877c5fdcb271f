//! Patterns as the ast-grep CLI reads them, cross-checked on projects laid out as real ones
//! are (a Cargo workspace of two crates, a Go module of two packages) and on item-level
//! patterns in every bundled language: our match set must equal the CLI's, and the CLI must
//! find something (a pattern both read as nothing would prove nothing).

use serde_json::json;

use super::crosscheck::{cli_matches, our_matches};
use super::{workspace, write_files};

const CARGO_WORKSPACE: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/sink\", \"crates/app\"]\nresolver = \"2\"\n",
    ),
    (
        "crates/sink/Cargo.toml",
        "[package]\nname = \"sink\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    ),
    (
        "crates/sink/src/lib.rs",
        r#"//! Byte sinks.

pub trait Sink {
    fn put(&mut self, byte: u8);
    fn flush(&mut self) {}
}

struct Buffer {
    data: Vec<u8>,
    limit: usize,
}

pub struct Counter {
    pub count: usize,
}

struct Marker;

impl Sink for Buffer {
    fn put(&mut self, byte: u8) {
        if self.data.len() < self.limit {
            self.data.push(byte);
        }
    }
}

impl Sink for Counter {
    fn put(&mut self, _byte: u8) {
        self.count += 1;
    }
    fn flush(&mut self) {
        self.count = 0;
    }
}

impl<S: Sink> Sink for Box<S> {
    fn put(&mut self, byte: u8) {
        (**self).put(byte)
    }
}

impl Buffer {
    fn new(limit: usize) -> Self {
        Buffer { data: Vec::new(), limit }
    }
}

pub fn classify(byte: u8) -> &'static str {
    match byte {
        b'0'..=b'9' => "digit",
        b'a'..=b'z' | b'A'..=b'Z' => "letter",
        _ => "other",
    }
}
"#,
    ),
    (
        "crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nsink = { path = \"../sink\" }\n",
    ),
    (
        "crates/app/src/main.rs",
        r#"use std::fmt;

struct Config {
    verbose: bool,
    name: String,
}

enum Mode {
    Fast,
    Slow(u32),
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Fast => write!(f, "fast"),
            Mode::Slow(n) => write!(f, "slow {n}"),
        }
    }
}

fn pick(args: &[String]) -> Mode {
    match args.first().map(String::as_str) {
        Some("fast") => Mode::Fast,
        Some(other) => match other.parse() {
            Ok(n) => Mode::Slow(n),
            Err(_) => Mode::Fast,
        },
        None => Mode::Fast,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = Config { verbose: args.is_empty(), name: "app".into() };
    if config.verbose {
        println!("{} {}", config.name, pick(&args));
    }
}
"#,
    ),
];

const GO_MODULE: &[(&str, &str)] = &[
    ("go.mod", "module example.com/shapes\n\ngo 1.19\n"),
    (
        "geometry/shape.go",
        r#"package geometry

type point struct {
	X int
	Y int
}

type Rect struct {
	Min point
	Max point
}

func (r Rect) Area() int {
	return (r.Max.X - r.Min.X) * (r.Max.Y - r.Min.Y)
}

func Kind(sides int) string {
	switch sides {
	case 3:
		return "triangle"
	case 4:
		return "quad"
	default:
		return "polygon"
	}
}
"#,
    ),
    (
        "cmd/report/main.go",
        r#"package main

import (
	"fmt"
	"os"

	"example.com/shapes/geometry"
)

func describe(args []string) string {
	switch len(args) {
	case 0:
		return "none"
	default:
		switch args[0] {
		case "rect":
			return geometry.Kind(4)
		}
	}
	return "unknown"
}

func main() {
	fmt.Println(describe(os.Args[1:]))
}
"#,
    ),
];

/// Asserts that the CLI finds `pattern` in `dir` and that we find exactly the same.
fn assert_same_as_cli(cli: &std::path::Path, dir: &std::path::Path, pattern: &str, lang: &str) {
    let cache = tools_ast::ParseCache::new(1 << 26);
    let theirs = cli_matches(cli, dir, pattern, lang);
    let ours = our_matches(dir, pattern, lang, &cache);
    assert!(!theirs.is_empty(), "the CLI finds no `{pattern}` ({lang})");
    assert_eq!(
        ours,
        theirs,
        "`{pattern}` ({lang}): {} ours vs {} CLI",
        ours.len(),
        theirs.len()
    );
}

#[test]
fn rust_item_patterns_match_as_the_cli_reads_them_in_a_cargo_workspace() {
    let Some(cli) = tools_core::testing::require_binary("ast-grep-cli", "ast-grep") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), CARGO_WORKSPACE);
    for pattern in [
        "impl $TRAIT for $T { $$$B }",
        "struct $S { $$$F }",
        "match $X { $$$A }",
        "impl Sink for $T",
        "impl $T { $$$B }",
        "fn $F($$$A) -> $R { $$$B }",
    ] {
        assert_same_as_cli(&cli, dir.path(), pattern, "rust");
    }
}

#[test]
fn go_patterns_match_as_the_cli_reads_them_in_a_module_of_two_packages() {
    let Some(cli) = tools_core::testing::require_binary("ast-grep-cli", "ast-grep") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), GO_MODULE);
    for pattern in [
        "switch $X { $$$C }",
        "func $F($$$A) $R { $$$B }",
        "type $S struct { $$$F }",
        "func ($R $T) $M() $O { $$$B }",
    ] {
        assert_same_as_cli(&cli, dir.path(), pattern, "go");
    }
}

/// `(language, file, source, patterns)`: item-level patterns the CLI reads in each bundled
/// language.
const ITEMS: &[(&str, &str, &str, &[&str])] = &[
    (
        "bash",
        "build.sh",
        "#!/bin/bash\ngreet() {\n  echo \"hello $1\"\n}\nfunction build {\n  make all\n}\ngreet world\n",
        &["make $A", "echo $$$A"],
    ),
    (
        "c",
        "main.c",
        "struct point { int x; int y; };\nstatic int add(int a, int b) { return a + b; }\nint main(void) { struct point p = {1, 2}; return add(p.x, p.y); }\n",
        &[
            "int $F($$$A) { $$$B }",
            "return $X + $Y;",
            "struct point $P = $V;",
        ],
    ),
    (
        "cpp",
        "shape.cpp",
        "class Shape { public: virtual double area() const = 0; };\nclass Square : public Shape { public: double area() const override { return s * s; } double s; };\nint twice(int v) { return v * 2; }\n",
        &["return $X * $Y;"],
    ),
    (
        "csharp",
        "Counter.cs",
        "class Counter { private int n; public void Inc() { n++; } public int Get() { return n; } }\nclass Other { }\n",
        &["class $C { $$$B }"],
    ),
    (
        "css",
        "site.css",
        ".btn { color: red; padding: 2px; }\n#main .title { font-size: 12px; }\n",
        &[".btn { $$$D }", "$S { $$$D }"],
    ),
    (
        "dart",
        "counter.dart",
        "class Counter { int n = 0; void inc() { n++; } }\nint twice(int v) { return v * 2; }\n",
        &["class $C { $$$B }", "int $F($$$A) { $$$B }"],
    ),
    (
        "html",
        "index.html",
        "<html><body><div class=\"a\"><p>hi</p></div><div id=\"b\">x</div></body></html>\n",
        &["<div $$$A>$$$C</div>"],
    ),
    (
        "java",
        "Counter.java",
        "class Counter { private int n; public void inc() { n++; } public int get() { return n; } }\n",
        &["class $C { $$$B }", "public void $M() { $$$B }"],
    ),
    (
        "javascript",
        "counter.js",
        "function add(a, b) { return a + b; }\nclass Counter { inc() { this.n++; } }\nconst f = (x) => x * 2;\n",
        &["function $F($$$A) { $$$B }", "class $C { $$$B }"],
    ),
    (
        "json",
        "package.json",
        "{\"name\": \"demo\", \"version\": \"1.0.0\", \"deps\": {\"a\": \"1\", \"b\": \"2\"}}\n",
        &["\"1\""],
    ),
    (
        "kotlin",
        "Counter.kt",
        "class Counter { var n = 0\n  fun inc() { n++ } }\nfun twice(v: Int): Int { return v * 2 }\n",
        &["fun $F($$$A): $R { $$$B }", "class $C { $$$B }"],
    ),
    (
        "lua",
        "util.lua",
        "function add(a, b) return a + b end\nlocal function twice(v) return v * 2 end\n",
        &["function $F($$$A) $$$B end"],
    ),
    (
        "php",
        "counter.php",
        "<?php\nfunction add($a, $b) { return $a + $b; }\nclass Counter { private $n = 0; public function inc() { $this->n++; } }\n",
        &["function $F($$$A) { $$$B }", "class $C { $$$B }"],
    ),
    (
        "python",
        "counter.py",
        "class Counter:\n    def inc(self):\n        self.n += 1\ndef add(a, b):\n    return a + b\n",
        &["def $F($$$A): $$$B", "class $C: $$$B"],
    ),
    (
        "ruby",
        "counter.rb",
        "class Counter\n  def inc\n    @n += 1\n  end\nend\ndef add(a, b)\n  a + b\nend\n",
        &["def $F($$$A) $$$B end", "class $C $$$B end"],
    ),
    (
        "swift",
        "Counter.swift",
        "class Counter { var n = 0\n  func inc() { n += 1 } }\nfunc twice(v: Int) -> Int { return v * 2 }\n",
        &["class $C { $$$B }", "func $F(v: Int) -> Int { $$$B }"],
    ),
    (
        "typescript",
        "point.ts",
        "interface Point { x: number; y: number }\nfunction add(a: number, b: number): number { return a + b; }\nclass Counter { n = 0; inc(): void { this.n++; } }\n",
        &["interface $I { $$$B }", "function $F($$$A): $R { $$$B }"],
    ),
    (
        "tsx",
        "point.tsx",
        "interface Point { x: number; y: number }\nclass Counter { n = 0; inc(): void { this.n++; } }\n",
        &["class $C { $$$B }", "interface $I { $$$B }"],
    ),
    (
        "yaml",
        "config.yaml",
        "name: demo\nversion: 1.0.0\ndeps:\n  a: 1\n",
        &["name: $V"],
    ),
];

#[test]
fn item_level_patterns_match_as_the_cli_reads_them_in_every_bundled_language() {
    let Some(cli) = tools_core::testing::require_binary("ast-grep-cli", "ast-grep") else {
        return;
    };
    for (lang, file, source, patterns) in ITEMS {
        let dir = tempfile::tempdir().unwrap();
        write_files(dir.path(), &[(file, source)]);
        for pattern in *patterns {
            assert_same_as_cli(&cli, dir.path(), pattern, lang);
        }
    }
}

#[tokio::test]
async fn the_answer_never_shows_the_wrapper_a_pattern_was_read_in() {
    let ws = workspace(CARGO_WORKSPACE);
    // A bare statement is read inside a function body; the answer does not say so.
    for pattern in [
        "$X.push($Y)",
        "impl $TRAIT for $T { $$$B }",
        "match $X { $$$A }",
    ] {
        let out = ws
            .ok("ast_grep", json!({"pattern": pattern, "language": "rust"}))
            .await;
        assert!(!out.text.contains("__ag"), "{pattern}: {}", out.text);
        assert!(!out.text.contains("__Ag"), "{pattern}: {}", out.text);
        assert!(!out.text.contains("wrapper"), "{pattern}: {}", out.text);
        assert!(super::total(&out) > 0, "{pattern}: {}", out.text);
    }
    let out = ws
        .ok(
            "ast_edit",
            json!({"pattern": "$X.push($Y)", "rewrite": "$X.insert(0, $Y)", "language": "rust"}),
        )
        .await;
    assert!(!out.text.contains("__ag"), "{}", out.text);
}

#[tokio::test]
async fn a_bodiless_impl_matches_every_impl_it_starts_and_says_why() {
    let ws = workspace(CARGO_WORKSPACE);
    let out = ws
        .ok(
            "ast_grep",
            json!({"pattern": "impl Sink for $T", "language": "rust"}),
        )
        .await;
    // Buffer and Counter (the generic impl has parameters the pattern does not have).
    assert_eq!(super::total(&out), 2, "{}", out.text);
    assert!(out.text.contains("filled in a missing `;`"), "{}", out.text);
    assert!(
        out.text
            .contains("matches every `impl_item` that starts this way"),
        "{}",
        out.text
    );
    // Written with its `;`, the pattern asks for a bodiless impl, which no code has: the
    // answer says that `impl_item` nodes exist but none of this shape.
    let out = ws
        .ok(
            "ast_grep",
            json!({"pattern": "impl Sink for $T;", "language": "rust"}),
        )
        .await;
    assert_eq!(super::total(&out), 0, "{}", out.text);
    assert!(
        out.text
            .contains("hint: the pattern is read as a `impl_item` node"),
        "{}",
        out.text
    );
    assert!(out.text.contains("none of this shape"), "{}", out.text);
    // A kind the searched files do not have at all.
    let out = ws
        .ok(
            "ast_grep",
            json!({"pattern": "union $U { $$$F }", "language": "rust"}),
        )
        .await;
    assert_eq!(super::total(&out), 0, "{}", out.text);
    assert!(out.text.contains("hint:"), "{}", out.text);
}
