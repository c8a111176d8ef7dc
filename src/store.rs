//! The read side shared by [`StringTable`](crate::StringTable) and
//! [`Resolver`](crate::Resolver): the arena and the id index.

use crate::arena::{Arena, Loc};
use crate::error::Error;
use crate::id::StringId;

/// One id's index entry: its cached hash and its packed arena location.
///
/// Eight bytes per string. The cached hash lets the hash table grow without
/// reading any string, and lets `merge` and `compact` skip hashing.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Entry {
    pub(crate) hash: u32,
    pub(crate) loc: Loc,
}

/// Strings in id order: id `i` is `entries[i]`. Id 0, `""`, is at
/// location 0, the arena's empty block.
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
        self.entries.len()
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        self.arena.str(self.entries[i].loc)
    }

    /// The bytes of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn bytes_at(&self, i: usize) -> &[u8] {
        self.arena.bytes(self.entries[i].loc)
    }

    /// The cached 32-bit hash of index `i`.
    #[inline]
    pub(crate) fn hash_at(&self, i: usize) -> u32 {
        self.entries[i].hash
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        (id.index() < self.len()).then(|| self.str_at(id.index()))
    }

    /// Heap bytes of the arena and the index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.entries.capacity() * size_of::<Entry>()
    }

    /// Copies `s` into the arena and appends its entry; the caller has
    /// reserved room in `entries`. Returns the location. On error nothing
    /// is added.
    pub(crate) fn push(&mut self, hash: u32, s: &str, budget: usize) -> Result<Loc, Error> {
        debug_assert!(self.entries.len() < self.entries.capacity());
        let loc = self.arena.push(s, budget)?;
        self.entries.push(Entry { hash, loc });
        Ok(loc)
    }
}
