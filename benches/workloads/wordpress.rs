//! Workload 1: the WordPress fixture (`tests/data/wordpress.pprof`, 1,059
//! real pprof strings including `""`).
//!
//! Dimensions: `wordpress/intern_empty/<impl>` interns every string into a
//! fresh table; `wordpress/reintern/<impl>` interns them all again into a
//! table that holds them (all hits). Throughput: 1,059 elements and their
//! bytes.
//!
//! Timed: for `intern_empty`, creating the table and the interns
//! and its drop (`Bencher::iter` drops the returned table inside the
//! timing, as a profiler drops or clears each table it builds); for
//! `reintern`, the second pass only.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

use crate::setup::{self, Interner};

fn intern_empty<T: Interner>(name: &str, g: &mut BenchmarkGroup<'_, WallTime>, strings: &[String]) {
    g.bench_function(format!("intern_empty/{name}"), |b| {
        b.iter(|| {
            let mut t = T::new();
            for s in strings {
                black_box(t.intern(s));
            }
            t
        });
    });
}

fn reintern<T: Interner>(name: &str, g: &mut BenchmarkGroup<'_, WallTime>, strings: &[String]) {
    let mut t = T::new();
    for s in strings {
        t.intern(s);
    }
    g.bench_function(format!("reintern/{name}"), |b| {
        b.iter(|| {
            for s in strings {
                black_box(t.intern(black_box(s)));
            }
        });
    });
}

pub(crate) fn bench(c: &mut Criterion) {
    let strings = setup::wordpress_strings();
    assert_eq!(strings.len(), 1059);
    let mut g = c.benchmark_group("wordpress");
    g.throughput(Throughput::ElementsAndBytes {
        elements: strings.len() as u64,
        bytes: setup::total_bytes(&strings) as u64,
    });
    for_each_impl!(intern_empty(&mut g, &strings));
    for_each_impl!(reintern(&mut g, &strings));
    g.finish();
}
