//! The lock-free hit path of a [`SharedStringTable`](crate::SharedStringTable):
//! a direct-mapped cache from a string's hash to its id, read with plain
//! atomic loads, so that a hit on a hot string writes no memory another
//! thread uses (a shard lock, even uncontended, is a write to a line the
//! other threads' hits also write).
//!
//! An entry holds `tag << 32 | id` (0: empty), where the tag is the low
//! half of the string's 64-bit hash and the slot is chosen by other bits
//! of it (the shard bits, 40 and up). An entry is only a hint: a reader checks it by resolving the id
//! through the lock-free id index and comparing the bytes, so a stale,
//! overwritten or colliding entry costs a fall-back to the shard's hash
//! table (the authority), never a wrong id. Entries are written by any
//! thread after a lookup under a shard lock.
//!
//! The cache grows with the table in levels of 4x (1K, 4K, 16K, 64K
//! entries: 8 KiB to 512 KiB), switched to when the table holds twice the
//! current level's entries; earlier levels are kept until the table is
//! dropped, so a reader never sees memory freed under it (a third more
//! memory at most). A level that the byte limit cannot afford is simply not
//! added: the cache only speeds up hits.

use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::error::Error;

/// log2 of the entries of level 0.
const FIRST_BITS: u32 = 10;
/// Levels, each 4x the one before.
pub(crate) const LEVELS: usize = 4;

/// Entries of level `k`.
const fn level_len(k: usize) -> usize {
    1 << (FIRST_BITS + 2 * k as u32)
}

/// Heap bytes of level `k`.
pub(crate) const fn level_bytes(k: usize) -> usize {
    level_len(k) * size_of::<AtomicU64>()
}

/// The hint cache; see the module docs.
pub(crate) struct Hints {
    /// The levels' first entries (leaked `Box<[AtomicU64]>`s), or null.
    levels: [AtomicPtr<AtomicU64>; LEVELS],
    /// The level in use, plus one (0: none yet).
    current: AtomicUsize,
}

impl core::fmt::Debug for Hints {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hints")
            .field("level", &self.current.load(Ordering::Relaxed))
            .finish()
    }
}

/// The first entry of a hash's set (two entries) in a level of `len`
/// entries: from the shard bits (`hash >> 40`), above their low byte.
#[inline]
fn set_of(bits: usize, len: usize) -> usize {
    (bits >> 7) & (len - 2)
}

#[inline]
fn entry(hash: u64, id: u32) -> u64 {
    (hash << 32) | u64::from(id)
}

impl Hints {
    pub(crate) fn new() -> Hints {
        Hints {
            levels: core::array::from_fn(|_| AtomicPtr::new(core::ptr::null_mut())),
            current: AtomicUsize::new(0),
        }
    }

    /// The entries of the level in use.
    #[inline]
    fn level(&self) -> Option<&[AtomicU64]> {
        let current = self.current.load(Ordering::Acquire);
        let k = current.checked_sub(1)?;
        let first = self.levels[k].load(Ordering::Acquire);
        // SAFETY: `current` is set (with `Release`) only after level `k`
        // was installed: a leaked `Box<[AtomicU64]>` of `level_len(k)`
        // entries, freed only by `drop`.
        Some(unsafe { core::slice::from_raw_parts(first, level_len(k)) })
    }

    /// The id the cache holds for a string with these hashes, if any: a
    /// candidate to check. Two ways per set, in one cache line.
    #[inline]
    pub(crate) fn get(&self, hash: u64, bits: usize) -> Option<u32> {
        let level = self.level()?;
        let i = set_of(bits, level.len());
        // Truncation intended: the tag is the low half.
        let want = u64::from(hash as u32);
        for e in [
            level[i].load(Ordering::Relaxed),
            level[i + 1].load(Ordering::Relaxed),
        ] {
            if e != 0 && e >> 32 == want {
                // Truncation intended: the id is the low half.
                return Some(e as u32);
            }
        }
        None
    }

    /// Remembers `id` for a string with these hashes (any thread; the id
    /// must be published already): it becomes the set's first way, the
    /// first way's entry moves to the second (least recently put is
    /// evicted).
    #[inline]
    pub(crate) fn put(&self, hash: u64, bits: usize, id: u32) {
        if let Some(level) = self.level() {
            let i = set_of(bits, level.len());
            let e = entry(hash, id);
            let first = level[i].load(Ordering::Relaxed);
            // Skip the writes, and the line they would take from the other
            // cores, when the entry is already first.
            if first != e {
                level[i + 1].store(first, Ordering::Relaxed);
                level[i].store(e, Ordering::Relaxed);
            }
        }
    }

    /// The level a table of `len` strings should use, if it is not the
    /// current one yet.
    #[inline]
    pub(crate) fn wants_level(&self, len: usize) -> Option<usize> {
        let mut k = 0;
        while k + 1 < LEVELS && len > 2 * level_len(k) {
            k += 1;
        }
        (self.current.load(Ordering::Relaxed) < k + 1).then_some(k)
    }

    /// Installs level `k` and switches to it. The caller serialises calls
    /// (the growth lock) and has charged [`level_bytes`].
    pub(crate) fn install(&self, k: usize) -> Result<(), Error> {
        let len = level_len(k);
        let mut entries = Vec::new();
        entries
            .try_reserve_exact(len)
            .map_err(|_| Error::new(crate::error::ErrorKind::AllocFailed, level_bytes(k)))?;
        entries.extend((0..len).map(|_| AtomicU64::new(0)));
        let first = Box::into_raw(entries.into_boxed_slice()).cast::<AtomicU64>();
        self.levels[k].store(first, Ordering::Release);
        self.current.store(k + 1, Ordering::Release);
        Ok(())
    }

    /// Heap bytes of the installed levels.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn heap_bytes(&self) -> usize {
        (0..LEVELS)
            .filter(|&k| !self.levels[k].load(Ordering::Relaxed).is_null())
            .map(level_bytes)
            .sum()
    }
}

impl Drop for Hints {
    fn drop(&mut self) {
        for (k, level) in self.levels.iter_mut().enumerate() {
            let first = *level.get_mut();
            if !first.is_null() {
                let slice = core::ptr::slice_from_raw_parts_mut(first, level_len(k));
                // SAFETY: `first` came from `Box::into_raw` of a boxed
                // slice of exactly `level_len(k)` entries (`install`), and
                // is freed only here, once.
                drop(unsafe { Box::from_raw(slice) });
            }
        }
    }
}
