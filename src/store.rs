//! The read side shared by [`StringTable`](crate::StringTable) and
//! [`Resolver`](crate::Resolver): the arena and the id index.

use crate::arena::{Arena, ESCAPE, Loc, tag_of};
use crate::error::Error;
use crate::id::StringId;

/// The location of a string's record and a copy of the record's length
/// byte (the length below 255 bytes, else the escape), 5 bytes,
/// unaligned: an id-index entry, and a hash-table slot
/// ([`Slot`](crate::table::Slot)).
///
/// With the length in the index, `resolve` knows it before the record's
/// cache line arrives, so a caller's copy of the string does not wait for
/// that miss to pick its path (`resolve_copy` in `benches/README.md`).
/// With it in the slot, a lookup passes over a candidate of another
/// length without reading its record (`Arena::probe`). Made only
/// by [`Entry::of`] from a location `Arena::push` returned and the string
/// it stored there (or copied from such an entry), so the tag always
/// matches the record: `unsafe` reads rely on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Entry {
    loc: [u8; 4],
    tag: u8,
}

/// Bytes of an id-index entry.
pub(crate) const ENTRY_BYTES: usize = size_of::<Entry>();

impl Entry {
    /// `""`'s entry: location 0 (the arena's static empty record), length
    /// 0.
    pub(crate) const EMPTY: Entry = Entry {
        loc: [0; 4],
        tag: 0,
    };

    /// The entry of `s`, which `Arena::push` stored at `loc`.
    #[inline(always)]
    pub(crate) fn of(loc: Loc, s: &str) -> Entry {
        Entry {
            loc: loc.to_le_bytes(),
            tag: tag_of(s.len()),
        }
    }

    /// The record's location.
    #[inline(always)]
    pub(crate) fn loc(self) -> Loc {
        Loc::from_le_bytes(self.loc)
    }

    /// The record's location and its block number (the location's high
    /// 16 bits), the latter read on its own, for
    /// [`Arena::after_tag_split`](crate::arena::Arena::after_tag_split).
    /// The block number is read first: LLVM rewrites a load of part of a
    /// value already loaded into a shift of that value, but not the other
    /// way round.
    #[inline(always)]
    pub(crate) fn loc_and_block(&self) -> (Loc, u16) {
        let block = u16::from_le_bytes([self.loc[2], self.loc[3]]);
        (self.loc(), block)
    }

    /// The record's length byte: the string's length below 255 bytes,
    /// else the escape.
    #[inline(always)]
    pub(crate) fn tag(self) -> u8 {
        self.tag
    }
}

/// Strings in id order: id `i`'s record is at `locs[i].loc()`, five bytes
/// per string. Id 0, `""`, is at location 0, the arena's empty block.
///
/// The index is private: [`str_of`](Self::str_of) trusts every entry to
/// locate a record of this store's arena, so entries are only added by
/// [`push_entry`](Self::push_entry) and only dropped with the arena's
/// records ([`clear`](Self::clear)); other modules read them, reserve room
/// and shrink the allocation.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) arena: Arena,
    locs: Vec<Entry>,
}

impl Store {
    /// A store of `arena` whose index holds only `""`'s entry; `locs` is
    /// empty, with room reserved for at least that entry.
    pub(crate) fn new(arena: Arena, mut locs: Vec<Entry>) -> Store {
        debug_assert!(locs.is_empty() && locs.capacity() > 0);
        locs.push(Entry::EMPTY);
        Store { arena, locs }
    }

    /// Appends the entry of `s`, just pushed into the arena at `loc` as the
    /// record of the next id. The caller has reserved room.
    #[inline(always)]
    pub(crate) fn push_entry(&mut self, loc: Loc, s: &str) {
        self.locs.push(Entry::of(loc, s));
    }

    /// The string of `entry`, an entry of this store's index.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn str_of(&self, entry: &Entry) -> &str {
        let (loc, block) = entry.loc_and_block();
        // SAFETY: index entries are made only by `push_entry`, from the
        // location `Arena::push` returned for `s` and `tag_of(s.len())`,
        // the length byte `push` wrote there, or are `Entry::EMPTY`
        // (location 0, length 0); `clear` empties the index with the
        // arena.
        unsafe { self.arena.str_tagged(loc, block, entry.tag) }
    }

    /// Number of strings, `""` included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.locs.len()
    }

    /// The index entries, in id order.
    #[inline]
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.locs
    }

    /// Entries the index has room for without growing.
    #[inline]
    pub(crate) fn index_capacity(&self) -> usize {
        self.locs.capacity()
    }

    /// Makes room in the index for `additional` more entries (exactly, as
    /// `Vec::try_reserve_exact`).
    pub(crate) fn try_reserve_index(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.locs.try_reserve_exact(additional)
    }

    /// Copies the index into an allocation of `capacity` entries, if that
    /// holds every entry and is smaller. If the allocator refuses it, an
    /// allocation of exactly the entries is tried (after a `clear`, a few
    /// bytes: the index then grows again from there); if that is refused
    /// too, the old allocation is kept.
    pub(crate) fn shrink_index(&mut self, capacity: usize) {
        let locs = &self.locs;
        if capacity >= locs.capacity() || capacity < locs.len() {
            return;
        }
        let mut new = Vec::new();
        if new.try_reserve_exact(capacity).is_err() && new.try_reserve_exact(locs.len()).is_err() {
            return;
        }
        if new.capacity() >= locs.capacity() {
            return;
        }
        new.extend_from_slice(locs);
        self.locs = new;
    }

    /// Forgets every string but `""`, index and arena together, keeping
    /// their memory.
    pub(crate) fn clear(&mut self) {
        self.locs.truncate(1);
        self.arena.clear();
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        self.str_of(&self.locs[i])
    }

    /// Folds `f` over the strings of ids `front..back` in id order, run by
    /// run: the ids whose records one arena block holds in order
    /// ([`Arena::run`]) are read with that block's base looked up once and
    /// each string's location and length taken from the index, so no read
    /// waits for the previous record (walking the records by their length
    /// bytes did: `iterate` ran 0.82x-0.85x lasso's speed that way,
    /// 0.94x-1.06x this way, `benches/README.md`).
    #[inline]
    #[allow(unsafe_code)]
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
        // Where the last run must stop: the record of id `back`, if any (a
        // run stops there only if it is in the run's block).
        let stop = self.locs.get(back).map_or(0, |e| e.loc());
        while i < back {
            let run = self.arena.run(locs[i].loc(), stop);
            let run_locs = &locs[i..i + run.len];
            // The reads below add the run's bias to each location: every
            // entry of the run must be in the block of its first (the
            // arena's ids say so, `Arena::run`).
            debug_assert!(
                run_locs
                    .iter()
                    .all(|e| e.loc_and_block().1 == run_locs[0].loc_and_block().1),
                "a run's records lie in one block"
            );
            // `for` loops (a pointer walk): `Iter::fold`'s index-based loop
            // kept the block's bias in a stack slot.
            if run.long {
                for e in run_locs {
                    // `f` is called in two places so that each copy knows
                    // its string's form: with one call after a select, the
                    // register allocation of the whole caller changed and
                    // `iterate` on generated strings (no long record) went
                    // from 37.3 to 38.3 instructions per string
                    // (`benches/README.md`).
                    acc = if e.tag() == ESCAPE {
                        // SAFETY: `e` locates a record of `run`'s block
                        // (`Arena::run`), whose bias `run.bias` is; entries
                        // hold locations `push` returned and their records'
                        // length bytes (the type's invariant), here the
                        // escape; the strings live as long as `self`.
                        f(acc, unsafe { Arena::str_long_biased(run.bias, e.loc()) })
                    } else {
                        // SAFETY: as above, and `e.tag()`, not the escape,
                        // is the string's length.
                        f(acc, unsafe {
                            Arena::str_short_biased(run.bias, e.loc(), e.tag())
                        })
                    };
                }
            } else {
                for e in run_locs {
                    // SAFETY: as above, and the block has no long record,
                    // so `e.tag()` (the record's length byte, the
                    // invariant of `Entry`) is its length.
                    acc = f(acc, unsafe {
                        Arena::str_short_biased(run.bias, e.loc(), e.tag())
                    });
                }
            }
            i += run.len;
        }
        acc
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        self.locs.get(id.index()).map(|e| self.str_of(e))
    }

    /// Heap bytes of the arena and the index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.locs.capacity() * ENTRY_BYTES
    }

    /// Copies `s` into the arena as the record of id `id` (the next one)
    /// and appends its location; the caller has reserved room in `locs`.
    /// Returns the location. On error nothing is added.
    pub(crate) fn push(&mut self, s: &str, id: u32, budget: usize) -> Result<Loc, Error> {
        debug_assert!(self.locs.len() < self.locs.capacity());
        debug_assert_eq!(id as usize, self.locs.len());
        let loc = self.arena.push(s, id, budget)?;
        self.push_entry(loc, s);
        Ok(loc)
    }
}
