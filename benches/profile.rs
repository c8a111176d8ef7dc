//! A single-shot driver for instruction counts: runs one workload once for
//! one implementation, for `valgrind --tool=callgrind` (criterion's
//! repetitions would only add noise under valgrind).
//! `benches/callgrind.py` runs the whole matrix and prints Ir per
//! operation; by hand:
//!
//! ```text
//! cargo bench --bench profile --no-run      # prints the binary's path
//! valgrind --tool=callgrind --toggle-collect='*workload*' \
//!     target/release/deps/profile-HASH stream strtab
//! ```
//!
//! Only the `#[inline(never)] workload_*` functions are measured (with
//! their callees): the data, and for the read-only workloads the table, are
//! built before. For the workloads that start from an empty table
//! (`stream`, `fill`, `fill-hint`, `wordpress`, `replay-*`) the measured
//! function creates the table too and returns it, so its drop is not
//! measured (as in the criterion benchmark). Nothing else in this binary
//! has `workload` in its name (see `setup::pprof`).
//!
//! Dimensions: workload x implementation (the labels of `intern.rs`, all
//! with foldhash). Workloads, with what one operation is:
//! - `stream`: 1M skewed interns into a fresh table (an intern);
//! - `hash_only`: hash the stream's strings, no table, as the peers do
//!   (`BuildHasher::hash_one` of a `str`: its bytes and a `0xFF`
//!   terminator); `hash_bytes`: the same as strtab does (the bytes alone)
//!   (a hash; the implementation argument is ignored);
//! - `fill`, `fill-hint`: the 100k unique strings into a fresh table,
//!   without and with capacity hints (an intern);
//! - `get-hit`, `get-miss`: 100k lookups, shuffled hits or absent strings,
//!   in a table holding the 100k strings (a `get`);
//! - `resolve`: resolve the stream's 1M ids and copy each string into a
//!   length-prefixed buffer; `iterate`: the same for the table's strings
//!   in id order (a string);
//! - `wordpress`: the fixture's 1,059 strings into a fresh table;
//!   `wordpress-reintern`: all of them again into a table that holds
//!   them (an intern);
//! - `replay-wordpress`, `replay-sim`: a profile build's intern calls
//!   (`setup::ReplayProfile::replay`) one by one into a fresh table (an
//!   intern call);
//! - `thread-stream`: one thread's stream of the concurrent benchmark
//!   (`setup::thread_streams`: 1M skewed interns, 10% misses, over the
//!   100k strings) into a fresh table (an intern); also for the
//!   concurrent tables used from one thread, `strtab-shared`
//!   (`SharedStringTable`) and `lasso-threaded` (`ThreadedRodeo`);
//! - `replay-wordpress-batch`, `replay-sim-batch`: the same with one
//!   `intern_batch` per sample, and `replay-wordpress-loop`,
//!   `replay-sim-loop`: the plain loop writing the same ids into the same
//!   buffer (strtab only; an intern call).
//!
//! Prints `ops=N` (the operation count) on stderr.

use std::hash::BuildHasher;
use std::hint::black_box;

#[macro_use]
mod setup;

use setup::{Fold, Interner, Replay};
use strtab::{StringId, StringTable};

#[inline(never)]
fn workload_fresh<T: Interner>(input: &[&str]) -> T {
    let mut t = T::new();
    for s in input {
        black_box(t.intern(s));
    }
    t
}

#[inline(never)]
fn workload_fresh_hint<T: Interner>(input: &[&str], strings: usize, bytes: usize) -> T {
    let mut t = T::with_capacity(strings, bytes);
    for s in input {
        black_box(t.intern(s));
    }
    t
}

#[inline(never)]
fn workload_intern<T: Interner>(t: &mut T, input: &[&str]) {
    for s in input {
        black_box(t.intern(s));
    }
}

#[inline(never)]
fn workload_get<T: Interner>(t: &mut T, input: &[&str]) {
    for s in input {
        black_box(t.get(s));
    }
}

#[inline(never)]
fn workload_resolve<T: Interner>(t: &T, ids: &[u32], buf: &mut Vec<u8>) {
    for &id in ids {
        let s = t.resolve(id);
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    }
}

#[inline(never)]
fn workload_iterate<T: Interner>(t: &T, buf: &mut Vec<u8>) {
    t.for_each_str(|s| {
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    });
}

#[inline(never)]
fn workload_hash(input: &[&str]) {
    let h = setup::Fold::default();
    for s in input {
        black_box(h.hash_one(*s));
    }
}

#[inline(never)]
fn workload_hash_bytes(input: &[&str]) {
    use std::hash::Hasher;
    let h = setup::Fold::default();
    for s in input {
        let mut state = h.build_hasher();
        state.write(s.as_bytes());
        black_box(state.finish());
    }
}

#[inline(never)]
fn workload_replay_batch(replay: &Replay<'_>, ids: &mut [StringId]) -> StringTable<Fold> {
    let mut t = setup::strtab_new();
    setup::replay_batch(&mut t, replay, ids);
    t
}

#[inline(never)]
fn workload_replay_loop(replay: &Replay<'_>, ids: &mut [StringId]) -> StringTable<Fold> {
    let mut t = setup::strtab_new();
    setup::replay_loop(&mut t, replay, ids);
    t
}

/// The 100k unique strings.
fn unique() -> Vec<String> {
    setup::unique_strings(setup::UNIQUE, setup::SEED)
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn table_of<T: Interner>(strings: &[&str]) -> T {
    let mut t = T::new();
    for s in strings {
        t.intern(s);
    }
    t
}

/// Runs `workload` once on `T`; returns the operation count.
fn run<T: Interner>(workload: &str) -> usize {
    match workload {
        "stream" | "hash_only" | "hash_bytes" | "resolve" => {
            let strings = unique();
            let stream = setup::skewed_stream(&strings, setup::STREAM_LEN, setup::SEED);
            match workload {
                "stream" => drop(black_box(workload_fresh::<T>(&stream))),
                "hash_only" => workload_hash(&stream),
                "hash_bytes" => workload_hash_bytes(&stream),
                _ => {
                    let mut t = T::new();
                    let ids: Vec<u32> = stream.iter().map(|s| t.intern(s)).collect();
                    let mut buf = Vec::with_capacity(setup::total_bytes(&stream) + 4 * ids.len());
                    workload_resolve(&t, &ids, &mut buf);
                    black_box(&buf);
                }
            }
            stream.len()
        }
        "thread-stream" => {
            let strings = unique();
            let streams = setup::thread_streams(&strings, 1, setup::THREAD_STREAM_LEN);
            drop(black_box(workload_fresh::<T>(&streams[0])));
            streams[0].len()
        }
        "fill" | "fill-hint" => {
            let strings = unique();
            let uniq = as_strs(&strings);
            let t: T = if workload == "fill" {
                workload_fresh(&uniq)
            } else {
                workload_fresh_hint(&uniq, uniq.len() + 1, setup::total_bytes(&uniq))
            };
            drop(black_box(t));
            uniq.len()
        }
        "get-hit" | "get-miss" => {
            let strings = unique();
            let mut t: T = table_of(&as_strs(&strings));
            let input = if workload == "get-hit" {
                setup::shuffled(&strings, setup::SEED)
            } else {
                // As `benches/workloads/get.rs`: 100k strings not in the table.
                let others =
                    setup::unique_strings(setup::UNIQUE + setup::UNIQUE / 2, setup::MISS_SEED);
                let present: std::collections::HashSet<&str> =
                    as_strs(&strings).into_iter().collect();
                let misses: Vec<String> = others
                    .into_iter()
                    .filter(|s| !present.contains(s.as_str()))
                    .take(setup::UNIQUE)
                    .collect();
                assert_eq!(misses.len(), setup::UNIQUE);
                workload_get(&mut t, &as_strs(&misses));
                return misses.len();
            };
            workload_get(&mut t, &input);
            input.len()
        }
        "iterate" => {
            let strings = unique();
            let t: T = table_of(&as_strs(&strings));
            let mut buf = Vec::with_capacity(setup::total_bytes(&strings) + 4 * (t.len()));
            workload_iterate(&t, &mut buf);
            black_box(&buf);
            t.len()
        }
        "wordpress" | "wordpress-reintern" => {
            let strings = setup::wordpress_strings();
            let strings = as_strs(&strings);
            if workload == "wordpress" {
                drop(black_box(workload_fresh::<T>(&strings)));
            } else {
                let mut t: T = table_of(&strings);
                workload_intern(&mut t, &strings);
            }
            strings.len()
        }
        _ => {
            let Some(rest) = workload.strip_prefix("replay-") else {
                panic!("unknown workload {workload}");
            };
            let (source, variant) = rest.split_once('-').unwrap_or((rest, ""));
            let profile = match source {
                "wordpress" => setup::ReplayProfile::wordpress(),
                "sim" => setup::ReplayProfile::sim(),
                _ => panic!("unknown workload {workload}"),
            };
            let replay = profile.replay();
            let mut ids = vec![StringId::EMPTY; replay.max_sample_len()];
            match variant {
                "" => drop(black_box(workload_fresh::<T>(&replay.strings))),
                "batch" | "loop" => {
                    assert_eq!(
                        std::any::type_name::<T>(),
                        std::any::type_name::<setup::Strtab<Fold>>(),
                        "{workload} is strtab only"
                    );
                    let t = if variant == "batch" {
                        workload_replay_batch(&replay, &mut ids)
                    } else {
                        workload_replay_loop(&replay, &mut ids)
                    };
                    drop(black_box(t));
                }
                _ => panic!("unknown workload {workload}"),
            }
            replay.strings.len()
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (workload, imp) = match args.as_slice() {
        [w, i] => (w.as_str(), i.as_str()),
        _ => {
            // `cargo bench` runs every bench target: do nothing by default.
            eprintln!("usage: profile WORKLOAD IMPL (see the module docs)");
            return;
        }
    };
    let mut ops = None;
    let mut pick = |name: &str, f: &dyn Fn() -> usize| {
        if name == imp {
            let start = std::time::Instant::now();
            ops = Some(f());
            // Includes building the data (and the table, for the
            // read-only workloads).
            eprintln!("ran {workload} on {name} in {:?}", start.elapsed());
        }
    };
    macro_rules! one {
        ($t:ty, $name:expr) => {
            pick($name, &|| run::<$t>(workload))
        };
    }
    use setup::{Blaz, IdxSet, Lasso, LassoThreaded, Naive, Shared, SiBuffer, SiString, Strtab};
    one!(Strtab<Fold>, "strtab");
    one!(Lasso<Fold>, "lasso");
    one!(SiString<Fold>, "si-string");
    one!(SiBuffer<Fold>, "si-buffer");
    one!(Blaz<Fold>, "blazinterner");
    one!(IdxSet<Fold>, "indexset");
    one!(Naive<Fold>, "naive-hashmap");
    one!(Shared<Fold>, "strtab-shared");
    one!(LassoThreaded<Fold>, "lasso-threaded");
    let ops = ops.unwrap_or_else(|| panic!("unknown implementation {imp}"));
    eprintln!("ops={ops}");
}
