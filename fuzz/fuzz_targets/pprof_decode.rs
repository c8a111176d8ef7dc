//! `pprof_decode`: arbitrary bytes into the reading and rewriting path of
//! `examples/pprof_rewrite.rs` (`common::rewrite`: bounded gzip
//! decompression, protobuf decoding, validation of every string index,
//! re-interning through a `StringTable`, encoding).
//!
//! Checked: it returns an error (with a message) or a valid output, never
//! panics; an output reads back through the same path and has a
//! duplicate-free string table starting with `""`, and, for inputs that
//! decode to at most [`COMPARED_BYTES`], describes the same profile as the
//! input (`common::resolve` of both is equal). Memory is bounded by the
//! decompression limit and libFuzzer's `-rss_limit_mb` / `-malloc_limit_mb`
//! (see `.ci/fuzz.sh` for `-max_len`).

#![no_main]

#[allow(dead_code)] // the reading and rewriting half only
#[path = "../../examples/common/mod.rs"]
mod common;

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;

/// Decoded input bytes up to which the input and the output are compared
/// profile to profile. The comparison holds four decoded copies at once
/// (both profiles and their resolved forms); a 16 KiB gzip bomb of empty
/// samples (8.4M of them) so took 2.35 GB, past `-rss_limit_mb`, where one
/// copy fits.
const COMPARED_BYTES: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let rewritten = match common::rewrite(data) {
        Ok(rewritten) => rewritten,
        Err(e) => {
            // Every error has a message.
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let output = common::read::read_profile(&rewritten.encoded)
        .expect("the rewritten profile does not read back");

    assert_eq!(output.string_table.first().map(String::as_str), Some(""));
    let unique: HashSet<&str> = output.string_table.iter().map(String::as_str).collect();
    assert_eq!(
        unique.len(),
        output.string_table.len(),
        "duplicate strings after re-interning"
    );
    assert_eq!(rewritten.strings_after, output.string_table.len());
    assert!(rewritten.strings_after <= rewritten.strings_before);
    assert_eq!(
        rewritten.string_bytes_after,
        output.string_table.iter().map(String::len).sum::<usize>()
    );
    if rewritten.input_decompressed_bytes > COMPARED_BYTES {
        return;
    }

    // The input was a valid profile: the same reader accepts it.
    let original =
        common::read::read_profile(data).expect("rewrite accepted what read_profile rejects");
    assert_eq!(rewritten.strings_before, original.string_table.len());
    let before = common::resolve(&original).expect("a valid profile resolves");
    let after = common::resolve(&output).expect("a rewritten profile resolves");
    assert_eq!(before, after, "rewriting changed the profile");
});
