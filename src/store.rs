//! The read side shared by [`StringTable`](crate::StringTable) and
//! [`Resolver`](crate::Resolver): the arena and the id index.

use crate::arena::{Arena, Loc};
use crate::error::Error;
use crate::id::StringId;

/// Index entries before id 0's.
pub(crate) const SENTINELS: usize = 2;

/// One id's index entry: its cached hash and its packed arena location.
///
/// Eight bytes per string. The cached hash lets the hash table grow without
/// reading any string, and rejects most non-matching candidates before
/// their bytes are touched.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Entry {
    pub(crate) hash: u32,
    pub(crate) loc: Loc,
}

/// Strings in id order: `entries[0]` and `entries[1]` are sentinels
/// (location 0) and id `i` is `entries[i + 2]`, so every id has the two
/// predecessor locations [`Arena::bytes`] needs to find its start.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) arena: Arena,
    pub(crate) entries: Vec<Entry>,
    /// Identifies the hasher that computed the cached hashes.
    pub(crate) fingerprint: u64,
}

impl Store {
    pub(crate) fn new(arena: Arena, entries: Vec<Entry>, fingerprint: u64) -> Store {
        Store {
            arena,
            entries,
            fingerprint,
        }
    }

    /// Number of strings, `""` included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - SENTINELS
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        let e = &self.entries[i..i + 3];
        self.arena.str(e[0].loc, e[1].loc, e[2].loc)
    }

    /// The bytes of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn bytes_at(&self, i: usize) -> &[u8] {
        let e = &self.entries[i..i + 3];
        self.arena.bytes(e[0].loc, e[1].loc, e[2].loc)
    }

    /// The cached 32-bit hash of index `i`.
    #[inline]
    pub(crate) fn hash_at(&self, i: usize) -> u32 {
        self.entries[i + SENTINELS].hash
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        (id.index() < self.len()).then(|| self.str_at(id.index()))
    }

    /// Whether index `i` holds `s`, checking the cached hash first.
    #[inline]
    pub(crate) fn is(&self, i: usize, hash: u32, s: &[u8]) -> bool {
        let e = &self.entries[i..i + 3];
        e[2].hash == hash && self.arena.bytes(e[0].loc, e[1].loc, e[2].loc) == s
    }

    /// Heap bytes of the arena and the index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.entries.capacity() * size_of::<Entry>()
    }

    /// Copies `s` into the arena and appends its entry; the caller has
    /// reserved room in `entries`. On error nothing is added.
    pub(crate) fn push(&mut self, hash: u32, s: &str, budget: usize) -> Result<(), Error> {
        debug_assert!(self.entries.len() < self.entries.capacity());
        let loc = self.arena.push(s, budget)?;
        self.entries.push(Entry { hash, loc });
        Ok(())
    }
}
