//! The walk from the workspace root to the folder of a file, one component at a time.
//!
//! Every folder on the way is opened relative to the folder before it, never following a
//! link ([`crate::platform::Dir`] says how each OS does that). A folder that was swapped for
//! a symbolic link after the jail checked the path (to the outside or anywhere else) makes
//! the open fail instead of being followed; every later step (stat, temp file, rename,
//! unlink) happens relative to the handle, so no path is looked up twice.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path};

pub(crate) use crate::platform::{Dir, Entry, EntryKind, entry_of, set_owner_and_mode};

use super::FileError;

/// Opens the folder that holds `path` (absolute, inside `root`), walking from `root` with
/// `O_NOFOLLOW` on every component; with `create`, missing folders are made on the way.
/// Returns the folder and the file's name in it.
pub(crate) fn open_parent(
    root: &Path,
    path: &Path,
    create: bool,
) -> Result<(Dir, OsString), FileError> {
    let rel = path.strip_prefix(root).map_err(|_| FileError::Outside)?;
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n.to_os_string()),
            Component::CurDir => {}
            _ => return Err(FileError::Outside),
        }
    }
    if let Some((name, why)) = names
        .iter()
        .find_map(|n| crate::platform::reserved_name(n).map(|why| (n, why)))
    {
        return Err(FileError::ReservedName(
            name.to_string_lossy().into_owned(),
            why,
        ));
    }
    let Some(file_name) = names.pop() else {
        return Err(FileError::Directory);
    };
    let mut dir = Dir::open_path(root)?;
    let mut walked = std::path::PathBuf::new();
    for name in &names {
        walked.push(name);
        let opened = match dir.open_child(name) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                dir.make_child(name)?;
                // The new folder's name must survive a power loss with the file put in it.
                dir.sync()?;
                dir.open_child(name)
            }
            other => other,
        };
        dir = match opened {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(FileError::NotFound),
            // ELOOP: the component is a symbolic link; ENOTDIR: it is something else.
            Err(e) if crate::platform::is_link_or_not_folder(&e) => {
                let shown = walked.display().to_string();
                return Err(match dir.entry(name).ok().flatten().map(|e| e.kind) {
                    Some(EntryKind::Symlink) | None => FileError::PathSwapped(shown),
                    Some(_) => FileError::NotAFolder(shown),
                });
            }
            Err(e) => return Err(FileError::Io(e)),
        };
    }
    Ok((dir, file_name))
}
