//! The lock-free hit path of a [`SharedStringTable`](crate::SharedStringTable):
//! a four-way set-associative cache from a string's hash to its id-index
//! entry, read with plain atomic loads, so that a hit on a hot string
//! writes no memory another thread uses (a shard lock, even uncontended,
//! is a write to a line the other threads' hits also write).
//!
//! An entry is 4 bytes: the packed slot of a published id's index entry
//! (its segment and offset, `index::pack`, 24 bits: ids below 2,096,640)
//! under an 8-bit tag (the low bits of the string's 64-bit hash, the
//! lowest forced to 1 so that no tag matches an empty, zero, entry); the
//! set of four entries (16 bytes, one cache line) is chosen by other bits
//! of the hash (the shard bits, 40 and up). A hit reads the entry, the
//! index entry it names (a shift, a mask and two loads: the segment
//! pointer, which stays in L1, and the entry, whose line the hot strings'
//! neighbouring ids share), then the record, which holds the string and
//! its id. A level's set mask sits in its header and a static empty level
//! stands in before the first, so a lookup loads the level pointer, the
//! mask and the set, with no null test.
//!
//! Until 2026-12-02 an entry was the record's 8-byte address with a 16-bit
//! tag, in two-way sets: a hit read no index entry, but the same bytes held
//! half the entries. On the concurrent benchmark's stream (one thread,
//! 100k strings) the 4-byte entries in four ways answer 92.6% of the hits
//! (128Ki entries) against 78.8% (64Ki entries, two ways), and take the
//! thread from 183.0 to 177.1 instructions per intern (callgrind,
//! `thread-stream`): the 14% of hits that no longer lock save more than the
//! index load costs every hinted hit. That load is a third dependent read
//! on a hinted hit (a cache simulation of this machine's L1d and L2 counts
//! 0.3 more L2 misses per intern); in wall time the two layouts could not
//! be told apart on the 2-vCPU machine the benchmarks ran on
//! (`benches/README.md`, the hint-layout rows), and fewer locked calls
//! mean fewer writes to shared lock words as threads are added.
//!
//! A string found only in the shard's table is put in its set's first
//! empty way, else in the last, and a hit writes nothing, in any way. The
//! first ways so keep the first strings looked up in their set after the
//! level was installed (a draw weighted by how often strings are
//! interned: hot ones, most often), and a string looked up once only
//! evicts another such one from the last way. (With two ways, a hit in
//! the second way swapping the two answered 78.6% of the hits against
//! 78.8% without, for a write on 16.5% of the interns, each one taking the
//! line from every other core that holds it.) Measured and not kept
//! (`benches/README.md`): 8-byte entries in 4- and 8-way sets, new levels
//! starting with the old one's hints, and switching levels earlier.
//!
//! An entry is only a hint: a reader compares the record's bytes with its
//! string, so a stale, overwritten or colliding entry costs a fall-back to
//! the shard's hash table (the authority), never a wrong id. Entries are
//! stored with `Release` after the id was published and loaded with
//! `Acquire`, so the index entry and the record's bytes are visible to the
//! reader. Index segments and records never move or die before the table,
//! and levels are freed only with it, so a slot in any entry stays valid.
//!
//! The cache grows with the table in levels of 4x (2K, 8K, 32K, 128K
//! entries: 8 KiB to 512 KiB), switched to when the table holds as many
//! strings as the current level has entries (checked when a power-of-two
//! id is given out); a new level starts empty, and earlier levels are kept
//! until the table is dropped, so a reader never sees memory freed under
//! it (a third more memory at most). A level that the byte limit cannot
//! afford is simply not added: the cache only speeds up hits.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use super::index::PACKED_BITS;
#[cfg(doc)]
use super::index::pack;
use crate::error::Error;

/// log2 of the entries of level 0.
const FIRST_BITS: u32 = 11;
/// Levels, each 4x the one before.
pub(crate) const LEVELS: usize = 4;
/// Entries per set.
const WAYS: usize = 4;

/// Entries of level `k`.
const fn level_len(k: usize) -> usize {
    1 << (FIRST_BITS + 2 * k as u32)
}

/// Sets of level `k`, after its header set.
const fn level_sets(k: usize) -> usize {
    level_len(k) / WAYS
}

/// Heap bytes of level `k`: its sets and the header.
pub(crate) const fn level_bytes(k: usize) -> usize {
    (1 + level_sets(k)) * size_of::<Set>()
}

/// A set: four entries in 16 bytes, aligned so that a set never straddles
/// two cache lines. An entry is where a string's id-index entry is (its
/// segment and offset, [`pack`]) in its low [`PACKED_BITS`] bits under an
/// 8-bit tag, or 0 (empty).
#[repr(C, align(16))]
struct Set([AtomicU32; WAYS]);

impl Set {
    /// An empty set.
    const fn empty() -> Set {
        Set([const { AtomicU32::new(0) }; WAYS])
    }
}

/// The level in use before the first is installed: a header with set mask
/// 0 and one empty set, so a lookup needs no null test. Never written:
/// `put` skips it.
static NO_LEVEL: [Set; 2] = [Set::empty(), Set::empty()];

/// The hint cache; see the module docs.
pub(crate) struct Hints {
    /// The levels' allocations (leaked `Box<[Set]>`s of `1 +
    /// level_sets(k)` sets), or null.
    levels: [AtomicPtr<Set>; LEVELS],
    /// The level in use: one of `levels`, or [`NO_LEVEL`]. Its first set
    /// (the header) holds its set mask in its first entry, written before
    /// the level is published here.
    current: AtomicPtr<Set>,
}

impl core::fmt::Debug for Hints {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hints")
            .field("entries", &self.current_len())
            .finish()
    }
}

/// The tag of a hash, in place: its low 8 bits with the lowest set (so
/// that no tag is 0 and an empty entry matches none), shifted above the
/// id.
#[inline(always)]
fn tag_of(hash: u64) -> u32 {
    // Truncation intended.
    u32::from(hash as u8 | 1) << PACKED_BITS
}

/// The level in use, read once: its set mask and a hash's set.
#[derive(Clone, Copy)]
struct Level<'a> {
    /// The level's first set (its header).
    base: *const Set,
    /// Sets minus 1 (0 for [`NO_LEVEL`]).
    mask: usize,
    _hints: core::marker::PhantomData<&'a Hints>,
}

impl<'a> Level<'a> {
    /// The set of a string whose shard bits are `bits` (`hash >> 40`):
    /// chosen by the bits above their low byte.
    #[inline(always)]
    fn set(self, bits: usize) -> &'a Set {
        let i = (bits >> 7) & self.mask;
        // SAFETY: `base` is a level of `1 + mask + 1` sets (see
        // `Hints::level`), and `i <= mask`, so set `1 + i` is inside it; it
        // lives as long as `Hints` (levels are freed only by its `drop`,
        // `NO_LEVEL` never).
        unsafe { &*self.base.add(1 + i) }
    }
}

impl Hints {
    pub(crate) fn new() -> Hints {
        Hints {
            levels: core::array::from_fn(|_| AtomicPtr::new(core::ptr::null_mut())),
            current: AtomicPtr::new(NO_LEVEL.as_ptr().cast_mut()),
        }
    }

    /// The level in use.
    #[inline(always)]
    fn level(&self) -> Level<'_> {
        let base = self.current.load(Ordering::Acquire).cast_const();
        // SAFETY: `current` is `NO_LEVEL` or was set (with `Release`, which
        // this `Acquire` load pairs with) after `install` wrote the
        // level's header: a leaked allocation of `1 + level_sets(k)` sets
        // whose first entry holds `level_sets(k) - 1`, freed only by
        // `drop`; `NO_LEVEL`'s holds 0 and it has 2 sets.
        let mask = unsafe { (*base).0[0].load(Ordering::Relaxed) } as usize;
        Level {
            base,
            mask,
            _hints: core::marker::PhantomData,
        }
    }

    /// Entries of the level in use (0 before the first).
    fn current_len(&self) -> usize {
        match self.level().mask {
            0 => 0,
            mask => (mask + 1) * WAYS,
        }
    }

    /// Where the id-index entry of the string with these hashes is, if
    /// the cache holds it: the packed index slot ([`pack`]) of an id
    /// published before the entry was stored (the `Acquire` loads pair
    /// with the `Release` stores of `put`), to read and check. Four ways
    /// per set, in one cache line. Writes nothing.
    #[inline(always)]
    pub(crate) fn get(&self, hash: u64, bits: usize) -> Option<u32> {
        let set = self.level().set(bits);
        let want = tag_of(hash);
        for e in &set.0 {
            let slot = e.load(Ordering::Acquire) ^ want;
            if slot < 1 << PACKED_BITS {
                return Some(slot);
            }
        }
        None
    }

    /// Remembers the id whose packed index slot is `slot` ([`pack`]) for
    /// a string with these hashes (any thread; the id must be published
    /// already), after a lookup that [`get`](Self::get) could not answer:
    /// in the set's first empty way, else in the last (evicting its
    /// entry), so that a string looked up once does not push out one that
    /// keeps being hit. Ids without a packed slot (from 2,096,640) are not
    /// cached.
    #[inline]
    pub(crate) fn put(&self, hash: u64, bits: usize, slot: Option<u32>) {
        let level = self.level();
        let Some(slot) = slot else { return };
        if level.mask == 0 {
            // No level yet (`NO_LEVEL` is never written).
            return;
        }
        let set = level.set(bits);
        let way = set.0[..WAYS - 1]
            .iter()
            .position(|e| e.load(Ordering::Relaxed) == 0)
            .unwrap_or(WAYS - 1);
        set.0[way].store(tag_of(hash) | slot, Ordering::Release);
    }

    /// The level a table of `len` strings should use, if it is not the
    /// current one yet.
    #[inline]
    pub(crate) fn wants_level(&self, len: usize) -> Option<usize> {
        let mut k = 0;
        while k + 1 < LEVELS && len > level_len(k) {
            k += 1;
        }
        (self.current_len() < level_len(k)).then_some(k)
    }

    /// Installs level `k` and switches to it. The caller serialises calls
    /// (the growth lock) and has charged [`level_bytes`].
    pub(crate) fn install(&self, k: usize) -> Result<(), Error> {
        let sets = level_sets(k);
        let mut level = Vec::new();
        level
            .try_reserve_exact(1 + sets)
            .map_err(|_| Error::new(crate::error::ErrorKind::AllocFailed, level_bytes(k)))?;
        // The header: the set mask, then padding.
        let header = Set::empty();
        // Truncation impossible: a level has at most 2^15 sets.
        header.0[0].store((sets - 1) as u32, Ordering::Relaxed);
        level.push(header);
        level.extend((0..sets).map(|_| Set::empty()));
        let first = Box::into_raw(level.into_boxed_slice()).cast::<Set>();
        self.levels[k].store(first, Ordering::Release);
        self.current.store(first, Ordering::Release);
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
                let slice = core::ptr::slice_from_raw_parts_mut(first, 1 + level_sets(k));
                // SAFETY: `first` came from `Box::into_raw` of a boxed
                // slice of exactly `1 + level_sets(k)` sets
                // (`install`), and is freed only here, once.
                drop(unsafe { Box::from_raw(slice) });
            }
        }
    }
}
