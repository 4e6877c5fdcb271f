//! Files and folders only this user may read, advisory locks, link counts and ids, on Unix.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` and its parents, readable by this user only (0700 for the folders made).
pub(crate) fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates the one folder `dir` (its parent must exist), readable by this user only;
/// fails when anything, a link included, already has that name.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Options for a file of our own state (journals, run marks): readable by this user only
/// when created (0600), never following a link at the last component, not inherited by
/// children. The caller says read, write, create.
pub fn private_file_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW);
    o
}

/// Options to open an existing file of our own state for reading only to test its lock:
/// never following a link, never waiting on a FIFO planted under its name.
pub(crate) fn probe_file_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK);
    o
}

/// Takes `file`'s `flock` exclusively; `wait` false returns `Ok(false)` when someone holds it.
pub(crate) fn lock_exclusive(file: &File, wait: bool) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let op = if wait {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: a valid open fd.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if !wait => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// How many names the open `file` has (0: it was removed while open).
pub(crate) fn link_count(file: &File) -> io::Result<u64> {
    Ok(file.metadata()?.nlink())
}

/// The device and inode of what `meta` describes: equal pairs are the same file.
pub(crate) fn file_identity(meta: &std::fs::Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// Whether what `meta` describes belongs to this process's effective user.
pub(crate) fn owned_by_us(meta: &std::fs::Metadata) -> bool {
    // SAFETY: geteuid has no preconditions.
    meta.uid() == unsafe { libc::geteuid() }
}

/// This process's effective user and group ids, the owner a file it creates gets.
pub(crate) fn effective_ids() -> (u32, u32) {
    // SAFETY: geteuid/getegid have no preconditions.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// Whether this process may write any file whatever its mode (the superuser).
pub(crate) fn is_superuser() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether `meta` describes a file someone may execute (any execute bit).
pub(crate) fn is_executable_file(_path: &Path, meta: &std::fs::Metadata) -> bool {
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

/// Whether a program name is a path to check as given rather than a name to look up.
pub(crate) fn is_path_like(name: &str) -> bool {
    name.contains('/')
}

/// A project's own binary folders, in order of preference.
pub const LOCAL_BIN_DIRS: [&str; 3] = [".venv/bin", "venv/bin", "node_modules/.bin"];

/// A virtual environment's folder of programs (`.venv/bin`).
pub const VENV_PROGRAMS: &str = "bin";

/// Folders outside `PATH` where the OS keeps the developer tools it installs itself: on
/// macOS the Xcode command-line tools' (`xcode-select --install`) and Xcode's, which hold
/// `lldb-dap`, `clangd` and `sourcekit-lsp` without putting all of them on `PATH`.
#[cfg(target_os = "macos")]
pub const DEVELOPER_TOOL_DIRS: &[&str] = &[
    "/Library/Developer/CommandLineTools/usr/bin",
    "/Applications/Xcode.app/Contents/Developer/usr/bin",
];
/// Folders outside `PATH` where the OS keeps the developer tools it installs itself: none
/// here (a distribution's packages put theirs on `PATH`).
#[cfg(not(target_os = "macos"))]
pub const DEVELOPER_TOOL_DIRS: &[&str] = &[];

/// Whether a POSIX shell script with the executable mode runs as a program (a target
/// runner cargo starts, say): its `#!` line names the shell.
pub const RUNS_SHELL_SCRIPTS: bool = true;

/// The file names a program called `name` may have in a `PATH` folder: just `name`.
pub(crate) fn program_file_names(name: &str) -> Vec<String> {
    vec![name.to_string()]
}

/// A file name from bytes as they were stored (a name is any bytes but `/` and NUL here).
pub(crate) fn os_string_from_bytes(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

/// The bytes of a file name, as [`os_string_from_bytes`] takes them back.
pub(crate) fn os_str_bytes(name: &std::ffi::OsStr) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    name.as_bytes()
}

/// Makes a link at `at` to `target` (a path relative to `at`'s folder, or absolute).
pub fn link_file(target: &Path, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

/// Lets everyone run the file at `path` (mode 0755).
pub fn make_executable(path: &Path) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
