//! One shard of a [`SharedStringTable`](crate::SharedStringTable): an
//! arena and a hash table of the strings whose hash selects this shard,
//! always used under the shard's lock.

use core::hash::BuildHasher;

use hashbrown::HashTable;

use crate::arena::{Arena, Loc};
use crate::error::Error;

/// The hashes of a string: the 64-bit hash handed to the shard's hash
/// table, and the bits that select the shard.
///
/// The one place the shared table hashes. hashbrown takes its bucket
/// index from the low bits of the hash and its control byte from the top
/// 7 bits; both come from the high half of the `BuildHasher`'s 64-bit hash
/// (duplicated into both halves, as `StringTable` does), and the shard
/// comes from the low half, so that the strings of one shard are still
/// spread over all of its buckets.
#[inline]
pub(crate) fn hash_of<S: BuildHasher>(hasher: &S, s: &str) -> (u64, usize) {
    let h = hasher.hash_one(s);
    let high = h >> 32;
    // Truncation intended: the shard bits are the low half.
    ((high << 32) | high, h as u32 as usize)
}

/// A hash-table slot: an id and, beside it, its string's arena location,
/// so a lookup reads the string without going through the id index.
#[inline]
pub(crate) fn slot(id: u32, loc: Loc) -> u64 {
    (u64::from(loc) << 32) | u64::from(id)
}

#[inline]
pub(crate) fn slot_id(slot: u64) -> u32 {
    // Truncation intended: the id is the low half.
    slot as u32
}

#[inline]
pub(crate) fn slot_loc(slot: u64) -> Loc {
    (slot >> 32) as u32
}

/// The table hash of the string in `slot`, for growing the hash table.
#[inline]
pub(crate) fn rehash<S: BuildHasher>(hasher: &S, arena: &Arena, slot: u64) -> u64 {
    hash_of(hasher, arena.str(slot_loc(slot))).0
}

/// An arena and the hash table of its strings.
#[derive(Debug)]
pub(crate) struct Shard {
    pub(crate) arena: Arena,
    pub(crate) table: HashTable<u64>,
}

impl Shard {
    /// An empty shard: no arena chunk and no hash-table buckets until its
    /// first string, so a table's fixed cost stays small whatever its
    /// shard count.
    pub(crate) fn new() -> Result<Shard, Error> {
        Ok(Shard {
            arena: Arena::with_capacity(0)?,
            table: HashTable::new(),
        })
    }

    /// The id of `s` if this shard holds it.
    #[inline]
    pub(crate) fn find(&self, hash: u64, s: &str) -> Option<u32> {
        let arena = &self.arena;
        self.table
            .find(hash, |&slot| arena.str(slot_loc(slot)) == s)
            .map(|&slot| slot_id(slot))
    }

    /// Heap bytes: the arena and the hash table.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.table.allocation_size()
    }
}
