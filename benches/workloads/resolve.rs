//! Workload 5: resolve and iterate, copying every string into a
//! length-prefixed buffer as an encoder does.
//!
//! Dimensions: `resolve/resolve_copy/<impl>` resolves the ids of the 1M
//! interns of the profiler stream (skewed, random access) and appends
//! `u32 length + bytes` for each to a reused buffer;
//! `resolve/iterate_copy/<impl>` iterates the table's 100k strings in id
//! order and does the same. Throughput: elements and bytes copied.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

use crate::setup::{self, Interner};

#[inline]
fn put(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

fn resolve_copy<T: Interner>(name: &str, g: &mut BenchmarkGroup<'_, WallTime>, stream: &[&str]) {
    let mut t = T::new();
    let ids: Vec<u32> = stream.iter().map(|s| t.intern(s)).collect();
    assert!(ids.iter().zip(stream).all(|(&id, s)| t.resolve(id) == *s));
    let mut buf = Vec::with_capacity(setup::total_bytes(stream) + 4 * stream.len());
    g.bench_function(format!("resolve_copy/{name}"), |b| {
        b.iter(|| {
            buf.clear();
            for &id in &ids {
                put(&mut buf, t.resolve(black_box(id)));
            }
            black_box(buf.as_ptr());
        });
    });
}

fn iterate_copy<T: Interner>(name: &str, g: &mut BenchmarkGroup<'_, WallTime>, strings: &[String]) {
    let mut t = T::new();
    for s in strings {
        t.intern(s);
    }
    let mut buf = Vec::with_capacity(setup::total_bytes(strings) + 4 * (strings.len() + 1));
    g.bench_function(format!("iterate_copy/{name}"), |b| {
        b.iter(|| {
            buf.clear();
            t.for_each_str(|s| put(&mut buf, s));
            black_box(buf.as_ptr());
        });
    });
}

pub(crate) fn bench(c: &mut Criterion) {
    let strings = setup::input_strings();
    let stream = setup::skewed_stream(&strings, setup::STREAM_LEN, setup::SEED);

    let mut g = c.benchmark_group("resolve");
    g.sample_size(10).throughput(Throughput::ElementsAndBytes {
        elements: stream.len() as u64,
        bytes: setup::total_bytes(&stream) as u64,
    });
    for_each_impl!(resolve_copy(&mut g, &stream));
    g.throughput(Throughput::ElementsAndBytes {
        elements: strings.len() as u64 + 1,
        bytes: setup::total_bytes(&strings) as u64,
    });
    for_each_impl!(iterate_copy(&mut g, &strings));
    g.finish();
}
