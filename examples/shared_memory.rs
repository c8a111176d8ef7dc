//! Memory per string of `SharedStringTable` filled by two threads, against
//! `StringTable` filled by one: `cargo run --release --example shared_memory`.
//!
//! The workload is the concurrent benchmark's (`benches/setup`): two
//! skewed profiler streams of 1M interns each over the same 100k unique
//! strings. `StringTable` interns both streams on one thread;
//! `SharedStringTable` (at several shard counts) has one thread per stream.
//! Printed per table: live heap bytes after the build (a counting global
//! allocator; for the shared table, less what is still allocated after
//! the table is dropped, which is process-global lock state, not the
//! table's), `memory_usage()` (which must agree), and the overhead per
//! string: heap bytes beyond the strings' own bytes, divided by the
//! number of strings. The target: the shared table's overhead at
//! most `StringTable`'s plus 16 bytes.
#![allow(unsafe_code)] // the counting global allocator

#[path = "../benches/setup/mod.rs"]
mod setup;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments and
// only updates a counter besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Relaxed);
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
            LIVE.fetch_sub(layout.size(), Relaxed);
            LIVE.fetch_add(new_size, Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let strings = setup::unique_strings(setup::UNIQUE, setup::SEED);
    let string_bytes = setup::total_bytes(&strings);
    let streams = setup::thread_streams(&strings, 2, setup::THREAD_STREAM_LEN);
    let n = strings.len() + 1;
    let per_string = |heap: usize| (heap - string_bytes) as f64 / n as f64;
    // Let std set up its thread bookkeeping before anything is counted.
    std::thread::spawn(|| {}).join().unwrap();

    println!(
        "{} unique strings ({string_bytes} bytes), two streams of {} interns\n",
        strings.len(),
        setup::THREAD_STREAM_LEN
    );
    println!("| table | threads | live heap | memory_usage | overhead per string |");
    println!("|---|---:|---:|---:|---:|");

    let before = LIVE.load(Relaxed);
    let mut single = strtab::StringTable::new();
    for s in streams.iter().flatten() {
        single.intern(s);
    }
    let live = LIVE.load(Relaxed) - before;
    let base = per_string(live);
    println!(
        "| StringTable | 1 | {live} | {} | {base:.1} B |",
        single.memory_usage()
    );
    assert_eq!(single.len(), n);
    drop(single);

    // The default first, then larger counts (each once: the default is
    // 16, 64 or 256 on some machines).
    let default = strtab::SharedStringTable::default_shards();
    let larger = [16, 64, 256].into_iter().filter(|&n| n != default);
    for shards in std::iter::once(default).chain(larger) {
        let before = LIVE.load(Relaxed);
        let table = strtab::SharedStringTable::builder().shards(shards).build();
        std::thread::scope(|scope| {
            let workers: Vec<_> = streams
                .iter()
                .map(|stream| {
                    let table = &table;
                    scope.spawn(move || {
                        for s in stream {
                            table.intern(s);
                        }
                    })
                })
                .collect();
            // Joined one by one: the scope alone returns before the
            // threads' own exit frees their bookkeeping.
            for w in workers {
                w.join().unwrap();
            }
        });
        let live = LIVE.load(Relaxed) - before;
        let usage = table.memory_usage();
        assert_eq!(table.len(), n);
        let resolver = table.into_resolver();
        assert_eq!(resolver.len(), n);
        drop(resolver);
        // What outlives the table is not the table's: the parking table
        // `parking_lot` allocates, once per process and never freed, the
        // first time a thread waits for one of its locks (about 1 KiB),
        // if the shards' locks were ever contended.
        let global = LIVE.load(Relaxed) - before;
        let own = live - global;
        let overhead = per_string(own);
        println!(
            "| SharedStringTable, {shards} shards | 2 | {own} | {usage} | {overhead:.1} B ({:+.1} B) |",
            overhead - base
        );
        assert!(
            global <= 4096,
            "{global} bytes outlived the table: more than parking_lot's parking table"
        );
        assert_eq!(usage, own, "memory_usage counts every byte");
        if global > 0 {
            println!("(and {global} bytes of process-global `parking_lot` state, not the table's)");
        }
    }
}
