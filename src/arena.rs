//! The private self-referencing core: a `bumpalo` arena that owns every
//! string's bytes, and the blocks carved out of it.
//!
//! # Layout
//!
//! The arena is a [`Bump`] whose chunk sizes we steer (see
//! [`Arena::add_chunk`]). Each chunk is cut into *blocks* of at most
//! [`MAX_BLOCK`] bytes, filled from the front with *records*: the string's
//! 4-byte id, a one-byte length for strings under [`LONG_LEN`] bytes (or
//! the [`ESCAPE`] byte, a 4-byte length and a 4-byte *link* for longer
//! ones: the id of the next long string, which a `StringTable`'s store
//! writes when that string comes, [`Arena::link_long`]), then the
//! string's bytes. A record starts inside its block (below 64 KiB) but may
//! run on past the block's end into the next block's memory, which then
//! starts after it ([`Arena::spill`]). It is located by a
//! packed 32-bit [`Loc`]: the block number in the high [`BLOCK_BITS`] bits
//! and the record's offset within the block in the low [`LOCAL_BITS`]
//! bits. A `Loc` is self-contained, so the hash table's slots are
//! locations (with a copy of the record's length byte): a lookup reads
//! the string, then its id beside it, without first reading the id index
//! (one dependent cache miss fewer per hit), and an id costs 4 bytes
//! once, in the record, rather than in every slot of a hash table that is
//! at most 7/8 full.
//!
//! Reading a record is two loads: the block's base address from the block
//! list (a flat array, indexed without a bounds check), then the length
//! byte, which sits just before the string's bytes. A lookup knows the
//! length it wants before it reads the record, so it decides from its own
//! key whether the record can have the long form: no branch depends on
//! loaded data. Block 0 is a static record of `""` (id 0), so location 0
//! needs no special case.
//!
//! A record over [`DEDICATED_MIN`] bytes that does not fit the current block
//! gets a *dedicated* block: an empty one left by `clear` if one is large
//! enough, or a new chunk sized to it. The current block stays open for
//! the strings that follow. A shorter record that does not fit runs on
//! into the next block if that one is empty and continues the same
//! allocation ([`Arena::spill`]); otherwise the current block is left with
//! its unused end, and the next empty block that holds it (or that it can
//! run on from), or else a new chunk, takes it. A block's first record
//! always comes this way, never in place, which the shared table relies on
//! to publish each block before any hint names a record in it.
//!
//! # Safety
//!
//! Block memory is handed out by bumpalo uninitialised, as a raw pointer
//! ([`alloc_uninit`]) from which every block's base pointer is derived, and
//! all reads and writes go through those pointers (no `&mut` to chunk
//! memory is ever made, so no write invalidates a pointer read later, and
//! the shared table's readers may keep record addresses while writers
//! append). [`Arena::bytes`], [`holds_at`], [`Arena::probe`],
//! [`Found::id`], [`Arena::run`] and [`Arena::str_short_biased`] read
//! back records that [`Arena::push`] wrote (strings of up to 64 bytes
//! compared with SSE2 loads, [`eq_bytes`]; `str_short_biased`, for
//! iteration, relies on none of them being empty: `push` refuses `""`,
//! which only block 0's static record holds and iteration never reads
//! there), and
//! [`Arena::str`] skips UTF-8 validation of bytes that `push` copied from
//! a `&str`. Every `Loc` the arena is given is one `push` returned since
//! the last `clear` (or 0): the callers only keep those (the id index and
//! the hash table, both emptied by `clear`; user-supplied ids are
//! bounds-checked against the index first). Each method that takes a
//! `Loc` and looks up its block unchecked or reads through it is an
//! `unsafe fn` with that as its contract, so every caller says where its
//! location came from. One write reaches a record after its push: a
//! long record's link, which [`Arena::link_long`] sets (through `&mut
//! self`, so no reader holds the arena) when a `StringTable`'s next long
//! string is pushed; the link lies outside the string's bytes, and a
//! shared table's shards never write it. These are the only `unsafe` code
//! in the module.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::ptr::NonNull;

use bumpalo::Bump;
use hashbrown::HashTable;
use ouroboros::self_referencing;

use crate::error::{Error, ErrorKind};
use crate::id_index::{IdIndex, PAIR_BYTES, short_word_base};

/// The page size the arena's chunk sizes are tuned for.
pub const PAGE_SIZE: usize = 4096;

/// Size of bumpalo's `ChunkFooter`, stored at the end of every chunk (six
/// words, rounded up to its 16-byte alignment: 48 bytes on 64-bit targets).
pub const CHUNK_FOOTER_SIZE: usize = (6 * size_of::<usize>()).next_multiple_of(16);

/// The per-allocation header that bumpalo assumes the global allocator adds
/// (glibc's malloc uses 16 bytes on 64-bit targets).
pub const MALLOC_HEADER_SIZE: usize = 16;

/// Bytes of each arena chunk that hold no strings: bumpalo's footer plus the
/// allocator's header (64 bytes on 64-bit targets).
pub const CHUNK_OVERHEAD: usize = (CHUNK_FOOTER_SIZE + MALLOC_HEADER_SIZE).next_multiple_of(16);

/// Usable bytes of the first arena chunk: four pages minus
/// [`CHUNK_OVERHEAD`], so that the chunk, its footer and the allocator's
/// header fill exactly 16 KiB (16,320 bytes on 64-bit targets).
pub const FIRST_CHUNK_CAPACITY: usize = 4 * PAGE_SIZE - CHUNK_OVERHEAD;

/// Usable bytes of a one-page chunk: the smallest chunk size an arena's
/// doubling can be capped at ([`Arena::cap_chunk_doubling`]).
pub(crate) const PAGE_CHUNK_CAPACITY: usize = PAGE_SIZE - CHUNK_OVERHEAD;

/// Usable bytes of a 256 KiB chunk (64 pages minus [`CHUNK_OVERHEAD`]).
/// Chunks double from [`FIRST_CHUNK_CAPACITY`] up to this size; beyond it a
/// chunk size is kept for several chunks and doubles only once the arena
/// holds [`CHUNK_GROWTH_RATIO`] times that size. The number of chunks thus
/// still grows with the logarithm of the bytes stored, while the unused
/// tail of the last chunk stays under a ninth of the arena.
pub const MAX_CHUNK_CAPACITY: usize = 64 * PAGE_SIZE - CHUNK_OVERHEAD;

/// Beyond [`MAX_CHUNK_CAPACITY`], the chunk size doubles once the arena
/// holds this many times the current chunk size.
pub const CHUNK_GROWTH_RATIO: usize = 16;

/// Bits of a [`Loc`] that hold the record's offset within its block.
pub(crate) const LOCAL_BITS: u32 = 16;
/// Bits of a [`Loc`] that hold the block number.
const BLOCK_BITS: u32 = 32 - LOCAL_BITS;
/// Mask of the local offset in a [`Loc`].
pub(crate) const LOCAL_MASK: u32 = (1 << LOCAL_BITS) - 1;
/// Largest block: every record offset in it fits [`LOCAL_BITS`].
pub(crate) const MAX_BLOCK: usize = LOCAL_MASK as usize + 1;
/// Number of blocks an arena can hold (block 0 is the empty block): half
/// of what a [`Loc`]'s block bits address, as the id index gives each
/// block two labels in those bits (`id_index`'s module docs).
const MAX_BLOCKS: usize = 1 << (BLOCK_BITS - 1);
/// Records longer than this that do not fit the current block get a
/// dedicated block instead of retiring a partly used block for them.
pub(crate) const DEDICATED_MIN: usize = MAX_CHUNK_CAPACITY / 4;
/// Strings of this many bytes or more have the long record form.
pub(crate) const LONG_LEN: usize = 255;
/// The first byte of a long record: a 4-byte little-endian length follows.
/// Strings of 4 GiB or more are refused ([`ErrorKind::CapacityOverflow`]).
pub(crate) const ESCAPE: u8 = 0xFF;
/// Bytes of a record's id.
const ID_BYTES: usize = size_of::<u32>();
/// Bytes before a short record's string: the id and the length.
pub(crate) const SHORT_PREFIX: usize = ID_BYTES + 1;
/// Bytes before a long record's string: the id, the escape, the length
/// and the link.
const LONG_PREFIX: usize = ID_BYTES + 1 + 2 * size_of::<u32>();
/// Where a long record's link is, from just after its escape (past the
/// length).
const LINK_AT: usize = size_of::<u32>();
/// Where a long record's string is, from just after its escape.
const LONG_BYTES_AT: usize = 2 * size_of::<u32>();
/// A long record's link until the next long string is linked to it (and
/// always, in a shared table's shards): no next long string.
pub(crate) const NO_LINK: u32 = u32::MAX;
/// bumpalo's smallest chunk (`DEFAULT_CHUNK_SIZE_WITHOUT_FOOTER`).
const BUMPALO_MIN_CHUNK: usize = 512 - CHUNK_OVERHEAD;

/// Bytes of strings the arena can address in normal blocks: 32,767 blocks
/// of 64 KiB (block 0 holds only `""`), about 2 GiB, the most a protobuf
/// message (a pprof profile) can hold anyway. Each string over 64
/// KiB that gets a chunk of its own uses one or more of those block
/// numbers (the string's, and the chunk's room past it, cut into blocks),
/// whatever its size; running out of block numbers is
/// [`ErrorKind::CapacityOverflow`].
pub const MAX_ARENA_BYTES: usize = (MAX_BLOCKS - 1) * MAX_BLOCK;

const _: () = {
    // A location's block number is its high half (`Entry::loc_and_block`).
    assert!(LOCAL_BITS == 16);
    assert!(FIRST_CHUNK_CAPACITY <= MAX_BLOCK);
    assert!(FIRST_CHUNK_CAPACITY.is_multiple_of(16) && MAX_CHUNK_CAPACITY.is_multiple_of(16));
    assert!(DEDICATED_MIN > 0);
    assert!(LONG_LEN == ESCAPE as usize);
};

/// Bytes of bookkeeping per block: its [`Block`] and its [`Base`].
pub(crate) const BLOCK_ENTRY_BYTES: usize = size_of::<Block<'static>>() + size_of::<Base>();

/// A packed record location: block number and offset within the block.
pub(crate) type Loc = u32;

/// The record of `""` that block 0 points to: id 0, a zero length byte.
static EMPTY_RECORD: [u8; SHORT_PREFIX] = [0; SHORT_PREFIX];

/// Where [`Arena::probe`]'s candidate points before its filter
/// accepts one: a record of id 0 and length 0 followed by `LONG_LEN` zero
/// bytes, so that comparing any short string with it reads only this
/// static (and a long string reads a length of 0 there, which ends its
/// comparison). hashbrown's `find` returns only an element its filter
/// accepted, so no lookup ever compares with it; it spares the probe a
/// null test after the loop.
static NO_CANDIDATE: [u8; SHORT_PREFIX + LONG_LEN] = [0; SHORT_PREFIX + LONG_LEN];

/// Bytes of the record of a string of `len` bytes, or `None` on overflow.
#[inline]
fn record_size(len: usize) -> Option<usize> {
    if len < LONG_LEN {
        Some(len + SHORT_PREFIX)
    } else {
        u32::try_from(len).ok()?;
        len.checked_add(LONG_PREFIX)
    }
}

/// Bytes of the records of `strings` strings of `bytes` bytes in all, at
/// most: each adds its id and a length prefix (1 byte below [`LONG_LEN`]
/// bytes, 9 bytes with the link for the at most `bytes / LONG_LEN` longer
/// ones).
/// Saturating.
pub(crate) fn records_bytes(strings: usize, bytes: usize) -> usize {
    let long = (bytes / LONG_LEN).min(strings);
    let prefixes = strings
        .saturating_mul(SHORT_PREFIX)
        .saturating_add(long.saturating_mul(LONG_PREFIX - SHORT_PREFIX));
    bytes.saturating_add(prefixes)
}

/// The length byte of a record holding a string of `len` bytes: the
/// length below [`LONG_LEN`], else [`ESCAPE`] (a 4-byte length and the
/// link follow).
/// The one place the tag is chosen: [`Block::write`] writes it, and the
/// id index keeps a copy (`Store`).
#[inline(always)]
pub(crate) fn tag_of(len: usize) -> u8 {
    if len < LONG_LEN { len as u8 } else { ESCAPE }
}

/// Whether the `b.len()` bytes at `a` equal `b`. Strings of up to 64 bytes
/// (most function names and file paths) are compared inline, with two or
/// four overlapping loads per side (no call, so the caller's loop keeps
/// its registers); longer ones with `memcmp`.
///
/// # Safety
///
/// `a..a + b.len()` must be initialised memory readable through `a`.
#[inline(always)]
unsafe fn eq_bytes(a: *const u8, b: &[u8]) -> bool {
    let n = b.len();
    let p = b.as_ptr();
    /// Loads a `T` from `p + at`: an unaligned read of `size_of::<T>()`
    /// bytes.
    ///
    /// # Safety
    ///
    /// Those bytes must be initialised and readable through `p`.
    #[inline(always)]
    unsafe fn load<T: Copy>(p: *const u8, at: usize) -> T {
        // SAFETY: the caller's guarantee.
        unsafe { p.add(at).cast::<T>().read_unaligned() }
    }
    /// A mask with bit `i` set where byte `at + i` of `a` and `p` are
    /// equal, for `i` in `0..16`.
    ///
    /// # Safety
    ///
    /// 16 bytes from `at` must be initialised and readable through both.
    #[inline(always)]
    unsafe fn eq16(a: *const u8, p: *const u8, at: usize) -> u32 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller's guarantee; SSE2 is part of x86-64.
        unsafe {
            use core::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
            let x = _mm_loadu_si128(a.add(at).cast::<__m128i>());
            let y = _mm_loadu_si128(p.add(at).cast::<__m128i>());
            // `movemask` sets only the low 16 bits.
            _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) as u32
        }
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: the caller's guarantee.
        unsafe {
            if load::<u128>(a, at) == load::<u128>(p, at) {
                0xFFFF
            } else {
                0
            }
        }
    }
    // SAFETY: every load below reads `size_of::<T>()` bytes starting at
    // offset 0 or `n - size_of::<T>()` (or 16 and `n - 32`, only when
    // `n > 32`), and each branch requires `n >= size_of::<T>()`: all within
    // `0..n` of both sides, initialised
    // by the caller's guarantee (`a`) and by being a slice (`b`).
    unsafe {
        if n >= 16 {
            if n > 64 {
                return core::slice::from_raw_parts(a, n) == b;
            }
            let mut eq = eq16(a, p, 0) & eq16(a, p, n - 16);
            if n > 32 {
                eq &= eq16(a, p, 16) & eq16(a, p, n - 32);
            }
            eq == 0xFFFF
        } else if n >= 8 {
            let x = (load::<u64>(a, 0) ^ load::<u64>(p, 0))
                | (load::<u64>(a, n - 8) ^ load::<u64>(p, n - 8));
            x == 0
        } else if n >= 4 {
            let x = (load::<u32>(a, 0) ^ load::<u32>(p, 0))
                | (load::<u32>(a, n - 4) ^ load::<u32>(p, n - 4));
            x == 0
        } else if n > 0 {
            // 1 to 3 bytes: the first, middle and last byte cover them all.
            *a == *p && *a.add(n / 2) == *p.add(n / 2) && *a.add(n - 1) == *p.add(n - 1)
        } else {
            true
        }
    }
}

/// What [`Arena::probe`] found.
pub(crate) enum Probe<R> {
    /// What the caller's `hit` made of the record that holds the string.
    Hit(R),
    /// No element's record holds the string.
    Miss,
    /// The first candidate is another string of the same length: look
    /// again, comparing every candidate in full.
    Unsure,
}

/// A record a lookup found in an arena: its id, its address and its
/// location.
#[derive(Clone, Copy)]
pub(crate) struct Found<'a> {
    /// The record's start (its id), inside a block of the arena (never
    /// null).
    record: NonNull<u8>,
    /// The record's location (the shared table's hint cache keeps it).
    loc: Loc,
    _arena: PhantomData<&'a Arena>,
}

impl Found<'_> {
    /// The record's id.
    #[inline(always)]
    pub(crate) fn id(self) -> u32 {
        // SAFETY: `Found` is only made from the start of a record `push`
        // wrote (`probe`, `Arena::found`), in an arena borrowed for
        // `'a`, so still allocated and never overwritten meanwhile (or,
        // never in practice, from the static `NO_CANDIDATE`).
        unsafe { read_id(self.record.as_ptr()) }
    }

    /// The record's address ([`Arena::record_addr`] of its location): the
    /// shared table checks in debug builds that a shard's record is the
    /// one its id index published.
    #[inline(always)]
    pub(crate) fn addr(self) -> *const u8 {
        self.record.as_ptr()
    }

    /// The record's location.
    #[inline(always)]
    pub(crate) fn loc(self) -> Loc {
        self.loc
    }
}

/// The string bytes of the record whose length byte (or escape) is just
/// before `q`: the one decoding of a record's length ([`Arena::bytes`],
/// [`Arena::record_str`]).
///
/// # Safety
///
/// `q - 1` must be the length byte or escape of a complete record `push`
/// wrote (or of the static empty record), readable through `q` and
/// unchanged for `'a`.
#[inline(always)]
unsafe fn bytes_at<'a>(q: *const u8) -> &'a [u8] {
    // SAFETY: the caller's guarantee: a short record's length byte is
    // followed by that many initialised bytes, a long record's escape by
    // its 4-byte length, its link and its bytes.
    unsafe {
        let b0 = *q.sub(1);
        if b0 == ESCAPE {
            return long_bytes(q);
        }
        core::slice::from_raw_parts(q, usize::from(b0))
    }
}

/// Whether the record whose length byte (or escape) is just before `q`
/// holds exactly `s`: the one comparison of a record with a string
/// ([`Arena::holds`], [`Arena::id_if_biased`]; [`Arena::probe`]
/// splits it around hashbrown's probe loop). The record's form is chosen
/// from `s.len()`, so the comparison never branches on the record's own
/// length byte before comparing it.
///
/// # Safety
///
/// `q - 1` must be the length byte or escape of a complete record `push`
/// wrote (or of the static empty record), readable through `q`.
#[inline(always)]
unsafe fn holds_at(q: *const u8, s: &[u8]) -> bool {
    // SAFETY: the caller's guarantee. A length byte equal to `s.len()`
    // (below `ESCAPE`) means a short record of exactly `s.len()`
    // initialised bytes from `q`; an escape, a long record whose 4-byte
    // length and bytes follow at `q`.
    unsafe {
        let b0 = *q.sub(1);
        if s.len() < LONG_LEN {
            usize::from(b0) == s.len() && eq_bytes(q, s)
        } else {
            // Inlined: its callers (the shared table's long hinted hit,
            // `Arena::holds` after a probe) are out of the short path.
            b0 == ESCAPE && long_bytes_inline(q) == s
        }
    }
}

/// The id of the record whose length byte is just before `q` if it holds
/// exactly `s`.
///
/// # Safety
///
/// As for [`holds_at`]; the record's id starts `SHORT_PREFIX` bytes before
/// `q`.
#[inline(always)]
unsafe fn id_if_at(q: *const u8, s: &[u8]) -> Option<u32> {
    // SAFETY: the caller's guarantee.
    unsafe { holds_at(q, s).then(|| read_id(q.sub(SHORT_PREFIX))) }
}

/// The id at the start of the record at `p`.
///
/// # Safety
///
/// `p` must be the start of a record `push` wrote (or the static empty
/// record), readable through `p`.
#[inline(always)]
unsafe fn read_id(p: *const u8) -> u32 {
    // SAFETY: the caller's guarantee: a record starts with its id.
    u32::from_le_bytes(unsafe { p.cast::<[u8; ID_BYTES]>().read_unaligned() })
}

/// The bytes of a long record whose escape byte is just before `q`.
///
/// # Safety
///
/// `q - 1` must be the escape byte of a long record `push` wrote,
/// readable through `q`.
#[cold]
#[inline(never)]
unsafe fn long_bytes<'a>(q: *const u8) -> &'a [u8] {
    // SAFETY: the caller's guarantee.
    unsafe { long_bytes_inline(q) }
}

/// [`long_bytes`] inlined into the caller: for the paths that handle long
/// records themselves (the long probe, iteration's loop for blocks with
/// long records), where a call would make the caller reload what it
/// might have changed.
///
/// # Safety
///
/// As for [`long_bytes`].
#[inline(always)]
unsafe fn long_bytes_inline<'a>(q: *const u8) -> &'a [u8] {
    // SAFETY: the caller guarantees a whole long record: the 4-byte length
    // at `q`, the link, then that many initialised bytes.
    unsafe {
        let len = u32::from_le_bytes(q.cast::<[u8; 4]>().read_unaligned());
        core::slice::from_raw_parts(q.add(LONG_BYTES_AT), len as usize)
    }
}

/// A block's run of records of consecutive ids: see [`Arena::run`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    /// How many records (ids) from the first.
    pub(crate) len: usize,
    /// The block's [`Arena::block_bias`].
    pub(crate) bias: *const u8,
    /// Whether any of the block's records has the long form.
    pub(crate) long: bool,
}

/// One block: a slice of an arena chunk, filled from the front.
struct Block<'a> {
    /// The block's first byte; `cap` bytes from it belong to the block.
    base: NonNull<u8>,
    /// Bytes of the block.
    cap: usize,
    /// Bytes written so far; `base[..used]` is initialised.
    used: usize,
    /// Offset of the last record written (0 while there is none).
    last: usize,
    /// How many bytes normal strings may use (0 for a dedicated block).
    limit: usize,
    /// Whether the records hold consecutive ids in the order they were
    /// written: cleared when a dedicated record took the next id while
    /// this block, current and not empty, stayed open (see
    /// [`Arena::run`]).
    run: bool,
    /// Whether any record is in the long form.
    long: bool,
    /// Whether the next block (by number) starts where this one ends, in
    /// the same allocation, so that a record may run on into it (see
    /// [`Arena::spill`]).
    joins_next: bool,
    /// The chunk memory belongs to the arena's `Bump`.
    _chunk: PhantomData<&'a mut [u8]>,
}

// SAFETY: a `Block` is a unique handle to a region of chunk memory, exactly
// like the `&'a mut [MaybeUninit<u8>]` it stands for (which is `Send` and
// `Sync`): it is only written through `&mut Arena` and only read through
// `&Arena`, and it holds no thread-local state.
unsafe impl Send for Block<'_> {}
// SAFETY: as above; shared access only reads initialised bytes.
unsafe impl Sync for Block<'_> {}

impl<'a> Block<'a> {
    fn new(base: NonNull<u8>, cap: usize) -> Self {
        Block {
            base,
            cap,
            used: 0,
            last: 0,
            limit: cap.min(MAX_BLOCK),
            run: true,
            long: false,
            joins_next: false,
            _chunk: PhantomData,
        }
    }

    /// Block 0: the static record of `""`, never written.
    fn empty() -> Self {
        Block {
            base: NonNull::from(&EMPTY_RECORD).cast(),
            cap: 0,
            used: 0,
            last: 0,
            limit: 0,
            run: true,
            long: false,
            joins_next: false,
            _chunk: PhantomData,
        }
    }

    fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Appends the record of `s` with id `id`, `size` bytes (its
    /// [`record_size`]), and returns its offset in the block.
    ///
    /// # Panics
    ///
    /// If the block has no room for it (the callers check first).
    #[inline(always)]
    fn write(&mut self, s: &str, id: u32, size: usize) -> usize {
        let start = self.room(size);
        // SAFETY: `room` checked that the record fits at `start`.
        unsafe { self.write_at(start, s, id, size) }
    }

    /// Where the next record of `size` bytes goes: the offset of the first
    /// unwritten byte, checked to leave room for it.
    ///
    /// # Panics
    ///
    /// If the block has no room for it (the callers check first).
    #[inline(always)]
    fn room(&self, size: usize) -> usize {
        let start = self.used;
        assert!(
            size <= self.cap && start <= self.cap - size,
            "record outside its block"
        );
        start
    }

    /// [`write`](Self::write) at `start`, which [`room`](Self::room)
    /// returned for `size`: split so that a caller can check the room, do
    /// something else (take the record's id), then write without reading
    /// the block again.
    ///
    /// # Safety
    ///
    /// `start` is what `room(size)` returned, and the block has not
    /// changed since (the caller held it mutably throughout).
    #[inline(always)]
    unsafe fn write_at(&mut self, start: usize, s: &str, id: u32, size: usize) -> usize {
        let p = self.base.as_ptr().wrapping_add(start);
        let len = s.len();
        // SAFETY: `base[start..start + size]` is inside the block (`room`
        // checked it, the caller's guarantee), which lies inside a chunk
        // the arena's `Bump` allocated for it alone, and `p` derives from
        // that allocation's pointer. Nothing else reads or writes those
        // bytes: they are at or above `used`, which is `start`. `size` is
        // the record's size, so the prefix and the bytes fit.
        unsafe {
            p.cast::<[u8; ID_BYTES]>().write_unaligned(id.to_le_bytes());
            let tag = p.add(ID_BYTES);
            tag.write(tag_of(len));
            let bytes = if len < LONG_LEN {
                tag.add(1)
            } else {
                self.long = true;
                // `record_size` refused lengths beyond `u32::MAX`.
                let q = tag.add(1);
                q.cast::<[u8; 4]>()
                    .write_unaligned((len as u32).to_le_bytes());
                q.add(LINK_AT)
                    .cast::<[u8; 4]>()
                    .write_unaligned(NO_LINK.to_le_bytes());
                p.add(LONG_PREFIX)
            };
            core::ptr::copy_nonoverlapping(s.as_ptr(), bytes, len);
        }
        self.used = start + size;
        self.last = start;
        start
    }
}

/// Whether a record of `size` bytes fits `b` in place, as a normal
/// string (a dedicated block, limit 0, takes none).
#[inline(always)]
fn fits(b: &Block<'_>, size: usize) -> bool {
    b.used + size <= b.limit
}

/// A block's base address biased by its block number and a short record's
/// prefix: `base - (block << LOCAL_BITS) + SHORT_PREFIX`, so a short
/// string's bytes are at `bases[loc >> LOCAL_BITS] + loc`, with no mask for
/// the offset, its length byte just before and its id before that. Derived from the chunk's
/// pointer with wrapping arithmetic, which keeps its provenance.
#[derive(Clone, Copy)]
struct Base(*const u8);

// SAFETY: a `Base` is read through (see `Arena::record`), like the
// `&[u8]` it stands for, and written through only by `Arena::link_long`,
// which holds `&mut Arena`; the memory it points to is owned by the
// arena's `Bump` and outlives it.
unsafe impl Send for Base {}
// SAFETY: as above.
unsafe impl Sync for Base {}

#[self_referencing]
struct Core {
    bump: Bump,
    #[borrows(bump)]
    #[covariant]
    blocks: Vec<Block<'this>>,
}

/// Chunk sizes exactly as bumpalo 3 computes them for a request of
/// `size` bytes (`Bump::new_chunk_memory_details`).
fn bumpalo_chunk_capacity(size: usize) -> Option<usize> {
    let size = size.checked_next_multiple_of(16)?;
    if size < PAGE_SIZE {
        Some((size + CHUNK_OVERHEAD).next_power_of_two() - CHUNK_OVERHEAD)
    } else {
        Some(
            size.checked_add(CHUNK_OVERHEAD)?
                .checked_next_multiple_of(PAGE_SIZE)?
                - CHUNK_OVERHEAD,
        )
    }
}

/// The smallest chunk bumpalo can be steered to allocate for a request of
/// `request` bytes when its current chunk has `current` usable bytes.
///
/// bumpalo tries twice the current chunk, then halves until the candidate
/// would be smaller than the request, taking the first candidate that fits
/// under its allocation limit (`Bump::alloc_layout_slow`). Setting the limit
/// to the smallest candidate makes it take exactly that one.
fn steered_chunk_capacity(current: usize, request: usize) -> Option<usize> {
    let min = request.max(BUMPALO_MIN_CHUNK);
    let mut base = current.checked_mul(2)?.max(min);
    let mut smallest = None;
    while base >= min {
        smallest = Some(bumpalo_chunk_capacity(base.max(request))?);
        base /= 2;
    }
    smallest
}

/// A chunk [`Arena::plan_chunk`] sized: the usable bytes bumpalo will
/// allocate, the block-list entries to reserve, by how many entries the
/// list's capacity grows, and the heap bytes all of it adds.
struct ChunkPlan {
    actual: usize,
    reserve: usize,
    block_list_growth: usize,
    /// Blocks whose bases the id index must have room for (0 without
    /// one), and the bytes it grows by for them.
    pairs: usize,
    pairs_growth: usize,
    cost: usize,
}

/// Allocates `len` uninitialised bytes from `bump`: `None` for 0 bytes,
/// `Err` if bumpalo refuses.
fn alloc_uninit(bump: &Bump, len: usize) -> Result<Option<NonNull<u8>>, ()> {
    if len == 0 {
        return Ok(None);
    }
    let layout = Layout::from_size_align(len, 1).map_err(|_| ())?;
    bump.try_alloc_layout(layout).map(Some).map_err(|_| ())
}

impl Base {
    /// The biased base of block number `block`, which starts at `base`.
    fn of(base: NonNull<u8>, block: usize) -> Base {
        Base(
            base.as_ptr()
                .cast_const()
                .wrapping_sub(block << LOCAL_BITS)
                .wrapping_add(SHORT_PREFIX),
        )
    }
}

/// Appends `block`, its biased base address (see [`Base`]) and, if the
/// arena has an id index, the bases the index reads.
fn add_block<'a>(
    blocks: &mut Vec<Block<'a>>,
    bases: &mut Vec<Base>,
    index: &mut IdIndex,
    block: Block<'a>,
) {
    index.set_block(blocks.len(), block.base.as_ptr());
    bases.push(Base::of(block.base, blocks.len()));
    blocks.push(block);
}

/// Moves block `i`'s base to `base` in the arena's bases and the id
/// index's.
fn set_base(bases: &mut [Base], index: &mut IdIndex, i: usize, base: NonNull<u8>) {
    index.set_block(i, base.as_ptr());
    bases[i] = Base::of(base, i);
}

/// What an in-place push ([`Arena::push_in_place_with`]) wrote: the
/// record's id, its location, its id-index entry word
/// ([`Entry::of`](crate::id_index::Entry::of)'s) and its address (as
/// [`Arena::record_addr`] gives it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pushed {
    pub(crate) id: u32,
    pub(crate) loc: Loc,
    pub(crate) word: u32,
    pub(crate) record: *const u8,
}

/// The arena: a bump allocator, its blocks, and the growth policy.
///
/// `#[repr(C)]`, the block bases first: a lookup reads only them, and a
/// shared table's shard keeps them on its lock's cache line
/// ([`Arena::LOOKUP_BYTES`]).
#[repr(C)]
pub(crate) struct Arena {
    /// Each block's biased base address ([`Base`]), by block number: the
    /// read path's flat array (8-byte entries, one load per record).
    bases: Vec<Base>,
    core: Core,
    /// Index of the block the next string goes to.
    cur: usize,
    /// The id-index entry word of a short record at offset 0 of block
    /// `cur` ([`short_word_base`]), so that an in-place push hands its
    /// caller the entry word with one `or` (`fill-hint` 5 instructions
    /// per string fewer than computing it from the location).
    cur_word: u32,
    /// Heap bytes of all chunks: usable bytes plus bumpalo's footers.
    chunk_bytes: usize,
    /// Usable bytes of bumpalo's current (most recent) chunk.
    last_chunk: usize,
    /// Usable bytes of the next normal chunk.
    next_chunk: usize,
    /// Usable bytes of all normal (not dedicated) chunks.
    normal_bytes: usize,
    /// Chunk size up to which chunks double on every growth
    /// ([`MAX_CHUNK_CAPACITY`] unless [`Arena::cap_chunk_doubling`] lowered
    /// it); beyond it they double once the arena holds
    /// [`CHUNK_GROWTH_RATIO`] chunks' worth.
    doubling_cap: usize,
    /// The id index of the table whose records these are, which keeps a
    /// copy of the block bases in a form `resolve` reads with fewer
    /// instructions (`id_index`'s module docs); with no allocation for an
    /// arena without one (a shared table's shard). The arena owns it so
    /// that every change of a block base reaches it ([`add_block`],
    /// [`set_base`]) and its room for them grows with the block list.
    index: IdIndex,
}

// SAFETY: an `Arena` is `!Sync` only because of the `bumpalo::Bump` that
// owns its chunks (bump allocation mutates `Cell`s through `&Bump`). The
// `Bump` is a private field of `Core`, reached only in this module, and no
// `&self` method here allocates from it or otherwise uses it: every
// allocation is made through `&mut self` (`add_chunk`, in
// `Core::with_mut`), and the `&self` methods read the block list, the
// block bases and block memory written before the shared borrow began
// (the test-only `capacity` reads the `Bump`'s byte count, a read). So
// threads sharing an `&Arena` cannot race, and the types that hold an
// arena (`Store`, so `StringTable` and `Resolver`; a consumed shared
// table's arenas) are `Sync` when their other parts are.
#[allow(unsafe_code)]
unsafe impl Sync for Arena {}

// Unwind safety (`catch_unwind` around a table), for the same reason: the
// `Bump`'s `Cell`s, which make the arena neither `RefUnwindSafe` nor (its
// blocks borrowing the `Bump`) `UnwindSafe`, are never touched through
// `&self`, so a panic cannot leave a shared arena half-changed; and no
// `&mut self` method runs caller code (but `push_in_place_with`'s
// crate-internal id closure, called before anything is written) or panics
// on any input its callers pass (only on a broken internal invariant), so
// one that unwinds does not leave it half-changed either. The tables' own
// changes (a record, then an index entry and a hash slot) are ordered so
// that a panic in the only caller code they run, a user `BuildHasher`,
// leaves them as they were (tested: `hasher_panic_*` in
// `src/shared/mod.rs`, `a_panicking_hasher_leaves_the_table_usable` in
// `src/table.rs`).
impl core::panic::RefUnwindSafe for Arena {}
impl core::panic::UnwindSafe for Arena {}

impl core::fmt::Debug for Arena {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Arena")
            .field("blocks", &self.block_count())
            .field("chunk_bytes", &self.chunk_bytes)
            .finish()
    }
}

impl Arena {
    /// The leading bytes of an `Arena` that a lookup reads (the block
    /// bases' vector).
    pub(crate) const LOOKUP_BYTES: usize =
        core::mem::offset_of!(Arena, bases) + size_of::<Vec<Base>>();

    /// An arena whose first chunk holds `capacity` bytes (none if 0), with
    /// no id index.
    pub(crate) fn with_capacity(capacity: usize) -> Result<Self, Error> {
        let mut arena = Arena {
            core: CoreBuilder {
                bump: Bump::new(),
                blocks_builder: |_| vec![Block::empty()],
            }
            .build(),
            bases: vec![Base(EMPTY_RECORD.as_ptr().wrapping_add(SHORT_PREFIX))],
            cur: 0,
            cur_word: short_word_base(0),
            chunk_bytes: 0,
            last_chunk: 0,
            next_chunk: FIRST_CHUNK_CAPACITY,
            normal_bytes: 0,
            doubling_cap: MAX_CHUNK_CAPACITY,
            index: IdIndex::none(),
        };
        if capacity > 0 {
            let capacity = bumpalo_chunk_capacity(capacity)
                .filter(|&c| c <= MAX_ARENA_BYTES)
                .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, capacity))?;
            arena.add_normal_chunk(capacity, usize::MAX)?;
            arena.set_cur(1);
            arena.next_chunk = capacity.clamp(FIRST_CHUNK_CAPACITY, MAX_CHUNK_CAPACITY);
        }
        Ok(arena)
    }

    /// [`with_capacity`](Self::with_capacity) with an id index of room for
    /// `entries` entries (at least 1) that holds `""`'s entry. The index is
    /// allocated after the first chunk, with room for the bases of every
    /// block the block list has room for (moving it once they are known
    /// cost a pre-sized table's fill 6 instructions per string in
    /// `malloc`).
    pub(crate) fn with_index(capacity: usize, entries: usize) -> Result<Self, Error> {
        let mut arena = Arena::with_capacity(capacity)?;
        let blocks = arena.core.borrow_blocks().capacity();
        let mut index = IdIndex::with_capacity(blocks, entries).map_err(|()| {
            let bytes = blocks
                .saturating_mul(PAIR_BYTES)
                .saturating_add(entries.saturating_mul(crate::id_index::ENTRY_BYTES));
            Error::new(ErrorKind::AllocFailed, bytes)
        })?;
        index.push(crate::id_index::Entry::EMPTY);
        let installed = arena.install_index(index);
        debug_assert!(installed.is_ok(), "the index has room for every block");
        Ok(arena)
    }

    /// Makes `index`, an allocated index whose entries locate none of this
    /// arena's records but `""`'s (a new or cleared table's), this arena's
    /// id index: gives it room for the bases of every block the block list
    /// has room for and stores those of the blocks there are. If that room
    /// cannot be allocated, `index` is handed back, unchanged.
    pub(crate) fn install_index(&mut self, mut index: IdIndex) -> Result<(), IdIndex> {
        debug_assert!(index.is_allocated() && index.len() <= 1);
        let blocks = self.core.borrow_blocks().capacity();
        if index.try_reserve_pairs(blocks).is_err() {
            return Err(index);
        }
        for (i, &Base(biased)) in self.bases.iter().enumerate() {
            // The block's start: its biased base less the bias (`Base::of`).
            let start = biased
                .wrapping_add(i << LOCAL_BITS)
                .wrapping_sub(SHORT_PREFIX);
            index.set_block(i, start);
        }
        self.index = index;
        Ok(())
    }

    /// The id index.
    #[inline(always)]
    pub(crate) fn index(&self) -> &IdIndex {
        &self.index
    }

    /// The id index, to add entries or change its entry capacity (the
    /// arena alone stores block bases in it).
    #[inline(always)]
    pub(crate) fn index_mut(&mut self) -> &mut IdIndex {
        &mut self.index
    }

    /// Blocks whose bases the id index makes room for when its entries
    /// move to a larger allocation: twice the blocks there are, so that the
    /// arena can double before the index must move for its bases alone
    /// (each such move copies every entry: `fill` 6 instructions per
    /// string in `memcpy` when the index made room for the bases only as
    /// the block list grew).
    pub(crate) fn index_pairs_target(&self) -> usize {
        (2 * self.block_count())
            .min(MAX_BLOCKS)
            .max(self.index.pairs())
    }

    /// Moves the id index into an allocation of `capacity` entries and room
    /// for as many blocks' bases as the block list has (after a `clear` and
    /// a new, smaller arena, far fewer than before), if that is smaller;
    /// see [`IdIndex::shrink_to`].
    pub(crate) fn shrink_index(&mut self, capacity: usize) {
        self.index.shrink_to(capacity, self.index_pairs_shrunk());
    }

    /// Blocks whose bases the id index keeps room for when it moves to a
    /// smaller allocation: as many as the block list has room for, at most
    /// what it has.
    pub(crate) fn index_pairs_shrunk(&self) -> usize {
        let blocks = self.core.borrow_blocks().capacity();
        blocks.clamp(1, self.index.pairs().max(1))
    }

    /// Takes the id index out, leaving one with no allocation.
    pub(crate) fn take_index(&mut self) -> IdIndex {
        core::mem::replace(&mut self.index, IdIndex::none())
    }

    /// Lowers the chunk size up to which chunks double on every growth to
    /// `cap` usable bytes (at least [`PAGE_CHUNK_CAPACITY`]), and
    /// the first chunk's to at most `cap`: for an empty arena that is one
    /// of many (the shared table's shards), whose last chunks' unused
    /// tails add up. Beyond the cap, chunks still double once the arena
    /// holds [`CHUNK_GROWTH_RATIO`] chunks' worth, so the tail stays a
    /// small fraction of a large arena.
    pub(crate) fn cap_chunk_doubling(&mut self, cap: usize) {
        self.doubling_cap = cap.clamp(PAGE_CHUNK_CAPACITY, MAX_CHUNK_CAPACITY);
        self.next_chunk = self.next_chunk.min(self.doubling_cap);
    }

    /// Bytes of the arena's chunks (footers included), without its block
    /// list.
    #[inline]
    pub(crate) fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// Heap bytes the arena holds: chunks with their footers, the boxed
    /// `Bump`, and the block list.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.chunk_bytes
            + size_of::<Bump>()
            + self.core.borrow_blocks().capacity() * BLOCK_ENTRY_BYTES
    }

    /// Usable bytes in all chunks.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.core.borrow_bump().allocated_bytes()
    }

    fn block_count(&self) -> usize {
        self.core.borrow_blocks().len()
    }

    /// The address just past the first byte of the record at `loc`: the
    /// string's first byte for a short record.
    ///
    /// # Safety
    ///
    /// `loc` must be a location `push` returned since the last `clear`, or
    /// 0 (see the module's safety notes): its block is looked up without a
    /// bounds check.
    #[inline(always)]
    unsafe fn after_tag(&self, loc: Loc) -> *const u8 {
        // SAFETY: the caller's contract; the high half of `loc` is its
        // block number (truncation intended).
        unsafe { self.after_tag_split(loc, (loc >> LOCAL_BITS) as u16) }
    }

    /// [`after_tag`](Self::after_tag) with `loc`'s block number,
    /// `loc >> LOCAL_BITS`, given: a caller that reads a location from
    /// memory (an id-index entry, a hash slot) reads its high half with a
    /// load of its own ([`Slot::loc_and_block`]), one `movzx` instead of
    /// copying the location to a register and shifting it (`resolve` 50.1
    /// -> 49.1 instructions per string, `benches/README.md`).
    ///
    /// [`Slot::loc_and_block`]: crate::table::Slot::loc_and_block
    ///
    /// # Safety
    ///
    /// `loc` must be a location `push` returned since the last `clear`, or
    /// 0, and `block` its block number (`loc >> LOCAL_BITS`): the block's
    /// base is read without a bounds check. The address is computed with
    /// wrapping arithmetic; reading through it is the caller's business.
    #[inline(always)]
    pub(crate) unsafe fn after_tag_split(&self, loc: Loc, block: u16) -> *const u8 {
        debug_assert_eq!(u32::from(block), loc >> LOCAL_BITS, "wrong block");
        debug_assert!(
            usize::from(block) < self.bases.len(),
            "location {loc:#x} was never pushed"
        );
        // SAFETY: `loc` came from `push` since the last `clear` (or is 0:
        // the caller's contract), and blocks are only removed by dropping
        // the arena, so its block number, `block`, is below `bases.len()`.
        // Skipping the bounds check removes a compare and a branch (and a
        // panic path that kept lookups from being inlined) from every read.
        let Base(biased) = unsafe { *self.bases.get_unchecked(usize::from(block)) };
        // `biased + loc` is the block's base plus the record's offset plus
        // `SHORT_PREFIX` (its id and length byte): inside the block, or one
        // past the static empty record.
        // Wrapping arithmetic: computing the address reads nothing (the
        // callers dereference the result).
        biased.wrapping_add(loc as usize)
    }

    /// The bytes of the string whose record is at `loc`.
    ///
    /// # Safety
    ///
    /// `loc` must be a location `push` returned since the last `clear`, or
    /// 0.
    #[inline(always)]
    pub(crate) unsafe fn bytes(&self, loc: Loc) -> &[u8] {
        // SAFETY: the caller's contract is `after_tag`'s.
        let q = unsafe { self.after_tag(loc) };
        // SAFETY: `q - 1` is the length byte of a record `push` wrote (or
        // of the static empty record: the caller's contract), and records
        // are never overwritten until `clear`, after which no old location
        // is used. `push` writes the
        // whole record (length prefix, then the bytes) before returning
        // its location, so the prefix and the bytes after it are
        // initialised, inside the block, and readable through `q`, which
        // derives from the chunk's allocation (or points one past the
        // static record, for zero bytes).
        unsafe { bytes_at(q) }
    }

    /// Calls `f` with the location and the string of every record, block
    /// by block in block-number order, each block's records in the order
    /// they were written: the arena read front to back (for a re-hash
    /// that follows the memory rather than a hash table's buckets).
    ///
    /// A block's records lie back to back from its start to `used` (`room`
    /// hands out `used`, `write_at` advances it by the record's size, and
    /// a record that [`spill`](Self::spill)s counts in its own block's
    /// `used`), so each record's size, read from its length byte, leads to
    /// the next. Block 0, the static empty record of `""`, has none.
    pub(crate) fn for_each_record(&self, mut f: impl FnMut(Loc, &str)) {
        for (block, b) in self.core.borrow_blocks().iter().enumerate().skip(1) {
            let mut start = 0;
            while start < b.used {
                // Block numbers and record starts fit their bits (`push`
                // made these locations).
                let loc = ((block as u32) << LOCAL_BITS) | start as u32;
                // SAFETY: `loc` is the start of a record of a block of
                // this arena (the loop walks each block's records, see
                // above), a location `push` returned since the last
                // `clear` (which empties every block).
                let s = unsafe { self.str(loc) };
                f(loc, s);
                start += record_size(s.len()).expect("a stored record's size");
            }
        }
    }

    /// Whether the record at `loc` holds exactly `s` (see [`holds_at`]).
    ///
    /// # Safety
    ///
    /// As for [`bytes`](Self::bytes).
    #[inline(always)]
    pub(crate) unsafe fn holds(&self, loc: Loc, s: &[u8]) -> bool {
        // SAFETY: the caller's contract, as for `bytes`: `after_tag(loc)` is
        // just past the length byte of a record `push` wrote (or of the
        // static empty record), readable through it.
        unsafe { holds_at(self.after_tag(loc), s) }
    }

    /// The id of the record at `loc` if it holds exactly `s` (see
    /// [`holds_at`]).
    ///
    /// # Safety
    ///
    /// As for [`bytes`](Self::bytes).
    #[inline(always)]
    pub(crate) unsafe fn id_if_holds(&self, loc: Loc, s: &[u8]) -> Option<u32> {
        // SAFETY: the caller's contract, as for `holds`.
        unsafe { id_if_at(self.after_tag(loc), s) }
    }

    /// Looks up `s` in `table`, whose elements give their record's
    /// location, its block number (as for
    /// [`after_tag_split`](Self::after_tag_split)) and a copy of its
    /// length byte (`slot(element)`); `LONG`
    /// says whether `s` has [`LONG_LEN`] bytes or more (the caller knows,
    /// and each form gets its own copy of the probe).
    ///
    /// The probe loop filters candidates by that copy of the length byte,
    /// held in the element itself: `s.len()` for a short string, the
    /// escape for a long one. A compare, no call and no read of the
    /// record, so hashbrown's loop keeps its state in registers and a
    /// candidate of another length costs no cache miss into the arena.
    /// The candidate that passes (almost always the only one with this
    /// control byte and length byte) is then compared: a short record byte
    /// for byte, a long one by its 4-byte length and bytes, inline (long
    /// strings went through a full comparison of every candidate with a
    /// call each: 89 instructions per lookup besides the `memcmp`, `get/hit`
    /// on a binary's symbol names, 7% of them long, `benches/README.md`).
    /// [`Probe::Unsure`] if that candidate is another string (the caller
    /// then compares every candidate in full).
    ///
    /// # Safety
    ///
    /// Every element of `table` must give a location `push` returned
    /// since the last `clear` (or 0) and the length byte `push` wrote in
    /// that record ([`tag_of`] of its string's length): the comparison
    /// reads `s.len()` bytes of a short record without checking them
    /// against the record's own length byte. With `LONG` false, `s` must
    /// be shorter than [`LONG_LEN`] bytes, or its length, truncated to the
    /// filter's byte, could pass a shorter record.
    #[inline(always)]
    pub(crate) unsafe fn probe<'a, const LONG: bool, T, R>(
        &'a self,
        table: &HashTable<T>,
        hash: u64,
        s: &[u8],
        slot: impl Fn(&T) -> (Loc, u16, u8),
        hit: fn(Found<'a>) -> R,
    ) -> Probe<R> {
        debug_assert_eq!(s.len() >= LONG_LEN, LONG);
        // Truncation intended: a short string is under `LONG_LEN` bytes.
        let tag = if LONG { ESCAPE } else { s.len() as u8 };
        // Until the filter accepts a candidate: a static stand-in that is
        // safe to compare (see `NO_CANDIDATE`), so that no null test is
        // needed after the loop.
        let mut bytes: *const u8 = NO_CANDIDATE.as_ptr().wrapping_add(SHORT_PREFIX);
        let Some(found) = table.find(hash, |e| {
            let (loc, block, t) = slot(e);
            let matches = t == tag;
            if matches {
                // SAFETY: the table's elements give locations `push`
                // returned since the last `clear` and their block numbers
                // (this function's contract).
                bytes = unsafe { self.after_tag_split(loc, block) };
            }
            matches
        }) else {
            return Probe::Miss;
        };
        // SAFETY: hashbrown returns only an element the filter accepted,
        // which set `bytes` just past the length byte of the record at the
        // element's location, whose length byte is the element's copy
        // (the caller's guarantee), `tag`: for a short string, a short
        // record of exactly `s.len()` initialised bytes from `bytes`
        // (see `bytes`); for a long one, a long record, its 4-byte length,
        // its link and that many bytes from `bytes`. Were it ever to return
        // another, `bytes` would still be `NO_CANDIDATE`'s, with
        // `LONG_LEN` zero bytes after it: a short comparison stays inside
        // that static, and a long one reads a zero length there, which no
        // long string has.
        let eq = unsafe {
            if LONG {
                long_bytes_inline(bytes) == s
            } else {
                eq_bytes(bytes, s)
            }
        };
        if eq {
            // The record's id starts `SHORT_PREFIX` bytes before its
            // length byte's end (the long form's length follows it).
            // SAFETY: `bytes` is `SHORT_PREFIX` bytes after the start of a
            // record's id inside a block (or of `NO_CANDIDATE`), so the
            // subtraction stays in that allocation and is not null.
            let record = unsafe { NonNull::new_unchecked(bytes.sub(SHORT_PREFIX).cast_mut()) };
            Probe::Hit(hit(Found {
                record,
                loc: slot(found).0,
                _arena: PhantomData,
            }))
        } else {
            Probe::Unsure
        }
    }

    /// Prefetches the two cache lines just past the record of a string of
    /// `len` bytes that starts at `record`: where the arena's next record
    /// goes if it fits the block (otherwise the hint is wasted, never
    /// wrong; after a long record it is 4 bytes early, which at most
    /// changes which line comes first). For the shared table's shards:
    /// eight arenas written in turn are eight interleaved write streams,
    /// which the hardware prefetchers do not follow as they follow
    /// `StringTable`'s one, so a shard's next record would be written to
    /// lines that have left the cache, and the next shard lock's locked
    /// instruction would wait for those stores (`benches/README.md`,
    /// session 24).
    #[inline(always)]
    pub(crate) fn prefetch_after(record: *const u8, len: usize) {
        let next = record.wrapping_add(SHORT_PREFIX + len);
        crate::prefetch::prefetch(next);
        crate::prefetch::prefetch(next.wrapping_add(64));
    }

    /// The address of the record at `loc` (its first byte, the id): for
    /// a prefetch, for the shared table's index and hints, for `set_id`.
    /// Reads no string memory.
    ///
    /// # Safety
    ///
    /// As for [`bytes`](Self::bytes) (the block's base is read unchecked).
    #[inline]
    pub(crate) unsafe fn record_addr(&self, loc: Loc) -> *const u8 {
        // SAFETY: the caller's contract.
        unsafe { self.after_tag(loc) }.wrapping_sub(SHORT_PREFIX)
    }

    /// The record at `loc` as a lookup's result.
    ///
    /// # Safety
    ///
    /// As for [`bytes`](Self::bytes): [`Found::id`] reads the record.
    #[inline]
    pub(crate) unsafe fn found(&self, loc: Loc) -> Found<'_> {
        // SAFETY: the caller's contract.
        let p = unsafe { self.record_addr(loc) }.cast_mut();
        Found {
            // Record addresses are inside blocks, or the static empty
            // record: never null (checked: `found` is off the hot path).
            record: NonNull::new(p).expect("a record address is never null"),
            loc,
            _arena: PhantomData,
        }
    }

    /// Rewrites the id of the record at `loc`, for a record pushed before
    /// its id was known.
    ///
    /// # Safety
    ///
    /// `loc` must be a location `push` returned since the last `clear`
    /// (location 0, the static empty record, panics).
    pub(crate) unsafe fn set_id(&mut self, loc: Loc, id: u32) {
        assert!(loc != 0, "the empty record is static");
        // SAFETY: the caller's contract.
        let p = unsafe { self.record_addr(loc) }.cast_mut();
        // SAFETY: `loc` is a location `push` returned (the caller's
        // contract; not the static empty record, asserted above), so `p`
        // is the start of a record inside a block of
        // a chunk this arena owns, derived from that chunk's pointer, and
        // its first `ID_BYTES` are the id. `&mut self` excludes readers
        // holding `&self`; readers without a borrow (the shared table's
        // resolve) only read records published after this write.
        unsafe { p.cast::<[u8; ID_BYTES]>().write_unaligned(id.to_le_bytes()) }
    }

    /// The string of the record at `p`, an address [`Arena::record_addr`]
    /// returned, read without the arena: for readers that hold no borrow
    /// of the arena (the shared table's lock-free `resolve`).
    ///
    /// # Safety
    ///
    /// `p` must be `record_addr(loc)` for a `loc` that `push` returned and
    /// that is not location 0; that record must stay allocated and
    /// unchanged for `'a` (no `clear`, the arena not dropped), and its
    /// bytes must have been written before this read (a happens-before
    /// edge, such as a Release store of `p` read with Acquire, when `p`
    /// crosses threads).
    #[inline]
    pub(crate) unsafe fn record_str<'a>(p: *const u8) -> &'a str {
        // SAFETY: `p` is the start of a complete record (the caller's
        // contract), readable through `p`, which `record_addr` derived from
        // the block's allocation; its id comes first, then the short
        // length or the long form's escape.
        let bytes = unsafe { bytes_at(p.add(SHORT_PREFIX)) };
        // SAFETY: those bytes were copied there from a `&str` (valid UTF-8)
        // and stay unchanged for `'a` (the caller's contract).
        unsafe { core::str::from_utf8_unchecked(bytes) }
    }

    /// The id of the record whose location is `loc` in a block whose
    /// [`block_bias`](Arena::block_bias) is `bias`, if it holds exactly
    /// `s`; read without the arena, like [`Arena::record_str`].
    ///
    /// # Safety
    ///
    /// `bias` must be the `block_bias` of `loc`'s block in an arena that
    /// holds the record at `loc` (a location `push` returned), which is
    /// complete, readable through `bias` and unchanged for as long as
    /// the call.
    #[inline(always)]
    pub(crate) unsafe fn id_if_biased(bias: *const u8, loc: Loc, s: &[u8]) -> Option<u32> {
        // `bias + loc` is `after_tag(loc)`: just past the record's length
        // byte (or escape), `SHORT_PREFIX` bytes after its start, its id.
        // SAFETY: the caller's contract: the byte before `bias + loc` is
        // the length byte of a complete record, whose id starts
        // `SHORT_PREFIX` bytes before `bias + loc`.
        unsafe { id_if_at(bias.wrapping_add(loc as usize), s) }
    }

    /// [`id_if_biased`](Self::id_if_biased) of a string known to be short
    /// (1 to `LONG_LEN - 1` bytes, as `is_short` tests): the record's
    /// length byte is compared with the string's length as a byte, with no
    /// test for the long form (an escape never equals a short length).
    ///
    /// # Safety
    ///
    /// As for [`id_if_biased`](Self::id_if_biased).
    #[inline(always)]
    pub(crate) unsafe fn id_if_biased_short(bias: *const u8, loc: Loc, s: &[u8]) -> Option<u32> {
        debug_assert!(!s.is_empty() && s.len() < LONG_LEN);
        let q = bias.wrapping_add(loc as usize);
        // SAFETY: the caller's contract: `q - 1` is the length byte (or
        // escape) of a complete record, whose id starts at `q -
        // SHORT_PREFIX`; a length byte equal to `s.len()` (below the
        // escape, so the truncation keeps it) means a short record of
        // exactly `s.len()` initialised bytes from `q`.
        unsafe {
            (*q.sub(1) == s.len() as u8 && eq_bytes(q, s)).then(|| read_id(q.sub(SHORT_PREFIX)))
        }
    }

    /// The string of the record whose location is `loc` in a block whose
    /// [`block_bias`](Arena::block_bias) is `bias`; read without the
    /// arena, like [`Arena::record_str`].
    ///
    /// # Safety
    ///
    /// As for [`Arena::id_if_biased`], and the returned string must not
    /// outlive the arena.
    #[inline]
    pub(crate) unsafe fn str_biased<'a>(bias: *const u8, loc: Loc) -> &'a str {
        let q = bias.wrapping_add(loc as usize);
        // SAFETY: the caller's contract: `q - 1` is the length byte (or
        // escape) of a complete record whose bytes, copied from a `&str`,
        // stay unchanged while the arena lives.
        unsafe { core::str::from_utf8_unchecked(bytes_at(q)) }
    }

    /// [`str_biased`](Self::str_biased) of a record whose length byte is
    /// `tag`, known not to be the escape: the string's length comes from
    /// the caller (the id index's copy), not from the record, so reading
    /// the next string does not wait for this one's record.
    ///
    /// # Safety
    ///
    /// As for [`str_biased`](Self::str_biased), and `tag` is the record's
    /// length byte, below [`ESCAPE`].
    #[inline(always)]
    pub(crate) unsafe fn str_short_biased<'a>(bias: *const u8, loc: Loc, tag: u8) -> &'a str {
        let q = bias.wrapping_add(loc as usize);
        let n = usize::from(tag);
        // SAFETY: the caller's contract: `q - 1` is the record's length
        // byte, `tag`, followed by `tag` bytes copied from a `&str`,
        // unchanged while the arena lives. No record `push` wrote is empty
        // (`push_slow` refuses `""`, and the in-place push sends it
        // there), and `loc` is not block 0's static empty record: knowing
        // it lets the caller's copy skip its zero-length test (`iterate`
        // 41.3 -> 37.3 instructions per string, benches/README.md).
        unsafe {
            core::hint::assert_unchecked(n != 0);
            core::str::from_utf8_unchecked(core::slice::from_raw_parts(q, n))
        }
    }

    /// [`str_biased`](Self::str_biased) of a long record, whose length
    /// (at least [`LONG_LEN`], which spares the caller's copy its
    /// zero-length test) is read from the record. With
    /// [`str_short_biased`](Self::str_short_biased), for blocks that hold
    /// long records: the caller picks by the id index's copy of the length
    /// byte, so a short string's length does not wait for its record's
    /// cache line.
    ///
    /// # Safety
    ///
    /// As for [`str_biased`](Self::str_biased), and the record is long
    /// (its length byte is [`ESCAPE`]).
    #[inline(always)]
    pub(crate) unsafe fn str_long_biased<'a>(bias: *const u8, loc: Loc) -> &'a str {
        let q = bias.wrapping_add(loc as usize);
        // SAFETY: the caller's contract: `q - 1` is a long record's escape,
        // followed by its 4-byte length, its link and its bytes, copied from a
        // `&str` and unchanged while the arena lives; `push` gives the long
        // form only to strings of at least `LONG_LEN` bytes (`tag_of`).
        unsafe {
            let bytes = long_bytes_inline(q);
            core::hint::assert_unchecked(bytes.len() >= LONG_LEN);
            core::str::from_utf8_unchecked(bytes)
        }
    }

    /// [`str_long_biased`](Self::str_long_biased), with the record's link:
    /// the id of the next long string, or [`NO_LINK`]. For iteration,
    /// which reads the strings up to that id as short ones.
    ///
    /// # Safety
    ///
    /// As for [`str_long_biased`](Self::str_long_biased).
    #[inline(always)]
    pub(crate) unsafe fn str_long_linked<'a>(bias: *const u8, loc: Loc) -> (&'a str, u32) {
        // The string's first byte: the record's length and link are the
        // eight bytes before it. One address for the three reads (rather
        // than the length's, plus 8 for the bytes) left LLVM a register
        // for the short strings' loop in `Store::fold_located` too
        // (`benches/README.md`, lever 78).
        let q = bias.wrapping_add(LONG_BYTES_AT).wrapping_add(loc as usize);
        // SAFETY: the caller's contract: `q - 9` is a long record's escape,
        // followed by its length, its link and its bytes (as for
        // `str_long_biased`), copied from a `&str` of at least `LONG_LEN`
        // bytes.
        unsafe {
            let at = |k: usize| {
                u32::from_le_bytes(q.sub(LONG_BYTES_AT - k).cast::<[u8; 4]>().read_unaligned())
            };
            let (len, link) = (at(0), at(LINK_AT));
            core::hint::assert_unchecked(len as usize >= LONG_LEN);
            let bytes = core::slice::from_raw_parts(q, len as usize);
            (core::str::from_utf8_unchecked(bytes), link)
        }
    }

    /// Sets the link of the long record at `loc` to `next`, the id of the
    /// next long string: a `StringTable`'s store links each long string
    /// to the next as it pushes that one, so that iteration finds them
    /// without testing every string's form. The record's id, length and
    /// bytes are unchanged, and the link lies outside the string's bytes.
    /// Only a `StringTable`'s store calls it, whose arena nothing reads
    /// while `&mut self` is held (a shared table's shards, read without
    /// their lock, never do).
    ///
    /// # Safety
    ///
    /// `loc` must be a location [`push`](Self::push) (or an in-place push)
    /// returned for a string of [`LONG_LEN`] bytes or more since the last
    /// `clear`.
    #[inline(always)]
    pub(crate) unsafe fn link_long(&mut self, loc: Loc, next: u32) {
        // SAFETY: the caller's contract: `loc` locates a long record of
        // this arena, so `after_tag(loc)` is just past its escape, followed
        // by its length and its link, in the chunk allocation the block's
        // base (and so `q`, through wrapping arithmetic) derives from;
        // nothing else reads or writes the link while `&mut self` is held.
        unsafe {
            let q = self.after_tag(loc).cast_mut();
            q.add(LINK_AT)
                .cast::<[u8; 4]>()
                .write_unaligned(next.to_le_bytes());
        }
    }

    /// What the locations of `loc`'s block are added to for
    /// [`Arena::id_if_biased`]: the block's base biased by its block
    /// number and a short record's prefix (`after_tag(loc) - loc`, the
    /// same for every location of the block). For a reader without the
    /// arena (the shared table's hint cache).
    ///
    /// # Safety
    ///
    /// As for [`bytes`](Self::bytes) (the block's base is read unchecked).
    #[inline]
    pub(crate) unsafe fn block_bias(&self, loc: Loc) -> *const u8 {
        // SAFETY: the caller's contract.
        unsafe { self.after_tag(loc) }.wrapping_sub(loc as usize)
    }

    /// The string whose record is at `loc`.
    ///
    /// # Safety
    ///
    /// As for [`bytes`](Self::bytes).
    #[inline(always)]
    pub(crate) unsafe fn str(&self, loc: Loc) -> &str {
        // SAFETY: `loc` is a location returned by `push` since the last
        // `clear` (the caller's contract), so `bytes` is exactly what
        // `push` copied there from a `&str`: valid UTF-8. Records are never
        // overwritten until `clear`.
        unsafe { core::str::from_utf8_unchecked(self.bytes(loc)) }
    }

    /// The records of consecutive ids from the one at `loc` that its block
    /// holds, up to the record at `stop` if that is in the same block
    /// (else to the block's end): how many, and the block's
    /// [`block_bias`](Self::block_bias), so that a caller holding their
    /// locations (a [`StringTable`]'s id index) reads them with
    /// [`str_short_biased`](Self::str_short_biased) or
    /// [`str_biased`](Self::str_biased), with no block lookup per string.
    /// Only for an arena whose records were pushed with consecutive ids (a
    /// [`StringTable`]'s): a block that is a run holds the strings of
    /// consecutive ids; one that is not gives only `loc`'s (count 1).
    /// `loc` must not be 0 (the empty block holds no records).
    ///
    /// [`StringTable`]: crate::StringTable
    #[inline(always)]
    pub(crate) fn run(&self, loc: Loc, stop: Loc) -> Run {
        let block = (loc >> LOCAL_BITS) as usize;
        debug_assert!(block != 0, "the empty block has no records");
        let b = &self.core.borrow_blocks()[block];
        let Base(biased) = self.bases[block];
        if !b.run {
            return Run {
                len: 1,
                bias: biased,
                long: true,
            };
        }
        // The ids: up to `stop`'s (excluded) or the block's last.
        let (past, to) = if stop >> LOCAL_BITS == loc >> LOCAL_BITS {
            (0, stop as usize)
        } else {
            (1, (block << LOCAL_BITS) | b.last)
        };
        // SAFETY: `loc` is a location `push` returned since the last
        // `clear` (the module's safety notes), and so, when in this block,
        // is `stop`; `b.last` is the block's last record (the block holds
        // at least `loc`'s). Each record starts with its id `SHORT_PREFIX`
        // bytes before its `after_tag`, the biased base plus its location.
        let (from, to) = unsafe {
            (
                read_id(biased.wrapping_add(loc as usize).sub(SHORT_PREFIX)),
                read_id(biased.wrapping_add(to).sub(SHORT_PREFIX)),
            )
        };
        // A run holds consecutive ids.
        Run {
            len: (to - from) as usize + past,
            bias: biased,
            long: b.long,
        }
    }

    /// Copies `s` into the arena as a record carrying id `id` and returns
    /// its location. May add chunks of at most `budget` heap bytes in all
    /// (block list growth included). On error no string is added; capacity
    /// (the block list, a chunk added before a later allocation failed)
    /// may remain. The common case ([`push_in_place`](Self::push_in_place))
    /// is inlined into the caller; the rest is out of line.
    ///
    /// # Panics
    ///
    /// If `s` is empty: `""` has no record (id 0 stands for it).
    #[inline]
    pub(crate) fn push(&mut self, s: &str, id: u32, budget: usize) -> Result<Loc, Error> {
        match self.push_in_place(s, id) {
            Some(loc) => Ok(loc),
            None => self.push_slow(s, id, budget),
        }
    }

    /// [`push`](Self::push) of a record that does not fit the current
    /// block in place (or is long).
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, s: &str, id: u32, budget: usize) -> Result<Loc, Error> {
        // Id 0 stands for `""` (block 0's static record): no table pushes
        // it, and `str_short_biased` relies on no pushed record being
        // empty.
        assert!(!s.is_empty(), "the empty string is never pushed");
        let size =
            record_size(s.len()).ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, s.len()))?;
        let cur = self.cur;
        let fits = self.core.borrow_blocks()[cur].remaining() >= size;
        let spilled = !fits && size <= DEDICATED_MIN && self.spill(size);
        let block = if fits {
            cur
        } else if spilled {
            // Written below, running on into the next block. The block is
            // full then (`used` past its limit), so the next push takes
            // the slow path and `advance` moves on to what is left of the
            // next block: a block's first record never comes in place,
            // which the shared table relies on to publish each block
            // (`SharedStringTable::insert_new`).
            cur
        } else if size > DEDICATED_MIN {
            // The current block stays open for the strings that follow.
            let block = self.dedicated_block(size, budget)?;
            self.core.with_blocks_mut(|blocks| {
                if block != cur && blocks[cur].used > 0 {
                    // Its later records skip this record's id.
                    blocks[cur].run = false;
                }
            });
            block
        } else {
            self.advance(size, budget)?;
            let block = self.cur;
            if self.core.borrow_blocks()[block].remaining() < size {
                // `advance` chose an empty block this record runs on from.
                let spilled = self.spill(size);
                debug_assert!(spilled, "advance chose a block the record runs on from");
            }
            block
        };
        let start = self
            .core
            .with_blocks_mut(|blocks| blocks[block].write(s, id, size));
        // `block < MAX_BLOCKS` is checked when blocks are added, and every
        // record starts below `MAX_BLOCK`.
        Ok(((block as u32) << LOCAL_BITS) | start as u32)
    }

    /// The common case of [`push`](Self::push), inlined into the callers'
    /// miss path: a short string (below [`LONG_LEN`] bytes, not empty) that
    /// fits the current block. `None` (nothing written) otherwise.
    #[inline(always)]
    pub(crate) fn push_in_place(&mut self, s: &str, id: u32) -> Option<Loc> {
        self.push_in_place_word::<false>(s, id).map(|(loc, _)| loc)
    }

    /// [`push_in_place`](Self::push_in_place), also returning the record's
    /// id-index entry word ([`Entry::of`](crate::id_index::Entry::of)'s).
    ///
    /// With `LONG` true, the in-place push of a long string instead
    /// ([`LONG_LEN`] bytes or more; `None` for a shorter one), in the long
    /// form, with its block's long label: what `push_slow` does for such a
    /// record when it fits, without the slow path's tests for running on,
    /// dedicated blocks and new chunks, which cost a long symbol name about
    /// 170 instructions more to store than a short one (hot-path lever 73,
    /// `benches/README.md`).
    #[inline(always)]
    pub(crate) fn push_in_place_word<const LONG: bool>(
        &mut self,
        s: &str,
        id: u32,
    ) -> Option<(Loc, u32)> {
        let pushed =
            self.push_in_place_with::<LONG, _>(s, || Ok::<u32, core::convert::Infallible>(id));
        pushed.map(|r| match r {
            Ok(p) => (p.loc, p.word),
            Err(never) => match never {},
        })
    }

    /// Makes block `cur` the current block.
    fn set_cur(&mut self, cur: usize) {
        self.cur = cur;
        self.cur_word = short_word_base(cur);
    }

    /// [`push_in_place`](Self::push_in_place) of a record whose id is
    /// taken only once the record is known to fit: `id` is called then
    /// (and not at all when `None` is returned), and its error is returned
    /// with nothing written. The shared table takes ids this way, so that
    /// the check and the write read the block once, not again after the
    /// id's compare-and-swap. Returns the id, the location and the
    /// id-index entry word and the record's address (what
    /// [`record_addr`](Self::record_addr) gives for the location, known
    /// here without its block's lookup: the shared table publishes it,
    /// 5.9 instructions fewer per insertion in `fill-hint`,
    /// `benches/README.md`, session 53). `LONG` as for
    /// [`push_in_place_word`](Self::push_in_place_word).
    #[inline(always)]
    pub(crate) fn push_in_place_with<const LONG: bool, E>(
        &mut self,
        s: &str,
        id: impl FnOnce() -> Result<u32, E>,
    ) -> Option<Result<Pushed, E>> {
        let size = if LONG {
            if s.len() < LONG_LEN {
                return None;
            }
            // No overflow: a `&str` holds at most `isize::MAX` bytes. A
            // record that fits a block is under 64 KiB, so its length fits
            // the record's 4 bytes (as `record_size` requires).
            s.len() + LONG_PREFIX
        } else {
            // `""` goes to `push_slow`, which refuses it.
            if s.is_empty() || s.len() >= LONG_LEN {
                return None;
            }
            s.len() + SHORT_PREFIX
        };
        // A long record's label is one less than a short one's
        // (`Entry::of`).
        let cur_word = self.cur_word - (u32::from(LONG) << LOCAL_BITS);
        let cur = self.cur;
        self.core.with_blocks_mut(|blocks| {
            let b = &mut blocks[cur];
            if !fits(b, size) {
                return None;
            }
            debug_assert_eq!(record_size(s.len()), Some(size));
            let start = b.room(size);
            Some(id().map(|id| {
                // SAFETY: `room(size)` gave `start`, and `b` has been
                // borrowed mutably since (`id` cannot reach it).
                let start = unsafe { b.write_at(start, s, id, size) };
                Pushed {
                    id,
                    loc: ((cur as u32) << LOCAL_BITS) | start as u32,
                    word: cur_word | start as u32,
                    record: b.base.as_ptr().wrapping_add(start).cast_const(),
                }
            }))
        })
    }

    /// Makes room for a record of `size` bytes that does not fit the
    /// current block's limit by letting it run on past the block's end into
    /// the next block, when that one is empty and continues the same
    /// allocation: the current block's capacity grows to the record's end
    /// and the next block now starts there (its base moved, which no
    /// location refers to while it is empty). Nothing is left unused at
    /// the block's end, where retiring the block would leave up to the
    /// record's size (with records of 33 KiB, about half of each 64 KiB
    /// block). The record still starts below [`MAX_BLOCK`], so its
    /// location is valid, and the ids of the block's records stay
    /// consecutive. Returns whether the record now fits the current block
    /// (the caller writes it there; the next push moves on to the next
    /// block through [`advance`](Self::advance)).
    #[cold]
    fn spill(&mut self, size: usize) -> bool {
        let cur = self.cur;
        let bases = &mut self.bases;
        let index = &mut self.index;
        self.core.with_blocks_mut(|blocks| {
            let [a, b] = match blocks.get_disjoint_mut([cur, cur + 1]) {
                Ok(pair) => pair,
                Err(_) => return false,
            };
            if !a.joins_next || a.used >= a.limit || b.used > 0 {
                return false;
            }
            let end = a.used + size;
            if end > a.cap + b.cap {
                return false;
            }
            if end > a.cap {
                let moved = end - a.cap;
                // SAFETY: `a` and `b` are adjacent parts of one allocation
                // (`joins_next`: `b.base` is `a.base + a.cap`) and
                // `moved <= b.cap`, so the new base stays inside it (or one
                // past its end when the record takes all of `b`).
                b.base = unsafe { b.base.add(moved) };
                b.cap -= moved;
                b.limit = b.cap.min(MAX_BLOCK);
                a.cap = end;
                set_base(bases, index, cur + 1, b.base);
            }
            true
        })
    }

    /// Makes `self.cur` an empty block that can take `size` bytes, reusing
    /// blocks kept by `clear` (or left over from a chunk) before
    /// allocating a new chunk.
    #[cold]
    fn advance(&mut self, size: usize, budget: usize) -> Result<(), Error> {
        let cur = self.cur;
        // An empty block that takes the record, or that the record can
        // run on from into the empty block after it (see `spill`).
        let reuse = self.core.with_blocks(|blocks| {
            (cur + 1..blocks.len()).find(|&i| {
                let b = &blocks[i];
                b.used == 0
                    && (b.limit >= size
                        || (b.limit > 0
                            && b.joins_next
                            && blocks
                                .get(i + 1)
                                .is_some_and(|n| n.used == 0 && b.cap + n.cap >= size)))
            })
        });
        if let Some(i) = reuse {
            self.set_cur(i);
            return Ok(());
        }
        // Double small chunks; past the doubling cap, double only once the
        // arena holds CHUNK_GROWTH_RATIO chunks' worth.
        let mut next = self.next_chunk;
        if self.normal_bytes > 0
            && (next < self.doubling_cap
                || self.normal_bytes >= CHUNK_GROWTH_RATIO.saturating_mul(next))
        {
            next = bumpalo_chunk_capacity(next.saturating_mul(2)).unwrap_or(next);
        }
        let capacity = bumpalo_chunk_capacity(size.max(next))
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, size))?;
        // Near a byte limit, settle for the smallest chunk that holds the
        // record rather than take more than half of what is left: the
        // table's index and hash table need room to grow for the strings
        // a large chunk would hold (a 16 KiB first chunk under a limit of
        // 20,640 bytes left them none: 3 strings, where 20,592 took 409).
        // The cost counts the block list's growth too: without it, a
        // budget that just held the chunk but not the larger block list
        // refused the string, where a smaller budget took it in the
        // smallest chunk.
        let affordable = |c: usize| {
            self.plan_chunk(c, None)
                .is_ok_and(|plan| plan.cost <= budget / 2)
        };
        let capacity = if affordable(capacity) {
            capacity
        } else {
            bumpalo_chunk_capacity(size).unwrap_or(capacity)
        };
        let first = self.block_count();
        self.add_normal_chunk(capacity, budget)?;
        self.next_chunk = next;
        self.set_cur(first);
        Ok(())
    }

    /// Makes room for the records of `strings` strings of `bytes` bytes in
    /// all in the current block and the empty blocks after it, which later
    /// pushes fill in order ([`advance`](Self::advance)); adds one chunk
    /// for what they lack, within `budget` heap bytes.
    ///
    /// A record that does not fit the end of a block runs on into the next
    /// one if that is empty and continues the same allocation
    /// ([`spill`](Self::spill)), so only the end of each such run of
    /// blocks can go unused: counted as one average record less one byte
    /// (strings of about equal length). Records over [`DEDICATED_MIN`]
    /// take a chunk of their own when pushed, so they get no room here.
    /// On error nothing is added but, as for `push`, block-list capacity.
    #[cold]
    pub(crate) fn reserve(
        &mut self,
        strings: usize,
        bytes: usize,
        budget: usize,
    ) -> Result<(), Error> {
        if strings == 0 || bytes == 0 {
            return Ok(());
        }
        let overflow = || Error::new(ErrorKind::CapacityOverflow, bytes);
        let record = record_size(bytes.div_ceil(strings)).ok_or_else(overflow)?;
        if record > DEDICATED_MIN {
            return Ok(());
        }
        let tail = record - 1;
        let cur = self.cur;
        // The room of each run of blocks from the current one: the current
        // block's rest, or an empty block, and the empty blocks each
        // joined to the one before.
        let free = self.core.with_blocks(|blocks| {
            let (mut free, mut run) = (0usize, blocks[cur].remaining());
            for (i, pair) in blocks[cur..].windows(2).enumerate() {
                let (b, next) = (&pair[0], &pair[1]);
                let runs_on = (i == 0 || b.used == 0) && b.joins_next;
                if next.used == 0 && runs_on {
                    run += next.limit;
                } else {
                    free += run.saturating_sub(tail);
                    run = if next.used == 0 { next.limit } else { 0 };
                }
            }
            free + run.saturating_sub(tail)
        });
        let Some(lack) = records_bytes(strings, bytes)
            .checked_sub(free)
            .filter(|&n| n > 0)
        else {
            return Ok(());
        };
        // One run of blocks: one end that can go unused.
        let capacity = lack
            .checked_add(tail)
            .and_then(bumpalo_chunk_capacity)
            .filter(|&c| c <= MAX_ARENA_BYTES)
            .ok_or_else(overflow)?;
        self.add_normal_chunk(capacity, budget)
    }

    /// An empty block of at least `size` bytes marked dedicated: a reused
    /// one, or the first block of a new chunk sized for the record.
    #[cold]
    fn dedicated_block(&mut self, size: usize, budget: usize) -> Result<usize, Error> {
        let cur = self.cur;
        // From the current block itself if it is empty (as after `clear`):
        // it has no strings to keep open. Made dedicated, it takes no more
        // strings (limit 0), so the next push moves on.
        let reuse = self.core.with_blocks_mut(|blocks| {
            let i = (cur..blocks.len()).find(|&i| blocks[i].used == 0 && blocks[i].cap >= size)?;
            blocks[i].limit = 0;
            Some(i)
        });
        if let Some(i) = reuse {
            return Ok(i);
        }
        let capacity = bumpalo_chunk_capacity(size)
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, size))?;
        // bumpalo sizes a new chunk by halving twice its current one, so
        // after a larger chunk it can only offer up to twice the request.
        // bumpalo's smallest chunk first (a normal block later strings
        // use) makes the current chunk small again, and the request
        // exact: a 70 KB string in a table whose chunks had reached 256
        // KiB took a 128 KiB chunk, whose excess only later strings could
        // fill, and a pre-sized table (`with_capacity`, `compact`) has
        // none; so a compacted table holding such strings took up to
        // 1.77x the original's memory. Done whenever it allocates less.
        let mut budget = budget;
        let steered = steered_chunk_capacity(self.last_chunk, capacity).unwrap_or(capacity);
        let reset =
            steered_chunk_capacity(self.last_chunk, BUMPALO_MIN_CHUNK).unwrap_or(BUMPALO_MIN_CHUNK);
        let exact = steered_chunk_capacity(reset, capacity).unwrap_or(capacity);
        if reset + exact + CHUNK_FOOTER_SIZE < steered
            && reset + exact + 2 * CHUNK_FOOTER_SIZE <= budget
        {
            // The id index's room for the new blocks' bases counts too
            // (`add_chunk` charges it): left out, the dedicated chunk's
            // budget was that much too large, and a merge of long strings
            // ended 5 bytes over a byte limit (the fuzz input of session
            // 48, now `fuzz/corpus/table_ops/regression-dedicated-pairs`).
            let footprint = |a: &Self| a.heap_bytes() + a.index.heap_bytes();
            let before = footprint(self);
            self.add_normal_chunk(BUMPALO_MIN_CHUNK, budget)?;
            budget = budget.saturating_sub(footprint(self) - before);
        }
        let first = self.block_count();
        self.add_chunk(capacity, Some(size), budget)?;
        Ok(first)
    }

    /// [`add_chunk`](Self::add_chunk) of a chunk of normal blocks, counted
    /// in `normal_bytes`.
    fn add_normal_chunk(&mut self, capacity: usize, budget: usize) -> Result<(), Error> {
        let added = self.add_chunk(capacity, None, budget)?;
        self.normal_bytes += added;
        Ok(())
    }

    /// Bytes the records take, and bytes the blocks from the current one
    /// on have left for records (those after it are not written yet).
    /// One pass over the block list: for growth decisions near a byte
    /// limit.
    #[cold]
    pub(crate) fn record_bytes_and_room(&self) -> (usize, usize) {
        let blocks = self.core.borrow_blocks();
        let used = blocks.iter().map(|b| b.used).sum();
        let room = blocks[self.cur..].iter().map(Block::remaining).sum();
        (used, room)
    }

    /// Heap bytes a [`push`](Self::push) of a string of `len` bytes may
    /// add: none if the current block has room for its record, else the
    /// smallest chunk that holds it, with the block list's growth (an
    /// upper bound: a push may also reuse an empty block).
    pub(crate) fn push_need(&self, len: usize) -> usize {
        let Some(size) = record_size(len) else {
            return 0;
        };
        if self.core.borrow_blocks()[self.cur].remaining() >= size {
            return 0;
        }
        bumpalo_chunk_capacity(size)
            .and_then(|c| self.plan_chunk(c, None).ok())
            .map_or(0, |plan| plan.cost)
    }

    /// What [`add_chunk`](Self::add_chunk) of `capacity` bytes would
    /// allocate, the block list's growth with it.
    fn plan_chunk(&self, capacity: usize, dedicated: Option<usize>) -> Result<ChunkPlan, Error> {
        let actual = steered_chunk_capacity(self.last_chunk, capacity)
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, capacity))?;
        // Blocks this chunk is cut into: the dedicated block, then the rest
        // of the requested part, then the steered excess (a separate
        // allocation, cut separately).
        let new_blocks = match dedicated {
            Some(_) => 1,
            None => capacity.div_ceil(MAX_BLOCK),
        } + (actual - capacity).div_ceil(MAX_BLOCK);
        if self.block_count() + new_blocks > MAX_BLOCKS {
            return Err(Error::new(ErrorKind::CapacityOverflow, capacity));
        }
        // The block list grows (to at least twice its size) before anything
        // else, charged, so the pushes cannot reallocate.
        let (reserve, block_list_growth) = {
            let blocks = self.core.borrow_blocks();
            let needed = blocks.len() + new_blocks;
            if needed > blocks.capacity() {
                let target = needed.max(blocks.capacity().saturating_mul(2));
                (target - blocks.len(), target - blocks.capacity())
            } else {
                (0, 0)
            }
        };
        // The id index's room for the new blocks' bases: at least doubled
        // when it must grow, as each move copies every entry.
        let (pairs, pairs_growth) = {
            let (have, needed) = (self.index.pairs(), self.block_count() + new_blocks);
            if !self.index.is_allocated() || needed <= have {
                (have, 0)
            } else {
                let target = needed.max(2 * have).min(MAX_BLOCKS);
                (target, (target - have) * PAIR_BYTES)
            }
        };
        Ok(ChunkPlan {
            actual,
            reserve,
            block_list_growth,
            pairs,
            pairs_growth,
            cost: actual + CHUNK_FOOTER_SIZE + block_list_growth * BLOCK_ENTRY_BYTES + pairs_growth,
        })
    }

    /// Allocates a chunk of `capacity` usable bytes (or the smallest bumpalo
    /// can be steered to, see [`steered_chunk_capacity`]) and appends its
    /// blocks. With `dedicated = Some(len)`, the first block holds exactly
    /// `len` bytes for one string.
    fn add_chunk(
        &mut self,
        capacity: usize,
        dedicated: Option<usize>,
        budget: usize,
    ) -> Result<usize, Error> {
        let ChunkPlan {
            actual,
            reserve,
            block_list_growth,
            pairs,
            pairs_growth,
            cost,
        } = self.plan_chunk(capacity, dedicated)?;
        if cost > budget {
            return Err(Error::new(ErrorKind::MemoryLimit, cost));
        }
        let failed = || {
            Error::new(
                ErrorKind::AllocFailed,
                block_list_growth * BLOCK_ENTRY_BYTES + pairs_growth,
            )
        };
        if reserve > 0 {
            self.core
                .with_blocks_mut(|blocks| blocks.try_reserve_exact(reserve))
                .map_err(|_| failed())?;
        }
        // The two lists always have the same length; keep their capacities
        // equal too (also after a failure between the two reservations), so
        // that the block list's capacity counts both.
        let entries = self.core.borrow_blocks().capacity();
        // The id index's room for the blocks' bases next (it counts in
        // `memory_usage`, so a caller that retries after a refusal sees
        // progress), then the arena's own bases (counted with the block
        // list).
        if pairs_growth > 0 {
            self.index.try_reserve_pairs(pairs).map_err(|()| failed())?;
        }
        if self.bases.capacity() < entries {
            self.bases
                .try_reserve_exact(entries - self.bases.len())
                .map_err(|_| failed())?;
        }
        let before = self.core.borrow_bump().allocated_bytes();
        let bases = &mut self.bases;
        let index = &mut self.index;
        let result = self.core.with_mut(|fields| {
            let bump: &Bump = fields.bump;
            bump.set_allocation_limit(Some(before + actual));
            // bumpalo places the requested `capacity` at the top of the new
            // chunk; a steered chunk larger than that is taken as a second
            // allocation from the same chunk, below the first.
            let first = alloc_uninit(bump, capacity)?;
            let second = alloc_uninit(bump, actual - capacity)?;
            let mut parts = [(first, capacity), (second, actual - capacity)];
            let reserved = fields.blocks.capacity();
            if let (Some(ptr), Some(len)) = (first, dedicated) {
                let block = Block {
                    limit: 0,
                    ..Block::new(ptr, len)
                };
                add_block(fields.blocks, bases, index, block);
                // The page-rounding tail (under 4 KiB) is left unused, so
                // that a large string costs one block number, not two.
                parts[0] = (None, 0);
            }
            for (ptr, len) in parts {
                let Some(ptr) = ptr else { continue };
                let mut off = 0;
                while off < len {
                    let n = (len - off).min(MAX_BLOCK);
                    // SAFETY: `off < len`, so the pointer stays inside the
                    // allocation of `len` bytes that `ptr` starts.
                    let base = unsafe { ptr.add(off) };
                    let block = Block {
                        joins_next: off + n < len,
                        ..Block::new(base, n)
                    };
                    add_block(fields.blocks, bases, index, block);
                    off += n;
                }
            }
            // The pushes fit the reserved (and charged) capacity.
            debug_assert_eq!(fields.blocks.capacity(), reserved);
            Ok(())
        });
        // Count whatever bumpalo allocated, even if the second part failed.
        let added = self.core.borrow_bump().allocated_bytes() - before;
        if added > 0 {
            self.chunk_bytes += added + CHUNK_FOOTER_SIZE;
            self.last_chunk = added;
        }
        result.map_err(|()| Error::new(ErrorKind::AllocFailed, actual + CHUNK_FOOTER_SIZE))?;
        debug_assert_eq!(
            added, actual,
            "bumpalo did not allocate the predicted chunk size"
        );
        Ok(added)
    }

    /// Makes the static empty block (block 0) current again in an arena
    /// that holds no string, so that the next push takes the slow path and
    /// moves on to the first empty block that takes it (the shared table
    /// publishes a block when its first record arrives, which only the
    /// slow path does).
    pub(crate) fn park(&mut self) {
        debug_assert!(self.core.with_blocks(|b| b.iter().all(|b| b.used == 0)));
        self.set_cur(0);
    }

    /// Forgets every string but keeps all chunks for reuse.
    ///
    /// Every block gets back the shape [`add_chunk`](Self::add_chunk) cut
    /// it to (a record that ran on into the next block, see
    /// [`spill`](Self::spill), moved the border between them), and the
    /// first chunk's first block becomes the current block again, as
    /// [`with_capacity`](Self::with_capacity) leaves it. Refilling the
    /// same strings in the same order then meets, at each step, the blocks
    /// the first fill met, followed by the ones it went on to allocate,
    /// and takes the same ones: it allocates nothing. (A border left where
    /// a spill moved it made a block just large enough for a dedicated
    /// string that came later, which took it, and sent the normal strings
    /// after it to a new chunk. Leaving block 0, the static empty record,
    /// current would send a long first string that had fitted the first
    /// chunk into a dedicated block, and the strings after it into a new
    /// chunk.)
    pub(crate) fn clear(&mut self) {
        let bases = &mut self.bases;
        let index = &mut self.index;
        let blocks = self.core.with_blocks_mut(|blocks| {
            let mut first = 0;
            while first < blocks.len() {
                // The blocks cut from one allocation: `first` to `last`.
                let mut last = first;
                while blocks[last].joins_next && last + 1 < blocks.len() {
                    last += 1;
                }
                let start = blocks[first].base;
                let total: usize = blocks[first..=last].iter().map(|b| b.cap).sum();
                let mut off = 0;
                for (i, b) in blocks[first..=last].iter_mut().enumerate() {
                    if last > first {
                        // As `add_chunk` cut them: `MAX_BLOCK` bytes each,
                        // the rest in the last.
                        let n = (total - off).min(MAX_BLOCK);
                        // SAFETY: the blocks `first..=last` are adjacent
                        // parts of one allocation of `total` bytes from
                        // `start` (`joins_next`; a spill moves the border
                        // between two of them and keeps the sum), and
                        // `off <= total`, so the pointer stays inside it
                        // (or one past its end).
                        b.base = unsafe { start.add(off) };
                        b.cap = n;
                        set_base(bases, index, first + i, b.base);
                        off += n;
                    }
                    b.used = 0;
                    b.last = 0;
                    b.limit = b.cap.min(MAX_BLOCK);
                    b.run = true;
                    b.long = false;
                }
                first = last + 1;
            }
            blocks.len()
        });
        self.set_cur(usize::from(blocks > 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_chunk_is_page_tuned() {
        let bump = Bump::with_capacity(FIRST_CHUNK_CAPACITY);
        assert_eq!(bump.chunk_capacity(), FIRST_CHUNK_CAPACITY);
        assert_eq!(
            bump.allocated_bytes_including_metadata() - bump.allocated_bytes(),
            CHUNK_FOOTER_SIZE
        );
        assert_eq!(
            (bump.allocated_bytes_including_metadata() + MALLOC_HEADER_SIZE) % PAGE_SIZE,
            0
        );
        assert_eq!(FIRST_CHUNK_CAPACITY + CHUNK_OVERHEAD, 4 * PAGE_SIZE);
    }

    /// Records too long for what is left of their block run on into the
    /// next one, which then starts after them: nothing is left unused,
    /// every record reads back, and the block after takes the next ones.
    #[test]
    fn long_records_spill_into_the_next_block() {
        // Blocks of 64 KiB, 64 KiB, 64 KiB and the rest, in one allocation.
        let mut a = Arena::with_capacity(200_000).unwrap();
        let chunks = a.chunk_bytes;
        let strings: Vec<String> = (0..5u8)
            .map(|i| {
                char::from(b'a' + i)
                    .to_string()
                    .repeat(40_000 + usize::from(i))
            })
            .collect();
        let locs: Vec<Loc> = strings
            .iter()
            .enumerate()
            .map(|(i, s)| a.push(s, i as u32, usize::MAX).unwrap())
            .collect();
        for (s, &loc) in strings.iter().zip(&locs) {
            // SAFETY: `push` returned `loc`.
            assert_eq!(unsafe { a.str(loc) }, s);
            assert!(((loc & LOCAL_MASK) as usize) < MAX_BLOCK);
        }
        // The second record spilled from block 1 into block 2, which now
        // starts after it and holds the third.
        assert_eq!(locs[0] >> LOCAL_BITS, 1);
        assert_eq!(locs[1] >> LOCAL_BITS, 1);
        assert_eq!(locs[2] >> LOCAL_BITS, 2);
        assert_eq!(a.chunk_bytes, chunks, "no chunk added for five records");
        // The runs of consecutive ids are intact.
        assert_eq!(a.run(locs[0], locs[2]).len, 2);
        // After `clear`, the same records take the same places.
        a.clear();
        for (i, s) in strings.iter().enumerate() {
            assert_eq!(a.push(s, i as u32, usize::MAX).unwrap(), locs[i]);
        }
        assert_eq!(a.chunk_bytes, chunks);
    }

    /// A long record pushed in place lands where `push` puts it, with the
    /// id-index word of `Entry::of` and the block marked as holding a long
    /// record; a short string, or a record that does not fit the current
    /// block, is refused with nothing written.
    #[test]
    fn long_records_in_place_match_push() {
        use crate::id_index::Entry;
        let mut a = Arena::with_capacity(FIRST_CHUNK_CAPACITY).unwrap();
        let mut b = Arena::with_capacity(FIRST_CHUNK_CAPACITY).unwrap();
        let short = "s".repeat(10);
        let long = "L".repeat(LONG_LEN);
        let longer = "M".repeat(1_000);
        assert!(a.push_in_place_word::<true>(&short, 1).is_none());
        let mut locs = Vec::new();
        for (i, s) in [&short, &long, &short, &longer].into_iter().enumerate() {
            let id = i as u32 + 1;
            let expected = b.push(s, id, usize::MAX).unwrap();
            let (loc, word) = if s.len() >= LONG_LEN {
                a.push_in_place_word::<true>(s, id).unwrap()
            } else {
                a.push_in_place_word::<false>(s, id).unwrap()
            };
            assert_eq!(loc, expected);
            assert_eq!(Entry::from_word(word, tag_of(s.len())), Entry::of(loc, s));
            // SAFETY: `push_in_place_word` returned `loc`.
            assert_eq!(unsafe { a.str(loc) }, s);
            locs.push(loc);
        }
        assert_eq!(a.run(locs[0], 0).len, 4);
        // Past what is left of the block: refused, nothing written.
        let blocks = a.block_count();
        let huge = "H".repeat(FIRST_CHUNK_CAPACITY);
        assert!(a.push_in_place_word::<true>(&huge, 5).is_none());
        assert_eq!(a.run(locs[0], 0).len, 4);
        let loc = a.push(&huge, 5, usize::MAX).unwrap();
        // SAFETY: `push` returned `loc`.
        assert_eq!(unsafe { a.str(loc) }, huge);
        assert!(a.block_count() > blocks);
    }

    /// `for_each_record` finds every record once, with its string, in
    /// block order, each block's in the order written: short and long
    /// records, records that spilled into the next block, dedicated
    /// blocks, and a block left with an unused end; none after `clear`.
    #[test]
    fn for_each_record_walks_every_record() {
        fn walk(a: &Arena) -> Vec<(Loc, String)> {
            let mut out = Vec::new();
            a.for_each_record(|loc, s| out.push((loc, s.to_string())));
            out
        }
        // Blocks of 64 KiB in one allocation (records spill), then a
        // capped arena of page-sized chunks (a shard's: blocks left with
        // unused ends), each with strings of every form.
        for capped in [false, true] {
            let mut a = Arena::with_capacity(if capped { 0 } else { 200_000 }).unwrap();
            if capped {
                a.cap_chunk_doubling(PAGE_CHUNK_CAPACITY);
            }
            let lens = [1, 10, 254, 255, 256, 1000, 40_000, 3, 70_000, 5, 300_000, 2];
            let n = if cfg!(miri) { 24 } else { 240 };
            let mut pushed: Vec<(Loc, String)> = (0..n)
                .map(|i| {
                    let c = char::from(b'a' + (i % 26) as u8);
                    let s = format!("{i}{}", c.to_string().repeat(lens[i % lens.len()]));
                    (a.push(&s, i as u32, usize::MAX).unwrap(), s)
                })
                .collect();
            let walked = walk(&a);
            // Block order, and within a block the order written.
            assert!(
                walked.windows(2).all(|w| w[0].0 < w[1].0),
                "capped {capped}"
            );
            pushed.sort();
            assert_eq!(walked, pushed, "capped {capped}");
            a.clear();
            assert_eq!(walk(&a), [], "capped {capped}");
        }
    }

    /// An arena whose chunk doubling is capped at a page (a shared table's
    /// shard) never holds much more than its records: its chunks start at
    /// a page and grow only as a sixteenth of what it holds, so the unused
    /// tail of its last chunk is at most a page or an eighth of its bytes.
    /// (With the cap at 64 KiB, a shard of 100 KB left up to 64 KiB unused,
    /// and a table's shards, filled evenly, all at once.)
    #[test]
    fn capped_arenas_keep_small_tails() {
        let mut a = Arena::with_capacity(0).unwrap();
        a.cap_chunk_doubling(PAGE_CHUNK_CAPACITY);
        let n = if cfg!(miri) { 3_000 } else { 60_000 };
        let mut records = 0;
        for i in 0..n {
            let s = format!("shard/{i:06}/{}", "x".repeat(i % 50));
            records += record_size(s.len()).unwrap();
            a.push(&s, i as u32, usize::MAX).unwrap();
            let unused = a.chunk_bytes - records;
            assert!(
                unused <= PAGE_SIZE + records / 8,
                "{unused} bytes unused for {records} bytes of records"
            );
        }
    }

    #[test]
    fn steering_matches_bumpalo() {
        // Grow an arena through normal and dedicated chunks; `add_chunk`
        // debug-asserts every prediction.
        let mut a = Arena::with_capacity(FIRST_CHUNK_CAPACITY).unwrap();
        let small = "x".repeat(1000);
        let big = "y".repeat(300_000);
        for i in 0..2000 {
            a.push(&small, 1, usize::MAX).unwrap();
            if i % 500 == 0 {
                a.push(&big, 2, usize::MAX).unwrap();
            }
        }
        let bump = a.core.borrow_bump();
        assert_eq!(a.chunk_bytes, bump.allocated_bytes_including_metadata());
        assert_eq!(a.capacity(), bump.allocated_bytes());
    }
}
