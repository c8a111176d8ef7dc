//! [`StringTable`]: the interner, and [`Builder`] to configure one.

use core::fmt;
use core::hash::{BuildHasher, Hasher};
use core::ops::Index;

use hashbrown::{DefaultHashBuilder, HashTable};

use crate::arena::tag_of;
use crate::arena::{Arena, FIRST_CHUNK_CAPACITY, MALLOC_HEADER_SIZE, MAX_BLOCK, PAGE_SIZE};
use crate::arena::{Found, LONG_LEN, Loc, Probe, records_bytes};
use crate::error::{Error, ErrorKind};
use crate::id::StringId;
use crate::id_index::PAIR_BYTES;
use crate::iter::Iter;
use crate::limits::Limits;
use crate::ops::RecentRest;
use crate::resolver::Resolver;
use crate::store::{ENTRY_BYTES, Store};

/// A hash-table slot: the location of a string's record, as
/// `Arena::push` returned it, and a copy of its length byte (the length
/// below 255 bytes, else the escape), 5 bytes, unaligned. The length lets
/// a lookup pass over a candidate of another length without reading its
/// record: on a `get` that misses a 100k-string table, 12% of lookups
/// meet such a candidate, and reading its record was a cache miss into
/// the arena. One byte per bucket more than a bare location. Made only by
/// [`Slot::of`] from a location `Arena::push` returned and the string it
/// stored there (or copied from such a slot), so the tag always matches
/// the record: `unsafe` reads rely on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Slot {
    loc: [u8; 4],
    tag: u8,
}

impl Slot {
    /// The slot of `""`'s record (location 0, length 0), which the shared
    /// table's shards hold.
    pub(crate) const EMPTY: Slot = Slot {
        loc: [0; 4],
        tag: 0,
    };

    /// The slot of `s`, which `Arena::push` stored at `loc`.
    #[inline(always)]
    pub(crate) fn of(loc: Loc, s: &str) -> Slot {
        Slot {
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

/// Bytes of a [`Slot`].
pub(crate) const SLOT_BYTES: usize = size_of::<Slot>();

/// Bytes of a hashbrown table of `buckets` slots: the slots (padded to
/// the 16-byte alignment of the control bytes that follow them), a
/// control byte each and a trailing group of control bytes. Saturates
/// instead of overflowing (for the byte figure of an error).
pub(crate) fn buckets_bytes(buckets: usize) -> usize {
    buckets
        .saturating_mul(SLOT_BYTES)
        .checked_next_multiple_of(16)
        .unwrap_or(usize::MAX)
        .saturating_add(buckets)
        .saturating_add(16)
}

/// Bytes of a hash table with room for `capacity` strings (saturating, as
/// [`buckets_bytes`]).
pub(crate) fn table_bytes_for(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    // hashbrown's `capacity_to_buckets`.
    let buckets = if capacity < 4 {
        4
    } else if capacity < 8 {
        8
    } else if capacity < 15 {
        16
    } else {
        (capacity.saturating_mul(8) / 7)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
    };
    buckets_bytes(buckets)
}

/// Id-index entries in a new table: one 4 KiB page including the
/// allocator's header and the bases of the first two arena blocks, which
/// the index keeps in front of its entries (809 five-byte entries on
/// 64-bit targets).
pub const INITIAL_INDEX_CAPACITY: usize =
    (PAGE_SIZE - MALLOC_HEADER_SIZE - INITIAL_INDEX_BLOCKS * PAIR_BYTES) / ENTRY_BYTES;

/// Blocks whose bases a new table's id index has room for: the static
/// empty block and the first chunk's (the block list doubles from 1 to 2).
pub(crate) const INITIAL_INDEX_BLOCKS: usize = 2;

/// Strings a new table's hash table holds before it first grows: 448, the
/// capacity of 512 buckets (a 5-byte slot, the record's location and a
/// copy of its length byte, plus 1 control byte each, 3,088 bytes), the
/// largest hashbrown table that fits in one 4 KiB page.
pub const INITIAL_TABLE_CAPACITY: usize = 448;

/// The hash of `s` the hash table is keyed by: the table's hasher fed the
/// string's bytes alone, all 64 bits, so hashbrown's bucket (low bits) and
/// control byte (top 7 bits) come from independent bits at every table
/// size.
///
/// This is `Hasher::write(s.as_bytes())` then `finish`, not
/// `hasher.hash_one(s)`: `str`'s `Hash` also writes a `0xFF` terminator,
/// which keeps a sequence of fields prefix-free but is of no use for one
/// key, and with foldhash (the default) it costs a second
/// folded multiply in `finish` on every lookup.
#[inline(always)]
pub(crate) fn hash_str<S: BuildHasher>(build: &S, s: &str) -> u64 {
    let mut h = build.build_hasher();
    h.write(s.as_bytes());
    h.finish()
}

/// Arena bytes for `strings` strings of `bytes` bytes in all: their
/// records ([`records_bytes`]), and a short string that does not
/// fit the end of a 64 KiB block leaves that tail unused (a longer one
/// usually runs on into the next block, `Arena::spill`).
pub(crate) fn arena_bytes_for(strings: usize, bytes: usize) -> usize {
    if bytes == 0 {
        return 0;
    }
    let tails = (bytes / MAX_BLOCK + 1).saturating_mul(256);
    records_bytes(strings, bytes).saturating_add(tails)
}

/// The table hash of the string at `loc`, for growing the hash table: it
/// reads the string from the arena. Tables grow by doubling, so each
/// string is re-hashed about once over the table's life.
///
/// # Safety
///
/// `loc` must be a location `arena.push` returned since the last `clear`
/// (as every slot of a hash table over `arena` holds: the callers pass it
/// as that table's hasher).
#[inline]
#[allow(unsafe_code)]
pub(crate) unsafe fn rehash<S: BuildHasher>(hasher: &S, arena: &Arena, loc: Loc) -> u64 {
    // SAFETY: the caller's contract.
    hash_str(hasher, unsafe { arena.str(loc) })
}

/// The id of `s` (not `""`) in `table`, a hash table of the locations of
/// records in `arena`, whose hash is `hash`: the lookup of
/// [`StringTable`]: [`Arena::probe`], candidates filtered by their length
/// byte, one full comparison; inlined for strings under [`LONG_LEN`] bytes
/// (all but a few in a profile), out of line for longer ones.
#[inline(always)]
pub(crate) fn find_slot(table: &HashTable<Slot>, arena: &Arena, hash: u64, s: &str) -> Option<u32> {
    find_slot_with(table, arena, hash, s, Found::id)
}

/// [`find_slot`] giving `hit(record)` of the record found: the lookup of
/// both [`StringTable`] (the id) and the shards of
/// [`SharedStringTable`](crate::SharedStringTable) (the id and the
/// record's address, for the hint cache). Each caller's `hit` is inlined
/// into its own copy, so the table's copy reads the id inside the probe.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn find_slot_with<'a, R>(
    table: &HashTable<Slot>,
    arena: &'a Arena,
    hash: u64,
    s: &str,
    hit: fn(Found<'a>) -> R,
) -> Option<R> {
    if s.len() >= LONG_LEN {
        return find_long_slot_outlined(table, arena, hash, s, hit);
    }
    // SAFETY: `s` is shorter than `LONG_LEN` bytes (tested above).
    unsafe { find_probed::<false, R>(table, arena, hash, s, hit) }
}

/// [`find_probed`] of a long string, out of the common path (`#[cold]`
/// for the layout of the callers' short path: without it, the shared
/// table's one-thread stream ran 0.9 more instructions per intern).
#[cold]
#[inline(never)]
#[allow(unsafe_code)]
fn find_long_slot_outlined<'a, R>(
    table: &HashTable<Slot>,
    arena: &'a Arena,
    hash: u64,
    s: &str,
    hit: fn(Found<'a>) -> R,
) -> Option<R> {
    // SAFETY: `find_probed::<true>` has no requirement on `s`.
    unsafe { find_probed::<true, R>(table, arena, hash, s, hit) }
}

/// [`find_slot_with`] of a string that `LONG` says is of [`LONG_LEN`]
/// bytes or more, or shorter: [`Arena::probe`], then, if its candidate is
/// another string, every candidate compared in full.
///
/// # Safety
///
/// With `LONG` false, `s` must be shorter than [`LONG_LEN`] bytes: the
/// probe would filter candidates by its length truncated to a byte and
/// read `s.len()` bytes of a shorter record. (With `LONG` true, a short
/// `s` only misses: a long candidate's own length is compared first.)
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn find_probed<'a, const LONG: bool, R>(
    table: &HashTable<Slot>,
    arena: &'a Arena,
    hash: u64,
    s: &str,
    hit: fn(Found<'a>) -> R,
) -> Option<R> {
    // SAFETY: every slot of a table is made by `Slot::of` from a location
    // `Arena::push` returned and the string it stored there, or copied
    // from the id index, whose entries are made the same way; tables and
    // index are emptied with the arena (`clear`, `shrink_to`). `LONG`
    // matches `s` as `probe` requires (this function's own contract).
    let probe = unsafe {
        arena.probe::<LONG, _, _>(
            table,
            hash,
            s.as_bytes(),
            |e| {
                let (loc, block) = e.loc_and_block();
                (loc, block, e.tag())
            },
            hit,
        )
    };
    match probe {
        Probe::Hit(r) => Some(r),
        Probe::Miss => None,
        Probe::Unsure => find_full_slot(table, arena, hash, s, hit),
    }
}

/// [`find_slot_with`] comparing every candidate in full: when the first
/// candidate with the right length byte is another string.
#[cold]
#[inline(never)]
#[allow(unsafe_code)]
fn find_full_slot<'a, R>(
    table: &HashTable<Slot>,
    arena: &'a Arena,
    hash: u64,
    s: &str,
    hit: fn(Found<'a>) -> R,
) -> Option<R> {
    // SAFETY: as in `find_probed`: the slots of a table hold locations its
    // arena's `push` returned since the last `clear` (tables are emptied
    // with their arena).
    table
        .find(hash, |e| unsafe { arena.holds(e.loc(), s.as_bytes()) })
        .map(|e| hit(unsafe { arena.found(e.loc()) }))
}

/// Whether `s` is neither `""` nor long (under [`LONG_LEN`] bytes): one
/// compare for both.
#[inline(always)]
pub(crate) fn is_short(s: &str) -> bool {
    s.len().wrapping_sub(1) < LONG_LEN - 1
}

/// The next id-index capacity: twice the current one, rounded so the
/// allocation plus the allocator's header is a whole number of pages.
///
/// Doubling, not a smaller factor, because of where the old buffers go:
/// once a process has freed a large block, glibc raises its `mmap`
/// threshold (up to 32 MiB), so the index is reallocated inside the heap,
/// where the arena chunks allocated after it box it in: each growth moves
/// it and leaves the old buffer behind, freed but resident. Growing by
/// 1.25x left about four times the final index in such holes (RSS 38 to
/// 40 bytes per string on the memory report's 100k strings, against 23
/// with doubling); doubling leaves at most the final size. The unused
/// tail this leaves at the end of the index is never written, so it is
/// not resident either.
///
/// The block bases the allocation holds in front of the entries,
/// `pair_bytes`, come out of the doubled entries' pages rather than
/// being added before the rounding: a few hundred bytes of bases that
/// pushed a doubling past a page boundary made it a tripling, and every
/// capacity after it half as large again (the memory report's 100k
/// strings then needed 156,784 entries where 104,764 had sufficed: 24.1
/// instead of 21.5 bytes per string).
fn next_index_capacity(cap: usize, pair_bytes: usize) -> usize {
    let bytes = cap
        .saturating_mul(2)
        .saturating_add(1)
        .saturating_mul(ENTRY_BYTES);
    let bytes =
        (bytes.saturating_add(MALLOC_HEADER_SIZE)).next_multiple_of(PAGE_SIZE) - MALLOC_HEADER_SIZE;
    (bytes.saturating_sub(pair_bytes) / ENTRY_BYTES).max(cap + 1)
}

/// An upper bound on the bytes a full hashbrown table allocates when it
/// grows: twice its buckets, each a 5-byte [`Slot`] plus a control byte,
/// plus a group of trailing control bytes and alignment.
pub(crate) fn table_growth_bound(current_allocation: usize) -> usize {
    current_allocation.saturating_mul(2).saturating_add(128)
}

/// A string interner for profilers: each unique string is stored once, in
/// an arena, and gets a dense [`StringId`] in insertion order, with
/// [`StringId::EMPTY`] (`""`) at 0.
///
/// See the [crate documentation](crate) for the memory model and the cost
/// of each operation.
///
/// # Examples
///
/// ```
/// use strtab::{StringId, StringTable};
///
/// let mut table = StringTable::new();
/// let main = table.intern("main");
/// let file = table.intern("src/main.rs");
/// assert_eq!(table.intern("main"), main); // a hit: same id, nothing stored
/// assert_eq!(&table[file], "src/main.rs");
/// assert_eq!(table.iter().collect::<Vec<_>>(), ["", "main", "src/main.rs"]);
/// ```
///
/// # Threads
///
/// A `StringTable` is [`Send`] and [`Sync`] (with a hasher that is), and
/// so is its [`Iter`]: hand it to an exporter thread, or
/// share it behind an [`RwLock`](std::sync::RwLock) so that readers
/// resolve in parallel between one writer's batches. When several threads
/// intern at once, [`SharedStringTable`](crate::SharedStringTable) takes
/// no lock on a hit.
///
/// ```
/// use std::sync::RwLock;
///
/// let table = RwLock::new(strtab::StringTable::new());
/// let id = table.write().unwrap().intern("main");
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| assert_eq!(table.read().unwrap().resolve(id), Some("main")));
///     }
/// });
/// ```
pub struct StringTable<S = DefaultHashBuilder> {
    pub(crate) store: Store,
    /// The strings' arena locations and length bytes (each record holds
    /// its id), keyed by the strings' hashes.
    pub(crate) table: HashTable<Slot>,
    pub(crate) hasher: S,
    pub(crate) limits: Limits,
    /// Whether `intern_batch` takes its recent-slice cache (`ops::Recent`).
    pub(crate) recent: RecentRest,
}

// Profilers hand a finished table to an exporter thread, several exporter
// threads may share one frozen table, readers may share a live one (in an
// `RwLock`), and an iterator may be sent to or held across `.await` in
// another thread's task.
const _: () = {
    const fn assert_send<T: Send>() {}
    const fn assert_sync<T: Sync>() {}
    assert_send::<StringTable>();
    assert_sync::<StringTable>();
    assert_send::<Resolver>();
    assert_sync::<Resolver>();
    assert_send::<Iter<'static>>();
    assert_sync::<Iter<'static>>();
};

/// Configures a [`StringTable`]: capacity hints, [`Limits`] and the hasher.
///
/// # Examples
///
/// ```
/// use strtab::{Limits, StringTable};
///
/// let table = StringTable::builder()
///     .capacity(10_000, 512 * 1024)
///     .limits(Limits::new().max_bytes(16 << 20))
///     .build();
/// assert_eq!(table.len(), 1);
/// ```
#[derive(Clone)]
#[must_use]
pub struct Builder<S = DefaultHashBuilder> {
    capacity: Option<(usize, usize)>,
    limits: Limits,
    hasher: S,
}

impl<S> fmt::Debug for Builder<S> {
    /// The capacity hint, the limits and the hasher's type: not the
    /// hasher itself, whose `Debug` may print its seeds (a table's
    /// defence against crafted collisions, which a logged configuration
    /// should not give away).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("capacity", &self.capacity)
            .field("limits", &self.limits)
            .field("hasher", &core::any::type_name::<S>())
            .finish()
    }
}

impl Builder {
    fn new() -> Builder {
        Builder::with_hasher(DefaultHashBuilder::default())
    }
}

impl<S> Builder<S> {
    pub(crate) fn with_hasher(hasher: S) -> Builder<S> {
        Builder {
            capacity: None,
            limits: Limits::new(),
            hasher,
        }
    }
}

impl<S: BuildHasher> Builder<S> {
    /// Pre-sizes the table for `strings` strings totalling `bytes` bytes
    /// (besides `""`, which every table holds), so that filling it to
    /// that size allocates nothing more, unless a
    /// string is 65,508 bytes or longer (on 64-bit targets: its record,
    /// with a 13-byte prefix, is over a quarter of the largest normal chunk,
    /// [`MAX_CHUNK_CAPACITY`](crate::MAX_CHUNK_CAPACITY)) and does not fit
    /// what is left of the current block: such a string gets an arena chunk of
    /// its own (see [`MAX_ARENA_BYTES`](crate::MAX_ARENA_BYTES)), whatever
    /// room the hint made. Without a hint, the table starts with
    /// page-tuned allocations (see the crate docs).
    ///
    /// A hint beyond [`Limits::max_strings`] is cut to it, the bytes in
    /// proportion; if the pre-sized footprint would exceed
    /// [`Limits::max_bytes`], the table starts without it and grows on
    /// demand. A hint of `u32::MAX` strings or more, which no table can
    /// number, is an error ([`ErrorKind::IdsExhausted`] from
    /// [`try_build`](Self::try_build), a panic from
    /// [`build`](Self::build)).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::builder().capacity(2, 64).build();
    /// let before = table.memory_usage();
    /// table.intern("a");
    /// table.intern("b");
    /// assert_eq!(table.memory_usage(), before);
    /// ```
    pub fn capacity(mut self, strings: usize, bytes: usize) -> Builder<S> {
        self.capacity = Some((strings, bytes));
        self
    }

    /// Sets the table's [`Limits`].
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::builder().limits(strtab::Limits::new().max_strings(10)).build();
    /// assert_eq!(table.limits().get_max_strings(), 10);
    /// ```
    pub fn limits(mut self, limits: Limits) -> Builder<S> {
        self.limits = limits;
        self
    }

    /// Uses `hasher` instead of the default (hashbrown's randomly seeded
    /// foldhash). A fixed-seed hasher makes runs reproducible but lets
    /// crafted input collide; keep a seeded one for untrusted strings. It
    /// must hash a string the same way for the table's whole life; one
    /// that does not (reseeded per call, or with state that changes)
    /// cannot corrupt memory, but a string may then get two ids or be
    /// missed by `get`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    ///
    /// let mut table = strtab::StringTable::builder()
    ///     .hasher(BuildHasherDefault::<DefaultHasher>::default())
    ///     .build();
    /// assert_eq!(table.intern("x").to_u32(), 1);
    /// ```
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> Builder<T> {
        Builder {
            capacity: self.capacity,
            limits: self.limits,
            hasher,
        }
    }

    /// Builds the table.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail, the capacity hint names
    /// `u32::MAX` strings or more, or its bytes are more than the arena
    /// can hold (about 2 GiB); [`Builder::try_build`] returns the error
    /// instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::builder().build();
    /// assert_eq!(table.len(), 1);
    /// ```
    #[track_caller]
    pub fn build(self) -> StringTable<S> {
        match self.try_build() {
            Ok(table) => table,
            Err(e) => panic!("{e}"),
        }
    }

    /// Builds the table, returning an error if the initial allocations fail.
    ///
    /// If the initial allocations would exceed the byte limit, the table
    /// starts with none and grows on demand.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AllocFailed`] if the allocator refuses,
    /// [`ErrorKind::CapacityOverflow`] for a byte hint beyond the arena's
    /// address space, or [`ErrorKind::IdsExhausted`] for a hint of
    /// `u32::MAX` strings or more. Only the table's fixed bookkeeping
    /// (under 100 bytes: the boxed `Bump` that `ouroboros` allocates and
    /// the block list's first entry) is allocated infallibly, like
    /// `Box::new`, and aborts if even that fails.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::builder().try_build()?;
    /// assert_eq!(table.len(), 1);
    /// # Ok::<(), strtab::Error>(())
    /// ```
    pub fn try_build(self) -> Result<StringTable<S>, Error> {
        let capacity = self
            .capacity
            .map(|(strings, bytes)| self.limits.clamp_hint(strings, bytes))
            .transpose()?;
        let (strings, bytes) = capacity
            .map(|(strings, bytes)| (strings.saturating_add(1), arena_bytes_for(strings, bytes)))
            .unwrap_or((INITIAL_INDEX_CAPACITY, FIRST_CHUNK_CAPACITY));
        let table_strings = capacity.map_or(INITIAL_TABLE_CAPACITY, |(s, _)| s);
        let (strings, bytes, table_strings) = if self.limits.get_max_bytes() == usize::MAX {
            (strings, bytes, table_strings)
        } else {
            // Estimate the footprint; start empty if it does not fit.
            let estimate = bytes
                .saturating_add(strings.saturating_mul(ENTRY_BYTES))
                .saturating_add(table_strings.saturating_mul(10))
                .saturating_add(PAGE_SIZE);
            if estimate <= self.limits.get_max_bytes() {
                (strings, bytes, table_strings)
            } else {
                (1, 0, 0)
            }
        };
        let out = Self::build_sized(self.hasher, self.limits, strings, bytes, table_strings)
            .map_err(|e| e.naming_hint(capacity, 1))?;
        // The estimate can be short (hash table sizes jump by doubling);
        // a table built over the limit starts empty instead.
        let mut out = if out.memory_usage() > self.limits.get_max_bytes() {
            let StringTable { hasher, .. } = out;
            Self::build_sized(hasher, self.limits, 1, 0, 0)?
        } else {
            out
        };
        // A byte limit below the empty table's footprint is raised to it.
        let floor = out.memory_usage();
        if out.limits.get_max_bytes() < floor {
            out.limits = out.limits.max_bytes(floor);
        }
        Ok(out)
    }
}

impl<S: BuildHasher> Builder<S> {
    /// A table with exactly these initial sizes.
    fn build_sized(
        hasher: S,
        limits: Limits,
        strings: usize,
        bytes: usize,
        table_strings: usize,
    ) -> Result<StringTable<S>, Error> {
        let arena = Arena::with_index(bytes, strings)?;
        let mut table = HashTable::new();
        table
            .try_reserve(table_strings, |_: &Slot| 0)
            .map_err(|_| Error::new(ErrorKind::AllocFailed, table_bytes_for(table_strings)))?;
        Ok(StringTable {
            store: Store::new(arena),
            table,
            hasher,
            limits,
            recent: RecentRest::NEW,
        })
    }
}

impl StringTable {
    /// An empty table (holding only `""`) with page-tuned initial
    /// allocations and the default, randomly seeded hasher.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see [`Builder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::new();
    /// assert_eq!(table.len(), 1);
    /// assert_eq!(table.resolve(strtab::StringId::EMPTY), Some(""));
    /// ```
    #[must_use]
    #[track_caller]
    pub fn new() -> StringTable {
        Builder::new().build()
    }

    /// An empty table pre-sized for `strings` strings totalling `bytes`
    /// bytes: filling it to that size allocates nothing more (strings of
    /// 65,508 bytes or more excepted, as for [`Builder::capacity`]).
    ///
    /// # Panics
    ///
    /// Panics if the allocations fail, `strings` is `u32::MAX` or more, or
    /// `bytes` is more than the arena can hold, about 2 GiB (see
    /// [`Builder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::with_capacity(100_000, 8 << 20);
    /// assert!(table.memory_usage() >= 8 << 20);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_capacity(strings: usize, bytes: usize) -> StringTable {
        Builder::new().capacity(strings, bytes).build()
    }

    /// An empty table that never grows past `limits`.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see [`Builder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{ErrorKind, Limits, StringTable};
    ///
    /// let mut table = StringTable::with_limits(Limits::new().max_bytes(64 << 10));
    /// while table.try_intern(&format!("label-{}", table.len())).is_ok() {}
    /// assert!(table.memory_usage() <= 64 << 10);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_limits(limits: Limits) -> StringTable {
        Builder::new().limits(limits).build()
    }

    /// A [`Builder`] to set capacity hints, limits and the hasher.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::builder().capacity(100, 4096).build();
    /// assert_eq!(table.len(), 1);
    /// ```
    pub fn builder() -> Builder {
        Builder::new()
    }
}

impl<S: BuildHasher> StringTable<S> {
    /// An empty table with page-tuned initial allocations and hasher
    /// `hasher` (as [`SharedStringTable::with_hasher`](crate::SharedStringTable::with_hasher)).
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see [`Builder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    ///
    /// let mut table = strtab::StringTable::with_hasher(BuildHasherDefault::<DefaultHasher>::default());
    /// assert_eq!(table.intern("a").to_u32(), 1);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_hasher(hasher: S) -> StringTable<S> {
        Builder::new().hasher(hasher).build()
    }
}

impl<S: BuildHasher + Default> StringTable<S> {
    /// An empty table with page-tuned initial allocations and hasher
    /// `S::default()`.
    ///
    /// # Panics
    ///
    /// Panics if the initial allocations fail (see [`Builder::try_build`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    ///
    /// let table = strtab::StringTable::<BuildHasherDefault<DefaultHasher>>::with_default_hasher();
    /// assert_eq!(table.len(), 1);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn with_default_hasher() -> StringTable<S> {
        Builder::new().hasher(S::default()).build()
    }
}

impl Default for StringTable {
    fn default() -> StringTable {
        StringTable::new()
    }
}

impl<S: BuildHasher> StringTable<S> {
    /// Interns `s`: returns its id, storing it first if the table does not
    /// hold it yet.
    ///
    /// # Panics
    ///
    /// Panics exactly where [`try_intern`](Self::try_intern) would return
    /// an error, with that error's message. Tables without [`Limits`] fail
    /// only when memory runs out or at the crate's fixed bounds (a string
    /// of 4 GiB or more, an arena past its 32,767 blocks, about 2 GiB, or
    /// `u32::MAX` ids: see [`ErrorKind`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let a = table.intern("alloc::vec::Vec<T>::push");
    /// assert_eq!(table.intern("alloc::vec::Vec<T>::push"), a);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn intern(&mut self, s: &str) -> StringId {
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
    /// [`ErrorKind::AllocFailed`] or [`ErrorKind::CapacityOverflow`]. After
    /// an error the table holds the same strings under the same ids, and
    /// every earlier id still resolves; capacity reserved before the
    /// failure (such as a grown id index) may remain, within the limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{ErrorKind, Limits, StringTable};
    ///
    /// let mut table = StringTable::with_limits(Limits::new().max_strings(2));
    /// let a = table.try_intern("a")?;
    /// assert_eq!(table.try_intern("a")?, a); // hits never fail
    /// assert_eq!(table.try_intern("b").unwrap_err().kind(), ErrorKind::IdsExhausted);
    /// assert_eq!(&table[a], "a");
    /// # Ok::<(), strtab::Error>(())
    /// ```
    #[inline(always)]
    #[allow(unsafe_code)]
    pub fn try_intern(&mut self, s: &str) -> Result<StringId, Error> {
        // One test sends both `""` and long strings off the common path.
        if !is_short(s) {
            // `""` is a profile's most common string (empty label values
            // and system names): no hash, no probe.
            if s.is_empty() {
                return Ok(StringId::EMPTY);
            }
            return self.intern_long(s);
        }
        let hash = hash_str(&self.hasher, s);
        // SAFETY: `s` is short (tested above).
        match unsafe { self.find_short(hash, s) } {
            Some(id) => Ok(id),
            None => self.insert_new::<false>(hash, s),
        }
    }

    /// [`try_intern`](Self::try_intern) of a string of [`LONG_LEN`] bytes
    /// or more.
    #[cold]
    #[inline(never)]
    pub(crate) fn intern_long(&mut self, s: &str) -> Result<StringId, Error> {
        let hash = hash_str(&self.hasher, s);
        match self.find_long(hash, s) {
            Some(id) => Ok(id),
            None => self.insert_new::<true>(hash, s),
        }
    }

    /// The id of `s` if the table holds it. Never inserts.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let id = table.intern("main");
    /// assert_eq!(table.get("main"), Some(id));
    /// assert_eq!(table.get("missing"), None);
    /// assert_eq!(table.get(""), Some(strtab::StringId::EMPTY));
    /// ```
    #[inline(always)]
    #[must_use]
    #[allow(unsafe_code)]
    pub fn get(&self, s: &str) -> Option<StringId> {
        if !is_short(s) {
            if s.is_empty() {
                return Some(StringId::EMPTY);
            }
            return self.get_long(s);
        }
        // SAFETY: `s` is short (tested above).
        unsafe { self.find_short(hash_str(&self.hasher, s), s) }
    }

    /// Whether the table holds `s`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.intern("main");
    /// assert!(table.contains("main"));
    /// assert!(!table.contains("other"));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains(&self, s: &str) -> bool {
        self.get(s).is_some()
    }

    /// Makes room for `strings` more strings totalling `bytes` bytes, as
    /// [`Builder::capacity`] does for a new table: interning that many new
    /// strings afterwards allocates nothing more (strings of 65,508 bytes
    /// or more excepted). For a table about to grow by a known amount: the
    /// next period's strings after [`clear`](Self::clear), or what the
    /// tables [`merge`](Self::merge)d into this one will add (which
    /// otherwise grows its hash table and index step by step, re-hashing
    /// at each step; reserve for the strings they add, not the sum of
    /// theirs, when they share strings).
    ///
    /// The id index and the hash table get room for `strings` more
    /// entries, and the arena room for their records in its current block
    /// and the empty blocks after it, with one chunk for what they lack.
    /// The arena's room assumes strings of about the average length
    /// (`bytes / strings`): a record that does not fit the end of a block
    /// runs on into the next one of the same allocation, so each run of
    /// such blocks (the current block's rest, blocks left empty, the new
    /// chunk) is counted an average record short of full, for the end
    /// the last record does not fit. A few strings far longer than the
    /// rest can still leave such ends unused and take a chunk (for 1,000
    /// strings of about 30 bytes with one in a hundred of 20 KB, they
    /// did); reserve for them as if all were that long, or alone. Strings
    /// of 65,508 bytes or more get no room in the arena: each takes a
    /// chunk of its own when interned. A request past
    /// [`Limits::max_strings`](crate::Limits::max_strings) is cut to it,
    /// its bytes in proportion; `reserve(n, 0)` makes room in the index
    /// and hash table only, as [`Builder::capacity`] does.
    ///
    /// # Panics
    ///
    /// Where [`try_reserve`](Self::try_reserve) returns an error.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.reserve(10_000, 410_000);
    /// let before = table.memory_usage();
    /// for i in 0..10_000 {
    ///     table.intern(&format!("function_{i:08}::frame_name_in_a_module"));
    /// }
    /// assert_eq!(table.memory_usage(), before);
    /// ```
    #[track_caller]
    pub fn reserve(&mut self, strings: usize, bytes: usize) {
        if let Err(e) = self.try_reserve(strings, bytes) {
            panic!("{e}");
        }
    }

    /// Like [`reserve`](Self::reserve), but returns an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::MemoryLimit`] if the room would take the table past
    /// [`Limits::max_bytes`](crate::Limits::max_bytes),
    /// [`ErrorKind::AllocFailed`] if the allocator refuses it, and
    /// [`ErrorKind::CapacityOverflow`] if `bytes` are more than the arena
    /// can hold, and [`ErrorKind::IdsExhausted`] for `u32::MAX` strings or
    /// more, which no table can number (as for a builder's hint). The
    /// strings and ids are unchanged either way; room made
    /// before the failure (in the index, say) may remain, within the
    /// limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{ErrorKind, Limits, StringTable};
    ///
    /// let mut table = StringTable::with_limits(Limits::new().max_bytes(1 << 20));
    /// let err = table.try_reserve(1_000, 8 << 20).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::MemoryLimit);
    /// table.try_reserve(1_000, 64 << 10)?;
    /// # Ok::<(), strtab::Error>(())
    /// ```
    pub fn try_reserve(&mut self, strings: usize, bytes: usize) -> Result<(), Error> {
        let len = self.store.len();
        // As a builder's hint: `u32::MAX` strings or more are refused, and
        // more than the limits leave would be refused anyway.
        let (strings, bytes) = self.limits.clamp_hint(strings, bytes)?;
        let room = self.limits.get_max_strings().saturating_sub(len);
        let (strings, bytes) = crate::limits::cut_hint(strings, bytes, room);
        let max_bytes = self.limits.get_max_bytes();
        // The arena first: its room is the most likely to be refused.
        let budget = self.byte_budget();
        self.store
            .arena
            .reserve(strings, bytes, budget)
            .map_err(|e| e.naming_limit(max_bytes))?;
        let mut budget = self.byte_budget();
        self.reserve_index_within(len + strings, &mut budget)?;
        let slots = self.table.len() + strings;
        self.reserve_table_within(slots, table_bytes_for(slots), &mut budget)
    }

    /// Heap bytes the table may still allocate under its byte limit
    /// (without one, there is no footprint to compute).
    pub(crate) fn byte_budget(&self) -> usize {
        let max_bytes = self.limits.get_max_bytes();
        if max_bytes == usize::MAX {
            usize::MAX
        } else {
            max_bytes.saturating_sub(self.memory_usage())
        }
    }

    /// Grows the id index to room for `entries` entries if it has less,
    /// the bytes it adds within `budget`, which is charged them.
    fn reserve_index_within(&mut self, entries: usize, budget: &mut usize) -> Result<(), Error> {
        if entries <= self.store.index_capacity() {
            return Ok(());
        }
        let cost = self.store.index_growth(entries);
        if cost > *budget {
            return Err(self.limits.memory_error(cost));
        }
        self.store
            .try_reserve_index(entries - self.store.len())
            .map_err(|_| Error::new(ErrorKind::AllocFailed, entries.saturating_mul(ENTRY_BYTES)))?;
        *budget = budget.saturating_sub(cost);
        Ok(())
    }

    /// Rebuilds the hash table with room for `slots` strings if it has
    /// less. The new table, at most `cost` bytes, is allocated while the
    /// old one is held, so `cost` must be within `budget`, which is then
    /// charged what the table grew by.
    fn reserve_table_within(
        &mut self,
        slots: usize,
        cost: usize,
        budget: &mut usize,
    ) -> Result<(), Error> {
        if slots <= self.table.capacity() {
            return Ok(());
        }
        if cost > *budget {
            return Err(self.limits.memory_error(cost));
        }
        let before = self.table.allocation_size();
        self.table = self
            .rebuilt_table(slots)
            .ok_or_else(|| Error::new(ErrorKind::AllocFailed, cost))?;
        *budget = budget.saturating_sub(self.table.allocation_size() - before);
        Ok(())
    }

    /// The id of `s` (not `""`, which is not in the hash table), whose
    /// hash is `hash`, if the table holds it (see [`find_slot`]).
    #[inline(always)]
    pub(crate) fn find(&self, hash: u64, s: &str) -> Option<StringId> {
        find_slot(&self.table, &self.store.arena, hash, s).map(StringId::from_u32)
    }

    /// [`find`](Self::find) of a string known to be shorter than
    /// [`LONG_LEN`] bytes.
    ///
    /// # Safety
    ///
    /// `s` must be shorter than [`LONG_LEN`] bytes (as [`is_short`]
    /// tests), as for `find_probed::<false>`.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn find_short(&self, hash: u64, s: &str) -> Option<StringId> {
        // SAFETY: the caller's guarantee.
        unsafe { find_probed::<false, _>(&self.table, &self.store.arena, hash, s, Found::id) }
            .map(StringId::from_u32)
    }

    /// [`get`](Self::get) of a string of [`LONG_LEN`] bytes or more, hashed
    /// and looked up out of the callers' loops.
    #[cold]
    #[inline(never)]
    fn get_long(&self, s: &str) -> Option<StringId> {
        self.find_long(hash_str(&self.hasher, s), s)
    }

    /// [`find`](Self::find) of a string of [`LONG_LEN`] bytes or more:
    /// the probe that [`get_long`](Self::get_long) and
    /// [`intern_long`](Self::intern_long), both out of the callers'
    /// loops, inline (a call of its own cost a long string's intern 25
    /// instructions, hot-path lever 75 in `benches/README.md`).
    #[inline(always)]
    #[allow(unsafe_code)]
    fn find_long(&self, hash: u64, s: &str) -> Option<StringId> {
        // SAFETY: `find_probed::<true>` has no requirement on `s`.
        unsafe { find_probed::<true, _>(&self.table, &self.store.arena, hash, s, Found::id) }
            .map(StringId::from_u32)
    }

    /// Stores a string known to be absent.
    ///
    /// The common case is [`insert_in_place`](Self::insert_in_place), one
    /// call; anything else goes to [`insert_slow`](Self::insert_slow).
    /// With `LONG` false any string (a long one always takes the slow
    /// path), with `LONG` true one of [`LONG_LEN`] bytes or more.
    #[inline(always)]
    pub(crate) fn insert_new<const LONG: bool>(
        &mut self,
        hash: u64,
        s: &str,
    ) -> Result<StringId, Error> {
        match self.insert_in_place::<LONG>(hash, s) {
            Some(id) => Ok(id),
            None => self.insert_slow(hash, s),
        }
    }

    /// The common case of [`insert_new`](Self::insert_new), with no call
    /// inside: the id is within the limit, the index and the hash table
    /// have room, and the string is short (with `LONG` false) or of
    /// [`LONG_LEN`] bytes or more (with `LONG` true, from
    /// [`intern_long`](Self::intern_long)), either form giving `None` for
    /// the other, and fits the arena's current block. Nothing is allocated
    /// then, so no byte limit can be crossed. `None` (nothing changed)
    /// sends the caller to the slow path.
    ///
    /// Out of line, so that the lookups inlined into a caller's loop keep
    /// their registers, and answering in a register: a
    /// `Result<StringId, Error>` comes back through memory (256 -> 250).
    /// Inlined, it made insertions faster but the hits, almost every call
    /// a profiler makes, slower: `fill-hint` took 235 instructions per
    /// string instead of 256 and 0.85x-0.89x the time, while a replayed
    /// profile's loop that stores each id spilled two pointers (117.7
    /// instead of 115.7 per call) and the replays took 1.03x the time
    /// (median of 13 comparisons, 0.99x-1.07x; hot-path levers 39 and 54,
    /// `benches/README.md`).
    #[inline(never)]
    #[allow(unsafe_code)]
    fn insert_in_place<const LONG: bool>(&mut self, hash: u64, s: &str) -> Option<StringId> {
        let n = self.store.len();
        let store = &mut self.store;
        if n < self.limits.get_max_strings()
            && n < store.index_capacity()
            && self.table.len() < self.table.capacity()
            // `max_strings <= u32::MAX`, so the id fits.
            && let Some(loc) = store.push_in_place::<LONG>(s, n as u32)
        {
            let id = n as u32;
            let (arena, hasher) = (&store.arena, &self.hasher);
            let hash_slot = |e: &Slot| {
                // SAFETY: the table's slots hold locations the arena's
                // `push` returned since the last `clear`.
                unsafe { rehash(hasher, arena, e.loc()) }
            };
            self.table.insert_unique(hash, Slot::of(loc, s), hash_slot);
            return Some(StringId::from_u32(id));
        }
        None
    }

    /// [`insert_new`](Self::insert_new) when something must grow (or a
    /// limit is reached): reserves room in the index and the hash table
    /// within the byte budget, then copies the string.
    #[cold]
    #[inline(never)]
    #[allow(unsafe_code)]
    fn insert_slow(&mut self, hash: u64, s: &str) -> Result<StringId, Error> {
        let n = self.store.len();
        if n >= self.limits.get_max_strings() {
            return Err(Error::new(ErrorKind::IdsExhausted, n));
        }
        let id = u32::try_from(n).map_err(|_| Error::new(ErrorKind::IdsExhausted, n))?;
        let mut budget = self.byte_budget();

        // Reserve room in the index and the hash table first, so that the
        // final pushes cannot fail; then copy the bytes into the arena.
        let table_full = self.table.len() == self.table.capacity();
        // Twice the buckets, as hashbrown's own growth would give.
        let table_bound = table_growth_bound(self.table.allocation_size());
        let cap = self.store.index_capacity();
        if self.store.len() == cap {
            let mut new_cap = next_index_capacity(cap, self.store.index_pair_bytes_grown());
            let push_need = self.store.arena.push_need(s.len());
            // Strings the hash table holds without growing, `""` (in the
            // index only) included.
            let table_room = self.table.capacity() + 1;
            let table_grows = new_cap > table_room;
            // Near a byte limit, the index takes at most half of what the
            // hash table's growth (if it cannot hold as many strings) and
            // this string's chunk (if it needs one) leave, at least this
            // string's entry: a doubling that took all of it left later
            // strings no room in the hash table or the arena (a limit of
            // 4,160 bytes took no string where 4,144 took 84).
            let others = if table_grows { table_bound } else { 0 }.saturating_add(push_need);
            let spare = budget.saturating_sub(others) / 2;
            if table_grows && others > budget {
                // The hash table can no longer grow (the budget only
                // shrinks as strings are added): the index grows towards
                // its room by the strings that the arena's free room and
                // an eighth of the budget hold, each its record (the
                // average so far) and its entry, within half the budget.
                // Until 2026-12-06 it grew by one entry per string, each
                // a reallocation of the whole index: 90,456 of them
                // filling a table limited to 64 MiB with 20-byte strings
                // (82 this way), 78 s to fill 32 MiB with an allocator
                // whose `realloc` copies (0.56 s this way). A larger share
                // of the budget took fewer strings at some limits: the
                // entries reserved left the last chunk no room.
                let (used, room) = self.store.arena.record_bytes_and_room();
                let after_chunk = budget.saturating_sub(push_need);
                let strings = (room + after_chunk / 8) / (used / cap + ENTRY_BYTES) + 1;
                let half = after_chunk / 2 / ENTRY_BYTES;
                new_cap = table_room.min(cap + strings.min(half)).max(cap + 1);
            } else if (new_cap - cap).saturating_mul(ENTRY_BYTES) > spare {
                new_cap = cap + (spare / ENTRY_BYTES).max(1);
            }
            self.reserve_index_within(new_cap, &mut budget)?;
        }
        if table_full {
            self.reserve_table_within(self.table.capacity() + 1, table_bound, &mut budget)?;
        }
        let max_bytes = self.limits.get_max_bytes();
        let loc = self
            .store
            .push(s, id, budget)
            .map_err(|e| e.naming_limit(max_bytes))?;
        let (arena, hasher) = (&self.store.arena, &self.hasher);
        let hash_slot = |e: &Slot| {
            // SAFETY: as in `insert_in_place`.
            unsafe { rehash(hasher, arena, e.loc()) }
        };
        self.table.insert_unique(hash, Slot::of(loc, s), hash_slot);
        Ok(StringId::from_u32(id))
    }

    /// A hash table with room for `capacity` strings holding every
    /// string's slot but `""`'s (its id-index entry), or `None` if the
    /// allocation fails (the table is unchanged). For growing and
    /// shrinking the hash table.
    ///
    /// The locations are inserted in id order, which is the order the
    /// records were appended to the arena, so the strings are re-hashed
    /// reading the arena front to back: hashbrown's own resize re-hashes in
    /// bucket order, a random walk over the arena with a cache miss per
    /// string once it outgrows the caches. The peak memory is the same
    /// (both tables until the old one is dropped).
    #[cold]
    #[allow(unsafe_code)]
    pub(crate) fn rebuilt_table(&self, capacity: usize) -> Option<HashTable<Slot>> {
        let (arena, hasher) = (&self.store.arena, &self.hasher);
        // SAFETY: the new table's slots, copied from the index below, hold
        // locations the arena's `push` returned since the last `clear`.
        let rehash = |e: &Slot| unsafe { rehash(hasher, arena, e.loc()) };
        let mut table = HashTable::new();
        table
            .try_reserve(capacity.max(self.table.len()), rehash)
            .ok()?;
        let store = &self.store;
        // Without the long strings' links: see `fold_located`.
        store.fold_located::<false, _>(1, store.len(), (), |(), loc, s| {
            // Reserved above: no growth, so the hasher is never called.
            table.insert_unique(hash_str(hasher, s), Slot::of(loc, s), rehash);
        });
        debug_assert_eq!(
            table.len(),
            self.table.len(),
            "every string but \"\" is in the table"
        );
        Some(table)
    }
}

impl<S> StringTable<S> {
    /// The string of `id`, or `None` if this table never gave out `id`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let id = table.intern("main");
    /// assert_eq!(table.resolve(id), Some("main"));
    /// assert_eq!(table.resolve(strtab::StringId::from_u32(99)), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn resolve(&self, id: StringId) -> Option<&str> {
        self.store.resolve(id)
    }

    /// Number of strings, `""` included (so never 0). The ids in use are
    /// exactly `0..len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// assert_eq!(table.len(), 1);
    /// table.intern("a");
    /// assert_eq!(table.len(), 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the table holds only `""`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(strtab::StringTable::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// The strings in id order, `""` first: the order of a pprof
    /// `string_table`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.intern("a");
    /// table.intern("b");
    /// assert_eq!(table.iter().rev().collect::<Vec<_>>(), ["b", "a", ""]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(&self.store)
    }

    /// Every heap byte the table holds: arena chunks with bumpalo's chunk
    /// footers, the id index, the hash table and the arena's bookkeeping.
    /// Bytes are counted as requested from the global allocator (its own
    /// per-allocation headers are not included).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::new();
    /// // Page-tuned: a 16 KiB arena chunk, a 4 KiB index, a hash table.
    /// assert!(table.memory_usage() > 16 << 10 && table.memory_usage() < 24 << 10);
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.store.heap_bytes() + self.table.allocation_size()
    }

    /// The table's limits (with a byte limit below the empty table's
    /// footprint raised to it).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::StringTable::new().limits(), strtab::Limits::new());
    /// ```
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The table's hasher.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::new();
    /// let _hasher = table.hasher();
    /// ```
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Removes every string but `""`; ids restart at 1. The arena chunks,
    /// the index and the hash table keep their memory: refilling the table
    /// with the same strings in the same order allocates nothing and hands
    /// out the same ids, and other strings of the same sizes allocate
    /// nothing either (strings of 65,508 bytes or more excepted: each takes
    /// a chunk of its own again, unless an empty block is large enough).
    ///
    /// Every id given out before is invalidated: it resolves to a new
    /// string or to nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.intern("old");
    /// let memory = table.memory_usage();
    /// table.clear();
    /// assert_eq!(table.len(), 1);
    /// assert_eq!(table.get("old"), None);
    /// table.intern("new");
    /// assert_eq!(table.memory_usage(), memory);
    /// ```
    pub fn clear(&mut self) {
        self.table.clear();
        self.store.clear();
    }

    /// Freezes the table into a [`Resolver`]: drops the hash table first
    /// (lowering peak memory while an encoder runs) and keeps id-to-string
    /// resolution and id-order iteration. Dropping the resolver frees the
    /// arena.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let id = table.intern("main");
    /// let resolver = table.into_resolver();
    /// assert_eq!(&resolver[id], "main");
    /// assert_eq!(resolver.iter().collect::<Vec<_>>(), ["", "main"]);
    /// ```
    #[must_use]
    pub fn into_resolver(self) -> Resolver {
        let StringTable { store, table, .. } = self;
        drop(table);
        Resolver::new(store)
    }
}

/// The panic of `intern` where `try_intern` returns `e` (shared with
/// [`SharedStringTable`](crate::SharedStringTable)).
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn intern_failed(e: &Error) -> ! {
    panic!("{e}")
}

impl<S> Index<StringId> for StringTable<S> {
    type Output = str;

    /// # Panics
    ///
    /// Panics if this table never gave out `id`.
    #[inline]
    #[track_caller]
    fn index(&self, id: StringId) -> &str {
        match self.resolve(id) {
            Some(s) => s,
            None => crate::resolver::unknown_id(id, self.len()),
        }
    }
}

impl<'a, S> IntoIterator for &'a StringTable<S> {
    type Item = &'a str;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Interns every string of an iterator, in order, as
/// [`intern`](StringTable::intern) one by one (the ids are not returned:
/// [`get`](StringTable::get) finds them, or use
/// [`intern_batch`](StringTable::intern_batch) to have them written out).
///
/// # Panics
///
/// As [`intern`](StringTable::intern): where
/// [`try_intern`](StringTable::try_intern) would fail. The strings before
/// the one that failed stay interned.
///
/// # Examples
///
/// ```
/// let mut table = strtab::StringTable::new();
/// table.extend(["main", "/src/main.rs", "main"]);
/// assert_eq!(table.len(), 3);
/// assert_eq!(table.get("/src/main.rs").map(|id| id.to_u32()), Some(2));
/// ```
impl<S: BuildHasher, T: AsRef<str>> Extend<T> for StringTable<S> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for s in iter {
            self.intern(s.as_ref());
        }
    }
}

/// A table of an iterator's strings, ids in the order they first appear,
/// interned as its `Extend` does.
///
/// # Examples
///
/// ```
/// let table: strtab::StringTable = "b a b c".split(' ').collect();
/// assert_eq!(table.iter().collect::<Vec<_>>(), ["", "b", "a", "c"]);
/// ```
impl<T: AsRef<str>> FromIterator<T> for StringTable {
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> StringTable {
        let mut table = StringTable::new();
        table.extend(iter);
        table
    }
}

impl<S> fmt::Debug for StringTable<S> {
    /// A summary: the number of strings and the memory held, never the
    /// strings themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StringTable")
            .field("len", &self.len())
            .field("memory_usage", &self.memory_usage())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Armed;

    /// A reservation's sizes do not overflow where `usize` is 32 bits
    /// (`.ci/miri32.sh`): a billion strings, or 2 GiB of them, is an error,
    /// not a panic, and changes no string.
    #[test]
    #[cfg(target_pointer_width = "32")]
    fn reserve_sizes_saturate_on_32_bit() {
        let mut t = StringTable::new();
        let a = t.intern("a");
        for (strings, bytes) in [(1_000_000_000, 0), (1_000_000_000, 1 << 31)] {
            let e = t.try_reserve(strings, bytes).unwrap_err();
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::AllocFailed | ErrorKind::CapacityOverflow
                ),
                "{strings}, {bytes}: {e}"
            );
            assert_eq!((t.len(), &t[a]), (2, "a"));
        }
    }

    /// A user hasher that panics while the hash table grows (it re-hashes
    /// every string, `"boom"` among them) leaves the table as it was: the
    /// string that was being interned got no id, every other string keeps
    /// its id, and interning goes on with dense ids.
    #[test]
    fn a_panicking_hasher_leaves_the_table_usable() {
        let armed = Armed::default();
        let mut t = StringTable::builder().hasher(armed.clone()).build();
        let boom = t.intern("boom");
        armed.arm(true);
        let mut i = 0;
        let (failed, len) = loop {
            let s = format!("s{i}");
            let (len, full) = (t.len(), t.table.len() == t.table.capacity());
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.intern(&s)));
            if r.is_err() {
                assert!(full, "only the growth's re-hash meets \"boom\"");
                break (s, len);
            }
            i += 1;
        };
        assert!(i > 100, "the first growth comes after the first page");
        assert_eq!(t.table.len(), len - 1, "no slot was added");
        assert_eq!(t.len(), len);
        assert_eq!(t.get(&failed), None);
        for j in 0..i {
            assert_eq!(t.get(&format!("s{j}")).map(|id| id.index()), Some(j + 2));
        }
        armed.arm(false);
        assert_eq!(t.get("boom"), Some(boom));
        assert_eq!(t.intern(&failed).index(), len);
        assert_eq!(t.iter().nth(len), Some(failed.as_str()));
        assert_eq!(t.iter().count(), len + 1);
    }
}
