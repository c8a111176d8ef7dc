//! [`Resolver`]: a frozen table that only resolves ids.

use core::fmt;
use core::ops::Index;

use crate::id::StringId;
use crate::iter::{Iter, Strings};
use crate::shared::Frozen;
use crate::store::Store;

/// A frozen [`StringTable`](crate::StringTable) or
/// [`SharedStringTable`](crate::SharedStringTable), made by their
/// `into_resolver`: it resolves ids and iterates in id order, but cannot
/// look up or add strings. It holds no hash table, so it is the lightest
/// form to keep while encoding a profile.
///
/// # Examples
///
/// ```
/// let mut table = strtab::StringTable::new();
/// let id = table.intern("main");
/// let resolver = table.into_resolver();
/// assert_eq!(resolver.resolve(id), Some("main"));
/// assert_eq!(resolver.len(), 2);
/// ```
pub struct Resolver {
    repr: Repr,
}

/// What a resolver was frozen from. A `StringTable`'s resolver keeps its
/// [`Store`] as it was; a shared table's keeps its shard arenas and its
/// lock-free id index ([`Frozen`]): no string is copied either way.
enum Repr {
    Table(Store),
    /// Boxed: the index's counters sit on cache lines of their own.
    Shared(Box<Frozen>),
}

impl Resolver {
    pub(crate) fn new(store: Store) -> Resolver {
        Resolver {
            repr: Repr::Table(store),
        }
    }

    pub(crate) fn from_shared(frozen: Frozen) -> Resolver {
        Resolver {
            repr: Repr::Shared(Box::new(frozen)),
        }
    }

    #[inline]
    pub(crate) fn strings(&self) -> Strings<'_> {
        match &self.repr {
            Repr::Table(store) => Strings::Table(store),
            Repr::Shared(frozen) => Strings::Shared(frozen),
        }
    }

    /// The string of `id`, or `None` if the table never gave out `id`.
    ///
    /// # Examples
    ///
    /// ```
    /// let resolver = strtab::StringTable::new().into_resolver();
    /// assert_eq!(resolver.resolve(strtab::StringId::EMPTY), Some(""));
    /// ```
    #[inline]
    #[must_use]
    pub fn resolve(&self, id: StringId) -> Option<&str> {
        match &self.repr {
            Repr::Table(store) => store.resolve(id),
            Repr::Shared(frozen) => frozen.resolve(id),
        }
    }

    /// Number of strings, `""` included.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::StringTable::new().into_resolver().len(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.strings().len()
    }

    /// Whether the resolver holds only `""`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(strtab::StringTable::new().into_resolver().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// The strings in id order, `""` first.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut table = strtab::StringTable::new();
    /// table.intern("a");
    /// assert_eq!(table.into_resolver().iter().collect::<Vec<_>>(), ["", "a"]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter::of(self.strings())
    }

    /// Heap bytes held: the arena (or a shared table's shard arenas) and
    /// the id index.
    ///
    /// # Examples
    ///
    /// ```
    /// let table = strtab::StringTable::new();
    /// let with_hash_table = table.memory_usage();
    /// assert!(table.into_resolver().memory_usage() < with_hash_table);
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        match &self.repr {
            Repr::Table(store) => store.heap_bytes(),
            Repr::Shared(frozen) => frozen.heap_bytes(),
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn unknown_id(id: StringId, len: usize) -> ! {
    panic!(
        "{id:?} was not given out by this table, which holds {}",
        crate::error::Count(len, "string")
    )
}

impl Index<StringId> for Resolver {
    type Output = str;

    /// # Panics
    ///
    /// Panics if the table never gave out `id`.
    #[inline]
    #[track_caller]
    fn index(&self, id: StringId) -> &str {
        match self.resolve(id) {
            Some(s) => s,
            None => unknown_id(id, self.len()),
        }
    }
}

impl<'a> IntoIterator for &'a Resolver {
    type Item = &'a str;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl fmt::Debug for Resolver {
    /// A summary, never the strings themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("len", &self.len())
            .field("memory_usage", &self.memory_usage())
            .finish_non_exhaustive()
    }
}
