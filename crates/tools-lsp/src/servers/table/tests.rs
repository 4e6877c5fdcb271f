//! The table's own tests: the merge with the configuration, the trust rules, and one check
//! per built-in entry (markers, languageId, command, install recipe).

use super::*;
use crate::servers::config::ServerOverride;

/// The LSP `languageId` of a file extension served by `group` in the built-in table, the
/// group name when the table has no such entry.
fn language_id(ext: &str, group: &str) -> String {
    match builtin().iter().find(|s| s.language == group) {
        Some(spec) => spec.language_id(ext),
        None => group.to_string(),
    }
}

fn trusted() -> LspConfig {
    LspConfig {
        trusted: true,
        ..Default::default()
    }
}

fn entry<'a>(t: &'a [ServerSpec], lang: &str) -> &'a ServerSpec {
    t.iter()
        .find(|s| s.language == lang)
        .unwrap_or_else(|| panic!("no entry {lang}"))
}

#[test]
fn overrides_replace_and_extend() {
    let mut cfg = LspConfig::default();
    cfg.servers.insert(
        "python".into(),
        ServerOverride {
            command: Some(vec!["pylsp".into()]),
            ..Default::default()
        },
    );
    cfg.servers.insert(
        "mylang".into(),
        ServerOverride {
            command: Some(vec!["myls".into()]),
            markers: Some(vec!["my.toml".into()]),
            extensions: Some(vec![".my".into()]),
            ..Default::default()
        },
    );
    cfg.servers.insert(
        "dart".into(),
        ServerOverride {
            enabled: Some(false),
            ..Default::default()
        },
    );
    let t = server_table(&cfg);
    let py = entry(&t, "python");
    // The user's pylsp command keeps the table's recipe for pylsp.
    assert_eq!(py.candidates.len(), 1);
    assert_eq!(py.candidates[0].command, ["pylsp"]);
    assert_eq!(
        py.candidates[0]
            .install
            .as_ref()
            .map(|r| r.package.as_str()),
        Some("python-lsp-server[all]")
    );
    assert_eq!(
        entry(&t, "mylang").candidates,
        vec![Candidate::of(&["myls"])]
    );
    assert!(py.markers.contains(&"pyproject.toml".to_string()));
    let mine = entry(&t, "mylang");
    assert!(mine.handles("my"));
    assert_eq!(mine.language_id("my"), "mylang");
    assert!(t.iter().all(|s| s.language != "dart"));
    assert_eq!(language_id("tsx", "typescript"), "typescriptreact");
    assert_eq!(language_id("my", "mylang"), "mylang");
}

#[test]
fn untrusted_rust_analyzer_runs_no_project_code_whatever_the_settings_say() {
    let mut cfg = LspConfig::default();
    cfg.servers.insert(
        "rust".into(),
        ServerOverride {
            initialization_options: Some(toml::toml! { [procMacro] enable = true }.into()),
            ..Default::default()
        },
    );
    let untrusted = server_table(&cfg);
    let ra = entry(&untrusted, "rust");
    let init = ra.initialization_options.as_ref().unwrap();
    assert_eq!(init["procMacro"]["enable"], false);
    assert_eq!(init["cargo"]["buildScripts"]["enable"], false);
    assert_eq!(init["checkOnSave"], false);
    assert_eq!(ra.settings["rust-analyzer"]["procMacro"]["enable"], false);
    cfg.trusted = true;
    let trusted = server_table(&cfg);
    let ra = entry(&trusted, "rust");
    assert_eq!(
        ra.initialization_options.as_ref().unwrap()["procMacro"]["enable"],
        true
    );
    assert_eq!(
        ra.settings,
        serde_json::json!({"rust-analyzer": {"cachePriming": {"enable": false}}})
    );
}

#[test]
fn untrusted_runs_leave_out_servers_that_need_project_code_and_restrict_the_others() {
    let untrusted = server_table(&LspConfig::default());
    let all = server_table(&trusted());
    for spec in &all {
        let kept = untrusted.iter().any(|s| s.language == spec.language);
        assert_eq!(
            kept,
            spec.trust != TrustNeed::TrustedOnly,
            "{} in the untrusted table",
            spec.language
        );
    }
    for lang in [
        "eslint", "ruby", "scala", "zig", "swift", "haskell", "elixir", "rst", "phpantom",
    ] {
        assert!(untrusted.iter().all(|s| s.language != lang), "{lang}");
    }
    let java = entry(&untrusted, "java");
    assert_eq!(java.settings["java"]["import"]["gradle"]["enabled"], false);
    assert_eq!(java.settings["java"]["format"]["enabled"], true);
    let tf = entry(&untrusted, "terraform");
    assert_eq!(
        tf.initialization_options.as_ref().unwrap()["experimentalFeatures"]["validateOnSave"],
        false
    );
    assert_eq!(
        entry(&all, "terraform")
            .initialization_options
            .as_ref()
            .unwrap()["experimentalFeatures"]["validateOnSave"],
        true
    );
}

#[test]
fn a_pinned_tsserver_keeps_the_other_initialization_options() {
    let mut t = server_table(&trusted());
    let ts = t.iter_mut().find(|s| s.language == "typescript").unwrap();
    ts.initialization_options = Some(serde_json::json!({"preferences": {"quoteStyle": "single"}}));
    trust::pin_tsserver(ts, std::path::Path::new("/opt/ts/lib/tsserver.js"));
    let init = ts.initialization_options.as_ref().unwrap();
    assert_eq!(init["tsserver"]["path"], "/opt/ts/lib/tsserver.js");
    assert_eq!(init["preferences"]["quoteStyle"], "single");
}

/// One row per built-in entry: (language, first program, a marker, a file it serves, that
/// file's languageId, whether the first candidate has an install recipe).
const ENTRIES: &[(&str, &str, &str, &str, &str, bool)] = &[
    (
        "angular",
        "ngserver",
        "angular.json",
        "src/app/app.component.html",
        "html",
        true,
    ),
    (
        "astro",
        "astro-ls",
        "astro.config.mjs",
        "a.astro",
        "astro",
        true,
    ),
    (
        "bash",
        "bash-language-server",
        ".shellcheckrc",
        "a.sh",
        "shellscript",
        true,
    ),
    ("c", "clangd", "compile_commands.json", "a.cpp", "cpp", true),
    (
        "cmake",
        "cmake-language-server",
        "CMakeLists.txt",
        "CMakeLists.txt",
        "cmake",
        true,
    ),
    ("csharp", "csharp-ls", "global.json", "a.cs", "csharp", true),
    (
        "css",
        "vscode-css-language-server",
        "package.json",
        "a.less",
        "less",
        true,
    ),
    ("dart", "dart", "pubspec.yaml", "a.dart", "dart", false),
    (
        "dockerfile",
        "docker-langserver",
        ".dockerignore",
        "Dockerfile",
        "dockerfile",
        true,
    ),
    ("elixir", "elixir-ls", "mix.exs", "a.ex", "elixir", false),
    (
        "erlang",
        "erlang_ls",
        "rebar.config",
        "a.erl",
        "erlang",
        false,
    ),
    ("fortran", "fortls", ".fortls", "a.f90", "fortran", true),
    (
        "fsharp",
        "fsautocomplete",
        "paket.dependencies",
        "a.fs",
        "fsharp",
        false,
    ),
    ("go", "gopls", "go.mod", "a.go", "go", true),
    (
        "graphql",
        "graphql-lsp",
        ".graphqlrc.yml",
        "a.gql",
        "graphql",
        true,
    ),
    (
        "haskell",
        "haskell-language-server-wrapper",
        "stack.yaml",
        "a.hs",
        "haskell",
        false,
    ),
    (
        "html",
        "vscode-html-language-server",
        "index.html",
        "a.htm",
        "html",
        true,
    ),
    ("java", "jdtls", "pom.xml", "A.java", "java", true),
    (
        "json",
        "vscode-json-language-server",
        "package.json",
        "a.jsonc",
        "jsonc",
        true,
    ),
    (
        "kotlin",
        "kotlin-language-server",
        "build.gradle.kts",
        "a.kt",
        "kotlin",
        false,
    ),
    ("latex", "texlab", ".latexmkrc", "a.bib", "bibtex", false),
    (
        "lua",
        "lua-language-server",
        ".luarc.json",
        "a.lua",
        "lua",
        false,
    ),
    (
        "markdown",
        "marksman",
        ".marksman.toml",
        "a.md",
        "markdown",
        false,
    ),
    (
        "nginx",
        "nginx-language-server",
        "nginx.conf",
        "nginx.conf",
        "nginx",
        true,
    ),
    (
        "systemd",
        "systemd-language-server",
        ".git",
        "a.service",
        "systemd",
        true,
    ),
    ("nix", "nil", "flake.nix", "a.nix", "nix", false),
    (
        "ocaml",
        "ocamllsp",
        "dune-project",
        "a.mli",
        "ocaml.interface",
        false,
    ),
    ("php", "intelephense", "composer.json", "a.php", "php", true),
    (
        "prisma",
        "prisma-language-server",
        "schema.prisma",
        "a.prisma",
        "prisma",
        true,
    ),
    (
        "python",
        "pyright-langserver",
        "pyproject.toml",
        "a.py",
        "python",
        true,
    ),
    (
        "rst",
        "esbonio",
        "conf.py",
        "a.rst",
        "restructuredtext",
        true,
    ),
    ("ruby", "ruby-lsp", "Gemfile", "a.rb", "ruby", false),
    ("rust", "rust-analyzer", "Cargo.toml", "a.rs", "rust", false),
    (
        "sass",
        "some-sass-language-server",
        "package.json",
        "a.scss",
        "scss",
        true,
    ),
    ("scala", "metals", "build.sbt", "a.scala", "scala", false),
    (
        "solidity",
        "nomicfoundation-solidity-language-server",
        "foundry.toml",
        "a.sol",
        "solidity",
        true,
    ),
    (
        "sql",
        "sql-language-server",
        ".sqllsrc.json",
        "a.sql",
        "sql",
        true,
    ),
    (
        "svelte",
        "svelteserver",
        "svelte.config.js",
        "a.svelte",
        "svelte",
        true,
    ),
    (
        "swift",
        "sourcekit-lsp",
        "Package.swift",
        "a.swift",
        "swift",
        false,
    ),
    (
        "terraform",
        "terraform-ls",
        ".terraform.lock.hcl",
        "a.tfvars",
        "terraform-vars",
        false,
    ),
    ("toml", "tombi", "tombi.toml", "a.toml", "toml", true),
    (
        "typescript",
        "typescript-language-server",
        "tsconfig.json",
        "a.tsx",
        "typescriptreact",
        true,
    ),
    ("vim", "vim-language-server", ".vimrc", "a.vim", "vim", true),
    (
        "vue",
        "vue-language-server",
        "package.json",
        "a.vue",
        "vue",
        true,
    ),
    (
        "yaml",
        "yaml-language-server",
        ".yamllint",
        "a.yml",
        "yaml",
        true,
    ),
    ("zig", "zls", "build.zig", "a.zig", "zig", false),
];

/// Companions: (name, program, a file it assists, the primary entry for that file).
const COMPANIONS: &[(&str, &str, &str, &str)] = &[
    ("ruff", "ruff", "a.py", "python"),
    (
        "eslint",
        "vscode-eslint-language-server",
        "a.ts",
        "typescript",
    ),
];

/// Stand-ins: (name, program, a file of the entry it stands in for, that entry, the file's
/// languageId).
const STAND_INS: &[(&str, &str, &str, &str, &str)] =
    &[("phpantom", "phpantom_lsp", "a.php", "php", "php")];

#[test]
fn every_builtin_entry_has_its_markers_language_ids_command_and_recipe() {
    let t = server_table(&trusted());
    assert!(t.len() >= 40, "{} entries", t.len());
    assert_eq!(
        t.len(),
        ENTRIES.len() + COMPANIONS.len() + STAND_INS.len(),
        "a table row is untested"
    );
    for &(lang, program, marker, file, id, installable) in ENTRIES {
        let spec = entry(&t, lang);
        assert!(!spec.companion, "{lang}");
        assert_eq!(spec.candidates[0].program(), program, "{lang}");
        assert!(spec.markers.iter().any(|m| m == marker), "{lang}: {marker}");
        // An entry that serves only inside its own project is asked about a file of one.
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join(marker), "{}").unwrap();
        let inside = project.path().join(file);
        let path = if spec.project_only {
            inside.as_path()
        } else {
            std::path::Path::new(file)
        };
        let ws = project.path();
        assert!(spec.serves(path, ws), "{lang} serves {file}");
        let primary = t.iter().filter(|s| s.serves(path, ws)).count();
        if spec.project_only {
            // Inside its project it comes first; the general server of the extension
            // serves the file everywhere else.
            let first = crate::servers::discover::spec_for(&t, path, ws).unwrap();
            assert_eq!(first.language, lang, "{file} goes to {lang} in its project");
        } else {
            assert_eq!(primary, 1, "{file} has one primary server");
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or(file);
        assert_eq!(language_id(ext, lang), id, "{lang}: languageId of {file}");
        let recipe = &spec.candidates[0].install;
        assert_eq!(recipe.is_some(), installable, "{lang}: recipe {recipe:?}");
        for c in &spec.candidates {
            if let Some(r) = &c.install {
                assert!(!r.package.is_empty() && !r.version.is_empty(), "{lang}");
                assert!(
                    r.version.chars().any(|ch| ch.is_ascii_digit()),
                    "{lang}: pinned version {}",
                    r.version
                );
            }
        }
    }
    for &(name, program, file, primary) in COMPANIONS {
        let spec = entry(&t, name);
        assert!(spec.companion, "{name}");
        assert_eq!(spec.candidates[0].program(), program);
        assert!(spec.candidates[0].install.is_some(), "{name}");
        let path = std::path::Path::new(file);
        let ws = std::path::Path::new("");
        assert!(spec.assists(path, ws) && !spec.serves(path, ws), "{name}");
        assert!(entry(&t, primary).serves(path, ws), "{primary}");
    }
    for &(name, program, file, stands_in, id) in STAND_INS {
        let spec = entry(&t, name);
        assert_eq!(spec.stands_in.as_deref(), Some(stands_in), "{name}");
        assert_eq!(spec.candidates[0].program(), program);
        assert!(spec.candidates[0].install.is_some(), "{name}");
        let path = std::path::Path::new(file);
        let ws = std::path::Path::new("");
        // Never a file's own server, nor a companion: asked only for what that one lacks.
        assert!(
            spec.matches_file(path, ws) && !spec.serves(path, ws) && !spec.assists(path, ws),
            "{name}"
        );
        assert!(entry(&t, stands_in).serves(path, ws), "{stands_in}");
        assert_eq!(spec.language_id("php"), id, "{name}");
    }
}

#[test]
fn python_offers_every_known_server_in_order() {
    let t = server_table(&trusted());
    let programs: Vec<&str> = entry(&t, "python")
        .candidates
        .iter()
        .map(Candidate::program)
        .collect();
    assert_eq!(
        programs,
        [
            "pyright-langserver",
            "basedpyright-langserver",
            "pylsp",
            "jedi-language-server",
            "ty",
            "pyrefly"
        ]
    );
    let c: Vec<&str> = entry(&t, "c")
        .candidates
        .iter()
        .map(Candidate::program)
        .collect();
    assert_eq!(c, ["clangd", "ccls"]);
}

#[test]
fn servers_that_need_options_to_work_get_them() {
    let t = server_table(&trusted());
    let init = |lang: &str| {
        entry(&t, lang)
            .initialization_options
            .clone()
            .unwrap_or_default()
    };
    for lang in ["html", "css", "json"] {
        assert_eq!(init(lang)["provideFormatter"], true, "{lang}");
    }
    assert_eq!(entry(&t, "yaml").settings["yaml"]["validate"], true);
    assert_eq!(
        entry(&t, "yaml").settings["yaml"]["schemaStore"]["enable"],
        false
    );
    assert_eq!(
        entry(&t, "java").candidates[0].command[3..],
        [
            "-configuration",
            "{state_dir}/configuration",
            "-data",
            "{state_dir}/workspace"
        ]
    );
    assert_eq!(
        entry(&t, "java").candidates[0].command[1..3],
        ["-vm", "{java21}"]
    );
    assert_eq!(init("c")["cache"]["directory"], "");
    assert_eq!(
        entry(&t, "php").settings["intelephense"]["telemetry"]["enabled"],
        false
    );
    for lang in ["yaml", "json", "dockerfile", "markdown"] {
        assert!(entry(&t, lang).workspace_fallback, "{lang}");
    }
}

#[test]
fn clangd_serves_every_file_type_clang_knows_by_extension() {
    let t = server_table(&trusted());
    for (file, id) in [
        ("a.cppm", "cpp"),
        ("a.ixx", "cpp"),
        ("a.c++", "cpp"),
        ("a.ipp", "cpp"),
        ("a.cu", "cuda-cpp"),
        ("a.cuh", "cuda-cpp"),
        ("a.hip", "cpp"),
        ("a.cl", "opencl"),
        ("a.m", "objective-c"),
        ("a.mm", "objective-cpp"),
        ("a.h", "c"),
    ] {
        let path = std::path::Path::new(file);
        let servers: Vec<&str> = t
            .iter()
            .filter(|s| s.serves(path, std::path::Path::new("")))
            .map(|s| s.language.as_str())
            .collect();
        assert_eq!(servers, ["c"], "{file}");
        let ext = path.extension().and_then(|e| e.to_str()).unwrap();
        assert_eq!(language_id(ext, "c"), id, "{file}");
    }
}

#[test]
fn angular_takes_the_html_of_an_angular_project_and_no_other() {
    let t = server_table(&trusted());
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("package.json"), "{}").unwrap();
    let page = plain.path().join("index.html");
    assert_eq!(
        crate::servers::discover::spec_for(&t, &page, plain.path())
            .unwrap()
            .language,
        "html"
    );
    let ng = tempfile::tempdir().unwrap();
    std::fs::write(ng.path().join("angular.json"), "{}").unwrap();
    let template = ng.path().join("src/app/app.component.html");
    assert_eq!(
        crate::servers::discover::spec_for(&t, &template, ng.path())
            .unwrap()
            .language,
        "angular"
    );
    // A project without `angular.json` that depends on Angular is one too.
    let dep = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dep.path().join("node_modules/@angular/core")).unwrap();
    let template = dep.path().join("src/app.html");
    assert_eq!(
        crate::servers::discover::spec_for(&t, &template, dep.path())
            .unwrap()
            .language,
        "angular"
    );
    // A checkout inside an Angular project's folder is not an Angular project: markers
    // above the workspace do not count.
    let inner = ng.path().join("vendor/site");
    let page = inner.join("index.html");
    assert_eq!(
        crate::servers::discover::spec_for(&t, &page, &inner)
            .unwrap()
            .language,
        "html"
    );
    let angular = entry(&t, "angular");
    assert_eq!(angular.language_id("html"), "html");
}
