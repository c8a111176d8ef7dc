//! [`Remap`] (old id to new id) and [`IdSet`] (a set of ids).

use core::fmt;
use core::ops::Index;

use crate::id::StringId;

/// Marks an old id that has no new id (dropped by compaction). Never a
/// real id: tables number at most `u32::MAX` strings, ids `0..u32::MAX`.
const DROPPED: StringId = StringId::from_u32(u32::MAX);

/// A map from the ids of one table to the ids of the same strings in
/// another, returned by [`StringTable::merge`](crate::StringTable::merge)
/// and [`StringTable::compact`](crate::StringTable::compact).
///
/// Indexing by an old id gives the new one (and panics for an id the old
/// table never gave, or one compaction dropped); [`get`](Remap::get) is
/// the non-panicking form.
///
/// # Examples
///
/// ```
/// use strtab::StringTable;
///
/// let mut global = StringTable::new();
/// global.intern("b");
/// let mut thread = StringTable::new();
/// let a = thread.intern("a");
/// let b = thread.intern("b");
/// let remap = global.merge(&thread);
/// assert_eq!(&global[remap[a]], "a");
/// assert_eq!(remap[b].index(), 1);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Remap {
    map: Vec<StringId>,
}

impl Remap {
    pub(crate) fn try_with_capacity(n: usize) -> Result<Remap, crate::Error> {
        let mut map = Vec::new();
        map.try_reserve_exact(n).map_err(|_| {
            crate::Error::new(
                crate::ErrorKind::AllocFailed,
                n.saturating_mul(size_of::<StringId>()),
            )
        })?;
        Ok(Remap { map })
    }

    /// A remap of no ids (a merge that failed before its first).
    pub(crate) fn empty() -> Remap {
        Remap { map: Vec::new() }
    }

    #[inline]
    pub(crate) fn push(&mut self, new: Option<StringId>) {
        self.map.push(new.unwrap_or(DROPPED));
    }

    /// The new id of `old`, or `None` if `old` was not in the old table or
    /// was dropped by compaction.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// let a = table.intern("a");
    /// let remap = strtab::StringTable::new().merge(&table);
    /// assert_eq!(remap.get(a), Some(a));
    /// assert_eq!(remap.get(strtab::StringId::from_u32(9)), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, old: StringId) -> Option<StringId> {
        match self.map.get(old.index()) {
            Some(&new) if new != DROPPED => Some(new),
            _ => None,
        }
    }

    /// Number of old ids the map covers (the old table's `len()`; fewer
    /// for the remap of a failed merge, [`MergeError::remap`](crate::MergeError::remap)).
    ///
    /// # Examples
    ///
    /// ```
    /// let remap = strtab::StringTable::new().merge(&strtab::StringTable::new());
    /// assert_eq!(remap.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the map covers no ids (true only for the remap of a merge
    /// that could not even allocate it; any other covers `""`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!strtab::StringTable::new().merge(&strtab::StringTable::new()).is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// `(old, new)` pairs in old-id order; dropped ids have `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.intern("a");
    /// let remap = strtab::StringTable::new().merge(&table);
    /// assert_eq!(remap.iter().count(), 2);
    /// ```
    pub fn iter(&self) -> RemapIter<'_> {
        RemapIter {
            map: self.map.iter().enumerate(),
        }
    }
}

impl<'a> IntoIterator for &'a Remap {
    type Item = (StringId, Option<StringId>);
    type IntoIter = RemapIter<'a>;

    fn into_iter(self) -> RemapIter<'a> {
        self.iter()
    }
}

/// The `(old, new)` pairs of a [`Remap`], in old-id order:
/// [`Remap::iter`].
#[derive(Clone)]
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct RemapIter<'a> {
    map: core::iter::Enumerate<core::slice::Iter<'a, StringId>>,
}

/// An old id and its new one, if it has one.
#[inline]
fn pair((old, &new): (usize, &StringId)) -> (StringId, Option<StringId>) {
    // `old < len <= 2^32` because the old table numbered it.
    let old = StringId::from_u32(old as u32);
    (old, (new != DROPPED).then_some(new))
}

impl Iterator for RemapIter<'_> {
    type Item = (StringId, Option<StringId>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.map.next().map(pair)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.map.size_hint()
    }
}

impl DoubleEndedIterator for RemapIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.map.next_back().map(pair)
    }
}

impl ExactSizeIterator for RemapIter<'_> {}

impl core::iter::FusedIterator for RemapIter<'_> {}

impl fmt::Debug for RemapIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemapIter")
            .field("remaining", &self.map.len())
            .finish()
    }
}

impl Index<StringId> for Remap {
    type Output = StringId;

    /// # Panics
    ///
    /// Panics if `old` is not covered or was dropped.
    #[inline]
    #[track_caller]
    fn index(&self, old: StringId) -> &StringId {
        match self.map.get(old.index()) {
            Some(new) if *new != DROPPED => new,
            _ => panic!(
                "{old:?} has no new id in this remap (of {})",
                crate::error::Count(self.map.len(), "id")
            ),
        }
    }
}

impl fmt::Debug for Remap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remap")
            .field("len", &self.map.len())
            .finish_non_exhaustive()
    }
}

/// A set of [`StringId`]s as a bitmap: one bit per id up to the largest
/// inserted. Profilers mark the ids a profile references while encoding,
/// then [`compact`](crate::StringTable::compact) the table to those.
///
/// Memory follows the largest id, not the count: inserting id `n` grows
/// the bitmap to `n / 8` bytes (512 MiB for an id near `u32::MAX`), so
/// check ids read from untrusted input against the table's `len()`
/// first. As with `Vec`, an allocation the allocator refuses aborts.
///
/// # Examples
///
/// ```
/// use strtab::{IdSet, StringId};
///
/// let mut set = IdSet::new();
/// set.insert(StringId::from_u32(3));
/// assert!(set.contains(StringId::from_u32(3)));
/// assert!(!set.contains(StringId::from_u32(2)));
/// assert_eq!(set.len(), 1);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IdSet {
    words: Vec<u64>,
    len: usize,
}

impl IdSet {
    /// An empty set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(strtab::IdSet::new().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> IdSet {
        IdSet::default()
    }

    /// An empty set with room for ids below `ids` without reallocating.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = strtab::IdSet::with_capacity(1000);
    /// assert!(set.is_empty());
    /// ```
    #[must_use]
    pub fn with_capacity(ids: usize) -> IdSet {
        IdSet {
            words: Vec::with_capacity(ids.div_ceil(64)),
            len: 0,
        }
    }

    /// Adds `id`; returns whether it was new.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = strtab::IdSet::new();
    /// assert!(set.insert(strtab::StringId::from_u32(70)));
    /// assert!(!set.insert(strtab::StringId::from_u32(70)));
    /// ```
    pub fn insert(&mut self, id: StringId) -> bool {
        let (word, bit) = (id.index() / 64, id.index() % 64);
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let new = self.words[word] & (1 << bit) == 0;
        self.words[word] |= 1 << bit;
        self.len += usize::from(new);
        new
    }

    /// Whether `id` is in the set.
    ///
    /// # Examples
    ///
    /// ```
    /// let set: strtab::IdSet = [strtab::StringId::from_u32(1)].into_iter().collect();
    /// assert!(set.contains(strtab::StringId::from_u32(1)));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains(&self, id: StringId) -> bool {
        self.words
            .get(id.index() / 64)
            .is_some_and(|w| w & (1 << (id.index() % 64)) != 0)
    }

    /// Number of ids in the set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::IdSet::new().len(), 0);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(strtab::IdSet::new().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ids in the set, in ascending order.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{IdSet, StringId};
    ///
    /// let set: IdSet = [9, 2, 200, 2].map(StringId::from_u32).into_iter().collect();
    /// let ids: Vec<u32> = set.iter().map(u32::from).collect();
    /// assert_eq!(ids, [2, 9, 200]);
    /// ```
    pub fn iter(&self) -> IdSetIter<'_> {
        IdSetIter {
            words: self.words.iter(),
            word: 0,
            base: 0,
            next_base: 0,
            left: self.len,
        }
    }

    /// Removes every id, keeping the memory.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set: strtab::IdSet = [strtab::StringId::EMPTY].into_iter().collect();
    /// set.clear();
    /// assert!(set.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.words.clear();
        self.len = 0;
    }
}

impl Extend<StringId> for IdSet {
    fn extend<I: IntoIterator<Item = StringId>>(&mut self, ids: I) {
        for id in ids {
            self.insert(id);
        }
    }
}

impl FromIterator<StringId> for IdSet {
    fn from_iter<I: IntoIterator<Item = StringId>>(ids: I) -> IdSet {
        let mut set = IdSet::new();
        set.extend(ids);
        set
    }
}

impl<'a> IntoIterator for &'a IdSet {
    type Item = StringId;
    type IntoIter = IdSetIter<'a>;

    fn into_iter(self) -> IdSetIter<'a> {
        self.iter()
    }
}

/// The ids of an [`IdSet`], in ascending order: [`IdSet::iter`].
#[derive(Clone)]
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct IdSetIter<'a> {
    /// The words not yet read.
    words: core::slice::Iter<'a, u64>,
    /// The bits of the current word not yet given.
    word: u64,
    /// The id of the current word's bit 0.
    base: usize,
    /// The id of the next word's bit 0.
    next_base: usize,
    /// Ids not yet given.
    left: usize,
}

impl Iterator for IdSetIter<'_> {
    type Item = StringId;

    #[inline]
    fn next(&mut self) -> Option<StringId> {
        while self.word == 0 {
            self.word = *self.words.next()?;
            self.base = self.next_base;
            // Past the last word, unused (and past `usize` on 32-bit
            // targets for a set holding ids near `u32::MAX`).
            self.next_base = self.next_base.wrapping_add(64);
        }
        let bit = self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        self.left -= 1;
        // Every bit set is that of an id inserted, a `u32`.
        Some(StringId::from_u32((self.base + bit) as u32))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for IdSetIter<'_> {}

impl core::iter::FusedIterator for IdSetIter<'_> {}

impl fmt::Debug for IdSetIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdSetIter")
            .field("remaining", &self.left)
            .finish()
    }
}

impl fmt::Debug for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdSet")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
