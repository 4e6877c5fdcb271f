//! What a folder entry is, in the same words on every OS: the jailed writer decides on
//! these facts (a link is refused, a special file is named, a file with several names is
//! rewritten in place) whatever system call produced them.

/// What is at a name inside a folder (`lstat`, never following a link).
// Windows has no jailed walk yet, so nothing there tells these kinds apart.
#[cfg_attr(windows, allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device, named for messages.
    Special(&'static str),
}

/// `lstat` facts about an entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub kind: EntryKind,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub nlink: u64,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
}
