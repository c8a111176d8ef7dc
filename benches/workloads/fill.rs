//! Workload 3: fill an empty table with 100k unique strings (all misses).
//!
//! Dimensions: `fill/no_hint/<impl>` starts from the implementation's
//! default empty table; `fill/hint/<impl>` from one pre-sized with the
//! string count and total bytes (or the part of that hint it accepts).
//! Throughput: 100k elements and their bytes.
//!
//! Timed: creating the table, the interns and the drop (`Bencher::iter`
//! drops the returned table inside the timing).

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

use crate::setup::{self, Interner};

fn fill<T: Interner>(
    name: &str,
    g: &mut BenchmarkGroup<'_, WallTime>,
    strings: &[String],
    bytes: usize,
) {
    g.bench_function(format!("no_hint/{name}"), |b| {
        b.iter(|| {
            let mut t = T::new();
            for s in strings {
                black_box(t.intern(s));
            }
            t
        });
    });
    g.bench_function(format!("hint/{name}"), |b| {
        b.iter(|| {
            let mut t = T::with_capacity(strings.len() + 1, bytes);
            for s in strings {
                black_box(t.intern(s));
            }
            t
        });
    });
}

pub(crate) fn bench(c: &mut Criterion) {
    let strings = setup::input_strings();
    let bytes = setup::total_bytes(&strings);
    let mut g = c.benchmark_group("fill");
    g.sample_size(10).throughput(Throughput::ElementsAndBytes {
        elements: strings.len() as u64,
        bytes: bytes as u64,
    });
    for_each_impl!(fill(&mut g, &strings, bytes));
    g.finish();
}
