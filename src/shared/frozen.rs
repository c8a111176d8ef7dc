//! [`Frozen`]: what a [`Resolver`](crate::Resolver) keeps of a consumed
//! [`SharedStringTable`](crate::SharedStringTable).

use crate::arena::Arena;
use crate::id::StringId;

use super::index::Index;

/// The shard arenas and the id index of a consumed shared table; the hash
/// tables are dropped. Every id below `len()` is published (no writer is
/// left), so resolving is one index read, as in the live table.
#[derive(Debug)]
pub(crate) struct Frozen {
    // Field order: the index holds addresses into the arenas but never
    // reads them when dropped, so the order does not matter for safety.
    index: Index,
    arenas: Vec<Arena>,
}

impl Frozen {
    /// Freezes `index`, whose published addresses all point into `arenas`.
    pub(crate) fn new(index: Index, arenas: Vec<Arena>) -> Frozen {
        Frozen { index, arenas }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        if id.index() >= self.len() {
            return None;
        }
        super::resolve(&self.index, id.index())
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        assert!(i < self.len(), "index {i} out of range");
        super::resolve(&self.index, i).expect("a frozen table's ids are all published")
    }

    /// Heap bytes: this struct (boxed in the resolver), the arenas, their
    /// list and the index segments.
    pub(crate) fn heap_bytes(&self) -> usize {
        size_of::<Frozen>()
            + self.arenas.iter().map(Arena::heap_bytes).sum::<usize>()
            + self.arenas.capacity() * size_of::<Arena>()
            + self.index.heap_bytes()
    }
}
