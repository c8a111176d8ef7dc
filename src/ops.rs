//! Profiler operations beyond one-at-a-time interning: batch intern, merge
//! with a remap, and compaction for export.

use core::fmt;
use core::hash::BuildHasher;

use crate::arena::{DEDICATED_MIN, Loc, MAX_ARENA_BYTES};
use crate::error::Error;
use crate::id::StringId;
use crate::iter::{Iter, Strings};
use crate::prefetch::prefetch;
use crate::remap::{IdSet, Remap};
use crate::resolver::Resolver;
use crate::shared::SharedStringTable;
use crate::table::{
    Builder, SLOT_BYTES, Slot, StringTable, arena_bytes_for, hash_str, intern_failed, is_short,
};

/// Strings handled per pipeline round of a batch: enough independent
/// lookups to keep the CPU's outstanding cache misses busy. Measured on
/// `batch/large` (1M strings, 57 MB), medians of 15 rounds, three runs: 8
/// took 53-55 ms against 54-67 ms for 16 and 55-61 ms for 32 (one by
/// one: 66-75 ms); fetching slots 4 groups ahead instead of 2 did not
/// help. Again after lever 80 (session 50, three alternated runs): 8
/// took 37-42 ms (64 per batch) and 35-38 ms (1,024), 16 took 38-41 and
/// 41-43 ms, despite 4% fewer instructions.
const GROUP: usize = 8;

/// Below this footprint a table sits in the CPU's last-level cache (half
/// of a 32 MiB L3, leaving room for the input strings), its misses are
/// cheap, and batches and merges take the one-by-one path: measured on a
/// 100k-string merge (an 8 MB table), the pipeline's extra probe per
/// string cost more than its prefetches saved (20.1 ms against 16.3 ms
/// re-interning one by one, with a 2 MiB threshold). Under Miri 64 KiB,
/// so that its tests run the pipeline on tables it can build in time.
const PREFETCH_MIN_BYTES: usize = if cfg!(miri) { 64 << 10 } else { 16 << 20 };

/// The error of a failed batch: how many strings were interned before the
/// failure, and why the next one failed.
///
/// The ids of the strings before [`interned`](BatchError::interned) were
/// written to the output and stay valid; nothing interned is lost.
///
/// # Examples
///
/// ```
/// use strtab::{ErrorKind, Limits, StringId, StringTable};
///
/// let mut table = StringTable::with_limits(Limits::new().max_strings(3));
/// let mut ids = [StringId::EMPTY; 4];
/// let err = table.try_intern_batch(&["a", "b", "a", "c"], &mut ids).unwrap_err();
/// assert_eq!(err.interned(), 3);
/// assert_eq!(err.error().kind(), ErrorKind::IdsExhausted);
/// assert_eq!(&table[ids[1]], "b");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    interned: usize,
    error: Error,
}

impl BatchError {
    /// How many strings, from the start of the batch, were interned (their
    /// ids written) before the failure.
    #[must_use]
    pub fn interned(&self) -> usize {
        self.interned
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "batch stopped after {}: {}",
            crate::error::Count(self.interned, "string"),
            self.error
        )
    }
}

/// What the errors of an operation over many strings share: the
/// [`Error`] of the first string that failed, as `error`, `into_error`,
/// the source and a conversion into it (so `?` works in a function
/// returning [`Error`]).
macro_rules! wraps_error {
    ($t:ident) => {
        impl $t {
            /// Why the first string not added (the one after those
            /// reported) failed.
            #[must_use]
            pub fn error(&self) -> &Error {
                &self.error
            }

            /// The underlying error.
            #[must_use]
            pub fn into_error(self) -> Error {
                self.error
            }
        }

        impl std::error::Error for $t {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.error)
            }
        }

        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                e.error
            }
        }
    };
}

wraps_error!(BatchError);
wraps_error!(MergeError);

/// The error of a failed merge: the [`Remap`] of the strings merged before
/// the failure, and why the next one failed.
///
/// A merge adds the other table's strings in id order and stops at the
/// first that cannot be added; the strings before it stay in this table,
/// and [`remap`](MergeError::remap) maps their old ids to their new ones
/// (its [`get`](Remap::get) gives `None` for the ids not merged). So
/// nothing added is lost: a profiler that hits its table's limit while
/// merging per-thread tables can still translate the samples whose
/// strings made it.
///
/// # Examples
///
/// ```
/// use strtab::{ErrorKind, Limits, StringTable};
///
/// let mut global = StringTable::with_limits(Limits::new().max_strings(3));
/// let mut thread = StringTable::new();
/// let a = thread.intern("a");
/// let b = thread.intern("b");
/// let c = thread.intern("c");
/// let err = global.try_merge(&thread).unwrap_err();
/// assert_eq!(err.error().kind(), ErrorKind::IdsExhausted);
/// assert_eq!(err.merged(), 2);
/// let remap = err.into_remap();
/// assert_eq!(&global[remap[a]], "a");
/// assert_eq!(&global[remap[b]], "b");
/// assert_eq!(remap.get(c), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeError {
    remap: Remap,
    error: Error,
}

impl MergeError {
    /// How many strings of the other table, after its `""` (id 0, mapped
    /// to [`StringId::EMPTY`]), were merged before the failure: ids
    /// `1..=merged()` of the other table have new ids. 0 also when the
    /// remap itself could not be allocated ([`ErrorKind::AllocFailed`]):
    /// the remap is then empty, and maps not even `""`.
    ///
    /// [`ErrorKind::AllocFailed`]: crate::ErrorKind::AllocFailed
    #[must_use]
    pub fn merged(&self) -> usize {
        self.remap.len().saturating_sub(1)
    }

    /// The map from the other table's ids to this table's, for the strings
    /// merged before the failure.
    #[must_use]
    pub fn remap(&self) -> &Remap {
        &self.remap
    }

    /// The [`remap`](MergeError::remap), by value.
    #[must_use]
    pub fn into_remap(self) -> Remap {
        self.remap
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "merge stopped after {} of the other table's strings: {}",
            self.merged(),
            self.error
        )
    }
}

/// The ids of a batch's recent strings, by slice: a profiler's sample
/// passes the same slices again and again (the mapping's file for every
/// frame, a file name for each of its functions, a function's system name
/// that is its name), and a slice seen earlier in the batch needs no hash
/// or probe. Direct-mapped by address; an empty way holds a null address,
/// which no slice has.
struct Recent {
    addrs: [usize; RECENT_WAYS],
    lens: [u8; RECENT_WAYS],
    ids: [StringId; RECENT_WAYS],
}

/// Ways of [`Recent`]: a sample's distinct slices mostly fit.
const RECENT_WAYS: usize = 32;

impl Recent {
    #[inline(always)]
    fn new() -> Recent {
        Recent {
            addrs: [0; RECENT_WAYS],
            lens: [0; RECENT_WAYS],
            ids: [StringId::EMPTY; RECENT_WAYS],
        }
    }

    /// The way of `s`: bits of its address above a small string's
    /// alignment.
    #[inline(always)]
    fn way(s: &str) -> usize {
        (s.as_ptr().addr() >> 4) & (RECENT_WAYS - 1)
    }

    /// The id of `s` if its way holds the same slice: the same bytes, which
    /// `intern_batch`'s shared borrow of them keeps unchanged.
    #[inline(always)]
    fn get(&self, way: usize, s: &str) -> Option<StringId> {
        (self.addrs[way] == s.as_ptr().addr() && usize::from(self.lens[way]) == s.len())
            .then(|| self.ids[way])
    }

    #[inline(always)]
    fn put(&mut self, way: usize, s: &str, id: StringId) {
        self.addrs[way] = s.as_ptr().addr();
        // Truncation impossible: only short strings (1 to 254 bytes) are
        // put.
        self.lens[way] = s.len() as u8;
        self.ids[way] = id;
    }
}

/// Batches run without [`Recent`] after [`RECENT_STRIKES`] in a row in
/// which it answered fewer than one string in [`RECENT_MIN_SHARE`] of
/// those it was asked (a sample of a few frames can repeat nothing while
/// the caller's other samples do).
const RECENT_BACKOFF: u8 = 63;

/// See [`RECENT_BACKOFF`].
const RECENT_STRIKES: u8 = 3;

/// Below one answer in this many lookups, [`Recent`] costs more (about 16
/// instructions per string it does not answer: the way, the compare, the
/// store) than it saves (a hash, a probe and a compare, 60 to 100).
const RECENT_MIN_SHARE: usize = 8;

/// Whether a caller's batches take the recent-slice cache ([`Recent`]):
/// after [`RECENT_STRIKES`] batches in a row in which it answered too few
/// strings, the next [`RECENT_BACKOFF`] batches take the plain loop, so
/// that a caller whose every string is a slice of its own (formatted or
/// copied per call) pays the cache's instructions in one batch of
/// `RECENT_BACKOFF + 1`. A `StringTable` keeps one; the threads that batch
/// into a `SharedStringTable` keep one each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecentRest {
    /// Batches left to run without the cache.
    backoff: u8,
    /// Cached batches in a row that answered too few strings.
    strikes: u8,
}

impl RecentRest {
    /// A caller that has not batched yet: the cache is on.
    pub(crate) const NEW: RecentRest = RecentRest {
        backoff: 0,
        strikes: 0,
    };

    /// Whether this batch runs without the cache; counts it if so.
    #[inline(always)]
    fn rests(&mut self) -> bool {
        if self.backoff > 0 {
            self.backoff -= 1;
            return true;
        }
        false
    }

    /// Counts a cached batch that answered `hits` of the `looked` strings
    /// it was asked.
    #[inline(always)]
    pub(crate) fn record(&mut self, looked: usize, hits: usize) {
        if hits * RECENT_MIN_SHARE >= looked {
            self.strikes = 0;
        } else if self.strikes + 1 < RECENT_STRIKES {
            self.strikes += 1;
        } else {
            // The next batch after the pause is the last strike again: a
            // caller whose slices never repeat pays for one cached batch
            // in `RECENT_BACKOFF + 1`.
            self.backoff = RECENT_BACKOFF;
        }
    }
}

/// Panics unless a batch of `strings` strings has `ids` output ids.
#[inline(always)]
#[track_caller]
fn one_id_per_string(strings: usize, ids: usize) {
    assert!(
        strings == ids,
        "a batch intern needs one output id per input string: given {} and {}",
        crate::error::Count(strings, "string"),
        crate::error::Count(ids, "id")
    );
}

/// Interns each string of `strings` into its id with `intern`, stopping
/// at the first error: exactly the caller's own loop.
#[inline(always)]
fn batch_plain<T: AsRef<str>>(
    strings: &[T],
    ids: &mut [StringId],
    mut intern: impl FnMut(&str) -> Result<StringId, Error>,
) -> Result<(), BatchError> {
    for (i, (s, out)) in strings.iter().zip(ids.iter_mut()).enumerate() {
        *out = intern(s.as_ref()).map_err(|error| BatchError { interned: i, error })?;
    }
    Ok(())
}

/// [`batch_plain`] through the recent-slice cache: a short string (see
/// `is_short`) passed again by the same slice as a recent one of the
/// batch takes that one's id; other short strings go to `short` (and
/// only those: `StringTable`'s `short` relies on it for its unchecked
/// probe), `""` and long strings to `other`, both given `table`. Each is
/// called in one place, so that it is inlined once. Returns how many
/// strings the cache was asked and how many it answered, for
/// [`RecentRest::record`].
#[inline(always)]
fn batch_recent<C: ?Sized, T: AsRef<str>>(
    table: &mut C,
    strings: &[T],
    ids: &mut [StringId],
    mut short: impl FnMut(&mut C, &str) -> Result<StringId, Error>,
    mut other: impl FnMut(&mut C, &str) -> Result<StringId, Error>,
) -> Result<(usize, usize), BatchError> {
    let mut recent = Recent::new();
    // Strings looked up in the cache, and those it answered.
    let (mut looked, mut hits) = (0, 0);
    let n = strings.len();
    let (strings, ids) = (&strings[..n], &mut ids[..n]);
    let mut i = 0;
    while i < n {
        let s = strings[i].as_ref();
        let id = if !is_short(s) {
            // `""` and long strings, past the cache.
            other(table, s).map_err(|error| BatchError { interned: i, error })?
        } else {
            looked += 1;
            let way = Recent::way(s);
            match recent.get(way, s) {
                Some(id) => {
                    hits += 1;
                    id
                }
                None => {
                    let id = short(table, s).map_err(|error| BatchError { interned: i, error })?;
                    recent.put(way, s, id);
                    id
                }
            }
        };
        ids[i] = id;
        i += 1;
    }
    Ok((looked, hits))
}

mod sealed {
    /// Gives `merge` access to a source's strings.
    pub trait Sealed {
        #[allow(private_interfaces)]
        fn strings(&self) -> crate::iter::Strings<'_>;
    }
}

/// What [`StringTable::merge`] can read from: a [`StringTable`] (with any
/// hasher) or a [`Resolver`]. Sealed: implemented only by this crate's
/// types.
pub trait MergeSource: sealed::Sealed {}

impl<S> sealed::Sealed for StringTable<S> {
    #[allow(private_interfaces)]
    fn strings(&self) -> Strings<'_> {
        Strings::Table(&self.store)
    }
}
impl<S> MergeSource for StringTable<S> {}

impl sealed::Sealed for Resolver {
    #[allow(private_interfaces)]
    fn strings(&self) -> Strings<'_> {
        self.strings()
    }
}
impl MergeSource for Resolver {}

impl<S: BuildHasher> StringTable<S> {
    /// Interns every string of `strings` and writes their ids to `ids`, in
    /// order: the same ids as calling [`intern`](Self::intern) on each
    /// string in turn (duplicates inside the batch included).
    ///
    /// On a table larger than the CPU's caches, one-by-one interning waits
    /// on a chain of cache misses per string (hash table, then bytes). A
    /// batch hashes a group of strings first, then prefetches every
    /// string's hash-table slot, then the bytes the slot points to, so the
    /// misses of the whole group overlap.
    ///
    /// On a table that fits the caches, a string passed again by the same
    /// slice (the same address and length) as a recent string of the
    /// batch takes that string's id without a hash or a probe. A profiler's
    /// sample does this all the time: the mapping's file for every frame,
    /// a source file for each of its functions, a system name that is the
    /// function's name. (Replaying a Go CPU profile's samples, a batch per
    /// sample executes a third fewer instructions than one `intern` per
    /// string; see `benches/README.md`.) The batch takes the same address
    /// and length to mean the same bytes, as they are for every type that
    /// lends out bytes it owns (`&str`, `String`, `Box<str>`, `Arc<str>`,
    /// `Cow<str>`). When the slices stop repeating (a caller that formats
    /// or copies each string), the batch stops looking for a while: such
    /// batches execute about 1% more instructions than the plain loop.
    ///
    /// # Panics
    ///
    /// Panics if `ids.len() != strings.len()`, or where `intern` would.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let stack = ["main", "run", "poll", "run"];
    /// let mut ids = [strtab::StringId::EMPTY; 4];
    /// table.intern_batch(&stack, &mut ids);
    /// assert_eq!(ids.map(|id| id.to_u32()), [1, 2, 3, 2]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn intern_batch<T: AsRef<str>>(&mut self, strings: &[T], ids: &mut [StringId]) {
        one_id_per_string(strings.len(), ids.len());
        let done = if self.beyond_caches() {
            self.batch_pipelined(strings, ids)
        } else {
            // Cache-resident: nothing to overlap, so exactly the caller's
            // own loop.
            self.intern_each(strings, ids)
        };
        if let Err(e) = done {
            intern_failed(&e.error);
        }
    }

    /// `try_intern` of each string into its id, stopping at the first
    /// error: the batch on a cache-resident table, inlined into the
    /// caller's loop over samples. A string passed again by the same slice
    /// (address and length) as a recent one of the batch takes that one's
    /// id without a hash or a probe ([`Recent`]), unless the table's
    /// [`RecentRest`] says the caller's slices stopped repeating.
    #[inline(always)]
    fn intern_each<T: AsRef<str>>(
        &mut self,
        strings: &[T],
        ids: &mut [StringId],
    ) -> Result<(), BatchError> {
        if self.recent.rests() {
            return batch_plain(strings, ids, |s| self.try_intern(s));
        }
        self.intern_recent(strings, ids)
    }

    /// [`intern_each`](Self::intern_each) with the recent-slice cache, out
    /// of line: inlined beside the plain loop, it changed the caller's
    /// register allocation, and the plain loop's strings cost 2-4% more
    /// instructions.
    #[inline(never)]
    #[allow(unsafe_code)]
    fn intern_recent<T: AsRef<str>>(
        &mut self,
        strings: &[T],
        ids: &mut [StringId],
    ) -> Result<(), BatchError> {
        // `try_intern`'s steps, written out around the cache: moved into a
        // helper that `try_intern` shares, they changed its compiled code,
        // and one-by-one interning cost 0.3-0.9 more instructions per
        // string.
        let (looked, hits) = batch_recent(
            self,
            strings,
            ids,
            |table, s| {
                let hash = hash_str(&table.hasher, s);
                // SAFETY: `batch_recent` gives this closure only short
                // strings (`is_short`).
                match unsafe { table.find_short(hash, s) } {
                    Some(id) => Ok(id),
                    None => table.insert_new::<false>(hash, s),
                }
            },
            |table, s| {
                if s.is_empty() {
                    Ok(StringId::EMPTY)
                } else {
                    table.intern_long(s)
                }
            },
        )?;
        self.recent.record(looked, hits);
        Ok(())
    }

    /// Like [`intern_batch`](Self::intern_batch), but returns an error
    /// instead of panicking when a string cannot be added.
    ///
    /// # Errors
    ///
    /// A [`BatchError`] saying how many strings were interned (their ids
    /// are in `ids[..interned]`) and why the next failed. Those strings stay
    /// interned.
    ///
    /// # Panics
    ///
    /// Panics if `ids.len() != strings.len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let mut ids = vec![strtab::StringId::EMPTY; 2];
    /// table.try_intern_batch(&["a".to_string(), "".to_string()], &mut ids)?;
    /// assert_eq!(ids[1], strtab::StringId::EMPTY);
    /// # Ok::<(), strtab::BatchError>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn try_intern_batch<T: AsRef<str>>(
        &mut self,
        strings: &[T],
        ids: &mut [StringId],
    ) -> Result<(), BatchError> {
        one_id_per_string(strings.len(), ids.len());
        if self.beyond_caches() {
            self.batch_pipelined(strings, ids)
        } else {
            // Cache-resident: nothing to overlap, so no pipeline overhead.
            self.intern_each(strings, ids)
        }
    }

    /// Whether the table is too large for the CPU's last-level cache, so
    /// that batches and merges pipeline their lookups: its arena chunks
    /// and its hash table's buckets (a slot and a control byte each) reach
    /// [`PREFETCH_MIN_BYTES`]. A few loads, where
    /// [`memory_usage`](Self::memory_usage) sums every allocation: this
    /// runs once per batch, and a profiler's batches are a sample's few
    /// strings.
    #[inline(always)]
    fn beyond_caches(&self) -> bool {
        self.store.arena.chunk_bytes() + self.table.capacity() * (SLOT_BYTES + 1)
            >= PREFETCH_MIN_BYTES
    }

    /// The batch on a table beyond the caches, out of line (see
    /// [`intern_pipelined`](Self::intern_pipelined)).
    #[inline(never)]
    fn batch_pipelined<T: AsRef<str>>(
        &mut self,
        strings: &[T],
        ids: &mut [StringId],
    ) -> Result<(), BatchError> {
        self.intern_pipelined(strings.len(), |i| strings[i].as_ref(), |i, id| ids[i] = id)
            .map_err(|(interned, error)| BatchError { interned, error })
    }

    /// Adds every string of `other` (a table or a resolver) to this table
    /// and returns the [`Remap`] from `other`'s ids to this table's.
    ///
    /// Faster than re-interning `other`'s strings one by one: `other` is
    /// read in id order, sequentially through its arena, into a remap
    /// allocated once, and on tables beyond the CPU caches the lookups go
    /// through the batch pipeline of [`intern_batch`](Self::intern_batch),
    /// so that their cache misses overlap (criterion `merge/8_threads`,
    /// cache-resident: 1.11x-1.26x re-interning's speed). Merging several
    /// tables, [`reserve`](Self::reserve) what the merged table will hold
    /// first (the last period's merged size, say), so that it grows once
    /// rather than step by step: the sum of the tables' sizes is far more
    /// when their threads saw the same strings (eight tables sharing 80%
    /// of their strings: 3x the memory for the sum, 0.91x for the merged
    /// size, `benches/README.md`).
    ///
    /// # Panics
    ///
    /// Panics where [`try_merge`](Self::try_merge) would return an error.
    ///
    /// # Examples
    ///
    /// Per-thread tables combined at export:
    ///
    /// ```
    /// use strtab::StringTable;
    ///
    /// let mut global = StringTable::new();
    /// let mut thread_tables = Vec::new();
    /// for t in 0..4 {
    ///     let mut table = StringTable::new();
    ///     let id = table.intern(&format!("thread-{t}"));
    ///     thread_tables.push((table, id));
    /// }
    /// for (table, id) in &thread_tables {
    ///     let remap = global.merge(table);
    ///     assert_eq!(global[remap[*id]], table[*id]);
    /// }
    /// assert_eq!(global.len(), 5);
    /// ```
    #[track_caller]
    pub fn merge<T: MergeSource + ?Sized>(&mut self, other: &T) -> Remap {
        match self.try_merge(other) {
            Ok(remap) => remap,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`merge`](Self::merge), but returns an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// A [`MergeError`] with the [`Error`] of the first string that could
    /// not be added, and the [`Remap`] of the strings merged before it,
    /// which stay in this table.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut a = strtab::StringTable::new();
    /// let mut b = strtab::StringTable::new();
    /// let id = b.intern("x");
    /// let remap = a.try_merge(&b.into_resolver())?;
    /// assert_eq!(&a[remap[id]], "x");
    /// # Ok::<(), strtab::MergeError>(())
    /// ```
    pub fn try_merge<T: MergeSource + ?Sized>(&mut self, other: &T) -> Result<Remap, MergeError> {
        let src = sealed::Sealed::strings(other);
        let mut remap = Remap::try_with_capacity(src.len()).map_err(|error| MergeError {
            remap: Remap::empty(),
            error,
        })?;
        remap.push(Some(StringId::EMPTY));
        // Ids 1.. of `other`, in order: sequential reads of its arena.
        let done = if self.beyond_caches() {
            self.intern_pipelined(
                src.len() - 1,
                |i| src.str_at(i + 1),
                |_, id| remap.push(Some(id)),
            )
            .map_err(|(_, error)| error)
        } else {
            // The plain loop: the pipeline's groups (whose prefetches do
            // nothing here) with an out-of-line `Remap::push` cost a
            // cache-resident merge 21% more instructions (114.4M against
            // 94.2M, `benches/README.md`, session 36).
            Iter::of(src)
                .skip(1)
                .try_for_each(|s| self.try_intern(s).map(|id| remap.push(Some(id))))
        };
        match done {
            Ok(()) => Ok(remap),
            Err(error) => Err(MergeError { remap, error }),
        }
    }

    /// Interns `n` strings, `string(i)` for `i` in `0..n`, in order, and
    /// hands each id to `out(i, id)`; on error, returns the index that
    /// failed (every string before it is interned and handed out).
    ///
    /// On tables beyond the CPU caches the lookups run as a software
    /// pipeline over groups of [`GROUP`] strings, three groups deep: while
    /// group `g` is looked up, the first candidates' strings of group
    /// `g + 1` (whose slots were loaded one round earlier) and the
    /// hash-table slots of group `g + 2` (hashed now, which also brings its
    /// input strings into the cache) are being fetched. Each level of a
    /// lookup's chain of dependent misses thus overlaps with other
    /// lookups' misses, and a lookup whose first candidate holds its string
    /// takes that record's id without probing again (`batch/large`: 267 ->
    /// 188 instructions per string, `benches/README.md`, lever 79). Only
    /// for such tables: below [`PREFETCH_MIN_BYTES`]
    /// the callers run the plain loop, as the groups cost instructions for
    /// nothing there.
    #[allow(unsafe_code)]
    fn intern_pipelined<'s>(
        &mut self,
        n: usize,
        string: impl Fn(usize) -> &'s str,
        mut out: impl FnMut(usize, StringId),
    ) -> Result<(), (usize, Error)> {
        // Groups ahead of the lookups whose slots, and whose first
        // candidates' records, are being fetched.
        const SLOTS_AHEAD: usize = 2;
        const RECORDS_AHEAD: usize = 1;
        const DEPTH: usize = SLOTS_AHEAD + 1;
        let groups = n.div_ceil(GROUP);
        let mut ring = [[Pending::EMPTY; GROUP]; DEPTH];
        let mut lens = [0usize; DEPTH];
        // Where the hash table's buckets are: found once (a lookup of id
        // 1), and again when an insertion grew the table (a stale address
        // costs only useless prefetches).
        let mut ctrl = self.table_ctrl();
        let mut buckets = self.table.num_buckets();
        // Stage 1 of group `g`: hash it and start loading its slots.
        let stage1 = |this: &Self,
                      g: usize,
                      ctrl: Option<(*const u8, usize)>,
                      ring: &mut [[Pending<'s>; GROUP]; DEPTH],
                      lens: &mut [usize; DEPTH]| {
            let slot = &mut ring[g % DEPTH];
            let start = g * GROUP;
            let len = GROUP.min(n - start);
            for (k, e) in slot[..len].iter_mut().enumerate() {
                e.s = string(start + k);
                e.candidate = 0;
            }
            // Hashed in a loop of their own, which keeps fewer values
            // live across the hasher's call than the loop above. Each
            // string's slot is fetched as soon as its hash is known: the
            // fetches start earlier and spread over the hashing instead
            // of leaving in a burst after it (`batch/large`: 6-47% less
            // time in alternated pairs, `benches/README.md`, lever 80).
            for e in &mut slot[..len] {
                e.hash = hash_str(&this.hasher, e.s);
                if let Some(ctrl) = ctrl {
                    prefetch_slot(ctrl, e.hash);
                }
            }
            lens[g % DEPTH] = len;
        };
        for g in 0..groups.min(SLOTS_AHEAD) {
            stage1(self, g, ctrl, &mut ring, &mut lens);
        }
        for g in 0..groups.min(RECORDS_AHEAD) {
            self.prefetch_records(&mut ring[g % DEPTH][..lens[g % DEPTH]]);
        }
        for g in 0..groups {
            if g + SLOTS_AHEAD < groups {
                stage1(self, g + SLOTS_AHEAD, ctrl, &mut ring, &mut lens);
            }
            if g + RECORDS_AHEAD < groups {
                let next = (g + RECORDS_AHEAD) % DEPTH;
                self.prefetch_records(&mut ring[next][..lens[next]]);
            }
            let cur = g % DEPTH;
            for (k, p) in ring[cur][..lens[cur]].iter().enumerate() {
                let i = g * GROUP + k;
                // SAFETY: `candidate` is 0 (the static record of `""`, id
                // 0, `StringId::EMPTY`: it holds no other string) or the
                // location in a slot of
                // this table (`prefetch_records`), which this arena's
                // `push` returned since the last `clear`; records never
                // move, so it still locates that record after insertions.
                let hit = unsafe { self.store.arena.id_if_holds(p.candidate, p.s.as_bytes()) };
                let id = if let Some(id) = hit {
                    // The first candidate, compared already: no probe.
                    StringId::from_u32(id)
                } else if p.s.is_empty() {
                    StringId::EMPTY
                } else {
                    match self.find(p.hash, p.s) {
                        Some(id) => id,
                        None => {
                            let id = self.insert_new::<false>(p.hash, p.s).map_err(|e| (i, e))?;
                            // Also when the table was too small to locate
                            // them (a merge into an empty, reserved table).
                            if self.table.num_buckets() != buckets || ctrl.is_none() {
                                buckets = self.table.num_buckets();
                                ctrl = self.table_ctrl();
                            }
                            id
                        }
                    }
                };
                out(i, id);
            }
        }
        Ok(())
    }

    /// Finds the first candidate of each lookup of `group` (the first slot
    /// with the string's hash byte: almost always its record, if the table
    /// holds it), remembers its location, and starts
    /// loading its record (the slots were loaded by [`prefetch_slot`] a
    /// round earlier). The lookup then compares that record and probes no
    /// further when it holds the string.
    #[inline(never)]
    #[allow(unsafe_code)]
    fn prefetch_records(&self, group: &mut [Pending<'_>]) {
        debug_assert!(self.beyond_caches());
        for p in group {
            if let Some(e) = self.table.find(p.hash, |_| true) {
                p.candidate = e.loc();
                // SAFETY: the table's slots hold locations the arena's
                // `push` returned since the last `clear`.
                prefetch(unsafe { self.store.arena.record_addr(e.loc()) });
            }
        }
    }

    /// The address of the hash table's control bytes and its bucket mask,
    /// found from the bucket that holds id 1 (hashbrown stores bucket `i`
    /// at `ctrl - (i + 1) * SLOT_BYTES`).
    fn table_ctrl(&self) -> Option<(*const u8, usize)> {
        if self.store.len() < 2 {
            return None;
        }
        let one = self.store.entries()[1].loc();
        let index = self
            .table
            .find_bucket_index(hash_str(&self.hasher, self.store.str_at(1)), |e| {
                e.loc() == one
            })?;
        let bucket: *const Slot = self.table.get_bucket(index)?;
        let ctrl = bucket.cast::<u8>().wrapping_add((index + 1) * SLOT_BYTES);
        Some((ctrl, self.table.num_buckets() - 1))
    }
}

/// A string of a batch on its way through
/// [`StringTable::intern_pipelined`]'s stages.
#[derive(Clone, Copy)]
struct Pending<'s> {
    hash: u64,
    s: &'s str,
    /// The location in the first slot with the string's hash byte
    /// (`prefetch_records`), or 0: the static record of `""`.
    candidate: Loc,
}

impl Pending<'_> {
    const EMPTY: Self = Pending {
        hash: 0,
        s: "",
        candidate: 0,
    };
}

/// Starts loading the hash-table control bytes and slot that a lookup of
/// `hash` starts from, in a table whose control bytes are at `ctrl.0` and
/// whose bucket mask is `ctrl.1` (hashbrown stores bucket `i` at
/// `ctrl - (i + 1) * SLOT_BYTES` and probes from `hash & mask`); a wrong
/// guess costs only a useless prefetch. Only on a table beyond the
/// caches: [`StringTable::intern_pipelined`]'s callers check.
#[inline(always)]
fn prefetch_slot(ctrl: (*const u8, usize), hash: u64) {
    let (ctrl, mask) = ctrl;
    let pos = (hash as usize) & mask;
    prefetch(ctrl.wrapping_add(pos));
    prefetch(ctrl.wrapping_sub((pos + 1) * SLOT_BYTES));
}

std::thread_local! {
    /// The calling thread's [`RecentRest`] for its batches into any
    /// [`SharedStringTable`]: whether its slices repeat is the caller's
    /// habit, and a per-thread value is never written by another core.
    static SHARED_RECENT_REST: core::cell::Cell<RecentRest> =
        const { core::cell::Cell::new(RecentRest::NEW) };
}

impl<S: BuildHasher> SharedStringTable<S> {
    /// Interns every string of `strings` and writes their ids to `ids`, in
    /// order: the same ids as calling [`intern`](Self::intern) on each
    /// string in turn (duplicates inside the batch included), also while
    /// other threads intern.
    ///
    /// As in [`StringTable::intern_batch`], a string passed again by the
    /// same slice (the same address and length) as a recent string of the
    /// batch takes that string's id without a hash or a lookup: a
    /// profiler's sample passes the mapping's file for every frame, a
    /// source file for each of its functions, a system name that is the
    /// function's name. The batch takes the same address and length to
    /// mean the same bytes, as they are for every type that lends out
    /// bytes it owns (`&str`, `String`, `Box<str>`, `Arc<str>`,
    /// `Cow<str>`). When a thread's slices stop repeating (a caller that
    /// formats or copies each string), its batches stop looking for a
    /// while. There is no prefetch pipeline: each shard is a table of its
    /// own.
    ///
    /// # Panics
    ///
    /// Panics if `ids.len() != strings.len()`, or where `intern` would.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// let stack = ["main", "run", "poll", "run"];
    /// let mut ids = [strtab::StringId::EMPTY; 4];
    /// table.intern_batch(&stack, &mut ids);
    /// assert_eq!(ids.map(|id| id.to_u32()), [1, 2, 3, 2]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn intern_batch<T: AsRef<str>>(&self, strings: &[T], ids: &mut [StringId]) {
        if let Err(e) = self.try_intern_batch(strings, ids) {
            intern_failed(&e.error);
        }
    }

    /// Like [`intern_batch`](Self::intern_batch), but returns an error
    /// instead of panicking when a string cannot be added.
    ///
    /// # Errors
    ///
    /// A [`BatchError`] saying how many strings were interned (their ids
    /// are in `ids[..interned]`) and why the next failed. Those strings stay
    /// interned.
    ///
    /// # Panics
    ///
    /// Panics if `ids.len() != strings.len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{ErrorKind, Limits, SharedStringTable, StringId};
    ///
    /// let table = SharedStringTable::with_limits(Limits::new().max_strings(3));
    /// let mut ids = [StringId::EMPTY; 4];
    /// let err = table.try_intern_batch(&["a", "b", "a", "c"], &mut ids).unwrap_err();
    /// assert_eq!(err.interned(), 3);
    /// assert_eq!(err.error().kind(), ErrorKind::IdsExhausted);
    /// assert_eq!(&table[ids[1]], "b");
    /// ```
    #[inline]
    #[track_caller]
    pub fn try_intern_batch<T: AsRef<str>>(
        &self,
        strings: &[T],
        ids: &mut [StringId],
    ) -> Result<(), BatchError> {
        one_id_per_string(strings.len(), ids.len());
        let mut rest = SHARED_RECENT_REST.get();
        if rest.rests() {
            SHARED_RECENT_REST.set(rest);
            return batch_plain(strings, ids, |s| self.try_intern(s));
        }
        let (looked, hits) = self.intern_recent(strings, ids)?;
        rest.record(looked, hits);
        SHARED_RECENT_REST.set(rest);
        Ok(())
    }

    /// The batch through the recent-slice cache, out of line as
    /// `StringTable`'s.
    #[inline(never)]
    fn intern_recent<T: AsRef<str>>(
        &self,
        strings: &[T],
        ids: &mut [StringId],
    ) -> Result<(usize, usize), BatchError> {
        batch_recent(
            &mut &*self,
            strings,
            ids,
            |table, s| table.try_intern(s),
            |table, s| table.try_intern(s),
        )
    }
}

impl<S: BuildHasher + Clone> StringTable<S> {
    /// A new table holding only the strings whose ids are in `keep` (and
    /// `""`, always kept), in their old relative order, renumbered densely
    /// from 0, with the [`Remap`] from old ids to new ones (dropped ids map
    /// to `None`). This table is untouched.
    ///
    /// This is what a long-lived profiler table needs at each export: the
    /// profile must list only the strings it references. The new table has
    /// the same hasher and limits and is pre-sized for the kept strings, and
    /// kept strings are known to be distinct, so they are appended without
    /// a lookup.
    ///
    /// # Panics
    ///
    /// Panics where [`try_compact`](Self::try_compact) would return an
    /// error.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{IdSet, StringId, StringTable};
    ///
    /// let mut table = StringTable::new();
    /// let a = table.intern("a");
    /// let _b = table.intern("b");
    /// let c = table.intern("c");
    /// let keep: IdSet = [c, a].into_iter().collect();
    /// let (compact, remap) = table.compact(&keep);
    /// assert_eq!(compact.iter().collect::<Vec<_>>(), ["", "a", "c"]);
    /// assert_eq!(remap[c], StringId::from_u32(2));
    /// assert_eq!(remap.get(_b), None);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn compact(&self, keep: &IdSet) -> (StringTable<S>, Remap) {
        match self.try_compact(keep) {
            Ok(out) => out,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`compact`](Self::compact), but returns an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// An [`Error`] if the new table or the [`Remap`] cannot be allocated,
    /// or the new table would exceed this table's
    /// [`Limits`](crate::Limits). The new table is laid out afresh (sized
    /// for the kept strings, in chunks of its own), so under a tight byte
    /// limit it can need more than this table holds, even when it keeps
    /// every string (153 tables of 50 to 20,000 strings, some over 64 KiB,
    /// each filled under the tightest byte limit it fit, 2% steps: one
    /// could not be compacted whole under that limit, and needed 1%
    /// more): keep some headroom in `max_bytes` if the compaction must not
    /// fail.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.intern("unused");
    /// let (compact, _) = table.try_compact(&strtab::IdSet::new())?;
    /// assert_eq!(compact.len(), 1);
    /// # Ok::<(), strtab::Error>(())
    /// ```
    pub fn try_compact(&self, keep: &IdSet) -> Result<(StringTable<S>, Remap), Error> {
        let builder = Builder::with_hasher(self.hasher.clone()).limits(self.limits);
        compact_strings(Strings::Table(&self.store), builder, keep)
    }
}

impl Resolver {
    /// A new [`StringTable`] holding only the strings whose ids are in
    /// `keep` (and `""`, always kept), in their old relative order,
    /// renumbered densely from 0, with the [`Remap`] from old ids to new
    /// ones: [`StringTable::compact`] for a frozen table, such as a
    /// [`SharedStringTable`]'s after
    /// [`into_resolver`](crate::SharedStringTable::into_resolver). The new
    /// table has the default hasher and no limits.
    ///
    /// # Panics
    ///
    /// Panics where [`try_compact`](Self::try_compact) would return an
    /// error.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{IdSet, SharedStringTable, StringId};
    ///
    /// let table = SharedStringTable::new();
    /// let a = table.intern("a");
    /// let b = table.intern("b");
    /// let resolver = table.into_resolver();
    /// let (compact, remap) = resolver.compact(&[b].into_iter().collect::<IdSet>());
    /// assert_eq!(compact.iter().collect::<Vec<_>>(), ["", "b"]);
    /// assert_eq!(remap[b], StringId::from_u32(1));
    /// assert_eq!(remap.get(a), None);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn compact(&self, keep: &IdSet) -> (StringTable, Remap) {
        match self.try_compact(keep) {
            Ok(out) => out,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`compact`](Self::compact), but returns an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// An [`Error`] if the new table or the remap cannot be allocated, or
    /// if the kept strings are more than one [`StringTable`] can hold
    /// ([`ErrorKind::CapacityOverflow`](crate::ErrorKind::CapacityOverflow):
    /// a shared table's shards can together hold more than
    /// [`MAX_ARENA_BYTES`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::SharedStringTable::new();
    /// table.intern("unused");
    /// let (compact, _) = table.into_resolver().try_compact(&strtab::IdSet::new())?;
    /// assert_eq!(compact.len(), 1);
    /// # Ok::<(), strtab::Error>(())
    /// ```
    pub fn try_compact(&self, keep: &IdSet) -> Result<(StringTable, Remap), Error> {
        compact_strings(self.strings(), StringTable::builder(), keep)
    }
}

/// [`StringTable::try_compact`] and [`Resolver::try_compact`]: the kept
/// strings of `src` in a new table from `builder`, pre-sized for them.
fn compact_strings<S: BuildHasher>(
    src: Strings<'_>,
    builder: Builder<S>,
    keep: &IdSet,
) -> Result<(StringTable<S>, Remap), Error> {
    // Pre-size the new table; strings that will get chunks of their own do
    // not count towards the first chunk.
    let (mut count, mut bytes) = (0, 0);
    for i in 1..src.len() {
        if keep.contains(StringId::from_u32(i as u32)) {
            count += 1;
            let len = src.str_at(i).len();
            if len <= DEDICATED_MIN {
                bytes += len;
            }
        }
    }
    // A first chunk past what one arena can address would be refused
    // although the strings may fit (the chunk's estimate adds room for
    // blocks' unused ends): then the arena grows as the strings come.
    if arena_bytes_for(count, bytes) > MAX_ARENA_BYTES {
        bytes = 0;
    }
    let mut out = builder.capacity(count, bytes).try_build()?;
    let mut remap = Remap::try_with_capacity(src.len())?;
    remap.push(Some(StringId::EMPTY));
    for i in 1..src.len() {
        let new = if keep.contains(StringId::from_u32(i as u32)) {
            // Kept strings are distinct: append without a lookup.
            let s = src.str_at(i);
            Some(out.insert_new::<false>(hash_str(&out.hasher, s), s)?)
        } else {
            None
        };
        remap.push(new);
    }
    Ok((out, remap))
}
