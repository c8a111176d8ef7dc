//! The private self-referencing core: a `bumpalo` arena that owns every
//! string's bytes, and the blocks carved out of it.
//!
//! # Layout
//!
//! The arena is a [`Bump`] whose chunk sizes we steer (see
//! [`Arena::add_chunk`]). Each chunk is cut into *blocks* of at most
//! [`MAX_BLOCK`] bytes, filled from the front with *records*: a string's
//! length as a LEB128 varint, then its bytes. A record never straddles
//! blocks. It is located by a packed 32-bit [`Loc`]: the block number in
//! the high [`BLOCK_BITS`] bits and the record's offset within the block in
//! the low [`LOCAL_BITS`] bits. A `Loc` is self-contained, so the hash
//! table can keep it beside each id and a lookup reads the string without
//! first reading the id index: one dependent cache miss fewer per hit.
//!
//! A record over [`DEDICATED_MIN`] bytes that does not fit the current block
//! gets a *dedicated* block: an empty one left by `clear` if one is large
//! enough, or a new chunk sized to it. The current block stays open for
//! the strings that follow.
//!
//! # Safety
//!
//! Block memory is handed out by bumpalo uninitialised, as
//! `&mut [MaybeUninit<u8>]` ([`alloc_uninit`]). [`Arena::bytes`] reads back
//! bytes that [`Arena::push`] initialised, and [`Arena::str`] skips UTF-8
//! validation of bytes that `push` copied from a `&str`; [`read_long_len`]
//! decodes a long length prefix through the same pointer. These are the
//! only `unsafe` code in the module.

use core::alloc::Layout;
use core::mem::MaybeUninit;

use bumpalo::Bump;
use ouroboros::self_referencing;

use crate::error::{Error, ErrorKind};

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
const LOCAL_BITS: u32 = 18;
/// Bits of a [`Loc`] that hold the block number.
const BLOCK_BITS: u32 = 32 - LOCAL_BITS;
/// Mask of the local offset in a [`Loc`].
const LOCAL_MASK: u32 = (1 << LOCAL_BITS) - 1;
/// Largest block: every record offset in it fits [`LOCAL_BITS`].
const MAX_BLOCK: usize = LOCAL_MASK as usize + 1;
/// Number of blocks a [`Loc`] can address (block 0 is the empty block).
const MAX_BLOCKS: usize = 1 << BLOCK_BITS;
/// Records longer than this that do not fit the current block get a
/// dedicated block instead of retiring a partly used block for them.
pub(crate) const DEDICATED_MIN: usize = MAX_CHUNK_CAPACITY / 4;
/// Most bytes a LEB128 length takes.
const MAX_VARINT: usize = 10;
/// bumpalo's smallest chunk (`DEFAULT_CHUNK_SIZE_WITHOUT_FOOTER`).
const BUMPALO_MIN_CHUNK: usize = 512 - CHUNK_OVERHEAD;

/// Bytes of strings the arena can address in normal blocks: 2^14 blocks of
/// 256 KiB, about 4 GiB. Each string over 64 KiB that gets a chunk of its
/// own uses one of those block numbers, whatever its size; running out of
/// block numbers is [`ErrorKind::CapacityOverflow`].
pub const MAX_ARENA_BYTES: usize = (MAX_BLOCKS - 1) * MAX_BLOCK;

const _: () = {
    assert!(MAX_CHUNK_CAPACITY <= MAX_BLOCK);
    assert!(FIRST_CHUNK_CAPACITY.is_multiple_of(16) && MAX_CHUNK_CAPACITY.is_multiple_of(16));
    assert!(DEDICATED_MIN > 0);
};

/// A packed record location: block number and offset within the block.
pub(crate) type Loc = u32;

/// Decodes a LEB128 length of 128 or more at `p`: returns the length and
/// the size of the prefix.
///
/// # Safety
///
/// `p` must point to a complete length prefix written by [`write_len`],
/// readable through `p`.
#[inline(never)]
unsafe fn read_long_len(p: *const u8) -> (usize, usize) {
    let mut len = 0usize;
    for i in 0..MAX_VARINT {
        // SAFETY: the prefix is complete, so every byte up to and including
        // the first one below 0x80 is readable.
        let b = unsafe { *p.add(i) };
        len |= usize::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return (len, i + 1);
        }
    }
    unreachable!("corrupt record length")
}

/// Writes `len` as a LEB128 varint at the start of `out`; returns its size.
fn write_len(mut len: usize, out: &mut [MaybeUninit<u8>]) -> usize {
    let mut i = 0;
    while len >= 0x80 {
        out[i].write((len as u8) | 0x80);
        len >>= 7;
        i += 1;
    }
    out[i].write(len as u8);
    i + 1
}

/// Bytes of the LEB128 varint of `len`.
fn len_size(len: usize) -> usize {
    (usize::BITS - (len | 1).leading_zeros()).div_ceil(7) as usize
}

/// One block: a slice of an arena chunk, filled from the front.
struct Block<'a> {
    /// The block's memory; `data[..used]` is initialised.
    data: &'a mut [MaybeUninit<u8>],
    /// Bytes written so far.
    used: usize,
    /// How many bytes normal strings may use (0 for a dedicated block).
    limit: usize,
}

impl<'a> Block<'a> {
    fn new(data: &'a mut [MaybeUninit<u8>]) -> Self {
        let limit = data.len().min(MAX_BLOCK);
        Block {
            data,
            used: 0,
            limit,
        }
    }

    fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }
}

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

/// Allocates `len` uninitialised bytes from `bump` (none for 0).
// A bump allocator hands out fresh, disjoint memory from `&self`, like
// `Bump::alloc` does.
#[allow(clippy::mut_from_ref)]
fn alloc_uninit(bump: &Bump, len: usize) -> Result<&mut [MaybeUninit<u8>], ()> {
    if len == 0 {
        return Ok(&mut []);
    }
    let layout = Layout::from_size_align(len, 1).map_err(|_| ())?;
    let ptr = bump.try_alloc_layout(layout).map_err(|_| ())?;
    // SAFETY: bumpalo returned a fresh allocation of `len` bytes with
    // alignment 1 that lives as long as `bump` and is never handed out
    // again, so we may borrow it mutably for that long; `MaybeUninit<u8>`
    // has no validity requirement, so uninitialised memory is a valid value.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr().cast::<MaybeUninit<u8>>(), len) })
}

/// The arena: a bump allocator, its blocks, and the growth policy.
pub(crate) struct Arena {
    core: Core,
    /// Index of the block the next string goes to.
    cur: usize,
    /// Heap bytes of all chunks: usable bytes plus bumpalo's footers.
    chunk_bytes: usize,
    /// Usable bytes of bumpalo's current (most recent) chunk.
    last_chunk: usize,
    /// Usable bytes of the next normal chunk.
    next_chunk: usize,
    /// Usable bytes of all normal (not dedicated) chunks.
    normal_bytes: usize,
}

impl core::fmt::Debug for Arena {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Arena")
            .field("blocks", &self.block_count())
            .field("chunk_bytes", &self.chunk_bytes)
            .finish()
    }
}

impl Arena {
    /// An arena whose first chunk holds `capacity` bytes (none if 0).
    pub(crate) fn with_capacity(capacity: usize) -> Result<Self, Error> {
        let mut arena = Arena {
            core: CoreBuilder {
                bump: Bump::new(),
                blocks_builder: |_| vec![Block::new(&mut [])],
            }
            .build(),
            cur: 0,
            chunk_bytes: 0,
            last_chunk: 0,
            next_chunk: FIRST_CHUNK_CAPACITY,
            normal_bytes: 0,
        };
        if capacity > 0 {
            let capacity = bumpalo_chunk_capacity(capacity)
                .filter(|&c| c <= MAX_ARENA_BYTES)
                .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, capacity))?;
            arena.normal_bytes = arena.add_chunk(capacity, None, usize::MAX)?;
            arena.cur = 1;
            arena.next_chunk = capacity.clamp(FIRST_CHUNK_CAPACITY, MAX_CHUNK_CAPACITY);
        }
        Ok(arena)
    }

    /// Heap bytes the arena holds: chunks with their footers, the boxed
    /// `Bump`, and the block list.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.chunk_bytes
            + size_of::<Bump>()
            + self.core.borrow_blocks().capacity() * size_of::<Block<'static>>()
    }

    /// Usable bytes in all chunks.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.core.borrow_bump().allocated_bytes()
    }

    fn block_count(&self) -> usize {
        self.core.borrow_blocks().len()
    }

    /// The bytes of the string whose record is at `loc`.
    ///
    /// `loc` must be a location `push` returned since the last `clear` (or
    /// 0, the empty string). The callers only ever pass such locations:
    /// they come from the id index or the hash table, which `clear`
    /// empties, and user-supplied ids are bounds-checked against the index
    /// first.
    #[inline]
    pub(crate) fn bytes(&self, loc: Loc) -> &[u8] {
        let b = &self.core.borrow_blocks()[(loc >> LOCAL_BITS) as usize];
        let off = (loc & LOCAL_MASK) as usize;
        if off >= b.used {
            // Only location 0 in the empty block 0: the empty string.
            debug_assert_eq!(loc, 0);
            return &[];
        }
        // The length prefix, then the bytes. Reading through a raw pointer
        // skips the bounds checks of slicing `data[..used]`; the checked
        // version costs a quarter of a hit's instructions.
        let p = b.data.as_ptr().cast::<u8>().wrapping_add(off);
        // SAFETY: `loc` is the start of a record `push` wrote (see above),
        // so `data[off..off + record length]` lies within `data[..used]`,
        // which is initialised: `push` only raises `used` after writing the
        // bytes below it, and nothing writes below `used` until `clear`,
        // after which no old location is used. `p` is derived from the
        // block's slice, so it may read that range.
        let (len, start) = unsafe {
            let b0 = *p;
            if b0 < 0x80 {
                (usize::from(b0), 1)
            } else {
                read_long_len(p)
            }
        };
        debug_assert!(off + start + len <= b.used);
        // SAFETY: as above, the `len` bytes after the prefix are within the
        // record, initialised and unchanging while `self` is borrowed.
        unsafe { core::slice::from_raw_parts(p.add(start), len) }
    }

    /// The address of the record at `loc`, for a prefetch: reads no
    /// string memory.
    #[inline]
    pub(crate) fn record_addr(&self, loc: Loc) -> *const u8 {
        match self.core.borrow_blocks().get((loc >> LOCAL_BITS) as usize) {
            Some(b) => b
                .data
                .as_ptr()
                .cast::<u8>()
                .wrapping_add((loc & LOCAL_MASK) as usize),
            None => core::ptr::null(),
        }
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
        // the block's slice.
        let (len, start) = unsafe {
            let b0 = *p;
            if b0 < 0x80 {
                (usize::from(b0), 1)
            } else {
                read_long_len(p)
            }
        };
        // SAFETY: the `len` bytes after the prefix belong to the record,
        // were copied there from a `&str` (valid UTF-8), and stay unchanged
        // for `'a` (the caller's contract).
        unsafe { core::str::from_utf8_unchecked(core::slice::from_raw_parts(p.add(start), len)) }
    }

    /// The string whose record is at `loc`; see [`Arena::bytes`].
    #[inline]
    pub(crate) fn str(&self, loc: Loc) -> &str {
        let bytes = self.bytes(loc);
        // SAFETY: `loc` is a location returned by `push` (the callers only
        // keep those), so `bytes` is exactly what `push` copied there from
        // a `&str`: valid UTF-8. Records are never overwritten until
        // `clear`, which the callers follow by forgetting every `Loc`.
        unsafe { core::str::from_utf8_unchecked(bytes) }
    }

    /// Copies `s` into the arena as a record and returns its location. May
    /// add chunks of at most `budget` heap bytes in all (block list growth
    /// included). On error no string is added; capacity (the block list, a
    /// chunk added before a later allocation failed) may remain.
    pub(crate) fn push(&mut self, s: &str, budget: usize) -> Result<Loc, Error> {
        let size = len_size(s.len()) + s.len();
        let cur = self.cur;
        let fits = self
            .core
            .with_blocks(|blocks| blocks[cur].remaining() >= size);
        let block = if fits {
            cur
        } else if size > DEDICATED_MIN {
            // The current block stays open for the strings that follow.
            self.dedicated_block(size, budget)?
        } else {
            self.advance(size, budget)?;
            self.cur
        };
        let start = self.core.with_blocks_mut(|blocks| {
            let b = &mut blocks[block];
            let start = b.used;
            let rest = &mut b.data[start..start + size];
            let n = write_len(s.len(), rest);
            rest[n..].write_copy_of_slice(s.as_bytes());
            b.used = start + size;
            start
        });
        // `block < MAX_BLOCKS` is checked when blocks are added, and every
        // record starts below `MAX_BLOCK`.
        Ok(((block as u32) << LOCAL_BITS) | start as u32)
    }

    /// Makes `self.cur` an empty block that can take `size` bytes, reusing
    /// blocks kept by `clear` (or left over from a chunk) before
    /// allocating a new chunk.
    #[cold]
    fn advance(&mut self, size: usize, budget: usize) -> Result<(), Error> {
        let cur = self.cur;
        let reuse = self.core.with_blocks(|blocks| {
            (cur + 1..blocks.len()).find(|&i| blocks[i].used == 0 && blocks[i].limit >= size)
        });
        if let Some(i) = reuse {
            self.cur = i;
            return Ok(());
        }
        // Double small chunks; past MAX_CHUNK_CAPACITY, double only once the
        // arena holds CHUNK_GROWTH_RATIO chunks' worth.
        let mut next = self.next_chunk;
        if self.normal_bytes > 0
            && (next < MAX_CHUNK_CAPACITY
                || self.normal_bytes >= CHUNK_GROWTH_RATIO.saturating_mul(next))
        {
            next = bumpalo_chunk_capacity(next.saturating_mul(2)).unwrap_or(next);
        }
        let capacity = bumpalo_chunk_capacity(size.max(next))
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, size))?;
        // Near a byte limit, settle for the smallest chunk that holds the
        // record rather than fail.
        let affordable = |c: usize| {
            steered_chunk_capacity(self.last_chunk, c)
                .is_some_and(|a| a + CHUNK_FOOTER_SIZE <= budget)
        };
        let capacity = if affordable(capacity) {
            capacity
        } else {
            bumpalo_chunk_capacity(size).unwrap_or(capacity)
        };
        let first = self.block_count();
        let added = self.add_chunk(capacity, None, budget)?;
        self.next_chunk = next;
        self.normal_bytes += added;
        self.cur = first;
        Ok(())
    }

    /// An empty block of at least `size` bytes marked dedicated: a reused
    /// one, or the first block of a new chunk sized for the record.
    #[cold]
    fn dedicated_block(&mut self, size: usize, budget: usize) -> Result<usize, Error> {
        let cur = self.cur;
        let reuse = self.core.with_blocks_mut(|blocks| {
            let i = (cur + 1..blocks.len())
                .find(|&i| blocks[i].used == 0 && blocks[i].data.len() >= size)?;
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
        // A small normal chunk first (whose blocks later strings use) makes
        // the current chunk small again, and the request exact.
        let mut budget = budget;
        let steered = steered_chunk_capacity(self.last_chunk, capacity).unwrap_or(capacity);
        if steered - capacity > MAX_CHUNK_CAPACITY {
            let reset = steered_chunk_capacity(self.last_chunk, FIRST_CHUNK_CAPACITY)
                .unwrap_or(FIRST_CHUNK_CAPACITY);
            let exact = steered_chunk_capacity(reset, capacity).unwrap_or(capacity);
            if reset + exact + 2 * CHUNK_FOOTER_SIZE <= budget {
                let before = self.heap_bytes();
                let added = self.add_chunk(FIRST_CHUNK_CAPACITY, None, budget)?;
                self.normal_bytes += added;
                budget = budget.saturating_sub(self.heap_bytes() - before);
            }
        }
        let first = self.block_count();
        self.add_chunk(capacity, Some(size), budget)?;
        Ok(first)
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
        // Grow the block list (to at least twice its size) before anything
        // else, charged, so the pushes below cannot reallocate.
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
        let cost = actual + CHUNK_FOOTER_SIZE + block_list_growth * size_of::<Block<'static>>();
        if cost > budget {
            return Err(Error::new(ErrorKind::MemoryLimit, cost));
        }
        if reserve > 0 {
            self.core
                .with_blocks_mut(|blocks| blocks.try_reserve_exact(reserve))
                .map_err(|_| {
                    Error::new(
                        ErrorKind::AllocFailed,
                        block_list_growth * size_of::<Block<'static>>(),
                    )
                })?;
        }
        let before = self.core.borrow_bump().allocated_bytes();
        let result = self.core.with_mut(|fields| {
            let bump: &Bump = fields.bump;
            bump.set_allocation_limit(Some(before + actual));
            // bumpalo places the requested `capacity` at the top of the new
            // chunk; a steered chunk larger than that is taken as a second
            // allocation from the same chunk, below the first.
            let first = alloc_uninit(bump, capacity)?;
            let second = alloc_uninit(bump, actual - capacity)?;
            let mut first = first;
            if let Some(len) = dedicated {
                let (head, _rounding) = first.split_at_mut(len);
                let mut block = Block::new(head);
                block.limit = 0;
                fields.blocks.push(block);
                // The page-rounding tail (under 4 KiB) is left unused, so
                // that a large string costs one block number, not two.
                first = &mut [];
            }
            let reserved = fields.blocks.capacity();
            for mut chunk in [first, second] {
                while !chunk.is_empty() {
                    let (head, tail) = chunk.split_at_mut(chunk.len().min(MAX_BLOCK));
                    fields.blocks.push(Block::new(head));
                    chunk = tail;
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

    /// Forgets every string but keeps all chunks for reuse.
    pub(crate) fn clear(&mut self) {
        self.core.with_blocks_mut(|blocks| {
            for b in blocks.iter_mut() {
                b.used = 0;
                b.limit = b.data.len().min(MAX_BLOCK);
            }
        });
        self.cur = 0;
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

    #[test]
    fn steering_matches_bumpalo() {
        // Grow an arena through normal and dedicated chunks; `add_chunk`
        // debug-asserts every prediction.
        let mut a = Arena::with_capacity(FIRST_CHUNK_CAPACITY).unwrap();
        let small = "x".repeat(1000);
        let big = "y".repeat(300_000);
        for i in 0..2000 {
            a.push(&small, usize::MAX).unwrap();
            if i % 500 == 0 {
                a.push(&big, usize::MAX).unwrap();
            }
        }
        let bump = a.core.borrow_bump();
        assert_eq!(a.chunk_bytes, bump.allocated_bytes_including_metadata());
        assert_eq!(a.capacity(), bump.allocated_bytes());
    }
}
