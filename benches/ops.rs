//! Benchmarks of the profiler operations (`cargo bench --bench ops`).
//!
//! Dimensions:
//! - `batch/<working set>/<method>`: interning a skewed stream of hits into
//!   a table that already holds every string, one by one (`intern`), in
//!   batches of 64 (a stack's worth) and of 1,024 (`intern_batch`), and
//!   one by one with the fastest peer (string-interner's `BufferBackend`).
//!   Working sets: `small` (5k strings, about 300 KB: cache-resident) and
//!   `large` (1M strings, about 57 MB of strings: beyond the 32 MiB L3).
//! - `merge/8_threads/<method>`: combining 8 per-thread tables built from
//!   slices of the profiler stream into an empty table: `merge` (sequential
//!   reads, batched lookups), the same after `reserve` of the merged
//!   table's strings (`merge_reserved`: known from the last period, in a
//!   profiler; the tables share most strings, so their sum would be far
//!   more), vs re-interning each table's strings one by one and recording
//!   the remap.
//! - `compact/100k_keep_10pct/<method>`: keeping every tenth id of a 100k
//!   table: `compact` vs building a new table from the kept strings.
//! - `period/steady/<policy>`: one export period of a continuous profiler
//!   (5,000 hot and 1,000 label strings, each interned once after the
//!   `clear`, then 24,000 hits from a skewed stream over them), then
//!   `clear()` and: nothing (`clear_only`); `shrink_to(2 * steady)` every
//!   period (`shrink_to_2x_every_period`: the documented pattern, a no-op
//!   in the steady state); `shrink_to_fit` every 10th period
//!   (`shrink_to_fit_every_10`) or every period (`shrink_to_fit_every_period`),
//!   after which the next period grows the table again from a new table's
//!   sizes: the cost of a shrink that releases memory.
//!
//! Throughput: elements (strings). Data from the same generator as the
//! `intern` benchmark.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use strtab::{IdSet, StringId, StringTable};

#[macro_use]
mod setup;

use setup::{Fold, Interner};

/// Interns in the batch benchmarks.
const STREAM: usize = 1_000_000;

fn batch(c: &mut Criterion) {
    for (name, unique) in [("small", 5_000), ("large", 1_000_000)] {
        let strings = setup::unique_strings(unique, setup::SEED);
        // All hits: a stream over strings the table already holds.
        let stream = setup::skewed_stream(&strings, STREAM, setup::SEED ^ 1);
        let stream = &stream[stream.len() - STREAM..];
        let mut table = StringTable::new();
        for s in &strings {
            table.intern(s);
        }
        let mut g = c.benchmark_group(format!("batch/{name}"));
        g.sample_size(10)
            .throughput(Throughput::Elements(STREAM as u64));
        g.bench_function("one_by_one", |b| {
            b.iter(|| {
                for s in stream {
                    black_box(table.intern(s));
                }
            });
        });
        for size in [64, 1024] {
            let mut ids = vec![StringId::EMPTY; size];
            g.bench_function(format!("batch_{size}"), |b| {
                b.iter(|| {
                    for chunk in stream.chunks(size) {
                        table.intern_batch(chunk, &mut ids[..chunk.len()]);
                        black_box(&ids);
                    }
                });
            });
        }
        let mut peer = setup::SiBuffer::<Fold>::new();
        for s in &strings {
            peer.intern(s);
        }
        g.bench_function("si-buffer_one_by_one", |b| {
            b.iter(|| {
                for s in stream {
                    black_box(peer.intern(s));
                }
            });
        });
        g.finish();
    }
}

fn merge(c: &mut Criterion) {
    let strings = setup::input_strings();
    let stream = setup::skewed_stream(&strings, setup::STREAM_LEN, setup::SEED);
    let hasher = Fold::default();
    // Eight threads, each seeing an interleaved eighth of the stream.
    let threads: Vec<StringTable<Fold>> = (0..8)
        .map(|t| {
            let mut table = StringTable::builder().hasher(hasher.clone()).build();
            for s in stream.iter().skip(t).step_by(8) {
                table.intern(s);
            }
            table
        })
        .collect();
    let total: usize = threads.iter().map(StringTable::len).sum();
    let mut g = c.benchmark_group("merge/8_threads");
    g.sample_size(10)
        .throughput(Throughput::Elements(total as u64));
    let fresh = || StringTable::builder().hasher(hasher.clone()).build();
    let merge_all = |global: &mut StringTable<Fold>| {
        for t in &threads {
            black_box(global.merge(t));
        }
    };
    g.bench_function("merge", |b| {
        b.iter_batched_ref(fresh, merge_all, BatchSize::LargeInput);
    });
    // What the merged table holds, as the last period's export would
    // tell a profiler.
    let mut merged = fresh();
    merge_all(&mut merged);
    let (strings, bytes) = (merged.len() - 1, merged.iter().map(str::len).sum());
    drop(merged);
    g.bench_function("merge_reserved", |b| {
        b.iter_batched_ref(
            fresh,
            |global| {
                global.reserve(strings, bytes);
                merge_all(global);
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("reintern", |b| {
        b.iter_batched_ref(
            fresh,
            |global| {
                for t in &threads {
                    let remap: Vec<StringId> = t.iter().map(|s| global.intern(s)).collect();
                    black_box(remap);
                }
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

fn compact(c: &mut Criterion) {
    let strings = setup::input_strings();
    let mut table = StringTable::new();
    for s in &strings {
        table.intern(s);
    }
    let keep: IdSet = (0..table.len() as u32)
        .step_by(10)
        .map(StringId::from_u32)
        .collect();
    let mut g = c.benchmark_group("compact/100k_keep_10pct");
    g.sample_size(20)
        .throughput(Throughput::Elements(table.len() as u64));
    g.bench_function("compact", |b| b.iter(|| black_box(table.compact(&keep))));
    g.bench_function("rebuild", |b| {
        b.iter(|| {
            let mut new = StringTable::builder()
                .hasher(table.hasher().clone())
                .build();
            let remap: Vec<Option<StringId>> = table
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    keep.contains(StringId::from_u32(i as u32))
                        .then(|| new.intern(s))
                })
                .collect();
            black_box((new, remap))
        });
    });
    g.finish();
}

/// Strings of one period: hot ones, then label values.
const PERIOD_UNIQUE: usize = 6_000;
/// Hits per period after the misses.
const PERIOD_HITS: usize = 24_000;

fn period(c: &mut Criterion) {
    let strings = setup::unique_strings(PERIOD_UNIQUE, setup::SEED);
    let hits = setup::skewed_stream(&strings, PERIOD_HITS, setup::SEED ^ 2);
    let hits = &hits[hits.len() - PERIOD_HITS..];
    let fill = |table: &mut StringTable| {
        for s in &strings {
            black_box(table.intern(s));
        }
        for s in hits {
            black_box(table.intern(s));
        }
    };
    // The steady footprint: what a period needs.
    let mut table = StringTable::new();
    fill(&mut table);
    let steady = table.memory_usage();
    let mut g = c.benchmark_group("period/steady");
    g.sample_size(20)
        .throughput(Throughput::Elements((PERIOD_UNIQUE + PERIOD_HITS) as u64));
    // (name, shrink after the clear of period n)
    type Policy = fn(&mut StringTable, usize, usize);
    let policies: [(&str, Policy); 4] = [
        ("clear_only", |_, _, _| {}),
        ("shrink_to_2x_every_period", |t, _, steady| {
            t.shrink_to(2 * steady)
        }),
        ("shrink_to_fit_every_10", |t, n, _| {
            if n % 10 == 0 {
                t.shrink_to_fit();
            }
        }),
        ("shrink_to_fit_every_period", |t, _, _| t.shrink_to_fit()),
    ];
    for (name, shrink) in policies {
        let mut n = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                fill(&mut table);
                table.clear();
                shrink(&mut table, n, steady);
                n += 1;
            });
        });
        // Leave the table at its steady size for the next policy.
        table.clear();
        fill(&mut table);
        table.clear();
    }
    g.finish();
}

criterion_group!(benches, batch, merge, compact, period);
criterion_main!(benches);
