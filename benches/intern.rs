//! Side-by-side benchmarks of `strtab` and the interners a profiler team
//! would pick instead, on profiler workloads: `cargo bench --bench intern`.
//!
//! Implementations (see `setup/mod.rs`): `strtab`, lasso `Rodeo` (Spur),
//! string-interner with `StringBackend` and `BufferBackend` (`SymbolU32`),
//! blazinterner `ArenaStr` (u32), `IndexSet<Box<str>>` (libdatadog's old
//! table) and a naive `HashMap<String, u32>` + `Vec<String>`. Every
//! comparison uses one hasher (foldhash, hashbrown's `DefaultHashBuilder`);
//! the `stream_default_hasher` group shows each at its own default.
//!
//! Groups, one per workload:
//! 1. `wordpress`: the 1,059 strings of `tests/data/wordpress.pprof`.
//! 2. `stream`: 1M skewed interns over 100k unique generated strings, plus
//!    the hash-only floor (`stream/hash_only`).
//! 3. `fill`: 100k unique strings into an empty table, without and with
//!    capacity hints.
//! 4. `get`: hits and misses.
//! 5. `resolve`: resolve ids and iterate, copying into a length-prefixed
//!    buffer.
//! 6. `encode`: the pprof string table, direct vs prost `Vec<String>`.
//! 7. `replay`: the intern calls of a profile build (the WordPress fixture
//!    and the `pprof` example's simulated profile), one by one for every
//!    implementation, and strtab's `intern_batch` per sample against the
//!    plain loop.
//!
//! Workloads that start from an empty table (`wordpress/intern_empty`,
//! `stream`, `fill`, `replay`) time the table's creation with the interns,
//! and not its drop.
//!
//! Data is deterministic (fixed-seed splitmix64). `benches/README.md` has
//! the commands and results.

use criterion::{Criterion, criterion_group, criterion_main};

#[macro_use]
mod setup;

#[path = "workloads/encode.rs"]
mod encode;
#[path = "workloads/fill.rs"]
mod fill;
#[path = "workloads/get.rs"]
mod get;
#[path = "workloads/replay.rs"]
mod replay;
#[path = "workloads/resolve.rs"]
mod resolve;
#[path = "workloads/stream.rs"]
mod stream;
#[path = "workloads/wordpress.rs"]
mod wordpress;

fn all(c: &mut Criterion) {
    wordpress::bench(c);
    stream::bench(c);
    fill::bench(c);
    get::bench(c);
    resolve::bench(c);
    encode::bench(c);
    replay::bench(c);
}

criterion_group!(benches, all);
criterion_main!(benches);
