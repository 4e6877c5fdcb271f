//! Configuration, infrastructure and document languages: YAML, TOML, Markdown, Dockerfile,
//! SQL, Terraform, Nix, CMake, nginx, systemd units, LaTeX and reStructuredText. Most of their files stand alone,
//! so with no marker the server serves the workspace root.

use serde_json::json;

use super::{ServerSpec, TrustNeed, npm, pip};

pub(super) fn entries() -> Vec<ServerSpec> {
    vec![
        // Schemas stay local: the schema store is a network fetch this server would otherwise
        // make on start.
        ServerSpec::new("yaml")
            .candidate(
                &["yaml-language-server", "--stdio"],
                npm("yaml-language-server", "2.0.0"),
            )
            .markers(&[".yamllint", ".yamllint.yaml", ".git"])
            .extensions(&["yaml", "yml"])
            .settings(json!({
                "yaml": {
                    "validate": true,
                    "hover": true,
                    "completion": true,
                    "format": {"enable": true},
                    "schemaStore": {"enable": false},
                    "schemas": {},
                },
                "redhat": {"telemetry": {"enabled": false}},
            }))
            .anywhere(),
        // tombi first: taplo's PyPI build leaves its language server out. `--offline` keeps
        // schemas to its cache, as the yaml server's store stays off; the settings are
        // taplo's, for a taplo built with its server.
        ServerSpec::new("toml")
            .candidate(&["tombi", "lsp", "--offline"], pip("tombi", "1.9.6"))
            .candidate(&["taplo", "lsp", "stdio"], None)
            .markers(&["tombi.toml", ".taplo.toml", "taplo.toml", ".git"])
            .extensions(&["toml"])
            .settings(json!({"evenBetterToml": {"schema": {"enabled": false}}}))
            .anywhere(),
        ServerSpec::new("markdown")
            .candidate(&["marksman", "server"], None)
            .markers(&[".marksman.toml", ".git"])
            .extensions(&["md", "markdown"])
            .anywhere(),
        ServerSpec::new("dockerfile")
            .candidate(
                &["docker-langserver", "--stdio"],
                npm("dockerfile-language-server-nodejs", "0.15.0"),
            )
            .markers(&[".dockerignore", ".git"])
            .extensions(&["dockerfile", "containerfile"])
            .file_names(&["Dockerfile", "Containerfile"])
            .anywhere(),
        ServerSpec::new("sql")
            .candidate(
                &["sql-language-server", "up", "--method", "stdio"],
                npm("sql-language-server", "1.7.1"),
            )
            .candidate(&["sqls"], None)
            .markers(&[".sqllsrc.json", ".git"])
            .extensions(&["sql"])
            .anywhere(),
        // `terraform validate` on save loads the providers the project downloaded: off in an
        // untrusted run.
        ServerSpec::new("terraform")
            .candidate(&["terraform-ls", "serve"], None)
            .markers(&[".terraform", ".terraform.lock.hcl", ".git"])
            .extensions(&["tf", "tfvars"])
            .ids(&[("tfvars", "terraform-vars")])
            .init(json!({"experimentalFeatures": {"validateOnSave": true}}))
            .trust(TrustNeed::Restricted {
                settings_section: "terraform".into(),
                off: json!({"experimentalFeatures": {"validateOnSave": false}}),
            }),
        ServerSpec::new("nix")
            .candidate(&["nil"], None)
            .candidate(&["nixd"], None)
            .markers(&["flake.nix", "default.nix", "shell.nix"])
            .extensions(&["nix"])
            .anywhere(),
        ServerSpec::new("cmake")
            .candidate(
                &["cmake-language-server"],
                pip("cmake-language-server", "0.1.11"),
            )
            .markers(&["CMakeLists.txt", "CMakePresets.json"])
            .extensions(&["cmake"])
            .file_names(&["CMakeLists.txt"])
            .init(json!({"buildDirectory": "build"})),
        ServerSpec::new("latex")
            .candidate(&["texlab"], None)
            .markers(&[
                ".latexmkrc",
                "latexmkrc",
                "Tectonic.toml",
                ".texlabroot",
                "texlabroot",
                ".git",
            ])
            .extensions(&["tex", "bib", "sty", "cls"])
            .ids(&[("bib", "bibtex")])
            .anywhere(),
        ServerSpec::new("nginx")
            .candidate(
                &["nginx-language-server"],
                pip("nginx-language-server", "0.9.0"),
            )
            .markers(&["nginx.conf", ".git"])
            .extensions(&["nginx"])
            .file_names(&["nginx.conf"])
            .anywhere(),
        ServerSpec::new("systemd")
            .candidate(
                &["systemd-language-server"],
                pip("systemd-language-server", "0.3.5"),
            )
            .markers(&[".git"])
            .extensions(&[
                "service", "socket", "timer", "mount", "target", "path", "slice",
            ])
            .anywhere(),
        // Sphinx runs the project's `conf.py`: trusted runs only.
        ServerSpec::new("rst")
            .candidate(&["esbonio"], pip("esbonio", "2.1.0"))
            .markers(&["conf.py", "docs/conf.py", ".git"])
            .extensions(&["rst"])
            .ids(&[("rst", "restructuredtext")])
            .trust(TrustNeed::TrustedOnly),
    ]
}
