//! The pprof export path shared by `examples/pprof.rs`,
//! `examples/pprof_rewrite.rs`, `tests/pprof.rs` and the fuzz target: the
//! profile model ([`proto`]), reading ([`read`]), a simulated profiler
//! ([`workload`]), and encoding and rewriting (here).
//!
//! Include it with `mod common;` from an example, or with
//! `#[path = "../examples/common/mod.rs"] mod common;` from elsewhere; an
//! includer that uses only part of it puts `#[allow(dead_code)]` on that
//! line.

pub mod proto;
pub mod read;
pub mod workload;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use prost::Message;
use strtab::StringTable;

use proto::Profile;
use read::ReadError;

/// Encodes `profile` as pprof bytes (uncompressed) with `strings` as its
/// `string_table`: prost writes every other field, then
/// [`strtab::pprof::write_string_table`] appends field 6 straight from the
/// table, in id order, with no copy of the strings.
///
/// # Panics
///
/// Panics if `profile.string_table` is not empty: the strings come from
/// `strings` only.
pub fn encode(profile: &Profile, strings: strtab::Iter<'_>) -> Vec<u8> {
    assert!(
        profile.string_table.is_empty(),
        "encode takes the strings from the StringTable, not Profile::string_table"
    );
    let len = profile.encoded_len() + strtab::pprof::string_table_len(strings.clone());
    let mut buf = Vec::with_capacity(len);
    profile
        .encode(&mut buf)
        .expect("a Vec grows as needed, so encoding into it cannot fail");
    strtab::pprof::write_string_table(strings, &mut buf);
    debug_assert_eq!(buf.len(), len);
    buf
}

/// Re-interns every string `profile` references through a new
/// [`StringTable`], in the order of
/// [`try_for_each_string_index_mut`](proto::try_for_each_string_index_mut),
/// and renumbers the indices to the table's ids. Duplicate strings merge
/// and unreferenced ones disappear. Returns the profile, its
/// `string_table` emptied, and the table that now holds its strings: pass
/// both to [`encode`].
///
/// # Errors
///
/// [`ReadError::NoStringTable`] or [`ReadError::StringIndex`] for a
/// profile [`read_profile`](read::read_profile) would have rejected, [`ReadError::Intern`] if
/// the table refuses a string.
pub fn reintern(mut profile: Profile) -> Result<(Profile, StringTable), ReadError> {
    let old = std::mem::take(&mut profile.string_table);
    if old.is_empty() {
        return Err(ReadError::NoStringTable);
    }
    enum Failure {
        Index(i64),
        Intern(strtab::Error),
    }
    let mut table = StringTable::new();
    let len = old.len();
    proto::try_for_each_string_index_mut(&mut profile, |index| {
        let s = usize::try_from(*index)
            .ok()
            .and_then(|i| old.get(i))
            .ok_or(Failure::Index(*index))?;
        *index = i64::from(table.try_intern(s).map_err(Failure::Intern)?.to_u32());
        Ok(())
    })
    .map_err(|(field, failure)| match failure {
        Failure::Index(index) => ReadError::StringIndex { field, index, len },
        Failure::Intern(e) => ReadError::Intern(e),
    })?;
    Ok((profile, table))
}

/// What [`rewrite`] did, with the new profile's bytes.
#[derive(Debug)]
pub struct Rewritten {
    /// The rewritten profile, encoded, uncompressed.
    pub encoded: Vec<u8>,
    /// Bytes of the input after decompression.
    pub input_decompressed_bytes: usize,
    /// Strings in the input's `string_table`.
    pub strings_before: usize,
    /// Total length of the input's strings.
    pub string_bytes_before: usize,
    /// Strings in the output's `string_table`.
    pub strings_after: usize,
    /// Total length of the output's strings.
    pub string_bytes_after: usize,
}

/// Reads a pprof file's bytes (gzipped or not, as [`read_profile`](read::read_profile)),
/// re-interns its strings ([`reintern`]) and encodes it again
/// ([`encode`]), uncompressed. Never panics on bad input.
///
/// # Errors
///
/// Any [`ReadError`], for input that is not a valid pprof profile.
pub fn rewrite(input: &[u8]) -> Result<Rewritten, ReadError> {
    let bytes = read::decompress(input, read::MAX_DECOMPRESSED_BYTES)?;
    let profile = read::decode_profile(&bytes)?;
    let strings_before = profile.string_table.len();
    let string_bytes_before = profile.string_table.iter().map(String::len).sum();
    let (profile, table) = reintern(profile)?;
    Ok(Rewritten {
        encoded: encode(&profile, table.iter()),
        input_decompressed_bytes: bytes.len(),
        strings_before,
        string_bytes_before,
        strings_after: table.len(),
        string_bytes_after: table.iter().map(str::len).sum(),
    })
}

/// A profile with its strings resolved: two profiles describe the same
/// data exactly when their `Resolved` forms are equal, whatever their
/// string tables' order, duplicates or unreferenced strings.
#[derive(Debug, PartialEq)]
pub struct Resolved<'a> {
    /// The profile with every string index zeroed and no string table.
    pub shape: Profile,
    /// The string of each index, in visiting order.
    pub strings: Vec<&'a str>,
}

/// The [`Resolved`] form of a valid profile.
///
/// # Errors
///
/// [`ReadError::StringIndex`] for an index out of range.
pub fn resolve(profile: &Profile) -> Result<Resolved<'_>, ReadError> {
    let table = &profile.string_table;
    let mut strings = Vec::new();
    proto::try_for_each_string_index(profile, |&index| {
        let s = usize::try_from(index).ok().and_then(|i| table.get(i));
        strings.push(s.ok_or(index)?.as_str());
        Ok(())
    })
    .map_err(|(field, index)| ReadError::StringIndex {
        field,
        index,
        len: table.len(),
    })?;
    let mut shape = Profile {
        string_table: Vec::new(),
        ..profile.clone()
    };
    proto::try_for_each_string_index_mut(&mut shape, |index| {
        *index = 0;
        Ok::<(), ()>(())
    })
    .expect("zeroing cannot fail");
    Ok(Resolved { shape, strings })
}

/// Writes `data` gzip-compressed to `path`, streaming through a buffered
/// writer into a temporary file next to `path` that is renamed over it on
/// success and removed on failure, so `path` is never left partial.
/// Returns the compressed size.
///
/// # Errors
///
/// Any I/O error creating, writing, syncing or renaming the file.
pub fn write_gzip_atomically(path: &Path, data: &[u8]) -> io::Result<u64> {
    write_atomically(path, |file| {
        let mut gz = flate2::write::GzEncoder::new(
            BufWriter::with_capacity(256 << 10, file),
            flate2::Compression::default(),
        );
        gz.write_all(data)?;
        gz.finish()?
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        Ok(())
    })
}

/// Creates a temporary file next to `path`, lets `write` fill it, then
/// syncs it and renames it to `path`; on any error the temporary file is
/// removed and `path` is untouched. Returns the file's size.
///
/// # Errors
///
/// The error of `write`, or of creating, syncing or renaming the file.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<u64> {
    let tmp = temp_path(path)?;
    let result = (|| {
        let mut file = File::create_new(&tmp)?;
        write(&mut file)?;
        file.sync_all()?;
        let size = file.metadata()?.len();
        drop(file);
        std::fs::rename(&tmp, path)?;
        Ok(size)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `dir/.name.tmp.PID` for `dir/name`.
fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file path", path.display()),
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp.{}", std::process::id()));
    Ok(path.with_file_name(tmp_name))
}

/// `n` with thousands separators: `1234567` is `"1,234,567"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count for people: `"812 B"`, `"41.3 KiB"`, `"1.27 MiB"`.
pub fn human_bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1 << 20 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{:.2} MiB", n as f64 / f64::from(1 << 20))
    }
}
