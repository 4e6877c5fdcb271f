//! How to install each adapter, on each OS: the end of the line that says an adapter's
//! program is missing (`adapters`, `doctor`, a `launch` that cannot start).

use tools_core::platform::Os;

use super::AdapterId;

impl AdapterId {
    /// How to install this adapter's program on `os`, as a clause.
    pub fn install_hint(self, os: Os) -> &'static str {
        match (self, os) {
            (AdapterId::Debugpy, _) => {
                "`pip install debugpy` into the environment that runs the program"
            }
            (AdapterId::Lldb, Os::MacOs) => {
                "`xcode-select --install` (the Xcode command-line tools ship lldb-dap)"
            }
            (AdapterId::Lldb, Os::Linux) => {
                "the distribution's lldb package (Debian and Ubuntu: `apt install lldb`, which ships lldb-dap-NN)"
            }
            (AdapterId::Lldb, Os::Windows) => {
                "LLVM for Windows (`winget install LLVM.LLVM`), which ships lldb-dap.exe"
            }
            (AdapterId::Lldb, Os::OtherUnix) => "the system's LLVM or lldb package",
            (AdapterId::Delve, _) => "`go install github.com/go-delve/delve/cmd/dlv@latest`",
            (AdapterId::Dart, _) => "the Dart or Flutter SDK (its `dart` on PATH)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lldb_dap_is_installed_the_way_each_os_ships_it() {
        assert_eq!(
            AdapterId::Lldb.install_hint(Os::MacOs),
            "`xcode-select --install` (the Xcode command-line tools ship lldb-dap)"
        );
        assert_eq!(
            AdapterId::Lldb.install_hint(Os::Windows),
            "LLVM for Windows (`winget install LLVM.LLVM`), which ships lldb-dap.exe"
        );
        assert!(
            AdapterId::Lldb
                .install_hint(Os::Linux)
                .starts_with("the distribution's lldb package")
        );
        // The others install the same way everywhere.
        for id in [AdapterId::Debugpy, AdapterId::Delve, AdapterId::Dart] {
            assert_eq!(id.install_hint(Os::MacOs), id.install_hint(Os::Windows));
            assert_eq!(id.install_hint(Os::Linux), id.install_hint(Os::Windows));
        }
    }
}
