//! Memory report: `cargo run --release --example memory`.
//!
//! For every implementation measured by `benches/intern.rs`, on the same
//! generated data (`benches/setup`), builds one table and prints a markdown
//! table of:
//!
//! - live heap bytes after the build (a counting global allocator),
//! - bytes per string beyond the strings' own bytes (live heap, and RSS),
//! - the number of allocation calls (`alloc` + `realloc`) made by the build,
//! - peak heap during the build,
//! - resident memory growth (VmRSS).
//!
//! Each (implementation, workload) pair runs in its own process (the
//! example re-executes itself with arguments), so one build's freed memory
//! and allocator caches do not blur the next one's RSS. Before each build
//! the child calls glibc's `malloc_trim(0)` so that the pages freed while
//! generating the data are not silently reused.
//!
//! Workloads: `stream` (workload 2: 1M skewed interns over 100k unique
//! strings, no hints), `fill` (workload 3: the 100k unique strings in
//! order, no hints) and `fill-hint` (the same with capacity hints). Then,
//! for `strtab` alone: process RSS before building a 1M-string table, with
//! it, and after dropping it.
//!
//! Last, the burst scenario of a continuous profiler
//! (`examples/common/burst.rs`): RSS before a burst of unique strings, at
//! its peak, after `clear()` (with and without `shrink_to`), after glibc's
//! `malloc_trim(0)`, and 20 periods later. `memory-allocators/` runs the
//! same scenario under jemalloc and mimalloc.
//!
//! Run one measurement by hand with
//! `cargo run --release --example memory -- run strtab stream`, or
//! `cargo run --release --example memory -- burst 50000 shrink`.
//!
//! `cargo run --release --example memory -- long` (not part of the
//! report): strtab's heap beyond the strings' own bytes when strings of
//! 4 KiB to 63 KiB (too long for what is left of a 64 KiB block, not long
//! enough for a chunk of their own) come among 20-80-byte ones.
#![allow(unsafe_code)] // the counting global allocator and malloc_trim

#[macro_use]
#[path = "../benches/setup/mod.rs"]
mod setup;

#[path = "common/burst.rs"]
mod burst;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use burst::rss;
use setup::Interner;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments and
// only updates counters besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            CALLS.fetch_add(1, Relaxed);
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            CALLS.fetch_add(1, Relaxed);
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CALLS.fetch_add(1, Relaxed);
            LIVE.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: glibc's malloc_trim only releases free memory.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

const IMPLS: &[&str] = &[
    "strtab",
    "lasso",
    "si-string",
    "si-buffer",
    "blazinterner",
    "indexset",
    "indexset-fx",
    "naive-hashmap",
];
const WORKLOADS: &[&str] = &["stream", "fill", "fill-hint"];

/// Builds one table in this process and prints
/// `live per_string calls peak rss_growth rss_per_string len`.
fn measure<T: Interner>(workload: &str) {
    // Pack the strings into one buffer and free everything else, so that
    // the build cannot reuse holes left by the generator's small
    // allocations (which would hide RSS growth).
    let (blob, lens) = {
        let strings = setup::unique_strings(setup::UNIQUE, setup::SEED);
        (
            strings.concat(),
            strings.iter().map(String::len).collect::<Vec<_>>(),
        )
    };
    let mut uniq = Vec::with_capacity(lens.len());
    let mut at = 0;
    for len in &lens {
        uniq.push(&blob[at..at + len]);
        at += len;
    }
    let bytes = blob.len();
    let stream = if workload == "stream" {
        setup::skewed_stream(&uniq, setup::STREAM_LEN, setup::SEED)
    } else {
        uniq.clone()
    };
    trim();
    let live0 = LIVE.load(Relaxed);
    let calls0 = CALLS.load(Relaxed);
    PEAK.store(live0, Relaxed);
    let rss0 = rss();

    let mut table = if workload == "fill-hint" {
        T::with_capacity(uniq.len() + 1, bytes)
    } else {
        T::new()
    };
    for s in &stream {
        black_box(table.intern(s));
    }

    let rss1 = rss();
    let live = LIVE.load(Relaxed) - live0;
    let calls = CALLS.load(Relaxed) - calls0;
    let peak = PEAK.load(Relaxed) - live0;
    assert_eq!(table.len(), uniq.len() + 1);
    let n = uniq.len() as f64;
    let rss_growth = rss1.saturating_sub(rss0);
    println!(
        "{live} {:.1} {calls} {peak} {rss_growth} {:.1} {}",
        (live as f64 - bytes as f64) / n,
        (rss_growth as f64 - bytes as f64) / n,
        table.len()
    );
    black_box(&table);
}

fn run(imp: &str, workload: &str) {
    use setup::{Blaz, Fold, Fx, IdxSet, Lasso, Naive, SiBuffer, SiString, Strtab};
    match imp {
        "strtab" => measure::<Strtab<Fold>>(workload),
        "lasso" => measure::<Lasso<Fold>>(workload),
        "si-string" => measure::<SiString<Fold>>(workload),
        "si-buffer" => measure::<SiBuffer<Fold>>(workload),
        "blazinterner" => measure::<Blaz<Fold>>(workload),
        "indexset" => measure::<IdxSet<Fold>>(workload),
        "indexset-fx" => measure::<IdxSet<Fx>>(workload),
        "naive-hashmap" => measure::<Naive<Fold>>(workload),
        other => panic!("unknown implementation {other}"),
    }
}

/// strtab's heap beyond the strings' bytes (`memory_usage`) for 200,000
/// strings, one in `every` long (its size minus up to 1 KiB) and the rest
/// 20 to 80 bytes: a markdown table by long-string size.
fn long() {
    let sizes = [
        4 << 10,
        12 << 10,
        17 << 10,
        24 << 10,
        33 << 10,
        40 << 10,
        50 << 10,
        63 << 10,
    ];
    println!("| long strings | 1 in 200 | 1 in 20 |");
    println!("|---|---:|---:|");
    for size in sizes {
        let overhead = |every: usize| {
            let mut table = strtab::StringTable::new();
            let mut bytes = 0;
            for i in 0..200_000usize {
                let n = if i % every == 0 {
                    size - (i * 37) % 1024
                } else {
                    20 + (i * 7919) % 60
                };
                let s = &format!("{i:08}").repeat(n / 8 + 1)[..n];
                bytes += n;
                table.intern(s);
            }
            100.0 * (table.memory_usage() - bytes) as f64 / bytes as f64
        };
        println!(
            "| {} KiB | {:.1}% | {:.1}% |",
            size >> 10,
            overhead(200),
            overhead(20)
        );
    }
}

/// strtab with 1M unique strings: RSS before, with the table, after drop.
fn big() {
    const N: usize = 1_000_000;
    let strings = setup::unique_strings(N, setup::SEED ^ 1);
    let bytes = setup::total_bytes(&strings);
    trim();
    let before = rss();
    let live0 = LIVE.load(Relaxed);
    let calls0 = CALLS.load(Relaxed);
    let mut table = strtab::StringTable::new();
    for s in &strings {
        black_box(table.intern(s));
    }
    let with = rss();
    let live = LIVE.load(Relaxed) - live0;
    let calls = CALLS.load(Relaxed) - calls0;
    let usage = table.memory_usage();
    drop(table);
    let after = rss();
    let live_after = LIVE.load(Relaxed) - live0;
    println!("{N} {bytes} {before} {with} {after} {live} {usage} {live_after} {calls}");
}

fn child(args: &[&str]) -> String {
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(exe).args(args).output().expect("spawn child");
    assert!(
        out.status.success(),
        "child {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn mib(b: usize) -> String {
    format!("{:.2} MiB", b as f64 / (1024.0 * 1024.0))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let usage = || -> ! {
        eprintln!(
            "usage: memory [run IMPL WORKLOAD | big | long | burst N shrink|clear]\n\
             IMPL: {}; WORKLOAD: {}",
            IMPLS.join(", "),
            WORKLOADS.join(", ")
        );
        std::process::exit(2);
    };
    match args.as_slice() {
        ["run", imp, workload] if IMPLS.contains(imp) && WORKLOADS.contains(workload) => {
            return run(imp, workload);
        }
        ["big"] => return big(),
        ["long"] => return long(),
        ["burst", n, mode @ ("shrink" | "clear")] => {
            let Ok(n) = n.parse::<usize>() else { usage() };
            let shrink = *mode == "shrink";
            let b = burst::run(n, shrink, &trim);
            return println!("{}", burst::row("glibc", n, shrink, &b));
        }
        [] => {}
        _ => usage(),
    }

    let strings = setup::unique_strings(setup::UNIQUE, setup::SEED);
    let bytes = setup::total_bytes(&strings);
    println!(
        "{} unique strings, {} bytes of string data ({:.1} bytes/string); stream of {} interns.",
        strings.len(),
        bytes,
        bytes as f64 / strings.len() as f64,
        setup::skewed_stream(&strings, setup::STREAM_LEN, setup::SEED).len()
    );
    drop(strings);
    println!(
        "Hasher: foldhash (hashbrown's DefaultHashBuilder) everywhere, except indexset-fx (FxHasher).\n"
    );
    for workload in WORKLOADS {
        println!("### `{workload}`\n");
        println!(
            "| implementation | live heap | overhead/string (heap) | alloc calls | peak heap | RSS growth | overhead/string (RSS) |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for imp in IMPLS {
            let line = child(&["run", imp, workload]);
            let f: Vec<&str> = line.split_whitespace().collect();
            let n = |i: usize| f[i].parse::<usize>().unwrap();
            println!(
                "| {imp} | {} | {} B | {} | {} | {} | {} B |",
                mib(n(0)),
                f[1],
                n(2),
                mib(n(3)),
                mib(n(4)),
                f[5]
            );
        }
        println!();
    }

    let line = child(&["big"]);
    let f: Vec<usize> = line
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    println!(
        "### strtab, {} unique strings ({} of string data)\n",
        f[0],
        mib(f[1])
    );
    println!(
        "| process RSS before | with the table | after dropping it | table live heap | memory_usage() | live heap after drop | alloc calls |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {} (+{}) | {} | {} | {} | {} B | {} |",
        mib(f[2]),
        mib(f[3]),
        mib(f[3].saturating_sub(f[2])),
        mib(f[4]),
        mib(f[5]),
        mib(f[6]),
        f[7],
        f[8]
    );

    scaling();
    bursts();
}

/// Burst sizes of the burst section: the 50,000 strings, and ten
/// times that.
const BURSTS: [usize; 2] = [50_000, 500_000];

/// The burst scenario under glibc, each run in its own process.
fn bursts() {
    println!(
        "\n### Burst: {} hot strings + {} new labels per period, one burst (glibc)\n",
        burst::HOT,
        burst::LABELS
    );
    println!("{}", burst::HEADER);
    for n in BURSTS {
        for mode in ["clear", "shrink"] {
            println!("{}", child(&["burst", &n.to_string(), mode]));
        }
    }
}

/// Allocation calls to fill each implementation with 10k, 100k and 1M
/// unique strings (no hints): do they grow with log(n) or with n?
fn scaling() {
    use setup::{Blaz, Fold, Fx, IdxSet, Lasso, Naive, SiBuffer, SiString, Strtab};
    const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
    let strings = setup::unique_strings(SIZES[2], setup::SEED ^ 1);
    fn calls<T: Interner>(strings: &[String]) -> usize {
        let calls0 = CALLS.load(Relaxed);
        let mut t = T::new();
        for s in strings {
            black_box(t.intern(s));
        }
        let calls = CALLS.load(Relaxed) - calls0;
        drop(t);
        calls
    }
    println!("\n### Allocation calls to fill n unique strings (no hints)\n");
    println!("| implementation | n = 10k | n = 100k | n = 1M |");
    println!("|---|---:|---:|---:|");
    let row = |name: &str, f: &dyn Fn(&[String]) -> usize| {
        let counts: Vec<String> = SIZES
            .iter()
            .map(|&n| f(&strings[..n]).to_string())
            .collect();
        println!("| {name} | {} |", counts.join(" | "));
    };
    row("strtab", &calls::<Strtab<Fold>>);
    row("lasso", &calls::<Lasso<Fold>>);
    row("si-string", &calls::<SiString<Fold>>);
    row("si-buffer", &calls::<SiBuffer<Fold>>);
    row("blazinterner", &calls::<Blaz<Fold>>);
    row("indexset", &calls::<IdxSet<Fold>>);
    row("indexset-fx", &calls::<IdxSet<Fx>>);
    row("naive-hashmap", &calls::<Naive<Fold>>);
}
