//! The read side shared by [`StringTable`](crate::StringTable) and
//! [`Resolver`](crate::Resolver): the arena and the id index.

use crate::arena::{Arena, Loc};
use crate::error::Error;
use crate::id::StringId;

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

/// Strings in id order: `entries[0]` is a sentinel (location 0) and id `i`
/// is `entries[i + 1]`, so every id has a predecessor location to start from.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) arena: Arena,
    pub(crate) entries: Vec<Entry>,
}

impl Store {
    pub(crate) fn new(arena: Arena, entries: Vec<Entry>) -> Store {
        Store { arena, entries }
    }

    /// Number of strings, `""` included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - 1
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        let e = &self.entries[i..i + 2];
        self.arena.str(e[0].loc, e[1].loc)
    }

    /// The cached 32-bit hash of index `i`.
    #[inline]
    pub(crate) fn hash_at(&self, i: usize) -> u32 {
        self.entries[i + 1].hash
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        (id.index() < self.len()).then(|| self.str_at(id.index()))
    }

    /// Whether index `i` holds `s`, checking the cached hash first.
    #[inline]
    pub(crate) fn is(&self, i: usize, hash: u32, s: &[u8]) -> bool {
        let e = &self.entries[i..i + 2];
        e[1].hash == hash && self.arena.bytes(e[0].loc, e[1].loc) == s
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
