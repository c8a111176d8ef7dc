//! One shard of a [`SharedStringTable`](crate::SharedStringTable): an
//! arena and a hash table of the strings whose hash selects this shard,
//! always used under the shard's lock.

use core::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};

use hashbrown::HashTable;

use super::hints::{LINE_SHIFT, SET_SHIFT};
use crate::arena::{Arena, Found};
use crate::error::{Error, ErrorKind};
use crate::table::{Slot, find_slot_with, hash_str, rehash, table_bytes_for};

/// The hashes of a string: the 64-bit hash handed to the shard's hash
/// table (the same as [`StringTable`](crate::StringTable)'s), and the bits
/// that select the shard (and the hint cache's set, see `hints`).
///
/// The one place the shared table hashes. hashbrown takes its bucket
/// index from the low bits of the hash and its control byte from the top
/// 7 bits, and is designed around a hasher (foldhash's fast one, the
/// default) whose other bits need not be well mixed. They are not: for
/// short strings that differ in a few bytes (`thread-7`, numeric label
/// values), bits 40 and up of one seed's hashes can put 94 of 100 such
/// strings in one of 4 shards, and leave shards empty. The shard bits
/// therefore come from the hash times an odd constant, bits 40 and up,
/// which depend on all of the hash's low 40 bits and more. Over 20,000
/// seeds, the fullest shard then holds at most 44-47 of 100 such strings
/// over 4 shards and 19-20 over 16, as a random split would (unmixed:
/// 94-100 and 51-80). A 31-bit constant, so that the multiply takes it
/// as an immediate, one instruction: callgrind's `thread-stream` counts
/// 178.75M instructions with it, 178.78M without the mix, and 180.75M
/// with the 64-bit constant (whose load is a second instruction). A
/// shard's strings still spread over its buckets: 10,000 of them
/// (`thread-N`) over 1,024 groups of 16 buckets load the fullest group
/// with 21.0 strings, against 20.7 with the unmixed bits and 20.1 for any
/// 10,000 of the strings (means over 200 seeds).
///
/// The shard bits come scaled by 16 (`<< SET_SHIFT`, the size of a hint
/// set), their four lowest bits whatever the mix left there and ignored
/// by every use ([`shard_index`], the hint cache's set and block bias),
/// so that a hinted lookup adds them to its level's address masked but
/// not shifted (one instruction fewer per hinted lookup). Above those,
/// two bits pick the hint set's place in its cache line, and the bits
/// above them (the product's bits 42 and up) the shard, so that the four
/// sets of a line are of one shard (`hints::Line`; until 2026-12-07 the
/// shard was the product's bits 40 and up, where the measurements above
/// were made).
#[inline]
pub(crate) fn hash_of<S: BuildHasher>(hasher: &S, s: &str) -> (u64, usize) {
    let h = hash_str(hasher, s);
    (
        h,
        (h.wrapping_mul(SHARD_MIX) >> (SHARD_SHIFT - SET_SHIFT)) as usize,
    )
}

/// The shard of shard bits `bits` (as [`hash_of`] gives them) in a table
/// of `shard_mask + 1` shards.
#[inline(always)]
pub(crate) fn shard_index(bits: usize, shard_mask: usize) -> usize {
    (bits >> (SET_SHIFT + LINE_SHIFT)) & shard_mask
}

/// The address of `table`'s control bytes as derived from full bucket `i`
/// (see [`Shard::probe_start`]); `None` if bucket `i` is empty. An
/// address only, never read through.
fn ctrl_addr(table: &HashTable<Slot>, i: usize) -> Option<usize> {
    let slot = table.get_bucket(i)?;
    Some(core::ptr::from_ref(slot).addr() + (i + 1) * size_of::<Slot>())
}

/// A shard's [`Shard::probe_start`], readable without its lock: a copy
/// that only a holder of the lock changes, after the table grows. Read
/// before the lock to prefetch the control bytes a lookup will read first,
/// so that their cache miss overlaps the lock's compare-and-swap.
///
/// On a cache line of its own (`align(64)`), written only when the table
/// grows, so that reading it does not take the line of the lock or of the
/// shard's state from the core that holds them. The two words are stored
/// one after the other, so a reader may pair those of two growths: the
/// address is then wrong, which costs a useless prefetch.
///
/// Measured on the concurrent benchmark, two threads, the builds
/// alternated (`benches/README.md`): throughput against one
/// `StringTable` thread 1.36x-1.38x -> 1.45x-1.48x on generated streams,
/// 1.41x-1.50x -> 1.54x-1.55x on symbol names, 1.58x-1.61x -> 1.60x-1.63x
/// on replayed calls; one thread unchanged (178.0 -> 178.3 instructions
/// per intern).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct ProbeHint {
    ctrl: AtomicUsize,
    mask: AtomicUsize,
}

impl ProbeHint {
    /// Prefetches the first control-byte group a lookup of `hash` reads.
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        let ctrl = self.ctrl.load(Ordering::Relaxed);
        let mask = self.mask.load(Ordering::Relaxed);
        // An address without provenance: a prefetch reads nothing.
        crate::prefetch::prefetch(core::ptr::without_provenance::<u8>(
            ctrl.wrapping_add(hash as usize & mask),
        ));
    }

    /// The stored probe start (for the unit tests, which loom builds
    /// leave out).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn get(&self) -> (usize, usize) {
        (
            self.ctrl.load(Ordering::Relaxed),
            self.mask.load(Ordering::Relaxed),
        )
    }

    /// Stores `shard`'s probe start; the caller holds its lock.
    pub(crate) fn update(&self, shard: &Shard) {
        self.store(shard.probe_start());
    }

    /// Stores a probe start, `(ctrl, mask)` as [`Shard::probe_start`]
    /// gives it.
    pub(crate) fn store(&self, (ctrl, mask): (usize, usize)) {
        self.ctrl.store(ctrl, Ordering::Relaxed);
        self.mask.store(mask, Ordering::Relaxed);
    }
}

/// The lowest bit of the mixed hash ([`hash_of`]) that selects a shard.
const SHARD_SHIFT: u32 = 40;

/// The odd constant [`hash_of`] mixes the hash with: the low half of
/// 2^64 divided by the golden ratio (Fibonacci hashing), below 2^31 so
/// that it is an instruction's immediate.
const SHARD_MIX: u64 = 0x7F4A_7C15;

/// A shard arena's first chunk, and the size up to which its chunks
/// double on every growth: one page with bumpalo's and the allocator's
/// overhead. A table has many shards, filled evenly, and each one's last
/// chunk is partly empty, so their tails must stay small: a shard's chunks
/// double only once its arena holds 16 chunks' worth (as a
/// `StringTable`'s do past 256 KiB), so a shard's unused tail is at most a
/// page or about an eighth of its bytes. With 64 KiB here (until
/// 2026-12-03) the shards of a 100k-string table could all be just past a
/// chunk boundary at once: 16 shards held 39.5 bytes per string beyond the
/// strings' own (33.3 now), 64 shards 43.2 (36.6 now), 256 shards 100.5
/// (44.1 now), for 0.2% more instructions (`benches/README.md`).
const SHARD_DOUBLING_CAP: usize = crate::arena::PAGE_CHUNK_CAPACITY;

/// Strings a shard's hash table has room for after its first growth (64
/// buckets, 400 bytes, a tenth of the shard's first arena chunk), where
/// it would otherwise double from 4 buckets. Each growth takes the
/// table-wide growth lock, allocates and re-hashes the shard's strings
/// from its arena, and a table of many shards goes through the first
/// ones in every shard: one thread interning 1,000 distinct strings into
/// a fresh 64-shard table took 189 µs growing from 4 buckets and 79 µs
/// from 64, and one thread replaying the WordPress profile's calls
/// 1.21x-1.26x `StringTable`'s time instead of 1.28x-1.31x
/// (`benches/README.md`, session 41).
pub(crate) const FIRST_TABLE_STRINGS: usize = 56;

/// An arena and the hash table of its strings.
///
/// `#[repr(C)]`, the hash table first, then the arena (its block bases
/// first): behind the lock word, the lock, the table's header and the
/// bases all sit on the shard's first cache line (asserted below), so a
/// locked lookup moves one line between cores, not three. Rust's own
/// field order had put the lock word on a third line. Two threads on the
/// concurrent stream (`STRTAB_ROUNDS=5 STRTAB_THREADS=2`, the two builds
/// alternated, medians of 10-12 runs, four batches): wall 80.6 -> 68.5
/// and 95.2 -> 91.8 ms, CPU time 84.1 -> 80.2 and 82.2 -> 81.8 ms
/// (`benches/README.md`).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Shard {
    pub(crate) table: HashTable<Slot>,
    pub(crate) arena: Arena,
}

// A shard starts a 128-byte-aligned `Padded`: the lock word, the table's
// header and the arena's block bases fit its first cache line.
const _: () = assert!(
    super::ShardLock::VALUE_OFFSET + core::mem::offset_of!(Shard, arena) + Arena::LOOKUP_BYTES
        <= 64
);

impl Shard {
    /// An empty shard: no arena chunk and no hash-table buckets until its
    /// first string, so a table's fixed cost stays small whatever its
    /// shard count.
    pub(crate) fn new() -> Result<Shard, Error> {
        Self::with_capacity(0, 0)
    }

    /// A shard with room for `strings` strings in its hash table and an
    /// arena whose first chunk holds `arena_bytes` bytes (none if 0). The
    /// arena's current block stays the static empty one, so the first
    /// string still takes the push's slow path, which publishes its block
    /// for the hint cache (`SharedStringTable::insert_slow`).
    pub(crate) fn with_capacity(strings: usize, arena_bytes: usize) -> Result<Shard, Error> {
        let mut arena = Arena::with_capacity(arena_bytes)?;
        arena.cap_chunk_doubling(SHARD_DOUBLING_CAP);
        arena.park();
        let mut table = HashTable::new();
        // An empty table re-hashes nothing.
        table
            .try_reserve(strings, |_| 0)
            .map_err(|_| Error::new(ErrorKind::AllocFailed, table_bytes_for(strings)))?;
        Ok(Shard { table, arena })
    }

    /// The record of `s` (not `""`) if this shard holds it (its id and
    /// its address, for the hint cache): the same lookup as
    /// [`StringTable`](crate::StringTable)'s.
    #[inline]
    pub(crate) fn find(&self, hash: u64, s: &str) -> Option<Found<'_>> {
        find_slot_with(&self.table, &self.arena, hash, s, |found| found)
    }

    /// Where a lookup of a hash starts in this shard's hash table, for a
    /// prefetch before the lock ([`ProbeHint`]): the address of the table's
    /// control bytes and its bucket mask, or `(0, 0)` while the table is
    /// empty. Derived from the address of a full bucket and hashbrown's
    /// layout (bucket `i` ends `i` slots before the control bytes); only a
    /// hint, so a wrong guess costs a useless prefetch, never a wrong read.
    pub(crate) fn probe_start(&self) -> (usize, usize) {
        match self.table.iter_buckets().next() {
            Some(i) => (
                ctrl_addr(&self.table, i).unwrap_or(0),
                self.table.num_buckets() - 1,
            ),
            None => (0, 0),
        }
    }

    /// [`probe_start`](Self::probe_start) of a pre-sized shard that holds
    /// no string yet: its table has buckets, but no full one to derive the
    /// address from, so a stand-in slot is inserted and removed (the
    /// table keeps its allocation). Without this, a shard whose table
    /// never grows would never have its probe prefetched.
    pub(crate) fn probe_start_presized(&mut self) -> (usize, usize) {
        // `capacity`, not `num_buckets`: hashbrown's unallocated table
        // counts one bucket, and the stand-in's insertion would allocate.
        if self.table.capacity() == 0 || !self.table.is_empty() {
            return self.probe_start();
        }
        // There is room: nothing is re-hashed.
        self.table
            .insert_unique(0, Slot::EMPTY, |_| unreachable!("room was reserved"));
        let start = self.probe_start();
        self.table.clear();
        start
    }

    /// Grows this shard's hash table to room for `capacity` strings, or
    /// returns `Err` if the allocator refuses (the shard is unchanged).
    ///
    /// The new table is filled from the arena, read front to back
    /// ([`Arena::for_each_record`]: a shard's arena holds exactly the
    /// strings of its table, as every record is pushed by an insertion
    /// that cannot fail once it has pushed), as
    /// [`StringTable`](crate::StringTable) rebuilds its table by walking
    /// its id index, which a shard does not have. hashbrown's own resize
    /// reads the old table bucket by bucket and re-hashes in that order: a
    /// random walk over the arena, a cache miss per string once the shard
    /// outgrows the caches. One thread filling a table with 1M distinct
    /// strings took 148-155 ms instead of 215-286 ms (`benches/README.md`,
    /// session 26). A panic in the user's hasher drops the new table and
    /// leaves the shard as it was.
    #[cold]
    pub(crate) fn grow_table<S: BuildHasher>(
        &mut self,
        hasher: &S,
        capacity: usize,
    ) -> Result<(), ()> {
        let Shard { table, arena } = self;
        // SAFETY: the grown table's slots are made below from the arena's
        // records, by the locations `for_each_record` gives.
        let rehash = |e: &Slot| unsafe { rehash(hasher, arena, e.loc()) };
        let mut grown = HashTable::new();
        grown
            .try_reserve(capacity.max(table.len()), rehash)
            .map_err(|_| ())?;
        arena.for_each_record(|loc, s| {
            // Reserved above: no growth, so `rehash` is never called.
            grown.insert_unique(hash_str(hasher, s), Slot::of(loc, s), rehash);
        });
        debug_assert_eq!(
            grown.len(),
            table.len(),
            "the arena holds the table's strings"
        );
        *table = grown;
        Ok(())
    }

    /// The room for strings of the shard's hash table after its next
    /// growth: twice its buckets, and at least [`FIRST_TABLE_STRINGS`] if
    /// that table's bytes are within `budget`.
    pub(crate) fn grown_capacity(&self, budget: usize) -> usize {
        let doubled = self.table.capacity() + 1;
        match doubled.max(FIRST_TABLE_STRINGS) {
            first if table_bytes_for(first) <= budget => first,
            _ => doubled,
        }
    }

    /// Heap bytes: the arena and the hash table.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.table.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout `probe_start` assumes: every full bucket gives the same
    /// control-byte address, past all the slots. (If hashbrown ever laid
    /// its buckets out otherwise, the prefetch would only be useless; this
    /// test says so.)
    #[test]
    fn every_bucket_gives_one_ctrl_address() {
        let mut shard = Shard::new().unwrap();
        let hasher = hashbrown::DefaultHashBuilder::default();
        assert_eq!(shard.probe_start(), (0, 0), "no buckets yet");
        for i in 0..if cfg!(miri) { 40 } else { 1000 } {
            let s = format!("string-{i}");
            let (hash, _) = hash_of(&hasher, &s);
            let loc = shard.arena.push(&s, i, usize::MAX).unwrap();
            let Shard { arena, table } = &mut shard;
            // SAFETY: every slot holds a location `push` returned.
            table.insert_unique(hash, Slot::of(loc, &s), |e| unsafe {
                crate::table::rehash(&hasher, arena, e.loc())
            });
        }
        let (ctrl, mask) = shard.probe_start();
        assert_eq!(mask + 1, shard.table.num_buckets());
        for i in shard.table.iter_buckets() {
            assert_eq!(ctrl_addr(&shard.table, i), Some(ctrl));
            let slot = core::ptr::from_ref(shard.table.get_bucket(i).unwrap()).addr();
            assert!(slot + size_of::<Slot>() <= ctrl);
        }
    }

    /// The hint cache reads a record through its block's bias, which the
    /// locked insertion's slow path (`SharedStringTable::insert_slow`,
    /// `Arena::push`) publishes; the fast path (`insert_new`'s
    /// `push_in_place_with`) publishes nothing, so a shard's arena must
    /// never give a block its first record in place (a hinted hit would
    /// read through a null bias). Strings of every form, in-place pushes
    /// tried first at every step: short, long, ones that spill into the
    /// next block, ones with dedicated blocks, across chunk growth.
    #[test]
    fn in_place_pushes_never_open_a_block() {
        let lens = [
            1, 10, 254, 255, 256, 1000, 4000, 40_000, 3, 60_000, 5, 70_000, 2, 300_000, 7,
        ];
        let n = if cfg!(miri) { 20 } else { 600 };
        for (strings, bytes) in [(0, 0), (64, 10_000), (0, 200_000)] {
            let mut shard = Shard::with_capacity(strings, bytes).unwrap();
            let arena = &mut shard.arena;
            let block = |loc: crate::arena::Loc| loc >> crate::arena::LOCAL_BITS;
            let mut opened = std::collections::HashSet::new();
            for i in 0..n {
                let s = format!("{i}{}", "x".repeat(lens[i % lens.len()]));
                let id = u32::try_from(i).unwrap();
                if let Some(loc) = arena.push_in_place(&s, id) {
                    assert!(
                        opened.contains(&block(loc)),
                        "string {i} ({} bytes) opened block {} in place ({strings}, {bytes})",
                        s.len(),
                        block(loc)
                    );
                } else {
                    let loc = arena.push(&s, id, usize::MAX).unwrap();
                    opened.insert(block(loc));
                }
            }
        }
    }

    /// Short strings that differ in a few bytes, as label values and
    /// thread names do, spread over the shards as a random split would,
    /// whatever the hasher's seed: the fullest of 4 shards holds at most
    /// 60 of 100 strings (taking the shard from bits 40 and up of
    /// foldhash's hash unmixed put more than 50 there for about one seed
    /// in 150). The mixed bits' tail is heavier than a random split's:
    /// over 400,000 seeds the fullest shard held 46 strings or more 18
    /// times and 48 once, and the bound of 50 this test had until
    /// 2026-12-06 failed once in about 75 runs of its 2,000 seeds.
    #[test]
    fn similar_short_strings_spread_over_the_shards() {
        let seeds = if cfg!(miri) { 5 } else { 2000 };
        let strings: Vec<String> = (0..100).map(|i| format!("l{i:05}")).collect();
        for _ in 0..seeds {
            let hasher = hashbrown::DefaultHashBuilder::default();
            let mut load = [0; 4];
            for s in &strings {
                load[shard_index(hash_of(&hasher, s).1, 3)] += 1;
            }
            assert!(load.iter().all(|&n| n <= 60), "{load:?}");
        }
    }
}
