//! Simulates a profiler and writes a gzip-compressed pprof profile.
//!
//! ```text
//! cargo run --release --example pprof [-- [--threads N] OUT]
//! ```
//!
//! A generated native service (a few thousand functions, Rust over a C++
//! storage engine and libc) is sampled 100,000 times over 16 threads. Every
//! function name, file name and label goes through
//! [`strtab::StringTable::intern`] as the profiler sees it; the profile is
//! encoded with prost, its `string_table` appended straight from the table
//! in id order, and gzipped to OUT (default `profile.pb.gz`).
//!
//! With `--threads N`, N profiler threads sample at once (each its share
//! of the stacks) and intern into one [`strtab::SharedStringTable`]; the
//! profile is written from its `into_resolver`, the same way.

#[allow(dead_code)] // uses the writing half only
pub mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use common::proto::Profile;
use common::workload::{self, Config};
use common::{human_bytes, thousands};

/// What the simulation left for export.
struct Run {
    profile: Profile,
    resolver: strtab::Resolver,
    calls: u64,
    samples: usize,
    functions: usize,
    samplers: usize,
    table: &'static str,
}

/// Freezes a simulation's table (dropping its hash tables, ready to encode
/// its strings in id order); returns the run with the table's memory,
/// string count and intern hits from before.
fn export<T: workload::Table>(
    sim: workload::Simulation<T>,
    samplers: usize,
    table: &'static str,
) -> (Run, usize, usize, u64) {
    let memory = sim.table.memory_usage();
    let (strings, hits) = (sim.table.strings(), sim.intern_hits());
    let run = Run {
        profile: sim.profile,
        resolver: sim.table.into_resolver(),
        calls: sim.intern_calls,
        samples: sim.samples_taken,
        functions: sim.program_functions,
        samplers,
        table,
    };
    (run, memory, strings, hits)
}

const USAGE: &str = "usage: pprof [--threads N] [OUT]   (default OUT: profile.pb.gz; \
                     not `-`: the report goes to standard output)";

fn main() -> ExitCode {
    let mut out = None;
    let mut threads = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--threads" {
            match args.next().and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n > 0 => threads = Some(n),
                _ => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            }
        } else if out.is_none() && !arg.starts_with('-') {
            out = Some(PathBuf::from(arg));
        } else {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    }
    let out = out.unwrap_or_else(|| PathBuf::from("profile.pb.gz"));

    let start = Instant::now();
    let config = Config::FULL;
    // Either way: the profile, the frozen table, and the intern counts.
    let (sim, table_memory, strings, hits) = match threads {
        None => export(workload::simulate(&config), 1, "StringTable"),
        Some(n) => export(
            workload::simulate_shared(&config, n),
            n,
            "SharedStringTable",
        ),
    };
    let simulated = start.elapsed();
    let Run {
        profile,
        resolver,
        calls,
        ..
    } = &sim;
    let string_bytes: usize = resolver.iter().map(str::len).sum();
    let t = Instant::now();
    let encoded = common::encode(profile, resolver.iter());
    let encoding = t.elapsed();

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
        thousands(sim.samples as u64),
        thousands(sim.functions as u64),
    );
    println!(
        "  profiler        {:>9}  sampler thread(s) interning into one {}",
        sim.samplers, sim.table
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
        thousands(*calls),
        hits as f64 * 100.0 / *calls as f64
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
