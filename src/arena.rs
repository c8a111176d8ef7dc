//! The private self-referencing core: a `bumpalo` arena that owns every
//! string's bytes, and the blocks carved out of it.
//!
//! # Layout
//!
//! The arena is a [`Bump`] whose chunks we size ourselves (see
//! [`Arena::grow`]). Each chunk is cut into *blocks* of at most
//! [`MAX_BLOCK`] bytes; strings are appended to the current block, so the
//! strings of one block are contiguous and in id order. A string is located
//! by a packed 32-bit [`Loc`]: the block number in the high
//! [`BLOCK_BITS`] bits and the offset of the string's *end* within the block
//! in the low [`LOCAL_BITS`] bits. Its start is the end of the previous
//! string if that one is in the same block, and 0 otherwise. The caller keeps
//! the `Loc`s in id order with a leading zero sentinel, so resolving an id
//! reads two adjacent `u32`s: four bytes per string instead of a 16-byte
//! `&str`.
//!
//! A string too large for a block gets a *dedicated* block of its own, marked
//! by the local end [`DEDICATED`]; its length is the block's `used` count.
//!
//! # Safety
//!
//! Block memory is handed out by bumpalo uninitialised, as
//! `&mut [MaybeUninit<u8>]`. The only `unsafe` in the crate is [`Arena::bytes`]
//! (reading back bytes that [`Arena::push`] initialised) and
//! [`Arena::str`] (which knows those bytes were copied from a `&str`, so a
//! range ending at a recorded `Loc` is valid UTF-8).

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

/// Usable bytes of the largest chunk the arena grows to by itself: 64 pages
/// (256 KiB) minus [`CHUNK_OVERHEAD`]. Chunks double from
/// [`FIRST_CHUNK_CAPACITY`] up to this size and then stay there, so the unused
/// tail of the last chunk never exceeds 256 KiB.
pub const MAX_CHUNK_CAPACITY: usize = 64 * PAGE_SIZE - CHUNK_OVERHEAD;

/// Bits of a [`Loc`] that hold the end offset within a block.
const LOCAL_BITS: u32 = 18;
/// Bits of a [`Loc`] that hold the block number.
const BLOCK_BITS: u32 = 32 - LOCAL_BITS;
/// Mask of the local end offset in a [`Loc`].
const LOCAL_MASK: u32 = (1 << LOCAL_BITS) - 1;
/// Local end that marks a dedicated block: the string is the whole block.
const DEDICATED: u32 = LOCAL_MASK;
/// Largest number of bytes normal strings may use in one block: every end
/// offset must be below [`DEDICATED`].
const MAX_BLOCK: usize = LOCAL_MASK as usize - 1;
/// Number of blocks a [`Loc`] can address (block 0 is the empty block).
const MAX_BLOCKS: usize = 1 << BLOCK_BITS;
/// Strings longer than this that do not fit the current block get a
/// dedicated block instead of retiring a partly used block for them.
pub(crate) const DEDICATED_MIN: usize = MAX_CHUNK_CAPACITY / 4;
/// bumpalo's smallest chunk (`DEFAULT_CHUNK_SIZE_WITHOUT_FOOTER`).
const BUMPALO_MIN_CHUNK: usize = 512 - CHUNK_OVERHEAD;

/// Largest number of bytes the arena can hold: every block full.
pub const MAX_ARENA_BYTES: usize = (MAX_BLOCKS - 1) * MAX_BLOCK;

const _: () = {
    assert!(MAX_CHUNK_CAPACITY <= MAX_BLOCK);
    assert!(FIRST_CHUNK_CAPACITY.is_multiple_of(16) && MAX_CHUNK_CAPACITY.is_multiple_of(16));
    assert!(DEDICATED_MIN > 0);
};

/// A packed string location: block number and end offset within the block.
pub(crate) type Loc = u32;

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
    /// Whether the last string pushed went to a dedicated block.
    last_dedicated: bool,
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
            last_dedicated: false,
        };
        if capacity > 0 {
            let capacity = bumpalo_chunk_capacity(capacity)
                .filter(|&c| c <= MAX_ARENA_BYTES)
                .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, capacity))?;
            arena.add_chunk(capacity, None, usize::MAX)?;
            arena.cur = 1;
            arena.next_chunk = bumpalo_chunk_capacity(capacity.saturating_mul(2))
                .unwrap_or(MAX_CHUNK_CAPACITY)
                .clamp(FIRST_CHUNK_CAPACITY, MAX_CHUNK_CAPACITY);
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

    /// The bytes of the string that ends at `loc`, given the `Loc`s of the
    /// two strings before it in id order (`prev2`, then `prev`).
    ///
    /// The string starts where `prev` ends if `prev` is in the same block;
    /// if `prev` is a dedicated string placed while this block stayed open,
    /// where `prev2` ends; otherwise at 0.
    #[inline]
    pub(crate) fn bytes(&self, prev2: Loc, prev: Loc, loc: Loc) -> &[u8] {
        let block = loc >> LOCAL_BITS;
        let mut end = (loc & LOCAL_MASK) as usize;
        let mut start = if prev >> LOCAL_BITS == block {
            (prev & LOCAL_MASK) as usize
        } else if prev & LOCAL_MASK == DEDICATED && prev2 >> LOCAL_BITS == block {
            (prev2 & LOCAL_MASK) as usize
        } else {
            0
        };
        let b = &self.core.borrow_blocks()[block as usize];
        if end == DEDICATED as usize {
            start = 0;
            end = b.used;
        }
        let init = &b.data[..b.used];
        // SAFETY: `data[..used]` has been initialised by `push`, which only
        // ever increases `used` after writing the bytes below it, and `clear`
        // resets `used` to 0 without touching the data.
        let init: &[u8] = unsafe { init.assume_init_ref() };
        &init[start..end]
    }

    /// The string that ends at `loc`; see [`Arena::bytes`].
    #[inline]
    pub(crate) fn str(&self, prev2: Loc, prev: Loc, loc: Loc) -> &str {
        let bytes = self.bytes(prev2, prev, loc);
        // SAFETY: `prev2`, `prev` and `loc` are consecutive locations the
        // caller recorded from `push`, so by the rule in `bytes` (the one
        // `push` follows when it places strings) `bytes` is exactly what
        // `push` copied from one `&str`: strings never straddle blocks, and
        // each starts where the previous string of its block ended. Those
        // bytes were valid UTF-8 and have not changed since: blocks are only
        // written past `used`.
        unsafe { core::str::from_utf8_unchecked(bytes) }
    }

    /// Copies `s` into the arena and returns its location. May add a chunk
    /// of at most `budget` heap bytes (block list growth included). On error
    /// nothing changes except, possibly, the block list's capacity.
    pub(crate) fn push(&mut self, s: &str, budget: usize) -> Result<Loc, Error> {
        let len = s.len();
        let cur = self.cur;
        let fits = self
            .core
            .with_blocks(|blocks| blocks[cur].remaining() >= len);
        let block = if fits {
            self.last_dedicated = false;
            cur
        } else if len > DEDICATED_MIN {
            let d = self.dedicated_block(len, budget)?;
            // A dedicated string normally leaves the current block open, and
            // the next string's start is found one entry further back. Two
            // in a row retire the current block, so that walk never goes
            // further than one entry.
            if self.last_dedicated {
                self.cur = d;
            }
            self.last_dedicated = true;
            d
        } else {
            self.advance(len, budget)?;
            self.last_dedicated = false;
            self.cur
        };
        let end = self.core.with_blocks_mut(|blocks| {
            let b = &mut blocks[block];
            let start = b.used;
            b.data[start..start + len].write_copy_of_slice(s.as_bytes());
            b.used = start + len;
            if b.limit == 0 {
                DEDICATED
            } else {
                // `used <= limit <= MAX_BLOCK < DEDICATED`, so it fits.
                b.used as u32
            }
        });
        // `block < MAX_BLOCKS` is checked when blocks are added.
        Ok(((block as u32) << LOCAL_BITS) | end)
    }

    /// Makes `self.cur` an empty block that can take `len` bytes, reusing
    /// blocks kept by `clear` (or left over from a chunk) before
    /// allocating a new chunk.
    #[cold]
    fn advance(&mut self, len: usize, budget: usize) -> Result<(), Error> {
        let cur = self.cur;
        let reuse = self.core.with_blocks(|blocks| {
            (cur + 1..blocks.len()).find(|&i| blocks[i].used == 0 && blocks[i].limit >= len)
        });
        if let Some(i) = reuse {
            self.cur = i;
            return Ok(());
        }
        let first = self.block_count();
        let capacity = bumpalo_chunk_capacity(len.max(self.next_chunk))
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, len))?;
        self.add_chunk(capacity, None, budget)?;
        self.next_chunk = bumpalo_chunk_capacity(self.next_chunk * 2)
            .unwrap_or(MAX_CHUNK_CAPACITY)
            .min(MAX_CHUNK_CAPACITY);
        self.cur = first;
        Ok(())
    }

    /// An empty block of at least `len` bytes marked dedicated: a reused
    /// one, or the first block of a new chunk sized for the string.
    #[cold]
    fn dedicated_block(&mut self, len: usize, budget: usize) -> Result<usize, Error> {
        let cur = self.cur;
        let reuse = self.core.with_blocks_mut(|blocks| {
            let i = (cur + 1..blocks.len())
                .find(|&i| blocks[i].used == 0 && blocks[i].data.len() >= len)?;
            blocks[i].limit = 0;
            Some(i)
        });
        if let Some(i) = reuse {
            return Ok(i);
        }
        let first = self.block_count();
        let capacity = bumpalo_chunk_capacity(len)
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, len))?;
        self.add_chunk(capacity, Some(len), budget)?;
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
    ) -> Result<(), Error> {
        let actual = steered_chunk_capacity(self.last_chunk, capacity)
            .ok_or_else(|| Error::new(ErrorKind::CapacityOverflow, capacity))?;
        // Blocks this chunk is cut into.
        let rest = actual - dedicated.unwrap_or(0);
        let new_blocks = usize::from(dedicated.is_some()) + rest.div_ceil(MAX_BLOCK);
        if self.block_count() + new_blocks > MAX_BLOCKS {
            return Err(Error::new(ErrorKind::CapacityOverflow, capacity));
        }
        let block_list_growth = {
            let blocks = self.core.borrow_blocks();
            let needed = blocks.len() + new_blocks;
            if needed > blocks.capacity() {
                needed
                    .max(blocks.capacity() * 2)
                    .saturating_sub(blocks.capacity())
            } else {
                0
            }
        };
        let cost = actual + CHUNK_FOOTER_SIZE + block_list_growth * size_of::<Block<'static>>();
        if cost > budget {
            return Err(Error::new(ErrorKind::MemoryLimit, cost));
        }
        if block_list_growth > 0 {
            self.core
                .with_blocks_mut(|blocks| blocks.try_reserve_exact(block_list_growth))
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
                let (head, tail) = first.split_at_mut(len);
                let mut block = Block::new(head);
                block.limit = 0;
                fields.blocks.push(block);
                first = tail;
            }
            for mut chunk in [first, second] {
                while !chunk.is_empty() {
                    let (head, tail) = chunk.split_at_mut(chunk.len().min(MAX_BLOCK));
                    fields.blocks.push(Block::new(head));
                    chunk = tail;
                }
            }
            Ok(())
        });
        result.map_err(|()| Error::new(ErrorKind::AllocFailed, actual + CHUNK_FOOTER_SIZE))?;
        let added = self.core.borrow_bump().allocated_bytes() - before;
        debug_assert_eq!(
            added, actual,
            "bumpalo did not allocate the predicted chunk size"
        );
        self.chunk_bytes += added + CHUNK_FOOTER_SIZE;
        self.last_chunk = added;
        Ok(())
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
        self.last_dedicated = false;
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
