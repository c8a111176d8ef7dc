//! The id index of a [`StringTable`](crate::StringTable)'s arena: one
//! 5-byte [`Entry`] per id, in id order, and just before the entries, in
//! the same allocation, two biased base addresses per arena block, which
//! `resolve` adds an entry's word to.
//!
//! ```text
//! allocation:  [ pair of block n-1 | ... | pair of block 0 | entry 0 | entry 1 | ... ]
//!                                                          ^ entries()
//! ```
//!
//! # Why the biases sit in front of the entries
//!
//! `resolve` turns an entry into an address by adding the base of the
//! entry's block. With the bases in an array of their own, a caller's loop
//! that copies each string (`memcpy` clobbers the caller-saved registers)
//! keeps the entries' address, their length and the bases' address across
//! the call: one more than a `Vec<&str>` table needs, so the bases'
//! address was reloaded from the stack on every string (12 instructions
//! before the copy against lasso's 10 and a register copy, hot-path
//! lever 72 in `benches/README.md`). Here the bases are read at a fixed
//! displacement from the entries' own address: block `b`'s pair ends
//! `16 * b` bytes before the entries, so an entry holds a *label* that
//! counts down from `0xFFFF` (`0xFFFF - 2b` for block `b`'s short
//! strings, one less for its long ones) and the base is read from
//! `entries + 8 * label - 0x80000` with one addressing mode.
//!
//! # Why two labels per block
//!
//! A long string (255 bytes or more) keeps its length in its record, so
//! `resolve` must know an entry's form before it picks where the length
//! comes from. The long label's base carries the top address bit (added
//! with wrapping arithmetic): the add that forms the string's address
//! also sets the sign flag for a long string, and the short path needs no
//! compare of the entry's length byte (`resolve` 47.1 instructions per
//! string against lasso's 48.1). User-space addresses never have that bit
//! on x86-64 (the canonical lower half); elsewhere `resolve` compares the
//! length byte instead ([`SIGN_FLAGS_LONG`]). Two labels per block leave
//! 15 bits of block number: an arena holds at most 32,767 blocks of 64
//! KiB, about 2 GiB ([`MAX_ARENA_BYTES`](crate::MAX_ARENA_BYTES)), which
//! is also the most a protobuf message, and so a pprof profile, can hold.

use core::alloc::Layout;
use core::ptr::NonNull;

use crate::arena::{ESCAPE, LOCAL_BITS, Loc, tag_of};

/// Bytes of a block's pair of biased bases.
pub(crate) const PAIR_BYTES: usize = 2 * size_of::<usize>();

/// Whether the sign of a string's biased address tells a long string from
/// a short one (x86-64, whose user-space addresses never have the top bit
/// set); elsewhere the entry's length byte is compared with the escape.
pub(crate) const SIGN_FLAGS_LONG: bool =
    cfg!(all(target_arch = "x86_64", target_pointer_width = "64"));

/// What a long label's base adds to the short label's: the next label
/// down (`1 << LOCAL_BITS`) and, where the sign tells the form, the top
/// address bit.
const LONG_BIAS: usize = (1 << LOCAL_BITS) | TOP_BIT;

/// The top address bit where it flags a long string, else 0.
const TOP_BIT: usize = if SIGN_FLAGS_LONG {
    1 << (usize::BITS - 1)
} else {
    0
};

/// Highest label: block 0's short strings (`""`, the static empty
/// record).
const TOP_LABEL: u32 = 0xFFFF;

/// The entry word of a short record at offset 0 of block `block`: the
/// block's short label in the high half.
#[inline(always)]
pub(crate) const fn short_word_base(block: usize) -> u32 {
    debug_assert!(block < 1 << 15, "block numbers fit 15 bits");
    (TOP_LABEL - 2 * block as u32) << LOCAL_BITS
}

/// An id-index entry: the string's record as a 32-bit word (its block's
/// label in the high half, the record's offset in the block in the low
/// half) and a copy of the record's length byte (the length below 255
/// bytes, else the escape), 5 bytes, unaligned.
///
/// With the length in the index, `resolve` knows it before the record's
/// cache line arrives, so a caller's copy of the string does not wait for
/// that miss to pick its path (`resolve_copy` in `benches/README.md`).
/// Made only by [`Entry::of`] from a location `Arena::push` returned and
/// the string it stored there (or copied from such an entry), so the word
/// and the tag always match the record: `unsafe` reads rely on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Entry {
    word: [u8; 4],
    tag: u8,
}

/// Bytes of an id-index entry.
pub(crate) const ENTRY_BYTES: usize = size_of::<Entry>();

impl Entry {
    /// `""`'s entry: block 0's short label, offset 0 (the arena's static
    /// empty record), length 0.
    pub(crate) const EMPTY: Entry = Entry {
        word: (TOP_LABEL << LOCAL_BITS).to_le_bytes(),
        tag: 0,
    };

    /// The entry of `s`, which `Arena::push` stored at `loc`.
    #[inline(always)]
    pub(crate) fn of(loc: Loc, s: &str) -> Entry {
        let tag = tag_of(s.len());
        let block = (loc >> LOCAL_BITS) as usize;
        let long = u32::from(tag == ESCAPE) << LOCAL_BITS;
        Entry::from_word((short_word_base(block) - long) | (loc & 0xFFFF), tag)
    }

    /// The entry of a word [`Entry::of`] would make (an in-place push
    /// computes it from its block's [`short_word_base`]) and its tag.
    #[inline(always)]
    pub(crate) fn from_word(word: u32, tag: u8) -> Entry {
        Entry {
            word: word.to_le_bytes(),
            tag,
        }
    }

    /// The record's location, as `Arena::push` returned it.
    #[inline(always)]
    pub(crate) fn loc(self) -> Loc {
        let word = self.word();
        let block = (TOP_LABEL - (word >> LOCAL_BITS)) >> 1;
        (block << LOCAL_BITS) | (word & 0xFFFF)
    }

    /// The 32-bit word: the label in the high half, the record's offset in
    /// the low half.
    #[inline(always)]
    pub(crate) fn word(self) -> u32 {
        u32::from_le_bytes(self.word)
    }

    /// The label (the word's high half), read with a load of its own: LLVM
    /// rewrites a load of part of a value already loaded into a shift of
    /// that value, but not the other way round, and a 16-bit load is one
    /// `movzx` where a shift needs a copy too.
    #[inline(always)]
    pub(crate) fn label(&self) -> u16 {
        // The high two bytes as one array: built from two separate bytes,
        // the label's `* 8` in `base_of` was distributed over them (two
        // byte loads, a shift and an add instead of one `movzx`).
        let [_, high @ ..] = self.word.as_chunks::<2>().0 else {
            unreachable!("4 bytes are two chunks of 2")
        };
        u16::from_le_bytes(*high.first().expect("two chunks"))
    }

    /// The record's length byte: the string's length below 255 bytes,
    /// else the escape.
    #[inline(always)]
    pub(crate) fn tag(self) -> u8 {
        self.tag
    }
}

/// The entries in id order and the biased bases of the arena's blocks, in
/// one allocation (see the module docs). Owned by the arena, which keeps
/// the bases in step with its blocks ([`set_block`](Self::set_block)); an
/// arena that has no id index (a shared table's shard) holds one with no
/// allocation, which stores no bases.
pub(crate) struct IdIndex {
    /// The entries' start, `pairs * PAIR_BYTES` bytes into the allocation
    /// (kept rather than the allocation's start: the hot paths read it
    /// with no add); dangling when nothing is allocated.
    entries: NonNull<u8>,
    /// Blocks whose pairs fit before the entries.
    pairs: usize,
    /// Entries in use.
    len: usize,
    /// Entries the allocation holds.
    cap: usize,
}

// SAFETY: an `IdIndex` owns its allocation (plain bytes and addresses
// into the arena's chunks, which the arena owns and which are only read
// through them), and mutation needs `&mut self`: like a `Vec<u8>`.
#[allow(unsafe_code)]
unsafe impl Send for IdIndex {}
// SAFETY: as above; `&self` methods only read.
#[allow(unsafe_code)]
unsafe impl Sync for IdIndex {}

impl core::fmt::Debug for IdIndex {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IdIndex")
            .field("len", &self.len)
            .field("capacity", &self.cap)
            .field("pairs", &self.pairs)
            .finish()
    }
}

/// The allocation of `pairs` pairs and `cap` entries, or `None` if its
/// size overflows.
fn layout(pairs: usize, cap: usize) -> Option<Layout> {
    let size = pairs
        .checked_mul(PAIR_BYTES)?
        .checked_add(cap.checked_mul(ENTRY_BYTES)?)?;
    Layout::from_size_align(size, align_of::<usize>()).ok()
}

#[allow(unsafe_code)]
impl IdIndex {
    /// An index with no allocation: no entries, no bases (a shard's arena).
    pub(crate) const fn none() -> IdIndex {
        IdIndex {
            entries: NonNull::dangling(),
            pairs: 0,
            len: 0,
            cap: 0,
        }
    }

    /// An empty index with room for `pairs` blocks' bases and `cap`
    /// entries (both at least 1); `Err` if the allocation fails.
    pub(crate) fn with_capacity(pairs: usize, cap: usize) -> Result<IdIndex, ()> {
        let mut index = IdIndex::none();
        index.move_to(pairs.max(1), cap.max(1))?;
        Ok(index)
    }

    /// Whether this index has an allocation (an arena keeps bases in it
    /// only then).
    #[inline]
    pub(crate) fn is_allocated(&self) -> bool {
        self.cap > 0
    }

    /// The entries' address (`pairs * PAIR_BYTES` bytes into the
    /// allocation).
    #[inline(always)]
    fn entries_ptr(&self) -> *const u8 {
        self.entries.as_ptr()
    }

    /// Moves the index into an allocation of `pairs` pairs and `cap`
    /// entries (at least `len`), keeping the entries and the bases of the
    /// first `min(pairs, self.pairs)` blocks (those nearest the entries),
    /// and frees the old one; on failure nothing changes. Growth and
    /// shrinking both come here.
    fn move_to(&mut self, pairs: usize, cap: usize) -> Result<(), ()> {
        debug_assert!(cap >= self.len && cap > 0);
        let layout = layout(pairs, cap).ok_or(())?;
        // SAFETY: `layout` has a non-zero size (`cap > 0`).
        let raw = unsafe { std::alloc::alloc(layout) };
        let start = NonNull::new(raw).ok_or(())?;
        // SAFETY: `pairs * PAIR_BYTES` is within the allocation of
        // `layout`, which starts at `start`.
        let new_entries = unsafe { start.add(pairs * PAIR_BYTES) };
        if self.is_allocated() {
            let old = self.entries_ptr();
            let kept = pairs.min(self.pairs) * PAIR_BYTES;
            // SAFETY: the old allocation holds at least `kept` bytes of
            // pairs before `old` and `len` entries from it; the new one has
            // room for both at the same places relative to its entries, and
            // the two allocations are distinct.
            unsafe {
                core::ptr::copy_nonoverlapping(old.sub(kept), new_entries.as_ptr().sub(kept), kept);
                core::ptr::copy_nonoverlapping(old, new_entries.as_ptr(), self.len * ENTRY_BYTES);
            }
            self.free();
        }
        self.entries = new_entries;
        self.pairs = pairs;
        self.cap = cap;
        Ok(())
    }

    /// Frees the allocation (the fields are the caller's to reset).
    fn free(&mut self) {
        if let Some(layout) = layout(self.pairs, self.cap)
            && self.is_allocated()
        {
            // SAFETY: the allocation of `layout` starts `pairs *
            // PAIR_BYTES` bytes before the entries (`move_to`).
            unsafe {
                std::alloc::dealloc(self.entries.as_ptr().sub(self.pairs * PAIR_BYTES), layout);
            }
        }
    }

    /// Number of entries.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Entries the allocation holds.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Blocks whose bases the allocation holds.
    #[inline]
    pub(crate) fn pairs(&self) -> usize {
        self.pairs
    }

    /// Heap bytes of the allocation.
    pub(crate) fn heap_bytes(&self) -> usize {
        if self.is_allocated() {
            self.pairs * PAIR_BYTES + self.cap * ENTRY_BYTES
        } else {
            0
        }
    }

    /// The entries, in id order.
    #[inline(always)]
    pub(crate) fn entries(&self) -> &[Entry] {
        // SAFETY: the allocation holds `len` initialised entries from
        // `entries_ptr` (`push`), `Entry` has alignment 1; for an index
        // with no allocation `len` is 0 and the pointer is not null.
        unsafe { core::slice::from_raw_parts(self.entries_ptr().cast::<Entry>(), self.len) }
    }

    /// Appends `entry`; the caller has made room (`len < capacity`).
    #[inline(always)]
    pub(crate) fn push(&mut self, entry: Entry) {
        assert!(self.len < self.cap, "the caller reserved room");
        // SAFETY: `len < cap`: the slot is inside the allocation.
        unsafe {
            self.entries_ptr()
                .cast_mut()
                .cast::<Entry>()
                .add(self.len)
                .write(entry);
        }
        self.len += 1;
    }

    /// Drops the entries from `len` on.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Makes room for `additional` more entries, exactly, and, if the
    /// entries move, for the bases of `pairs` blocks; on failure nothing
    /// changes.
    pub(crate) fn try_reserve_exact(&mut self, additional: usize, pairs: usize) -> Result<(), ()> {
        let need = self.len.checked_add(additional).ok_or(())?;
        if need <= self.cap {
            return Ok(());
        }
        self.move_to(self.pairs.max(pairs), need)
    }

    /// Makes room for the bases of `blocks` blocks; on failure nothing
    /// changes. The entries move with them.
    pub(crate) fn try_reserve_pairs(&mut self, blocks: usize) -> Result<(), ()> {
        if blocks <= self.pairs {
            return Ok(());
        }
        self.move_to(blocks, self.cap)
    }

    /// Moves the index into an allocation of `cap` entries and `pairs`
    /// blocks' bases (the first `pairs` blocks' are kept), if that is
    /// smaller and holds every entry; if it cannot be allocated, one of
    /// exactly the entries is tried, and if that fails too the old
    /// allocation is kept. `pairs` must cover every block the arena has.
    pub(crate) fn shrink_to(&mut self, cap: usize, pairs: usize) {
        if !self.is_allocated() {
            return;
        }
        let pairs = pairs.clamp(1, self.pairs);
        let cap = cap.max(self.len).max(1);
        for cap in [cap, self.len.max(1)] {
            let smaller = layout(pairs, cap).is_some_and(|l| l.size() < self.heap_bytes());
            if !smaller || self.move_to(pairs, cap).is_ok() {
                return;
            }
        }
    }

    /// Stores block `block`'s bases, for a block that starts at `base`:
    /// the short label's and the long label's (see the module docs). Does
    /// nothing for an index with no allocation.
    ///
    /// # Panics
    ///
    /// If the allocation has no room for the block's pair (the arena
    /// reserves pairs with its block list: [`try_reserve_pairs`]).
    ///
    /// [`try_reserve_pairs`]: Self::try_reserve_pairs
    pub(crate) fn set_block(&mut self, block: usize, base: *const u8) {
        if !self.is_allocated() {
            return;
        }
        assert!(block < self.pairs, "the arena reserved the block's pair");
        debug_assert!(
            !SIGN_FLAGS_LONG || (base as usize) >> (usize::BITS - 1) == 0,
            "a user-space address has no top bit"
        );
        let short_label = (TOP_LABEL - 2 * block as u32) as usize;
        // The short label's base: the block's base, less the label's part
        // of an entry's word, plus a short record's prefix (its id and
        // length byte), as for the arena's own bases.
        let short = base
            .wrapping_sub(short_label << LOCAL_BITS)
            .wrapping_add(crate::arena::SHORT_PREFIX);
        let long = short.wrapping_add(LONG_BIAS);
        // SAFETY: `block < pairs`: the pair is the `block + 1`th before
        // the entries, inside the allocation, and `usize`-aligned (the
        // allocation is, and the entries start `pairs * PAIR_BYTES` bytes
        // into it).
        unsafe {
            let pair = self
                .entries_ptr()
                .cast_mut()
                .sub((block + 1) * PAIR_BYTES)
                .cast::<*const u8>();
            pair.write(long);
            pair.add(1).write(short);
        }
    }

    /// The base that entry words of label `label` are added to.
    ///
    /// # Safety
    ///
    /// `label` must be the label of an entry of this index (or the other
    /// label of its block): its block's pair was stored.
    #[inline(always)]
    unsafe fn base_of(&self, label: u16) -> *const u8 {
        // SAFETY: the caller's contract: label `0xFFFF - 2b` (or one less)
        // of a block `b < pairs` addresses block `b`'s pair, `8 * label -
        // 0x80000` bytes from the entries' start, i.e. `16 * b + 8` (or
        // `16 * b + 16`) bytes before them, inside the allocation.
        unsafe {
            *self
                .entries_ptr()
                .cast::<*const u8>()
                .offset(label as isize - 0x10000)
        }
    }

    /// The string of `entry`, an entry of this index.
    ///
    /// # Safety
    ///
    /// The arena that owns this index must hold the record `entry`
    /// locates (it does for every entry while the index is the arena's:
    /// entries and records are dropped together, `Store::clear`).
    #[inline(always)]
    pub(crate) unsafe fn str_of(&self, entry: &Entry) -> &str {
        // SAFETY: the caller's contract.
        unsafe { self.str_of_as::<SIGN_FLAGS_LONG>(entry) }
    }

    /// [`str_of`](Self::str_of), telling a long string by the sign of its
    /// address if `SIGN` (only where [`SIGN_FLAGS_LONG`]: elsewhere the
    /// long bases do not carry the top bit), else by its length byte
    /// (which works everywhere; the tests compare the two).
    ///
    /// # Safety
    ///
    /// As for [`str_of`](Self::str_of).
    #[inline(always)]
    unsafe fn str_of_as<const SIGN: bool>(&self, entry: &Entry) -> &str {
        let tag = entry.tag();
        // SAFETY: `entry` is an entry of this index (the caller's
        // contract), so the arena stored its block's pair.
        let base = unsafe { self.base_of(entry.label()) };
        // Wrapping: a long string's address carries the top bit until it
        // is cleared below.
        let q = base.wrapping_add(entry.word() as usize);
        let long = if SIGN {
            (q.addr() as isize) < 0
        } else {
            tag == ESCAPE
        };
        // SAFETY: the word and the tag are the record's (`Entry::of`): a
        // long label's base adds `LONG_BIAS`, whose top bit (where the
        // sign tells the form) is cleared here, so `q` is the address just
        // past the record's length byte, in a block of the arena's chunks
        // (or one past the static empty record for `""`). A long record's
        // 4-byte length, link and bytes follow its escape, a short record's
        // `tag` bytes its length byte, copied from a `&str` and unchanged
        // while the arena holds them.
        unsafe {
            if long {
                core::hint::assert_unchecked(tag == ESCAPE);
                let r = q.map_addr(|a| a & !TOP_BIT);
                // Spares the caller's `Option<&str>` a null test, as below
                // (the string's address is `r` plus 8, in bounds).
                core::hint::assert_unchecked(!r.is_null());
                crate::arena::Arena::str_long_biased(r, 0)
            } else {
                // Spares the caller's `Option<&str>` a null test.
                core::hint::assert_unchecked(!q.is_null());
                core::str::from_utf8_unchecked(core::slice::from_raw_parts(q, usize::from(tag)))
            }
        }
    }
}

impl Drop for IdIndex {
    fn drop(&mut self) {
        self.free();
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;
    use crate::StringTable;
    use crate::arena::LONG_LEN;

    /// Every label's word gives back its location, for the first and last
    /// block numbers and both forms.
    #[test]
    fn entries_keep_their_locations() {
        let short = "s";
        let long = "l".repeat(LONG_LEN);
        for block in [0u32, 1, 2, 255, 256, 16_383, 32_766, 32_767] {
            for offset in [0u32, 1, 0x7FFF, 0xFFFF] {
                let loc = (block << LOCAL_BITS) | offset;
                for s in [short, long.as_str()] {
                    let e = Entry::of(loc, s);
                    assert_eq!(e.loc(), loc, "{block} {offset} {}", s.len());
                    assert_eq!(e.tag(), tag_of(s.len()));
                    let label = u32::from(e.label());
                    assert_eq!(e.word() >> LOCAL_BITS, label);
                    assert_eq!(label % 2, u32::from(s.len() < LONG_LEN), "odd when short");
                }
                assert_eq!(
                    Entry::of(loc, short).word(),
                    short_word_base(block as usize) | offset
                );
            }
        }
        assert_eq!(Entry::EMPTY.loc(), 0);
    }

    /// Both ways of telling a long string from a short one read every
    /// string back: short, long (255 bytes and more), `""`, over many
    /// blocks, before and after the index moves and shrinks.
    #[test]
    fn sign_and_tag_agree() {
        let mut table = StringTable::new();
        let mut strings = vec![String::new()];
        // Under Miri fewer strings, but longer long ones: several blocks
        // all the same.
        let (n, step) = if cfg!(miri) { (300, 8) } else { (6_000, 1) };
        for i in 0..n {
            let s = match i % 7 {
                0 => format!("{i}-{}", "l".repeat(LONG_LEN + (i % 300) * step)),
                1 => format!("{i}-{}", "x".repeat(LONG_LEN - 1 - format!("{i}-").len())),
                _ => format!("short-{i}"),
            };
            if table.intern(&s).index() == strings.len() {
                strings.push(s);
            }
        }
        let check = |table: &StringTable, strings: &[String]| {
            let index = table.store.arena.index();
            assert_eq!(index.len(), strings.len());
            for (e, s) in index.entries().iter().zip(strings) {
                // SAFETY: `e` is an entry of the table's index.
                assert_eq!(unsafe { index.str_of_as::<false>(e) }, s);
                if SIGN_FLAGS_LONG {
                    // SAFETY: as above.
                    assert_eq!(unsafe { index.str_of_as::<true>(e) }, s);
                }
            }
        };
        let pairs = table.store.arena.index().pairs();
        assert!(pairs >= 4, "several blocks: {pairs}");
        check(&table, &strings);
        table.shrink_to_fit();
        check(&table, &strings);
        table.clear();
        table.shrink_to_fit();
        strings.truncate(1);
        check(&table, &strings);
        table.intern("again");
        strings.push("again".to_owned());
        check(&table, &strings);
    }

    /// An index with no allocation stores no bases and reports no bytes.
    #[test]
    fn an_unallocated_index_is_empty() {
        let mut index = IdIndex::none();
        index.set_block(0, core::ptr::null());
        assert!(!index.is_allocated());
        assert_eq!((index.len(), index.heap_bytes(), index.pairs()), (0, 0, 0));
        assert!(index.entries().is_empty());
        index.shrink_to(0, 0);
        assert_eq!(index.heap_bytes(), 0);
    }

    /// Growing the entries or the bases, and shrinking, keep both.
    #[test]
    fn moves_keep_entries_and_bases() {
        let record = [0u8; 64];
        let base = record.as_ptr();
        let mut index = IdIndex::with_capacity(1, 2).unwrap();
        index.set_block(0, base);
        index.push(Entry::EMPTY);
        index.try_reserve_exact(10, 3).unwrap();
        index.set_block(1, base.wrapping_add(8));
        index.set_block(2, base.wrapping_add(16));
        let entries: Vec<Entry> = (1..=10u32)
            .map(|i| Entry::of(((i % 3) << LOCAL_BITS) | i, "abc"))
            .collect();
        for &e in &entries {
            index.push(e);
        }
        let bases = |index: &IdIndex| -> Vec<*const u8> {
            // SAFETY: blocks 0 to 2 have their pairs.
            (0..3u32)
                .flat_map(|b| [0xFFFF - 2 * b, 0xFFFE - 2 * b])
                .map(|label| unsafe { index.base_of(label as u16) })
                .collect()
        };
        let before = bases(&index);
        index.try_reserve_pairs(40).unwrap();
        assert_eq!(index.pairs(), 40);
        assert_eq!(bases(&index), before);
        assert_eq!(&index.entries()[1..], &entries[..]);
        index.shrink_to(11, 3);
        assert_eq!((index.capacity(), index.pairs()), (11, 3));
        assert_eq!(bases(&index), before);
        assert_eq!(&index.entries()[1..], &entries[..]);
        assert_eq!(index.heap_bytes(), 3 * PAIR_BYTES + 11 * ENTRY_BYTES);
    }
}
