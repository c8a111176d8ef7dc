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

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};

mod setup;

use setup::Fold;

/// Times `iters` runs of `run` on a fresh table from `make`, one thread
/// per stream, excluding construction and drop.
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
        std::thread::scope(|scope| {
            for stream in streams {
                let (table, run) = (&table, &run);
                scope.spawn(move || run(table, stream));
            }
        });
        total += start.elapsed();
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
                let start = Instant::now();
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
                let start = Instant::now();
                let tables: Vec<strtab::StringTable> = std::thread::scope(|scope| {
                    let workers: Vec<_> = streams
                        .iter()
                        .map(|stream| {
                            scope.spawn(move || {
                                let mut t = strtab::StringTable::new();
                                for s in stream {
                                    black_box(t.intern(s));
                                }
                                t
                            })
                        })
                        .collect();
                    workers.into_iter().map(|w| w.join().unwrap()).collect()
                });
                let mut tables = tables.into_iter();
                let mut merged = tables.next().unwrap();
                for t in tables {
                    black_box(merged.merge(&t));
                }
                total += start.elapsed();
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
