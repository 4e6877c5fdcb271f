//! The per-run parse cache, keyed by path + size + modification time: for a parsed file its
//! tree (so a later query never parses it again), for a file the literal prefilter ruled out
//! the literals it lacks (so a later query needing one of them does not even read it).
//!
//! Memory is bounded: every entry is charged what it holds (a tree: its text and nodes, see
//! [`CompactTree::memory_cost`]). Past the cap, entries not used by the
//! current scan are dropped, least recently used first; when every entry belongs to the
//! current scan, new ones are simply not kept. (Plain LRU would thrash: a scan over a tree
//! larger than the cache, in path order, would evict each entry before the next scan needs
//! it and never hit.) A stale entry can never cause a wrong write:
//! `resolve` compares content hashes of what is on disk, not of what is cached.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::compact_tree::CompactTree;
use crate::lang::Lang;

/// Literals remembered as absent per file, newest kept.
pub const MAX_LACKED_LITERALS: usize = 8;

/// What is cached for one file.
#[derive(Clone)]
pub enum Cached {
    /// The file was read and ruled out without parsing: it contains none of these literals
    /// (a pattern needing any of them cannot match it). Its text is not kept: holding the
    /// text of every file a selective search reads cost more on that first search (fresh
    /// memory for the whole tree's text) than reading the file again costs a later one.
    Lacks(Arc<Vec<Vec<u8>>>),
    /// The parsed tree (which holds the text).
    Tree(Arc<CompactTree>),
}

impl Cached {
    fn cost(&self) -> usize {
        match self {
            Cached::Lacks(l) => l.iter().map(|lit| lit.len() + 24).sum::<usize>() + 64,
            Cached::Tree(t) => t.memory_cost() + 64,
        }
    }
}

struct Entry {
    size: u64,
    mtime: Option<SystemTime>,
    lang: Lang,
    value: Cached,
    cost: usize,
    used: u64,
    scan: u64,
}

#[derive(Default)]
struct Inner {
    /// Keyed by the path's bytes: hashing a `Path` goes component by component, which
    /// showed in profiles of large searches.
    map: HashMap<OsString, Entry>,
    total: usize,
    tick: u64,
    scan: u64,
    hits: u64,
    misses: u64,
}

/// A bounded cache of file texts and trees.
pub struct ParseCache {
    inner: Mutex<Inner>,
    max_bytes: usize,
}

/// Counters, for the structured result and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    /// Entries held.
    pub entries: usize,
    /// Estimated bytes held.
    pub bytes: usize,
    /// The cap.
    pub max_bytes: usize,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that were not.
    pub misses: u64,
}

impl ParseCache {
    /// A cache holding at most about `max_bytes` (0 disables it).
    pub fn new(max_bytes: usize) -> Self {
        ParseCache {
            inner: Mutex::new(Inner::default()),
            max_bytes,
        }
    }

    /// Starts a scan: entries touched from now on are kept in preference to older ones.
    pub fn begin_scan(&self) {
        if let Ok(mut g) = self.inner.lock() {
            g.scan += 1;
        }
    }

    /// The entry for `path` if its size, mtime and language still match.
    pub fn get(
        &self,
        path: &Path,
        size: u64,
        mtime: Option<SystemTime>,
        lang: Lang,
    ) -> Option<Cached> {
        let mut g = self.inner.lock().ok()?;
        g.tick += 1;
        let tick = g.tick;
        let scan = g.scan;
        let hit = match g.map.get_mut(path.as_os_str()) {
            Some(e) if e.size == size && e.mtime == mtime && mtime.is_some() && e.lang == lang => {
                e.used = tick;
                e.scan = scan;
                Some(e.value.clone())
            }
            _ => None,
        };
        if hit.is_some() {
            g.hits += 1;
        } else {
            g.misses += 1;
        }
        hit
    }

    /// Stores `value` for `path`, evicting least recently used entries past the cap.
    pub fn put(
        &self,
        path: &Path,
        size: u64,
        mtime: Option<SystemTime>,
        lang: Lang,
        value: Cached,
    ) {
        if mtime.is_none() {
            return;
        }
        // The key is charged too: for a ruled-out file it is most of what the entry holds.
        let cost = value.cost() + path.as_os_str().len();
        if cost > self.max_bytes {
            return;
        }
        let Ok(mut g) = self.inner.lock() else {
            return;
        };
        g.tick += 1;
        let used = g.tick;
        let scan = g.scan;
        if let Some(old) = g.map.remove(path.as_os_str()) {
            g.total -= old.cost;
        }
        if g.total + cost > self.max_bytes {
            // Evict down to 90% in one sweep, only entries the current scan has not used.
            let target = (self.max_bytes / 10 * 9).saturating_sub(cost);
            let mut order: Vec<(u64, OsString)> = g
                .map
                .iter()
                .filter(|(_, e)| e.scan != scan)
                .map(|(p, e)| (e.used, p.clone()))
                .collect();
            order.sort();
            for (_, p) in order {
                if g.total <= target {
                    break;
                }
                if let Some(e) = g.map.remove(&p) {
                    g.total -= e.cost;
                }
            }
            if g.total + cost > self.max_bytes {
                return;
            }
        }
        if let Some(old) = g.map.insert(
            path.as_os_str().to_owned(),
            Entry {
                size,
                mtime,
                lang,
                value,
                cost,
                used,
                scan,
            },
        ) {
            g.total -= old.cost;
        }
        g.total += cost;
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        match self.inner.lock() {
            Ok(g) => CacheStats {
                entries: g.map.len(),
                bytes: g.total,
                max_bytes: self.max_bytes,
                hits: g.hits,
                misses: g.misses,
            },
            Err(_) => CacheStats {
                entries: 0,
                bytes: 0,
                max_bytes: self.max_bytes,
                hits: 0,
                misses: 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// An entry costing 100 bytes.
    fn lacks(n: usize) -> Cached {
        Cached::Lacks(Arc::new(vec![vec![b'x'; n]]))
    }

    #[test]
    fn keyed_by_size_and_mtime_and_bounded() {
        let py = Lang::from_id("python").unwrap();
        let c = ParseCache::new(1000);
        let t = Some(SystemTime::UNIX_EPOCH);
        c.put(Path::new("/a"), 3, t, py, lacks(1));
        assert!(c.get(Path::new("/a"), 3, t, py).is_some());
        assert!(c.get(Path::new("/a"), 4, t, py).is_none());
        let later = Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1));
        assert!(c.get(Path::new("/a"), 3, later, py).is_none());
        // One scan over more than fits: the first entries stay (no thrash), the rest are
        // not kept.
        c.begin_scan();
        for i in 0..100 {
            let p = PathBuf::from(format!("/f{i}"));
            c.put(&p, 100, t, py, lacks(36));
        }
        let s = c.stats();
        assert!(s.bytes <= 1000, "{s:?}");
        assert!(c.get(Path::new("/f0"), 100, t, py).is_some());
        assert!(c.get(Path::new("/f99"), 100, t, py).is_none());
        // A later scan may replace what the earlier one left, least recently used first.
        c.begin_scan();
        for i in 200..205 {
            let p = PathBuf::from(format!("/f{i}"));
            c.put(&p, 100, t, py, lacks(36));
        }
        assert!(c.get(Path::new("/f204"), 100, t, py).is_some());
        assert!(c.stats().bytes <= 1000);
    }
}
