//! Everything that differs between Linux, macOS and Windows, in one place with one job:
//! child process trees (sessions and groups, Job Objects), children dying with us, the
//! watchdog, the process listing, the jailed folder walk, files of our own state (private
//! folders, locks, link counts), ids and modes, file names as bytes, this process's memory,
//! and terminal devices.
//!
//! The rest of the crate calls only the small functions and types re-exported here; `cfg`
//! on an OS appears nowhere else. The workspace's other crates call only the few public
//! ones: [`kill_leftover`], [`exit_signal`] and [`signal_meaning`], [`ChildChannel`] (a
//! private channel to a child, for the `eval` kernels), [`resident_bytes`], [`return_freed_memory`],
//! [`Terminal`], [`tree_processes`] (what a child's tree holds in memory), [`StopRequests`]
//! (SIGTERM, SIGINT, SIGHUP; the console's Ctrl-C and closing on Windows), and for files
//! [`make_own_private_dir`], [`private_file_options`], [`link_file`], [`make_executable`],
//! [`RUNS_SHELL_SCRIPTS`] and [`same_file`]; for finding and installing programs
//! [`DEVELOPER_TOOL_DIRS`] (macOS's Xcode command-line tools) and [`HOST_OS`] (an [`Os`]
//! value, so a table of what differs by OS is written for all of them and tested on any).
//! Where an OS has no equivalent of a facility yet, its function answers an `Unsupported`
//! error naming what is missing, never a silent no-op (handing freed memory back does
//! nothing where the allocator does it on its own). Linux is the reference: its behaviour
//! is the one the crate's tests pin down.

mod entry;
mod file_uri;
mod host_os;
mod path_key;
mod proc_stat;
mod user_dirs;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub(crate) use entry::{Entry, EntryKind};
pub use file_uri::{
    FileUriError, PathStyle, file_uri_to_path, foreign_path_reason, looks_like_windows_path,
    path_to_file_uri, uri_to_path_bytes, windows_path_to_uri,
};
pub use host_os::{HOST_OS, Os};
pub(crate) use os::fs::{
    create_private_dir, create_private_dir_all, effective_ids, file_identity, is_executable_file,
    is_path_like, is_superuser, link_count, lock_exclusive, os_str_bytes, os_string_from_bytes,
    owned_by_us, probe_file_options, program_file_names,
};
pub(crate) use os::jail::{
    Dir, entry_of, is_link_or_not_folder, reserved_name, set_owner_and_mode,
};
pub(crate) use os::process::{
    ask_group_to_stop, detach_watchdog, exit_watchdog, fork_watchdog, group_alive, kill_group,
    kill_process, kill_self_now, own_tree_dying_with_us, reap_exited, signal_group, spawn_watchdog,
    stdin_as_file, tree_forgotten, tree_started,
};
#[cfg(all(test, unix))]
pub(crate) use os::procs::process;
pub(crate) use os::procs::{all_processes, become_subreaper};
pub use path_key::{
    CASE_INSENSITIVE, FOLDING, Folding, NORMALIZATION_INSENSITIVE, key_in, path_key,
    split_case_folded, within_root,
};
pub use proc_stat::{ProcStat, parse_stat};
pub use user_dirs::{
    APP_FOLDER, FolderRules, USER_CONFIG_FILE_SHOWN, UserFolder, layout as user_folder_layout,
    runtime_folder, user_folder, xdg_base,
};

// The public surface, for the workspace's other crates.
pub use os::child_channel::{ChildChannel, Interrupter};
pub use os::fs::{
    DEVELOPER_TOOL_DIRS, LOCAL_BIN_DIRS, RUNS_SHELL_SCRIPTS, VENV_PROGRAMS, link_file,
    make_executable, private_file_options,
};
pub use os::local_socket::{
    LOCAL_SOCKETS, LocalListener, LocalStream, connect_local, detach_from_our_group,
};
pub use os::memory::{resident_bytes, return_freed_memory};
pub use os::process::{exit_signal, kill_leftover, signal_meaning};
pub use os::stop::StopRequests;
pub use os::terminal::Terminal;
pub use os::tree_memory::tree_processes;

/// The environment variables in which a child started with a [`ChildChannel`] finds the
/// names of its commands, messages and interrupts pipes, on Windows (on Unix it finds
/// them on fixed descriptors and they are not set).
pub const CHANNEL_ENV: [&str; 3] = [
    "AGENT_TOOLS_CHANNEL_COMMANDS",
    "AGENT_TOOLS_CHANNEL_MESSAGES",
    "AGENT_TOOLS_CHANNEL_INTERRUPTS",
];

/// Our ends of a [`ChildChannel`] once the child runs: commands are written to it,
/// messages read from it (end of file once it is gone), interrupts sent through the
/// [`Interrupter`].
pub struct ChannelEnds {
    /// Where we write commands.
    pub commands: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    /// Where we read the child's messages.
    pub messages: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    /// How we interrupt what the child is doing.
    pub interrupter: Interrupter,
}

/// One process of a child's tree and the memory it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessMemory {
    /// Its process id.
    pub pid: i32,
    /// Its command name (on Linux `/proc/PID/comm`: at most 15 bytes, as the kernel keeps it).
    pub name: String,
    /// Its resident memory in bytes.
    pub rss: u64,
}

/// Whether `a` and `b` name the same file (links followed); `false` when either is missing.
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.metadata(), b.metadata()) {
        (Ok(x), Ok(y)) => file_identity(&x) == file_identity(&y),
        _ => false,
    }
}

/// Which side of [`fork_watchdog`] this is.
// Each OS makes only some of these: Unix forks (the first two), Windows needs no watchdog.
#[allow(dead_code)]
pub(crate) enum Forked {
    /// The watchdog: `reports` reaches end of file when the server is gone.
    Watchdog {
        /// The read end of the pipe from the server.
        reports: std::fs::File,
    },
    /// The server: `reports` is the non-blocking write end; `pid` the watchdog's.
    Server {
        /// The watchdog's pid.
        pid: i32,
        /// The write end of the pipe to the watchdog.
        reports: std::fs::File,
    },
    /// No watchdog is needed: every child tree is in a kill-on-close Job Object, which the
    /// system ends when this process dies.
    NotNeeded,
}

/// Flushes the folder `dir` so a new or removed name in it survives a power loss. On
/// Windows a folder cannot be opened as a file to be flushed; NTFS journals its own names.
pub(crate) fn sync_dir(dir: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(windows)]
    {
        let _ = dir;
        Ok(())
    }
}

/// Makes the one folder `dir` (its parent must exist) readable by this user only, or takes
/// the one already there. `Ok(false)` when what has that name is not a folder of ours: a
/// link (never followed) or a folder of another user's (on Unix).
pub fn make_own_private_dir(dir: &std::path::Path) -> std::io::Result<bool> {
    match create_private_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    Ok(meta.file_type().is_dir() && owned_by_us(&meta))
}
