//! `cargo xtask lint cross`: the whole workspace checked for the operating systems this
//! machine cannot run.
//!
//! macOS (Intel and Apple silicon) and Windows are compile-checked here: `cargo clippy
//! --workspace --all-targets -- -D warnings` for `x86_64-apple-darwin`,
//! `aarch64-apple-darwin` and `x86_64-pc-windows-gnu`, so a Linux-only call cannot land
//! anywhere unnoticed — not in a library, its tests, its benches or the binary. Tests about
//! one OS's semantics (modes, `#!` scripts, pseudo-terminals, links planted where Windows
//! needs rights to make them) are gated `#[cfg(unix)]`, with Windows counterparts beside
//! them where the behaviour exists there.
//! There is no Apple SDK here: the C parts a check builds (tree-sitter and its grammars, ring
//! under rustls) are compiled by clang for the darwin target against clang's own headers,
//! Debian's musl headers and a stand-in for the SDK's `TargetConditionals.h`
//! (`xtask/darwin-include/`, saying the target is macOS), which is enough for a compile-only
//! check. Windows' C parts use mingw-w64. Nothing is linked or run here; the `wine` step
//! runs the Windows tests of [`WINDOWS_TESTED_CRATES`] and the binary.

use std::process::Command;

/// One target: its triple and the C compiler settings its build scripts need.
struct Target {
    triple: &'static str,
    c_compiler: Option<DarwinClang>,
}

/// clang for a darwin target without an Apple SDK: its own headers, musl's for libc, ours
/// for the SDK's target macros.
struct DarwinClang {
    clang_target: &'static str,
}

/// The portable crates whose tests run under Wine (`cargo xtask test`'s `wine` step); the
/// others' tests drive real test runners and language servers, which are installed here
/// for Linux only.
pub const WINDOWS_TESTED_CRATES: [&str; 4] =
    ["tools-core", "tools-fs", "tools-ast", "tools-daemon"];

/// Where Debian's `musl-dev` puts its headers.
const MUSL_HEADERS: &str = "/usr/include/x86_64-linux-musl";

const TARGETS: [Target; 3] = [
    Target {
        triple: "x86_64-apple-darwin",
        c_compiler: Some(DarwinClang {
            clang_target: "x86_64-apple-darwin",
        }),
    },
    Target {
        triple: "aarch64-apple-darwin",
        c_compiler: Some(DarwinClang {
            clang_target: "arm64-apple-darwin",
        }),
    },
    Target {
        triple: "x86_64-pc-windows-gnu",
        c_compiler: None,
    },
];

/// `cargo clippy --workspace --all-targets -- -D warnings` for every target in
/// [`TARGETS`]; every target is checked, and the failures are listed together.
pub fn check() -> crate::Result {
    let mut failures = Vec::new();
    for target in &TARGETS {
        let mut cmd = crate::cargo();
        cmd.args([
            "clippy",
            "--keep-going",
            "--workspace",
            "--all-targets",
            "--target",
            target.triple,
            "--",
            "-D",
            "warnings",
        ]);
        if let Some(clang) = &target.c_compiler {
            darwin_c_compiler(&mut cmd, target.triple, clang);
        }
        if let Err(e) = crate::run(&mut cmd) {
            failures.push(format!("{}: {e}", target.triple));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// The `cc` crate's per-target settings: clang with `--target`, musl's headers for libc,
/// ours for `TargetConditionals.h`.
fn darwin_c_compiler(cmd: &mut Command, triple: &str, clang: &DarwinClang) {
    let var = triple.replace('-', "_");
    let sdk_stand_ins = concat!(env!("CARGO_MANIFEST_DIR"), "/darwin-include");
    let flags = format!(
        "--target={} -isystem {MUSL_HEADERS} -isystem {sdk_stand_ins}",
        clang.clang_target
    );
    cmd.env(format!("CC_{var}"), "clang")
        .env(format!("CXX_{var}"), "clang++")
        .env(format!("CFLAGS_{var}"), &flags)
        .env(format!("CXXFLAGS_{var}"), &flags);
}
