//! Every language server that installs on these machines, started for real on one shared
//! fixture tree (`fixtures/projects/polyglot`): each answers `hover` and `definition` and
//! reports a diagnostic on write, through the public tool API. One table of cases, run
//! concurrently (a few at a time) in one test so the suite's time stays low; each case gets
//! its own copy of the tree. Entries of the server table that cannot be installed here are
//! listed in the component log as such.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tools_core::testing::{exercised, exercised_for, not_installable, skipped, which};

use super::{Project, section};

/// Cases started at once: enough to overlap the servers' start-up, few enough for two cores.
const PARALLEL: usize = 6;

/// Waits sized for many servers starting at once on a small machine.
const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\nstart_timeout_ms = 90000\n\
                      request_timeout_ms = 60000\ndiagnostics_wait_ms = 30000\n";

/// The same for a server that publishes nothing: a write waits for it only briefly.
const CONFIG_SILENT: &str = "[lsp]\nindex_wait_ms = 60000\nstart_timeout_ms = 90000\n\
                             request_timeout_ms = 60000\ndiagnostics_wait_ms = 3000\n";

/// One server, driven on one file of the fixture.
struct Case {
    /// The component's name in the log.
    component: &'static str,
    /// The programs it needs on `PATH`.
    binaries: &'static [&'static str],
    /// Extra configuration choosing this server (a `[lsp.servers.NAME]` table), or "".
    config: &'static str,
    /// The file, relative to the fixture root.
    file: &'static str,
    /// `hover`: line, symbol, a substring of the answer.
    hover: Option<(u32, &'static str, &'static str)>,
    /// `definition`: line, symbol, the expected target (`path:line`).
    definition: Option<(u32, &'static str, &'static str)>,
    /// The breaking edit: text replaced, its replacement, and substrings of the diagnostics
    /// section of the write.
    breaking: (&'static str, &'static str, &'static [&'static str]),
}

const PY_BREAK: (&str, &str, &[&str]) = ("print(total)", "print(totl)", &["totl"]);

fn python(component: &'static str, binary: &'static str, config: &'static str) -> Case {
    Case {
        component,
        binaries: leak(vec![binary]),
        config,
        file: "python/main.py",
        hover: Some((3, "area", "int")),
        definition: Some((3, "area", "python/pkg/util.py:1:5")),
        breaking: PY_BREAK,
    }
}

fn leak(v: Vec<&'static str>) -> &'static [&'static str] {
    Box::leak(v.into_boxed_slice())
}

fn cases() -> Vec<Case> {
    vec![
        python("pyright", "pyright-langserver", ""),
        python(
            "basedpyright",
            "basedpyright-langserver",
            "[lsp.servers.python]\ncommand = [\"basedpyright-langserver\", \"--stdio\"]\n",
        ),
        python(
            "pylsp",
            "pylsp",
            "[lsp.servers.python]\ncommand = [\"pylsp\"]\n",
        ),
        Case {
            breaking: ("print(total)", "print(total", &["("]),
            ..python(
                "jedi-language-server",
                "jedi-language-server",
                "[lsp.servers.python]\ncommand = [\"jedi-language-server\"]\n",
            )
        },
        python(
            "ty",
            "ty",
            "[lsp.servers.python]\ncommand = [\"ty\", \"server\"]\n",
        ),
        python(
            "pyrefly",
            "pyrefly",
            "[lsp.servers.python]\ncommand = [\"pyrefly\", \"lsp\"]\n",
        ),
        // ruff beside pyright: both servers' findings in one write, each tagged.
        Case {
            component: "ruff",
            binaries: &["ruff", "pyright-langserver"],
            breaking: (
                "from pkg.util import area\n",
                "import os\nfrom pkg.util import area, missing\n",
                &["F401", "(ruff)", "(pyright-langserver)"],
            ),
            ..python("ruff", "ruff", "")
        },
        Case {
            component: "typescript-language-server",
            binaries: &["typescript-language-server"],
            config: "",
            file: "web/src/main.ts",
            hover: Some((3, "total", "const total: number")),
            definition: Some((3, "area", "web/src/util.ts:1:17")),
            breaking: ("area(2, 3)", "area(2, \"3\")", &["not assignable"]),
        },
        // eslint beside tsserver on a JavaScript file: both servers' findings, each tagged.
        Case {
            component: "vscode-eslint-language-server",
            binaries: &[
                "vscode-eslint-language-server",
                "eslint",
                "typescript-language-server",
            ],
            config: "",
            file: "web/src/label.js",
            hover: Some((4, "name", "name: any")),
            definition: Some((4, "area", "web/src/geometry.js:2:17")),
            breaking: (
                "export function label(name) {\n",
                "export function label(name) {\n  const unused = 1;\n",
                &["no-unused-vars", "(vscode-eslint-language-server)"],
            ),
        },
        Case {
            component: "vscode-html-language-server",
            binaries: &["vscode-html-language-server"],
            config: "",
            file: "web/index.html",
            hover: Some((7, "body", "body")),
            definition: None,
            breaking: (
                "<title>Shapes</title>",
                "<title>Shapes</title><style>main { colr: red; }</style>",
                &["colr"],
            ),
        },
        Case {
            component: "vscode-css-language-server",
            binaries: &["vscode-css-language-server"],
            config: "",
            file: "web/style.css",
            hover: Some((5, "main", "main")),
            definition: Some((6, "--main-color", "web/style.css:2:3")),
            breaking: ("color: var", "colr: var", &["colr"]),
        },
        Case {
            component: "vscode-json-language-server",
            binaries: &["vscode-json-language-server"],
            config: "",
            file: "web/data.json",
            hover: Some((4, "sides", "How many sides")),
            definition: None,
            breaking: ("\"sides\": 4", "\"sides\": \"four\"", &["integer"]),
        },
        Case {
            component: "yaml-language-server",
            binaries: &["yaml-language-server"],
            config: "",
            file: "config/settings.yaml",
            hover: None,
            definition: Some((4, "defaults", "config/settings.yaml:2:3")),
            breaking: ("  sides: 4", "  sides: [4", &["error"]),
        },
        Case {
            component: "taplo",
            binaries: &["taplo"],
            config: "",
            file: "config/settings.toml",
            hover: None,
            definition: None,
            breaking: ("sides = 4", "sides = ", &["error"]),
        },
        Case {
            component: "dockerfile-language-server",
            binaries: &["docker-langserver"],
            config: "",
            file: "config/Dockerfile",
            hover: Some((2, "ARG", "ARG")),
            definition: Some((4, "base", "config/Dockerfile:1:")),
            breaking: ("FROM base\n", "FROM base\nEXPOSE port\n", &["error"]),
        },
        Case {
            component: "vim-language-server",
            binaries: &["vim-language-server"],
            config: "",
            file: "config/shapes.vim",
            hover: None,
            definition: Some((5, "Area", "config/shapes.vim:1:")),
            breaking: ("endfunction\n", "", &["E1"]),
        },
        Case {
            component: "nginx-language-server",
            binaries: &["nginx-language-server"],
            config: "",
            file: "config/nginx.conf",
            hover: Some((4, "worker_connections", "connections")),
            definition: None,
            breaking: ("worker_processes 2;", "worker_processes 2", &[]),
        },
        Case {
            component: "systemd-language-server",
            binaries: &["systemd-language-server"],
            config: "",
            file: "config/shapes.service",
            hover: Some((6, "Restart", "restart")),
            definition: None,
            breaking: ("Restart=on-failure", "Restart=on-failure\nRestartt=no", &[]),
        },
        Case {
            component: "bash-language-server",
            binaries: &["bash-language-server", "shellcheck"],
            config: "",
            file: "shell/main.sh",
            hover: Some((4, "echo", "echo")),
            definition: Some((3, "area", "shell/lib.sh:2:1")),
            breaking: ("echo \"$total\"", "echo \"$total\"\nunused=1", &["SC2034"]),
        },
        Case {
            component: "intelephense",
            binaries: &["intelephense"],
            config: "",
            file: "php/index.php",
            hover: Some((4, "area", "function area")),
            definition: Some((4, "area", "php/src/Util.php:4:10")),
            breaking: ("echo $total;", "echo $total", &["error"]),
        },
        Case {
            component: "cmake-language-server",
            binaries: &["cmake-language-server", "cmake"],
            config: "",
            file: "cmake/CMakeLists.txt",
            hover: Some((4, "add_executable", "executable")),
            definition: None,
            breaking: ("add_executable(", "add_executable (", &[]),
        },
        Case {
            component: "fortls",
            binaries: &["fortls"],
            config: "",
            file: "fortran/main.f90",
            hover: Some((5, "area", "FUNCTION")),
            definition: Some((5, "area", "fortran/geometry.f90:4:")),
            breaking: (
                "  integer :: total\n",
                "  integer :: total\n  integer :: total\n",
                &["total"],
            ),
        },
        Case {
            component: "clangd",
            binaries: &["clangd"],
            config: "",
            file: "c/main.c",
            hover: Some((5, "area", "int area(int width, int height)")),
            definition: Some((5, "area", "c/util.")),
            breaking: ("area(2, 3)", "area(2)", &["ew arguments"]),
        },
        Case {
            component: "ccls",
            binaries: &["ccls"],
            config: "[lsp.servers.c]\ncommand = [\"ccls\"]\n",
            file: "c/main.c",
            hover: Some((5, "area", "int area(int width, int height)")),
            definition: Some((5, "area", "c/util.")),
            breaking: ("area(2, 3)", "area(2)", &["ew arguments"]),
        },
        Case {
            component: "gopls",
            binaries: &["gopls", "go"],
            config: "",
            file: "go/main.go",
            hover: Some((6, "Area", "func Area(width int, height int) int")),
            definition: Some((6, "Area", "go/util.go:4:6")),
            breaking: ("Area(2, 3)", "Area(2)", &["not enough arguments"]),
        },
        Case {
            component: "rust-analyzer",
            binaries: &["rust-analyzer", "cargo"],
            config: "",
            file: "rust/src/main.rs",
            hover: Some((4, "area", "pub fn area(width: i32, height: i32) -> i32")),
            definition: Some((4, "area", "rust/src/util.rs:2:8")),
            breaking: ("util::area(2, 3)", "util::area(2)", &["argument"]),
        },
        Case {
            component: "prisma-language-server",
            binaries: &["prisma-language-server"],
            config: "",
            file: "prisma/schema.prisma",
            hover: Some((15, "Shape", "Shape")),
            definition: Some((15, "Shape", "prisma/schema.prisma:6:")),
            breaking: ("sides Side[]", "sides Sid[]", &["Sid"]),
        },
        Case {
            component: "graphql-language-service",
            binaries: &["graphql-lsp"],
            config: "",
            file: "web/query.graphql",
            hover: Some((3, "name", "String")),
            definition: Some((3, "name", "web/schema.graphql:2:")),
            breaking: ("    sides\n", "    sidez\n", &["sidez"]),
        },
        Case {
            component: "solidity-language-server",
            binaries: &["nomicfoundation-solidity-language-server"],
            config: "",
            file: "sol/Shapes.sol",
            hover: Some((10, "area", "area")),
            definition: Some((10, "area", "sol/Shapes.sol:5:")),
            // It compiles with solc, which it downloads on first use from a host these
            // machines cannot reach: here it reports nothing, and the write says so.
            breaking: ("return area(2, 3);", "return area(2, 3)", &[]),
        },
        Case {
            component: "vue-language-server",
            binaries: &["vue-language-server"],
            config: "",
            file: "web/src/App.vue",
            hover: Some((3, "title", "string")),
            definition: Some((3, "title", "web/src/App.vue:2:")),
            breaking: ("= title.length", "= title", &["not assignable"]),
        },
        Case {
            component: "svelte-language-server",
            binaries: &["svelteserver"],
            config: "",
            file: "web/src/Shape.svelte",
            hover: Some((3, "title", "string")),
            definition: Some((3, "title", "web/src/Shape.svelte:2:")),
            breaking: ("= title.length", "= title", &["not assignable"]),
        },
        // In a folder of its own: astro-ls prints a warning to stdout, into the protocol
        // stream, for each Vue or Svelte file of its project when their Astro integrations
        // are not installed.
        Case {
            component: "astro-language-server",
            binaries: &["astro-ls"],
            config: "",
            file: "astro/Page.astro",
            hover: Some((3, "title", "string")),
            definition: Some((3, "title", "astro/Page.astro:2:")),
            breaking: ("= title.length", "= title", &["not assignable"]),
        },
    ]
}

/// The same for a server whose indexing report can stall short of its end (ccls 0.20220729
/// stops at "1/2" on this tree now and then, and ends it only at shutdown): queries wait for
/// the index briefly and then answer, saying it is not final.
const CONFIG_STALLING_INDEX: &str = "[lsp]\nindex_wait_ms = 5000\nstart_timeout_ms = 90000\n\
                                     request_timeout_ms = 60000\ndiagnostics_wait_ms = 30000\n";

/// Drives one case; returns what went wrong, if anything.
async fn drive(case: &Case) -> Result<(), String> {
    let base = match (case.component, case.breaking.2.is_empty()) {
        ("ccls", _) => CONFIG_STALLING_INDEX,
        (_, true) => CONFIG_SILENT,
        (_, false) => CONFIG,
    };
    let p = Project::from_fixture("polyglot", &format!("{base}{}", case.config));
    let ask = |action: &str, (line, symbol): (u32, &str)| json!({"action": action, "file": case.file, "line": line, "symbol": symbol});
    let mut problems = Vec::new();
    let echo = std::env::var_os("LSP_TEST_ECHO").is_some();
    let clock = Instant::now();
    if let Some((line, symbol, want)) = case.hover {
        match p.lsp(ask("hover", (line, symbol))).await {
            Ok(o) if o.full_text().contains(want) => {}
            Ok(o) => problems.push(format!("hover: no {want:?} in {:?}", o.full_text())),
            Err(e) => problems.push(format!("hover failed: {e}")),
        }
    }
    if echo {
        eprintln!("{}: hover after {:?}", case.component, clock.elapsed());
    }
    if let Some((line, symbol, want)) = case.definition {
        match p.lsp(ask("definition", (line, symbol))).await {
            Ok(o) if o.full_text().contains(want) => {}
            Ok(o) => problems.push(format!("definition: no {want:?} in {:?}", o.full_text())),
            Err(e) => problems.push(format!("definition failed: {e}")),
        }
    }
    if echo {
        eprintln!("{}: definition after {:?}", case.component, clock.elapsed());
    }
    let (find, replace, wants) = case.breaking;
    let text = p.read(case.file);
    if !text.contains(find) {
        return Err(format!(
            "the breaking edit's {find:?} is not in {}",
            case.file
        ));
    }
    let diagnostics = section(
        p.write_tool(case.file, &text.replacen(find, replace, 1))
            .await,
    );
    let missing: Vec<&&str> = wants
        .iter()
        .filter(|w| !diagnostics.contains(**w))
        .collect();
    if !missing.is_empty() {
        // What the server says now, to tell a slow server from a silent one.
        let now = match p
            .lsp(json!({"action": "diagnostics", "file": case.file}))
            .await
        {
            Ok(o) => o.full_text(),
            Err(e) => e.to_string(),
        };
        problems.push(format!(
            "write: no {missing:?} in {diagnostics:?}; `diagnostics` now says {now:?}"
        ));
    }
    if wants.is_empty() && diagnostics.contains("new diagnostic") {
        problems.push(format!(
            "write: a server that reports none reported {diagnostics:?}"
        ));
    }
    p.close_and_check().await;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n  "))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_installable_server_answers_hover_definition_and_diagnostics_on_write() {
    let all = cases();
    let gate = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let mut tasks = Vec::new();
    // `SERVERS_ONLY=a,b` runs only those components (when working on one server).
    let only: Option<Vec<String>> = std::env::var("SERVERS_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    for case in all {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|c| c == case.component))
        {
            continue;
        }
        if let Some(missing) = case.binaries.iter().find(|b| which(b).is_none()) {
            skipped(
                case.component,
                &format!(
                    "`{missing}` is not on PATH (run `cargo xtask setup` and source .tools/env.sh)"
                ),
            );
            continue;
        }
        let gate = Arc::clone(&gate);
        tasks.push(tokio::spawn(async move {
            let _turn = gate.acquire_owned().await;
            let started = Instant::now();
            let outcome = drive(&case).await;
            (case.component, started.elapsed(), outcome)
        }));
    }
    let mut failures = Vec::new();
    for t in tasks {
        match t.await {
            Ok((component, took, outcome)) => {
                eprintln!("[server] {component:<34} {:>6.1} s", took.as_secs_f64());
                match outcome {
                    Ok(()) => exercised_for(component, took),
                    Err(e) => failures.push(format!("{component}:\n  {e}")),
                }
            }
            Err(e) => failures.push(format!("a case panicked: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Entries of the built-in table whose servers no registry reachable here ships (or only as
/// a long compile): (component, the table's language, its program, why).
const NOT_INSTALLABLE: &[(&str, &str, &str, &str)] = &[
    (
        "jdtls",
        "java",
        "jdtls",
        "no registry here ships Eclipse JDT LS",
    ),
    (
        "kotlin-language-server",
        "kotlin",
        "kotlin-language-server",
        "not on npm, PyPI or Debian",
    ),
    (
        "metals",
        "scala",
        "metals",
        "distributed through Coursier only",
    ),
    (
        "csharp-ls",
        "csharp",
        "csharp-ls",
        "a .NET tool and no .NET SDK here",
    ),
    (
        "fsautocomplete",
        "fsharp",
        "fsautocomplete",
        "a .NET tool and no .NET SDK here",
    ),
    (
        "ruby-lsp",
        "ruby",
        "ruby-lsp",
        "RubyGems is not reachable here",
    ),
    (
        "lua-language-server",
        "lua",
        "lua-language-server",
        "not on npm, PyPI or Debian",
    ),
    ("zls", "zig", "zls", "not on npm, PyPI or Debian"),
    (
        "sourcekit-lsp",
        "swift",
        "sourcekit-lsp",
        "comes with a Swift toolchain, none here",
    ),
    (
        "dart-language-server",
        "dart",
        "dart",
        "no Dart SDK in any registry here",
    ),
    (
        "elixir-ls",
        "elixir",
        "elixir-ls",
        "not packaged in any registry here",
    ),
    (
        "erlang_ls",
        "erlang",
        "erlang_ls",
        "not packaged in any registry here",
    ),
    (
        "haskell-language-server",
        "haskell",
        "haskell-language-server-wrapper",
        "comes through GHCup only",
    ),
    ("ocamllsp", "ocaml", "ocamllsp", "comes through opam only"),
    ("nil", "nix", "nil", "not packaged in any registry here"),
    (
        "terraform-ls",
        "terraform",
        "terraform-ls",
        "HashiCorp releases only",
    ),
    (
        "texlab",
        "latex",
        "texlab",
        "only a crates.io source build (long compile)",
    ),
    (
        "marksman",
        "markdown",
        "marksman",
        "GitHub releases only; the npm markdown server needs its editor to parse for it",
    ),
    (
        "sql-language-server",
        "sql",
        "sql-language-server",
        "its sqlite3 dependency compiles from source on install",
    ),
    (
        "esbonio",
        "rst",
        "esbonio",
        "needs Sphinx and a build of the project's docs",
    ),
];

#[tokio::test]
async fn servers_that_cannot_be_installed_here_are_listed_as_such() {
    // Each is an entry of the table in force: doctor lists it with its program.
    let p = Project::new(&[], "");
    let doctor = p.reg.doctor().await;
    for (component, language, program, why) in NOT_INSTALLABLE {
        let listed = doctor.iter().any(|d| {
            d.family == "lsp"
                && d.resource.starts_with(&format!("{language}: "))
                && d.resource.contains(program)
        });
        let trusted_only = !listed;
        // Entries that run project code are left out of an untrusted run; this project is
        // trusted, so every entry must be there.
        assert!(
            !trusted_only,
            "{language} ({program}) is not in the server table: {doctor:?}"
        );
        not_installable(component, why);
    }
}

/// ruff beside pyright outside a write: `diagnostics` of a file merges both servers'
/// findings, tagged, and `diagnostics "*"` runs ruff's own check beside pyright's.
#[tokio::test]
async fn a_companion_adds_its_findings_to_a_files_diagnostics_and_the_project_check() {
    for b in ["ruff", "pyright-langserver", "pyright"] {
        if which(b).is_none() {
            skipped("ruff", &format!("`{b}` is not on PATH"));
            return;
        }
    }
    let p = Project::from_fixture("polyglot", CONFIG);
    p.write(
        "python/main.py",
        "import os\nfrom pkg.util import area, missing\n\ntotal = area(2, 3)\nprint(total)\n",
    );
    let out = p
        .ok(json!({"action": "diagnostics", "file": "python/main.py"}))
        .await;
    for want in ["[F401]", "(ruff)", "missing", "(pyright-langserver)"] {
        assert!(out.contains(want), "no {want:?} in {out}");
    }
    let structured = p
        .lsp(json!({"action": "diagnostics", "file": "python/main.py"}))
        .await
        .unwrap()
        .structured
        .unwrap();
    let sources: Vec<&str> = structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["source"].as_str())
        .collect();
    assert!(
        sources.contains(&"ruff") && sources.contains(&"pyright-langserver"),
        "{structured}"
    );
    let all = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    assert!(all.contains("ruff: `ruff check"), "{all}");
    assert!(all.contains("F401"), "{all}");
    exercised("ruff");
    p.close_and_check().await;
}
