//! Workload 6: encode the pprof `string_table` (field 6 of `Profile`) of
//! a table holding the 100k unique strings.
//!
//! Dimensions: `encode/strtab_direct` writes the field straight from
//! `StringTable::iter` with `strtab::pprof::write_string_table` into a
//! reused output buffer; `encode/prost_vec_string` builds the
//! `Vec<String>` prost needs from the same table and encodes that message
//! into the same kind of buffer. Both produce identical bytes (checked).
//! Throughput: 100k elements and the encoded bytes.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput};
use prost::Message;

use crate::setup::{self, StringTableOnly};

pub(crate) fn bench(c: &mut Criterion) {
    let strings = setup::input_strings();
    let mut table = strtab::StringTable::new();
    for s in &strings {
        table.intern(s);
    }
    let len = strtab::pprof::string_table_len(table.iter());

    let mut direct = Vec::new();
    strtab::pprof::write_string_table(table.iter(), &mut direct);
    let via_prost = StringTableOnly {
        string_table: table.iter().map(str::to_owned).collect(),
    }
    .encode_to_vec();
    assert_eq!(direct, via_prost);
    assert_eq!(direct.len(), len);

    let mut g = c.benchmark_group("encode");
    g.sample_size(10).throughput(Throughput::ElementsAndBytes {
        elements: table.len() as u64,
        bytes: len as u64,
    });
    let mut buf = Vec::with_capacity(len);
    g.bench_function("strtab_direct", |b| {
        b.iter(|| {
            buf.clear();
            strtab::pprof::write_string_table(table.iter(), &mut buf);
            black_box(buf.as_ptr());
        });
    });
    g.bench_function("strtab_direct_fresh_buffer", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(strtab::pprof::string_table_len(table.iter()));
            strtab::pprof::write_string_table(table.iter(), &mut out);
            out
        });
    });
    g.bench_function("prost_vec_string", |b| {
        b.iter_batched_ref(
            || Vec::with_capacity(len),
            |out| {
                let msg = StringTableOnly {
                    string_table: table.iter().map(str::to_owned).collect(),
                };
                msg.encode(out).unwrap();
                black_box(out.as_ptr());
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}
