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
//! (`stream`, `fill`, `fill-hint`, `fill-large`, `wordpress`, `replay-*`) the measured
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
//!   without and with capacity hints (an intern); `fill-large`: 1M unique
//!   generated strings (60 MB of records and hash slots, far past the
//!   caches) into a fresh table without hints (an intern);
//! - `get-hit`, `get-miss`: 100k lookups, shuffled hits or absent strings,
//!   in a table holding the 100k strings (a `get`);
//! - `resolve`: resolve the stream's 1M ids and copy each string into a
//!   length-prefixed buffer; `iterate`: the same for the table's strings
//!   in id order (a string);
//! - `wordpress`: the fixture's 1,059 strings into a fresh table;
//!   `wordpress-reintern`: all of them again into a table that holds
//!   them (an intern);
//! - `replay-wordpress`, `replay-go`, `replay-sim`: a profile build's
//!   intern calls (`setup::ReplayProfile::replay`; `replay-go` replays
//!   `tests/data/go-cpu.pprof`, a CPU profile Go's runtime wrote) one by
//!   one into a fresh table (an intern call); `replay-pprof` (and its
//!   `-batch` and `-loop` forms
//!   below): the same for the pprof file named by `STRTAB_PPROF` (gzip'd
//!   or raw), such as a production profile that is not in this
//!   repository;
//! - `thread-stream`: one thread's stream of the concurrent benchmark
//!   (`setup::thread_streams`: 1M skewed interns, 10% misses, over the
//!   100k strings) into a fresh table (an intern); also for the
//!   concurrent tables used from one thread, `strtab-shared`
//!   (`SharedStringTable`) and `lasso-threaded` (`ThreadedRodeo`);
//!   `thread-stream-warm`: the same stream into a table that already
//!   holds it (it was interned into a fresh table first, not measured):
//!   its hits alone (an intern);
//! - `replay-wordpress-batch`, `replay-go-batch`, `replay-sim-batch`: the
//!   same with one `intern_batch` per sample, and `replay-wordpress-loop`,
//!   `replay-go-loop`, `replay-sim-loop`: the plain loop writing the same
//!   ids into the same
//!   buffer (strtab only; an intern call); `replay-wpowned-*` and
//!   `replay-simowned-*`: the same calls with each string a copy of its
//!   own, so that no two calls share an address (a caller that owns or
//!   formats a string per call).
//!
//! Prints `ops=N` (the operation count) on stderr.
//!
//! `STRTAB_STRINGS=FILE` runs the workloads built on the 100k unique
//! strings (`stream`, `fill*`, `get-*`, `resolve`, `iterate`,
//! `thread-stream*`) on the distinct lines of `FILE` instead
//! (`setup::input_strings`), such as a binary's symbol names; the
//! `get-miss` lookups stay generated strings absent from them.
//!
//! The same runs also give wall times side by side, free of the drift
//! between criterion's benchmarks (each measured minutes after the one
//! before on a shared machine):
//!
//! ```text
//! taskset -c 1 target/release/deps/profile-HASH rounds 9 \
//!     stream,get-miss strtab,lasso,si-string,si-buffer,blazinterner
//! taskset -c 1 target/release/deps/profile-HASH rounds 9 \
//!     replay-sim-batch+replay-sim-loop strtab
//! ```
//!
//! prepares each implementation's run of a workload (or of each workload
//! of a `+` group, interleaved together), then times them in `N`
//! interleaved rounds (see [`rounds`]) and prints markdown. Left out
//! by default there: the `indexset` and `naive-hashmap` baselines, whose
//! 100k allocations per run leave glibc work (consolidating the freed
//! chunks) that the next implementation's large allocations pay for: two
//! `fill-hint` runs of strtab right after one of `naive-hashmap` took 11
//! ms each instead of 2.7.

use std::hash::BuildHasher;
use std::hint::black_box;

#[macro_use]
mod setup;

use setup::{Fold, Interner, Replay};
use strtab::StringId;

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
fn workload_replay_batch<T: setup::Batching>(
    new: fn() -> T,
    replay: &Replay<'_>,
    ids: &mut [StringId],
) -> T {
    let mut t = new();
    setup::replay_batch(&mut t, replay, ids);
    t
}

#[inline(never)]
fn workload_replay_loop<T: setup::Batching>(
    new: fn() -> T,
    replay: &Replay<'_>,
    ids: &mut [StringId],
) -> T {
    let mut t = new();
    setup::replay_loop(&mut t, replay, ids);
    t
}

/// The inputs, built once per process and shared by every implementation
/// (the rounds mode prepares them all side by side).
mod inputs {
    use std::sync::OnceLock;

    use super::setup::{self, Replay, ReplayProfile};

    /// The 100k unique strings (`setup::input_strings`: generated, or
    /// a file's lines with `STRTAB_STRINGS=FILE`).
    pub(crate) fn unique_owned() -> &'static [String] {
        static S: OnceLock<Vec<String>> = OnceLock::new();
        S.get_or_init(setup::input_strings)
    }

    pub(crate) fn unique() -> &'static [&'static str] {
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| unique_owned().iter().map(String::as_str).collect())
    }

    /// `fill-large`'s 1M unique generated strings (always generated).
    pub(crate) fn unique_large() -> &'static [&'static str] {
        static OWNED: OnceLock<Vec<String>> = OnceLock::new();
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| {
            let owned =
                OWNED.get_or_init(|| setup::unique_strings(10 * setup::UNIQUE, setup::SEED));
            owned.iter().map(String::as_str).collect()
        })
    }

    /// Workload 2's skewed stream of 1M interns.
    pub(crate) fn stream() -> &'static [&'static str] {
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| setup::skewed_stream(unique(), setup::STREAM_LEN, setup::SEED))
    }

    /// One thread's stream of the concurrent benchmark.
    pub(crate) fn thread_stream() -> &'static [&'static str] {
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| setup::thread_streams(unique(), 1, setup::THREAD_STREAM_LEN).remove(0))
    }

    /// The unique strings, shuffled (`get` hits).
    pub(crate) fn hits() -> &'static [&'static str] {
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| setup::shuffled(unique_owned(), setup::SEED))
    }

    /// As `benches/workloads/get.rs`: 100k strings not in the table.
    pub(crate) fn misses() -> &'static [&'static str] {
        static OWNED: OnceLock<Vec<String>> = OnceLock::new();
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| {
            let present: std::collections::HashSet<&str> = unique().iter().copied().collect();
            let owned = OWNED.get_or_init(|| {
                setup::unique_strings(setup::UNIQUE + setup::UNIQUE / 2, setup::MISS_SEED)
                    .into_iter()
                    .filter(|s| !present.contains(s.as_str()))
                    .take(setup::UNIQUE)
                    .collect()
            });
            assert_eq!(owned.len(), setup::UNIQUE);
            owned.iter().map(String::as_str).collect()
        })
    }

    /// The WordPress fixture's 1,059 strings.
    pub(crate) fn wordpress() -> &'static [&'static str] {
        static OWNED: OnceLock<Vec<String>> = OnceLock::new();
        static S: OnceLock<Vec<&'static str>> = OnceLock::new();
        S.get_or_init(|| {
            OWNED
                .get_or_init(setup::wordpress_strings)
                .iter()
                .map(String::as_str)
                .collect()
        })
    }

    /// The intern calls of a profile build: `"wordpress"`, `"go"`, `"sim"`
    /// or `"pprof"` (the file named by `STRTAB_PPROF`).
    pub(crate) fn replay(source: &str) -> &'static Replay<'static> {
        static WP: OnceLock<ReplayProfile> = OnceLock::new();
        static GO: OnceLock<ReplayProfile> = OnceLock::new();
        static SIM: OnceLock<ReplayProfile> = OnceLock::new();
        static WP_REPLAY: OnceLock<Replay<'static>> = OnceLock::new();
        static GO_REPLAY: OnceLock<Replay<'static>> = OnceLock::new();
        static SIM_REPLAY: OnceLock<Replay<'static>> = OnceLock::new();
        match source {
            "wordpress" => {
                WP_REPLAY.get_or_init(|| WP.get_or_init(ReplayProfile::wordpress).replay())
            }
            "go" => GO_REPLAY.get_or_init(|| GO.get_or_init(ReplayProfile::go).replay()),
            "sim" => SIM_REPLAY.get_or_init(|| SIM.get_or_init(ReplayProfile::sim).replay()),
            "pprof" => {
                static FILE: OnceLock<ReplayProfile> = OnceLock::new();
                static FILE_REPLAY: OnceLock<Replay<'static>> = OnceLock::new();
                FILE_REPLAY.get_or_init(|| FILE.get_or_init(ReplayProfile::from_env).replay())
            }
            // The same calls, each string a copy of its own (a caller that
            // formats or owns a string per call): no two calls share an
            // address.
            "wpowned" | "simowned" => {
                static WP_OWNED: OnceLock<Replay<'static>> = OnceLock::new();
                static SIM_OWNED: OnceLock<Replay<'static>> = OnceLock::new();
                let (cell, of) = if source == "wpowned" {
                    (&WP_OWNED, "wordpress")
                } else {
                    (&SIM_OWNED, "sim")
                };
                cell.get_or_init(|| {
                    let shared = replay(of);
                    Replay {
                        strings: shared
                            .strings
                            .iter()
                            .map(|s| &*Box::leak(Box::<str>::from(*s)))
                            .collect(),
                        ends: shared.ends.clone(),
                    }
                })
            }
            _ => panic!("unknown replay source {source}"),
        }
    }
}

fn table_of<T: Interner>(strings: &[&str]) -> T {
    let mut t = T::new();
    for s in strings {
        t.intern(s);
    }
    t
}

/// One run of a workload, ready to call: its inputs (and, for the
/// read-only workloads, its table) are built; each call runs the measured
/// part once, and what criterion's `Bencher::iter` would time with it
/// (dropping a fresh table, clearing a reused buffer).
type Prepared = Box<dyn FnMut()>;

/// Prepares `workload` on `T`; returns the run and its operation count.
fn prepare<T: Interner + 'static>(workload: &str) -> (Prepared, usize) {
    use inputs::{hits, misses, replay, stream, thread_stream, unique, wordpress};
    match workload {
        "stream" => (
            Box::new(|| drop(black_box(workload_fresh::<T>(stream())))),
            stream().len(),
        ),
        "hash_only" => (Box::new(|| workload_hash(stream())), stream().len()),
        "hash_bytes" => (Box::new(|| workload_hash_bytes(stream())), stream().len()),
        "resolve" => {
            let mut t = T::new();
            let ids: Vec<u32> = stream().iter().map(|s| t.intern(s)).collect();
            let mut buf = Vec::with_capacity(setup::total_bytes(stream()) + 4 * ids.len());
            let run = move || {
                buf.clear();
                workload_resolve(&t, &ids, &mut buf);
                black_box(buf.as_ptr());
            };
            (Box::new(run), stream().len())
        }
        "thread-stream" => (
            Box::new(|| drop(black_box(workload_fresh::<T>(thread_stream())))),
            thread_stream().len(),
        ),
        "thread-stream-warm" => {
            let mut t: T = table_of(thread_stream());
            (
                Box::new(move || workload_intern(&mut t, thread_stream())),
                thread_stream().len(),
            )
        }
        "fill" => (
            Box::new(|| drop(black_box(workload_fresh::<T>(unique())))),
            unique().len(),
        ),
        "fill-large" => (
            Box::new(|| drop(black_box(workload_fresh::<T>(inputs::unique_large())))),
            inputs::unique_large().len(),
        ),
        "fill-hint" => {
            let (strings, bytes) = (unique().len() + 1, setup::total_bytes(unique()));
            let run = move || {
                drop(black_box(workload_fresh_hint::<T>(
                    unique(),
                    strings,
                    bytes,
                )))
            };
            (Box::new(run), unique().len())
        }
        "get-hit" | "get-miss" => {
            let mut t: T = table_of(unique());
            let input = if workload == "get-hit" {
                hits()
            } else {
                misses()
            };
            (Box::new(move || workload_get(&mut t, input)), input.len())
        }
        "iterate" => {
            let t: T = table_of(unique());
            let mut buf = Vec::with_capacity(setup::total_bytes(unique()) + 4 * t.len());
            let run = move || {
                buf.clear();
                workload_iterate(&t, &mut buf);
                black_box(buf.as_ptr());
            };
            (Box::new(run), unique().len() + 1)
        }
        "wordpress" => (
            Box::new(|| drop(black_box(workload_fresh::<T>(wordpress())))),
            wordpress().len(),
        ),
        "wordpress-reintern" => {
            let mut t: T = table_of(wordpress());
            (
                Box::new(move || workload_intern(&mut t, wordpress())),
                wordpress().len(),
            )
        }
        _ => {
            let Some(rest) = workload.strip_prefix("replay-") else {
                panic!("unknown workload {workload}");
            };
            let (source, variant) = rest.split_once('-').unwrap_or((rest, ""));
            let replay = replay(source);
            let calls = replay.strings.len();
            if variant.is_empty() {
                let run = || drop(black_box(workload_fresh::<T>(&replay.strings)));
                return (Box::new(run), calls);
            }
            let ids = vec![StringId::EMPTY; replay.max_sample_len()];
            let name = std::any::type_name::<T>();
            let run = if name == std::any::type_name::<setup::Strtab<Fold>>() {
                replay_variant(setup::strtab_new, workload, variant, replay, ids)
            } else if name == std::any::type_name::<setup::Shared<Fold>>() {
                replay_variant(setup::shared_new, workload, variant, replay, ids)
            } else {
                panic!("{workload} is for strtab and strtab-shared only")
            };
            (run, calls)
        }
    }
}

/// A replay's `-batch` or `-loop` `variant` into tables that `new` makes.
fn replay_variant<T: setup::Batching + 'static>(
    new: fn() -> T,
    workload: &str,
    variant: &str,
    replay: &'static Replay<'static>,
    mut ids: Vec<StringId>,
) -> Prepared {
    match variant {
        "batch" => Box::new(move || drop(black_box(workload_replay_batch(new, replay, &mut ids)))),
        "loop" => Box::new(move || drop(black_box(workload_replay_loop(new, replay, &mut ids)))),
        _ => panic!("unknown workload {workload}"),
    }
}

/// [`prepare`] for one implementation.
type Prepare = fn(&str) -> (Prepared, usize);

/// Every implementation's label, in table order, and [`prepare`] for it.
const IMPLS: &[(&str, Prepare)] = {
    use setup::{Blaz, IdxSet, Lasso, LassoThreaded, Naive, Shared, SiBuffer, SiString, Strtab};
    &[
        ("strtab", prepare::<Strtab<Fold>>),
        ("lasso", prepare::<Lasso<Fold>>),
        ("si-string", prepare::<SiString<Fold>>),
        ("si-buffer", prepare::<SiBuffer<Fold>>),
        ("blazinterner", prepare::<Blaz<Fold>>),
        ("indexset", prepare::<IdxSet<Fold>>),
        ("naive-hashmap", prepare::<Naive<Fold>>),
        ("strtab-shared", prepare::<Shared<Fold>>),
        ("lasso-threaded", prepare::<LassoThreaded<Fold>>),
    ]
};

/// The peers of the best-peer ratio (the `indexset` and `naive-hashmap`
/// baselines are shown, not counted).
const PEERS: &[&str] = &["lasso", "si-string", "si-buffer", "blazinterner"];

fn prepare_named(imp: &str, workload: &str) -> (Prepared, usize) {
    let &(_, prepare) = IMPLS
        .iter()
        .find(|(name, _)| *name == imp)
        .unwrap_or_else(|| panic!("unknown implementation {imp}"));
    prepare(workload)
}

/// Wall time of one sample: calls of a run are repeated to take at least
/// this long.
const SAMPLE: std::time::Duration = std::time::Duration::from_millis(20);

/// `rounds N GROUPS IMPLS`: for each group of workloads in turn (`GROUPS`
/// is comma-separated; `a+b` is one group of two workloads, such as a
/// batch and its plain loop), every (workload, implementation) pair of the
/// group prepared side by side, then `N` rounds in which each pair takes
/// one sample (one untimed run, then its run repeated for about
/// [`SAMPLE`]), in a new shuffled order each round, so that a machine whose
/// speed drifts slows all of them alike (criterion measures one benchmark
/// after another, minutes apart). A group's tables are dropped before the
/// next group is prepared, so that the allocator's state is the group's
/// own, as in criterion. Prints a markdown table of each pair's median
/// time per run and its time over the first row's (paired, as below),
/// and for a one-workload group the best peer's (the peer
/// of the lowest median) over strtab's: the median over rounds of the two
/// times' ratio in one round ([`setup::Rounds::paired_ratio`]; until
/// 2026-12-05 the ratio of the two medians).
fn rounds(rounds: usize, groups: &[&str], impls: &[&str]) {
    println!(
        "{rounds} interleaved rounds, median wall time per run (each sample about {SAMPLE:?} of repeated runs)\n"
    );
    println!("| workload | implementation | median per run | per operation | time / first row |");
    println!("|---|---|---:|---:|---:|");
    for group in groups {
        let workloads: Vec<&str> = group.split('+').collect();
        let mut runs: Vec<(&str, &str, Prepared, usize, u32)> = Vec::new();
        for &w in &workloads {
            for &imp in impls {
                let (mut run, ops) = prepare_named(imp, w);
                // Warm up, then size the sample.
                run();
                let start = std::time::Instant::now();
                run();
                let once = start.elapsed().max(std::time::Duration::from_nanos(1));
                let reps = u32::try_from(SAMPLE.as_nanos().div_ceil(once.as_nanos()))
                    .unwrap_or(u32::MAX)
                    .max(1);
                runs.push((w, imp, run, ops, reps));
            }
        }
        let samples = setup::interleaved(rounds, runs.len(), |i| {
            let (_, _, run, _, reps) = &mut runs[i];
            // One untimed run first, as criterion warms up each benchmark
            // on its own data: the caches hold this pair's data, not the
            // previous one's.
            run();
            let start = std::time::Instant::now();
            for _ in 0..*reps {
                run();
            }
            start.elapsed().as_secs_f64() / f64::from(*reps)
        });
        let medians = samples.medians();
        for (i, (&(w, imp, _, ops, _), &m)) in runs.iter().zip(&medians).enumerate() {
            println!(
                "| `{w}` | {imp} | {} | {:.1} ns | {:.2} |",
                human(m),
                m * 1e9 / ops as f64,
                samples.paired_ratio(i, 0)
            );
        }
        if workloads.len() > 1 {
            continue;
        }
        let best = (0..runs.len())
            .filter(|&i| PEERS.contains(&runs[i].1))
            .min_by(|&a, &b| medians[a].total_cmp(&medians[b]));
        if let (Some(b), Some(s)) = (best, runs.iter().position(|r| r.1 == "strtab")) {
            println!(
                "| `{}` | best peer ({}) / strtab | | | **{:.2}x** |",
                workloads[0],
                runs[b].1,
                samples.paired_ratio(b, s)
            );
        }
    }
}

/// `s` seconds with a unit.
fn human(s: f64) -> String {
    if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["rounds", n, workloads, rest @ ..] => {
            let n = n.parse().expect("rounds N: a number");
            let workloads: Vec<&str> = workloads.split(',').collect();
            let impls: Vec<&str> = match rest {
                [impls] => impls.split(',').collect(),
                _ => IMPLS[..5].iter().map(|&(name, _)| name).collect(),
            };
            rounds(n, &workloads, &impls);
        }
        [workload, imp] => {
            let start = std::time::Instant::now();
            let (mut run, ops) = prepare_named(imp, workload);
            run();
            // Includes building the data (and the table, for the
            // read-only workloads).
            eprintln!("ran {workload} on {imp} in {:?}", start.elapsed());
            eprintln!("ops={ops}");
        }
        _ => {
            // `cargo bench` runs every bench target: do nothing by default.
            eprintln!(
                "usage: profile WORKLOAD IMPL | profile rounds N WORKLOADS [IMPLS] (see the module docs)"
            );
        }
    }
}
