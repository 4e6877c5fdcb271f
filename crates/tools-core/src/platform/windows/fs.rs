//! Files and folders of our own state, locks, link counts and ids, on Windows.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_FLAG_OPEN_REPARSE_POINT, GetFileInformationByHandle,
};

/// Creates `dir` and its parents. A folder under the user's profile is private to the user
/// by its inherited access list; no mode bits exist to narrow it further.
pub(crate) fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Creates the one folder `dir`; fails when anything already has that name.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir(dir)
}

/// Options for a file of our own state: a reparse point (link) at the last component is
/// opened itself, never followed. The caller says read, write, create.
pub fn private_file_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    o
}

/// Whether what `meta` describes belongs to this user. Windows keeps the owner in the
/// access list, not in the metadata; a folder under the user's profile is the user's by
/// what it inherits, so this answers yes.
pub(crate) fn owned_by_us(_meta: &std::fs::Metadata) -> bool {
    true
}

/// Options to open an existing file of our own state for reading only to test its lock.
pub(crate) fn probe_file_options() -> OpenOptions {
    let mut o = private_file_options();
    o.read(true);
    o
}

/// Takes `file`'s lock exclusively; `wait` false returns `Ok(false)` when someone holds it.
pub(crate) fn lock_exclusive(file: &File, wait: bool) -> io::Result<bool> {
    if wait {
        file.lock()?;
        return Ok(true);
    }
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

fn handle_information(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    use std::os::windows::io::AsRawHandle;
    let mut info = BY_HANDLE_FILE_INFORMATION::default();
    // SAFETY: a valid open handle and a valid out-buffer.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &raw mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// How many names the open `file` has (0: it was removed while open).
pub(crate) fn link_count(file: &File) -> io::Result<u64> {
    Ok(u64::from(handle_information(file)?.nNumberOfLinks))
}

/// The identity of what `meta` describes. Stable std gives no volume serial or file index
/// from a path's metadata on Windows, so the creation time and length stand in: equal for
/// the same file, and a replaced file almost always differs in its creation time.
pub(crate) fn file_identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::windows::fs::MetadataExt;
    (meta.creation_time(), meta.file_size())
}

/// Windows files have no numeric owner ids; ownership is not copied.
pub(crate) fn effective_ids() -> (u32, u32) {
    (0, 0)
}

/// Access on Windows is decided by access lists, not by a superuser bypassing modes.
pub(crate) fn is_superuser() -> bool {
    false
}

/// The extensions of programs Windows runs by name (`PATHEXT`; `.COM;.EXE;.BAT;.CMD` when it
/// is unset), without their dots.
fn program_extensions() -> Vec<String> {
    std::env::var("PATHEXT")
        .unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into())
        .split(';')
        .map(|e| e.trim().trim_start_matches('.').to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

/// Whether `path` names a program Windows would run: a file whose extension is one of
/// `PATHEXT`.
pub(crate) fn is_executable_file(path: &Path, meta: &std::fs::Metadata) -> bool {
    let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
        return false;
    };
    meta.is_file()
        && program_extensions()
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext))
}

/// A project's own binary folders, in order of preference.
pub const LOCAL_BIN_DIRS: [&str; 3] = [".venv/Scripts", "venv/Scripts", "node_modules/.bin"];

/// A virtual environment's folder of programs (`.venv\Scripts`).
pub const VENV_PROGRAMS: &str = "Scripts";

/// Folders outside `PATH` where the OS keeps the developer tools it installs itself: none
/// (LLVM's and Go's installers put theirs on `PATH`).
pub const DEVELOPER_TOOL_DIRS: &[&str] = &[];

/// Whether a POSIX shell script with the executable mode runs as a program (a target
/// runner cargo starts, say): Windows runs a program by its extension, and `.sh` is none.
pub const RUNS_SHELL_SCRIPTS: bool = false;

/// Whether a program name is a path to check as given (either slash, or a drive letter).
pub(crate) fn is_path_like(name: &str) -> bool {
    name.contains('/') || name.contains('\\') || name.contains(':')
}

/// The file names a program called `name` may have in a `PATH` folder: `name` itself when
/// it already ends in a program extension, then `name` with each `PATHEXT` extension.
pub(crate) fn program_file_names(name: &str) -> Vec<String> {
    let exts = program_extensions();
    let mut names = Vec::new();
    if Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|ext| exts.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    {
        names.push(name.to_string());
    }
    names.extend(
        exts.iter()
            .map(|e| format!("{name}.{}", e.to_ascii_lowercase())),
    );
    names
}

/// A file name from bytes as [`os_str_bytes`] gave them; names that are not valid UTF-8
/// (unpaired UTF-16 halves) lose those characters.
pub(crate) fn os_string_from_bytes(bytes: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}

/// The bytes of a file name (its WTF-8 form, UTF-8 for every valid name).
pub(crate) fn os_str_bytes(name: &std::ffi::OsStr) -> &[u8] {
    name.as_encoded_bytes()
}

/// Makes a link at `at` to `target` (a path relative to `at`'s folder, or absolute); where
/// this user may not make links (they need developer mode or a privilege), a copy of the
/// target instead.
pub fn link_file(target: &Path, at: &Path) -> io::Result<()> {
    match std::os::windows::fs::symlink_file(target, at) {
        Ok(()) => Ok(()),
        Err(_) => {
            let source = at.parent().unwrap_or(Path::new(".")).join(target);
            std::fs::copy(source, at).map(|_| ())
        }
    }
}

/// Windows runs a file by its extension (`PATHEXT`), not by a mode: nothing to change.
pub fn make_executable(_path: &Path) -> io::Result<()> {
    Ok(())
}
