//! Reading a pprof file: gzip detection, bounded decompression, decoding
//! and validation of every string.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use prost::Message;

use super::proto::{Profile, try_for_each_string_index};

/// The most bytes [`read_profile`] decompresses: 256 MiB.
///
/// Decoding can still take several times this much memory (a two-byte
/// empty sample becomes a 72-byte `Sample`), so callers facing hostile
/// input at scale should use [`read_profile_with_limit`] with a smaller
/// cap.
pub const MAX_DECOMPRESSED_BYTES: u64 = 256 << 20;

/// Why a profile could not be read (or re-interned).
#[derive(Debug)]
pub enum ReadError {
    /// No bytes at all (before or after decompression).
    Empty,
    /// The gzip stream is corrupt or truncated.
    Gzip(std::io::Error),
    /// The decompressed profile is larger than the limit.
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The bytes are not a protobuf `Profile` (truncated, garbage, or a
    /// string that is not UTF-8).
    Decode(prost::DecodeError),
    /// The profile has no `string_table`.
    NoStringTable,
    /// `string_table[0]` is not `""`.
    FirstStringNotEmpty(String),
    /// A field refers past the end of `string_table`.
    StringIndex {
        /// The field's path, e.g. `function[12].name`.
        field: String,
        /// The index it holds.
        index: i64,
        /// The number of strings in the table.
        len: usize,
    },
    /// The string table refused a string (a limit or allocation failure).
    Intern(strtab::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Empty => f.write_str("the profile is empty"),
            ReadError::Gzip(e) => write!(f, "corrupt or truncated gzip data: {e}"),
            ReadError::TooLarge { limit } => write!(
                f,
                "the decompressed profile is larger than the {} MiB limit",
                limit >> 20
            ),
            ReadError::Decode(e) => write!(f, "not a valid pprof profile: {e}"),
            ReadError::NoStringTable => {
                f.write_str("not a valid pprof profile: it has no string_table")
            }
            ReadError::FirstStringNotEmpty(s) => {
                let shown: String = s.chars().take(40).collect();
                let more = if shown.len() < s.len() { "..." } else { "" };
                write!(
                    f,
                    "not a valid pprof profile: string_table[0] is {shown:?}{more}, it must be \"\""
                )
            }
            ReadError::StringIndex { field, index, len } => write!(
                f,
                "not a valid pprof profile: {field} is string index {index}, \
                 but string_table has only {len} strings"
            ),
            ReadError::Intern(e) => write!(f, "cannot intern the profile's strings: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Whether `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The uncompressed profile bytes: `bytes` itself, or its gzip
/// decompression (all members) if it starts with the gzip magic, stopping
/// with [`ReadError::TooLarge`] past `limit` bytes.
///
/// # Errors
///
/// [`ReadError::Gzip`] for a corrupt or truncated stream,
/// [`ReadError::TooLarge`] past `limit`.
pub fn decompress(bytes: &[u8], limit: u64) -> Result<Cow<'_, [u8]>, ReadError> {
    if !is_gzip(bytes) {
        return Ok(Cow::Borrowed(bytes));
    }
    // Profiles compress about 4-10x; the cap keeps a hostile size guess
    // from reserving much.
    let guess = bytes.len().saturating_mul(4).min(64 << 20);
    let mut out = Vec::with_capacity(guess);
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(ReadError::Gzip)?;
    if out.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(Cow::Owned(out))
}

/// Checks that `string_table[0]` is `""` and that every string index in
/// `profile` is in range.
///
/// # Errors
///
/// [`ReadError::NoStringTable`], [`ReadError::FirstStringNotEmpty`] or
/// [`ReadError::StringIndex`].
pub fn validate(profile: &Profile) -> Result<(), ReadError> {
    match profile.string_table.first() {
        None => return Err(ReadError::NoStringTable),
        Some(s) if !s.is_empty() => return Err(ReadError::FirstStringNotEmpty(s.clone())),
        Some(_) => {}
    }
    let len = profile.string_table.len();
    try_for_each_string_index(profile, |&index| {
        if usize::try_from(index).is_ok_and(|i| i < len) {
            Ok(())
        } else {
            Err(index)
        }
    })
    .map_err(|(field, index)| ReadError::StringIndex { field, index, len })
}

/// Decodes an uncompressed profile and [`validate`]s it.
///
/// # Errors
///
/// [`ReadError::Empty`] for no bytes, [`ReadError::Decode`] for bytes that
/// are not a `Profile` or hold a non-UTF-8 string, else as [`validate`].
pub fn decode_profile(bytes: &[u8]) -> Result<Profile, ReadError> {
    if bytes.is_empty() {
        return Err(ReadError::Empty);
    }
    let profile = Profile::decode(bytes).map_err(ReadError::Decode)?;
    validate(&profile)?;
    Ok(profile)
}

/// Reads a pprof file's bytes, gzipped or not: [`decompress`] (at most
/// [`MAX_DECOMPRESSED_BYTES`]), then [`decode_profile`]. Never panics.
///
/// # Errors
///
/// Any [`ReadError`] but [`ReadError::Intern`].
pub fn read_profile(bytes: &[u8]) -> Result<Profile, ReadError> {
    read_profile_with_limit(bytes, MAX_DECOMPRESSED_BYTES)
}

/// [`read_profile`] with another cap on the decompressed size.
///
/// # Errors
///
/// As [`read_profile`].
pub fn read_profile_with_limit(bytes: &[u8], limit: u64) -> Result<Profile, ReadError> {
    decode_profile(&decompress(bytes, limit)?)
}
