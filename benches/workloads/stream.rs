//! Workload 2 and 7: the profiler stream and its hash-only floor.
//!
//! Dimensions: `stream/intern/<impl>` runs 1M skewed interns over 100k
//! unique generated strings (10% misses, spread over the stream) into a
//! fresh table, no capacity hints; `stream/hash_only` hashes the same 1M
//! strings with the same hasher and no table (the floor);
//! `stream_default_hasher/intern/<impl>` repeats the intern run with each
//! implementation at its own default hasher. Throughput: 1M elements and
//! the stream's bytes.
//!
//! Timed: creating the table, the interns and the drop (`Bencher::iter`
//! drops the returned table inside the timing).

use std::hash::BuildHasher;
use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

use crate::setup::{self, Fold, Interner};

fn intern<T: Interner>(name: &str, g: &mut BenchmarkGroup<'_, WallTime>, stream: &[&str]) {
    g.bench_function(format!("intern/{name}"), |b| {
        b.iter(|| {
            let mut t = T::new();
            for s in stream {
                black_box(t.intern(s));
            }
            t
        });
    });
}

pub(crate) fn bench(c: &mut Criterion) {
    let strings = setup::input_strings();
    let stream = setup::skewed_stream(&strings, setup::STREAM_LEN, setup::SEED);
    let throughput = Throughput::ElementsAndBytes {
        elements: stream.len() as u64,
        bytes: setup::total_bytes(&stream) as u64,
    };

    let mut g = c.benchmark_group("stream");
    g.sample_size(10).throughput(throughput.clone());
    let hasher = Fold::default();
    g.bench_function("hash_only", |b| {
        b.iter(|| {
            for s in &stream {
                black_box(hasher.hash_one(black_box(*s)));
            }
        });
    });
    for_each_impl!(intern(&mut g, &stream));
    g.finish();

    let mut g = c.benchmark_group("stream_default_hasher");
    g.sample_size(10).throughput(throughput);
    for_each_default_hasher!(intern(&mut g, &stream));
    g.finish();
}
