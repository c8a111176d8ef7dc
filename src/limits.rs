//! [`Limits`]: caps on a table's size.

use crate::error::{Error, ErrorKind};

/// Caps on how many strings a [`StringTable`](crate::StringTable) or a
/// [`SharedStringTable`](crate::SharedStringTable) may hold and how many
/// heap bytes it may use (a shared table's across all its shards).
///
/// A profiler inside someone else's process must bound its footprint; with
/// limits, [`try_intern`](crate::StringTable::try_intern) returns an error
/// (naming the limit) instead of growing past them, and the table stays
/// usable. The byte limit covers everything
/// [`memory_usage`](crate::StringTable::memory_usage) counts: arena chunks
/// with their metadata, the id index and the hash table.
///
/// It bounds the heap at every moment, not only between insertions: a
/// hash table that grows allocates its replacement (twice its size) while
/// the old one is still held, so that moment counts both, and
/// [`shrink_to`](crate::StringTable::shrink_to) skips a copy that would
/// go past the limit. Two growths are counted by the bytes they add, not
/// by that moment: a `StringTable`'s id index (5 bytes per string) and
/// the arena's block list (16 bytes per 64 KiB block) grow by `realloc`,
/// and an allocator that moves the block holds the old and the new one
/// while it copies: up to the old index's bytes past the limit, for that
/// moment (glibc can, below its `mmap` threshold, 128 KiB by default;
/// larger blocks it remaps without a copy). Charging the whole new index
/// instead cost 2-3% of the strings a limit takes, up to 14% at some
/// limits (`benches/README.md`). A table capped
/// at exactly the footprint that `n` strings reach can therefore refuse a
/// string before the `n`th, where the hash table grows: capped at the
/// 90,325 bytes (on 64-bit targets) that a `StringTable` of the 2,000
/// strings `func::name::0` to `func::name::1999` uses, it refuses the
/// 1,793rd of them, whose insertion allocates 24,736 bytes for the new hash
/// table while the old one is held (the second example).
///
/// # Examples
///
/// ```
/// use strtab::{Limits, StringTable};
///
/// let limits = Limits::new().max_strings(100_000).max_bytes(8 << 20);
/// let table = StringTable::with_limits(limits);
/// assert!(table.memory_usage() <= 8 << 20);
/// ```
///
/// A cap at exactly a table's footprint:
///
/// ```
/// use strtab::{ErrorKind, Limits, StringTable};
///
/// let names: Vec<String> = (0..2000).map(|i| format!("func::name::{i}")).collect();
/// let full: StringTable = names.iter().collect();
/// let cap = full.memory_usage();
/// let mut capped = StringTable::with_limits(Limits::new().max_bytes(cap));
/// let refused = names
///     .iter()
///     .enumerate()
///     .find_map(|(i, s)| capped.try_intern(s).err().map(|e| (i, e)));
/// assert!(capped.memory_usage() <= cap);
/// # #[cfg(target_pointer_width = "64")]
/// # {
/// let (i, err) = refused.expect("a string is refused");
/// assert_eq!((cap, i), (90_326, 1_792)); // the 1,793rd string
/// assert_eq!(err.kind(), ErrorKind::MemoryLimit);
/// assert_eq!(
///     err.to_string(),
///     "string table memory limit reached: allocating 24736 more bytes \
///      would exceed the limit of 90326 bytes"
/// );
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    max_strings: usize,
    max_bytes: usize,
}

/// Most strings a table can number: ids are `u32`, and `u32::MAX` itself is
/// reserved (it marks dropped ids in a [`Remap`](crate::Remap)).
const ID_SPACE: usize = u32::MAX as usize;

impl Limits {
    /// No limits beyond the `u32::MAX` ids a `u32` can number.
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = strtab::Limits::new();
    /// assert_eq!(limits.get_max_bytes(), usize::MAX);
    /// ```
    #[must_use]
    pub const fn new() -> Limits {
        Limits {
            max_strings: ID_SPACE,
            max_bytes: usize::MAX,
        }
    }

    /// Caps the number of strings, the empty string included. Values below
    /// 1 are raised to 1 (the empty string is always present); values above
    /// `u32::MAX` are lowered to it.
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = strtab::Limits::new().max_strings(0);
    /// assert_eq!(limits.get_max_strings(), 1);
    /// ```
    #[must_use]
    pub const fn max_strings(mut self, max_strings: usize) -> Limits {
        self.max_strings = if max_strings == 0 {
            1
        } else if max_strings > ID_SPACE {
            ID_SPACE
        } else {
            max_strings
        };
        self
    }

    /// Caps the heap bytes the table may hold, as counted by
    /// [`memory_usage`](crate::StringTable::memory_usage). A table built
    /// with a cap smaller than its page-tuned first allocations starts
    /// smaller; a cap below the empty table's own footprint (101 bytes
    /// for a `StringTable` on 64-bit targets, about 2.4 KB per shard for a
    /// `SharedStringTable`) is raised to that footprint. The first string
    /// needs more (on 64-bit targets, 814 bytes for a short string in a
    /// `StringTable` and 726 for one of 200 to 400 bytes; 7,204 in a
    /// one-shard shared table and 24,340 in an eight-shard one, 56 bytes
    /// less for the longer string;
    /// the latter two for the id index's first segment of 4 KiB, the
    /// shard's first chunk of 608 bytes (552 for the longer string: a
    /// block-list entry fewer) and its hash table; the
    /// hint cache's levels, the first 8 KiB, are left out while one would
    /// take more than half of what the cap leaves), so a cap at the floor
    /// makes a table that refuses every string with
    /// [`ErrorKind::MemoryLimit`]. (The
    /// thresholds are tested: `first_string_needs_what_the_docs_say`.)
    ///
    /// # Examples
    ///
    /// ```
    /// let limits = strtab::Limits::new().max_bytes(1 << 20);
    /// assert_eq!(limits.get_max_bytes(), 1 << 20);
    /// ```
    #[must_use]
    pub const fn max_bytes(mut self, max_bytes: usize) -> Limits {
        self.max_bytes = max_bytes;
        self
    }

    /// The cap on the number of strings.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::Limits::new().max_strings(10).get_max_strings(), 10);
    /// ```
    #[must_use]
    pub const fn get_max_strings(&self) -> usize {
        self.max_strings
    }

    /// The cap on heap bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::Limits::new().max_bytes(10).get_max_bytes(), 10);
    /// ```
    #[must_use]
    pub const fn get_max_bytes(&self) -> usize {
        self.max_bytes
    }
}

impl Limits {
    /// The [`MemoryLimit`](ErrorKind::MemoryLimit) error of a step that
    /// needed `bytes` more heap bytes than these limits left, naming the
    /// byte limit.
    pub(crate) fn memory_error(&self, bytes: usize) -> Error {
        Error::new(ErrorKind::MemoryLimit, bytes).with_limit(self.get_max_bytes())
    }

    /// A capacity hint of `strings` strings (besides `""`) of `bytes`
    /// bytes in all, cut to what these limits let a table hold: at most
    /// `max_strings - 1` strings, with `bytes` scaled down in proportion
    /// (nothing at all for a table limited to `""`). Both builders pre-size
    /// from this, so a hint larger than the limit does not allocate room
    /// the table may never use.
    ///
    /// A hint of [`ID_SPACE`] strings or more, more than any table can
    /// number whatever its limits, is refused ([`ErrorKind::IdsExhausted`]):
    /// cut to the default limit it would still ask for tens of gigabytes,
    /// which the allocator grants or refuses depending on the machine.
    pub(crate) fn clamp_hint(&self, strings: usize, bytes: usize) -> Result<(usize, usize), Error> {
        if strings >= ID_SPACE {
            return Err(Error::new(ErrorKind::IdsExhausted, strings).with_limit(ID_SPACE - 1));
        }
        let max = self.max_strings - 1;
        if max == 0 {
            return Ok((0, 0));
        }
        Ok(cut_hint(strings, bytes, max))
    }
}

/// A hint of `strings` strings of `bytes` bytes cut to at most `room`
/// strings, its bytes in proportion (rounded up).
pub(crate) fn cut_hint(strings: usize, bytes: usize, room: usize) -> (usize, usize) {
    if strings <= room {
        return (strings, bytes);
    }
    // `bytes * room / strings` rounded up: at most `bytes`, since
    // `room < strings`.
    let scaled = (bytes as u128 * room as u128).div_ceil(strings as u128) as usize;
    (room, scaled)
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new()
    }
}
