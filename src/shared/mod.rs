//! [`SharedStringTable`]: one table that many threads intern into at
//! once, with dense ids in insertion order.
//!
//! Files: `index.rs` (the lock-free id index and the id counters: the
//! publish protocol, model-checked with loom), `shard.rs` (one shard's
//! arena and hash table, and the hashing), `lock.rs` (the shard lock,
//! whose common unlock is a plain store), `hints.rs` (the lock-free hint
//! cache of the hit path), `frozen.rs` (what a [`Resolver`] keeps of a
//! consumed table), `sync.rs` (the std/loom atomics switch of the parts
//! loom checks: the index; the hint cache uses std's atomics), `zeroed.rs`
//! (zeroed allocations for the index's segments and the cache's arrays).

mod frozen;
mod hints;
mod index;
mod lock;
mod shard;
mod sync;
mod zeroed;

use core::fmt;
use core::hash::BuildHasher;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hashbrown::DefaultHashBuilder;

use crate::table::{Slot, intern_failed, is_short, rehash, table_growth_bound};
pub(crate) use frozen::Frozen;
use hints::{Hints, bases_bytes, level_bytes};
use index::{Index, segment_bytes};
use lock::{ShardGuard, ShardMutex};
use shard::{ProbeHint, Shard, hash_of, shard_index};

use crate::arena::{self, Arena};
use crate::error::{Error, ErrorKind};
use crate::id::StringId;
use crate::limits::Limits;
use crate::resolver::Resolver;

/// Shards per core of a table built without [`SharedBuilder::shards`]:
/// see [`SharedStringTable::default_shards`].
const SHARDS_PER_CORE: usize = 1;
/// Fewest and most shards of a table built without
/// [`SharedBuilder::shards`]: see [`SharedStringTable::default_shards`]
/// for why no more than 64.
const DEFAULT_SHARDS_RANGE: (usize, usize) = (8, 64);

/// The id a record holds from its push until `insert_new` assigns the
/// real one (ids are assigned only once nothing can fail, so that a
/// failure leaves no hole).
const PENDING_ID: u32 = u32::MAX;

/// Most shards a table can have.
const MAX_SHARDS: usize = 1024;

// A shard, and the id counters, on cache lines of their own, so that two
// threads working on neighbouring shards do not bounce one line between
// their cores.
use index::Padded;

/// The lock around a shard (`lock.rs`): an unlock that is a plain store
/// unless the holder allocated. Neither it nor the growth lock (a
/// `parking_lot` mutex) has poisoning: a panic while one is held (only a
/// user `BuildHasher` can panic there) leaves the shard consistent,
/// because every change is made by one call that either completes or
/// changes nothing (hashbrown's `try_reserve` and `insert_unique`,
/// `Arena::push`). `std::sync::Mutex`'s lock and unlock each check the
/// panic count for poisoning (callgrind, one thread of the concurrent
/// stream, of which 29% of interns locked: 200 -> 196 instructions per
/// intern with `parking_lot`'s locks).
type ShardLock = ShardMutex<Shard>;

/// A shard's lock and, on a cache line of its own after it, its
/// [`ProbeHint`] (in what was the padding of the shard's cache-line pairs:
/// no extra memory).
#[repr(C)]
struct ShardCell {
    lock: ShardLock,
    probe: ProbeHint,
}

// The probe hint took padding that the shard's cache-line pairs had.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(
    size_of::<Padded<ShardCell>>() == size_of::<Padded<ShardLock>>()
        && size_of::<Padded<ShardCell>>() == 256
);

/// The string of published id `i` (not 0), read without any lock.
#[inline]
fn resolve(index: &Index, i: usize) -> Option<&str> {
    if i == 0 {
        return Some("");
    }
    let p = index.get(i)?;
    // SAFETY: every address published in an index is `record_addr` of a
    // location that `Arena::push` returned (not location 0), or the same
    // address as `push_in_place_with` hands it back, in one of the
    // arenas owned alongside the index (by the same `SharedStringTable`,
    // then the same `Frozen`), which are never cleared and outlive every
    // borrow of the index; the `Acquire` load in `Index::get` saw the
    // `Release` store made after the record was written.
    Some(unsafe { Arena::record_str(p) })
}

/// The id of `s` if `found`, what the hint cache gave for it
/// ([`Hints::get`] or [`Hints::get_in_line`]: a block's bias and a
/// location), names its record; `None` if not (or if `found` is `None`).
#[inline(always)]
fn confirm(found: Option<(*const u8, arena::Loc)>, s: &str) -> Option<StringId> {
    let (bias, loc) = found?;
    // SAFETY: the hint cache gives only the locations of records
    // `Arena::push` wrote in the arena of the string's shard, with the
    // `block_bias` of their block that `publish_block` stored before the
    // hint; arenas live as long as the table, and records never change
    // once published. The `Acquire` load in `Hints::get` (or
    // `get_in_line`) saw the `Release` store of a hint made after the
    // record was written and its block's bias stored.
    unsafe { Arena::id_if_biased(bias, loc, s.as_bytes()) }.map(StringId::from_u32)
}

/// A string table that many threads intern into at once: every string is
/// stored once and gets one dense [`StringId`], in insertion order, with
/// [`StringId::EMPTY`] (`""`) at 0, whichever threads intern it.
///
/// Once the interning threads are done (joined, or the table consumed),
/// the ids in use are exactly `0..len()`, so
/// [`into_resolver`](Self::into_resolver) turns the table into the same
/// [`Resolver`] a [`StringTable`](crate::StringTable) gives, ready for
/// [`pprof::write_string_table`](crate::pprof::write_string_table).
///
/// # Design
///
/// - **Shards.** A string's hash selects one of a power of two of shards
///   ([`default_shards`](Self::default_shards): one per core, at least 8, or
///   [`SharedBuilder::shards`]); each is a mutex around a bumpalo arena
///   and a hashbrown table of slots (the record's arena location and a
///   copy of its length byte, as in `StringTable`; the id is in the
///   record). Inserting locks only that shard, so threads
///   inserting different strings rarely wait for each other. The lock's
///   unlock is a plain store, not a read-modify-write, which on x86 would
///   wait for the insertion's stores to reach the cache; so a waiter
///   spins and yields, and sleeps only while the holder allocates, which
///   it announces first (`src/shared/lock.rs`).
/// - **A lock-free hit path.** A lock, even one no other thread holds, is a
///   write to its cache line, and with several threads interning the same
///   hot strings that line moves between cores on most hits, whatever the
///   shard count. So a hit first reads a hint: a four-way set-associative
///   cache from the hash to the string's record (a tagged 4-byte location
///   in the shard's arena, added to the base of its block, which each
///   shard publishes for its first 256 blocks; growing with the table to
///   128Ki entries, each level left once the table holds half as many
///   strings as it has entries, so that few sets are full); the record
///   holds the bytes, compared with the string, and the id, so a hit
///   reads the hint, the block base (in L1) and the record, like a
///   `StringTable` hit reads a hash slot and the record. A string whose
///   set is full is hinted in another set of the same cache line, which
///   the lookup reads before it takes the lock. A hint that is
///   missing or stale only sends the lookup on to the shard's hash
///   table, which stays the authority;
///   `intern`'s lookups there refresh the hints (`get`'s do not: it
///   writes nothing). Only a shard's first 256 blocks
///   (about 14 MiB of strings per shard, its first chunks being smaller
///   than a block) fit a hint entry: in a larger
///   table, the strings added after those are always found through their
///   shard's lock (a profile's hot strings are
///   usually among its first). A hit on a hinted string takes no
///   lock and writes nothing. The hinted hit is
///   inlined into the caller; the locked path, and every step for a
///   string of 255 bytes or more, are out of line.
/// - **A lock-free id index.** Ids come from one global counter, and the
///   id-to-record index is a list of segments of doubling size, allocated
///   on demand and never moved, whose entries hold the address of each
///   string's record (its id, its length, then its bytes). A writer
///   stores an entry with `Release` before it returns the id, so before
///   any thread can be handed it, and [`resolve`](Self::resolve) reads it
///   with `Acquire`: it takes no lock and never waits for a writer. (A
///   thread that guesses an id from [`len`](Self::len) may find it not
///   yet published: `resolve` is then `None`.)
/// - **No hole on failure.** An insertion first *reserves* an id (a
///   compare-and-swap that succeeds only while the string limit allows and
///   the id's index segment exists), then does everything that can fail,
///   and only then takes the next id; a failure gives the reservation
///   back. So ids stay dense whatever fails. Most insertions have nothing
///   that can fail (room in the shard's hash table and in its arena's
///   current block): they reserve and take the id in one
///   compare-and-swap and write the record with it. The protocol, both
///   ways, is model-checked with loom (`src/shared/index.rs`,
///   `.ci/loom.sh`).
/// - **Global limits.** Every allocation the table makes (arena chunks,
///   hash-table growth, index segments, hint levels) is decided under one
///   growth lock against the table-wide byte count, so [`Limits`] hold
///   across shards. Growth is rare (chunks and tables double), so the lock
///   is seldom taken; a push that fits its shard's current block never
///   takes it. [`SharedBuilder::capacity`] pre-sizes the shards, the id
///   index and the hint cache, so a table built at its last period's
///   size seldom grows at all (growth holds the shard's lock while it
///   re-hashes the shard's strings, reading its arena front to back
///   rather than in the old table's bucket order: one thread filling 1M
///   distinct strings took 1.02x-1.27x `StringTable`'s time instead of
///   1.57x-2.01x).
/// - **One cache line per locked lookup.** A shard's lock word, its hash
///   table's header and its arena's block bases share the shard's first
///   cache line (`#[repr(C)]`, asserted at compile time), so a lookup
///   under the lock moves one line between cores, not three. Insertions
///   still move more (the id counter, the index entry, the arena's tail):
///   with two threads on the benchmark's stream, whose 10% new strings
///   each thread mostly inserts itself, they took about a fifth of each
///   thread's time in a scratch comparison with a table filled
///   beforehand, against 5% on one thread (`benches/README.md`).
/// - **The probe fetched during the lock.** A locked call first prefetches
///   the hash-table control bytes its lookup will read, from a copy of
///   the table's address and size that each shard keeps on a line of its
///   own (updated when the table grows); the lock's compare-and-swap,
///   which waits for the lock word's line, no longer runs before that
///   miss but beside it (two threads on generated streams: 1.36x-1.38x ->
///   1.45x-1.48x).
///
/// # Signal handlers and thread priorities
///
/// Do not call [`intern`](Self::intern) or [`get`](Self::get) from a
/// signal handler (a `SIGPROF` sampler's, say): an insertion may allocate,
/// and a lookup the hint cache cannot answer waits for its shard's lock,
/// which the interrupted thread may hold, forever. Record raw frames in
/// the handler and intern them from an ordinary thread;
/// [`resolve`](Self::resolve) takes no lock and allocates nothing. While a
/// holder only inserts, waiters spin and yield rather than sleep (see
/// *Shards* above), so a real-time (`SCHED_FIFO`) thread waiting for a
/// lower-priority holder preempted on its core keeps it from running:
/// intern from threads of ordinary priority.
///
/// # Measured
///
/// On the concurrent benchmark (`benches/concurrent.rs`), on a 2-vCPU AMD
/// EPYC VM (2026-12-05, workers pinned, 15 interleaved rounds, each ratio
/// the median of the rounds' own), against one thread doing all the
/// interns with `StringTable`. Two placements of the two vCPUs, which the
/// host changed from one minute to the next and the benchmark reports
/// (the time a cache line takes between the workers' CPUs and back). The
/// figures span the 48 runs of batches FC and FD (`benches/README.md`,
/// "Session 31 runs"): the one-thread column all of them, each two-thread
/// column the runs with the cores so placed (`README.md` quotes batch FC
/// alone, so its ranges are narrower):
///
/// | workload | this type, 1 thread: time | 2 threads, cores sharing a cache | 2 threads, cores far apart | a `StringTable` per thread, merged at export, 2 threads |
/// |---|---:|---:|---:|---:|
/// | generated streams: each thread 1M skewed interns over the same 100k strings, one in ten a new string | 0.96x-1.22x | 1.63x-2.01x | 0.90x-1.10x | 1.46x-2.10x |
/// | the same over 62,657 real symbol names (`STRTAB_STRINGS`) | 0.93x-1.16x | 1.99x-2.12x | 1.13x-1.35x | 1.71x-2.03x |
/// | a real profile build's intern calls (`STRTAB_SOURCE=replay-sim`: 2.3M calls over 3,941 strings, dealt out to the threads by sample) | 1.06x-1.11x | 1.76x-1.84x | 1.56x-1.62x | 1.69x-2.06x |
/// | a Go program's CPU profile (`STRTAB_SOURCE=replay-go`: 477k calls over 840 strings) | 1.09x-1.16x | 1.64x-1.72x | 1.45x-1.50x | 1.78x-1.98x |
///
/// Lasso's `ThreadedRodeo` ran 2.1x-7.1x slower than this type's two
/// threads with the cores near, 2.7x-10.9x far. On a 2-vCPU Intel Xeon VM
/// (the same day, the same code, a round trip of 112-230 ns, against a
/// baseline corrected that day: it had made its table on the main
/// thread, which slowed it on small tables) one thread took 1.12x-1.25x
/// `StringTable`'s time on the four workloads (1.23x-1.25x on the
/// generated streams), and two threads ran at 1.42x-1.58x one
/// `StringTable` thread's throughput (per-thread tables 1.78x-1.92x,
/// lasso 2.5x-11.6x slower than this type). On a 2-vCPU AMD EPYC VM of
/// another model (CPU family 25, the same day, the corrected baseline,
/// nine runs per workload) one thread took 1.09x-1.38x `StringTable`'s
/// time on the generated streams and 1.09x-1.21x on the other three
/// workloads, two threads ran at 1.09x-2.10x, and all three timing
/// targets held together in 22 of the 36 runs.
/// `benches/README.md` has every run since the first version, and every
/// lever tried with its measured effect.
///
/// With the cores far apart (a round trip of 300-380 ns against about
/// 45 ns), an insertion pays about three cache-line transfers: the global
/// id counter, the id index's line for the previous ids, and, when the
/// other thread's last insertion was into the same shard, the shard's
/// lock line and its current block. Where one intern in ten inserts,
/// two threads then run no faster than one `StringTable` thread; per-
/// thread tables, which share nothing until the merge, do not mind. One
/// thread runs 1.19x `StringTable`'s instructions per intern on the
/// generated streams (callgrind, `benches/profile.rs thread-stream`:
/// 181 against 153, lasso `ThreadedRodeo` 256; session 53): the
/// insertions' locked path runs about 270 instructions of its own
/// (`fill-hint`) against 116 for `StringTable`'s insertion (its hash
/// table lookup, which `StringTable` makes inline, the shard lock, the
/// id's reservation and publication, the hint put; the hint line's
/// lookup, 4 per intern, spares 13.5k locked hits of the 1M interns),
/// and the hits about 4 more (the shard's block bias). On that VM the
/// time mostly follows the instructions; beyond them, on a fresh stream,
/// an insertion misses the caches twice in a row (the hint set, whose
/// miss sends it to the lock, then the shard's control bytes, which no
/// hit reads), and callgrind's cache simulation counts 10-11% more L2
/// misses than `StringTable`'s on the generated and the symbol names'
/// streams, none more on the hits alone (session 54). The two atomic
/// read-modify-writes of an insertion (the shard lock and the id
/// counter) cost a few percent
/// on one thread: it ran 1-4% faster with them replaced by plain
/// stores, which is only correct on one thread (about 14 ns an
/// insertion on the Intel VM in session 51, 6 ns of `fill-hint`'s 50 in
/// session 53). Sampled by time on that VM (`perf` with call chains,
/// session 55), the locked path is the one-thread gap (the shards'
/// growth adds about 2% of `StringTable`'s time): the
/// lookups and their compares took 5% less time than `StringTable`'s on
/// the generated stream (a hit reads the hint set and the record, where
/// `StringTable`'s reads the control bytes, the slot and the record) and
/// as much on the symbol names, while each locked call (117k per 1M
/// interns, 100k of them insertions) took about 67 ns against about 10
/// for `StringTable`'s out-of-line insertion: a fifth of it the control
/// bytes' miss under the lock, a fifth the two read-modify-writes, the
/// rest the slot's miss, the record of a string found in the hint line
/// (a hit's own miss) and the call's 250 or so instructions.
///
/// Memory per string with two threads (`examples/shared_memory.rs`, 100k
/// strings, six runs of 2026-12-05 on the Intel VM): `StringTable` 21.5
/// bytes beyond the strings' own, this type 32.2-32.8 at 8 shards (the
/// default on 2 cores), 33.3-33.6 at 16, 36.2-37.0 at 64, 43.7-44.4 at 256
/// (which thread inserts
/// which string, so which shard chunks end part full, changes from run to
/// run). Every shard's arena grows its chunks on its own, and a
/// table's shards fill evenly, so the unused tails of their last chunks
/// add up; shard arenas start with a page and grow their chunks only as
/// a sixteenth of what they hold. That, more than lock contention, is
/// what limits the shard count.
///
/// # Memory
///
/// Per string, as `StringTable`'s, plus 3 bytes in the index (an 8-byte
/// address instead of a 5-byte location and length, and up to half of
/// the newest index segment unused), the hint cache (at most 680 KiB in
/// all, reached at 16Ki strings: 8 KiB from the first string, 40 KiB from
/// 1Ki, 168 KiB from 4Ki, with up to 128 shards, and a 64-byte header per
/// level; a level has at least a cache line of sets per shard, so with 129
/// to 512 shards the first level is skipped: 32 KiB from the first
/// string, at most 672 KiB; with 513 to 1,024 the first two: 128 KiB from
/// the first string, at most 640 KiB; and 2,112 bytes per shard for the
/// block biases), and
/// the unused tails of each shard's arena chunks. Until its first string a
/// shard holds only its lock with the shard's bookkeeping (256 bytes), its
/// arena's bookkeeping (80 bytes) and its block biases (2,112 bytes):
/// 2,448 bytes; then it has its own arena chunk (4 KiB at first) and hash
/// table too. [`memory_usage`](Self::memory_usage) counts all of it. Not part
/// of any table: the process-wide parking table that `parking_lot` (the
/// growth lock, and the shard locks' sleepers) allocates the first time a
/// thread sleeps on a contended lock, about 1 KiB for a few threads, kept
/// until the process exits.
///
/// # From one profile to the next
///
/// A shared table has no `clear`, `iter` or `merge` of its own: while
/// threads intern, ids may be taken but not yet published, so there is no
/// moment at which `&self` could see a finished table. The table is
/// finished when it is consumed: [`into_resolver`](Self::into_resolver)
/// gives the [`Resolver`], which iterates in id order, resolves,
/// [`compact`s](Resolver::compact) to the ids a profile references, and
/// is a [`MergeSource`](crate::MergeSource) for [`StringTable::merge`]. A
/// continuous profiler swaps in a
/// fresh table at each export, pre-sized from the last one, and freezes
/// the old one once no sampler holds it:
///
/// ```
/// use std::sync::{Arc, RwLock};
/// use strtab::SharedStringTable;
///
/// let current = RwLock::new(Arc::new(SharedStringTable::new()));
///
/// // A sampler: the samples it records keep the table their ids are from.
/// let table = Arc::clone(&current.read().unwrap());
/// let main = table.intern("main");
/// drop(table);
///
/// // The exporter: the next table is pre-sized from the period before
/// // (its strings besides "" and their bytes, kept from the last export;
/// // none yet).
/// let mut last = (0, 0);
/// let next = Arc::new(SharedStringTable::with_capacity(last.0, last.1));
/// let old = std::mem::replace(&mut *current.write().unwrap(), next);
/// let resolver = Arc::into_inner(old).expect("no sampler holds it").into_resolver();
/// assert_eq!(resolver.resolve(main), Some("main"));
/// last = (resolver.len() - 1, resolver.iter().map(str::len).sum());
/// assert_eq!(last, (1, 4));
/// ```
///
/// [`StringTable::merge`]: crate::StringTable::merge
///
/// # Examples
///
/// ```
/// use std::thread;
/// use strtab::{SharedStringTable, StringId};
///
/// let table = SharedStringTable::new();
/// let ids: Vec<StringId> = thread::scope(|scope| {
///     let workers: Vec<_> = (0..4)
///         .map(|t| {
///             let table = &table;
///             scope.spawn(move || table.intern(if t % 2 == 0 { "main" } else { "poll" }))
///         })
///         .collect();
///     workers.into_iter().map(|w| w.join().unwrap()).collect()
/// });
/// assert_eq!(ids[0], ids[2]);
/// assert_eq!(table.len(), 3); // "", "main", "poll"
///
/// let resolver = table.into_resolver();
/// let strings: Vec<&str> = resolver.iter().collect();
/// assert_eq!(strings[0], "");
/// assert_eq!(strings[ids[1].index()], "poll");
/// ```
pub struct SharedStringTable<S = DefaultHashBuilder> {
    shards: Box<[Padded<ShardCell>]>,
    /// `shards.len() - 1`.
    shard_mask: usize,
    index: Index,
    /// The lock-free hit path: hash -> record hints, checked against the
    /// record's bytes.
    hints: Hints,
    /// Heap bytes held, [`memory_usage`](Self::memory_usage); changed only
    /// under `grow`.
    memory: AtomicUsize,
    /// Serialises every allocation against the byte limit.
    grow: Mutex<()>,
    hasher: S,
    limits: Limits,
}

// Many profiler threads share one table, and hand it on when done.
const _: () = {
    const fn assert_send<T: Send>() {}
    const fn assert_sync<T: Sync>() {}
    assert_send::<SharedStringTable>();
    assert_sync::<SharedStringTable>();
};

// Unwind safety (`catch_unwind` around a thread's interning): the shard
// and growth locks, like `std::sync::Mutex`, leave a consistent table when
// a holder unwinds (see `ShardLock`: every change under them is one call
// that completes or changes nothing, and the only caller code they run is
// the hasher; tested by the `hasher_panic_*` tests below), and they have
// no poisoning to report it, since there is nothing to report. The
// atomics are unwind-safe; the arenas are (`src/arena.rs`).
impl<S: core::panic::RefUnwindSafe> core::panic::RefUnwindSafe for SharedStringTable<S> {}
impl<S: core::panic::UnwindSafe> core::panic::UnwindSafe for SharedStringTable<S> {}

/// Configures a [`SharedStringTable`]: [`Limits`], the hasher and the
/// shard count.
///
/// # Examples
///
/// ```
/// use strtab::{Limits, SharedStringTable};
///
/// let table = SharedStringTable::builder()
///     .limits(Limits::new().max_bytes(16 << 20))
///     .shards(8)
///     .build();
/// assert_eq!(table.shards(), 8);
/// ```
#[derive(Clone)]
#[must_use]
pub struct SharedBuilder<S = DefaultHashBuilder> {
    capacity: Option<(usize, usize)>,
    limits: Limits,
    shards: usize,
    hasher: S,
}

impl<S> fmt::Debug for SharedBuilder<S> {
    /// The capacity hint, the limits, the shards and the hasher's type,
    /// not the hasher itself (see `Builder`'s `Debug`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBuilder")
            .field("capacity", &self.capacity)
            .field("limits", &self.limits)
            .field("shards", &self.shards)
            .field("hasher", &core::any::type_name::<S>())
            .finish()
    }
}

impl SharedBuilder {
    fn new() -> SharedBuilder {
        SharedBuilder {
            capacity: None,
            limits: Limits::new(),
            shards: SharedStringTable::default_shards(),
            hasher: DefaultHashBuilder::default(),
        }
    }
}

impl<S: BuildHasher> SharedBuilder<S> {
    /// Pre-sizes the table for `strings` strings totalling `bytes` bytes
    /// (besides `""`, which every table holds): the id index, the hint
    /// cache's level for that many strings, and each
    /// shard's hash table and first arena chunk, sized for its share of a
    /// random split (the even share, rounded up, plus three standard
    /// deviations, and at most twice that share, so the whole is at most
    /// twice the hint rounded up to a multiple of the shard count: 9
    /// strings over 8 shards plan room for 32), so that filling the table
    /// to that size seldom allocates once each shard's share is a few
    /// dozen strings (a shard that draws
    /// more than its margin grows as usual: at 8 shards, in 200 builds
    /// with random hashers, a hint of 10 strings of 4 KiB grew in 153, of
    /// 32 in 26 and of 100 in 1; of 10 strings of 254 bytes in 44, of 32
    /// in none; strings of 65,508 bytes or more get chunks of their own,
    /// as in
    /// [`Builder::capacity`](crate::Builder::capacity)). A hint of some
    /// strings, but fewer than shards, pre-sizes the index and the hint
    /// level only:
    /// each shard a string reaches allocates with it, as without a hint
    /// (an even share of less than one string per shard leaves no margin
    /// to plan).
    /// Growth takes the shard's lock for the time of a re-hash or an
    /// allocation, so a profiler that knows its previous period's table
    /// size saves its threads those waits as well as the work.
    ///
    /// A hint beyond [`Limits::max_strings`] is cut to it, the bytes in
    /// proportion; if the pre-sized footprint would exceed the byte limit,
    /// the table starts without it and grows on demand. An empty hint
    /// (`capacity(0, 0)`, or any hint under a limit of one string)
    /// pre-sizes nothing: the table is [`new`](SharedStringTable::new)'s.
    /// A hint of
    /// `u32::MAX` strings or more, which no table can number, is an error
    /// ([`ErrorKind::IdsExhausted`] from
    /// [`try_build`](Self::try_build), a panic from [`build`](Self::build)).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::builder()
    ///     .shards(4)
    ///     .capacity(1000, 16 << 10)
    ///     .build();
    /// let before = table.memory_usage();
    /// for i in 0..100 {
    ///     table.intern(&format!("frame-{i}"));
    /// }
    /// assert_eq!(table.memory_usage(), before);
    /// ```
    pub fn capacity(mut self, strings: usize, bytes: usize) -> SharedBuilder<S> {
        self.capacity = Some((strings, bytes));
        self
    }

    /// Sets the table's [`Limits`], which hold across all shards. A byte
    /// limit below the empty table's footprint (about 2.4 KB per shard) is
    /// raised to it, and the first string needs about 5 KB more (see
    /// [`Limits::max_bytes`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::builder()
    ///     .limits(strtab::Limits::new().max_strings(10))
    ///     .build();
    /// assert_eq!(table.limits().get_max_strings(), 10);
    /// ```
    pub fn limits(mut self, limits: Limits) -> SharedBuilder<S> {
        self.limits = limits;
        self
    }

    /// Sets the number of shards, rounded up to a power of two between 1
    /// and 1024. More shards make two threads less likely to want the same
    /// lock at once; each shard costs 2,448 bytes (its lock with its
    /// bookkeeping, its arena's bookkeeping and the hint cache's block
    /// biases), and each shard that holds a string an arena chunk and a
    /// hash table too.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::builder().shards(3).build();
    /// assert_eq!(table.shards(), 4);
    /// ```
    pub fn shards(mut self, shards: usize) -> SharedBuilder<S> {
        self.shards = shards.clamp(1, MAX_SHARDS).next_power_of_two();
        self
    }

    /// Uses `hasher` instead of the default (hashbrown's randomly seeded
    /// foldhash). A fixed-seed hasher makes runs reproducible but lets
    /// crafted input collide; keep a seeded one for untrusted strings.
    ///
    /// The hasher must hash a string the same way for the table's whole
    /// life; one that does not (reseeded per call, or with state that
    /// changes) cannot corrupt memory, but a string may then get two ids
    /// or be missed by `get`. It is called while a shard's lock is held
    /// (when the shard's hash table grows), so it must not use the table
    /// itself: that waits forever. A panic in it leaves the table
    /// consistent and usable, and every id dense: the string being
    /// interned is either not added (a panic while its shard grows) or
    /// added with the next id (a panic while the hint cache grows, after
    /// the insertion).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    ///
    /// let table = strtab::SharedStringTable::builder()
    ///     .hasher(BuildHasherDefault::<DefaultHasher>::default())
    ///     .build();
    /// assert_eq!(table.intern("x").to_u32(), 1);
    /// ```
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> SharedBuilder<T> {
        SharedBuilder {
            capacity: self.capacity,
            limits: self.limits,
            shards: self.shards,
            hasher,
        }
    }

    /// Builds the table.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail, the capacity hint names
    /// `u32::MAX` strings or more, or its bytes are more than the shard
    /// arenas can hold (about 2 GiB each);
    /// [`SharedBuilder::try_build`] returns the error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::builder().build();
    /// assert_eq!(table.len(), 1);
    /// ```
    #[track_caller]
    pub fn build(self) -> SharedStringTable<S> {
        match self.try_build() {
            Ok(table) => table,
            Err(e) => panic!("{e}"),
        }
    }

    /// Builds the table, returning an error if the initial allocations
    /// fail. Without a [`capacity`](Self::capacity) hint, the shards'
    /// arenas and hash tables allocate nothing until their first string.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AllocFailed`] if the allocator refuses the shard list,
    /// the hint cache's block biases, or an allocation the capacity hint
    /// asks for; [`ErrorKind::CapacityOverflow`] for a byte hint beyond a
    /// shard arena's address space (its share of the hint, with the
    /// margin; not checked for a hint of fewer strings than shards, which
    /// pre-sizes no shard); [`ErrorKind::IdsExhausted`] for a hint of
    /// `u32::MAX` strings or more.
    /// Each shard's fixed bookkeeping (under 100 bytes, as for
    /// `StringTable`) is allocated infallibly and aborts if even that
    /// fails.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::builder().try_build()?;
    /// assert_eq!(table.len(), 1);
    /// # Ok::<(), strtab::Error>(())
    /// ```
    pub fn try_build(self) -> Result<SharedStringTable<S>, Error> {
        let n = self.shards;
        let max = self.limits.get_max_bytes();
        let hints = Hints::new(n)?;
        // What the capacity hint allocates, if the whole fits the limit.
        let presize = match self.capacity {
            Some((strings, bytes)) => {
                let (strings, bytes) = self.limits.clamp_hint(strings, bytes)?;
                Presize::new(strings, bytes, &hints).filter(|plan| plan.bytes() <= max)
            }
            None => None,
        };
        let mut shards = Vec::new();
        shards
            .try_reserve_exact(n)
            .map_err(|_| Error::new(ErrorKind::AllocFailed, n * size_of::<Padded<ShardCell>>()))?;
        for _ in 0..n {
            let probe = ProbeHint::default();
            let shard = match &presize {
                Some(plan) => {
                    let mut shard = Shard::with_capacity(plan.shard_strings, plan.shard_bytes)
                        .map_err(|e| e.naming_hint(self.capacity, n))?;
                    probe.store(shard.probe_start_presized());
                    shard
                }
                None => Shard::new()?,
            };
            shards.push(Padded(ShardCell {
                lock: ShardMutex::new(shard),
                probe,
            }));
        }
        let shards = shards.into_boxed_slice();
        let index = Index::new();
        let mut memory = shards.len() * size_of::<Padded<ShardCell>>()
            + bases_bytes(n)
            + shards
                .iter()
                .map(|s| s.0.lock.lock().heap_bytes())
                .sum::<usize>();
        if let Some(plan) = &presize {
            for k in 0..plan.segments {
                index.install(k)?;
                memory += segment_bytes(k);
            }
            // The first level: no hints to carry over.
            hints.install(plan.level)?;
            memory += level_bytes(plan.level);
        }
        if presize.is_some() && memory > max {
            // The plan's estimate was short (allocations round up): start
            // without it, as when it does not fit.
            drop((shards, index, hints));
            let plain = SharedBuilder {
                capacity: None,
                ..self
            };
            return plain.try_build();
        }
        // As for `StringTable`: a byte limit below the empty table's
        // footprint is raised to it.
        let limits = self.limits.max_bytes(max.max(memory));
        Ok(SharedStringTable {
            shards,
            shard_mask: n - 1,
            index,
            hints,
            memory: AtomicUsize::new(memory),
            grow: Mutex::new(()),
            hasher: self.hasher,
            limits,
        })
    }
}

/// What [`SharedBuilder::capacity`] allocates up front.
struct Presize {
    /// Index segments covering ids `0..strings`.
    segments: usize,
    /// Hash-table room per shard.
    shard_strings: usize,
    /// First arena chunk per shard.
    shard_bytes: usize,
    /// The hint level for `strings`.
    level: usize,
    /// Shards.
    shards: usize,
}

impl Presize {
    /// The plan for `strings` strings of `bytes` bytes in all over the
    /// shards of a table whose (empty) hint cache is `hints`. A shard's
    /// share of a random split of `m` strings has a standard deviation of
    /// about `sqrt(m / shards)`; with three of them on top of the even
    /// share, a shard draws more than its room with probability about
    /// 0.13%, and then only that shard grows. Bytes get the same relative
    /// margin. The margin is at most the even share itself (rounded up),
    /// so the plan never reserves more than twice the hint rounded up to a
    /// multiple of the shard count: with fewer strings than
    /// shards (an even share of one), three deviations and four strings
    /// would have given every shard room for eight, and a hint of a few
    /// huge strings eight times its bytes in every shard.
    ///
    /// `None` for an empty hint: there is nothing to make room for, and
    /// the first index segment and hint level would be allocated for
    /// nothing (31.8 KB against 19.1 KB for a table without a hint, at 8
    /// shards).
    fn new(strings: usize, bytes: usize, hints: &Hints) -> Option<Presize> {
        if (strings, bytes) == (0, 0) {
            return None;
        }
        let shards = hints.shards();
        let even = strings.div_ceil(shards);
        let margin = (3 * even.isqrt() + 4).min(even);
        let even_bytes = bytes.div_ceil(shards);
        // The same margin relative to the share.
        let share = match even_bytes.checked_div(even) {
            Some(per_string) => even_bytes.saturating_add(per_string.saturating_mul(margin)),
            None => even_bytes,
        };
        // With fewer strings than shards, an even share of one would give
        // every shard room for two strings and a first chunk: 1,024
        // shards took 655 KB for a hint of 5 strings, where the shards
        // the strings reach allocate 58 KB unhinted. Those shards
        // allocate with their first string instead, as without a hint.
        // (A hint of bytes alone still sizes every shard's first chunk,
        // as `StringTable`'s sizes its arena.)
        let (shard_strings, shard_bytes) = if 0 < strings && strings < shards {
            (0, 0)
        } else {
            let shard_strings = even.saturating_add(margin);
            (
                shard_strings,
                crate::table::arena_bytes_for(shard_strings, share),
            )
        };
        let all = strings.saturating_add(1);
        Some(Presize {
            segments: index::segments_for(all),
            shard_strings,
            shard_bytes,
            // A new cache is on no level yet, so it wants one.
            level: hints.wants_level(all).unwrap_or(0),
            shards,
        })
    }

    /// Heap bytes the plan adds, about (the arena's and hash tables'
    /// rounding aside).
    fn bytes(&self) -> usize {
        let per_shard = self
            .shard_bytes
            .saturating_add(crate::table::table_bytes_for(self.shard_strings));
        let index = (0..self.segments)
            .map(segment_bytes)
            .fold(0, usize::saturating_add);
        per_shard
            .saturating_mul(self.shards)
            .saturating_add(index)
            .saturating_add(level_bytes(self.level))
    }
}

impl SharedStringTable {
    /// An empty table (holding only `""`) with
    /// [`default_shards`](Self::default_shards) shards
    /// and the default, randomly seeded hasher.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see
    /// [`SharedBuilder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// assert_eq!(table.len(), 1);
    /// assert_eq!(table.resolve(strtab::StringId::EMPTY), Some(""));
    /// ```
    #[must_use]
    #[track_caller]
    pub fn new() -> SharedStringTable {
        SharedBuilder::new().build()
    }

    /// An empty table pre-sized for `strings` strings totalling `bytes`
    /// bytes (see [`SharedBuilder::capacity`]), with
    /// [`default_shards`](SharedStringTable::default_shards) shards.
    ///
    /// # Panics
    ///
    /// Panics if the allocations fail, `strings` is `u32::MAX` or more, or
    /// `bytes` is more than the shard arenas can hold, about 2 GiB each
    /// (see [`SharedBuilder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::with_capacity(1000, 32 << 10);
    /// let before = table.memory_usage();
    /// table.intern("main");
    /// assert_eq!(table.memory_usage(), before);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_capacity(strings: usize, bytes: usize) -> SharedStringTable {
        SharedBuilder::new().capacity(strings, bytes).build()
    }

    /// An empty table that never grows past `limits`, counted across all
    /// shards.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see
    /// [`SharedBuilder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{Limits, SharedStringTable};
    ///
    /// let table = SharedStringTable::with_limits(Limits::new().max_bytes(256 << 10));
    /// while table.try_intern(&format!("label-{}", table.len())).is_ok() {}
    /// assert!(table.memory_usage() <= 256 << 10);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_limits(limits: Limits) -> SharedStringTable {
        SharedBuilder::new().limits(limits).build()
    }

    /// The shard count of a table built without [`SharedBuilder::shards`]:
    /// one per core ([`std::thread::available_parallelism`]) rounded up
    /// to a power of two, between 8 and 64 (8 up to 8 cores, 16 from 16,
    /// 64 from 64).
    ///
    /// Shards cost every thread, the one-thread case included: a table's
    /// strings, hot ones among them, spread over one arena per shard
    /// (more pages and cache lines for the same strings), each shard's
    /// arena and hash table grow on their own, and many small shards
    /// leave more unused chunk tails. One thread interning into a fresh
    /// table (the Go and WordPress profiles' intern calls, the simulated
    /// profile's, the concurrent benchmark's stream), as a multiple of
    /// `StringTable`'s time: 1.09-1.22x at 8 shards, 1.10-1.21x at 16,
    /// 1.14-1.22x at 32, 1.17-1.26x at 64 (`benches/README.md`, session
    /// 41). With two threads and 100k strings the bytes per string beyond
    /// a `StringTable`'s were +10.7-11.4 at 8 shards, +14.8-15.5 at 64 and
    /// +22.3-22.9 at 256 (`examples/shared_memory.rs`, six runs of
    /// 2026-12-05). What more shards buy is fewer waits for a shard's
    /// lock, which only insertions and the hint cache's misses take (hits
    /// take none): with as many shards as threads, the other threads hold
    /// a given shard's lock about as often as one thread is under a lock
    /// at all (about a tenth of its time on the concurrent benchmark's
    /// stream, 10% of whose interns are new to the thread; under 1% on a
    /// real profile's replayed calls), and two threads on two
    /// shards ran the benchmark's stream as fast as on eight (1.69x,
    /// 1.69x, 1.83x `StringTable`'s throughput against 1.54x, 1.58x,
    /// 1.66x, alternated runs), on one shard slower (1.44x-1.65x). Until
    /// 2026-12-06 the default was four per core (64 from 16 cores). The
    /// default stops at 64: every insertion also takes its id from one
    /// counter, shared by the whole table, so more shards would not let
    /// many more threads insert at once. A table that many threads fill
    /// with mostly new strings can ask for more with
    /// [`SharedBuilder::shards`].
    ///
    /// # Examples
    ///
    /// ```
    /// let n = strtab::SharedStringTable::default_shards();
    /// assert!(n.is_power_of_two() && (8..=64).contains(&n));
    /// ```
    #[must_use]
    pub fn default_shards() -> usize {
        static SHARDS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *SHARDS.get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            let (min, max) = DEFAULT_SHARDS_RANGE;
            (cores * SHARDS_PER_CORE)
                .next_power_of_two()
                .clamp(min, max)
        })
    }

    /// A [`SharedBuilder`] to set limits, the hasher and the shard count.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::builder().shards(16).build();
    /// assert_eq!(table.shards(), 16);
    /// ```
    pub fn builder() -> SharedBuilder {
        SharedBuilder::new()
    }
}

impl<S: BuildHasher> SharedStringTable<S> {
    /// An empty table with hasher `hasher` and
    /// [`default_shards`](SharedStringTable::default_shards) shards.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see
    /// [`SharedBuilder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    ///
    /// let table = strtab::SharedStringTable::with_hasher(BuildHasherDefault::<DefaultHasher>::default());
    /// assert_eq!(table.intern("a").to_u32(), 1);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_hasher(hasher: S) -> SharedStringTable<S> {
        SharedBuilder::new().hasher(hasher).build()
    }
}

impl<S: BuildHasher + Default> SharedStringTable<S> {
    /// An empty table with hasher `S::default()` and
    /// [`default_shards`](SharedStringTable::default_shards) shards, as
    /// [`StringTable::with_default_hasher`](crate::StringTable::with_default_hasher).
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see
    /// [`SharedBuilder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    ///
    /// let table =
    ///     strtab::SharedStringTable::<BuildHasherDefault<DefaultHasher>>::with_default_hasher();
    /// assert_eq!(table.intern("a").to_u32(), 1);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_default_hasher() -> SharedStringTable<S> {
        SharedBuilder::new().hasher(S::default()).build()
    }
}

impl Default for SharedStringTable {
    fn default() -> SharedStringTable {
        SharedStringTable::new()
    }
}

impl<S: BuildHasher> SharedStringTable<S> {
    /// Interns `s`: returns its id, storing it first if the table does not
    /// hold it yet. Threads interning the same string at once get the same
    /// id.
    ///
    /// # Panics
    ///
    /// Panics exactly where [`try_intern`](Self::try_intern) would return
    /// an error, with that error's message. Tables without [`Limits`] fail
    /// only when memory runs out or at the crate's fixed bounds (a string
    /// of 4 GiB or more, a shard's arena past its 32,767 blocks, about
    /// 2 GiB, or `u32::MAX` ids: see [`ErrorKind`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let a = table.intern("alloc::vec::Vec<T>::push");
    /// assert_eq!(table.intern("alloc::vec::Vec<T>::push"), a);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn intern(&self, s: &str) -> StringId {
        match self.try_intern(s) {
            Ok(id) => id,
            Err(e) => intern_failed(&e),
        }
    }

    /// Interns `s`, returning an error instead of growing past the table's
    /// [`Limits`] or when an allocation fails.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::IdsExhausted`], [`ErrorKind::MemoryLimit`],
    /// [`ErrorKind::AllocFailed`] or [`ErrorKind::CapacityOverflow`], as
    /// for [`StringTable::try_intern`](crate::StringTable::try_intern).
    /// After an error the table holds the same strings and ids: no id was
    /// taken, so the ids stay dense. (Capacity reserved before the
    /// failure, such as a grown hash table, may remain, within the limits.)
    ///
    /// Near the string limit, an insertion that has to grow something
    /// holds its id's place from before it grows until it has its id (or
    /// gives the place back on failure), so that the limit is never
    /// exceeded: meanwhile another thread's new string can be refused with
    /// `IdsExhausted` although the first insertion then fails and the
    /// table ends below its limit; retried once that insertion has
    /// returned, the string gets an id. Hits never fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{ErrorKind, Limits, SharedStringTable};
    ///
    /// let table = SharedStringTable::with_limits(Limits::new().max_strings(2));
    /// let a = table.try_intern("a")?;
    /// assert_eq!(table.try_intern("a")?, a); // hits never fail
    /// assert_eq!(table.try_intern("b").unwrap_err().kind(), ErrorKind::IdsExhausted);
    /// assert_eq!(&table[a], "a");
    /// # Ok::<(), strtab::Error>(())
    /// ```
    #[inline(always)]
    pub fn try_intern(&self, s: &str) -> Result<StringId, Error> {
        match self.lookup_hinted(s) {
            Ok(id) => Ok(id),
            Err((hash, bits)) => self.intern_locked(hash, bits, s),
        }
    }

    /// The id of `s` if the hint cache answers, else its hash and shard
    /// bits for the locked path; `""` is `StringId::EMPTY`. One test sends
    /// both `""` and long strings off the inlined path, as in
    /// `StringTable::try_intern`, so the hinted hit of a short string
    /// compares the record's length byte with no test for the long form.
    #[inline(always)]
    fn lookup_hinted(&self, s: &str) -> Result<StringId, (u64, usize)> {
        if !is_short(s) {
            if s.is_empty() {
                return Ok(StringId::EMPTY);
            }
            return self.lookup_hinted_long(s);
        }
        let (hash, bits) = hash_of(&self.hasher, s);
        // SAFETY: as in `hinted`: the hint cache gives only the locations
        // of complete records in the arena of the string's shard, with
        // their block's bias, published (`Release`, seen by the `Acquire`
        // in `Hints::get`) after the record and the bias were written;
        // arenas live as long as the table and records never change. `s`
        // is short, as `id_if_biased_short` requires.
        let found = self
            .hints
            .get(hash, bits)
            .and_then(|(bias, loc)| unsafe { Arena::id_if_biased_short(bias, loc, s.as_bytes()) });
        found.map(StringId::from_u32).ok_or((hash, bits))
    }

    /// [`lookup_hinted`](Self::lookup_hinted) of a string of `LONG_LEN`
    /// bytes or more, out of line.
    #[cold]
    #[inline(never)]
    fn lookup_hinted_long(&self, s: &str) -> Result<StringId, (u64, usize)> {
        let (hash, bits) = hash_of(&self.hasher, s);
        self.hinted(hash, bits, s).ok_or((hash, bits))
    }

    /// [`try_intern`](Self::try_intern) of a string the hint cache did not
    /// answer: the shard's hash table, under its lock, and the insertion.
    /// Out of line, so that the hinted hit inlined into callers stays
    /// small.
    #[inline(never)]
    fn intern_locked(&self, hash: u64, bits: usize, s: &str) -> Result<StringId, Error> {
        if let Some(id) = self.hinted_in_line(hash, bits, s) {
            return Ok(id);
        }
        // The lock's compare-and-swap waits for the line of the lock word;
        // meanwhile the control bytes the lookup reads first are fetched.
        let cell = self.cell(bits);
        cell.probe.prefetch(hash);
        let mut shard = cell.lock.lock();
        if let Some(found) = shard.find(hash, s) {
            let (id, loc) = (found.id(), found.loc());
            debug_assert_eq!(self.index.get(id as usize), Some(found.addr()));
            drop(shard);
            // Every record in a shard's hash table is published, and its
            // block too.
            self.hints.put(hash, bits, loc);
            return Ok(StringId::from_u32(id));
        }
        let (id, loc) = self.insert_new(&mut shard, hash, bits, s)?;
        drop(shard);
        self.hints.put(hash, bits, loc);
        // Levels are switched to past powers of two of strings: only the
        // thread given such an id checks (a level the limits refused is
        // asked for again at the next one).
        if id.to_u32().is_power_of_two()
            && let Some(k) = self.hints.wants_level(self.len())
        {
            self.grow_hints(k);
        }
        Ok(id)
    }

    /// The shard of a string whose shard bits are `bits`: its lock and
    /// its probe hint.
    #[inline(always)]
    fn cell(&self, bits: usize) -> &ShardCell {
        let i = shard_index(bits, self.shard_mask);
        debug_assert!(i < self.shards.len());
        // SAFETY: `shard_mask` is `shards.len() - 1`, the length a power of
        // two (`try_build`), and neither changes, so `i < shards.len()`.
        unsafe { &self.shards.get_unchecked(i).0 }
    }

    /// The id of `s` from the hint cache, checked against the bytes of the
    /// record it points to: no lock, no write.
    #[inline(always)]
    fn hinted(&self, hash: u64, bits: usize, s: &str) -> Option<StringId> {
        confirm(self.hints.get(hash, bits), s)
    }

    /// The id of `s` from the other sets of its hint line, where a string
    /// whose own set was full is hinted ([`Hints::get_in_line`]: the line
    /// is in the L1 from the hinted lookup just before); the first step of
    /// the locked paths, before the lock. No lock, no write.
    #[inline(always)]
    fn hinted_in_line(&self, hash: u64, bits: usize, s: &str) -> Option<StringId> {
        confirm(self.hints.get_in_line(hash, bits), s)
    }

    /// The id of `s` if the table holds it. Never inserts.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let id = table.intern("main");
    /// assert_eq!(table.get("main"), Some(id));
    /// assert_eq!(table.get("missing"), None);
    /// assert_eq!(table.get(""), Some(strtab::StringId::EMPTY));
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn get(&self, s: &str) -> Option<StringId> {
        match self.lookup_hinted(s) {
            Ok(id) => Some(id),
            Err((hash, bits)) => self.get_locked(hash, bits, s),
        }
    }

    /// Whether the table holds `s`. Never inserts.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// table.intern("main");
    /// assert!(table.contains("main"));
    /// assert!(!table.contains("other"));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains(&self, s: &str) -> bool {
        self.get(s).is_some()
    }

    /// [`get`](Self::get) of a string the hint cache did not answer, under
    /// its shard's lock; out of line, as `intern_locked`.
    #[inline(never)]
    fn get_locked(&self, hash: u64, bits: usize, s: &str) -> Option<StringId> {
        if let Some(id) = self.hinted_in_line(hash, bits, s) {
            return Some(id);
        }
        let shard = self.cell(bits).lock.lock();
        shard.find(hash, s).map(|f| StringId::from_u32(f.id()))
    }

    /// Stores `s`, absent from `shard` (shard bits `bits`), whose lock the
    /// caller holds, and publishes it and its block; returns its id and
    /// its location (for the hint cache). Inlined into
    /// `intern_locked`, its only caller (the levers behind this shape and
    /// their instruction counts are in `benches/README.md`).
    #[inline(always)]
    fn insert_new(
        &self,
        shard: &mut ShardGuard<'_, Shard>,
        hash: u64,
        bits: usize,
        s: &str,
    ) -> Result<(StringId, arena::Loc), Error> {
        let max = self.limits.get_max_strings();
        // Most strings need no growth: room in the hash table and in the
        // arena's current block. Then nothing can fail once the id is
        // taken, so it is reserved and assigned in one step and the record
        // is written with it (an inlined in-place push, no call).
        let mut assigned = None;
        let in_place = if shard.table.len() < shard.table.capacity() {
            let (value, marker) = shard.split();
            value.arena.push_in_place_with::<false, Error>(s, || {
                let a = self.index.reserve_assign(max, |k| {
                    marker.mark_slow();
                    self.install_segment(k)
                })?;
                let id = a.id;
                assigned = Some(a);
                Ok(id)
            })
        } else {
            None
        };
        let (id, loc, record) = if let Some(pushed) = in_place {
            let pushed = pushed?;
            // The shard's current block, whose first record came through
            // the branch below (a new block never takes a record in
            // place, also after `Arena::spill`), which published it.
            debug_assert!(self.hints.is_published(bits, pushed.loc));
            (pushed.id, pushed.loc, pushed.record)
        } else {
            let (id, loc) = self.insert_slow(shard, bits, s, max)?;
            // SAFETY: `loc` is the location the shard's arena just
            // returned for `s` (`insert_slow`'s push).
            (id, loc, unsafe { shard.arena.record_addr(loc) })
        };
        let Shard { arena, table } = &mut **shard;
        // SAFETY: as above, a location the arena just returned.
        debug_assert_eq!(record, unsafe { arena.record_addr(loc) });
        // This shard's next record comes several insertions later, when
        // its line may have left the L1.
        Arena::prefetch_after(record, s.len());
        match assigned {
            Some(a) => self.index.publish_assigned(a, record),
            None => self.index.publish(id, record),
        }
        let hash_slot = |e: &Slot| {
            // SAFETY: the shard table's slots hold locations its arena's
            // `push` returned (a shard arena is never cleared).
            unsafe { rehash(&self.hasher, arena, e.loc()) }
        };
        table.insert_unique(hash, Slot::of(loc, s), hash_slot);
        Ok((StringId::from_u32(id), loc))
    }

    /// The slow path of [`insert_new`](Self::insert_new), out of line:
    /// reserves an id below `max`, grows what must grow to store `s`
    /// ([`prepare`](Self::prepare)), then assigns the id and publishes the
    /// record's block. Returns the id and the record's location.
    #[cold]
    #[inline(never)]
    fn insert_slow(
        &self,
        shard: &mut ShardGuard<'_, Shard>,
        bits: usize,
        s: &str,
        max: usize,
    ) -> Result<(u32, arena::Loc), Error> {
        // Growth allocates, and may wait for the growth lock: threads
        // waiting for this shard sleep meanwhile.
        shard.mark_slow();
        let reserved = self.index.reserve(max, |k| self.install_segment(k))?;
        // On an error, or a panic in the user's hasher while the shard's
        // table grows, dropping the reservation gives it back.
        let loc = self.prepare(shard, bits, s)?;
        // Nothing below can fail.
        let id = reserved.assign();
        // The record was written before its id was known; no reader sees
        // it before `publish`.
        // SAFETY: `prepare` returned `loc` from the shard arena's `push`.
        unsafe { shard.arena.set_id(loc, id) };
        // SAFETY: as above.
        let bias = unsafe { shard.arena.block_bias(loc) };
        self.hints.publish_block(bits, loc, bias);
        Ok((id, loc))
    }

    /// Makes room in `shard`'s hash table and copies `s` into its arena;
    /// returns the record's location. Part of [`insert_slow`](Self::insert_slow).
    #[cold]
    #[inline(never)]
    fn prepare(&self, shard: &mut Shard, bits: usize, s: &str) -> Result<arena::Loc, Error> {
        if shard.table.len() == shard.table.capacity() {
            let chunk = shard.arena.push_need(s.len());
            self.grow_table(shard, chunk)?;
            self.cell(bits).probe.update(shard);
        }
        let Shard { arena, .. } = shard;
        // Most strings fit the current block: no allocation, no growth
        // lock, and no call (`push`'s in-place case is inlined). A push
        // that needs a chunk fails at budget 0 without any change and is
        // retried under the growth lock.
        match arena.push(s, PENDING_ID, 0) {
            Ok(loc) => Ok(loc),
            Err(e) if e.kind() == ErrorKind::MemoryLimit => self.grow(|budget| {
                let before = arena.heap_bytes();
                let pushed = arena
                    .push(s, PENDING_ID, budget)
                    .map_err(|e| e.naming_limit(self.limits.get_max_bytes()));
                (pushed, arena.heap_bytes() - before)
            }),
            Err(e) => Err(e),
        }
    }

    /// Doubles `shard`'s hash table, under the growth lock and within the
    /// byte limit; a first growth larger than that only if the budget
    /// holds it and the `chunk` bytes the string's push then needs
    /// ([`Arena::push_need`]).
    #[cold]
    fn grow_table(&self, shard: &mut Shard, chunk: usize) -> Result<(), Error> {
        self.grow(|budget| {
            let before = shard.table.allocation_size();
            let bound = table_growth_bound(before);
            if bound > budget {
                return (Err(self.limits.memory_error(bound)), 0);
            }
            // Counting the string's chunk: a first growth to
            // `FIRST_TABLE_STRINGS` that took the chunk's bytes made a
            // one-shard table refuse its first string under limits up to
            // 412 bytes higher than with doubling alone.
            let capacity = shard.grown_capacity(budget.saturating_sub(chunk));
            let grown = shard
                .grow_table(&self.hasher, capacity)
                .map_err(|()| Error::new(ErrorKind::AllocFailed, bound));
            (grown, shard.table.allocation_size() - before)
        })
    }

    /// Adds hint-cache level `k` if no other thread has, when it takes at
    /// most half of what the byte limit leaves, and carries the old
    /// level's hints over to it; never fails (the cache only speeds up
    /// hits). A level that took whatever was left (8 KiB of a one-shard
    /// table's last 9.4 KB under a limit of 19,296 bytes) left the strings
    /// no room: that limit took 56 strings where 18,592 took 356.
    #[cold]
    fn grow_hints(&self, k: usize) {
        let installed = self.grow(|budget| {
            if self.hints.wants_level(self.len()) != Some(k) || level_bytes(k) > budget / 2 {
                return (Ok(false), 0);
            }
            match self.hints.install(k) {
                Ok(()) => (Ok(true), level_bytes(k)),
                Err(e) => (Err(e), 0),
            }
        });
        if installed == Ok(true) {
            self.hints.carry_over(k, |bias, loc| {
                // SAFETY: `carry_over` passes the location and block bias
                // of a hint of the level `k` replaced: a record of this
                // table's arenas, published (with its block's bias) before
                // the hint was stored, which `carry_over` loaded with
                // `Acquire`; the string does not outlive this call.
                hash_of(&self.hasher, unsafe { Arena::str_biased(bias, loc) })
            });
        }
    }

    /// Installs index segment `k` if no other thread has.
    #[cold]
    fn install_segment(&self, k: usize) -> Result<(), Error> {
        self.grow(|budget| {
            if self.index.has_segment(k) {
                return (Ok(()), 0);
            }
            let bytes = segment_bytes(k);
            if bytes > budget {
                return (Err(self.limits.memory_error(bytes)), 0);
            }
            match self.index.install(k) {
                Ok(()) => (Ok(()), bytes),
                Err(e) => (Err(e), 0),
            }
        })
    }
}

impl<S> SharedStringTable<S> {
    /// Runs an allocation under the growth lock: `f` gets the bytes the
    /// table may still add and returns its result and the bytes it added
    /// (even when it failed).
    #[cold]
    fn grow<R>(&self, f: impl FnOnce(usize) -> (Result<R, Error>, usize)) -> Result<R, Error> {
        let _grow = self.grow.lock();
        let used = self.memory.load(Ordering::Relaxed);
        let max = self.limits.get_max_bytes();
        let budget = if max == usize::MAX {
            usize::MAX
        } else {
            max.saturating_sub(used)
        };
        let (result, added) = f(budget);
        self.memory.store(used + added, Ordering::Relaxed);
        result
    }

    /// The string of `id`, or `None` if no thread has received `id` from
    /// this table. Takes no lock and never waits for a writer: an id that
    /// any thread received resolves in every thread it is handed to
    /// through something that orders the handing over (a channel, a lock,
    /// a join, an atomic stored with `Release` and loaded with `Acquire`).
    /// An id passed through a `Relaxed` atomic, or guessed from
    /// [`len`](Self::len), may not be published yet there: `resolve` is
    /// then `None` (and indexing the table panics), never a wrong string.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let id = table.intern("main");
    /// let s = std::thread::scope(|scope| scope.spawn(|| table.resolve(id)).join().unwrap());
    /// assert_eq!(s, Some("main"));
    /// assert_eq!(table.resolve(strtab::StringId::from_u32(99)), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn resolve(&self, id: StringId) -> Option<&str> {
        resolve(&self.index, id.index())
    }

    /// Number of ids given out, `""` included (so never 0). While other
    /// threads intern, this is a snapshot, and the newest ids below it may
    /// still be on their way to `resolve`; once they are done, the ids in
    /// use are exactly `0..len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// assert_eq!(table.len(), 1);
    /// table.intern("a");
    /// assert_eq!(table.len(), 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the table holds only `""`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(strtab::SharedStringTable::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// Every heap byte the table holds: the shard list, each shard's arena
    /// chunks (with bumpalo's footers and the arena's bookkeeping) and hash
    /// table, the index segments and the hint cache (its levels and block
    /// biases). Bytes are counted as requested from
    /// the global allocator (its own per-allocation headers are not
    /// included).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let empty = table.memory_usage();
    /// table.intern("main");
    /// // The index's first segment (4 KiB), the shard's first chunk (a
    /// // page) and the hint cache's first level (8 KiB).
    /// assert!(table.memory_usage() > empty + (16 << 10));
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.memory.load(Ordering::Relaxed)
    }

    /// The table's limits (with a byte limit below the empty table's
    /// footprint raised to it).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::SharedStringTable::new().limits(), strtab::Limits::new());
    /// ```
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The number of shards.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// assert_eq!(table.shards(), strtab::SharedStringTable::default_shards());
    /// ```
    #[must_use]
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The table's hasher.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let _hasher = table.hasher();
    /// ```
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Freezes the table into a [`Resolver`], the type
    /// [`StringTable::into_resolver`](crate::StringTable::into_resolver)
    /// makes: it drops the hash tables and keeps the shard arenas and the
    /// id index, so no string is copied; it resolves ids and iterates in id
    /// order, `""` first.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let id = table.intern("main");
    /// let resolver = table.into_resolver();
    /// assert_eq!(&resolver[id], "main");
    /// assert_eq!(resolver.iter().collect::<Vec<_>>(), ["", "main"]);
    /// ```
    #[must_use]
    pub fn into_resolver(self) -> Resolver {
        let SharedStringTable { shards, index, .. } = self;
        let arenas: Vec<Arena> = shards
            .into_vec()
            .into_iter()
            .map(|shard| {
                let Shard { arena, table } = shard.0.lock.into_inner();
                drop(table);
                arena
            })
            .collect();
        Resolver::from_shared(Frozen::new(index, arenas))
    }
}

impl<S> core::ops::Index<StringId> for SharedStringTable<S> {
    type Output = str;

    /// # Panics
    ///
    /// Panics if no thread has received `id` from this table.
    #[inline]
    #[track_caller]
    fn index(&self, id: StringId) -> &str {
        match self.resolve(id) {
            Some(s) => s,
            None => crate::resolver::unknown_id(id, self.len()),
        }
    }
}

impl<S> fmt::Debug for SharedStringTable<S> {
    /// A summary: the number of strings, the memory held, the shard count
    /// and the limits, never the strings themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedStringTable")
            .field("len", &self.len())
            .field("memory_usage", &self.memory_usage())
            .field("shards", &self.shards())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A new hint level starts with the old one's hints: strings hinted
    /// before the switch are still answered without a lock after it.
    #[test]
    fn hints_survive_a_level_switch() {
        let table = SharedStringTable::builder().shards(8).build();
        let first: Vec<String> = (0..1000).map(|i| format!("hot::function_{i}")).collect();
        for s in &first {
            table.intern(s);
        }
        let hinted = |table: &SharedStringTable, s: &str| {
            let (hash, bits) = hash_of(&table.hasher, s);
            table.hinted(hash, bits, s).is_some()
        };
        let before = first.iter().filter(|s| hinted(&table, s)).count();
        let entries = table.hints.current_len();
        // Past the first level's entries: the next level is installed.
        let mut i = 0;
        while table.hints.current_len() == entries {
            table.intern(&format!("cold::function_{i}"));
            i += 1;
        }
        let after = first.iter().filter(|s| hinted(&table, s)).count();
        assert!(before > 900, "{before} of 1000 hinted before the switch");
        assert!(
            after >= before * 9 / 10,
            "{after} of {before} hinted after the switch"
        );
    }

    use crate::testing::Armed;

    /// A user hasher that panics while a new hint level takes the old
    /// one's hints over leaves the table usable and its byte count right
    /// (the level was charged before the carry-over ran).
    #[test]
    fn hasher_panic_during_carry_over() {
        let armed = Armed::default();
        let table = SharedStringTable::builder()
            .shards(1)
            .hasher(armed.clone())
            .build();
        // Its second intern, a locked hit once level 0 exists, hints it;
        // level 1's carry-over (at 1Ki strings) keeps it.
        table.intern("boom");
        table.intern("boom");
        let mut i = 0;
        // Up to the id just before the switch to level 2.
        let switch = hints::level_fill(1);
        while table.len() < switch {
            table.intern(&format!("s{i}"));
            i += 1;
        }
        let entries = table.hints.current_len();
        assert_eq!(table.hints.wants_level(switch + 1), Some(2));
        armed.arm(true);
        let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            table.intern("switch");
        }));
        armed.arm(false);
        assert!(r.is_err(), "the carry-over hashed \"boom\"");
        assert!(
            table.hints.current_len() > entries,
            "the level was installed"
        );
        assert_eq!(table.memory_usage(), counted_bytes(&table));
        assert_eq!(
            table.get("switch").map(StringId::to_u32),
            Some(switch as u32)
        );
        assert_eq!(table.intern("boom").to_u32(), 1);
    }

    /// A user hasher that panics while a shard's hash table grows (it
    /// re-hashes the shard's strings) gives back the id the insertion had
    /// reserved: every id up to the string limit can still be had.
    #[test]
    fn hasher_panic_during_table_growth_keeps_every_id() {
        const MAX: usize = 200;
        let armed = Armed::default();
        let table = SharedStringTable::builder()
            .shards(1)
            .limits(Limits::new().max_strings(MAX))
            .hasher(armed.clone())
            .build();
        table.intern("boom");
        let full = |t: &SharedStringTable<Armed>| {
            let shard = t.shards[0].0.lock.lock();
            shard.table.len() == shard.table.capacity()
        };
        let mut i = 0;
        while !full(&table) {
            table.intern(&format!("s{i}"));
            i += 1;
        }
        let len = table.len();
        assert!(len < MAX - 2, "the shard grows before the limit");
        armed.arm(true);
        let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            table.intern("grows");
        }));
        armed.arm(false);
        assert!(r.is_err(), "the growth re-hashed \"boom\"");
        assert_eq!(table.len(), len);
        assert_eq!(table.get("grows"), None);
        while table.try_intern(&format!("t{}", table.len())).is_ok() {}
        assert_eq!(table.len(), MAX);
        assert_eq!(
            table.try_intern("one more").unwrap_err().kind(),
            ErrorKind::IdsExhausted
        );
        assert_eq!(table.memory_usage(), counted_bytes(&table));
    }

    /// A hasher whose `finish` panics on one call in 997 (counted across
    /// every thread) once armed.
    #[derive(Clone, Default)]
    struct Flaky {
        calls: std::sync::Arc<std::sync::atomic::AtomicU64>,
        armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }

    struct FlakyHasher(std::hash::DefaultHasher, Flaky);

    impl BuildHasher for Flaky {
        type Hasher = FlakyHasher;
        fn build_hasher(&self) -> FlakyHasher {
            FlakyHasher(std::hash::DefaultHasher::new(), self.clone())
        }
    }

    impl core::hash::Hasher for FlakyHasher {
        fn write(&mut self, bytes: &[u8]) {
            self.0.write(bytes);
        }
        fn finish(&self) -> u64 {
            let n = self.1.calls.fetch_add(1, Ordering::Relaxed);
            assert!(
                !(self.1.armed.load(Ordering::Relaxed) && n % 997 == 13),
                "flaky hasher"
            );
            self.0.finish()
        }
    }

    /// Threads interning overlapping strings (some long) through a user
    /// hasher that panics now and then, wherever it is called: the first
    /// hash, a shard's table growth, a hint level's carry-over, with a
    /// shard lock, the growth lock or an id reservation held. Afterwards
    /// the limits held, the byte count is exact, the ids are dense, each
    /// string has one id, and the resolver walks them all.
    #[test]
    fn hasher_panics_on_many_threads_leave_the_table_consistent() {
        let (threads, per_thread) = if cfg!(miri) { (2, 150) } else { (4, 20_000) };
        let configs = [
            (usize::MAX, usize::MAX),
            (3000, usize::MAX),
            (usize::MAX, 200_000),
        ];
        for (max_strings, max_bytes) in configs {
            let flaky = Flaky::default();
            let table = SharedStringTable::builder()
                .shards(4)
                .limits(Limits::new().max_strings(max_strings).max_bytes(max_bytes))
                .hasher(flaky.clone())
                .build();
            flaky.armed.store(true, Ordering::Relaxed);
            let panics = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for t in 0..threads {
                    let (table, panics) = (&table, &panics);
                    scope.spawn(move || {
                        for i in 0..per_thread {
                            let s = if i % 50 == 0 {
                                format!("{}{i}", "x".repeat(300 + i % 7))
                            } else {
                                format!("s{}", (i * 7 + t * 13) % 9000)
                            };
                            let caught =
                                std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
                                    if let Ok(id) = table.try_intern(&s) {
                                        assert_eq!(table.resolve(id), Some(s.as_str()));
                                    }
                                }));
                            if caught.is_err() {
                                panics.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    });
                }
            });
            flaky.armed.store(false, Ordering::Relaxed);
            assert!(panics.into_inner() > 0, "the hasher never panicked");
            let len = table.len();
            assert!(len <= max_strings, "{len} strings");
            if max_strings < usize::MAX && !cfg!(miri) {
                // 9,000 short strings were offered, many times each: a
                // failed insertion gave its id's place back.
                assert_eq!(len, max_strings, "the string limit was not reached");
            }
            assert!(table.memory_usage() <= max_bytes);
            assert_eq!(table.memory_usage(), counted_bytes(&table));
            let mut seen = std::collections::HashSet::new();
            for i in 1..len {
                let id = StringId::from_u32(i as u32);
                let s = table
                    .resolve(id)
                    .unwrap_or_else(|| panic!("no string for id {i}"));
                assert!(seen.insert(s.to_owned()), "{s:?} has two ids");
                assert_eq!(table.get(s), Some(id));
            }
            let resolver = table.into_resolver();
            assert_eq!(resolver.iter().count(), len);
        }
    }

    /// The table's heap bytes counted part by part: every shard (its lock
    /// and what its arena and hash table hold), the id index and the hint
    /// cache.
    fn counted_bytes<S>(table: &SharedStringTable<S>) -> usize {
        table.shards.len() * size_of::<Padded<ShardCell>>()
            + table
                .shards
                .iter()
                .map(|s| s.0.lock.lock().heap_bytes())
                .sum::<usize>()
            + table.index.heap_bytes()
            + table.hints.heap_bytes()
    }

    /// A shard's first growth gives its hash table room for
    /// `FIRST_TABLE_STRINGS` strings at once, and the next ones double it.
    #[test]
    fn first_growth_skips_the_smallest_tables() {
        let table = SharedStringTable::builder().shards(1).build();
        let capacity = || table.shards[0].0.lock.lock().table.capacity();
        assert_eq!(capacity(), 0);
        table.intern("first");
        let first = capacity();
        assert!(first >= shard::FIRST_TABLE_STRINGS);
        for i in 0..first {
            table.intern(&format!("s{i}"));
        }
        assert!(capacity() > first && capacity() <= 2 * first + 1);
        assert_eq!(table.memory_usage(), counted_bytes(&table));
    }

    /// Under a byte limit that cannot afford a table of
    /// `FIRST_TABLE_STRINGS` strings, a shard's first growth doubles its
    /// buckets as the later ones do (here a pre-sized shard, whose arena
    /// has room, so its strings need no chunk when the table grows); no
    /// limit is ever exceeded.
    #[test]
    fn first_growth_within_a_tight_byte_limit() {
        let build = |max| {
            SharedStringTable::builder()
                .shards(1)
                .capacity(3, 2048)
                .limits(Limits::new().max_bytes(max))
                .build()
        };
        let floor = build(usize::MAX).memory_usage();
        let (mut doubled, mut first) = (false, false);
        let step = if cfg!(miri) { 64 } else { 8 };
        for max in (floor..floor + 1024).step_by(step) {
            let table = build(max);
            for i in 0..200 {
                if table.try_intern(&format!("s{i}")).is_err() {
                    break;
                }
            }
            let capacity = table.shards[0].0.lock.lock().table.capacity();
            doubled |= capacity > 3 && capacity < shard::FIRST_TABLE_STRINGS;
            first |= capacity >= shard::FIRST_TABLE_STRINGS;
            assert!(table.memory_usage() <= max);
            assert_eq!(table.memory_usage(), counted_bytes(&table));
        }
        assert!(doubled, "no limit made the first growth double");
        assert!(first, "no limit afforded the first table");
    }

    /// A byte limit that takes the first string, and any larger one, takes
    /// it: the arena's choice of a chunk near the limit counts the block
    /// list's growth too (until 2026-12-06 a window of about 48 bytes of
    /// limits some 8 KiB over a one-shard table's empty footprint refused
    /// the first string, which smaller limits took in a smaller chunk).
    #[test]
    fn larger_byte_limits_take_the_first_string_too() {
        let floor = SharedStringTable::builder()
            .shards(1)
            .build()
            .memory_usage();
        let step = if cfg!(miri) { 256 } else { 16 };
        let mut took = false;
        for max in (floor..floor + (12 << 10)).step_by(step) {
            let table = SharedStringTable::builder()
                .shards(1)
                .limits(Limits::new().max_bytes(max))
                .build();
            let ok = table.try_intern("first").is_ok();
            assert!(
                ok || !took,
                "a limit of {max} bytes refused what a smaller one took"
            );
            took |= ok;
            assert!(table.memory_usage() <= max);
        }
        assert!(took);
    }

    /// The smallest byte limits that take a first string, as
    /// [`Limits::max_bytes`] documents them (64-bit targets).
    #[test]
    #[cfg(all(target_pointer_width = "64", not(miri)))]
    fn first_string_needs_what_the_docs_say() {
        // The smallest limit under which `fits(max)` holds.
        let first = |fits: &dyn Fn(usize) -> bool| (0..40_000).find(|&max| fits(max));
        let table = |s: &str| {
            first(&|max| {
                crate::StringTable::with_limits(Limits::new().max_bytes(max))
                    .try_intern(s)
                    .is_ok()
            })
        };
        let shared = |shards, s: &str| {
            first(&|max| {
                SharedStringTable::builder()
                    .shards(shards)
                    .limits(Limits::new().max_bytes(max))
                    .build()
                    .try_intern(s)
                    .is_ok()
            })
        };
        assert_eq!(table("a"), Some(814));
        // 7,552 while a shard's first hash-table growth to 56 strings
        // took the bytes the string's first chunk needed.
        assert_eq!(shared(1, "a"), Some(7_204));
        assert_eq!(shared(8, "a"), Some(24_340));
        // A first string whose record fills bumpalo's smallest chunk needs
        // 56 bytes less: a shorter one's near-limit chunk is asked for
        // below that size, and the chunk bumpalo gives is cut into two
        // blocks, a block-list entry more (`Arena::advance`).
        for len in [200, 400] {
            let s = "x".repeat(len);
            assert_eq!(table(&s), Some(726), "{len} bytes");
            assert_eq!(shared(1, &s), Some(7_148), "{len} bytes");
            assert_eq!(shared(8, &s), Some(24_284), "{len} bytes");
        }
    }

    /// A hint-cache level takes at most half of what the limit leaves: a
    /// level that took all of it (8 KiB of the last 9.4 KB) left a
    /// one-shard table under a limit of 19,296 bytes 56 strings, where
    /// 18,592 bytes took 356.
    #[test]
    #[cfg_attr(miri, ignore)] // a budget comparison, no `unsafe`; slow there
    fn hint_levels_leave_the_strings_room() {
        let took = |max| {
            let table = SharedStringTable::builder()
                .shards(1)
                .limits(Limits::new().max_bytes(max))
                .build();
            (0..)
                .take_while(|i| table.try_intern(&format!("string number {i}")).is_ok())
                .count()
        };
        let (smaller, larger) = (took(18_592), took(19_296));
        assert!(
            larger >= smaller,
            "{larger} strings at 19,296 bytes, {smaller} at 18,592"
        );
    }

    /// Each shard's probe hint follows its hash table as it grows.
    #[test]
    fn probe_hints_follow_growth() {
        let table = SharedStringTable::builder().shards(2).build();
        for i in 0..if cfg!(miri) { 100 } else { 3000 } {
            table.intern(&format!("string-{i}"));
            for cell in &table.shards {
                let shard = cell.0.lock.lock();
                let hint = cell.0.probe.get();
                // Updated at each growth, so behind only until the first
                // growth after the first string (the first one finds the
                // table empty).
                if shard.table.len() > shard::FIRST_TABLE_STRINGS {
                    assert_eq!(hint, shard.probe_start());
                }
            }
        }
    }

    /// A pre-sized shard's probe hint names its table before its first
    /// string (no growth would ever set it), and still after it.
    #[test]
    fn probe_hints_of_presized_shards() {
        let n = if cfg!(miri) { 100 } else { 3000 };
        let table = SharedStringTable::builder()
            .shards(2)
            .capacity(n, n * 12)
            .build();
        for cell in &table.shards {
            assert_ne!(cell.0.probe.get(), (0, 0));
        }
        for i in 0..n {
            table.intern(&format!("string-{i}"));
        }
        for cell in &table.shards {
            let shard = cell.0.lock.lock();
            assert_eq!(cell.0.probe.get(), shard.probe_start());
        }
    }

    #[test]
    fn memory_is_every_shard_and_segment() {
        for builder in [
            SharedStringTable::builder().shards(4),
            SharedStringTable::builder()
                .shards(4)
                .capacity(2000, 30_000),
        ] {
            let table = builder.build();
            assert_eq!(table.memory_usage(), counted_bytes(&table));
            for i in 0..if cfg!(miri) { 300 } else { 5000 } {
                table.intern(&format!("string-{i}"));
            }
            assert_eq!(table.memory_usage(), counted_bytes(&table));
        }
    }

    /// A capacity hint reserves at most about twice itself, also with
    /// fewer strings than shards: ten strings of 512 MiB over 1024 shards
    /// once planned 8 strings' room and 40 MiB of arena in every shard
    /// (40 GiB for a 5 GiB hint). Planned only: nothing is allocated.
    #[test]
    #[cfg_attr(miri, ignore = "arithmetic only, and 2 MiB of block biases")]
    fn presize_plan_stays_near_the_hint() {
        for (shards, strings, bytes) in [
            (1024, 10, 5usize << 30),
            (64, 100, 10 << 20),
            (8, 100_000, 6 << 20),
            (8, 1, 100),
        ] {
            let hints = Hints::new(shards).unwrap();
            let plan = Presize::new(strings, bytes, &hints).unwrap();
            let arena = plan.shard_bytes * shards;
            assert!(plan.shard_strings <= 2 * strings.div_ceil(shards));
            assert!(
                arena <= 2 * crate::table::arena_bytes_for(strings, bytes) + shards * 1024,
                "{shards} shards, {strings} strings, {bytes} bytes: {arena} bytes of arena"
            );
        }
        // Twice the hint rounded up to a multiple of the shard count, as
        // the builder's docs say: 9 strings over 8 shards, room for 32.
        let hints = Hints::new(8).unwrap();
        let plan = Presize::new(9, 900, &hints).unwrap();
        assert_eq!(plan.shard_strings * 8, 32);
        // An empty hint plans nothing; a hint of bytes alone plans.
        let hints = Hints::new(8).unwrap();
        assert!(Presize::new(0, 0, &hints).is_none());
        assert!(Presize::new(0, 100, &hints).is_some());
    }
}
