//! An arena-backed string table for profilers.
//!
//! A profiler sees the same function names, file paths and label values
//! millions of times. [`StringTable`] stores each unique string once, in a
//! [`bumpalo`] arena, and hands out a dense [`StringId`]: ids count up from 0
//! in insertion order, and id 0 is always `""`. That is exactly the shape of
//! a pprof profile's `string_table`, so an encoder writes the table's
//! strings in id order and uses the ids as indices.
//!
//! # Quick start
//!
//! ```
//! use strtab::{StringId, StringTable};
//!
//! let mut table = StringTable::new();
//! let func = table.intern("tokio::runtime::task::harness::poll");
//! let file = table.intern("src/runtime/task/harness.rs");
//! assert_eq!(table.intern("tokio::runtime::task::harness::poll"), func);
//!
//! assert_eq!(table.get("src/runtime/task/harness.rs"), Some(file));
//! assert_eq!(&table[func], "tokio::runtime::task::harness::poll");
//!
//! // Encode: the strings in id order, "" first.
//! let strings: Vec<&str> = table.iter().collect();
//! assert_eq!(strings, ["", "tokio::runtime::task::harness::poll", "src/runtime/task/harness.rs"]);
//! assert_eq!(strings[func.index()], "tokio::runtime::task::harness::poll");
//! # let _ = StringId::EMPTY;
//! ```
//!
//! A profiler interns while it samples, encodes the table in id order when
//! it exports a profile (optionally after [`StringTable::into_resolver`],
//! which drops the hash table first), then drops the table, or
//! [`clear`](StringTable::clear)s it to reuse its memory for the next
//! profile.
//!
//! # Many threads: `SharedStringTable`
//!
//! Profilers sample from many threads. [`SharedStringTable`] is the table
//! they can all intern into at once, through `&self`: one id per string
//! whichever threads intern it, ids dense and in insertion order (`""` at
//! 0), so [`into_resolver`](SharedStringTable::into_resolver) gives the
//! same [`Resolver`] as a `StringTable` and the pprof path is unchanged.
//!
//! ```
//! use strtab::SharedStringTable;
//!
//! let table = SharedStringTable::new();
//! std::thread::scope(|scope| {
//!     for thread in 0..4 {
//!         let table = &table;
//!         scope.spawn(move || {
//!             for frame in ["main", "run", "poll"] {
//!                 let id = table.intern(frame);
//!                 assert_eq!(table.resolve(id), Some(frame));
//!             }
//!             table.intern(&format!("thread-{thread}"));
//!         });
//!     }
//! });
//! assert_eq!(table.len(), 1 + 3 + 4);
//! let resolver = table.into_resolver();
//! let mut out = Vec::new();
//! strtab::pprof::write_string_table(resolver.iter(), &mut out);
//! assert_eq!(resolver.iter().next(), Some(""));
//! ```
//!
//! Strings are spread over shards by hash (one per core, 8 to 64), each a
//! `Mutex` around an arena and a hash table; ids come from one counter and
//! an append-only, lock-free id index, so
//! [`resolve`](SharedStringTable::resolve) takes no lock and never waits
//! for a writer. A sampler with a whole sample at hand can intern it in
//! one [`intern_batch`](SharedStringTable::intern_batch), as with a
//! `StringTable`. See [`SharedStringTable`] for the design, its measured
//! cost and what is model-checked.
//!
//! # Memory model
//!
//! - **One arena.** String bytes live in arena chunks as records (the
//!   string's id, a one-byte length below 255 bytes, else a marker byte,
//!   a 4-byte length and the id of the next such string, which iteration
//!   follows; then the bytes), each unique string once; no string gets its
//!   own heap allocation, and dropping the table returns whole chunks to
//!   the allocator (glibc `mmap`s chunks of 128 KiB and more, at least until
//!   its adaptive threshold rises after the first large free, and those go
//!   straight back to the OS).
//! - **Page-tuned chunks.** The first chunk holds [`FIRST_CHUNK_CAPACITY`]
//!   bytes: 16 KiB (four pages) minus bumpalo's 48-byte chunk footer and
//!   the allocator's 16-byte header ([`CHUNK_OVERHEAD`]), so the whole
//!   allocation is exactly four pages. Later chunks are whole pages too,
//!   but for bumpalo's smallest (1,008 bytes), which the arena adds
//!   before a dedicated chunk (below) and near a byte limit. Chunks
//!   double up to [`MAX_CHUNK_CAPACITY`] (256 KiB
//!   with overhead); beyond it a chunk size is kept until the arena holds
//!   [`CHUNK_GROWTH_RATIO`] times that size in all, so the number of
//!   chunks grows with the logarithm of the bytes stored while the unused
//!   tail of the last chunk stays a small fraction of the arena. A string
//!   of more than about 64 KiB (a record over 65,520 bytes, more than a
//!   64 KiB block holds) always gets a chunk of its own, sized to it (or
//!   an empty block left by `clear`), and the current chunk stays open.
//! - **Nothing is freed per string.** Strings live until the table is
//!   dropped or cleared; [`StringTable::shrink_to`] after a `clear` frees
//!   the chunks a burst left behind.
//! - **Five bytes per id.** The id index stores, for each id, a packed
//!   32-bit arena location (a label naming the block, and the offset) and
//!   a copy of the record's length byte, not a 16-byte `&str`; in front of
//!   the entries, in the same allocation, it keeps two base addresses per
//!   64 KiB arena block, so that `resolve` reads a block's base at a fixed
//!   displacement from the entries' own address (one instruction fewer
//!   than lasso's `&str` index in a copy loop: `benches/README.md`,
//!   hot-path lever 72). With the length in the index,
//!   [`StringTable::resolve`] knows it before the string's own cache line
//!   arrives, so a caller's copy of the string does not wait for that miss
//!   (resolving and copying strings of a cache-exceeding table ran 10% to
//!   40% faster side by side, for 1 byte per string: `benches/README.md`,
//!   lever 24). It starts at one page ([`INITIAL_INDEX_CAPACITY`]
//!   entries) and doubles, rounded to whole pages: an index reallocated
//!   inside the heap moves and leaves its old buffer freed but resident,
//!   and doubling leaves the fewest such holes (a smaller factor left RSS
//!   15 bytes per string higher, `benches/README.md`); its unused tail is
//!   never written, so not resident. Each record also holds its id (4
//!   bytes, once per string).
//! - **A hash table of locations.** A `hashbrown` [`HashTable`] holds
//!   5-byte slots, each a string's arena location and a copy of its
//!   record's length byte (the same as its id-index entry), so a lookup
//!   goes from the slot straight to the bytes (one dependent cache miss
//!   fewer than going through the id index) and reads the id beside them,
//!   and passes over a candidate of another length without reading its
//!   record at all (a cache miss into the arena on 12% of the `get`s that
//!   miss a 100k-string table; with the length in the slot, interleaved
//!   runs put `get` misses from 0.89x to 1.27x and hinted fills from 0.88x
//!   to 1.17x the best peer, for one byte per bucket). Keeping
//!   the id in the record rather than in the slot costs 4 bytes per string
//!   once instead of in every slot of a table that is at most 7/8 full,
//!   and halves the slots a lookup's cache misses land in. A string's
//!   bytes are stored once, in the arena, never as a second key. The table
//!   starts at [`INITIAL_TABLE_CAPACITY`] strings, the largest that fits
//!   one page, and doubles; growing re-hashes each string from the arena
//!   (about once per string over the table's life). Caching a hash per id
//!   would avoid that, but costs 4 bytes per string for a speed-up the
//!   fill benchmark does not need.
//! - [`StringTable::memory_usage`] counts all of it, and [`Limits`] caps it.
//!
//! [`HashTable`]: hashbrown::HashTable
//!
//! # Operations and their cost
//!
//! | operation | cost |
//! |---|---|
//! | [`intern`](StringTable::intern) / [`try_intern`](StringTable::try_intern), hit | hash the string, one probe, compare bytes with one candidate (almost always) |
//! | `intern`, miss | the above, plus a copy into the arena; amortised O(1) growth |
//! | [`intern_batch`](StringTable::intern_batch) | as `intern` per string, but on cache-resident tables a string passed again by the same slice takes its earlier id (no hash, no probe); on tables beyond the CPU caches, a lookup's cache misses overlap with those of the next 16 (two groups of 8 fetched ahead) |
//! | [`get`](StringTable::get) | as a hit; never inserts |
//! | [`resolve`](StringTable::resolve), `table[id]` | O(1): one index read, no hashing |
//! | [`iter`](StringTable::iter) | O(1) per string, in id order, sequential in memory |
//! | [`merge`](StringTable::merge) | as `intern` of the other table's strings, read in id order; on tables beyond the CPU caches, as `intern_batch` |
//! | [`compact`](StringTable::compact) | O(len) bit tests, plus a hash and a copy per kept string; no lookups |
//! | [`memory_usage`](StringTable::memory_usage), [`len`](StringTable::len) | O(1) |
//! | [`clear`](StringTable::clear) | O(chunks + hash table buckets); keeps all memory |
//! | [`reserve`](StringTable::reserve) / [`try_reserve`](StringTable::try_reserve) | nothing where there is room; else grows the index (a copy), re-hashes each string into a larger hash table, and adds one arena chunk |
//! | [`shrink_to`](StringTable::shrink_to) / [`shrink_to_fit`](StringTable::shrink_to_fit) | nothing within `max_bytes`; after `clear`, frees the chunks and reallocates one, plus the index and hash table; holding strings, copies the index and re-hashes each string into a smaller hash table |
//! | [`into_resolver`](StringTable::into_resolver) | frees the hash table; O(1) otherwise |
//!
//! # Errors and limits
//!
//! [`try_intern`](StringTable::try_intern) returns an [`Error`] whose
//! [`kind`](Error::kind) says which limit was hit or that an allocation
//! failed; the table's strings and ids are unchanged afterwards (capacity
//! reserved before the failure, within the limits, may remain).
//! [`intern`](StringTable::intern) panics with the same message in the
//! same cases, and only then.
//!
//! # Hashing
//!
//! The default hasher is hashbrown's `DefaultHashBuilder` (foldhash),
//! randomly seeded per table, so strings from untrusted sources (HTTP
//! labels, say) cannot be crafted to collide. Choose another with
//! [`Builder::hasher`].
//!
//! # Minimum supported Rust version
//!
//! Rust 1.93 (edition 2024). Raising it is a minor-version change.
//!
//! # Unsafe code
//!
//! The crate denies `unsafe_code` except in six places, each `unsafe`
//! block with a `// SAFETY:` comment, and the test suite runs under Miri
//! (with strict provenance) in CI:
//!
//! - the private arena module: writing records into bumpalo's
//!   uninitialised chunk memory through raw pointers (no zeroing pass, no
//!   pages touched before use), reading them back through a flat array of
//!   block addresses without a bounds check, skipping UTF-8 re-validation
//!   of bytes copied from a `&str`, and comparing strings of up to 64 bytes
//!   with SSE2 loads. They let the index and the hash table store 5-byte
//!   locations instead of 16-byte `&str`s without paying for them on every
//!   read. Measured with callgrind (`benches/callgrind.py`, instructions
//!   per operation): re-validating UTF-8 on each resolve costs 3.4x the
//!   instructions of the unchecked read; a bounds-checked block lookup
//!   costs 8% more on resolve (54.1 against 50.1), 4% on iteration and
//!   2.4 to 2.8% on interning and lookups; the inline comparison saves 2%
//!   on `get` hits and 7% on re-interning the WordPress profile's strings
//!   (105 against 113), against `memcmp`;
//! - reading a string with the length byte the id index keeps beside
//!   each record's location (`IdIndex::str_of` through `Store::str_of`,
//!   and `Store::fold` for iteration), so that `resolve` knows the length
//!   before the record's cache line arrives, and iteration never waits
//!   for one record before finding the next: the store makes every index
//!   entry itself, from the string it pushes, and the arena, which owns
//!   the index, stores every block's bases in it wherever it sets one
//!   (the index's own allocation, grown and shrunk by `IdIndex`, is raw
//!   memory: entries and bases at offsets it computes);
//! - the hash-table probe reading candidates' records through the
//!   locations in the table's slots (`table::find_probed`, calling the
//!   arena's `probe`): every slot is made from a location the arena
//!   returned for the string it stored there; its form for strings
//!   under 255 bytes filters candidates by the length as a byte, so its
//!   callers (`try_intern`, `get`, the batch's loop) promise that the
//!   string is that short, as they have just tested; and the hash
//!   table's growth, which re-hashes each string read through its slot's
//!   location (`table::rehash`, the hasher given to hashbrown). Every
//!   arena method that takes a location and reads through it (or looks
//!   up its block unchecked) is an `unsafe fn` whose contract is that the
//!   location came from the arena's `push`;
//! - a prefetch hint for [`StringTable::intern_batch`] (a no-op under
//!   Miri and off x86-64), at the record a slot's location names;
//! - `unsafe impl Sync for Arena` (so `StringTable`, `Iter` and `Resolver`
//!   are `Sync`): the only `!Sync` part of an arena is the `bumpalo::Bump`
//!   that owns its chunks, which no method taking `&self` touches (every
//!   allocation takes `&mut`);
//! - the shared table's lock-free id index (`shared/index.rs`) and hint
//!   cache (`shared/hints.rs`): segments and cache levels allocated
//!   zeroed (`shared/zeroed.rs`, so that pages the table never writes are
//!   never touched), leaked from and returned to `Box`, reading a record
//!   through the address the index published (`Arena::record_str`) or
//!   through a hint's location and its block's published bias
//!   (`Arena::id_if_biased`), after the `Acquire` load that makes its
//!   bytes visible, and indexing the shards' block biases without bounds
//!   checks; and its shard lock
//!   (`shared/lock.rs`): the value in an `UnsafeCell` reached only by the
//!   lock's holder, `Sync` for a `Send` value as `Mutex` is, and sleeping
//!   through `parking_lot_core` keyed by the lock's address. The publish
//!   protocols and the lock are model-checked with loom (`.ci/loom.sh`),
//!   the concurrent tests run under Miri and ThreadSanitizer
//!   (`.ci/tsan.sh`).

#[allow(unsafe_code)]
mod arena;
mod error;
mod id;
mod id_index;
mod iter;
mod limits;
mod ops;
pub mod pprof;
#[allow(unsafe_code)]
mod prefetch;
mod remap;
mod resolver;
#[allow(unsafe_code)]
mod shared;
mod shrink;
mod store;
mod table;
#[cfg(test)]
mod testing;

pub use arena::{
    CHUNK_FOOTER_SIZE, CHUNK_GROWTH_RATIO, CHUNK_OVERHEAD, FIRST_CHUNK_CAPACITY,
    MALLOC_HEADER_SIZE, MAX_ARENA_BYTES, MAX_CHUNK_CAPACITY, PAGE_SIZE,
};
pub use error::{Error, ErrorKind};
pub use id::StringId;
pub use iter::Iter;
pub use limits::Limits;
pub use ops::{BatchError, MergeError, MergeSource};
pub use remap::{IdSet, IdSetIter, Remap, RemapIter};
pub use resolver::Resolver;
pub use shared::{SharedBuilder, SharedStringTable};
pub use table::{Builder, INITIAL_INDEX_CAPACITY, INITIAL_TABLE_CAPACITY, StringTable};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
struct ReadmeDoctests;
