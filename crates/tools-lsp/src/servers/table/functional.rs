//! Functional languages: Elixir, Erlang, Haskell and OCaml.

use super::{ServerSpec, TrustNeed};

pub(super) fn entries() -> Vec<ServerSpec> {
    vec![
        // elixir-ls compiles the project with mix.
        ServerSpec::new("elixir")
            .candidate(&["elixir-ls"], None)
            .candidate(&["expert", "--stdio"], None)
            .markers(&["mix.exs"])
            .extensions(&["ex", "exs", "heex"])
            .ids(&[("heex", "phoenix-heex")])
            .trust(TrustNeed::TrustedOnly),
        // ELP asks rebar3 for the build info, which runs its plugins.
        ServerSpec::new("erlang")
            .candidate(&["erlang_ls"], None)
            .candidate(&["elp", "server"], None)
            .markers(&["rebar.config", "erlang.mk", "erlang_ls.config", ".git"])
            .extensions(&["erl", "hrl"])
            .trust(TrustNeed::TrustedOnly),
        // HLS builds with cabal or stack: Setup.hs and Template Haskell run.
        ServerSpec::new("haskell")
            .candidate(&["haskell-language-server-wrapper", "--lsp"], None)
            .candidate(&["haskell-language-server", "--lsp"], None)
            .markers(&["stack.yaml", "cabal.project", "package.yaml", "hie.yaml"])
            .extensions(&["hs", "lhs"])
            .ids(&[("lhs", "lhaskell")])
            .trust(TrustNeed::TrustedOnly),
        ServerSpec::new("ocaml")
            .candidate(&["ocamllsp"], None)
            .markers(&["dune-project", "dune-workspace", ".ocamlformat"])
            .extensions(&["ml", "mli", "mll", "mly"])
            .ids(&[
                ("mli", "ocaml.interface"),
                ("mll", "ocaml.ocamllex"),
                ("mly", "ocaml.menhir"),
            ]),
    ]
}
