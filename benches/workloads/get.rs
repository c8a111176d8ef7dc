//! Workload 4: `get` on a table holding the 100k unique strings.
//!
//! Dimensions: `get/hit/<impl>` looks up all 100k strings in a shuffled
//! order (uniform, so most lookups miss the CPU caches);
//! `get/miss/<impl>` looks up 100k other strings of the same shape that the
//! table does not hold. Throughput: 100k elements and their bytes.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

use crate::setup::{self, Interner};

fn get<T: Interner>(
    name: &str,
    g: &mut BenchmarkGroup<'_, WallTime>,
    strings: &[String],
    hits: &[&str],
    misses: &[&str],
) {
    let mut t = T::new();
    for s in strings {
        t.intern(s);
    }
    assert!(hits.iter().all(|s| t.get(s).is_some()));
    assert!(misses.iter().all(|s| t.get(s).is_none()));
    g.bench_function(format!("hit/{name}"), |b| {
        b.iter(|| {
            for s in hits {
                black_box(t.get(black_box(s)));
            }
        });
    });
    g.bench_function(format!("miss/{name}"), |b| {
        b.iter(|| {
            for s in misses {
                black_box(t.get(black_box(s)));
            }
        });
    });
}

pub(crate) fn bench(c: &mut Criterion) {
    let strings = setup::input_strings();
    let hits = setup::shuffled(&strings, setup::SEED);
    let present: std::collections::HashSet<&str> = strings.iter().map(String::as_str).collect();
    let others = setup::unique_strings(setup::UNIQUE + setup::UNIQUE / 2, setup::MISS_SEED);
    let misses: Vec<&str> = others
        .iter()
        .map(String::as_str)
        .filter(|s| !present.contains(s))
        .take(setup::UNIQUE)
        .collect();
    assert_eq!(misses.len(), setup::UNIQUE);
    let mut g = c.benchmark_group("get");
    g.sample_size(10).throughput(Throughput::ElementsAndBytes {
        elements: hits.len() as u64,
        bytes: setup::total_bytes(&hits) as u64,
    });
    for_each_impl!(get(&mut g, &strings, &hits, &misses));
    g.finish();
}
