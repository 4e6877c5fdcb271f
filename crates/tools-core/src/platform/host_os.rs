//! Which OS this build runs on, as a value: tables that differ by OS (how to install a
//! program, say) are written for every OS in one place and tested on any of them.

/// An operating system the workspace builds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
    /// Another Unix (a BSD).
    OtherUnix,
}

/// The OS this build runs on.
pub const HOST_OS: Os = if cfg!(target_os = "linux") {
    Os::Linux
} else if cfg!(target_os = "macos") {
    Os::MacOs
} else if cfg!(windows) {
    Os::Windows
} else {
    Os::OtherUnix
};

impl Os {
    /// Its name as its users write it.
    pub fn name(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::MacOs => "macOS",
            Os::Windows => "Windows",
            Os::OtherUnix => "this Unix",
        }
    }
}
