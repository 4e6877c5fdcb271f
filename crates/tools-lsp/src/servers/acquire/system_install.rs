//! How to install the servers agent-tools cannot install itself (no recipe: a toolchain or
//! the OS ships them), on each OS: the end of their `servers` line when they are missing.

use tools_core::platform::Os;

/// How to install `program` on `os`, when it is one the OS or a toolchain ships.
pub fn system_install(program: &str, os: Os) -> Option<&'static str> {
    Some(match (program, os) {
        ("rust-analyzer", _) => "`rustup component add rust-analyzer`",
        ("clangd", Os::MacOs) => "`xcode-select --install` (the Xcode command-line tools)",
        ("clangd", Os::Linux) => "`apt install clangd` (Debian, Ubuntu) or the distribution's",
        ("clangd", Os::Windows) => "`winget install LLVM.LLVM`",
        ("sourcekit-lsp", Os::MacOs) => "`xcode-select --install` (the Xcode command-line tools)",
        ("sourcekit-lsp", _) => "the Swift toolchain (swift.org/install)",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_os_says_how_it_ships_its_own_servers() {
        assert_eq!(
            system_install("clangd", Os::MacOs),
            Some("`xcode-select --install` (the Xcode command-line tools)")
        );
        assert_eq!(
            system_install("clangd", Os::Windows),
            Some("`winget install LLVM.LLVM`")
        );
        assert_eq!(
            system_install("sourcekit-lsp", Os::Linux),
            Some("the Swift toolchain (swift.org/install)")
        );
        assert_eq!(
            system_install("rust-analyzer", Os::Windows),
            system_install("rust-analyzer", Os::MacOs)
        );
        assert_eq!(system_install("zls", Os::Linux), None);
    }
}
