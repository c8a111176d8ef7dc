//! Writing a table as a pprof `string_table`, with no copy of the strings.
//!
//! A pprof `Profile` message stores its strings as `repeated string
//! string_table = 6`, index 0 being `""`. [`write_string_table`] appends that
//! field straight from a table's [`Iter`](crate::Iter) to an output buffer:
//! one tag, one length and the bytes per string, no intermediate
//! `Vec<String>` and no allocation besides the buffer's own growth (none
//! if the buffer was reserved with [`string_table_len`]). Protobuf fields
//! may appear in any order, so an encoder can write the other fields with
//! any protobuf library and append these bytes.
//!
//! # Examples
//!
//! ```
//! let mut table = strtab::StringTable::new();
//! table.intern("main");
//! let resolver = table.into_resolver();
//!
//! let mut buf = Vec::with_capacity(strtab::pprof::string_table_len(resolver.iter()));
//! strtab::pprof::write_string_table(resolver.iter(), &mut buf);
//! // Field 6, wire type 2: tag 0x32, then length-prefixed strings.
//! assert_eq!(buf, b"\x32\x00\x32\x04main");
//! ```

/// The field number of `string_table` in pprof's `Profile` message.
pub const STRING_TABLE_FIELD: u32 = 6;

/// The key byte of `string_table`: field 6, wire type 2 (length-delimited).
const STRING_TABLE_KEY: u8 = ((STRING_TABLE_FIELD << 3) | 2) as u8;

/// Bytes of a protobuf varint.
#[inline]
fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least 1.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline]
fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The encoded size of the `string_table` field for `strings`.
///
/// # Examples
///
/// ```
/// let table = strtab::StringTable::new();
/// assert_eq!(strtab::pprof::string_table_len(table.iter()), 2);
/// ```
#[must_use]
pub fn string_table_len<'a>(strings: impl IntoIterator<Item = &'a str>) -> usize {
    strings
        .into_iter()
        .map(|s| 1 + varint_len(s.len() as u64) + s.len())
        .sum()
}

/// Appends `strings` to `out` as pprof's `string_table` field (number 6),
/// one length-delimited entry per string, in iteration order.
///
/// Usually a table's or a resolver's [`Iter`](crate::Iter), passed by
/// value: its first string is `""`, as pprof requires, and a
/// `StringTable`'s strings (and those of a resolver frozen from one) are
/// read block by block. Any iterator of `&str` works too, such as a
/// view that renames or drops strings; the caller then keeps `""` first
/// and the order the profile's indices refer to.
///
/// # Examples
///
/// ```
/// let mut table = strtab::StringTable::new();
/// table.intern("a");
/// let mut out = Vec::new();
/// strtab::pprof::write_string_table(table.iter(), &mut out);
/// assert_eq!(out, b"\x32\x00\x32\x01a");
///
/// // A view: every string but "" in upper case.
/// let mut upper = Vec::new();
/// let owned: Vec<String> = table.iter().map(str::to_uppercase).collect();
/// strtab::pprof::write_string_table(owned.iter().map(String::as_str), &mut upper);
/// assert_eq!(upper, b"\x32\x00\x32\x01A");
/// ```
pub fn write_string_table<'a>(strings: impl IntoIterator<Item = &'a str>, out: &mut Vec<u8>) {
    // Internal iteration: a table's strings are read block by block
    // (`Iter::fold`).
    strings.into_iter().for_each(|s| {
        out.push(STRING_TABLE_KEY);
        put_varint(s.len() as u64, out);
        out.extend_from_slice(s.as_bytes());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths() {
        for (v, n) in [
            (0u64, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
            (u64::MAX, 10),
        ] {
            let mut out = Vec::new();
            put_varint(v, &mut out);
            assert_eq!(out.len(), n, "{v}");
            assert_eq!(varint_len(v), n, "{v}");
        }
    }
}
