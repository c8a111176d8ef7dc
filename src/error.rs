//! [`Error`] and [`ErrorKind`]: why an insertion failed.

use core::fmt;

/// What kind of failure an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The table already holds as many strings as it may: either
    /// [`Limits::max_strings`](crate::Limits::max_strings) or the `u32::MAX` ids a
    /// `u32` can number. Also a builder's capacity hint of `u32::MAX`
    /// strings or more, which no table can number.
    IdsExhausted,
    /// Storing the string would take the table's heap footprint past
    /// [`Limits::max_bytes`](crate::Limits::max_bytes), at any moment of
    /// the insertion: a growing hash table's old and new allocations are
    /// both held while its strings are moved (see [`Limits`](crate::Limits)).
    MemoryLimit,
    /// The global allocator refused an allocation.
    AllocFailed,
    /// The string does not fit the arena's address space: its 32,767
    /// blocks of 64 KiB hold about 2 GiB of small strings, and each string
    /// over 64 KiB takes a block of its own (see
    /// [`MAX_ARENA_BYTES`](crate::MAX_ARENA_BYTES)); a single string of 4
    /// GiB or more never fits. Also a builder's byte hint beyond that.
    CapacityOverflow,
}

/// The error returned when a string cannot be added to a table.
///
/// After an error from `try_intern` (of either table) the table holds
/// exactly the strings and ids it held before: every id it gave out still
/// resolves to its string, and the failed string was not added. The
/// operations over many strings (`try_intern_batch`, `try_merge`) stop at
/// the first string that fails and keep those added before it; their
/// errors ([`BatchError`](crate::BatchError),
/// [`MergeError`](crate::MergeError)) wrap this one and say what was
/// added: how far the batch got, the merge's remap so far. (Capacity
/// reserved before the failure, such as a grown id index, may remain,
/// always within the table's limits.)
///
/// # Examples
///
/// ```
/// use strtab::{ErrorKind, Limits, StringTable};
///
/// let mut table = StringTable::with_limits(Limits::new().max_strings(2));
/// table.try_intern("a")?;
/// let err = table.try_intern("b").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::IdsExhausted);
/// assert_eq!(err.to_string(), "string table is full: it holds 2 strings, the most its limits allow");
/// # Ok::<(), strtab::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    /// Bytes requested, or the string count for `IdsExhausted`.
    requested: usize,
    /// The limit in force, where there is one; for `IdsExhausted`, set
    /// only for a capacity hint past the id space; for `CapacityOverflow`,
    /// set only for a capacity hint, to the number of arenas.
    limit: usize,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, requested: usize) -> Error {
        Error {
            kind,
            requested,
            limit: 0,
        }
    }

    pub(crate) fn with_limit(mut self, limit: usize) -> Error {
        self.limit = limit;
        self
    }

    /// This error, with the byte limit `max_bytes` named if it is a
    /// [`MemoryLimit`](ErrorKind::MemoryLimit) (the arena, which raises
    /// it, knows only its budget).
    pub(crate) fn naming_limit(self, max_bytes: usize) -> Error {
        match self.kind {
            ErrorKind::MemoryLimit => self.with_limit(max_bytes),
            _ => self,
        }
    }

    /// This error, raised while a builder pre-sized a table of `arenas`
    /// arenas (a shared table's shards) for the capacity hint `hint`, with
    /// a [`CapacityOverflow`] naming the hint's bytes rather than the
    /// figure the arena computed from them (a shard's share, the records'
    /// prefixes added), and the number of arenas as its limit (which
    /// picks the message).
    ///
    /// [`CapacityOverflow`]: ErrorKind::CapacityOverflow
    pub(crate) fn naming_hint(self, hint: Option<(usize, usize)>, arenas: usize) -> Error {
        match (self.kind, hint) {
            (ErrorKind::CapacityOverflow, Some((_, bytes))) => {
                Error::new(ErrorKind::CapacityOverflow, bytes).with_limit(arenas.max(1))
            }
            _ => self,
        }
    }

    /// What went wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use strtab::{ErrorKind, Limits, StringTable};
    ///
    /// let mut table = StringTable::with_limits(Limits::new().max_bytes(4096));
    /// let err = table.try_intern(&"x".repeat(10_000)).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::MemoryLimit);
    /// ```
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::IdsExhausted if self.limit != 0 => write!(
                f,
                "string table capacity hint of {} strings is more than the {} a table can number besides \"\"",
                self.requested, self.limit
            ),
            ErrorKind::IdsExhausted => write!(
                f,
                "string table is full: it holds {}, the most its limits allow",
                Count(self.requested, "string")
            ),
            ErrorKind::MemoryLimit => write!(
                f,
                "string table memory limit reached: allocating {} more bytes would exceed the limit of {} bytes",
                self.requested, self.limit
            ),
            ErrorKind::AllocFailed => {
                write!(
                    f,
                    "string table could not allocate {} bytes",
                    self.requested
                )
            }
            ErrorKind::CapacityOverflow if self.limit == 1 => write!(
                f,
                "string table capacity hint of {} bytes is more than its arena can hold (under 2 GiB)",
                self.requested
            ),
            ErrorKind::CapacityOverflow if self.limit != 0 => write!(
                f,
                "string table capacity hint of {} bytes is more than its {} shard arenas can hold (under 2 GiB each, with a margin for an uneven split)",
                self.requested, self.limit
            ),
            ErrorKind::CapacityOverflow => write!(
                f,
                "string table cannot take {} more bytes: a string must be under 4 GiB, and a table's strings must fit its arena's 2 GiB (in a shared table, each shard's arena)",
                self.requested
            ),
        }
    }
}

impl std::error::Error for Error {}

/// `n` and a noun, plural unless `n` is 1 ("1 string", "2 strings"), for
/// the messages of [`Error`] and [`BatchError`](crate::BatchError).
pub(crate) struct Count(pub(crate) usize, pub(crate) &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.0 == 1 { "" } else { "s" };
        write!(f, "{} {}{s}", self.0, self.1)
    }
}
