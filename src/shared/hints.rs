//! The lock-free hit path of a [`SharedStringTable`](crate::SharedStringTable):
//! a four-way set-associative cache from a string's hash to its record,
//! whose full sets lend their strings the free ways of the other three
//! sets of their cache line,
//! read with plain atomic loads, so that a hit on a hot string writes no
//! memory another thread uses (a shard lock, even uncontended, is a write
//! to a line the other threads' hits also write).
//!
//! An entry is 4 bytes: the record's location in its shard's arena
//! (`arena::Loc`: block number and offset, 24 bits, so the shard's first
//! [`HINTED_BLOCKS`] blocks), complemented, under an 8-bit tag (bits 25
//! to 31 of the string's 64-bit hash over a bit forced to 1, so that no
//! tag matches an empty, zero, entry; see [`want_of`]). The set of four
//! entries (16 bytes, never across two cache lines) is chosen by the
//! shard bits (`shard::hash_of`: bits
//! 40 and up of the hash times an odd constant, which come scaled by 16,
//! a set's size, so that masked they are the set's byte offset), whose
//! lowest two bits pick the set within its cache line ([`Line`]) and the
//! bits above them the shard: a level has at least four sets per shard,
//! so every string of a line is of one shard, and an entry's location is
//! read in the arena of the shard of the string looked up. Each shard
//! publishes the bias (base address, offset by the block number) of each
//! of its first blocks
//! ([`Hints::publish_block`], once per block, before any hint names it):
//! the record is the bias plus the location. A hit so reads the entry,
//! the block's bias (an array of 2 KiB per shard, whose used part stays
//! in L1; the arrays staggered across the L1's sets, see [`BlockBases`]),
//! then the record, which holds the string and its id: two loads that can
//! miss, as a `StringTable` hit (the hash slot, then the record). The
//! set mask of the level in use sits beside its pointer, and a static
//! empty level stands in before the first, so a lookup loads the pointer
//! and the mask side by side, then the set, with no null test (see
//! [`Hints::level`]). The four ways are compared without a
//! branch per way (the smallest entry xor the tag, see [`Hints::get`]).
//!
//! History (the measurements are in `benches/README.md`): until
//! 2026-12-02 an entry was the record's 8-byte address with a 16-bit tag,
//! in two-way sets (64Ki entries in the same bytes); then the packed slot
//! of the id's index entry (4 bytes, four ways, 128Ki entries), which
//! answered 92.6% of the hits against 78.8% but made a hit read the index
//! entry between the hint and the record, a third dependent load that
//! can miss. Locations keep the 4-byte entries and drop that load: one
//! thread of the concurrent stream took 1.305x `StringTable`'s time
//! instead of 1.435x (medians of 12 alternated runs), for 1.5 more
//! instructions per intern (the shard's bias lookup).
//!
//! A string found only in the shard's table is put in its set's first
//! empty way, else in the last, and a hit writes nothing, in any way. The
//! first ways so keep the first strings looked up in their set after the
//! level was installed (a draw weighted by how often strings are
//! interned: hot ones, most often), and a string looked up once only
//! evicts another such one from the last way. (With two ways, a hit in
//! the second way swapping the two answered 78.6% of the hits against
//! 78.8% without, for a write on 16.5% of the interns, each one taking the
//! line from every other core that holds it.) Measured and not kept
//! (`benches/README.md`): 8-byte entries in 4- and 8-way sets, new levels
//! starting with the old one's hints while entries were 8 bytes (with
//! the 4-byte ones, the carry-over below is kept), switching levels
//! earlier, and sending the strings a full set turns away on to other
//! sets of their shard in other cache lines (fewer locked hits, but
//! every miss whose set is full then tests another line; session 41).
//! Since session 51 they go to the other sets of their own line, below.
//!
//! A string whose own set is full takes the first empty way of the
//! other three sets of its line ([`Hints::put`]), where the locked path
//! looks before it takes the lock ([`Hints::get_in_line`], only when the
//! string's own set is full: a string is put in its own set while that
//! has room, and ways are never emptied). The inlined hit still reads one
//! set; the line is in the L1 from that read. With 100k strings in the
//! last level's 128Ki entries (3.05 strings per set), 11% of uniformly
//! hashed strings find no room in their set, 2.3% none in their line
//! (Poisson): one thread of the concurrent benchmark's stream went to
//! its shard's lock for 3.0k hits instead of 16.5k per 1M interns (13.8k
//! found in the line), and for 7.2k instead of 31.7k when interning the
//! stream into a table that already held it (`profile
//! thread-stream-warm`; a locked hit cost about 110 ns more than a hinted
//! one on a 2-vCPU Intel Xeon VM: 3.1% of the interns forced to the lock
//! took that stream 7% longer).
//! The cost: the test of the own set and, when it is full, the three
//! other sets' compares, on every call that misses the hint (callgrind,
//! `thread-stream`: 177.4 -> 181.7 instructions per intern). Until
//! 2026-12-07 a string's set was its only one (and the shard was the
//! set's lowest bits, so that the sets of a line were of different
//! shards). The measurements are in `benches/README.md` (session 51).
//!
//! An entry is only a hint: a reader compares the record's bytes with its
//! string, so a stale, overwritten or colliding entry costs a fall-back to
//! the shard's hash table (the authority), never a wrong id. Two strings
//! of one set whose 7-bit tags match can both hold a way, and `get` then
//! offers the smaller location only: while both stay, every intern of the
//! newer string takes the fall-back and puts its hint once more. On the
//! concurrent benchmark's stream that was 3.7k of 1M interns (one thread);
//! trying the set's other ways of the tag on a failed comparison, or
//! keeping one way per tag, cost more instructions than those calls
//! (`benches/README.md`, session 22). Entries are
//! stored with `Release` after the record was written and its block's
//! bias published, by a thread that wrote them or found the record under
//! the shard's lock (taken after the writer released it), and loaded with
//! `Acquire`: the reader sees the bias and the record's bytes. Blocks and
//! their biases never move or die before the table, and levels are freed
//! only with it, so the location in any entry stays valid.
//!
//! The cache grows with the table in levels of 4x (2K, 8K, 32K, 128K
//! entries: 8 KiB to 512 KiB), switched to when the table holds more
//! strings than half the current level's entries (checked when a
//! power-of-two id is given out, so at 1Ki, 4Ki and 16Ki strings: see
//! [`level_fill`]). The thread that installs a
//! level then carries the old level's hints over ([`Hints::carry_over`]:
//! each hint re-hashed from its record, at most the old level's 32Ki
//! entries (16Ki strings, some twice if two threads put the same one),
//! once per level, after the growth lock is released, which also keeps the byte
//! count right should a user's hasher panic), so that the strings hinted
//! before the switch are not all sent to their shard's lock once more: on
//! the concurrent benchmark's stream (one thread, 100k strings) locked
//! calls went from 170k to 134k per 1M interns, and instructions from
//! 175.5 to 174.6 per intern. Earlier levels are kept until the table is
//! dropped, so a reader never sees memory freed under it (a third more
//! memory at most).
//! A level that would take more than half of what the byte limit leaves
//! is simply not added: the cache only speeds up hits, and the strings
//! need the room more.

use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

use super::shard::shard_index;
use super::zeroed::{Zeroable, zeroed_slice};
use crate::arena::{LOCAL_BITS, Loc};
use crate::error::{Error, ErrorKind};

/// Bits of an entry's location: the other 8 are the tag. 24
/// bits: a shard's first 256 blocks, about 14 MiB of strings (blocks hold
/// up to 64 KiB, and a shard's first chunks, a block each, are smaller:
/// see `shard::SHARD_DOUBLING_CAP`). Until 2026-12-03: 64 blocks of up to
/// 256 KiB, then 256 blocks of 64 KiB from the first (16 MiB); the block
/// biases grew from 512 bytes to 2 KiB per shard to keep about the hinted
/// bytes.
const PAYLOAD_BITS: u32 = 24;
/// Blocks per shard whose records the cache can hold: those whose
/// locations fit [`PAYLOAD_BITS`].
pub(crate) const HINTED_BLOCKS: usize = 1 << (PAYLOAD_BITS - LOCAL_BITS);

/// One shard's block biases (see [`Hints::publish_block`]), null until
/// published; on cache lines of their own, then one line of padding.
///
/// The padding staggers the shards' arrays: 33 lines apart, the biases of
/// the shards' first blocks, which a small table's hits all read, fall in
/// different sets of the L1 (64 sets of 64-byte lines, whose set is
/// address bits 6 to 11). Without it (until 2026-12-06) they were 2 KiB
/// apart, in only two sets, which hold 8 lines each on x86 cores: with 16
/// shards or more, a hit's bias load missed the L1 on most calls
/// (callgrind's cache simulation of one thread replaying the Go
/// profile's intern calls, `benches/README.md`: L1 data read misses
/// 299k -> 243k at 16 shards, 440k -> 264k at 64, against 243k -> 238k
/// at 8 and `StringTable`'s 183k). A block-major array (the biases of
/// block `b` of every shard side by side) saved a little more at 64
/// shards (240k) but cost three instructions per hit (the block number
/// times the shard count, plus the shard).
#[repr(C, align(64))]
pub(crate) struct BlockBases([AtomicPtr<u8>; HINTED_BLOCKS], [u8; 64]);

// SAFETY: an array of `AtomicPtr`s, each with the representation of a
// pointer, for which all-zero bytes are null (not published), then bytes,
// any value of which is valid.
unsafe impl Zeroable for BlockBases {}

// `Hints::bias` scales shard bits, which count in lines of sets, into
// bytes of `BlockBases`.
const _: () = assert!(size_of::<BlockBases>().is_multiple_of(1 << (SET_SHIFT + LINE_SHIFT)));

/// log2 of the sets of a [`Line`].
pub(crate) const LINE_SHIFT: u32 = 2;
/// Sets per [`Line`].
const LINE_SETS: usize = 1 << LINE_SHIFT;

/// log2 of the entries of level 0.
const FIRST_BITS: u32 = 11;
/// Levels, each 4x the one before.
pub(crate) const LEVELS: usize = 4;
/// Entries per set.
const WAYS: usize = 4;

/// Entries of level `k`.
const fn level_len(k: usize) -> usize {
    1 << (FIRST_BITS + 2 * k as u32)
}

/// Strings a table may hold while it uses level `k` (not the last): half
/// the level's entries.
///
/// A 4-way set takes four strings, so the fuller the level, the more
/// strings its full sets turn away to the shard's lock; the emptier, the
/// more of the L1 a small table's hits spread over (one set per string,
/// four sets per cache line). At up to one string per entry (until
/// 2026-12-03) one thread of the concurrent benchmark's stream (100k
/// strings) locked on 135.6k of 1M interns, and the simulated profile's
/// calls (3,941 strings) on 7,479 of 2.3M; at a quarter (half for the
/// 32K level, until 2026-12-06) on 117.5k and 4,442, but the Go profile's
/// 840 strings then sat in the 32 KiB level, the whole L1, where a
/// `StringTable`'s slots and control bytes take 6 KiB. At half, callgrind's
/// cache simulation (one thread, `profile replay-X strtab-shared`) counts
/// L1 data read misses of 238k -> 214k on the Go profile's calls (886 ->
/// 1,473 locked calls of 477k), 3.89M -> 3.77M on the simulated
/// profile's (`StringTable`: 183k and 3.81M), and one thread of the
/// concurrent benchmark on the simulated profile took 1.116x
/// `StringTable`'s time instead of 1.173x (medians of five alternated
/// runs; the Go profile 1.167x against 1.175x). The memory is the same at
/// 100k strings (the last level is never left); the full cache (680 KiB)
/// arrives at 16Ki strings either way.
///
/// Measured again on a 2-vCPU Intel Xeon host (2026-12-07, one thread of
/// the concurrent stream, `profile rounds 9 thread-stream`, builds
/// alternated; `benches/README.md`, session 52): a quarter for every level
/// 1.18x-1.24x `StringTable`'s time against 1.22x-1.28x at half, but
/// 1.203x-1.244x against 1.185x-1.230x in the concurrent benchmark, for
/// the full cache from 8Ki strings and the small profiles' levels spread
/// over more of the L1 (above); three quarters 1.25x-1.30x; a quarter
/// for the 32K level only no different from half. Nor did a level of 64Ki
/// entries between the 32Ki and 128Ki ones pay: with 30k strings its hits
/// took 1.04x-1.06x `StringTable`'s time instead of 1.11x-1.12x (the
/// 512 KiB level is twice what 30k strings need, and misses the L2 more
/// often), but carrying 32Ki strings over to the last level doubled the
/// carry-over's instructions (2.5M -> 6.3M), and the whole stream took
/// 1.21x-1.30x instead of 1.19x-1.25x.
pub(crate) const fn level_fill(k: usize) -> usize {
    level_len(k) / 2
}

/// Sets of level `k`, after its header line.
const fn level_sets(k: usize) -> usize {
    level_len(k) / WAYS
}

/// Lines of level `k`'s allocation: its header line and its sets'.
const fn level_lines(k: usize) -> usize {
    1 + level_sets(k) / LINE_SETS
}

/// Heap bytes of the block biases of a table of `shards` shards.
pub(crate) const fn bases_bytes(shards: usize) -> usize {
    shards * size_of::<BlockBases>()
}

/// Heap bytes of level `k`: its sets and the header line.
pub(crate) const fn level_bytes(k: usize) -> usize {
    level_lines(k) * size_of::<Line>()
}

/// log2 of the bytes of a [`Set`]: the shard bits (`shard::hash_of`)
/// come shifted left by this much, so that they are a set's byte offset
/// in a level once masked.
pub(crate) const SET_SHIFT: u32 = 4;

/// A set: four entries in 16 bytes (`1 << SET_SHIFT`, asserted below),
/// aligned so that a set never straddles two cache lines. An entry is a
/// record's location in its shard's arena, complemented, in its low
/// [`PAYLOAD_BITS`] bits under an 8-bit tag ([`entry_of`]), or
/// 0 (empty).
///
/// A set's filled ways are always its first ones: every writer
/// ([`Hints::put`], [`Hints::carry_over`]) stores into the first way it
/// saw empty, or into the last way of a set it saw full, and no way is
/// ever emptied, so a way is written only once every way before it holds
/// an entry. So the last way alone says whether a set is full, and the
/// number of filled ways is the first empty one. (A reader on a weakly
/// ordered machine may see a later way filled before an earlier one: it
/// then overwrites a hint or looks in the line's other sets for nothing,
/// which only costs a hint, as every stale hint does.)
#[repr(C, align(16))]
struct Set([AtomicU32; WAYS]);

// SAFETY: an array of `AtomicU32`s, each with the representation of a
// `u32`, for which all-zero bytes are 0 (an empty entry).
unsafe impl Zeroable for Set {}

// `SET_SHIFT` is the log2 of a set's size.
const _: () = assert!(size_of::<Set>() == 1 << SET_SHIFT);

impl Set {
    /// An empty set.
    const fn empty() -> Set {
        Set([const { AtomicU32::new(0) }; WAYS])
    }

    /// The location in the way whose tag is `want`'s, if one is (see
    /// [`Hints::get`]): below `1 << PAYLOAD_BITS` if so, at least that if
    /// not. If two are, the smaller location.
    #[inline(always)]
    fn find(&self, want: u32) -> Loc {
        let x = |w: usize| self.0[w].load(Ordering::Acquire) ^ want;
        x(0).min(x(1)).min(x(2).min(x(3)))
    }

    /// Whether every way holds an entry: whether the last one does (the
    /// ways fill in order, see [`Set`]). Until 2026-12-07 the four ways'
    /// minimum: one load instead of four, and 1.8M fewer instructions
    /// (of 183.9M) on one thread of the concurrent stream, with the count
    /// in [`empty_way`](Self::empty_way) (`benches/README.md`, session
    /// 53).
    #[inline(always)]
    fn is_full(&self) -> bool {
        self.0[WAYS - 1].load(Ordering::Relaxed) != 0
    }

    /// The set's first empty way, the number of its filled ways (they
    /// are its first ones, see [`Set`]), counted without a branch per
    /// way: which way is the first empty one is as good as random. With a
    /// test per way (until 2026-12-07) callgrind's branch simulation
    /// counted 83k mispredictions in those tests for the 100k insertions
    /// of the concurrent stream (one thread; 1.14M -> 1.09M in all), and
    /// `profile fill-hint` took 2.42x `StringTable`'s time instead of
    /// 2.30x (five alternated runs, each pair ahead;
    /// `benches/README.md`, session 52). Then, until the count, a mask of
    /// the empty ways and its lowest bit: 14.5 more instructions per
    /// insertion with the four-load [`is_full`](Self::is_full).
    #[inline(always)]
    fn empty_way(&self) -> Option<&AtomicU32> {
        let filled = (0..WAYS).fold(0usize, |n, w| {
            n + usize::from(self.0[w].load(Ordering::Relaxed) != 0)
        });
        self.0.get(filled)
    }
}

/// The sets of one cache line: a string whose own set is full may be put
/// in the other three ([`Hints::put`]), all of its shard. A level is an
/// array of lines, the first its header (the set mask in its first
/// entry, then padding), so that every line of sets is aligned.
#[repr(C, align(64))]
struct Line([Set; LINE_SETS]);

// SAFETY: an array of `Set`s, each `Zeroable`, and no padding (asserted
// below).
unsafe impl Zeroable for Line {}

const _: () = assert!(size_of::<Line>() == LINE_SETS * size_of::<Set>());

impl Line {
    /// A line of empty sets.
    const fn empty() -> Line {
        Line([const { Set::empty() }; LINE_SETS])
    }
}

/// The level in use before the first is installed: a header with set mask
/// 0 and one line of empty sets, so a lookup needs no null test. Never
/// written: `put` skips it.
static NO_LEVEL: [Line; 2] = [Line::empty(), Line::empty()];

/// The hint cache; see the module docs.
pub(crate) struct Hints {
    /// The levels' allocations (leaked `Box<[Line]>`s of
    /// `level_lines(k)` lines, as sets), or null.
    levels: [AtomicPtr<Set>; LEVELS],
    /// The level in use: one of `levels`, or [`NO_LEVEL`]. Its first line
    /// (the header) holds its set mask in its first entry, written before
    /// the level is published here.
    current: AtomicPtr<Set>,
    /// The set mask of the level in use (a copy of its header's), stored
    /// after `current`: see [`level`](Self::level).
    current_mask: AtomicUsize,
    /// Per shard, the biases of its first [`HINTED_BLOCKS`] blocks.
    bases: Box<[BlockBases]>,
    /// Shards minus 1.
    shard_mask: usize,
    /// `shard_mask << (SET_SHIFT + LINE_SHIFT)`: the mask of the shard in
    /// shard bits as they come (`shard::hash_of`).
    shard_offset_mask: usize,
    /// `size_of::<BlockBases>() >> (SET_SHIFT + LINE_SHIFT)`, what
    /// [`bias`](Self::bias) multiplies masked shard bits by: a field, and
    /// hidden from the optimiser at construction (`black_box`), so that
    /// the multiply is one instruction with a memory operand. With the
    /// constant (132 while the shard was the bits under the line's),
    /// LLVM wrote it as a shift and an add, with a register copy before:
    /// one instruction more per hinted lookup than the scaled shard bits
    /// (`shard::hash_of`) saved.
    shard_stride: usize,
}

impl core::fmt::Debug for Hints {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hints")
            .field("entries", &self.current_len())
            .finish()
    }
}

/// Mask of an entry's location bits.
const PAYLOAD_MASK: u32 = (1 << PAYLOAD_BITS) - 1;

/// What [`Hints::get`] xors a set's entries with, for a string of hash
/// `hash`: the tag, the top 8 bits of the hash's low 32 with the lowest
/// of them set (so that no tag is 0 and an empty entry matches
/// none), over all-ones location bits. An entry of that tag xor this is
/// the location it holds ([`entry_of`] stores it complemented): two
/// instructions from the hash (a copy and an `or` of one constant),
/// where a tag of the hash's low bits shifted into place took three, on
/// every hinted lookup.
#[inline(always)]
fn want_of(hash: u64) -> u32 {
    // Truncation intended: the low 32 bits.
    hash as u32 | (1 << PAYLOAD_BITS) | PAYLOAD_MASK
}

/// The entry of the record at `loc` (below `1 << PAYLOAD_BITS`) for a
/// string of hash `hash`: its tag over its complemented location, so that
/// the entry xor [`want_of`] is `loc`. Never 0 (the tag's lowest bit is
/// set), so never taken for an empty way.
#[inline]
fn entry_of(hash: u64, loc: Loc) -> u32 {
    debug_assert!(loc <= PAYLOAD_MASK);
    want_of(hash) ^ loc
}

/// The location an entry (not 0) holds.
fn loc_of(entry: u32) -> Loc {
    (entry & PAYLOAD_MASK) ^ PAYLOAD_MASK
}

/// The level in use, read once: its set mask and a hash's set.
#[derive(Clone, Copy)]
struct Level<'a> {
    /// The level's first set (of its header line).
    base: *const Set,
    /// Sets minus 1, shifted left by [`SET_SHIFT`]: the mask of a set's
    /// byte offset (0 for [`NO_LEVEL`]), or, read by [`Hints::level`]
    /// while another thread switches levels, the mask of an earlier
    /// level (smaller, so still inside this one).
    mask: usize,
    _hints: core::marker::PhantomData<&'a Hints>,
}

impl<'a> Level<'a> {
    /// The set of a string whose shard bits are `bits` (`shard::hash_of`):
    /// chosen by their low bits, which hold the shard's above the set's
    /// place in its line (see [`Hints::wants_level`]).
    #[inline(always)]
    fn set(self, bits: usize) -> &'a Set {
        let offset = bits & self.mask;
        // SAFETY: `base` is a level of `LINE_SETS + sets` sets, `mask`
        // being at most `(sets - 1) << SET_SHIFT` (see `Hints::level_at`
        // and `Hints::level`; `NO_LEVEL`: `2 * LINE_SETS` sets, mask 0),
        // and `offset` a multiple of `1 << SET_SHIFT`, the size of a set,
        // at most `mask`: set `LINE_SETS + offset / 16` is inside the
        // level. It lives as long as `Hints` (levels are freed only by its
        // `drop`, `NO_LEVEL` never).
        unsafe { &*self.base.add(LINE_SETS).byte_add(offset) }
    }

    /// The other sets of the line of the set of shard bits `bits`.
    #[inline(always)]
    fn others_in_line(self, bits: usize) -> impl Iterator<Item = &'a Set> {
        (1..LINE_SETS).map(move |k| self.set(bits ^ (k << SET_SHIFT)))
    }

    /// Where a string of shard bits `bits` goes without evicting anyone:
    /// its set's first empty way, else the first empty way of the other
    /// sets of its line ([`Hints::put`], [`Hints::carry_over`]).
    #[inline(always)]
    fn empty_way_in_line(self, bits: usize) -> Option<&'a AtomicU32> {
        self.set(bits)
            .empty_way()
            .or_else(|| self.others_in_line(bits).find_map(Set::empty_way))
    }

    /// Set `i` (below the level's sets) of the level, by number.
    fn set_at(self, i: usize) -> &'a Set {
        debug_assert!(i <= self.mask >> SET_SHIFT);
        self.set(i << SET_SHIFT)
    }
}

impl Hints {
    /// An empty cache for a table of `shards` shards (a power of two).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AllocFailed`] if the allocator refuses the block
    /// biases ([`bases_bytes`]).
    pub(crate) fn new(shards: usize) -> Result<Hints, Error> {
        debug_assert!(shards.is_power_of_two());
        let bases = zeroed_slice::<BlockBases>(shards)
            .ok_or_else(|| Error::new(ErrorKind::AllocFailed, bases_bytes(shards)))?;
        Ok(Hints {
            levels: core::array::from_fn(|_| AtomicPtr::new(core::ptr::null_mut())),
            current: AtomicPtr::new(NO_LEVEL.as_ptr().cast::<Set>().cast_mut()),
            current_mask: AtomicUsize::new(0),
            bases,
            shard_mask: shards - 1,
            shard_offset_mask: (shards - 1) << (SET_SHIFT + LINE_SHIFT),
            shard_stride: core::hint::black_box(
                size_of::<BlockBases>() >> (SET_SHIFT + LINE_SHIFT),
            ),
        })
    }

    /// The level in use: its pointer and set mask, loaded side by side.
    ///
    /// `install` stores a new level's pointer, then its mask, and levels
    /// only grow, so the mask loaded here (first, with `Acquire`) is that
    /// of the level loaded after it or of an earlier, smaller level: never
    /// larger than the level's own, so every set it selects is inside the
    /// level (checked by loom, `mask_never_outgrows_its_level`). A smaller
    /// mask, read while another thread switches levels, selects another
    /// set of the same shard (a level has at least a line of sets per
    /// shard, so the mask keeps the shard bits): a lookup then misses and
    /// takes the locked path, and a hint put there is one no lookup finds,
    /// never a wrong id. Until 2026-12-07 the mask was read from the
    /// level's header, a load that waited for the pointer's: one thread
    /// of the concurrent stream took 1.24x `StringTable`'s time instead of
    /// 1.28x (five alternated runs of `profile rounds 11 thread-stream`,
    /// each build ahead in all five pairs; the warm stream unchanged,
    /// `benches/README.md`, session 52).
    #[inline(always)]
    fn level(&self) -> Level<'_> {
        let mask = self.current_mask.load(Ordering::Acquire);
        let base = self.current.load(Ordering::Acquire).cast_const();
        Level {
            base,
            mask,
            _hints: core::marker::PhantomData,
        }
    }

    /// Level `j`, if it is installed.
    fn installed(&self, j: usize) -> Option<Level<'_>> {
        let base = self.levels[j].load(Ordering::Acquire);
        // SAFETY: a non-null level pointer was stored (with `Release`,
        // which this `Acquire` load pairs with) by `install` after it wrote
        // the level's header.
        (!base.is_null()).then(|| unsafe { self.level_at(base) })
    }

    /// The level whose first set (its header) is at `base`.
    ///
    /// # Safety
    ///
    /// `base` must be `NO_LEVEL` (its header holds 0 and it has two lines
    /// of sets) or a level `install` made: a leaked allocation of
    /// `LINE_SETS + level_sets(k)` sets whose first entry holds
    /// `(level_sets(k) - 1) << SET_SHIFT`, freed only by `drop`, its
    /// header visible to this thread.
    #[inline(always)]
    unsafe fn level_at(&self, base: *mut Set) -> Level<'_> {
        let base = base.cast_const();
        // SAFETY: the caller's guarantee.
        let mask = unsafe { (*base).0[0].load(Ordering::Relaxed) } as usize;
        Level {
            base,
            mask,
            _hints: core::marker::PhantomData,
        }
    }

    /// Entries of the level in use (0 before the first).
    pub(crate) fn current_len(&self) -> usize {
        match self.level().mask {
            0 => 0,
            mask => ((mask >> SET_SHIFT) + 1) * WAYS,
        }
    }

    /// Where the record of the string with these hashes is, if the cache
    /// holds it: its location and its block's bias
    /// ([`Arena::block_bias`](crate::arena::Arena::block_bias)) in the
    /// arena of the string's shard, for
    /// [`Arena::id_if_biased`](crate::arena::Arena::id_if_biased). The
    /// record was published before the entry was stored (the `Acquire`
    /// loads pair with the `Release` stores of `put`). Four ways per set,
    /// in one cache line, then the block's bias. Writes nothing.
    ///
    /// The ways are compared without a branch per way: an entry xor
    /// [`want_of`] the hash is the entry's location when the tags match
    /// and at least `1 << PAYLOAD_BITS` when they do not, so the smallest
    /// of the four is a match if any way matches (two ways whose tags both match are two
    /// candidates either way; the caller compares the record). Which way
    /// holds a string is as good as random, so a branch per way is
    /// mispredicted often: callgrind's branch simulation counts 2.25
    /// mispredictions per intern with one, 1.64 without (`StringTable`
    /// 0.92), and one thread's time went from 1.44x to 1.26x
    /// `StringTable`'s (`benches/README.md`).
    #[inline(always)]
    pub(crate) fn get(&self, hash: u64, bits: usize) -> Option<(*const u8, Loc)> {
        let loc = self.level().set(bits).find(want_of(hash));
        self.biased(bits, loc)
    }

    /// [`get`](Self::get) in the other three sets of the string's line,
    /// where [`put`](Self::put) sends a string whose own set is full: for
    /// a lookup that `get` did not answer, before it takes the shard's
    /// lock. Looks only if the string's own set is full (a string goes to
    /// its own set while that has room, and no way is ever emptied), so
    /// that a string new to a set with room costs one test. Writes
    /// nothing.
    #[inline(always)]
    pub(crate) fn get_in_line(&self, hash: u64, bits: usize) -> Option<(*const u8, Loc)> {
        let level = self.level();
        if !level.set(bits).is_full() {
            return None;
        }
        let want = want_of(hash);
        let loc = level
            .others_in_line(bits)
            .fold(Loc::MAX, |m, set| m.min(set.find(want)));
        self.biased(bits, loc)
    }

    /// The bias of `loc`'s block and `loc`, if `loc` is a location (a
    /// tag matched: below `1 << PAYLOAD_BITS`).
    #[inline(always)]
    fn biased(&self, bits: usize, loc: Loc) -> Option<(*const u8, Loc)> {
        if loc < 1 << PAYLOAD_BITS {
            let bias = self.bias(bits, loc).load(Ordering::Relaxed);
            return Some((bias.cast_const(), loc));
        }
        None
    }

    /// Where the shard of a string whose shard bits are `bits` keeps the
    /// bias of the block of `loc`, a location below `1 << PAYLOAD_BITS`.
    #[inline(always)]
    fn bias(&self, bits: usize, loc: Loc) -> &AtomicPtr<u8> {
        // The shard's array at `shard * size_of::<BlockBases>()` bytes,
        // from the shard bits as they come (the shard times 64, see
        // `shard::hash_of`), masked but not shifted.
        let offset = (bits & self.shard_offset_mask) * self.shard_stride;
        let block = (loc >> LOCAL_BITS) as usize;
        debug_assert!(offset / size_of::<BlockBases>() == shard_index(bits, self.shard_mask));
        debug_assert!(block < HINTED_BLOCKS);
        // SAFETY: `bases` has `shard_mask + 1` arrays (`new`), and `offset`
        // is `shard * size_of::<BlockBases>()` for a `shard` at most
        // `shard_mask` (`shard_offset_mask` is `shard_mask << (SET_SHIFT +
        // LINE_SHIFT)`, and the size a multiple of `1 << (SET_SHIFT +
        // LINE_SHIFT)`, asserted below `BlockBases`): the start of one of
        // them. `loc < 1 << PAYLOAD_BITS` leaves `block` below
        // `HINTED_BLOCKS`.
        unsafe {
            let bases = &*self.bases.as_ptr().byte_add(offset);
            bases.0.get_unchecked(block)
        }
    }

    /// Makes the block of `loc`, a location in the arena of the shard of
    /// shard bits `bits` (whose lock the caller holds), readable by
    /// [`get`](Self::get): `bias` is its
    /// [`Arena::block_bias`](crate::arena::Arena::block_bias). Called for
    /// every record before its hint is [`put`](Self::put); only the first
    /// call per block stores. Blocks past the first [`HINTED_BLOCKS`] are
    /// not cached.
    #[inline]
    pub(crate) fn publish_block(&self, bits: usize, loc: Loc, bias: *const u8) {
        if loc >= 1 << PAYLOAD_BITS {
            return;
        }
        let slot = self.bias(bits, loc);
        if slot.load(Ordering::Relaxed).is_null() {
            slot.store(bias.cast_mut(), Ordering::Release);
        }
    }

    /// Whether the block of `loc` (shard bits `bits`) is readable by
    /// [`get`](Self::get), or past the hinted blocks (never hinted).
    pub(crate) fn is_published(&self, bits: usize, loc: Loc) -> bool {
        loc >= 1 << PAYLOAD_BITS || !self.bias(bits, loc).load(Ordering::Relaxed).is_null()
    }

    /// Remembers the record at `loc` in the arena of the string's shard
    /// (any thread; the record must be published already, and its block
    /// by [`publish_block`](Self::publish_block)) for a string with these
    /// hashes, after a lookup that [`get`](Self::get) could not answer: in
    /// the set's first empty way, else in the first empty way of the other
    /// sets of its line (see [`get_in_line`](Self::get_in_line)), else in
    /// the set's last way (evicting its entry), so that a string looked up
    /// once does not push out one that keeps being hit. Records past the
    /// shard's first [`HINTED_BLOCKS`] blocks are not cached.
    ///
    /// Inlined into its callers: with the branch-free
    /// [`Set::empty_way`] LLVM otherwise makes it a call, 50 instructions
    /// a put.
    #[inline(always)]
    pub(crate) fn put(&self, hash: u64, bits: usize, loc: Loc) {
        let level = self.level();
        if loc >= 1 << PAYLOAD_BITS || level.mask == 0 {
            // No room in an entry, or no level yet (`NO_LEVEL` is never
            // written).
            return;
        }
        let way = level
            .empty_way_in_line(bits)
            .unwrap_or(&level.set(bits).0[WAYS - 1]);
        way.store(entry_of(hash, loc), Ordering::Release);
    }

    /// Shards of the table (the sets of a level are numbered by their
    /// strings' shard bits).
    pub(crate) fn shards(&self) -> usize {
        self.shard_mask + 1
    }

    /// The level a table of `len` strings should use, if it is not the
    /// current one yet.
    #[inline]
    pub(crate) fn wants_level(&self, len: usize) -> Option<usize> {
        // A level has at least a line of sets per shard, so that the
        // strings of one line are all of one shard (see `get`).
        let mut k = 0;
        while k + 1 < LEVELS
            && (len > level_fill(k) || level_sets(k) < LINE_SETS * (self.shard_mask + 1))
        {
            k += 1;
        }
        (self.current_len() < level_len(k)).then_some(k)
    }

    /// Installs level `k` and switches to it. The caller serialises calls
    /// (the growth lock) and has charged [`level_bytes`]; it then calls
    /// [`carry_over`](Self::carry_over).
    pub(crate) fn install(&self, k: usize) -> Result<(), Error> {
        let sets = level_sets(k);
        let level = zeroed_slice::<Line>(level_lines(k))
            .ok_or_else(|| Error::new(ErrorKind::AllocFailed, level_bytes(k)))?;
        // The header: the set mask (of a set's byte offset), then padding.
        // Truncation impossible: a level has at most 2^15 sets.
        level[0].0[0].0[0].store(((sets - 1) << SET_SHIFT) as u32, Ordering::Relaxed);
        let first = Box::into_raw(level).cast::<Set>();
        self.levels[k].store(first, Ordering::Release);
        self.current.store(first, Ordering::Release);
        self.current_mask
            .store((sets - 1) << SET_SHIFT, Ordering::Release);
        Ok(())
    }

    /// Carries the hints of the level that level `k` replaced (the
    /// highest installed below it) over to level `k`: each goes into the
    /// first empty way of its set there, else of the other sets of its
    /// line (as [`put`](Self::put) places it, but evicting none), which
    /// needs the string's hash again, `rehash(bias, loc)` of the record at
    /// location `loc` of a block whose bias is `bias` (see
    /// [`get`](Self::get)). Any thread, without the growth lock: other
    /// threads may be putting hints into level `k` meanwhile (at worst one
    /// hint overwrites another), or even have switched to a later level
    /// (then these hints only fill a level no lookup reads). A hint whose
    /// new hash names another shard than its set's (a user hasher that no
    /// longer hashes the string as it did) is dropped, so every entry of a
    /// line stays a record of the line's shard, which
    /// [`get`](Self::get)'s callers rely on.
    pub(crate) fn carry_over(&self, k: usize, rehash: impl Fn(*const u8, Loc) -> (u64, usize)) {
        let Some(new) = self.installed(k) else { return };
        let Some(old) = (0..k).rev().find_map(|j| self.installed(j)) else {
            return;
        };
        // The old level's set numbers hold their strings' shard bits (a
        // level has at least a line of sets per shard).
        for i in 0..=old.mask >> SET_SHIFT {
            for e in &old.set_at(i).0 {
                let entry = e.load(Ordering::Acquire);
                if entry == 0 {
                    continue;
                }
                let loc = loc_of(entry);
                let bias = self.bias(i << SET_SHIFT, loc).load(Ordering::Relaxed);
                let (hash, bits) = rehash(bias, loc);
                // A hint must stay with its shard: a lookup reads its
                // location through the bias of its own shard. The hash
                // is the one that chose the shard unless the user's
                // hasher gives a string another hash than before (a logic
                // error, but safe code): then the hint is dropped.
                if shard_index(bits, self.shard_mask)
                    != shard_index(i << SET_SHIFT, self.shard_mask)
                {
                    continue;
                }
                if let Some(way) = new.empty_way_in_line(bits) {
                    way.store(entry_of(hash, loc), Ordering::Release);
                }
            }
        }
    }

    /// Heap bytes of the installed levels.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn heap_bytes(&self) -> usize {
        (0..LEVELS)
            .filter(|&k| !self.levels[k].load(Ordering::Relaxed).is_null())
            .map(level_bytes)
            .sum::<usize>()
            + bases_bytes(self.bases.len())
    }
}

impl Drop for Hints {
    fn drop(&mut self) {
        for (k, level) in self.levels.iter_mut().enumerate() {
            let first = *level.get_mut();
            if !first.is_null() {
                let slice =
                    core::ptr::slice_from_raw_parts_mut(first.cast::<Line>(), level_lines(k));
                // SAFETY: `first` came from `Box::into_raw` of a boxed
                // slice of exactly `level_lines(k)` lines
                // (`install`), and is freed only here, once.
                drop(unsafe { Box::from_raw(slice) });
            }
        }
    }
}

/// Model checks of the hint protocol, run by `.ci/loom.sh`: a hint names
/// a record by a location whose block bias another atomic holds, and the
/// reader loads that bias with `Relaxed` after the hint with `Acquire`.
/// The model keeps the table's orderings and lock, with one hint entry,
/// one block bias and a record that is a loom cell (so loom checks that
/// every read of it happens after its write).
#[cfg(all(test, loom))]
mod loom_tests {
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
    use loom::sync::{Arc, Mutex};
    use loom::thread;

    struct Model {
        /// The shard: whether the record is in its hash table.
        shard: Mutex<bool>,
        /// The block's bias (here the record itself), null until
        /// published.
        bias: AtomicPtr<UnsafeCell<u8>>,
        /// The hint entry: 0, or the record's location (1).
        hint: AtomicU32,
    }

    /// One writer inserts the record (under the shard's lock: the record,
    /// then the block's bias, then after the unlock the hint, as
    /// `insert_new` and `intern_locked` do); a second thread finds it
    /// under the lock and puts the hint again (a locked hit); a reader
    /// that sees either hint finds the bias and the record's bytes.
    #[test]
    fn hint_names_a_published_block() {
        loom::model(|| {
            let m = Arc::new(Model {
                shard: Mutex::new(false),
                bias: AtomicPtr::new(core::ptr::null_mut()),
                hint: AtomicU32::new(0),
            });
            let writer = {
                let m = m.clone();
                thread::spawn(move || {
                    let mut shard = m.shard.lock().unwrap();
                    let record: &'static UnsafeCell<u8> = Box::leak(Box::new(UnsafeCell::new(0)));
                    // SAFETY: `record` was just leaked and is not yet
                    // published: this thread is its only user.
                    record.with_mut(|p| unsafe { *p = 42 });
                    // `publish_block`: only the first record of a block
                    // stores.
                    if m.bias.load(Ordering::Relaxed).is_null() {
                        m.bias.store(
                            (record as *const UnsafeCell<u8>).cast_mut(),
                            Ordering::Release,
                        );
                    }
                    *shard = true;
                    drop(shard);
                    m.hint.store(1, Ordering::Release);
                })
            };
            let finder = {
                let m = m.clone();
                thread::spawn(move || {
                    let found = *m.shard.lock().unwrap();
                    if found {
                        m.hint.store(1, Ordering::Release);
                    }
                })
            };
            let reader = {
                let m = m.clone();
                thread::spawn(move || {
                    if m.hint.load(Ordering::Acquire) != 0 {
                        let bias = m.bias.load(Ordering::Relaxed);
                        assert!(!bias.is_null(), "a hinted block's bias is published");
                        // SAFETY: a published bias is a leaked cell.
                        let v = unsafe { &*bias }.with(|p| unsafe { *p });
                        assert_eq!(v, 42);
                    }
                })
            };
            writer.join().unwrap();
            finder.join().unwrap();
            reader.join().unwrap();
        });
    }

    /// `Hints::level`: one thread installs two levels in turn (the
    /// header's mask, then the pointer, then the mask beside it, as
    /// `install`); a reader that loads the mask, then the pointer, never
    /// gets a mask larger than that level's header holds.
    #[test]
    fn mask_never_outgrows_its_level() {
        use loom::sync::atomic::AtomicUsize;
        loom::model(|| {
            // Level 0 is the static empty one, mask 0.
            let levels: &'static [AtomicUsize; 3] = Box::leak(Box::new([
                AtomicUsize::new(0),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
            ]));
            let current = Arc::new(AtomicPtr::new(
                (&levels[0] as *const AtomicUsize).cast_mut(),
            ));
            let mask = Arc::new(AtomicUsize::new(0));
            let installer = {
                let (current, mask) = (current.clone(), mask.clone());
                thread::spawn(move || {
                    for (k, m) in [(1, 0x30), (2, 0xF0)] {
                        levels[k].store(m, Ordering::Relaxed);
                        current.store(
                            (&levels[k] as *const AtomicUsize).cast_mut(),
                            Ordering::Release,
                        );
                        mask.store(m, Ordering::Release);
                    }
                })
            };
            let m = mask.load(Ordering::Acquire);
            let level = current.load(Ordering::Acquire);
            // SAFETY: `current` holds one of the leaked `levels`.
            let header = unsafe { &*level }.load(Ordering::Relaxed);
            assert!(m <= header, "mask {m:#x} beyond its level's {header:#x}");
            installer.join().unwrap();
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A hash whose tag (see [`want_of`]) is `i`'s.
    fn hash(i: u64) -> u64 {
        i << (PAYLOAD_BITS + 1)
    }

    #[test]
    fn full_sets_lend_their_strings_the_rest_of_their_line() {
        let hints = Hints::new(2).unwrap();
        hints.install(0).unwrap();
        // Shard bits of set 5 (line 1, the line's second set) of shard 1:
        // its line is sets 4 to 7, all of shard 1.
        let bits = (1 << (SET_SHIFT + LINE_SHIFT + 2)) | (5 << SET_SHIFT);
        let set = |b: usize| (b & hints.level().mask) >> SET_SHIFT;
        assert_eq!(shard_index(bits, hints.shard_mask), 1);
        let line: Vec<usize> = (0..LINE_SETS).map(|k| bits ^ (k << SET_SHIFT)).collect();
        assert!(line.iter().all(|&b| shard_index(b, hints.shard_mask) == 1));
        assert!(
            line.iter()
                .all(|&b| set(b) / LINE_SETS == set(bits) / LINE_SETS)
        );

        // A set with room: its strings are in it, and `get_in_line` does
        // not look further.
        hints.put(hash(1), bits, 11);
        assert_eq!(hints.get(hash(1), bits).map(|(_, l)| l), Some(11));
        assert_eq!(hints.get_in_line(hash(1), bits), None);
        for i in 2..=4 {
            hints.put(hash(i), bits, 10 + i as Loc);
        }
        // The set is full: the fifth string goes to the line's next set
        // with room, found there only once the own set is full.
        hints.put(hash(5), bits, 15);
        assert_eq!(hints.get(hash(5), bits), None);
        assert_eq!(hints.get_in_line(hash(5), bits).map(|(_, l)| l), Some(15));
        assert_eq!(hints.get_in_line(hash(6), bits), None);
        for i in 1..=4 {
            assert_eq!(
                hints.get(hash(i), bits).map(|(_, l)| l),
                Some(10 + i as Loc)
            );
        }
        // Every way of the line taken (4 + 12): the next string evicts the
        // own set's last way.
        for i in 6..=16 {
            hints.put(hash(i), bits, 10 + i as Loc);
            assert_eq!(
                hints.get_in_line(hash(i), bits).map(|(_, l)| l),
                Some(10 + i as Loc)
            );
        }
        hints.put(hash(17), bits, 27);
        assert_eq!(hints.get(hash(17), bits).map(|(_, l)| l), Some(27));
        assert_eq!(hints.get(hash(4), bits), None);
        assert_eq!(hints.get_in_line(hash(4), bits), None);
    }

    /// Whether every set of level `k` holds its entries in its first ways
    /// (what `Set::is_full` and `Set::empty_way` rely on).
    fn filled_ways_lead(hints: &Hints, k: usize) -> bool {
        let level = hints.installed(k).unwrap();
        (0..=level.mask >> SET_SHIFT).all(|i| {
            let filled: Vec<bool> = level
                .set_at(i)
                .0
                .iter()
                .map(|e| e.load(Ordering::Relaxed) != 0)
                .collect();
            filled.windows(2).all(|w| w[0] || !w[1])
        })
    }

    /// Puts of many strings into a small level (sets filling, lending
    /// ways in their line, evicting), then a carry-over into the next
    /// level: the filled ways of every set stay its first ones, and the
    /// carry-over keeps most of the hints.
    #[test]
    fn sets_fill_in_way_order() {
        let hints = Hints::new(2).unwrap();
        hints.install(0).unwrap();
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut strings = std::collections::HashMap::new();
        for loc in 1..3 * level_len(0) as Loc {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = (x >> 20) as usize & !((1 << SET_SHIFT) - 1);
            hints.put(x, bits, loc);
            strings.insert(loc, (x, bits));
            if loc % 512 == 0 {
                assert!(filled_ways_lead(&hints, 0), "after {loc} puts");
            }
        }
        assert!(filled_ways_lead(&hints, 0));
        hints.install(1).unwrap();
        hints.carry_over(1, |_, loc| strings[&loc]);
        assert!(filled_ways_lead(&hints, 1));
        let carried = (0..level_sets(1))
            .map(|i| hints.installed(1).unwrap().set_at(i))
            .flat_map(|set| &set.0)
            .filter(|e| e.load(Ordering::Relaxed) != 0)
            .count();
        assert!(carried > level_len(0) / 2, "{carried} hints carried over");
    }
}
