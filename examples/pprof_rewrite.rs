//! Re-interns a real pprof profile through a `StringTable`.
//!
//! ```text
//! cargo run --release --example pprof_rewrite -- IN OUT
//! ```
//!
//! Reads IN (gzipped or not), re-interns every string the profile
//! references (duplicates merge, unreferenced strings disappear, indices
//! are renumbered) and writes it to OUT, gzip-compressed. Bad input gives a
//! one-line error and exit status 1; OUT is only ever replaced whole.

pub mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use common::{human_bytes, thousands};

const USAGE: &str = "usage: pprof_rewrite IN OUT   (paths; `./-name` for a name starting with `-`)";

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    // Two paths, neither an option: `-` would name a file, not a stream
    // (OUT is written through a temporary file and renamed; the report
    // goes to standard output). A file whose name starts with `-` is
    // `./-name`.
    let [input, output] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if [input, output]
        .iter()
        .any(|a| a.as_os_str().as_encoded_bytes().starts_with(b"-"))
    {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    match run(input, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("pprof_rewrite: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(input: &Path, output: &Path) -> Result<(), String> {
    let bytes =
        std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let r = common::rewrite(&bytes).map_err(|e| format!("{}: {e}", input.display()))?;
    let written = common::write_gzip_atomically(output, &r.encoded)
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;

    let gz = |b: &[u8]| {
        if common::read::is_gzip(b) {
            "gzip"
        } else {
            "uncompressed"
        }
    };
    println!(
        "{:<8} {:>9} strings, {:>10} of strings, profile {:>10}, file {:>10} ({})",
        "before",
        thousands(r.strings_before as u64),
        human_bytes(r.string_bytes_before as u64),
        human_bytes(r.input_decompressed_bytes as u64),
        human_bytes(bytes.len() as u64),
        gz(&bytes),
    );
    println!(
        "{:<8} {:>9} strings, {:>10} of strings, profile {:>10}, file {:>10} (gzip)",
        "after",
        thousands(r.strings_after as u64),
        human_bytes(r.string_bytes_after as u64),
        human_bytes(r.encoded.len() as u64),
        human_bytes(written),
    );
    println!("wrote {}", output.display());
    Ok(())
}
