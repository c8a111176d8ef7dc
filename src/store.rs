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

    /// Folds `f` over the strings of ids `front..back` in id order, reading
    /// each arena block's records front to back ([`Arena::walk`]) rather
    /// than looking each id up in the index.
    #[inline]
    pub(crate) fn fold<'s, B>(
        &'s self,
        front: usize,
        back: usize,
        init: B,
        mut f: impl FnMut(B, &'s str) -> B,
    ) -> B {
        let locs = &self.locs[..back];
        let mut acc = init;
        let mut i = front;
        if i == 0 && back > 0 {
            // Id 0, `""`, is the empty block's static record.
            acc = f(acc, "");
            i = 1;
        }
        // Where the walk must stop: the record of id `back`, if any (a
        // walk stops there only if it is in the walk's block).
        let stop = self.locs.get(back).copied().unwrap_or(0);
        while i < back {
            let (a, n) = self.arena.walk(locs[i], stop, acc, &mut f);
            acc = a;
            i += n;
        }
        acc
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
