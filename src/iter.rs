//! [`Iter`]: strings in id order.

use core::iter::FusedIterator;

use crate::shared::Frozen;
use crate::store::Store;

/// The strings a table or resolver holds, in id order: a [`Store`] (one
/// arena and its index) or a frozen shared table (one arena per shard
/// and the lock-free index).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Strings<'a> {
    Table(&'a Store),
    Shared(&'a Frozen),
}

impl<'a> Strings<'a> {
    /// Number of strings, `""` included.
    #[inline]
    pub(crate) fn len(self) -> usize {
        match self {
            Strings::Table(store) => store.len(),
            Strings::Shared(frozen) => frozen.len(),
        }
    }

    /// The string of index `i`; panics if `i >= len()`.
    #[inline]
    pub(crate) fn str_at(self, i: usize) -> &'a str {
        match self {
            Strings::Table(store) => store.str_at(i),
            Strings::Shared(frozen) => frozen.str_at(i),
        }
    }
}

/// The strings of a table in id order, `""` first. Made by
/// [`StringTable::iter`](crate::StringTable::iter) and
/// [`Resolver::iter`](crate::Resolver::iter).
///
/// For a [`StringTable`](crate::StringTable)'s strings, internal
/// iteration (`for_each`, `fold`, `sum`, and so
/// [`pprof::write_string_table`](crate::pprof::write_string_table)) reads
/// the arena front to back, block by block, each block's base looked up
/// once and each string's location and length taken from the id index:
/// the fastest way to visit every string (an encoder's pass). `next` (a
/// `for` loop, `collect`) looks each id's block up as well.
///
/// # Examples
///
/// ```
/// let mut table = strtab::StringTable::new();
/// table.intern("a");
/// let mut iter = table.iter();
/// assert_eq!(iter.len(), 2);
/// assert_eq!(iter.next(), Some(""));
/// assert_eq!(iter.next_back(), Some("a"));
/// assert_eq!(iter.next(), None);
/// ```
#[derive(Clone)]
#[must_use = "iterators are lazy and do nothing unless consumed"]
pub struct Iter<'a> {
    store: Strings<'a>,
    front: usize,
    back: usize,
}

impl<'a> Iter<'a> {
    pub(crate) fn new(store: &'a Store) -> Iter<'a> {
        Iter::of(Strings::Table(store))
    }

    pub(crate) fn of(store: Strings<'a>) -> Iter<'a> {
        Iter {
            store,
            front: 0,
            back: store.len(),
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.front == self.back {
            return None;
        }
        let s = self.store.str_at(self.front);
        self.front += 1;
        Some(s)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }

    #[inline]
    fn count(self) -> usize {
        self.back - self.front
    }

    #[inline]
    fn last(mut self) -> Option<&'a str> {
        self.next_back()
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'a str> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }

    /// A table's strings are read block by block (see `Store::fold`):
    /// `for_each`, `sum` and the pprof encoder use this (`collect` into a
    /// `Vec` and `for` loops call `next`, which looks up each id's block
    /// too).
    #[inline]
    fn fold<B, F>(self, init: B, mut f: F) -> B
    where
        F: FnMut(B, &'a str) -> B,
    {
        match self.store {
            Strings::Table(store) => store.fold(self.front, self.back, init, f),
            Strings::Shared(frozen) => {
                (self.front..self.back).fold(init, |acc, i| f(acc, frozen.str_at(i)))
            }
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.store.str_at(self.back))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl FusedIterator for Iter<'_> {}

impl core::fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Iter")
            .field("remaining", &(self.back - self.front))
            .finish()
    }
}
