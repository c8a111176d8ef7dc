//! The lock-free hit path of a [`SharedStringTable`](crate::SharedStringTable):
//! a two-way set-associative cache from a string's hash to its record,
//! read with plain atomic loads, so that a hit on a hot string writes no
//! memory another thread uses (a shard lock, even uncontended, is a write
//! to a line the other threads' hits also write).
//!
//! An entry is a published record's address with a 16-bit tag (the low
//! bits of the string's 64-bit hash, the lowest forced to 1 so that no tag
//! matches an empty, null, entry) in the address's unused top bits; the
//! set of two entries is chosen by other bits of the hash (the shard bits,
//! 40 and up). The record holds the string and its id, so a hit reads the
//! entry, then the record, and nothing else: no index lookup. A level's
//! set mask sits in its header and a static empty level stands in before
//! the first, so a lookup loads the level pointer, the mask and the set,
//! with no null test.
//!
//! A string found only in the shard's table is put in its set's second
//! way (the first if empty), and a hit writes nothing, in either way. The
//! first way so keeps the first string looked up in its set after the
//! level was installed (a draw weighted by how often strings are
//! interned: a hot one, most often), and a string looked up once only
//! evicts another such one from the second way. On the concurrent
//! benchmark's stream (one thread, 100k strings, a 64Ki-entry cache) the
//! cache answers 78.8% of the hits; 78.6% when a hit in the second way
//! swapped the two ways (a write on 16.5% of the interns, each one taking
//! the line from every other core that holds it), 76.1% when every string
//! was put first. On the profile replays the swap answered a few more
//! lookups (0.1% to 0.3% of the interns go to the shard lock instead)
//! for writes on 3.6% to 5.2% of them. Measured and not kept (`benches/README.md`): 4- and
//! 8-way sets, new levels starting with the old one's hints, and
//! switching levels earlier.
//!
//! An entry is only a hint: a reader compares the record's bytes with its
//! string, so a stale, overwritten or colliding entry costs a fall-back to
//! the shard's hash table (the authority), never a wrong id. Entries are
//! stored with `Release` after the record was published and loaded with
//! `Acquire`, so the record's bytes are visible to the reader. Records
//! never move or die before the table, and levels are freed only with it,
//! so an address in any entry stays valid.
//!
//! The cache grows with the table in levels of 4x (1K, 4K, 16K, 64K
//! entries: 8 KiB to 512 KiB), switched to when the table holds twice the
//! current level's entries (checked when a power-of-two id is given out);
//! a new level starts empty, and earlier levels are kept until the table is
//! dropped, so a reader never sees memory freed under it (a third more
//! memory at most). A level that the byte limit cannot afford is simply not
//! added: the cache only speeds up hits.

use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::Error;

/// log2 of the entries of level 0.
const FIRST_BITS: u32 = 10;
/// Levels, each 4x the one before.
pub(crate) const LEVELS: usize = 4;

/// Entries of level `k`.
const fn level_len(k: usize) -> usize {
    1 << (FIRST_BITS + 2 * k as u32)
}

/// Slots before a level's entries: the level's set mask (as an address),
/// then padding, so that each set's two entries stay a 16-byte-aligned
/// pair (one cache line).
const HEADER: usize = 2;

/// Heap bytes of level `k`.
pub(crate) const fn level_bytes(k: usize) -> usize {
    (HEADER + level_len(k)) * size_of::<Entry>()
}

/// The level in use before the first is installed: a set mask of 0 and
/// one empty set, so a lookup needs no null test. Never written: `put`
/// skips it.
static NO_LEVEL: [Entry; HEADER + 2] = [const { Entry::new(core::ptr::null_mut()) }; HEADER + 2];

/// The hint cache; see the module docs.
pub(crate) struct Hints {
    /// The levels' allocations (leaked `Box<[Entry]>`s of `HEADER +
    /// level_len(k)` slots), or null.
    levels: [AtomicPtr<Entry>; LEVELS],
    /// The level in use: one of `levels`, or [`NO_LEVEL`]. Its first slot
    /// holds its set mask, written before the level is published here.
    current: AtomicPtr<Entry>,
}

impl core::fmt::Debug for Hints {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hints")
            .field("entries", &self.current_len())
            .finish()
    }
}

/// An entry: a tagged record address (see the module docs).
type Entry = AtomicPtr<u8>;

/// Bits of an entry above the address: the tag's (user addresses on
/// today's 64-bit targets leave their top 16 bits clear).
const TAG_BITS: u32 = 16;
/// Bits of an entry below the tag.
const ADDR_BITS: u32 = usize::BITS - TAG_BITS;

/// The tag of a hash, in place: its low 16 bits with the lowest set (so
/// that no tag is 0 and an empty, null, entry matches none), shifted to
/// the entry's top bits.
#[inline]
fn tag_of(hash: u64) -> usize {
    // Truncation intended.
    usize::from(hash as u16 | 1) << ADDR_BITS
}

/// The record address in entry `e` if its tag is `tag` (from [`tag_of`]).
/// The tag is known, so the address is `e - tag`: one subtraction, with the
/// entry's provenance, where masking the tag off would take a constant, an
/// `and` and the subtraction `map_addr` makes of it.
#[inline(always)]
fn addr_if(e: *mut u8, tag: usize) -> Option<*const u8> {
    ((e.addr() ^ tag) >> ADDR_BITS == 0).then(|| e.wrapping_byte_sub(tag).cast_const())
}

/// The level in use, read once: its set mask and a hash's set.
#[derive(Clone, Copy)]
struct Level<'a> {
    /// The level's first slot (its header).
    base: *const Entry,
    /// Entries minus 2 (0 for [`NO_LEVEL`]): a set's first entry is
    /// `bits & mask`, always even.
    mask: usize,
    _hints: core::marker::PhantomData<&'a Hints>,
}

impl<'a> Level<'a> {
    /// The two entries of the set of a string whose shard bits are
    /// `bits` (`hash >> 40`): chosen by the bits above their low byte.
    #[inline(always)]
    fn set(self, bits: usize) -> &'a [Entry; 2] {
        let i = (bits >> 7) & self.mask;
        // SAFETY: `base` is a level of `HEADER + mask + 2` slots (see
        // `Hints::level`), and `i <= mask`, so slots `HEADER + i` and
        // `HEADER + i + 1` are inside it; they live as long as `Hints`
        // (levels are freed only by its `drop`, `NO_LEVEL` never).
        unsafe { &*self.base.add(HEADER + i).cast::<[Entry; 2]>() }
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
        // level's header: a leaked allocation of `HEADER + level_len(k)`
        // slots whose first holds `level_len(k) - 2`, freed only by
        // `drop`; `NO_LEVEL`'s first holds 0 and it has `HEADER + 2`
        // slots.
        let mask = unsafe { (*base).load(Ordering::Relaxed) }.addr();
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
            mask => mask + 2,
        }
    }

    /// The record address the cache holds for a string with these hashes,
    /// if any: a candidate to check, published before the entry was
    /// stored (the `Acquire` loads pair with the `Release` stores of
    /// `put`). Two ways per set, in one cache line. Writes nothing.
    #[inline]
    pub(crate) fn get(&self, hash: u64, bits: usize) -> Option<*const u8> {
        let set = self.level().set(bits);
        let want = tag_of(hash);
        // Two statements rather than `or_else`, which compiled to 0.8 more
        // instructions per intern (callgrind, `thread-stream`).
        let first = set[0].load(Ordering::Acquire);
        if let Some(record) = addr_if(first, want) {
            return Some(record);
        }
        addr_if(set[1].load(Ordering::Acquire), want)
    }

    /// Remembers the record at `record` for a string with these hashes
    /// (any thread; the record must be published already), after a lookup
    /// that [`get`](Self::get) could not answer: in the set's first way if
    /// that is empty, else in the second (evicting its entry), so that a
    /// string looked up once does not push out one that keeps being hit.
    /// An address with bits at or above `ADDR_BITS` (not on today's 64-bit
    /// targets) is not cached.
    #[inline]
    pub(crate) fn put(&self, hash: u64, bits: usize, record: *const u8) {
        let level = self.level();
        if record.addr() >> ADDR_BITS != 0 || level.mask == 0 {
            // Not cacheable, or no level yet (`NO_LEVEL` is never written).
            return;
        }
        let set = level.set(bits);
        let e = record.cast_mut().wrapping_byte_add(tag_of(hash));
        let way = usize::from(!set[0].load(Ordering::Relaxed).is_null());
        set[way].store(e, Ordering::Release);
    }

    /// The level a table of `len` strings should use, if it is not the
    /// current one yet.
    #[inline]
    pub(crate) fn wants_level(&self, len: usize) -> Option<usize> {
        let mut k = 0;
        while k + 1 < LEVELS && len > 2 * level_len(k) {
            k += 1;
        }
        (self.current_len() < level_len(k)).then_some(k)
    }

    /// Installs level `k` and switches to it. The caller serialises calls
    /// (the growth lock) and has charged [`level_bytes`].
    pub(crate) fn install(&self, k: usize) -> Result<(), Error> {
        let len = level_len(k);
        let mut slots = Vec::new();
        slots
            .try_reserve_exact(HEADER + len)
            .map_err(|_| Error::new(crate::error::ErrorKind::AllocFailed, level_bytes(k)))?;
        // The header: the set mask, then padding.
        slots.push(Entry::new(core::ptr::without_provenance_mut(len - 2)));
        slots.extend((1..HEADER + len).map(|_| Entry::new(core::ptr::null_mut())));
        let first = Box::into_raw(slots.into_boxed_slice()).cast::<Entry>();
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
                let slice = core::ptr::slice_from_raw_parts_mut(first, HEADER + level_len(k));
                // SAFETY: `first` came from `Box::into_raw` of a boxed
                // slice of exactly `HEADER + level_len(k)` slots
                // (`install`), and is freed only here, once.
                drop(unsafe { Box::from_raw(slice) });
            }
        }
    }
}
