//! A batch's input as a profiler's sample passes it, shared by the
//! `table_ops` and `shared_ops` targets (included with `#[path]`).

use strtab::{BatchError, StringId};

/// `made`'s strings as slices of `buffer` (their concatenation): equal
/// strings by the same slice, and each string of two or more characters
/// followed by its first character, a slice at the same address with
/// another length (the batch's recent-slice cache must tell them apart).
pub fn sample_slices<'a>(made: &[String], buffer: &'a str) -> Vec<&'a str> {
    debug_assert_eq!(buffer.len(), made.iter().map(String::len).sum::<usize>());
    let mut at = 0;
    let mut slices: Vec<&str> = Vec::new();
    for m in made {
        let slice = &buffer[at..at + m.len()];
        at += m.len();
        let first = made.iter().position(|o| o == m).unwrap();
        slices.push(if first < slices.len() {
            slices[first]
        } else {
            slice
        });
    }
    let mut strings: Vec<&str> = Vec::new();
    for s in slices {
        strings.push(s);
        if let Some((i, _)) = s.char_indices().nth(1) {
            strings.push(&s[..i]);
        }
    }
    strings
}

/// Interns `made` as [`sample_slices`] with `try_batch` (a table's
/// `try_intern_batch`), then hands each string it interned and its id to
/// `accepted`, in order, and the string it failed on with the error to
/// `refused`.
pub fn intern_sample(
    made: &[String],
    try_batch: impl FnOnce(&[&str], &mut [StringId]) -> Result<(), BatchError>,
    mut accepted: impl FnMut(&str, StringId),
    refused: impl FnOnce(&str, &BatchError),
) {
    let buffer: String = made.concat();
    let strings = sample_slices(made, &buffer);
    let mut ids = vec![StringId::EMPTY; strings.len()];
    let result = try_batch(&strings, &mut ids);
    let done = match &result {
        Ok(()) => strings.len(),
        Err(e) => e.interned(),
    };
    for (&s, &id) in strings.iter().zip(&ids).take(done) {
        accepted(s, id);
    }
    if let Err(e) = result {
        refused(strings[done], &e);
    }
}
