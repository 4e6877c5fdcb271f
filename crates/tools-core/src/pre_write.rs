//! What files held just before this run's tools changed them (their *pre-images*).
//!
//! A write observer learns which files a call wrote only after the call, when the disk
//! already holds the new text. Some consumers need the text from before: a language server
//! that diagnoses only open documents must see the files importing a written one against
//! the written file's *old* text first, or whatever the write broke in them looks as if it
//! had always been there. Only the writer knows the old text at the moment it is replaced,
//! so [`crate::safe_write`] records it here — when a consumer asked for it with
//! [`PreWriteImages::enable`] — and the consumer takes it after the call.
//!
//! Several writes to one file within a call keep the first pre-image: each write records
//! the file's stamp (device, inode, size, modification time) after it, and a later write
//! keeps the older image only while the file is still exactly as that write left it. A file
//! changed by anyone else in between, or a stamp that no longer matches when the image is
//! taken, makes the image unknown: a consumer then falls back to not knowing, never to a
//! wrong old text. Memory is bounded per file and in total.
//!
//! More than one consumer reads the same image: diagnostics on write *takes* it (once, as
//! before), and any other observer of the call reads it with [`PreWriteImages::before`], in
//! whichever order they run, as one shared value.
//!
//! An image lives until its last reader is done. The call that wrote it owns one share,
//! which the registry gives up once all the call's observers have run
//! ([`PreWriteImages::release`]); a reader that may outlive that pass (the check a rename
//! leaves running after its answer) takes a [`PreImageHold`] while the call runs, and the
//! image goes when the last share is given up, in whichever order that happens.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The largest file whose pre-image is kept.
pub const MAX_PRE_IMAGE_BYTES: u64 = 1024 * 1024;
/// The most bytes of pre-images kept at once; the oldest go first.
pub const MAX_PRE_IMAGES_TOTAL: usize = 32 * 1024 * 1024;

/// A file's state just before a call wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreImage {
    /// The file did not exist (the call created it).
    Absent,
    /// The file's bytes.
    Content(Vec<u8>),
}

impl PreImage {
    fn len(&self) -> usize {
        match self {
            PreImage::Absent => 0,
            PreImage::Content(b) => b.len(),
        }
    }
}

/// Identifies one state of a file on disk without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

/// The stamp of what is at `path` now (`None`: nothing, or not a regular file).
fn stamp_of(path: &Path) -> Option<Stamp> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.file_type().is_file() {
        return None;
    }
    let (dev, ino) = crate::platform::file_identity(&m);
    Some(Stamp {
        dev,
        ino,
        len: m.len(),
        modified: m.modified().ok(),
    })
}

#[derive(Debug)]
struct Recorded {
    /// `None` when the old state could not be kept (too large, unreadable).
    image: Option<Arc<PreImage>>,
    /// Taken by [`PreWriteImages::take`]: not taken again, still read by
    /// [`PreWriteImages::before`], and never kept as the older image of a later write.
    taken: bool,
    /// The file's stamp after the last write recorded for it.
    after: Option<Stamp>,
    /// Insertion order, for evicting the oldest; also tells this record from a later one
    /// of the same file, so a hold on this one never releases that one.
    order: u64,
    /// Shares still held: the writing call's own until [`PreWriteImages::release`], and
    /// one per live [`PreImageHold`]. The record goes when none is left.
    shares: usize,
    /// The writing call's own share was given up.
    released: bool,
}

#[derive(Debug, Default)]
struct Images {
    by_path: HashMap<PathBuf, Recorded>,
    bytes: usize,
    next: u64,
}

impl Images {
    fn remove(&mut self, path: &Path) -> Option<Recorded> {
        let r = self.by_path.remove(path)?;
        self.bytes -= r.image.as_ref().map_or(0, |i| i.len());
        Some(r)
    }
}

/// The pre-images of one run's writes (shared by every clone of the run's [`crate::Workspace`]).
#[derive(Debug, Default)]
pub struct PreWriteImages {
    enabled: AtomicBool,
    images: Mutex<Images>,
}

impl PreWriteImages {
    fn images(&self) -> std::sync::MutexGuard<'_, Images> {
        match self.images.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Starts keeping pre-images (a consumer that takes them after every call asks for it;
    /// without one, writers do not pay for the extra read).
    pub fn enable(&self) {
        self.enabled.store(true, Ordering::SeqCst);
    }

    /// Whether pre-images are kept.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Before a write to `path`: keeps its current state, read by `read_old` (`Ok(None)`:
    /// no file; `Err(())`: not kept), unless an earlier write of the same call already kept
    /// an older one and the file is still as that write left it.
    pub(crate) fn before_write(
        &self,
        path: &Path,
        read_old: impl FnOnce() -> Result<Option<Vec<u8>>, ()>,
    ) {
        if !self.is_enabled() {
            return;
        }
        let now = stamp_of(path);
        {
            let mut images = self.images();
            match images.by_path.get(path) {
                Some(r) if !r.taken && r.after == now => return,
                Some(_) => {
                    images.remove(path);
                }
                None => {}
            }
        }
        let image = match read_old() {
            Ok(None) => Some(PreImage::Absent),
            Ok(Some(bytes)) if bytes.len() as u64 <= MAX_PRE_IMAGE_BYTES => {
                Some(PreImage::Content(bytes))
            }
            _ => None,
        };
        let len = image.as_ref().map_or(0, PreImage::len);
        let mut images = self.images();
        while images.bytes + len > MAX_PRE_IMAGES_TOTAL {
            let Some(oldest) = images
                .by_path
                .iter()
                .min_by_key(|(_, r)| r.order)
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            images.remove(&oldest);
        }
        let image = image
            .filter(|_| images.bytes + len <= MAX_PRE_IMAGES_TOTAL)
            .map(Arc::new);
        images.bytes += image.as_ref().map_or(0, |i| i.len());
        let order = images.next;
        images.next += 1;
        images.by_path.insert(
            path.to_path_buf(),
            Recorded {
                image,
                taken: false,
                after: None,
                order,
                shares: 1,
                released: false,
            },
        );
    }

    /// After a write to `path` (successful or undone): remembers how it left the file.
    pub(crate) fn after_write(&self, path: &Path) {
        if !self.is_enabled() {
            return;
        }
        let now = stamp_of(path);
        if let Some(r) = self.images().by_path.get_mut(path) {
            r.after = now;
        }
    }

    /// Takes the pre-image of `path` for the one consumer that owns it (diagnostics on
    /// write): `None` when none was kept, it was taken already, or the file has changed since
    /// the last recorded write (by someone else: the image may be stale). The image stays
    /// readable through [`PreWriteImages::before`] until the call's files are released.
    pub fn take(&self, path: &Path) -> Option<PreImage> {
        let mut images = self.images();
        let r = images.by_path.get_mut(path)?;
        if r.taken {
            return None;
        }
        if r.after != stamp_of(path) {
            images.remove(path);
            return None;
        }
        r.taken = true;
        r.image.as_deref().cloned()
    }

    /// The pre-image of `path`, shared and left in place (taken or not), while the file is
    /// still exactly as the call's last write left it; `None` otherwise. Any number of
    /// observers of one call read the same value.
    pub fn before(&self, path: &Path) -> Option<Arc<PreImage>> {
        let images = self.images();
        let r = images.by_path.get(path)?;
        if r.after != stamp_of(path) {
            return None;
        }
        r.image.clone()
    }

    /// Gives up the writing call's share of the pre-images of `paths` (the registry, once
    /// every observer of the call that wrote them has run): each goes now, or when the last
    /// [`PreImageHold`] on it drops.
    pub fn release(&self, paths: &[PathBuf]) {
        let mut images = self.images();
        for p in paths {
            let Some(r) = images.by_path.get_mut(p) else {
                continue;
            };
            if r.released {
                continue;
            }
            r.released = true;
            r.shares -= 1;
            if r.shares == 0 {
                images.remove(p);
            }
        }
    }

    /// Keeps the pre-images `paths` have now until the returned hold drops, past the
    /// registry's [`PreWriteImages::release`] (a reader that outlives the call's observers
    /// takes it while the call runs). A later write's image of the same file is not held.
    pub fn hold(self: &Arc<Self>, paths: &[PathBuf]) -> PreImageHold {
        let mut held = Vec::new();
        let mut images = self.images();
        for p in paths {
            if held.iter().any(|(h, _)| h == p) {
                continue;
            }
            if let Some(r) = images.by_path.get_mut(p) {
                r.shares += 1;
                held.push((p.clone(), r.order));
            }
        }
        PreImageHold {
            images: Arc::clone(self),
            held,
        }
    }
}

/// A share of some pre-images (see [`PreWriteImages::hold`]): they stay readable, taken or
/// not, while it lives; dropping the last share releases them.
#[derive(Debug)]
#[must_use = "the images are released as soon as the hold drops"]
pub struct PreImageHold {
    images: Arc<PreWriteImages>,
    /// The files held, with the record each share is on.
    held: Vec<(PathBuf, u64)>,
}

impl Drop for PreImageHold {
    fn drop(&mut self) {
        let mut images = self.images.images();
        for (p, order) in &self.held {
            let Some(r) = images.by_path.get_mut(p) else {
                continue;
            };
            // Replaced by a later write since: that record is not this hold's.
            if r.order != *order {
                continue;
            }
            r.shares -= 1;
            if r.shares == 0 {
                images.remove(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(images: &PreWriteImages, path: &Path, text: &str) {
        images.before_write(path, || match std::fs::read(path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(_) => Err(()),
        });
        std::fs::write(path, text).unwrap();
        images.after_write(path);
    }

    #[test]
    fn keeps_the_first_image_of_a_call_and_drops_stale_ones() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        let images = PreWriteImages::default();
        // Disabled: nothing kept.
        std::fs::write(&f, "zero").unwrap();
        write(&images, &f, "one");
        assert_eq!(images.take(&f), None);

        images.enable();
        write(&images, &f, "two");
        write(&images, &f, "three");
        assert_eq!(images.take(&f), Some(PreImage::Content(b"one".to_vec())));
        // Taken once only; still read by the call's other observers until released.
        assert_eq!(images.take(&f), None);
        write(&images, &f, "two");
        assert_eq!(
            images.before(&f).as_deref(),
            Some(&PreImage::Content(b"three".to_vec()))
        );
        assert_eq!(images.take(&f), Some(PreImage::Content(b"three".to_vec())));
        assert_eq!(
            images.before(&f).as_deref(),
            Some(&PreImage::Content(b"three".to_vec()))
        );
        // A write after the take records the file anew, not the taken image.
        write(&images, &f, "three");
        assert_eq!(
            images.before(&f).as_deref(),
            Some(&PreImage::Content(b"two".to_vec()))
        );
        images.release(std::slice::from_ref(&f));
        assert_eq!(images.before(&f), None);
        assert_eq!(images.take(&f), None);

        // Changed by someone else after the write: the image may be stale.
        write(&images, &f, "four");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&f, "outside, longer").unwrap();
        assert_eq!(images.take(&f), None);

        // Changed by someone else between two writes: the older image is not kept.
        write(&images, &f, "five");
        std::fs::write(&f, "outside again, longer").unwrap();
        write(&images, &f, "six");
        assert_eq!(
            images.take(&f),
            Some(PreImage::Content(b"outside again, longer".to_vec()))
        );

        // A created file had no content before.
        let g = dir.path().join("new.txt");
        write(&images, &g, "x");
        assert_eq!(images.take(&g), Some(PreImage::Absent));
    }

    #[test]
    fn an_image_lives_until_its_last_share_is_given_up_in_either_order() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "old").unwrap();
        let images = Arc::new(PreWriteImages::default());
        images.enable();
        let old = Some(PreImage::Content(b"old".to_vec()));

        // A check that outlives the call's observers: the registry's release leaves the
        // image to it, and its take still sees the text from before.
        write(&images, &f, "new");
        let check = images.hold(&[f.clone(), f.clone()]);
        images.release(std::slice::from_ref(&f));
        images.release(std::slice::from_ref(&f));
        assert_eq!(images.before(&f).as_deref(), old.as_ref());
        assert_eq!(images.take(&f), old);
        assert_eq!(images.before(&f).as_deref(), old.as_ref());
        drop(check);
        assert_eq!(images.before(&f), None);

        // A check that ends first: the observers still read the image until the release.
        std::fs::write(&f, "old").unwrap();
        write(&images, &f, "new");
        let check = images.hold(std::slice::from_ref(&f));
        assert_eq!(images.take(&f), old);
        drop(check);
        assert_eq!(images.before(&f).as_deref(), old.as_ref());
        images.release(std::slice::from_ref(&f));
        assert_eq!(images.before(&f), None);

        // A later call's image of the same file is not the earlier hold's to release.
        std::fs::write(&f, "old").unwrap();
        write(&images, &f, "new");
        let check = images.hold(std::slice::from_ref(&f));
        assert_eq!(images.take(&f), old);
        images.release(std::slice::from_ref(&f));
        write(&images, &f, "newer");
        drop(check);
        assert_eq!(
            images.before(&f).as_deref(),
            Some(&PreImage::Content(b"new".to_vec()))
        );
        images.release(std::slice::from_ref(&f));
        assert_eq!(images.before(&f), None);

        // A hold on a file with no image holds nothing.
        let none = images.hold(&[dir.path().join("never.txt")]);
        drop(none);
    }

    #[test]
    fn large_files_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.bin");
        std::fs::write(&f, vec![b'x'; MAX_PRE_IMAGE_BYTES as usize + 1]).unwrap();
        let images = PreWriteImages::default();
        images.enable();
        write(&images, &f, "small");
        assert_eq!(images.take(&f), None);
    }
}
