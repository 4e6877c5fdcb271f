//! The web: TypeScript/JavaScript (with eslint as a companion), the component frameworks
//! (Vue, Svelte, Astro, Angular's templates), HTML, CSS, Sass, JSON, GraphQL and Prisma.

use serde_json::json;

use super::{ServerSpec, TrustNeed, npm};

const JS_MARKERS: &[&str] = &["tsconfig.json", "jsconfig.json", "package.json"];
const JS_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];
const JS_IDS: &[(&str, &str)] = &[
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("tsx", "typescriptreact"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "javascriptreact"),
];
/// The package that ships the html, css, json and eslint servers extracted from VS Code.
const EXTRACTED: &str = "vscode-langservers-extracted";
const EXTRACTED_VERSION: &str = "4.10.0";

pub(super) fn entries() -> Vec<ServerSpec> {
    vec![
        ServerSpec::new("typescript")
            .candidate(
                &["typescript-language-server", "--stdio"],
                npm("typescript-language-server", "5.3.0")
                    .map(|r| r.with_companion("typescript", "5.9.3")),
            )
            .candidate(&["vtsls", "--stdio"], npm("@vtsls/language-server", "0.3.0"))
            .markers(JS_MARKERS)
            .extensions(JS_EXTENSIONS)
            .ids(JS_IDS)
            // A rename renames: without this, tsserver keeps a re-exported name by aliasing
            // (`export { NewName as OldName }`), and every other project still says the old
            // name.
            .init(json!({"preferences": {"providePrefixAndSuffixTextForRename": false}}))
            .settings(json!({
                "typescript": {"preferences": {"useAliasesForRenames": false}},
                "javascript": {"preferences": {"useAliasesForRenames": false}},
            }))
            .checker(&["tsc", "--noEmit", "--pretty", "false"]),
        // eslint loads the project's own eslint and its JavaScript configuration: trusted
        // runs only.
        ServerSpec::new("eslint")
            .candidate(
                &["vscode-eslint-language-server", "--stdio"],
                npm(EXTRACTED, EXTRACTED_VERSION),
            )
            .markers(&[
                "eslint.config.js",
                "eslint.config.mjs",
                "eslint.config.cjs",
                "eslint.config.ts",
                ".eslintrc.js",
                ".eslintrc.cjs",
                ".eslintrc.json",
                ".eslintrc.yml",
                ".eslintrc",
            ])
            .extensions(&["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "vue", "svelte"])
            .ids(JS_IDS)
            // The server asks for every one of these and misbehaves on a missing one.
            .settings(json!({
                "validate": "on",
                "packageManager": "npm",
                "useESLintClass": false,
                "experimental": {"useFlatConfig": true},
                "codeActionOnSave": {"enable": false, "mode": "all"},
                "format": false,
                "quiet": false,
                "onIgnoredFiles": "off",
                "options": {},
                "rulesCustomizations": [],
                "run": "onType",
                "problems": {"shortenToSingleLine": false},
                "nodePath": null,
                "workingDirectory": {"mode": "location"},
                "codeAction": {
                    "disableRuleComment": {"enable": true, "location": "separateLine"},
                    "showDocumentation": {"enable": true},
                },
            }))
            .companion()
            .trust(TrustNeed::TrustedOnly),
        // The Vue server takes the TypeScript SDK folder (`typescript.tsdk`, filled in from
        // the TypeScript installed beside it) and answers for script blocks itself: the 2.x
        // line, since 3.x hands TypeScript requests to a tsserver plugin of the editor's.
        ServerSpec::new("vue")
            .candidate(
                &["vue-language-server", "--stdio"],
                npm("@vue/language-server", "2.2.10"),
            )
            .markers(&["package.json", "vite.config.ts", "vite.config.js", "nuxt.config.ts"])
            .extensions(&["vue"])
            .init(json!({"vue": {"hybridMode": false}})),
        ServerSpec::new("svelte")
            .candidate(
                &["svelteserver", "--stdio"],
                npm("svelte-language-server", "0.18.4"),
            )
            .markers(&["svelte.config.js", "svelte.config.mjs", "package.json"])
            .extensions(&["svelte"])
            .init(json!({"configuration": {"svelte": {"plugin": {"svelte": {"diagnostics": {"enable": true}}}}}})),
        ServerSpec::new("astro")
            .candidate(
                &["astro-ls", "--stdio"],
                npm("@astrojs/language-server", "2.17.1"),
            )
            .markers(&["astro.config.mjs", "astro.config.ts", "astro.config.js", "package.json"])
            .extensions(&["astro"]),
        // Angular's server answers in the `.html` templates of an Angular project (one
        // with `angular.json` or its own `@angular/core`); plain HTML elsewhere stays with
        // the HTML server. It loads TypeScript and Angular's language service from the
        // folders named by its probe-location flags, filled in from where it was installed.
        ServerSpec::new("angular")
            .candidate(
                &["ngserver", "--stdio"],
                npm("@angular/language-server", "21.2.13"),
            )
            .markers(&["angular.json", "node_modules/@angular/core"])
            .extensions(&["html"])
            .ids(&[("html", "html")])
            .project_only(),
        ServerSpec::new("html")
            .candidate(
                &["vscode-html-language-server", "--stdio"],
                npm(EXTRACTED, EXTRACTED_VERSION),
            )
            .markers(&["package.json", "index.html", ".git"])
            .extensions(&["html", "htm", "xhtml"])
            .ids(&[("htm", "html"), ("xhtml", "html")])
            .init(json!({
                "provideFormatter": true,
                "embeddedLanguages": {"css": true, "javascript": true},
            }))
            .settings(json!({
                "html": {
                    "validate": {"scripts": true, "styles": true},
                    "hover": {"documentation": true, "references": true},
                },
                "css": {"validate": true},
                "javascript": {"validate": {"enable": true}},
            }))
            .anywhere(),
        ServerSpec::new("css")
            .candidate(
                &["vscode-css-language-server", "--stdio"],
                npm(EXTRACTED, EXTRACTED_VERSION),
            )
            .markers(&["package.json", ".git"])
            .extensions(&["css", "less"])
            .ids(&[("less", "less")])
            .init(json!({"provideFormatter": true}))
            .settings(json!({
                "css": {"validate": true, "lint": {}},
                "scss": {"validate": true, "lint": {}},
                "less": {"validate": true, "lint": {}},
            }))
            .anywhere(),
        // Sass: vscode-css-language-server reads each file alone and resolves nothing across
        // `@use`/`@forward` modules; some-sass follows them (definitions, references and
        // renames across the workspace). It takes its settings under `somesass` and
        // `editor`, and stops on a missing one.
        ServerSpec::new("sass")
            .candidate(
                &["some-sass-language-server", "--stdio"],
                npm("some-sass-language-server", "2.3.8"),
            )
            .markers(&["package.json", ".git"])
            .extensions(&["scss", "sass"])
            .ids(&[("scss", "scss"), ("sass", "sass")])
            .settings(json!({
                "somesass": {
                    "workspace": {
                        "loadPaths": [],
                        "exclude": ["**/.git/**", "**/node_modules/**"],
                    },
                },
                "editor": {"insertSpaces": true, "tabSize": 2, "indentSize": 2},
            }))
            .anywhere(),
        // No schema is fetched over the network: `handledSchemaProtocols` stays at `file`.
        ServerSpec::new("json")
            .candidate(
                &["vscode-json-language-server", "--stdio"],
                npm(EXTRACTED, EXTRACTED_VERSION),
            )
            .markers(&["package.json", ".git"])
            .extensions(&["json", "jsonc", "json5"])
            .ids(&[("jsonc", "jsonc"), ("json5", "json5")])
            .init(json!({"provideFormatter": true, "handledSchemaProtocols": ["file"]}))
            .settings(json!({
                "json": {"validate": {"enable": true}, "schemas": [], "format": {"enable": true}},
            }))
            .anywhere(),
        // graphql-lsp reads `graphql.config.js` (project code) through cosmiconfig.
        ServerSpec::new("graphql")
            .candidate(
                &["graphql-lsp", "server", "-m", "stream"],
                npm("graphql-language-service-cli", "3.5.0"),
            )
            .markers(&[
                ".graphqlrc",
                ".graphqlrc.json",
                ".graphqlrc.yml",
                ".graphqlrc.yaml",
                "graphql.config.json",
                "graphql.config.yml",
                "graphql.config.yaml",
                "graphql.config.js",
                "graphql.config.ts",
            ])
            .extensions(&["graphql", "graphqls", "gql"])
            .ids(&[("graphqls", "graphql"), ("gql", "graphql")])
            .trust(TrustNeed::TrustedOnly),
        ServerSpec::new("prisma")
            .candidate(
                &["prisma-language-server", "--stdio"],
                npm("@prisma/language-server", "31.12.10"),
            )
            .markers(&["schema.prisma", "package.json", ".git"])
            .extensions(&["prisma"])
            .settings(json!({"prisma": {}}))
            .anywhere(),
    ]
}
