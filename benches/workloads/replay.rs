//! Workload 8: replay the intern calls a profiler makes while it builds a
//! real profile, in its order (`setup::ReplayProfile::replay`): per sample,
//! per location the mapping's filename, per line the function's name,
//! system name and filename, then each label's key, str value and
//! num_unit (the last two when non-zero).
//!
//! Sources: `wordpress` (`tests/data/wordpress.pprof`: 3,330 samples,
//! 203,472 calls over 1,054 distinct strings), `go`
//! (`tests/data/go-cpu.pprof`, a CPU profile Go's runtime wrote: 9,445
//! samples, 477,381 calls over 839 distinct strings) and `sim` (the
//! profile `examples/pprof.rs` simulates: 49,979 merged samples,
//! 2,316,965 calls over 3,941 distinct strings). All three tables stay
//! cache-resident.
//!
//! Dimensions: `replay/<source>/intern/<impl>` interns every call one by
//! one into a fresh table; `replay/<source>/batch/strtab` calls
//! `intern_batch` once per sample into a reused ids buffer, and
//! `replay/<source>/loop_ids/strtab` is its baseline, a plain `intern`
//! loop writing the same ids into the same buffer. Throughput: the calls
//! and their bytes.
//!
//! Timed: creating the table, every call and the drop (`Bencher::iter`
//! drops the returned table inside the timing).
//! The ids buffer is allocated once, outside the timing.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use strtab::{StringId, StringTable};

use crate::setup::{self, Fold, Interner, Replay, ReplayProfile};

fn intern<T: Interner>(
    name: &str,
    g: &mut BenchmarkGroup<'_, WallTime>,
    source: &str,
    replay: &Replay<'_>,
) {
    g.bench_function(format!("{source}/intern/{name}"), |b| {
        b.iter(|| {
            let mut t = T::new();
            for s in &replay.strings {
                black_box(t.intern(s));
            }
            t
        });
    });
}

fn batch_vs_loop(g: &mut BenchmarkGroup<'_, WallTime>, source: &str, replay: &Replay<'_>) {
    let mut ids = vec![StringId::EMPTY; replay.max_sample_len()];
    // Both variants give the ids one-by-one interning gives.
    let mut expected = setup::strtab_new();
    let expected: Vec<StringId> = replay.strings.iter().map(|s| expected.intern(s)).collect();
    for run in [
        setup::replay_batch::<StringTable<Fold>>,
        setup::replay_loop::<StringTable<Fold>>,
    ] {
        let mut t = setup::strtab_new();
        let mut got = Vec::with_capacity(expected.len());
        for sample in replay.samples() {
            let one = Replay {
                strings: sample.to_vec(),
                ends: vec![sample.len()],
            };
            run(&mut t, &one, &mut ids);
            got.extend_from_slice(&ids[..sample.len()]);
        }
        assert_eq!(got, expected);
    }

    g.bench_function(format!("{source}/batch/strtab"), |b| {
        b.iter(|| {
            let mut t = setup::strtab_new();
            setup::replay_batch(&mut t, replay, &mut ids);
            t
        });
    });
    g.bench_function(format!("{source}/loop_ids/strtab"), |b| {
        b.iter(|| {
            let mut t = setup::strtab_new();
            setup::replay_loop(&mut t, replay, &mut ids);
            t
        });
    });
}

pub(crate) fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    let mut sources = vec![
        ("wordpress", ReplayProfile::wordpress()),
        ("go", ReplayProfile::go()),
        ("sim", ReplayProfile::sim()),
    ];
    // A profile that is not in this repository, if one is named.
    if std::env::var_os("STRTAB_PPROF").is_some() {
        sources.push(("pprof", ReplayProfile::from_env()));
    }
    for (source, profile) in sources {
        let replay = profile.replay();
        g.throughput(Throughput::ElementsAndBytes {
            elements: replay.strings.len() as u64,
            bytes: setup::total_bytes(&replay.strings) as u64,
        });
        for_each_impl!(intern(&mut g, source, &replay));
        batch_vs_loop(&mut g, source, &replay);
    }
    g.finish();
}
