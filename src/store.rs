//! The read side shared by [`StringTable`](crate::StringTable) and
//! [`Resolver`](crate::Resolver): the arena and the id index.

use crate::arena::{Arena, Loc};
use crate::error::Error;
use crate::id::StringId;

/// Strings in id order: id `i`'s record is at `locs[i]`, four bytes per
/// string. Id 0, `""`, is at location 0, the arena's empty block.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) arena: Arena,
    pub(crate) locs: Vec<Loc>,
}

impl Store {
    pub(crate) fn new(arena: Arena, locs: Vec<Loc>) -> Store {
        Store { arena, locs }
    }

    /// Number of strings, `""` included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.locs.len()
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        self.arena.str(self.locs[i])
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        self.locs.get(id.index()).map(|&loc| self.arena.str(loc))
    }

    /// Heap bytes of the arena and the index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.locs.capacity() * size_of::<Loc>()
    }

    /// Copies `s` into the arena as the record of id `id` (the next one)
    /// and appends its location; the caller has reserved room in `locs`.
    /// Returns the location. On error nothing is added.
    pub(crate) fn push(&mut self, s: &str, id: u32, budget: usize) -> Result<Loc, Error> {
        debug_assert!(self.locs.len() < self.locs.capacity());
        debug_assert_eq!(id as usize, self.locs.len());
        let loc = self.arena.push(s, id, budget)?;
        self.locs.push(loc);
        Ok(loc)
    }
}
