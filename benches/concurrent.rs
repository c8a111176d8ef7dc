//! Concurrent interning: `cargo bench --bench concurrent`, thread counts
//! from `STRTAB_THREADS` (default 1, 2 and the machine's parallelism).
//!
//! Dimensions: thread count `t` x implementation. Each of `t` threads
//! interns its own skewed profiler stream of 1M interns (10% misses) over
//! the same 100k unique generated strings (`setup::thread_streams`), into
//! one fresh table, started together; the time is until the last thread
//! is done (table construction and drop excluded). Implementations, all
//! with foldhash:
//!
//! - `string_table_one_thread`: the baseline, one spawned thread doing
//!   all `t`M interns (the streams one after another) with `StringTable`
//!   (made on the main thread, as every other row's table is);
//! - `shared`: `SharedStringTable`, default shards;
//! - `mutex_string_table`: `Mutex<StringTable>`;
//! - `per_thread_merge`: a `StringTable` per thread, then merged into one
//!   (the merge is timed: it is what gives one id space);
//! - `lasso_threaded`: lasso `ThreadedRodeo<Spur>`;
//! - `blazinterner`: blazinterner `ArenaStr<_, u32>::intern(&self)` (its
//!   concurrent `sync` form).
//!
//! Throughput: `t`M elements. `benches/README.md` has the results.
//!
//! `STRTAB_ROUNDS=N` replaces criterion with `N` interleaved rounds (every
//! implementation once per round, rotated) and prints a markdown table of
//! medians and ratios: on a machine shared with other work, the
//! side-by-side figures that drift the least.
//!
//! Clock: wall time from the start until the last thread is done; with
//! `STRTAB_CPU_TIME=1`, the CPU time of the slowest thread instead (from
//! `/proc/thread-self/schedstat`, Linux), which leaves out the time the
//! threads spent descheduled: on a machine shared with other work, the
//! figure closer to what the code costs. Either way the time includes
//! what contention costs while running (lock-word and cache-line
//! transfers, spinning), not time asleep on a futex.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group};

mod setup;

use setup::Fold;

/// Whether to report CPU time (`STRTAB_CPU_TIME=1`) instead of wall time.
fn cpu_clock() -> bool {
    std::env::var_os("STRTAB_CPU_TIME").is_some_and(|v| v != "0")
}

/// CPU time the calling thread has run (Linux; zero elsewhere).
fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// A clock for one thread's work: CPU time or wall time.
#[derive(Clone, Copy)]
enum Start {
    Cpu(Duration),
    Wall(Instant),
}

impl Start {
    fn now() -> Start {
        if cpu_clock() {
            Start::Cpu(thread_cpu())
        } else {
            Start::Wall(Instant::now())
        }
    }

    fn elapsed(self) -> Duration {
        match self {
            Start::Cpu(c) => thread_cpu() - c,
            Start::Wall(w) => w.elapsed(),
        }
    }
}

/// Times `iters` runs of `run` on a fresh table from `make`, one thread
/// per stream, excluding construction and drop: wall time until the last
/// thread is done, or the slowest thread's CPU time.
fn timed<T: Sync>(
    iters: u64,
    streams: &[Vec<&str>],
    make: impl Fn() -> T,
    run: impl Fn(&T, &[&str]) + Sync,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let table = make();
        let start = Instant::now();
        let slowest = std::thread::scope(|scope| {
            let workers: Vec<_> = streams
                .iter()
                .map(|stream| {
                    let (table, run) = (&table, &run);
                    scope.spawn(move || {
                        let t = Start::now();
                        run(table, stream);
                        t.elapsed()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).max()
        });
        total += if cpu_clock() {
            slowest.unwrap_or_default()
        } else {
            start.elapsed()
        };
        drop(black_box(table));
    }
    total
}

/// One implementation's run: `iters` times, the time of all (see
/// [`timed`]).
type Run = fn(&[Vec<&str>], u64) -> Duration;

fn string_table_one_thread(streams: &[Vec<&str>], iters: u64) -> Duration {
    // All the streams, one after another, on one spawned thread, into a
    // table made on this thread: the conditions the other rows run in.
    // The lock is taken once per run.
    let all: Vec<&str> = streams.iter().flatten().copied().collect();
    timed(
        iters,
        std::slice::from_ref(&all),
        || Mutex::new(strtab::StringTable::new()),
        |t, stream| {
            let mut t = t.lock().unwrap();
            for s in stream {
                black_box(t.intern(s));
            }
        },
    )
}

fn shared(streams: &[Vec<&str>], iters: u64) -> Duration {
    timed(
        iters,
        streams,
        strtab::SharedStringTable::new,
        |t, stream| {
            for s in stream {
                black_box(t.intern(s));
            }
        },
    )
}

fn mutex_string_table(streams: &[Vec<&str>], iters: u64) -> Duration {
    timed(
        iters,
        streams,
        || Mutex::new(strtab::StringTable::new()),
        |t, stream| {
            for s in stream {
                black_box(t.lock().unwrap().intern(s));
            }
        },
    )
}

fn per_thread_merge(streams: &[Vec<&str>], iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let wall = Instant::now();
        let (tables, times): (Vec<strtab::StringTable>, Vec<Duration>) =
            std::thread::scope(|scope| {
                let workers: Vec<_> = streams
                    .iter()
                    .map(|stream| {
                        scope.spawn(move || {
                            let start = Start::now();
                            let mut t = strtab::StringTable::new();
                            for s in stream {
                                black_box(t.intern(s));
                            }
                            (t, start.elapsed())
                        })
                    })
                    .collect();
                workers.into_iter().map(|w| w.join().unwrap()).unzip()
            });
        let merging = Start::now();
        let mut tables = tables.into_iter();
        let mut merged = tables.next().unwrap();
        for t in tables {
            black_box(merged.merge(&t));
        }
        total += if cpu_clock() {
            times.into_iter().max().unwrap_or_default() + merging.elapsed()
        } else {
            wall.elapsed()
        };
        drop(black_box(merged));
    }
    total
}

fn lasso_threaded(streams: &[Vec<&str>], iters: u64) -> Duration {
    timed(
        iters,
        streams,
        || {
            let r = lasso::ThreadedRodeo::<lasso::Spur, Fold>::with_hasher(Fold::default());
            r.get_or_intern("");
            r
        },
        |t, stream| {
            for s in stream {
                black_box(t.get_or_intern(s));
            }
        },
    )
}

fn blazinterner(streams: &[Vec<&str>], iters: u64) -> Duration {
    timed(
        iters,
        streams,
        || {
            let a = blazinterner::ArenaStr::<Fold, u32>::default();
            a.intern("");
            a
        },
        |t, stream| {
            for s in stream {
                black_box(t.intern(s));
            }
        },
    )
}

/// The implementations, in the order they are reported.
const RUNS: &[(&str, Run)] = &[
    ("string_table_one_thread", string_table_one_thread),
    ("shared", shared),
    ("mutex_string_table", mutex_string_table),
    ("per_thread_merge", per_thread_merge),
    ("lasso_threaded", lasso_threaded),
    ("blazinterner", blazinterner),
];

fn concurrent(g: &mut BenchmarkGroup<'_, WallTime>, streams: &[Vec<&str>]) {
    for &(name, run) in RUNS {
        g.bench_function(name, |b| b.iter_custom(|iters| run(streams, iters)));
    }
}

/// `STRTAB_ROUNDS=N`: instead of criterion, `N` rounds in which every
/// implementation runs once, in an order rotated each round, so that a
/// machine whose speed drifts (other jobs starting and stopping) slows all
/// of them alike; prints the median of each and its ratios.
fn rounds(rounds: usize) {
    let strings = setup::unique_strings(setup::UNIQUE, setup::SEED);
    let clock = if cpu_clock() {
        "CPU time of the slowest thread"
    } else {
        "wall time"
    };
    println!(
        "{rounds} rounds, median {clock}; ratios are throughput relative to the row named
"
    );
    for threads in setup::bench_threads() {
        let streams = setup::thread_streams(&strings, threads, setup::THREAD_STREAM_LEN);
        check(&streams);
        let medians = setup::interleaved_medians(rounds, RUNS.len(), |i| {
            RUNS[i].1(&streams, 1).as_secs_f64() * 1e3
        });
        let of = |name: &str| medians[RUNS.iter().position(|r| r.0 == name).unwrap()];
        let (base, lasso) = (of("string_table_one_thread"), of("lasso_threaded"));
        println!("{threads} thread(s), {threads}M interns:\n");
        println!("| implementation | median ms | vs string_table_one_thread | vs lasso_threaded |");
        println!("|---|---:|---:|---:|");
        for (&(name, _), m) in RUNS.iter().zip(&medians) {
            println!(
                "| `{name}` | {m:.1} | {:.2}x | {:.2}x |",
                base / m,
                lasso / m
            );
        }
        println!();
    }
}

/// Checks that the shared table hands out one id per string and dense
/// ids on this workload, so the benchmark measures a correct run.
fn check(streams: &[Vec<&str>]) {
    let table = strtab::SharedStringTable::new();
    let ids: Vec<Vec<strtab::StringId>> = std::thread::scope(|scope| {
        let workers: Vec<_> = streams
            .iter()
            .map(|stream| {
                let table = &table;
                scope.spawn(move || stream.iter().map(|s| table.intern(s)).collect())
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for (stream, ids) in streams.iter().zip(&ids) {
        for (s, &id) in stream.iter().zip(ids) {
            assert_eq!(table.resolve(id), Some(*s));
        }
    }
    assert_eq!(table.len(), setup::UNIQUE + 1);
}

fn all(c: &mut Criterion) {
    let strings = setup::unique_strings(setup::UNIQUE, setup::SEED);
    for threads in setup::bench_threads() {
        let streams = setup::thread_streams(&strings, threads, setup::THREAD_STREAM_LEN);
        check(&streams);
        let mut g = c.benchmark_group(format!("concurrent/{threads}_threads"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(4))
            .warm_up_time(Duration::from_secs(1))
            .throughput(Throughput::Elements(
                (threads * setup::THREAD_STREAM_LEN) as u64,
            ));
        concurrent(&mut g, &streams);
        g.finish();
    }
}

criterion_group!(benches, all);

fn main() {
    match std::env::var("STRTAB_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        Some(n) if n > 0 => rounds(n),
        _ => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
