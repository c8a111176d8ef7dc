//! [`StringTable::shrink_to`] and [`StringTable::shrink_to_fit`]: giving
//! memory back after a burst.
//!
//! Kept out of the core modules: it only rebuilds the arena through
//! [`Arena::with_capacity`], has the store copy its id index into a
//! smaller allocation (`Store::shrink_index`) and rebuilds the hash table
//! with the table's own [`StringTable::rebuilt_table`].

use core::hash::BuildHasher;

use bumpalo::Bump;
use hashbrown::HashTable;

use crate::arena::{
    Arena, BLOCK_ENTRY_BYTES, CHUNK_FOOTER_SIZE, CHUNK_OVERHEAD, FIRST_CHUNK_CAPACITY,
    MALLOC_HEADER_SIZE, MAX_BLOCK, MAX_CHUNK_CAPACITY, PAGE_SIZE,
};
use crate::id_index::PAIR_BYTES;
use crate::store::ENTRY_BYTES;
#[cfg(doc)]
use crate::table::Builder;
use crate::table::{
    INITIAL_INDEX_BLOCKS, INITIAL_INDEX_CAPACITY, INITIAL_TABLE_CAPACITY, SLOT_BYTES, Slot,
    StringTable, buckets_bytes, table_bytes_for,
};

/// An upper bound on the arena's bookkeeping besides its chunk: bumpalo's
/// chunk footer, the boxed `Bump`, and the block list (one entry per
/// block, a block per [`MAX_BLOCK`] bytes plus the empty block 0, at most
/// doubled by the list's growth).
fn arena_bookkeeping(chunk: usize) -> usize {
    let blocks = chunk.div_ceil(MAX_BLOCK) + 1;
    CHUNK_FOOTER_SIZE + size_of::<Bump>() + 2 * blocks * BLOCK_ENTRY_BYTES
}

/// The first-chunk capacity of the largest arena that fits `heap` bytes,
/// and never below [`FIRST_CHUNK_CAPACITY`]: a size of the arena's own
/// growth sequence (16 KiB doubling to 256 KiB, then a whole number of
/// 256 KiB chunks, each with bumpalo's footer and the allocator's header),
/// so that the chunks a refill adds after it are the ones a grown table
/// has.
fn chunk_for_heap(heap: usize) -> usize {
    let pages = heap
        .saturating_sub(arena_bookkeeping(heap))
        .saturating_add(CHUNK_OVERHEAD)
        / PAGE_SIZE;
    let max_pages = (MAX_CHUNK_CAPACITY + CHUNK_OVERHEAD) / PAGE_SIZE;
    let pages = if pages >= max_pages {
        pages / max_pages * max_pages
    } else if pages > 0 {
        1 << (usize::BITS - 1 - pages.leading_zeros())
    } else {
        0
    };
    (pages * PAGE_SIZE)
        .saturating_sub(CHUNK_OVERHEAD)
        .max(FIRST_CHUNK_CAPACITY)
}

/// Heap bytes, bounded above, of an arena whose only chunk holds `chunk`
/// bytes.
fn arena_heap_for(chunk: usize) -> usize {
    chunk + arena_bookkeeping(chunk)
}

/// Hash-table capacity of `buckets` buckets (hashbrown's load factor).
fn buckets_capacity(buckets: usize) -> usize {
    if buckets < 8 {
        buckets.saturating_sub(1)
    } else {
        buckets / 8 * 7
    }
}

/// Capacity of the largest hash table that fits `bytes`.
fn table_capacity_for(bytes: usize) -> usize {
    let buckets = bytes.saturating_sub(16) / (SLOT_BYTES + 1);
    if buckets < 4 {
        // hashbrown's smallest table has 4 buckets.
        return 0;
    }
    // The largest power of two at or below `buckets` whose table fits
    // (the slots' padding can push the estimate over).
    let mut buckets = 1 << (usize::BITS - 1 - buckets.leading_zeros());
    while buckets > 4 && buckets_bytes(buckets) > bytes {
        buckets /= 2;
    }
    if buckets_bytes(buckets) > bytes {
        return 0;
    }
    buckets_capacity(buckets)
}

/// Id-index capacity whose allocation, with `pair_bytes` of block bases in
/// front of the entries, fits `bytes`: page-tuned like the index's growth
/// (allocation plus the allocator's header a whole number of pages) once
/// it spans a page.
fn index_capacity_for(bytes: usize, pair_bytes: usize) -> usize {
    let pages = (bytes + MALLOC_HEADER_SIZE) / PAGE_SIZE;
    let bytes = if pages == 0 {
        bytes
    } else {
        pages * PAGE_SIZE - MALLOC_HEADER_SIZE
    };
    bytes.saturating_sub(pair_bytes) / ENTRY_BYTES
}

/// One part of the table's memory: the bytes it holds now and the fewest
/// it can be shrunk to (`floor <= current`).
#[derive(Clone, Copy, Debug)]
struct Part {
    current: usize,
    floor: usize,
}

/// Shares `budget` bytes out among `parts` in proportion to what each holds
/// now, but never below its floor (nor above what it holds): a part whose
/// proportional share falls under its floor gets the floor, and the rest
/// of the budget is shared out again among the others.
fn share_out<const N: usize>(budget: usize, parts: [Part; N]) -> [usize; N] {
    let mut share = parts.map(|p| p.current);
    let mut at_floor = [false; N];
    loop {
        let fixed: usize = (0..N)
            .filter(|&i| at_floor[i])
            .map(|i| parts[i].floor)
            .sum();
        let free: usize = (0..N)
            .filter(|&i| !at_floor[i])
            .map(|i| parts[i].current)
            .sum();
        if free == 0 {
            return share;
        }
        let available = budget.saturating_sub(fixed);
        let mut changed = false;
        for i in 0..N {
            if at_floor[i] {
                continue;
            }
            // u128: `current * available` can overflow usize.
            let s = (parts[i].current as u128 * available as u128 / free as u128) as usize;
            if s <= parts[i].floor {
                at_floor[i] = true;
                share[i] = parts[i].floor;
                changed = true;
            } else {
                share[i] = s.min(parts[i].current);
            }
        }
        if !changed {
            return share;
        }
    }
}

impl<S: BuildHasher> StringTable<S> {
    /// Releases memory the table does not need, until
    /// [`memory_usage`](Self::memory_usage) is at most `max_bytes` or
    /// nothing more can be released. Never moves or loses a string: every
    /// id stays valid and resolves to the same string, and
    /// [`get`](Self::get) finds every string.
    ///
    /// What can be released depends on whether the table holds strings:
    ///
    /// - **Right after [`clear`](Self::clear)** (the table holds only
    ///   `""`), everything: the arena is freed and rebuilt with one chunk,
    ///   and the id index and the hash table are reallocated smaller. The
    ///   table then behaves like a new one built with sizes under
    ///   `max_bytes`: each part keeps a share of `max_bytes` in proportion
    ///   to what it holds now, cut down to a size the part can have (a
    ///   power of two of hash-table buckets), so a refill allocates nothing
    ///   until one part is full, which can come before `memory_usage()`
    ///   reaches `max_bytes` (a table of the 200,000 labels `label-0` to
    ///   `label-199999`, cleared and shrunk to 200,000 bytes, held 147,574
    ///   and first grew at the 4,439th label of a refill, where a new
    ///   table holding those 4,438 labels used 196,806). No part is shrunk below a
    ///   [`new`](StringTable::new) table's page-tuned sizes (a 16 KiB
    ///   arena chunk, a one-page index, a one-page hash table), so
    ///   afterwards `memory_usage()` is at most `max_bytes` or a new
    ///   table's footprint, whichever is larger.
    /// - **While the table holds strings**, only the capacity of the id
    ///   index and of the hash table beyond what the strings need. The
    ///   arena keeps all its chunks: bumpalo frees chunks only all at
    ///   once, and strings are never moved. Call `shrink_to` right after
    ///   `clear`, or [`compact`](Self::compact) into a new table.
    ///
    /// It never fails and never allocates more than it frees: a part is
    /// replaced only by a smaller one, every allocation is fallible, and if
    /// one fails the old part is kept. The arena of a cleared table is
    /// freed before its new chunk is allocated (if that allocation fails,
    /// the table has no chunk until the next string needs one). Shrinking
    /// the index or the hash table holds the old and the new one at once
    /// for a moment, so a table with a byte limit skips a step whose moment
    /// would go past [`Limits::max_bytes`](crate::Limits::max_bytes) (the
    /// part then keeps its size, and `memory_usage()` can stay above
    /// `max_bytes`); shrinking the hash table of a table that holds
    /// strings re-hashes every string (O(len), like growing it). When
    /// `memory_usage() <= max_bytes` already, it does nothing and costs
    /// nothing, so a profiler can call it after every `clear`.
    ///
    /// One allocation is infallible, as in [`Builder::try_build`]: a new
    /// arena's fixed bookkeeping (a boxed `Bump` and a one-entry block
    /// list, under 100 bytes), made when the arena of a cleared table is
    /// rebuilt, just before the larger old arena is freed. An allocator
    /// that refuses even that aborts the process.
    ///
    /// Freed memory goes back to the global allocator; whether it leaves
    /// the process is the allocator's choice (glibc keeps freed heap pages
    /// until `malloc_trim`; see the README's memory section).
    ///
    /// # A continuous profiler
    ///
    /// Keep one table, `clear()` it after every export so the next period
    /// interns without allocating, and after the `clear` call
    /// `shrink_to(2 * steady)`, where `steady` is what recent periods
    /// needed: for instance the smallest `memory_usage()` at export over
    /// the last few periods. In the steady state that does nothing; after a
    /// burst of new strings (a deploy, a flood of new label values) it
    /// gives the burst's memory back, and the next periods run without
    /// allocating again.
    ///
    /// ```
    /// use std::collections::VecDeque;
    /// use strtab::StringTable;
    ///
    /// let mut table = StringTable::new();
    /// let mut recent = VecDeque::new(); // memory_usage() at the last exports
    /// for period in 0..12 {
    ///     for i in 0..500 {
    ///         table.intern(&format!("hot::function_{i}"));
    ///     }
    ///     if period == 5 {
    ///         for i in 0..20_000 {
    ///             table.intern(&format!("burst-label-{i}")); // a one-off burst
    ///         }
    ///     }
    ///     // ... export the profile ...
    ///     recent.push_back(table.memory_usage());
    ///     if recent.len() > 4 {
    ///         recent.pop_front();
    ///     }
    ///     let steady = *recent.iter().min().unwrap();
    ///     table.clear();
    ///     table.shrink_to(2 * steady);
    ///     assert!(table.memory_usage() <= 2 * steady);
    /// }
    /// // The burst's memory was given back.
    /// assert!(table.memory_usage() < 100_000);
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let steady = table.memory_usage();
    /// for i in 0..100_000 {
    ///     table.intern(&format!("label-{i}"));
    /// }
    /// let peak = table.memory_usage();
    ///
    /// // Holding strings: only the index and hash-table slack can go.
    /// let id = table.intern("label-7");
    /// table.shrink_to(steady);
    /// assert_eq!(&table[id], "label-7");
    /// assert_eq!(table.get("label-99999").map(|id| id.index()), Some(100_000));
    /// assert!(table.memory_usage() <= peak);
    ///
    /// // After clear, everything but what max_bytes allows.
    /// table.clear();
    /// table.shrink_to(1 << 20);
    /// assert!(table.memory_usage() <= 1 << 20);
    /// table.shrink_to(0);
    /// assert_eq!(table.memory_usage(), steady); // a new table's footprint
    /// ```
    pub fn shrink_to(&mut self, max_bytes: usize) {
        let total = self.memory_usage();
        if total <= max_bytes {
            return;
        }
        let cleared = self.len() == 1;
        let arena = self.store.arena.heap_bytes();
        let index = self.store.index_bytes();
        // The block bases the index keeps in front of its entries: a new
        // table's after `clear` (whose arena is rebuilt first, below), else
        // room for the blocks the arena has.
        let pair_bytes = if cleared {
            INITIAL_INDEX_BLOCKS * PAIR_BYTES
        } else {
            self.store.index_pair_bytes_shrunk()
        };
        let table = self.table.allocation_size();
        // The fewest bytes each part can keep: what the strings need, or
        // after `clear`, a new table's sizes (never more than it holds).
        let (arena_floor, index_floor, table_floor) = if cleared {
            (
                arena_heap_for(FIRST_CHUNK_CAPACITY),
                INITIAL_INDEX_CAPACITY * ENTRY_BYTES + pair_bytes,
                table_bytes_for(INITIAL_TABLE_CAPACITY),
            )
        } else {
            (
                arena,
                self.len() * ENTRY_BYTES + pair_bytes,
                table_bytes_for(self.table.len()),
            )
        };
        let part = |current: usize, floor: usize| Part {
            current,
            floor: floor.min(current),
        };
        // Anything `memory_usage` counts besides the three parts is fixed.
        let other = total.saturating_sub(arena + index + table);
        let [arena_share, table_share, index_share] = share_out(
            max_bytes.saturating_sub(other),
            [
                part(arena, arena_floor),
                part(table, table_floor),
                part(index, index_floor),
            ],
        );
        // Arena first (freed before anything is allocated), then the hash
        // table, then the index, so each allocation can reuse memory the
        // earlier steps freed.
        if cleared && arena_share < arena {
            self.rebuild_arena(arena_share, arena);
        }
        if table_share < table {
            let floor = if cleared {
                INITIAL_TABLE_CAPACITY
            } else {
                self.table.len()
            };
            let capacity = table_capacity_for(table_share).max(floor);
            // An empty table is freed before its replacement is allocated.
            // Otherwise both are held while the slots move: within the limit.
            if self.table.is_empty() || table_bytes_for(capacity) <= self.byte_budget() {
                self.shrink_table(capacity);
            }
        }
        if index_share < index {
            let floor = if cleared {
                INITIAL_INDEX_CAPACITY
            } else {
                self.len()
            };
            let capacity = index_capacity_for(index_share, pair_bytes).max(floor);
            // Old and new index are held while it is copied; the new one
            // keeps the bases of the blocks the arena has now (after a
            // rebuild above, a new table's), which the estimate above may
            // have put lower.
            let kept = self.store.index_pair_bytes_shrunk();
            if capacity.saturating_mul(ENTRY_BYTES) + kept <= self.byte_budget() {
                self.store.shrink_index(capacity);
            }
        }
    }

    /// Releases all the memory the table does not need:
    /// [`shrink_to(0)`](Self::shrink_to). Right after
    /// [`clear`](Self::clear) the table is left with
    /// [`new`](StringTable::new)'s page-tuned sizes, whatever it was built
    /// with (a part that never grew past them, such as the parts of a
    /// `capacity(0, 0)` table that never grew, keeps its smaller size);
    /// while it holds strings,
    /// the id index and the hash table are cut to what the strings need,
    /// and the arena keeps its chunks.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let new = table.memory_usage();
    /// for i in 0..50_000 {
    ///     table.intern(&format!("label-{i}"));
    /// }
    /// table.clear();
    /// table.shrink_to_fit();
    /// assert_eq!(table.memory_usage(), new);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.shrink_to(0);
    }

    /// Frees the arena of a cleared table and starts a new one whose first
    /// chunk fits `share` heap bytes (at least a new table's chunk), if
    /// that is smaller than the `current` arena.
    fn rebuild_arena(&mut self, share: usize, current: usize) {
        debug_assert_eq!(self.len(), 1, "the arena holds strings");
        let chunk = chunk_for_heap(share);
        if arena_heap_for(chunk) >= current {
            return;
        }
        // Free every chunk before allocating the new one. An arena without
        // chunks allocates only its fixed bookkeeping (a boxed `Bump` and a
        // one-entry block list: far less than the chunks just freed) and
        // cannot fail; the table then grows on demand. The id index (`""`'s
        // entry alone) moves to the new arena.
        let Ok(empty) = Arena::with_capacity(0) else {
            return;
        };
        let mut index = core::mem::replace(&mut self.store.arena, empty).take_index();
        if let Ok(mut arena) = Arena::with_capacity(chunk)
            && arena.heap_bytes() < current
        {
            match arena.install_index(index) {
                Ok(()) => {
                    self.store.arena = arena;
                    return;
                }
                Err(back) => index = back,
            }
        }
        // The chunkless arena's one block fits the index's room for at
        // least two.
        let installed = self.store.arena.install_index(index);
        debug_assert!(installed.is_ok(), "an index has room for block 0");
    }

    /// Moves the hash table's slots into a table of `capacity`, if that
    /// allocates less; keeps the old one if the allocation fails.
    fn shrink_table(&mut self, capacity: usize) {
        if capacity >= self.table.capacity() {
            return;
        }
        let before = self.table.allocation_size();
        if self.table.is_empty() {
            // Nothing to move: free first, then allocate.
            self.table = HashTable::new();
            let _ = self.table.try_reserve(capacity, |_: &Slot| 0);
            if self.table.allocation_size() >= before {
                self.table = HashTable::new();
            }
            return;
        }
        match self.rebuilt_table(capacity) {
            Some(new) if new.allocation_size() < before => self.table = new,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_hashbrown() {
        for capacity in [1, 3, 7, 8, 13, 14, 15, 100, 224, 225, 448, 449, 10_000] {
            let mut t: HashTable<Slot> = HashTable::new();
            t.try_reserve(capacity, |_| 0).unwrap();
            assert!(
                t.allocation_size() <= table_bytes_for(capacity),
                "{capacity}"
            );
            let fit = table_capacity_for(t.allocation_size());
            assert!(fit >= capacity, "{capacity}: {fit}");
        }
        assert_eq!(table_bytes_for(INITIAL_TABLE_CAPACITY), 3088);
        assert_eq!(index_capacity_for(4080, 32), INITIAL_INDEX_CAPACITY);
        assert_eq!(chunk_for_heap(0), FIRST_CHUNK_CAPACITY);
        for heap in [100 << 10, 1 << 20, 3 << 20] {
            let chunk = chunk_for_heap(heap);
            assert!(arena_heap_for(chunk) <= heap, "{heap}");
            assert_eq!((chunk + CHUNK_OVERHEAD) % PAGE_SIZE, 0);
        }
        assert_eq!(chunk_for_heap(100 << 10), 64 * 1024 - CHUNK_OVERHEAD);
        assert_eq!(chunk_for_heap(1 << 20), 3 * (256 << 10) - CHUNK_OVERHEAD);
    }

    #[test]
    fn arena_bound_holds() {
        for chunk in [FIRST_CHUNK_CAPACITY, chunk_for_heap(3 << 20)] {
            let arena = Arena::with_capacity(chunk).unwrap();
            assert!(arena.heap_bytes() <= arena_heap_for(chunk));
        }
    }

    #[test]
    fn shares_respect_floors() {
        let p = |current, floor| Part { current, floor };
        assert_eq!(share_out(100, [p(100, 0), p(100, 0)]), [50, 50]);
        assert_eq!(share_out(100, [p(100, 80), p(100, 0)]), [80, 20]);
        assert_eq!(share_out(10, [p(100, 80), p(100, 50)]), [80, 50]);
        assert_eq!(share_out(1000, [p(100, 80), p(100, 0)]), [100, 100]);
        assert_eq!(share_out(0, [p(0, 0), p(0, 0)]), [0, 0]);
    }
}
