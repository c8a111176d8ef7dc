//! One shard of a [`SharedStringTable`](crate::SharedStringTable): an
//! arena and a hash table of the strings whose hash selects this shard,
//! always used under the shard's lock.

use core::hash::BuildHasher;

use hashbrown::HashTable;

use crate::arena::{Arena, Found};
use crate::error::Error;
use crate::table::{Slot, find_slot_with, hash_str};

/// The hashes of a string: the 64-bit hash handed to the shard's hash
/// table (the same as [`StringTable`](crate::StringTable)'s), and the bits
/// that select the shard.
///
/// The one place the shared table hashes. hashbrown takes its bucket
/// index from the low bits of the hash and its control byte from the top
/// 7 bits; the shard comes from bits 40 and up, independent of both for
/// any shard table below 2^40 buckets, so that the strings of one shard
/// are still spread over all of its buckets.
#[inline]
pub(crate) fn hash_of<S: BuildHasher>(hasher: &S, s: &str) -> (u64, usize) {
    let h = hash_str(hasher, s);
    (h, (h >> SHARD_SHIFT) as usize)
}

/// The lowest hash bit that selects a shard.
const SHARD_SHIFT: u32 = 40;

/// Chunk size up to which a shard's arena doubles its chunks on every
/// growth (16 pages with bumpalo's and the allocator's overhead): a table
/// has many shards, and each one's last chunk is partly empty, so their
/// tails must stay small; past it a shard's chunks double as a
/// `StringTable`'s do past 256 KiB.
const SHARD_DOUBLING_CAP: usize = 16 * crate::arena::PAGE_SIZE - crate::arena::CHUNK_OVERHEAD;

/// An arena and the hash table of its strings.
///
/// `#[repr(C)]`, the hash table first, then the arena (its block bases
/// first): behind the lock word, the lock, the table's header and the
/// bases all sit on the shard's first cache line (asserted below), so a
/// locked lookup moves one line between cores, not three. Rust's own
/// field order had put the lock word on a third line. Two threads on the
/// concurrent stream (`STRTAB_ROUNDS=5 STRTAB_THREADS=2`, the two builds
/// alternated, medians of 10-12 runs, four batches): wall 80.6 -> 68.5
/// and 95.2 -> 91.8 ms, CPU time 84.1 -> 80.2 and 82.2 -> 81.8 ms
/// (`benches/README.md`).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Shard {
    pub(crate) table: HashTable<Slot>,
    pub(crate) arena: Arena,
}

// A shard starts a 128-byte-aligned `Padded`: the lock word, the table's
// header and the arena's block bases fit its first cache line.
const _: () = assert!(
    super::ShardLock::VALUE_OFFSET + core::mem::offset_of!(Shard, arena) + Arena::LOOKUP_BYTES
        <= 64
);

impl Shard {
    /// An empty shard: no arena chunk and no hash-table buckets until its
    /// first string, so a table's fixed cost stays small whatever its
    /// shard count.
    pub(crate) fn new() -> Result<Shard, Error> {
        Ok(Shard {
            arena: {
                let mut arena = Arena::with_capacity(0)?;
                arena.cap_chunk_doubling(SHARD_DOUBLING_CAP);
                arena
            },
            table: HashTable::new(),
        })
    }

    /// The record of `s` (not `""`) if this shard holds it (its id and
    /// its address, for the hint cache): the same lookup as
    /// [`StringTable`](crate::StringTable)'s.
    #[inline]
    pub(crate) fn find(&self, hash: u64, s: &str) -> Option<Found<'_>> {
        find_slot_with(&self.table, &self.arena, hash, s, |found| found)
    }

    /// Heap bytes: the arena and the hash table.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.table.allocation_size()
    }
}
