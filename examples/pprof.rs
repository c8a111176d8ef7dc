//! Simulates a profiler and writes a gzip-compressed pprof profile.
//!
//! ```text
//! cargo run --release --example pprof [-- OUT]
//! ```
//!
//! A generated native service (a few thousand functions, Rust over a C++
//! storage engine and libc) is sampled 100,000 times over 16 threads. Every
//! function name, file name and label goes through
//! [`strtab::StringTable::intern`] as the profiler sees it; the profile is
//! encoded with prost, its `string_table` appended straight from the table
//! in id order, and gzipped to OUT (default `profile.pb.gz`).

#[allow(dead_code)] // uses the writing half only
pub mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use common::workload::{self, Config};
use common::{human_bytes, thousands};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let out = PathBuf::from(args.next().unwrap_or_else(|| "profile.pb.gz".into()));
    if args.next().is_some() {
        eprintln!("usage: pprof [OUT]   (default OUT: profile.pb.gz)");
        return ExitCode::from(2);
    }

    let start = Instant::now();
    let config = Config::FULL;
    let sim = workload::simulate(&config);
    let simulated = start.elapsed();

    let hits = sim.intern_hits();
    let calls = sim.intern_calls;
    let strings = sim.table.len();
    let table_memory = sim.table.memory_usage();
    let profile = sim.profile;
    // Export: freeze the table (dropping its hash table) and encode its
    // strings in id order.
    let resolver = sim.table.into_resolver();
    let string_bytes: usize = resolver.iter().map(str::len).sum();
    let t = Instant::now();
    let encoded = common::encode(&profile, resolver.iter());
    let encoding = t.elapsed();
    drop(resolver);

    let t = Instant::now();
    let written = match common::write_gzip_atomically(&out, &encoded) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("pprof: error: cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    };
    let writing = t.elapsed();

    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "simulated acme-checkout: {} samples over 16 threads, {} functions in the program",
        thousands(sim.samples_taken as u64),
        thousands(sim.program_functions as u64),
    );
    println!(
        "  pprof samples   {:>9}  (identical stacks and labels merged)",
        thousands(profile.sample.len() as u64)
    );
    println!(
        "  locations       {:>9}",
        thousands(profile.location.len() as u64)
    );
    println!(
        "  functions       {:>9}",
        thousands(profile.function.len() as u64)
    );
    println!(
        "  unique strings  {:>9}  ({} of text)",
        thousands(strings as u64),
        human_bytes(string_bytes as u64)
    );
    println!(
        "  intern calls    {:>9}  ({:.2}% hits)",
        thousands(calls),
        hits as f64 * 100.0 / calls as f64
    );
    println!("  table memory    {:>9}", human_bytes(table_memory as u64));
    println!(
        "  output          {:>9}  gzip ({} encoded) -> {}",
        human_bytes(written),
        human_bytes(encoded.len() as u64),
        out.display()
    );
    println!(
        "  time            {:>6.0} ms  (simulate {:.0} ms, encode {:.1} ms, gzip+write {:.0} ms)",
        ms(start.elapsed()),
        ms(simulated),
        ms(encoding),
        ms(writing)
    );
    println!("look at it: go tool pprof -top {}", out.display());
    ExitCode::SUCCESS
}
