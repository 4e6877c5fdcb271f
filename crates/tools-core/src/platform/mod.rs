//! Everything that differs between Linux, macOS and Windows, in one place with one job:
//! child process trees (sessions and groups, Job Objects), children dying with us, the
//! watchdog, the process listing, the jailed folder walk, files of our own state (private
//! folders, locks, link counts), ids and modes, file names as bytes, this process's memory,
//! and terminal devices.
//!
//! The rest of the crate calls only the small functions and types re-exported here; `cfg`
//! on an OS appears nowhere else. The workspace's other crates call only the few public
//! ones: [`kill_leftover`], [`resident_bytes`], [`return_freed_memory`] and [`Terminal`].
//! Where an OS has no equivalent of a facility yet, its function answers an `Unsupported`
//! error naming what is missing, never a silent no-op (handing freed memory back does
//! nothing where the allocator does it on its own). Linux is the reference: its behaviour
//! is the one the crate's tests pin down.

mod entry;
mod proc_stat;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub(crate) use entry::{Entry, EntryKind};
pub(crate) use os::fs::{
    create_private_dir, create_private_dir_all, effective_ids, file_identity, is_executable_file,
    is_path_like, is_superuser, link_count, lock_exclusive, os_str_bytes, os_string_from_bytes,
    private_file_options, probe_file_options, program_file_names,
};
pub(crate) use os::jail::{Dir, entry_of, is_link_or_not_folder, set_owner_and_mode};
pub(crate) use os::process::{
    detach_watchdog, exit_watchdog, fork_watchdog, group_alive, kill_group, kill_process,
    kill_self_now, own_tree_dying_with_us, reap_exited, signal_group, tree_forgotten, tree_started,
};
#[cfg(test)]
pub(crate) use os::procs::process;
pub(crate) use os::procs::{all_processes, become_subreaper};
pub use proc_stat::{ProcStat, parse_stat};

// The public surface, for the workspace's other crates.
pub use os::memory::{resident_bytes, return_freed_memory};
pub use os::process::kill_leftover;
pub use os::terminal::Terminal;

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
