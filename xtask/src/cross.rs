//! `cargo xtask lint cross`: the portable crates checked for the operating systems this
//! machine cannot run.
//!
//! macOS (Intel and Apple silicon) and Windows are compile-checked here: clippy with warnings
//! denied for `x86_64-apple-darwin`, `aarch64-apple-darwin` and `x86_64-pc-windows-gnu`, over
//! the crates of [`crate::platform_calls::PORTABLE_CRATES`] (those whose OS-specific code
//! goes through the platform layer), so a Linux-only call cannot land in them unnoticed.
//! There is no Apple SDK here: the C parts a check builds (tree-sitter and its grammars, ring
//! under rustls) are compiled by clang for the darwin target against clang's own headers,
//! Debian's musl headers and a stand-in for the SDK's `TargetConditionals.h`
//! (`xtask/darwin-include/`, saying the target is macOS), which is enough for a compile-only
//! check. Windows' C parts use
//! mingw-w64. Nothing is linked or run.
//!
//! macOS is checked with `--all-targets` for every portable crate, and for the binary with
//! every family ([`BINARY_CRATES`]; on Windows the `wine` step builds it). Windows is checked with
//! `--all-targets` for the crates whose tests run under Wine ([`WINDOWS_TESTED_CRATES`]:
//! their Unix-only tests are gated `#[cfg(unix)]`, with Windows counterparts beside them)
//! and those whose tests only compile for it ([`WINDOWS_COMPILED_TEST_CRATES`]), and for
//! the libraries only of the others, whose tests still plant Unix files.

use std::process::Command;

/// One target: its triple, which crates' test targets are checked too, and the C compiler
/// settings its build scripts need.
struct Target {
    triple: &'static str,
    test_targets: TestTargets,
    /// Crates checked for this target beside the portable ones, with `--all-targets`.
    also: &'static [&'static str],
    c_compiler: Option<DarwinClang>,
}

/// Which portable crates are checked with `--all-targets` (tests, benches) for a target.
enum TestTargets {
    /// Every one.
    All,
    /// Those of these lists; the others' libraries only.
    Only(&'static [&'static [&'static str]]),
}

/// clang for a darwin target without an Apple SDK: its own headers, musl's for libc, ours
/// for the SDK's target macros.
struct DarwinClang {
    clang_target: &'static str,
}

/// The portable crates whose tests build for Windows and run under Wine (`cargo xtask
/// test`'s `wine` step).
pub const WINDOWS_TESTED_CRATES: [&str; 4] =
    ["tools-core", "tools-fs", "tools-ast", "tools-daemon"];

/// The portable crates whose tests are compiled for Windows but not run under Wine: they
/// drive real test runners and language servers, which are installed here for Linux only.
pub const WINDOWS_COMPILED_TEST_CRATES: [&str; 1] = ["tools-test"];

/// The crates checked for macOS beside the portable ones: the binary with every family.
const BINARY_CRATES: [&str; 1] = ["agent-tools"];

/// Where Debian's `musl-dev` puts its headers.
const MUSL_HEADERS: &str = "/usr/include/x86_64-linux-musl";

const TARGETS: [Target; 3] = [
    Target {
        triple: "x86_64-apple-darwin",
        test_targets: TestTargets::All,
        also: &BINARY_CRATES,
        c_compiler: Some(DarwinClang {
            clang_target: "x86_64-apple-darwin",
        }),
    },
    Target {
        triple: "aarch64-apple-darwin",
        test_targets: TestTargets::All,
        also: &BINARY_CRATES,
        c_compiler: Some(DarwinClang {
            clang_target: "arm64-apple-darwin",
        }),
    },
    Target {
        triple: "x86_64-pc-windows-gnu",
        test_targets: TestTargets::Only(&[&WINDOWS_TESTED_CRATES, &WINDOWS_COMPILED_TEST_CRATES]),
        also: &[],
        c_compiler: None,
    },
];

/// Clippy with warnings denied over the portable crates, for every target in [`TARGETS`];
/// every target is checked, and the failures are listed together.
pub fn check() -> crate::Result {
    let mut failures = Vec::new();
    for target in &TARGETS {
        for (crates, all_targets) in invocations(target) {
            if crates.is_empty() {
                continue;
            }
            let mut cmd = crate::cargo();
            cmd.args(["clippy", "--keep-going", "--target", target.triple]);
            for name in crates {
                cmd.args(["-p", name]);
            }
            if all_targets {
                cmd.arg("--all-targets");
            }
            cmd.args(["--", "-D", "warnings"]);
            if let Some(clang) = &target.c_compiler {
                darwin_c_compiler(&mut cmd, target.triple, clang);
            }
            if let Err(e) = crate::run(&mut cmd) {
                failures.push(format!("{}: {e}", target.triple));
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// The clippy runs of one target: the crate names checked with `--all-targets`, then those
/// checked for their libraries only.
fn invocations(target: &Target) -> [(Vec<&'static str>, bool); 2] {
    let names = crate::platform_calls::PORTABLE_CRATES
        .iter()
        .map(|krate| krate.rsplit('/').next().unwrap_or(krate));
    let (mut with_tests, libs): (Vec<&str>, Vec<&str>) = match &target.test_targets {
        TestTargets::All => (names.collect(), Vec::new()),
        TestTargets::Only(lists) => names.partition(|n| lists.iter().any(|l| l.contains(n))),
    };
    with_tests.extend(target.also);
    [(with_tests, true), (libs, false)]
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
