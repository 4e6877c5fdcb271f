//! The journal's bytes: written by [`encode`], read back by [`decode`], which refuses
//! anything cut short, altered, or naming a path that could leave the workspace.

use crate::platform::{os_str_bytes, os_string_from_bytes};
use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

const MAGIC: &[u8] = b"agent-tools journal 1\n";
const DIGEST_LEN: usize = 32;

/// What a file held before the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OldState<'a> {
    /// Nothing was at the path.
    Absent,
    /// A regular file with these bytes, mode and owner.
    Present {
        /// Permission bits.
        mode: u32,
        /// Owner.
        uid: u32,
        /// Group.
        gid: u32,
        /// Content.
        bytes: Cow<'a, [u8]>,
    },
}

/// What a file gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NewState<'a> {
    /// The file is removed.
    Delete,
    /// The file holds `bytes`; `mode` as in the safe writer's `FileChange::Write`.
    Write {
        /// The mode to give it (`None`: keep the old file's, or the umask's).
        mode: Option<u32>,
        /// Content.
        bytes: Cow<'a, [u8]>,
    },
}

/// One file of a journaled change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    /// The path relative to the workspace root: plain names only, no `..`.
    pub(crate) rel: Cow<'a, Path>,
    /// Before.
    pub(crate) old: OldState<'a>,
    /// After.
    pub(crate) new: NewState<'a>,
}

/// A whole journal read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    /// The workspace root it was written for.
    pub(crate) root: PathBuf,
    /// The files.
    pub(crate) entries: Vec<Entry<'static>>,
}

/// Why a journal could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    /// Cut short or altered: the checksum does not hold (a crash while it was written).
    #[error("it is incomplete (written only partly)")]
    Incomplete,
    /// The checksum holds but the content does not make sense.
    #[error("it is malformed: {0}")]
    Malformed(&'static str),
}

/// The bytes of a journal for `entries` of the workspace at `root`.
pub(crate) fn encode(root: &Path, entries: &[Entry<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        MAGIC.len()
            + entries
                .iter()
                .map(|e| {
                    let old = match &e.old {
                        OldState::Absent => 0,
                        OldState::Present { bytes, .. } => bytes.len(),
                    };
                    let new = match &e.new {
                        NewState::Delete => 0,
                        NewState::Write { bytes, .. } => bytes.len(),
                    };
                    old + new + e.rel.as_os_str().len() + 64
                })
                .sum::<usize>(),
    );
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, os_str_bytes(root.as_os_str()));
    put_u32(&mut out, entries.len() as u32);
    for e in entries {
        put_bytes(&mut out, os_str_bytes(e.rel.as_os_str()));
        match &e.old {
            OldState::Absent => out.push(0),
            OldState::Present {
                mode,
                uid,
                gid,
                bytes,
            } => {
                out.push(1);
                put_u32(&mut out, *mode);
                put_u32(&mut out, *uid);
                put_u32(&mut out, *gid);
                put_bytes(&mut out, bytes);
            }
        }
        match &e.new {
            NewState::Delete => out.push(0),
            NewState::Write { mode, bytes } => {
                out.push(1);
                match mode {
                    None => out.push(0),
                    Some(m) => {
                        out.push(1);
                        put_u32(&mut out, *m);
                    }
                }
                put_bytes(&mut out, bytes);
            }
        }
    }
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

/// Reads a journal back; see [`DecodeError`] for what it refuses.
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    if bytes.len() < MAGIC.len() + DIGEST_LEN || !bytes.starts_with(MAGIC) {
        return Err(DecodeError::Incomplete);
    }
    let (body, digest) = bytes.split_at(bytes.len() - DIGEST_LEN);
    if Sha256::digest(body).as_slice() != digest {
        return Err(DecodeError::Incomplete);
    }
    let mut r = Reader {
        rest: &body[MAGIC.len()..],
    };
    let root = PathBuf::from(os_string_from_bytes(r.bytes()?.to_vec()));
    if !root.is_absolute() {
        return Err(DecodeError::Malformed("the workspace root is not absolute"));
    }
    let count = r.u32()?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let rel = PathBuf::from(os_string_from_bytes(r.bytes()?.to_vec()));
        if rel.as_os_str().is_empty()
            || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(DecodeError::Malformed(
                "a path is not a plain path inside the workspace",
            ));
        }
        let old = match r.u8()? {
            0 => OldState::Absent,
            1 => OldState::Present {
                mode: r.u32()?,
                uid: r.u32()?,
                gid: r.u32()?,
                bytes: Cow::Owned(r.bytes()?.to_vec()),
            },
            _ => return Err(DecodeError::Malformed("unknown old state")),
        };
        let new = match r.u8()? {
            0 => NewState::Delete,
            1 => {
                let mode = match r.u8()? {
                    0 => None,
                    1 => Some(r.u32()?),
                    _ => return Err(DecodeError::Malformed("unknown mode tag")),
                };
                NewState::Write {
                    mode,
                    bytes: Cow::Owned(r.bytes()?.to_vec()),
                }
            }
            _ => return Err(DecodeError::Malformed("unknown new state")),
        };
        entries.push(Entry {
            rel: Cow::Owned(rel),
            old,
            new,
        });
    }
    if !r.rest.is_empty() {
        return Err(DecodeError::Malformed("bytes after the last entry"));
    }
    Ok(Decoded { root, entries })
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.rest.len() < n {
            return Err(DecodeError::Malformed("an entry runs past the end"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let b = self.take(8)?;
        let len = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let len = usize::try_from(len)
            .map_err(|_| DecodeError::Malformed("a length does not fit in memory"))?;
        self.take(len)
    }
}
