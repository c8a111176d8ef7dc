//! [`StringId`]: the dense handle a table gives out for each string.

use core::fmt;

/// The id of an interned string: a dense index into the table's strings.
///
/// Ids are handed out in insertion order starting at 0, so they are exactly
/// the indices a pprof encoder writes into a profile's `string_table`.
/// [`StringId::EMPTY`] (0) is always the empty string, as pprof requires.
///
/// An id is only meaningful for the table that returned it (or the
/// [`Resolver`](crate::Resolver) made from that table).
///
/// # Examples
///
/// ```
/// use strtab::{StringId, StringTable};
///
/// let mut table = StringTable::new();
/// let id = table.intern("main");
/// assert_eq!(id.to_u32(), 1);
/// assert_eq!(id.index(), 1);
/// assert_eq!(table.intern(""), StringId::EMPTY);
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StringId(u32);

impl StringId {
    /// The id of the empty string, present in every table.
    pub const EMPTY: StringId = StringId(0);

    /// Makes an id from its raw value, for example an index read back from
    /// an encoded profile. The id is only valid for a table that has at
    /// least `raw + 1` strings; resolving it elsewhere returns `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::StringId;
    ///
    /// assert_eq!(StringId::from_u32(0), StringId::EMPTY);
    /// ```
    #[inline]
    #[must_use]
    pub const fn from_u32(raw: u32) -> StringId {
        StringId(raw)
    }

    /// The raw value of the id.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::StringId::EMPTY.to_u32(), 0);
    /// ```
    #[inline]
    #[must_use]
    pub const fn to_u32(self) -> u32 {
        self.0
    }

    /// The id as an index (into the table's strings or a pprof
    /// `string_table`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(strtab::StringId::from_u32(7).index(), 7);
    /// ```
    #[inline]
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for StringId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StringId({})", self.0)
    }
}

/// The raw value, as an encoded profile writes it.
///
/// # Examples
///
/// ```
/// assert_eq!(strtab::StringId::from_u32(7).to_string(), "7");
/// ```
impl fmt::Display for StringId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// [`StringId::from_u32`]: any raw value makes an id; a table that never
/// gave it out resolves it to `None`.
///
/// # Examples
///
/// ```
/// use strtab::StringId;
///
/// assert_eq!(StringId::from(0), StringId::EMPTY);
/// assert_eq!(strtab::StringTable::new().resolve(StringId::from(5)), None);
/// ```
impl From<u32> for StringId {
    #[inline]
    fn from(raw: u32) -> StringId {
        StringId(raw)
    }
}

impl From<StringId> for u32 {
    #[inline]
    fn from(id: StringId) -> u32 {
        id.0
    }
}

impl From<StringId> for usize {
    #[inline]
    fn from(id: StringId) -> usize {
        id.index()
    }
}
