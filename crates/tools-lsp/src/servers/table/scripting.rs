//! Scripting and application languages: Bash, Ruby, PHP, Lua, Vim script, Dart and
//! Solidity.

use serde_json::json;

use super::{ServerSpec, TrustNeed, cargo, npm};

pub(super) fn entries() -> Vec<ServerSpec> {
    vec![
        ServerSpec::new("bash")
            .candidate(
                &["bash-language-server", "start"],
                npm("bash-language-server", "5.8.1"),
            )
            .markers(&[".git", ".shellcheckrc"])
            .extensions(&["sh", "bash"])
            .ids(&[("sh", "shellscript"), ("bash", "shellscript")]),
        // ruby-lsp runs Bundler on the project's Gemfile (Ruby code), solargraph loads its
        // plugins: trusted runs only.
        ServerSpec::new("ruby")
            .candidate(&["ruby-lsp"], None)
            .candidate(&["solargraph", "stdio"], None)
            .markers(&["Gemfile", ".ruby-version", "Rakefile", ".solargraph.yml"])
            .extensions(&["rb", "rake", "gemspec"])
            .file_names(&["Gemfile", "Rakefile"])
            .trust(TrustNeed::TrustedOnly),
        // intelephense without a licence key: the free features, its cache out of the
        // project.
        ServerSpec::new("php")
            .candidate(&["intelephense", "--stdio"], npm("intelephense", "1.18.5"))
            .candidate(&["phpactor", "language-server"], None)
            .markers(&["composer.json", ".git"])
            .extensions(&["php", "phtml"])
            .init(json!({"clearCache": false}))
            .settings(json!({
                "intelephense": {
                    "files": {"maxSize": 5_000_000},
                    "telemetry": {"enabled": false},
                    "diagnostics": {"enable": true},
                },
            }))
            .anywhere(),
        // PHPantom answers for PHP files what intelephense keeps for its licensed edition
        // (rename). Trusted runs only: it runs the project's PHPStan (vendor/bin/phpstan),
        // or whatever command the project's own configuration names, for diagnostics.
        ServerSpec::new("phpantom")
            .candidate(&["phpantom_lsp"], cargo("phpantom_lsp", "0.11.1"))
            .markers(&["composer.json", ".git"])
            .extensions(&["php", "phtml"])
            .ids(&[("php", "php"), ("phtml", "php")])
            .stands_in_for("php")
            .trust(TrustNeed::TrustedOnly)
            .anywhere(),
        ServerSpec::new("lua")
            .candidate(&["lua-language-server"], None)
            .markers(&[
                ".luarc.json",
                ".luarc.jsonc",
                ".stylua.toml",
                "stylua.toml",
                ".git",
            ])
            .extensions(&["lua"])
            .settings(json!({"Lua": {"telemetry": {"enable": false}}}))
            .anywhere(),
        ServerSpec::new("vim")
            .candidate(
                &["vim-language-server", "--stdio"],
                npm("vim-language-server", "2.3.1"),
            )
            .markers(&[".vimrc", "vimrc", "plugin", "autoload", ".git"])
            .extensions(&["vim"])
            .file_names(&[".vimrc", "vimrc"])
            .init(json!({
                "isNeovim": false,
                "iskeyword": "@,48-57,_,192-255,-#",
                "vimruntime": "",
                "runtimepath": "",
                "diagnostic": {"enable": true},
                "indexes": {"runtimepath": false, "gap": 100, "count": 3},
                "suggest": {"fromVimruntime": false, "fromRuntimepath": false},
            }))
            .anywhere(),
        ServerSpec::new("dart")
            .candidate(&["dart", "language-server"], None)
            .markers(&["pubspec.yaml"])
            .extensions(&["dart"])
            .checker(&["dart", "analyze"]),
        // Hardhat projects are indexed by loading `hardhat.config.js` (project code).
        ServerSpec::new("solidity")
            .candidate(
                &["nomicfoundation-solidity-language-server", "--stdio"],
                npm("@nomicfoundation/solidity-language-server", "0.8.4"),
            )
            .markers(&[
                "hardhat.config.js",
                "hardhat.config.ts",
                "foundry.toml",
                "remappings.txt",
                ".git",
            ])
            .extensions(&["sol"])
            .trust(TrustNeed::TrustedOnly)
            .anywhere(),
    ]
}
