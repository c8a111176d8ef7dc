//! The read side shared by [`StringTable`](crate::StringTable) and
//! [`Resolver`](crate::Resolver): the arena and the id index.

use crate::arena::{Arena, ESCAPE, LOCAL_BITS, LOCAL_MASK, LONG_LEN, Loc, NO_LINK};
use crate::error::Error;
use crate::id::StringId;
use crate::id_index::short_word_base;
pub(crate) use crate::id_index::{ENTRY_BYTES, Entry};

/// Strings in id order: id `i`'s record is located by the `i`th entry of
/// the arena's id index ([`IdIndex`](crate::id_index::IdIndex)), five bytes per string. Id 0, `""`,
/// is the arena's static empty record.
///
/// The entries are the store's: [`str_of`](Self::str_of) trusts every
/// entry to locate a record of this store's arena, so entries are only
/// added by [`push`](Self::push) and
/// [`push_in_place`](Self::push_in_place) and only dropped with the
/// arena's records ([`clear`](Self::clear)); other modules read them,
/// reserve room and shrink the allocation, through the store.
///
/// The store also links its long strings ([`LONG_LEN`] bytes or more,
/// whose length is in their record, not in their entry) in id order: each
/// long record holds the id of the next ([`Arena::link_long`]), so that
/// iteration ([`fold`](Self::fold)) reads the strings between two of them
/// as short ones, without testing each string's form (4 bytes per long
/// string, in its record; `iterate` on a binary's symbol names, 7.5% of
/// them long, 51.3 -> 48.7 instructions per string, lasso's 47.7; 0.3
/// bytes per string more; hot-path lever 77 in `benches/README.md`).
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) arena: Arena,
    /// The id of the first long string, or [`NO_LINK`].
    first_long: u32,
    /// The location of the last long string's record, whose link the
    /// next long string sets, or 0 (none).
    last_long: Loc,
}

impl Store {
    /// A store of `arena`, whose id index
    /// ([`Arena::with_index`]) holds only `""`'s entry.
    pub(crate) fn new(arena: Arena) -> Store {
        debug_assert!(arena.index().len() == 1 && arena.index().entries()[0] == Entry::EMPTY);
        Store {
            arena,
            first_long: NO_LINK,
            last_long: 0,
        }
    }

    /// Links the long string of id `id`, just pushed at `loc`, after the
    /// previous long string.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn link(&mut self, id: u32, loc: Loc) {
        if self.last_long == 0 {
            self.first_long = id;
        } else {
            // SAFETY: `last_long` is the location the arena's push
            // returned for a long string since the last `clear` (which
            // resets it).
            unsafe { self.arena.link_long(self.last_long, id) };
        }
        self.last_long = loc;
    }

    /// Copies `s` into the arena's current block as the record of id `id`
    /// (the next) and appends its entry, if it fits there and is short
    /// ([`Arena::push_in_place`]); the caller has reserved room in the
    /// index. Returns the record's location. With `LONG` true, the same
    /// for a long string instead ([`Arena::push_in_place_word`]), linked
    /// after the previous long string.
    #[inline(always)]
    pub(crate) fn push_in_place<const LONG: bool>(&mut self, s: &str, id: u32) -> Option<Loc> {
        let (loc, word) = self.arena.push_in_place_word::<LONG>(s, id)?;
        // A short string's length is its tag.
        let entry = Entry::from_word(word, if LONG { ESCAPE } else { s.len() as u8 });
        debug_assert_eq!(entry, Entry::of(loc, s));
        if LONG {
            self.link(id, loc);
        }
        self.arena.index_mut().push(entry);
        Some(loc)
    }

    /// The string of `entry`, an entry of this store's index.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn str_of(&self, entry: &Entry) -> &str {
        // SAFETY: index entries are made only by `push` and
        // `push_in_place`, from the location the arena's push returned
        // for `s` and `tag_of(s.len())`,
        // the length byte `push` wrote there, or are `Entry::EMPTY`
        // (location 0, length 0); `clear` empties the index with the
        // arena, which owns the index.
        let s = unsafe { self.arena.index().str_of(entry) };
        // SAFETY: as above.
        debug_assert_eq!(s.as_bytes(), unsafe { self.arena.bytes(entry.loc()) });
        s
    }

    /// Number of strings, `""` included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.arena.index().len()
    }

    /// The index entries, in id order.
    #[inline]
    pub(crate) fn entries(&self) -> &[Entry] {
        self.arena.index().entries()
    }

    /// Entries the index has room for without growing.
    #[inline]
    pub(crate) fn index_capacity(&self) -> usize {
        self.arena.index().capacity()
    }

    /// Heap bytes of the id index: its entries and the block bases in
    /// front of them.
    pub(crate) fn index_bytes(&self) -> usize {
        self.arena.index().heap_bytes()
    }

    /// Bytes of the block bases the id index keeps in front of its entries
    /// when it moves to a smaller allocation ([`Arena::shrink_index`]).
    pub(crate) fn index_pair_bytes_shrunk(&self) -> usize {
        self.arena.index_pairs_shrunk() * crate::id_index::PAIR_BYTES
    }

    /// Bytes of the block bases the id index holds in front of its
    /// entries once they have moved to a larger allocation
    /// ([`Arena::index_pairs_target`]).
    pub(crate) fn index_pair_bytes_grown(&self) -> usize {
        self.arena.index_pairs_target() * crate::id_index::PAIR_BYTES
    }

    /// Bytes the id index grows by to hold `entries` entries (nothing if it
    /// has room): the entries and, as it moves, room for the bases of the
    /// blocks [`Arena::index_pairs_target`] names.
    pub(crate) fn index_growth(&self, entries: usize) -> usize {
        let index = self.arena.index();
        if entries <= index.capacity() {
            return 0;
        }
        let pairs = self.arena.index_pairs_target() - index.pairs();
        (entries - index.capacity())
            .saturating_mul(ENTRY_BYTES)
            .saturating_add(pairs * crate::id_index::PAIR_BYTES)
    }

    /// Makes room in the index for `additional` more entries (exactly, as
    /// `Vec::try_reserve_exact`) and, as it moves, for the bases of the
    /// blocks [`Arena::index_pairs_target`] names; `Err` if the allocation
    /// fails.
    pub(crate) fn try_reserve_index(&mut self, additional: usize) -> Result<(), ()> {
        let pairs = self.arena.index_pairs_target();
        self.arena.index_mut().try_reserve_exact(additional, pairs)
    }

    /// Copies the index into an allocation of `capacity` entries, if that
    /// holds every entry and is smaller. If the allocator refuses it, an
    /// allocation of exactly the entries is tried (after a `clear`, a few
    /// bytes: the index then grows again from there); if that is refused
    /// too, the old allocation is kept.
    pub(crate) fn shrink_index(&mut self, capacity: usize) {
        self.arena.shrink_index(capacity);
    }

    /// Forgets every string but `""`, index and arena together, keeping
    /// their memory.
    pub(crate) fn clear(&mut self) {
        self.arena.index_mut().truncate(1);
        self.first_long = NO_LINK;
        self.last_long = 0;
        self.arena.clear();
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(&self, i: usize) -> &str {
        self.str_of(&self.entries()[i])
    }

    /// Folds `f` over the strings of ids `front..back` in id order, run by
    /// run: the ids whose records one arena block holds in order
    /// ([`Arena::run`]) are read with that block's base looked up once and
    /// each string's location and length taken from the index, so no read
    /// waits for the previous record (walking the records by their length
    /// bytes did: `iterate` ran 0.82x-0.85x lasso's speed that way,
    /// 0.94x-1.06x this way, `benches/README.md`). A run that holds long
    /// strings is split at each of them (each long record links to the
    /// next): the strings before one are read as short ones, with no test
    /// of their form.
    #[inline]
    pub(crate) fn fold<'s, B>(
        &'s self,
        front: usize,
        back: usize,
        init: B,
        mut f: impl FnMut(B, &'s str) -> B,
    ) -> B {
        // The location, unused, is not computed once inlined (`iterate`
        // unchanged, 37.4 instructions per string).
        self.fold_located::<true, _>(front, back, init, |acc, _, s| f(acc, s))
    }

    /// [`fold`](Self::fold) that also hands `f` each string's location (as
    /// `Arena::push` returned it; `""`'s is 0), from the run's block and
    /// the entry's offset: the hash table's rebuild makes its slots so.
    ///
    /// With `LINKS` (iteration), a run whose block holds long strings is
    /// read up to each long string as short strings, and the long one's
    /// record gives the next's id. Without (the rebuild), each string of
    /// such a run is tested for its form, as before the links: with them,
    /// the rebuild's closure was no longer inlined into the fold's loops,
    /// and inlined by force it kept each slot in a register pair (`fill`
    /// 38.9M instructions without, 42.0M and 39.5M with; hot-path lever
    /// 77 in `benches/README.md`).
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) fn fold_located<'s, const LINKS: bool, B>(
        &'s self,
        front: usize,
        back: usize,
        init: B,
        mut f: impl FnMut(B, Loc, &'s str) -> B,
    ) -> B {
        let entries = self.entries();
        let locs = &entries[..back];
        let mut acc = init;
        let mut i = front;
        if i == 0 && back > 0 {
            // Id 0, `""`, is the empty block's static record.
            acc = f(acc, 0, "");
            i = 1;
        }
        // Where the last run must stop: the record of id `back`, if any (a
        // run stops there only if it is in the run's block).
        let stop = entries.get(back).map_or(0, |e| e.loc());
        // The id of the first long string from `i` on (`NO_LINK`, above
        // every id, if none): the strings before it are all short. From
        // there each long record links to the next.
        let mut next_long = if !LINKS || self.first_long as usize >= i {
            self.first_long as usize
        } else {
            // Folding from past the first long string (after `next`):
            // the first long entry from `i`, or past `back`.
            entries[i..back]
                .iter()
                .position(|e| e.tag() == ESCAPE)
                .map_or(NO_LINK as usize, |k| i + k)
        };
        // Its entry's address, past the entries folded if there is none
        // (`NO_LINK` is 21 GB past them on 64-bit targets, with no
        // wrap-around; a 32-bit address space could wrap, so there the
        // id is cut to `back` first, which on 64-bit targets cost
        // `iterate` on symbol names 0.3 instructions per string).
        let entry_at = |id: usize| {
            let id = if cfg!(target_pointer_width = "64") {
                id
            } else {
                id.min(back)
            };
            locs.as_ptr().wrapping_add(id)
        };
        let mut next_at = entry_at(next_long);
        while i < back {
            let run = self.arena.run(locs[i].loc(), stop);
            let run_locs = &locs[i..i + run.len];
            // The run's block, in a location's high half.
            let block = locs[i].loc() & !LOCAL_MASK;
            // The block's short label's base: the arena's bias for the
            // block plus the block's high half less the label's (both are
            // the block's base less their high half).
            let bias = run
                .bias
                .wrapping_add(block as usize)
                .wrapping_sub(short_word_base(block as usize >> LOCAL_BITS) as usize);
            let loc = |e: &Entry| block | (e.word() & LOCAL_MASK);
            // The reads below add the run's bias to each location: every
            // entry of the run must be in the block of its first (the
            // arena's ids say so, `Arena::run`).
            debug_assert!(
                run_locs
                    .iter()
                    .all(|e| e.loc() >> LOCAL_BITS == run_locs[0].loc() >> LOCAL_BITS),
                "a run's records lie in one block"
            );
            let run_end = run_locs.as_ptr_range().end;
            // `for` loops (a pointer walk): `Iter::fold`'s index-based loop
            // kept the block's bias in a stack slot.
            if !run.long || (LINKS && next_at >= run_end) {
                for e in run_locs {
                    // SAFETY: `e` locates a record of `run`'s block
                    // (`Arena::run`), whose short label's base is `bias`;
                    // entries hold their records' words and length bytes
                    // (the type's invariant); the strings live as long as
                    // `self`. The run holds no long string (its block has
                    // none, or the next is at `next_long`, past the run),
                    // so `e.tag()` is the string's length.
                    acc = f(acc, loc(e), unsafe {
                        Arena::str_short_biased(bias, e.word(), e.tag())
                    });
                }
            } else if !LINKS {
                for e in run_locs {
                    // `f` is called in two places so that each copy knows
                    // its string's form: with one call after a select, the
                    // register allocation of the whole caller changed and
                    // `iterate` on generated strings (no long record) went
                    // from 37.3 to 38.3 instructions per string
                    // (`benches/README.md`).
                    acc = if e.tag() == ESCAPE {
                        // SAFETY: as above; a long record's word, whose
                        // label is one less (`Entry::of`), is added to the
                        // short label's base plus `1 << LOCAL_BITS`; the
                        // entry's tag, the escape, says the record is long.
                        f(acc, loc(e), unsafe {
                            Arena::str_long_biased(bias.wrapping_add(1 << LOCAL_BITS), e.word())
                        })
                    } else {
                        // SAFETY: as above, and `e.tag()`, not the escape,
                        // is the string's length.
                        f(acc, loc(e), unsafe {
                            Arena::str_short_biased(bias, e.word(), e.tag())
                        })
                    };
                }
            } else {
                // The short strings up to each long one, then that one,
                // whose record links to the next.
                let mut p = run_locs.as_ptr();
                loop {
                    let short_end = next_at.min(run_end);
                    while p != short_end {
                        // SAFETY: `p` walks `run_locs`, from its start up to
                        // an entry of the run or its end, and is not at the
                        // end: an entry of the run.
                        let e = unsafe { &*p };
                        // SAFETY: the strings before `next_long` (at
                        // `next_at`) are short: as for the first loop.
                        acc = f(acc, loc(e), unsafe {
                            Arena::str_short_biased(bias, e.word(), e.tag())
                        });
                        p = p.wrapping_add(1);
                    }
                    if p == run_end {
                        break;
                    }
                    // Long strings in a row (a block of C++ names holds
                    // several) stay in this loop: its test costs two
                    // instructions where going round the outer one cost
                    // eight (symbol names' `iterate` 48.74 -> 48.47,
                    // with `str_long_linked`'s one address 47.62:
                    // `benches/README.md`, lever 78).
                    loop {
                        // SAFETY: `p`, before the run's end (tested above
                        // and at the end of each round, and `p` moves by
                        // one), is an entry of the run, of id `next_long`
                        // (`p == next_at`).
                        let e = unsafe { &*p };
                        // SAFETY: a long string's entry (the store's links):
                        // read as in the second loop, with its record's link.
                        let (long, link) = unsafe {
                            Arena::str_long_linked(bias.wrapping_add(1 << LOCAL_BITS), e.word())
                        };
                        acc = f(acc, loc(e), long);
                        // The store links each long string to the next, in id
                        // order, so `next_long` only moves forward.
                        debug_assert!(link as usize > next_long);
                        next_long = link as usize;
                        next_at = entry_at(next_long);
                        p = p.wrapping_add(1);
                        if p != next_at || p == run_end {
                            break;
                        }
                    }
                }
            }
            i += run.len;
        }
        acc
    }

    #[inline]
    pub(crate) fn resolve(&self, id: StringId) -> Option<&str> {
        self.entries().get(id.index()).map(|e| self.str_of(e))
    }

    /// Heap bytes of the arena and the index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.arena.index().heap_bytes()
    }

    /// Copies `s` into the arena as the record of id `id` (the next one)
    /// and appends its entry (a long string linked after the previous
    /// one); the caller has reserved room in the index. Returns the
    /// location. On error nothing is added.
    pub(crate) fn push(&mut self, s: &str, id: u32, budget: usize) -> Result<Loc, Error> {
        debug_assert!(self.len() < self.index_capacity());
        debug_assert_eq!(id as usize, self.len());
        let loc = self.arena.push(s, id, budget)?;
        if s.len() >= LONG_LEN {
            self.link(id, loc);
        }
        self.arena.index_mut().push(Entry::of(loc, s));
        Ok(loc)
    }
}

#[cfg(test)]
mod tests {
    use crate::StringTable;

    /// `fold` finds every long string through the links, from every
    /// position `next` leaves (past the first long string it finds the
    /// next by the entries' tags), with short strings after the last
    /// long one (whose link is `NO_LINK`) and with no long string left.
    /// `.ci/miri32.sh` runs it on a 32-bit target, where `NO_LINK`'s
    /// address would wrap around.
    #[test]
    fn fold_follows_long_links() {
        let strings: Vec<String> = (0..40)
            .map(|i| {
                if i % 3 == 1 && i < 30 {
                    format!("{i:0>300}")
                } else {
                    format!("s{i}")
                }
            })
            .collect();
        let mut t = StringTable::new();
        for s in &strings {
            t.intern(s);
        }
        let expected: Vec<&str> = core::iter::once("")
            .chain(strings.iter().map(String::as_str))
            .collect();
        for front in 0..=expected.len() {
            let mut iter = t.iter();
            if front > 0 {
                iter.nth(front - 1);
            }
            let folded = iter.fold(Vec::new(), |mut v, s| {
                v.push(s);
                v
            });
            assert_eq!(folded, expected[front..], "from {front}");
        }
    }
}
