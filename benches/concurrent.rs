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
//! - `string_table_one_thread`: the baseline, one thread doing all `t`M
//!   interns (the streams one after another) with `StringTable`;
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
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};

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

fn concurrent(g: &mut BenchmarkGroup<'_, WallTime>, streams: &[Vec<&str>]) {
    g.bench_function("string_table_one_thread", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut table = strtab::StringTable::new();
                let start = Start::now();
                for s in streams.iter().flatten() {
                    black_box(table.intern(s));
                }
                total += start.elapsed();
                drop(black_box(table));
            }
            total
        });
    });
    g.bench_function("shared", |b| {
        b.iter_custom(|iters| {
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
        });
    });
    g.bench_function("mutex_string_table", |b| {
        b.iter_custom(|iters| {
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
        });
    });
    g.bench_function("per_thread_merge", |b| {
        b.iter_custom(|iters| {
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
        });
    });
    g.bench_function("lasso_threaded", |b| {
        b.iter_custom(|iters| {
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
        });
    });
    g.bench_function("blazinterner", |b| {
        b.iter_custom(|iters| {
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
        });
    });
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
criterion_main!(benches);
