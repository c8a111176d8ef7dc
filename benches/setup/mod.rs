//! Shared by the `intern`, `ops`, `profile` and `concurrent` benchmarks and
//! `examples/memory.rs`: the deterministic workload generator, the
//! WordPress fixture reader, the profile-build replay streams, and one
//! adapter per interner so that every workload is written once.
//!
//! Data is generated with an in-tree fixed-seed PRNG (splitmix64), so every
//! run and every process sees the same strings in the same order.
#![allow(dead_code, unreachable_pub, unused_macros)]

use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::num::NonZeroUsize;

/// The hasher every implementation uses in the side-by-side comparisons:
/// hashbrown's default (foldhash, randomly seeded), which `strtab` uses by
/// default.
pub type Fold = hashbrown::DefaultHashBuilder;
/// The Fx hasher, as libdatadog's old `IndexSet` string table used.
pub type Fx = BuildHasherDefault<rustc_hash::FxHasher>;
/// The standard library's SipHash-1-3 `RandomState`.
pub type Std = std::collections::hash_map::RandomState;

// ---------------------------------------------------------------------------
// PRNG

/// splitmix64: small, fast, good enough for workload generation.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the tiny modulo bias does not matter here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len())]
    }
}

// ---------------------------------------------------------------------------
// Realistic profiler strings

const CRATES: &[&str] = &[
    "tokio",
    "hyper",
    "axum",
    "serde_json",
    "regex",
    "alloc",
    "core",
    "std",
    "rayon_core",
    "futures_util",
    "tower",
    "h2",
    "bytes",
    "tracing",
    "crossbeam_channel",
    "parking_lot",
    "hashbrown",
    "prost",
    "tonic",
    "mio",
    "sqlx_core",
    "reqwest",
    "rustls",
    "ring",
    "libdd_profiling",
    "datadog_agent",
    "opentelemetry",
];
const MODULES: &[&str] = &[
    "runtime",
    "task",
    "harness",
    "scheduler",
    "multi_thread",
    "worker",
    "io",
    "driver",
    "proto",
    "h1",
    "dispatch",
    "conn",
    "codec",
    "decoder",
    "encoder",
    "raw_vec",
    "vec",
    "string",
    "fmt",
    "iter",
    "adapters",
    "map",
    "sync",
    "mpsc",
    "queue",
    "pool",
    "client",
    "server",
    "service",
    "layer",
    "buf",
    "de",
    "ser",
    "value",
    "read",
    "write",
    "net",
    "tcp",
    "record",
    "exporter",
    "internal",
    "collector",
    "profile",
];
const TYPES: &[&str] = &[
    "Harness",
    "Core",
    "Worker",
    "Handle",
    "Context",
    "Dispatcher",
    "Conn",
    "Decoder",
    "Encoder",
    "RawVec",
    "Vec",
    "String",
    "Formatter",
    "Map",
    "Receiver",
    "Sender",
    "Pool",
    "Client",
    "Server",
    "Service",
    "BytesMut",
    "Deserializer",
    "Serializer",
    "Value",
    "TcpStream",
    "Registry",
    "Span",
    "Profile",
    "StringTable",
    "Sample",
    "Location",
    "Mapping",
    "Function",
    "Exporter",
    "Collector",
    "Buffer",
];
const METHODS: &[&str] = &[
    "poll",
    "run",
    "call",
    "next",
    "new",
    "push",
    "insert",
    "get",
    "read",
    "write",
    "flush",
    "encode",
    "decode",
    "parse",
    "serialize",
    "deserialize",
    "with_capacity",
    "reserve",
    "grow_one",
    "fmt",
    "drop",
    "clone",
    "handle",
    "process",
    "dispatch",
    "send",
    "recv",
    "try_recv",
    "block_on",
    "spawn",
    "poll_next",
    "poll_ready",
    "into_iter",
    "fold",
    "for_each",
    "collect",
    "extend",
    "intern",
    "resolve",
    "add_sample",
];
const CPP_NS: &[&str] = &[
    "std",
    "std::__1",
    "boost::asio",
    "absl",
    "folly",
    "grpc_core",
    "v8::internal",
    "llvm",
    "google::protobuf",
    "mongo",
    "rocksdb",
    "clickhouse",
    "tensorflow",
    "Eigen::internal",
    "nlohmann::detail",
];
const CPP_ARGS: &[&str] = &[
    "int",
    "unsigned long",
    "char const*",
    "void*",
    "std::string const&",
    "double",
    "bool",
    "size_t",
    "std::vector<int, std::allocator<int> >&",
    "absl::string_view",
    "Slice const&",
    "unsigned int",
];
const JAVA_ORGS: &[&str] = &[
    "org.springframework",
    "com.fasterxml.jackson",
    "io.netty",
    "org.apache.kafka",
    "com.google.common",
    "java.util",
    "java.util.concurrent",
    "jdk.internal",
    "org.hibernate",
    "io.grpc",
    "com.datadoghq",
    "org.eclipse.jetty",
    "reactor.core",
    "io.micrometer",
];
const JAVA_PKGS: &[&str] = &[
    "web",
    "servlet",
    "core",
    "databind",
    "deser",
    "channel",
    "nio",
    "clients",
    "producer",
    "collect",
    "locks",
    "reflect",
    "engine",
    "internal",
    "server",
    "handler",
    "publisher",
    "util",
    "impl",
    "http",
];
const LABEL_KEYS: &[&str] = &[
    "thread name",
    "thread id",
    "span id",
    "local root span id",
    "trace endpoint",
    "exception type",
    "mutex",
    "lock name",
    "gc cause",
    "task name",
    "runtime-id",
    "service",
    "env",
    "version",
    "host",
];
const ROUTES: &[&str] = &[
    "users", "orders", "items", "cart", "search", "auth", "metrics", "health", "api",
];
const VERBS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH"];
const EXTS_RUST: &[&str] = &["rs"];
const EXTS_CPP: &[&str] = &["cc", "cpp", "h", "hpp"];

fn clamp(mut s: String, max: usize) -> String {
    if s.len() > max {
        s.truncate(max); // ASCII only
    }
    s
}

/// One realistic profiler string; kinds in profiler-like proportions.
pub fn profiler_string(rng: &mut Rng) -> String {
    let kind = rng.below(100);
    let s = if kind < 35 {
        // Rust symbol, legacy-mangled style with hash suffix.
        let depth = 1 + rng.below(4);
        let mut s = rng.pick(CRATES).to_owned();
        for _ in 0..depth {
            s.push_str("::");
            s.push_str(rng.pick(MODULES));
        }
        s.push_str("::");
        s.push_str(rng.pick(TYPES));
        if rng.below(3) == 0 {
            s.push('<');
            s.push_str(rng.pick(CRATES));
            s.push_str("::");
            s.push_str(rng.pick(TYPES));
            s.push('>');
        }
        s.push_str("::");
        s.push_str(rng.pick(METHODS));
        if rng.below(4) == 0 {
            s.push_str("::{{closure}}");
        }
        if rng.below(2) == 0 {
            s.push_str(&format!("::h{:016x}", rng.next_u64()));
        }
        s
    } else if kind < 55 {
        // C++ demangled name with template args and a signature.
        let mut s = format!("{}::{}", rng.pick(CPP_NS), rng.pick(TYPES));
        if rng.below(2) == 0 {
            s.push_str(&format!("<{}, {}>", rng.pick(CPP_ARGS), rng.pick(CPP_ARGS)));
        }
        s.push_str("::");
        s.push_str(rng.pick(METHODS));
        s.push('(');
        for i in 0..rng.below(4) {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(rng.pick(CPP_ARGS));
        }
        s.push(')');
        if rng.below(3) == 0 {
            s.push_str(" const");
        }
        s
    } else if kind < 75 {
        // Java method.
        let mut s = rng.pick(JAVA_ORGS).to_owned();
        for _ in 0..1 + rng.below(3) {
            s.push('.');
            s.push_str(rng.pick(JAVA_PKGS));
        }
        s.push('.');
        s.push_str(rng.pick(TYPES));
        if rng.below(4) == 0 {
            s.push_str(&format!(
                "$$Lambda${}/0x{:012x}",
                rng.below(2000),
                rng.next_u64() >> 16
            ));
        }
        s.push('.');
        s.push_str(rng.pick(METHODS));
        s
    } else if kind < 90 {
        // File path.
        match rng.below(3) {
            0 => format!(
                "/home/runner/.cargo/registry/src/index.crates.io-6f17d22bba15001f/{}-{}.{}.{}/src/{}/{}.{}",
                rng.pick(CRATES),
                rng.below(3),
                rng.below(40),
                rng.below(20),
                rng.pick(MODULES),
                rng.pick(MODULES),
                rng.pick(EXTS_RUST)
            ),
            1 => format!(
                "/usr/src/{}/{}/{}/{}.{}",
                rng.pick(CPP_NS).replace("::", "/"),
                rng.pick(MODULES),
                rng.pick(MODULES),
                rng.pick(TYPES).to_lowercase(),
                rng.pick(EXTS_CPP)
            ),
            _ => format!(
                "src/main/java/{}/{}/{}.java",
                rng.pick(JAVA_ORGS).replace('.', "/"),
                rng.pick(JAVA_PKGS),
                rng.pick(TYPES)
            ),
        }
    } else {
        // Label keys and values.
        match rng.below(5) {
            0 => rng.pick(LABEL_KEYS).to_owned(),
            1 => format!("{}", rng.next_u64()),
            2 => format!("pool-{}-thread-{}", rng.below(64), rng.below(512)),
            3 => format!(
                "{} /{}/v{}/{}/{}",
                rng.pick(VERBS),
                rng.pick(ROUTES),
                1 + rng.below(3),
                rng.pick(ROUTES),
                rng.below(100_000)
            ),
            _ => format!(
                "{:032x}",
                u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
            ),
        }
    };
    clamp(s, 200)
}

/// `n` distinct, non-empty profiler strings, deterministic for a seed.
pub fn unique_strings(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut seen = HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let s = profiler_string(&mut rng);
        if !s.is_empty() && seen.insert(s.clone()) {
            out.push(s);
        }
    }
    out
}

/// The distinct non-empty lines of the file at `path`, in file order, at
/// most `max` of them: real strings (a binary's symbol names, a profile's
/// paths) for the workloads that otherwise generate theirs.
///
/// # Panics
///
/// Panics if the file cannot be read or holds no non-empty line.
pub fn strings_of_file(path: &std::path::Path, max: usize) -> Vec<String> {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = String::from_utf8_lossy(&text);
    let mut seen = HashSet::new();
    let out: Vec<String> = text
        .lines()
        .filter(|l| !l.is_empty() && seen.insert(*l))
        .take(max)
        .map(str::to_owned)
        .collect();
    assert!(!out.is_empty(), "{}: no non-empty line", path.display());
    out
}

/// The workloads' unique strings: [`UNIQUE`] generated profiler strings
/// ([`unique_strings`]), or, with `STRTAB_STRINGS=FILE` in the
/// environment, the distinct non-empty lines of `FILE` (at most
/// [`UNIQUE`], [`strings_of_file`]): real strings, such as a binary's
/// symbol names, for every benchmark that otherwise generates its own.
/// (No `workload` in its name: `benches/profile.rs` measures the
/// functions that have it.)
pub fn input_strings() -> Vec<String> {
    match std::env::var_os("STRTAB_STRINGS") {
        Some(path) => strings_of_file(path.as_ref(), UNIQUE),
        None => unique_strings(UNIQUE, SEED),
    }
}

/// Number of unique strings in workloads 2 to 6.
pub const UNIQUE: usize = 100_000;
/// Number of interns in the profiler stream (workload 2).
pub const STREAM_LEN: usize = 1_000_000;
/// Seed of the unique strings.
pub const SEED: u64 = 0x5EED_0F57_A7AB;
/// Seed of the miss strings (never in the table).
pub const MISS_SEED: u64 = 0xBAD_5EED;

/// A profiler-like stream of `len` interns over `strings`: every string
/// appears (its first appearance is a miss), new strings arrive at a steady
/// rate, and the rest re-intern strings already seen with a skew towards
/// the hot ones seen early (index = seen * u^3: about half of the hits go
/// to the first 10% of strings).
pub fn skewed_stream<S: AsRef<str>>(strings: &[S], len: usize, seed: u64) -> Vec<&str> {
    let mut rng = Rng::new(seed);
    let n = strings.len();
    let mut out = Vec::with_capacity(len.max(n));
    let mut next_new = 0;
    for step in 0..len {
        // Keep the arrivals spread over the whole stream.
        let due = (step + 1) * n / len;
        if next_new < n && (next_new < due || next_new == 0) {
            out.push(strings[next_new].as_ref());
            next_new += 1;
        } else {
            let u = rng.unit();
            let i = ((next_new as f64) * u * u * u) as usize;
            out.push(strings[i.min(next_new - 1)].as_ref());
        }
    }
    out.extend(strings[next_new..].iter().map(AsRef::as_ref));
    out
}

/// A uniform random permutation of `strings` (for `get` hits).
pub fn shuffled(strings: &[String], seed: u64) -> Vec<&str> {
    let mut v: Vec<&str> = strings.iter().map(String::as_str).collect();
    let mut rng = Rng::new(seed);
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i + 1));
    }
    v
}

/// Total bytes of `strings`.
pub fn total_bytes<S: AsRef<str>>(strings: &[S]) -> usize {
    strings.iter().map(|s| s.as_ref().len()).sum()
}

// ---------------------------------------------------------------------------
// The WordPress fixture

/// Only the `string_table` (field 6) of pprof's `Profile`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringTableOnly {
    /// `repeated string string_table = 6;`
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
}

/// The 1,059 strings of `tests/data/wordpress.pprof` (index 0 is `""`).
pub fn wordpress_strings() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wordpress.pprof");
    let bytes = std::fs::read(path).expect("read tests/data/wordpress.pprof");
    <StringTableOnly as prost::Message>::decode(bytes.as_slice())
        .expect("decode pprof")
        .string_table
}

// ---------------------------------------------------------------------------
// Profile-build replay

/// The pprof model, reader and simulated profiler of `examples/common`,
/// included read-only (the examples' own files, so the replay sees exactly
/// the profile `examples/pprof.rs` builds). The simulator is included as
/// `simulator`, not under its file name: no function outside the measured
/// ones may match callgrind's `--toggle-collect='*workload*'`.
#[allow(dead_code, missing_docs, unreachable_pub)]
#[path = "../../examples/common"]
pub mod pprof {
    #[path = "proto.rs"]
    pub mod proto;
    #[path = "read.rs"]
    pub mod read;
    #[path = "workload.rs"]
    pub mod simulator;
}

/// A decoded profile whose `string_table` holds its strings: the source of
/// a [`Replay`].
pub struct ReplayProfile(pub pprof::proto::Profile);

impl ReplayProfile {
    /// `tests/data/wordpress.pprof` (gzip'd or raw), decoded and validated.
    pub fn wordpress() -> ReplayProfile {
        Self::file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wordpress.pprof").as_ref())
    }

    /// `tests/data/go-cpu.pprof`, a CPU profile written by Go's own
    /// `runtime/pprof` (`benches/goprof`), decoded and validated.
    pub fn go() -> ReplayProfile {
        Self::file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/go-cpu.pprof").as_ref())
    }

    /// The pprof file named by `STRTAB_PPROF` (gzip'd or raw), decoded
    /// and validated: a replay of a profile that is not in this
    /// repository, such as one a production profiler wrote (`replay-pprof`
    /// workloads, `STRTAB_SOURCE=replay-pprof`).
    ///
    /// # Panics
    ///
    /// If `STRTAB_PPROF` is unset, or the file cannot be read or decoded.
    pub fn from_env() -> ReplayProfile {
        let path = std::env::var_os("STRTAB_PPROF")
            .expect("the replay-pprof source reads the profile named by STRTAB_PPROF");
        Self::file(path.as_ref())
    }

    /// The pprof file at `path` (gzip'd or raw), decoded and validated;
    /// panics naming the file if it cannot be read or decoded.
    fn file(path: &std::path::Path) -> ReplayProfile {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let profile = pprof::read::read_profile(&bytes)
            .unwrap_or_else(|e| panic!("decode {}: {e}", path.display()));
        ReplayProfile(profile)
    }

    /// The profile `examples/pprof.rs` simulates (`Config::FULL`: 3,000
    /// functions, 100,000 samples, merged), with the simulator's table
    /// copied into its `string_table` (its ids are the table's).
    pub fn sim() -> ReplayProfile {
        let sim = pprof::simulator::simulate(&pprof::simulator::Config::FULL);
        let mut profile = sim.profile;
        profile.string_table = sim.table.iter().map(str::to_owned).collect();
        ReplayProfile(profile)
    }

    /// The intern calls a profiler makes while it builds this profile, in
    /// its order: for each sample, for each of its locations in
    /// `location_id` order, the mapping's filename (if the location has a
    /// mapping), then for each line the function's name, system_name and
    /// filename; then for each label its key, its str value if non-zero
    /// and its num_unit if non-zero.
    pub fn replay(&self) -> Replay<'_> {
        use std::collections::HashMap;
        let p = &self.0;
        let s = |i: i64| p.string_table[usize::try_from(i).expect("string index")].as_str();
        let mappings: HashMap<u64, _> = p.mapping.iter().map(|m| (m.id, m)).collect();
        let functions: HashMap<u64, _> = p.function.iter().map(|f| (f.id, f)).collect();
        let locations: HashMap<u64, _> = p.location.iter().map(|l| (l.id, l)).collect();
        let mut strings = Vec::new();
        let mut ends = Vec::with_capacity(p.sample.len());
        // A profile read from a file may refer to an id it lacks: say which.
        let missing = |what: &str, id: u64| -> ! { panic!("the profile has no {what} {id}") };
        for sample in &p.sample {
            for id in &sample.location_id {
                let loc = locations
                    .get(id)
                    .unwrap_or_else(|| missing("location", *id));
                if loc.mapping_id != 0 {
                    let m = mappings
                        .get(&loc.mapping_id)
                        .unwrap_or_else(|| missing("mapping", loc.mapping_id));
                    strings.push(s(m.filename));
                }
                for line in &loc.line {
                    let f = functions
                        .get(&line.function_id)
                        .unwrap_or_else(|| missing("function", line.function_id));
                    strings.extend([s(f.name), s(f.system_name), s(f.filename)]);
                }
            }
            for label in &sample.label {
                strings.push(s(label.key));
                if label.str != 0 {
                    strings.push(s(label.str));
                }
                if label.num_unit != 0 {
                    strings.push(s(label.num_unit));
                }
            }
            ends.push(strings.len());
        }
        Replay { strings, ends }
    }
}

/// A profile-build intern stream: every intern call in order, and where
/// each sample's calls end.
pub struct Replay<'a> {
    /// The strings interned, in call order.
    pub strings: Vec<&'a str>,
    /// `strings[ends[i - 1]..ends[i]]` are sample `i`'s calls.
    pub ends: Vec<usize>,
}

impl<'a> Replay<'a> {
    /// Each sample's strings, in order.
    pub fn samples(&self) -> impl Iterator<Item = &[&'a str]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.strings[start..end])
    }

    /// The most strings of one sample: the size of the ids buffer.
    pub fn max_sample_len(&self) -> usize {
        self.samples().map(<[_]>::len).max().unwrap_or(0)
    }
}

/// An empty strtab table with the shared hasher, as `Strtab::<Fold>::new`.
#[inline]
pub fn strtab_new() -> strtab::StringTable<Fold> {
    strtab::StringTable::builder()
        .hasher(Fold::default())
        .build()
}

/// An empty `SharedStringTable` with the shared hasher, as
/// `Shared::<Fold>::new`.
#[inline]
pub fn shared_new() -> strtab::SharedStringTable<Fold> {
    with_bench_shards(strtab::SharedStringTable::builder().hasher(Fold::default())).build()
}

/// `builder` with the shard count of `STRTAB_SHARDS` (a power of two), if
/// set, else the default one: every `SharedStringTable` the benchmarks
/// build goes through here, so that one run can compare shard counts.
pub fn with_bench_shards<H: BuildHasher>(
    builder: strtab::SharedBuilder<H>,
) -> strtab::SharedBuilder<H> {
    match std::env::var("STRTAB_SHARDS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        Some(shards) => builder.shards(shards),
        None => builder,
    }
}

/// The two strtab tables as [`replay_batch`] and [`replay_loop`] drive
/// them: `intern_batch` and `intern`.
pub trait Batching {
    /// `intern_batch`.
    fn batch(&mut self, strings: &[&str], ids: &mut [strtab::StringId]);
    /// `intern`.
    fn one(&mut self, s: &str) -> strtab::StringId;
}

/// [`Batching`] for tables whose `intern_batch` and `intern` have the
/// same names and shapes.
macro_rules! batching {
    ($($table:ty),*) => {$(
        impl Batching for $table {
            #[inline(always)]
            fn batch(&mut self, strings: &[&str], ids: &mut [strtab::StringId]) {
                self.intern_batch(strings, ids);
            }
            #[inline(always)]
            fn one(&mut self, s: &str) -> strtab::StringId {
                self.intern(s)
            }
        }
    )*};
}

batching!(strtab::StringTable<Fold>, strtab::SharedStringTable<Fold>);

/// Replays `replay` into `t` with one `intern_batch` per sample, each
/// sample's ids written to `ids[..n]`.
#[inline]
pub fn replay_batch<T: Batching>(t: &mut T, replay: &Replay<'_>, ids: &mut [strtab::StringId]) {
    for sample in replay.samples() {
        let ids = &mut ids[..sample.len()];
        t.batch(sample, ids);
        std::hint::black_box(ids);
    }
}

/// [`replay_batch`]'s baseline: the same ids into the same buffer, one
/// `intern` at a time.
#[inline]
pub fn replay_loop<T: Batching>(t: &mut T, replay: &Replay<'_>, ids: &mut [strtab::StringId]) {
    for sample in replay.samples() {
        for (s, id) in sample.iter().zip(ids.iter_mut()) {
            *id = t.one(s);
        }
        std::hint::black_box(&mut ids[..sample.len()]);
    }
}

// ---------------------------------------------------------------------------
// Adapters

/// The common interface of every implementation measured. Ids are `u32`
/// symbols as each implementation defines them (dense for all but
/// string-interner's `BufferBackend`, whose symbols are byte offsets).
pub trait Interner {
    /// An empty table with the implementation's own default sizing.
    fn new() -> Self;
    /// An empty table pre-sized for `strings` strings of `bytes` bytes (or
    /// whatever part of that hint the implementation accepts).
    fn with_capacity(strings: usize, bytes: usize) -> Self;
    fn intern(&mut self, s: &str) -> u32;
    /// `&mut self` so that blazinterner can use its lock-free `find_mut`.
    fn get(&mut self, s: &str) -> Option<u32>;
    fn resolve(&self, id: u32) -> &str;
    /// Number of strings held.
    fn len(&self) -> usize;
    /// Calls `f` on every string in id order.
    fn for_each_str(&self, f: impl FnMut(&str));
}

/// `strtab::StringTable` with hasher `H`.
pub struct Strtab<H>(pub strtab::StringTable<H>);

impl<H: BuildHasher + Default> Interner for Strtab<H> {
    fn new() -> Self {
        Strtab(strtab::StringTable::builder().hasher(H::default()).build())
    }
    fn with_capacity(strings: usize, bytes: usize) -> Self {
        Strtab(
            strtab::StringTable::builder()
                .hasher(H::default())
                .capacity(strings, bytes)
                .build(),
        )
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        self.0.intern(s).to_u32()
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0.get(s).map(strtab::StringId::to_u32)
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        &self.0[strtab::StringId::from_u32(id)]
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn for_each_str(&self, f: impl FnMut(&str)) {
        self.0.iter().for_each(f);
    }
}

/// `lasso::Rodeo` with `Spur` keys and hasher `H`; `""` interned first.
pub struct Lasso<H>(pub lasso::Rodeo<lasso::Spur, H>);

impl<H: BuildHasher + Clone + Default> Interner for Lasso<H> {
    fn new() -> Self {
        let mut r = lasso::Rodeo::with_hasher(H::default());
        r.get_or_intern("");
        Lasso(r)
    }
    fn with_capacity(strings: usize, bytes: usize) -> Self {
        let cap = lasso::Capacity::new(strings, NonZeroUsize::new(bytes.max(1)).unwrap());
        let mut r = lasso::Rodeo::with_capacity_and_hasher(cap, H::default());
        r.get_or_intern("");
        Lasso(r)
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        lasso::Key::into_usize(self.0.get_or_intern(s)) as u32
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0.get(s).map(|k| lasso::Key::into_usize(k) as u32)
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        self.0
            .resolve(&<lasso::Spur as lasso::Key>::try_from_usize(id as usize).unwrap())
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn for_each_str(&self, f: impl FnMut(&str)) {
        self.0.strings().for_each(f);
    }
}

/// `strtab::SharedStringTable` with hasher `H`, used from one thread
/// (`intern(&self)`): for the concurrent table's instruction counts.
pub struct Shared<H>(pub strtab::SharedStringTable<H>);

impl<H: BuildHasher + Default> Interner for Shared<H> {
    fn new() -> Self {
        Shared(with_bench_shards(strtab::SharedStringTable::builder().hasher(H::default())).build())
    }
    fn with_capacity(strings: usize, bytes: usize) -> Self {
        Shared(
            with_bench_shards(strtab::SharedStringTable::builder().hasher(H::default()))
                .capacity(strings, bytes)
                .build(),
        )
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        self.0.intern(s).to_u32()
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0.get(s).map(strtab::StringId::to_u32)
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        &self.0[strtab::StringId::from_u32(id)]
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn for_each_str(&self, mut f: impl FnMut(&str)) {
        for id in 0..self.0.len() {
            f(&self.0[strtab::StringId::from_u32(id as u32)]);
        }
    }
}

/// `lasso::ThreadedRodeo` with `Spur` keys and hasher `H`, used from one
/// thread; `""` interned first.
pub struct LassoThreaded<H>(pub lasso::ThreadedRodeo<lasso::Spur, H>);

impl<H: BuildHasher + Clone + Default> Interner for LassoThreaded<H> {
    fn new() -> Self {
        let r = lasso::ThreadedRodeo::with_hasher(H::default());
        r.get_or_intern("");
        LassoThreaded(r)
    }
    fn with_capacity(_strings: usize, _bytes: usize) -> Self {
        Self::new()
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        lasso::Key::into_usize(self.0.get_or_intern(s)) as u32
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0.get(s).map(|k| lasso::Key::into_usize(k) as u32)
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        self.0
            .resolve(&<lasso::Spur as lasso::Key>::try_from_usize(id as usize).unwrap())
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn for_each_str(&self, mut f: impl FnMut(&str)) {
        for id in 0..self.0.len() {
            f(self.resolve(id as u32));
        }
    }
}

/// `string_interner::StringInterner` with backend `B` (`SymbolU32`) and
/// hasher `H`; `""` interned first.
pub struct Si<B: string_interner::backend::Backend, H>(pub string_interner::StringInterner<B, H>);

/// string-interner with `StringBackend` (one `String` buffer plus end
/// offsets: constant-time resolve, dense symbols).
pub type SiString<H> =
    Si<string_interner::backend::StringBackend<string_interner::symbol::SymbolU32>, H>;
/// string-interner with `BufferBackend` (length-prefixed strings in one
/// buffer; symbols are byte offsets, so not dense).
pub type SiBuffer<H> =
    Si<string_interner::backend::BufferBackend<string_interner::symbol::SymbolU32>, H>;

impl<B, H> Interner for Si<B, H>
where
    B: string_interner::backend::Backend<Symbol = string_interner::symbol::SymbolU32>,
    H: BuildHasher + Default,
    for<'a> &'a B: IntoIterator<Item = (string_interner::symbol::SymbolU32, &'a str)>,
{
    fn new() -> Self {
        let mut i = string_interner::StringInterner::with_hasher(H::default());
        i.get_or_intern("");
        Si(i)
    }
    fn with_capacity(strings: usize, _bytes: usize) -> Self {
        // Only a string count is accepted.
        let mut i =
            string_interner::StringInterner::with_capacity_and_hasher(strings, H::default());
        i.get_or_intern("");
        Si(i)
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        string_interner::Symbol::to_usize(self.0.get_or_intern(s)) as u32
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0
            .get(s)
            .map(|k| string_interner::Symbol::to_usize(k) as u32)
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        let sym = <string_interner::symbol::SymbolU32 as string_interner::Symbol>::try_from_usize(
            id as usize,
        );
        self.0.resolve(sym.unwrap()).unwrap()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn for_each_str(&self, mut f: impl FnMut(&str)) {
        for (_, s) in &self.0 {
            f(s);
        }
    }
}

/// `blazinterner::ArenaStr` (default features: its concurrent `sync`
/// storage) with hasher `H` and `u32` ids; `""` interned first.
pub struct Blaz<H>(pub blazinterner::ArenaStr<H, u32>);

impl<H: BuildHasher + Default> Interner for Blaz<H> {
    fn new() -> Self {
        let mut a = blazinterner::ArenaStr::default();
        a.intern_mut("");
        Blaz(a)
    }
    fn with_capacity(strings: usize, bytes: usize) -> Self {
        let mut a = blazinterner::ArenaStr::with_capacity(strings, bytes);
        a.intern_mut("");
        Blaz(a)
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        self.0.intern_mut(s).id()
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0.find_mut(s).map(|i| i.id())
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        self.0.lookup(blazinterner::InternedStr::from_id(id))
    }
    fn len(&self) -> usize {
        self.0.strings()
    }
    #[inline(always)]
    fn for_each_str(&self, f: impl FnMut(&str)) {
        self.0.iter().for_each(f);
    }
}

/// `indexmap::IndexSet<Box<str>, H>`: the table profilers used before
/// arenas (libdatadog's old string table, with Fx); `""` inserted first.
pub struct IdxSet<H>(pub indexmap::IndexSet<Box<str>, H>);

impl<H: BuildHasher + Default> Interner for IdxSet<H> {
    fn new() -> Self {
        let mut s = indexmap::IndexSet::with_hasher(H::default());
        s.insert(Box::from(""));
        IdxSet(s)
    }
    fn with_capacity(strings: usize, _bytes: usize) -> Self {
        let mut s = indexmap::IndexSet::with_capacity_and_hasher(strings, H::default());
        s.insert(Box::from(""));
        IdxSet(s)
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        match self.0.get_index_of(s) {
            Some(i) => i as u32,
            None => self.0.insert_full(Box::from(s)).0 as u32,
        }
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.0.get_index_of(s).map(|i| i as u32)
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        &self.0[id as usize]
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn for_each_str(&self, mut f: impl FnMut(&str)) {
        for s in &self.0 {
            f(s);
        }
    }
}

/// The naive table: `HashMap<String, u32, H>` plus `Vec<String>` (each
/// string stored twice); `""` inserted first.
pub struct Naive<H> {
    pub map: std::collections::HashMap<String, u32, H>,
    pub strings: Vec<String>,
}

impl<H: BuildHasher + Default> Interner for Naive<H> {
    fn new() -> Self {
        let mut t = Naive {
            map: std::collections::HashMap::with_hasher(H::default()),
            strings: Vec::new(),
        };
        t.intern("");
        t
    }
    fn with_capacity(strings: usize, _bytes: usize) -> Self {
        let mut t = Naive {
            map: std::collections::HashMap::with_capacity_and_hasher(strings, H::default()),
            strings: Vec::with_capacity(strings),
        };
        t.intern("");
        t
    }
    #[inline(always)]
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.map.insert(s.to_owned(), id);
        id
    }
    #[inline(always)]
    fn get(&mut self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }
    #[inline(always)]
    fn resolve(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }
    fn len(&self) -> usize {
        self.strings.len()
    }
    #[inline(always)]
    fn for_each_str(&self, mut f: impl FnMut(&str)) {
        for s in &self.strings {
            f(s);
        }
    }
}

/// Calls `$run::<Type>($label, $args...)` for every implementation with
/// the shared [`Fold`] hasher.
macro_rules! for_each_impl {
    ($run:ident ( $($arg:expr),* )) => {{
        $run::<crate::setup::Strtab<crate::setup::Fold>>("strtab", $($arg),*);
        $run::<crate::setup::Lasso<crate::setup::Fold>>("lasso", $($arg),*);
        $run::<crate::setup::SiString<crate::setup::Fold>>("si-string", $($arg),*);
        $run::<crate::setup::SiBuffer<crate::setup::Fold>>("si-buffer", $($arg),*);
        $run::<crate::setup::Blaz<crate::setup::Fold>>("blazinterner", $($arg),*);
        $run::<crate::setup::IdxSet<crate::setup::Fold>>("indexset", $($arg),*);
        $run::<crate::setup::Naive<crate::setup::Fold>>("naive-hashmap", $($arg),*);
    }};
}

/// Calls `$run::<Type>($label, $args...)` for every implementation at its
/// own default hasher (strtab and string-interner already default to
/// foldhash; the IndexSet baseline at Fx as libdatadog used it).
macro_rules! for_each_default_hasher {
    ($run:ident ( $($arg:expr),* )) => {{
        $run::<crate::setup::Strtab<crate::setup::Fold>>("strtab (foldhash)", $($arg),*);
        $run::<crate::setup::Lasso<crate::setup::Std>>("lasso (SipHash)", $($arg),*);
        $run::<crate::setup::SiString<crate::setup::Fold>>("si-string (foldhash)", $($arg),*);
        $run::<crate::setup::SiBuffer<crate::setup::Fold>>("si-buffer (foldhash)", $($arg),*);
        $run::<crate::setup::Blaz<crate::setup::Std>>("blazinterner (SipHash)", $($arg),*);
        $run::<crate::setup::IdxSet<crate::setup::Fx>>("indexset (Fx)", $($arg),*);
        $run::<crate::setup::Naive<crate::setup::Std>>("naive-hashmap (SipHash)", $($arg),*);
    }};
}

// ---------------------------------------------------------------------------
// Concurrent workloads

/// Interns per thread in the concurrent benchmark.
pub const THREAD_STREAM_LEN: usize = 1_000_000;

/// One skewed profiler stream per thread over the same `strings` (each
/// thread its own seed, so its own order and arrival times, but the same
/// shared strings and hot set): the profiler case of several sampler
/// threads walking stacks through the same code.
pub fn thread_streams<S: AsRef<str>>(strings: &[S], threads: usize, len: usize) -> Vec<Vec<&str>> {
    (0..threads)
        .map(|t| skewed_stream(strings, len, SEED.wrapping_add(1 + t as u64)))
        .collect()
}

/// Interleaved rounds: `rounds` times, `sample(i)` for every `i` in
/// `0..n`, so that a machine whose speed drifts slows every `i` alike;
/// returns every sample, by `i` then round. Each round runs them in a new
/// shuffled order (a fixed seed, so runs are repeatable): with a rotation
/// by one, every `i` but the round's first always ran right after the
/// same other one, and inherited the allocator and cache state that one
/// left (`benches/README.md`: strtab's `fill-hint` right after
/// `naive-hashmap`'s took 11 ms instead of 2.7). Shared by
/// `concurrent.rs`'s `STRTAB_ROUNDS` mode and `profile.rs`'s `rounds`.
pub fn interleaved(rounds: usize, n: usize, mut sample: impl FnMut(usize) -> f64) -> Rounds {
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut rng = Rng::new(0x0dd5_eed5);
    let mut order: Vec<usize> = (0..n).collect();
    for _ in 0..rounds {
        for j in (1..n).rev() {
            order.swap(j, rng.below(j + 1));
        }
        for &i in &order {
            times[i].push(sample(i));
        }
    }
    Rounds { times }
}

/// The samples of [`interleaved`]: `times[i][r]` is `i`'s in round `r`.
pub struct Rounds {
    times: Vec<Vec<f64>>,
}

impl Rounds {
    /// Each `i`'s median sample.
    pub fn medians(&self) -> Vec<f64> {
        self.times.iter().map(|v| median(v.clone())).collect()
    }

    /// The median over rounds of `a`'s sample over `b`'s in the same
    /// round: a paired ratio, which a drift of the machine's speed from
    /// one round to the next (another job starting) leaves alone, where
    /// the ratio of the two medians takes each median from whichever
    /// rounds it falls in.
    pub fn paired_ratio(&self, a: usize, b: usize) -> f64 {
        let ratios = self.times[a].iter().zip(&self.times[b]).map(|(x, y)| x / y);
        median(ratios.collect())
    }
}

/// The median of `v` (the upper one of an even count); `v` is not empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The thread counts to measure: `STRTAB_THREADS` (a comma-separated
/// list, such as `1,2,4,8`), else 1, 2 and the machine's parallelism if
/// larger.
pub fn bench_threads() -> Vec<usize> {
    if let Ok(list) = std::env::var("STRTAB_THREADS") {
        let threads: Vec<usize> = list
            .split(',')
            .filter_map(|t| t.trim().parse().ok())
            .filter(|&t| t > 0)
            .collect();
        if !threads.is_empty() {
            return threads;
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut threads = vec![1, 2];
    if cores > 2 {
        threads.push(cores);
    }
    threads
}
