//! A simulated profiler: a generated native service (Rust with a C++
//! storage engine and libc underneath), a call graph, and a sampler that
//! interns every string the moment it sees it, the way an encoder such as
//! a wall-time/CPU profiler's does. Deterministic for a given [`Config`].

use std::collections::{HashMap, HashSet};

use strtab::{SharedStringTable, StringTable};

use super::proto::{Function, Label, Line, Location, Mapping, Profile, Sample, ValueType};

/// What to simulate.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Functions in the generated program (at least 64).
    pub functions: usize,
    /// Stacks sampled.
    pub samples: usize,
    /// Seed of the generator; the same config gives the same profile.
    pub seed: u64,
}

impl Config {
    /// The example's workload: 3,000 functions, 100,000 samples.
    pub const FULL: Config = Config {
        functions: 3_000,
        samples: 100_000,
        seed: 0x5EED_CAFE,
    };
    /// A small workload for tests (and valgrind): 300 functions, 2,000
    /// samples.
    pub const SMALL: Config = Config {
        functions: 300,
        samples: 2_000,
        seed: 7,
    };
}

/// The sampling period: one wall-time sample every 10 ms per thread.
pub const PERIOD_NANOS: i64 = 10_000_000;

/// The string table a simulation interned into ([`StringTable`] for
/// [`simulate`], [`SharedStringTable`] for [`simulate_shared`]): what the
/// export needs of it.
pub trait Table {
    /// Strings held, `""` included.
    fn strings(&self) -> usize;
    /// Heap bytes held.
    fn memory_usage(&self) -> usize;
    /// The frozen table, for encoding in id order.
    fn into_resolver(self) -> strtab::Resolver;
}

impl Table for StringTable {
    fn strings(&self) -> usize {
        StringTable::len(self)
    }
    fn memory_usage(&self) -> usize {
        StringTable::memory_usage(self)
    }
    fn into_resolver(self) -> strtab::Resolver {
        StringTable::into_resolver(self)
    }
}

impl Table for SharedStringTable {
    fn strings(&self) -> usize {
        SharedStringTable::len(self)
    }
    fn memory_usage(&self) -> usize {
        SharedStringTable::memory_usage(self)
    }
    fn into_resolver(self) -> strtab::Resolver {
        SharedStringTable::into_resolver(self)
    }
}

/// The result of [`simulate`] (or, with a [`SharedStringTable`], of
/// [`simulate_shared`]).
#[derive(Debug)]
pub struct Simulation<T = StringTable> {
    /// The profile, every string an id of `table`; its `string_table` is
    /// empty (encode it from `table`).
    pub profile: Profile,
    /// The strings the profiler interned (all its threads, for
    /// [`simulate_shared`]).
    pub table: T,
    /// Calls to the table's `intern`, all threads together.
    pub intern_calls: u64,
    /// Stacks sampled (before identical ones were merged).
    pub samples_taken: usize,
    /// Functions in the generated program.
    pub program_functions: usize,
}

impl<T: Table> Simulation<T> {
    /// Interns that found their string already there.
    pub fn intern_hits(&self) -> u64 {
        // Every string but the preloaded "" was a miss once.
        self.intern_calls - (self.table.strings() as u64 - 1)
    }
}

/// The result of [`simulate_shared`].
pub type SharedSimulation = Simulation<SharedStringTable>;

// ---------------------------------------------------------------------
// Deterministic randomness.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    /// Skewed towards 0: the first few of `n` are hot.
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u) * n as f64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------
// The program.

#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Rust,
    Cpp,
    C,
}

/// A crate or library of the service.
struct Package {
    lang: Lang,
    krate: &'static str,
    file_root: &'static str,
    modules: &'static [&'static str],
    types: &'static [&'static str],
    methods: &'static [&'static str],
    /// Relative share of the program's functions.
    share: usize,
    /// Packages its functions call, repeated to weigh them.
    calls: &'static [usize],
    /// Mapping id: 1 the service binary, 2 libc.
    mapping: u64,
}

// Indices into PACKAGES.
const TOKIO: usize = 0;
const HYPER: usize = 1;
const API: usize = 2;
const DOMAIN: usize = 3;
const DB: usize = 4;
const SERDE: usize = 5;
const ROCKSDB: usize = 6;
const CORE: usize = 7;
const LIBC: usize = 8;

static PACKAGES: [Package; 9] = [
    Package {
        lang: Lang::Rust,
        krate: "tokio",
        file_root: "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.47.1/src/",
        modules: &[
            "runtime::task::harness",
            "runtime::task::core",
            "runtime::task::raw",
            "runtime::scheduler::multi_thread::worker",
            "runtime::io::driver",
            "runtime::time::entry",
            "sync::mpsc::chan",
            "sync::batch_semaphore",
            "net::tcp::stream",
            "io::poll_evented",
        ],
        types: &[
            "Harness<T,S>",
            "Core<T,S>",
            "Context",
            "Driver",
            "Rx<T,S>",
            "Semaphore",
            "TcpStream",
            "PollEvented<E>",
            "Registration",
        ],
        methods: &[
            "poll",
            "run_task",
            "park",
            "turn",
            "recv",
            "acquire",
            "poll_read",
            "poll_write",
            "wake_by_ref",
            "schedule",
            "poll_ready",
            "shutdown",
        ],
        share: 12,
        calls: &[TOKIO, TOKIO, HYPER, HYPER, API, API, CORE, LIBC],
        mapping: 1,
    },
    Package {
        lang: Lang::Rust,
        krate: "hyper",
        file_root: "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/hyper-1.7.0/src/",
        modules: &[
            "proto::h1::dispatch",
            "proto::h1::conn",
            "proto::h1::role",
            "proto::h1::io",
            "server::conn::http1",
            "body::incoming",
            "service::util",
        ],
        types: &[
            "Dispatcher<D,Bs,I,T>",
            "Conn<I,B,T>",
            "Server",
            "Buffered<T,B>",
            "Connection<I,S>",
            "Incoming",
            "ServiceFn<F,R>",
        ],
        methods: &[
            "poll_loop",
            "poll_read",
            "poll_write",
            "poll_flush",
            "encode_head",
            "parse",
            "call",
            "poll_frame",
            "write_body",
        ],
        share: 8,
        calls: &[HYPER, HYPER, API, API, API, SERDE, TOKIO, CORE, LIBC],
        mapping: 1,
    },
    Package {
        lang: Lang::Rust,
        krate: "acme_checkout",
        file_root: "/build/acme-checkout/src/",
        modules: &[
            "api::orders",
            "api::carts",
            "api::payments",
            "api::inventory",
            "api::users",
            "api::auth",
            "api::health",
            "api::middleware::tracing",
            "api::middleware::rate_limit",
        ],
        types: &[
            "OrdersHandler",
            "CartsHandler",
            "PaymentsHandler",
            "InventoryHandler",
            "UsersHandler",
            "AuthLayer<S>",
            "RateLimit<S>",
            "TraceLayer<S>",
        ],
        methods: &[
            "get",
            "list",
            "create",
            "update",
            "delete",
            "checkout",
            "authorize",
            "call",
            "validate_request",
            "render_response",
        ],
        share: 10,
        calls: &[API, DOMAIN, DOMAIN, DOMAIN, DB, DB, SERDE, CORE],
        mapping: 1,
    },
    Package {
        lang: Lang::Rust,
        krate: "acme_checkout",
        file_root: "/build/acme-checkout/src/",
        modules: &[
            "domain::order",
            "domain::cart",
            "domain::pricing",
            "domain::tax",
            "domain::discount",
            "domain::shipping",
            "domain::fraud",
            "domain::currency",
        ],
        types: &[
            "Order",
            "Cart",
            "PricingEngine",
            "TaxTable",
            "DiscountRule",
            "ShippingQuote",
            "FraudScore",
            "Money",
            "LineItem",
        ],
        methods: &[
            "total", "apply", "compute", "validate", "lookup", "quote", "score", "convert",
            "add_item", "from_row", "round",
        ],
        share: 14,
        calls: &[DOMAIN, DOMAIN, DOMAIN, DB, CORE, SERDE],
        mapping: 1,
    },
    Package {
        lang: Lang::Rust,
        krate: "acme_checkout",
        file_root: "/build/acme-checkout/src/",
        modules: &[
            "db::store",
            "db::codec",
            "db::cache",
            "db::pool",
            "db::schema",
        ],
        types: &["Store", "OrderCodec", "LruCache<K,V>", "Pool", "KeyBuilder"],
        methods: &[
            "get",
            "put",
            "scan",
            "encode",
            "decode",
            "checkout",
            "release",
            "key_for",
            "get_or_load",
        ],
        share: 8,
        calls: &[DB, DB, ROCKSDB, ROCKSDB, CORE, TOKIO],
        mapping: 1,
    },
    Package {
        lang: Lang::Rust,
        krate: "serde_json",
        file_root: "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde_json-1.0.145/src/",
        modules: &["de", "ser", "read", "value::de", "value::ser"],
        types: &[
            "Deserializer<R>",
            "Serializer<W,F>",
            "SliceRead",
            "Value",
            "MapDeserializer",
        ],
        methods: &[
            "parse_value",
            "parse_str",
            "deserialize_struct",
            "serialize_str",
            "serialize_map",
            "next_key_seed",
            "parse_integer",
            "ignore_value",
        ],
        share: 8,
        calls: &[SERDE, SERDE, SERDE, CORE],
        mapping: 1,
    },
    Package {
        lang: Lang::Cpp,
        krate: "rocksdb",
        file_root: "/build/rocksdb/",
        modules: &[
            "db/db_impl/db_impl",
            "db/db_impl/db_impl_write",
            "db/memtable",
            "db/version_set",
            "table/block_based/block_based_table_reader",
            "table/block_based/block",
            "cache/lru_cache",
            "util/coding",
            "db/compaction/compaction_job",
        ],
        types: &[
            "DBImpl",
            "MemTable",
            "Version",
            "BlockBasedTable",
            "DataBlockIter",
            "LRUCacheShard",
            "CompactionJob",
            "WriteBatchInternal",
        ],
        methods: &[
            "Get",
            "GetImpl",
            "Put",
            "WriteImpl",
            "Seek",
            "Next",
            "Lookup",
            "Insert",
            "NewDataBlockIterator",
            "Run",
            "ProcessKeyValueCompaction",
            "InsertInto",
        ],
        share: 14,
        calls: &[ROCKSDB, ROCKSDB, ROCKSDB, ROCKSDB, LIBC],
        mapping: 1,
    },
    Package {
        lang: Lang::Rust,
        krate: "core",
        file_root: "/rustc/29483883eed69d5fb4db01964cdf2af4d86e9cb2/library/",
        modules: &[
            "alloc::raw_vec",
            "alloc::vec",
            "alloc::string",
            "core::fmt",
            "core::str::pattern",
            "core::slice::sort",
            "hashbrown::raw",
            "alloc::sync",
        ],
        types: &[
            "RawVec<T,A>",
            "Vec<T,A>",
            "String",
            "Formatter",
            "StrSearcher",
            "RawTable<T,A>",
            "Arc<T>",
        ],
        methods: &[
            "grow_one",
            "reserve",
            "push",
            "clone",
            "write_str",
            "next_match",
            "find_or_find_insert_slot",
            "insert",
            "drop_slow",
            "from_iter",
        ],
        share: 10,
        calls: &[CORE, CORE, LIBC],
        mapping: 1,
    },
    Package {
        lang: Lang::C,
        krate: "libc",
        file_root: "./",
        modules: &[
            "string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S",
            "malloc/malloc.c",
            "nptl/futex-internal.c",
            "misc/../sysdeps/unix/sysv/linux/epoll_wait.c",
            "io/../sysdeps/unix/sysv/linux/pread64.c",
            "socket/../sysdeps/unix/sysv/linux/recv.c",
        ],
        types: &[],
        methods: &[
            "__memmove_avx_unaligned_erms",
            "__memcmp_avx2_movbe",
            "malloc",
            "free",
            "_int_malloc",
            "__futex_abstimed_wait_common",
            "epoll_wait",
            "__libc_pread64",
            "__libc_recv",
            "__clock_gettime",
        ],
        share: 1,
        calls: &[],
        mapping: 2,
    },
];

/// Leaf functions that wait rather than compute.
const BLOCKING: &[&str] = &[
    "__futex_abstimed_wait_common",
    "epoll_wait",
    "__libc_pread64",
    "__libc_recv",
];

struct Func {
    name: String,
    system_name: String,
    file: String,
    start_line: i64,
    package: usize,
    /// Address of the first instruction.
    address: u64,
    /// (callee, line of the call) in order of how often it is taken.
    callees: Vec<(usize, i64)>,
    /// Lines where time is spent in the function itself.
    hot_lines: Vec<i64>,
    blocking: bool,
}

/// Itanium/legacy-Rust mangling of `parts`, good enough to look real.
fn mangle(parts: &[&str], hash: Option<u64>) -> String {
    let mut out = String::from("_ZN");
    for part in parts {
        let clean: String = part
            .split('<')
            .next()
            .unwrap_or(part)
            .replace("{{closure}}", "_$u7b$$u7b$closure$u7d$$u7d$");
        out.push_str(&format!("{}{clean}", clean.len()));
    }
    if let Some(h) = hash {
        out.push_str(&format!("17h{h:016x}"));
    }
    out.push('E');
    out
}

struct Program {
    funcs: Vec<Func>,
    /// Root chains per thread kind, outermost first.
    roots: [Vec<usize>; 3],
}

fn generate(config: &Config, rng: &mut Rng) -> Program {
    let total_share: usize = PACKAGES.iter().map(|p| p.share).sum();
    let mut funcs: Vec<Func> = Vec::new();
    let mut seen = HashSet::new();
    let mut by_package: Vec<Vec<usize>> = vec![Vec::new(); PACKAGES.len()];
    let mut next_address = [0x0040_0000u64, 0x7f3a_c002_8000];
    // Adds a function; only `callable` ones can be picked as callees.
    let mut add = |funcs: &mut Vec<Func>,
                   package: usize,
                   (name, system_name, file): (String, String, String),
                   callable: bool,
                   rng: &mut Rng| {
        let len = 8 + rng.below(120) as i64;
        let start_line = 1 + rng.below(2_000) as i64;
        let slot = usize::from(PACKAGES[package].mapping == 2);
        let address = next_address[slot];
        next_address[slot] += (len as u64 * 24).next_multiple_of(16);
        let hot_lines = (0..1 + rng.below(3))
            .map(|_| start_line + rng.below(len as usize) as i64)
            .collect();
        let blocking = BLOCKING.contains(&name.as_str());
        if callable {
            by_package[package].push(funcs.len());
        }
        funcs.push(Func {
            name,
            system_name,
            file,
            start_line,
            package,
            address,
            callees: Vec::new(),
            hot_lines,
            blocking,
        });
        funcs.len() - 1
    };

    // Fixed entry chains.
    let c = |name: &str, file: &str| (name.to_string(), name.to_string(), file.to_string());
    let start_thread = add(
        &mut funcs,
        LIBC,
        c("start_thread", "./nptl/pthread_create.c"),
        false,
        rng,
    );
    let libc_main = add(
        &mut funcs,
        LIBC,
        c(
            "__libc_start_call_main",
            "./csu/../sysdeps/nptl/libc_start_call_main.h",
        ),
        false,
        rng,
    );
    let rust_root = |name: &str, file: &str| {
        (
            name.to_string(),
            mangle(
                &name.split("::").collect::<Vec<_>>(),
                Some(0x1234_5678_9abc_def0 ^ name.len() as u64),
            ),
            file.to_string(),
        )
    };
    // Adds a callable function unless the name is taken (then usize::MAX).
    let mut root =
        |funcs: &mut Vec<Func>, package: usize, names: (String, String, String), rng: &mut Rng| {
            if seen.insert(names.0.clone()) {
                add(funcs, package, names, true, rng)
            } else {
                usize::MAX
            }
        };
    let thread_start = root(
        &mut funcs,
        CORE,
        rust_root(
            "std::sys::pal::unix::thread::Thread::new::thread_start",
            "/rustc/29483883eed69d5fb4db01964cdf2af4d86e9cb2/library/std/src/sys/pal/unix/thread.rs",
        ),
        rng,
    );
    let worker_run = root(
        &mut funcs,
        TOKIO,
        rust_root(
            "tokio::runtime::scheduler::multi_thread::worker::run",
            "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.47.1/src/runtime/scheduler/multi_thread/worker.rs",
        ),
        rng,
    );
    let main = root(
        &mut funcs,
        API,
        rust_root("acme_checkout::main", "/build/acme-checkout/src/main.rs"),
        rng,
    );
    let block_on = root(
        &mut funcs,
        TOKIO,
        rust_root(
            "tokio::runtime::runtime::Runtime::block_on",
            "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.47.1/src/runtime/runtime.rs",
        ),
        rng,
    );
    let bg_thread = root(
        &mut funcs,
        ROCKSDB,
        (
            "rocksdb::ThreadPoolImpl::Impl::BGThread(unsigned long)".into(),
            "_ZN7rocksdb14ThreadPoolImpl4Impl8BGThreadEm".into(),
            "/build/rocksdb/util/threadpool_imp.cc".into(),
        ),
        rng,
    );

    // The rest, spread over the packages by share.
    let target = config.functions.max(64);
    let mut attempts = 0;
    while funcs.len() < target && attempts < target * 50 {
        attempts += 1;
        let mut pick = rng.below(total_share);
        let package = PACKAGES
            .iter()
            .position(|p| {
                let hit = pick < p.share;
                pick = pick.saturating_sub(p.share);
                hit
            })
            .unwrap_or(0);
        let p = &PACKAGES[package];
        let module = rng.pick(p.modules);
        let method = rng.pick(p.methods);
        let (name, system_name, file) = match p.lang {
            Lang::C => (
                method.to_string(),
                method.to_string(),
                format!("{}{module}", p.file_root),
            ),
            Lang::Cpp => {
                let ty = rng.pick(p.types);
                let args = rng.pick(&[
                    "",
                    "rocksdb::Slice const&",
                    "rocksdb::ReadOptions const&, rocksdb::Slice const&",
                    "unsigned long",
                    "rocksdb::WriteBatch*",
                ]);
                let variant = rng.below(40);
                let method = if variant < 30 {
                    method.to_string()
                } else {
                    format!("{method}{variant}")
                };
                let name = format!("{}::{ty}::{method}({args})", p.krate);
                let sys = format!(
                    "{}{}",
                    mangle(&[p.krate, ty, &method], None),
                    if args.is_empty() { "v" } else { "RKNS_5SliceE" }
                );
                (name, sys, format!("{}{module}.cc", p.file_root))
            }
            Lang::Rust => {
                // The standard library's modules name their crate.
                let mut parts: Vec<String> = if package == CORE {
                    Vec::new()
                } else {
                    vec![p.krate.to_string()]
                };
                parts.extend(module.split("::").map(str::to_string));
                if rng.chance(70) {
                    parts.push(rng.pick(p.types).to_string());
                }
                let variant = rng.below(30);
                parts.push(if variant < 20 {
                    method.to_string()
                } else {
                    format!(
                        "{method}_{}",
                        rng.pick(&[
                            "inner", "slow", "fast", "checked", "async", "impl", "batch", "cached",
                            "v2", "locked"
                        ])
                    )
                });
                if rng.chance(15) {
                    parts.push("{{closure}}".into());
                }
                let name = parts.join("::");
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                let sys = mangle(&refs, Some(rng.next()));
                let path = module.replace("::", "/");
                let file = if package == CORE {
                    let (lib, rest) = path.split_once('/').unwrap_or(("core", &path));
                    format!("{}{lib}/src/{rest}.rs", p.file_root)
                } else {
                    format!("{}{path}.rs", p.file_root)
                };
                (name, sys, file)
            }
        };
        root(&mut funcs, package, (name, system_name, file), rng);
    }

    // The call graph: each function calls a few functions of the packages
    // it depends on; its own package only forwards (higher index), so
    // there are no cycles.
    for f in 0..funcs.len() {
        let p = &PACKAGES[funcs[f].package];
        let n = if p.calls.is_empty() {
            0
        } else {
            2 + rng.below(5)
        };
        let mut callees = Vec::with_capacity(n);
        for _ in 0..n {
            let q = p.calls[rng.below(p.calls.len())];
            let candidates: Vec<usize> = if q == funcs[f].package {
                by_package[q].iter().copied().filter(|&g| g > f).collect()
            } else {
                by_package[q].clone()
            };
            if candidates.is_empty() {
                continue;
            }
            let g = candidates[rng.skewed(candidates.len())];
            let line = funcs[f].start_line + 1 + rng.below(40) as i64;
            callees.push((g, line));
        }
        funcs[f].callees = callees;
    }
    Program {
        funcs,
        roots: [
            vec![start_thread, thread_start, worker_run],
            vec![start_thread, bg_thread],
            vec![libc_main, main, block_on],
        ],
    }
}

// ---------------------------------------------------------------------
// The profiler.

/// Where the profiler's strings go: a [`StringTable`] it owns, or a
/// [`SharedStringTable`] its sampler threads share.
trait Intern {
    fn intern(&mut self, s: &str) -> i64;
}

/// Interns into a table of its own, counting calls.
struct Interner {
    table: StringTable,
    calls: u64,
}

impl Intern for Interner {
    fn intern(&mut self, s: &str) -> i64 {
        self.calls += 1;
        i64::from(self.table.intern(s).to_u32())
    }
}

/// One sampler thread's handle on the shared table, counting calls.
struct SharedInterner<'a> {
    table: &'a SharedStringTable,
    calls: u64,
}

impl Intern for SharedInterner<'_> {
    fn intern(&mut self, s: &str) -> i64 {
        self.calls += 1;
        i64::from(self.table.intern(s).to_u32())
    }
}

const ENDPOINTS: &[&str] = &[
    "GET /api/v1/orders/{id}",
    "GET /api/v1/carts/{id}",
    "POST /api/v1/carts/{id}/items",
    "POST /api/v1/checkout",
    "GET /api/v1/inventory/{sku}",
    "GET /api/v1/orders",
    "POST /api/v1/payments",
    "GET /healthz",
    "PUT /api/v1/users/{id}",
    "POST /api/v1/auth/token",
    "DELETE /api/v1/carts/{id}/items/{item}",
    "GET /api/v1/users/{id}/orders",
];

/// The profile's tables as a sampler builds them: functions and locations
/// deduplicated, identical samples merged (keyed by stack, thread,
/// endpoint and label).
#[derive(Default)]
struct Builder {
    functions: HashMap<(i64, i64, i64), u64>,
    function: Vec<Function>,
    locations: HashMap<(u64, i64), u64>,
    location: Vec<Location>,
    merged: HashMap<Vec<u64>, usize>,
    sample: Vec<Sample>,
}

impl Builder {
    /// The id of the function with these string ids, added if new.
    fn function(&mut self, name: i64, system_name: i64, filename: i64, start_line: i64) -> u64 {
        let next_id = self.function.len() as u64 + 1;
        let function = &mut self.function;
        *self
            .functions
            .entry((name, system_name, filename))
            .or_insert_with(|| {
                function.push(Function {
                    id: next_id,
                    name,
                    system_name,
                    filename,
                    start_line,
                });
                next_id
            })
    }

    /// The id of the location of `line` in function `function_id`, added
    /// if new.
    fn location(&mut self, function_id: u64, line: i64, mapping_id: u64, address: u64) -> u64 {
        let next_id = self.location.len() as u64 + 1;
        let location = &mut self.location;
        *self
            .locations
            .entry((function_id, line))
            .or_insert_with(|| {
                location.push(Location {
                    id: next_id,
                    mapping_id,
                    address,
                    line: vec![Line {
                        function_id,
                        line,
                        column: 0,
                    }],
                    is_folded: false,
                });
                next_id
            })
    }

    /// Adds a sample whose stack is the first `stack_len` entries of `key`
    /// (the rest identifies thread, endpoint and label), or merges it into
    /// an identical one.
    fn sample(&mut self, key: &[u64], stack_len: usize, values: [i64; 3], label: Vec<Label>) {
        if let Some(&i) = self.merged.get(key) {
            for (v, add) in self.sample[i].value.iter_mut().zip(values) {
                *v += add;
            }
        } else {
            self.merged.insert(key.to_vec(), self.sample.len());
            self.sample.push(Sample {
                location_id: key[..stack_len].to_vec(),
                value: values.to_vec(),
                label,
            });
        }
    }

    /// Merges another sampler's tables into this one. Both interned into
    /// the same table, so string ids need no remapping; function and
    /// location ids do.
    fn merge(&mut self, other: Builder) {
        let mut function_ids = vec![0; other.function.len() + 1];
        for f in &other.function {
            function_ids[f.id as usize] =
                self.function(f.name, f.system_name, f.filename, f.start_line);
        }
        let mut location_ids = vec![0; other.location.len() + 1];
        for l in &other.location {
            let line = &l.line[0];
            location_ids[l.id as usize] = self.location(
                function_ids[line.function_id as usize],
                line.line,
                l.mapping_id,
                l.address,
            );
        }
        let mut keys: Vec<(Vec<u64>, usize)> = other.merged.into_iter().collect();
        keys.sort_unstable_by_key(|&(_, i)| i);
        let mut samples = other.sample.into_iter();
        for (mut key, _) in keys {
            let sample = samples.next().expect("one key per sample");
            let stack_len = sample.location_id.len();
            for id in &mut key[..stack_len] {
                *id = location_ids[*id as usize];
            }
            let values = [sample.value[0], sample.value[1], sample.value[2]];
            self.sample(&key, stack_len, values, sample.label);
        }
    }
}

/// The simulated threads: (name, kind), kind indexing `Program::roots`.
fn app_threads() -> Vec<(String, usize)> {
    let mut threads: Vec<(String, usize)> = (0..10)
        .map(|i| (format!("tokio-runtime-worker-{i}"), 0))
        .collect();
    threads.extend((0..4).map(|i| (format!("rocksdb:low{i}"), 1)));
    threads.push(("rocksdb:high0".into(), 1));
    threads.push(("main".into(), 2));
    threads
}

/// Samples `count` stacks of the application's `threads`, interning every
/// function name, file name and label as it is seen.
fn take_samples(
    b: &mut Builder,
    s: &mut impl Intern,
    rng: &mut Rng,
    program: &Program,
    threads: &[(String, usize)],
    count: usize,
) {
    let mut frames: Vec<(usize, i64)> = Vec::new();
    let mut key: Vec<u64> = Vec::new();
    for _ in 0..count {
        // Mostly the request workers, skewed to the first few.
        let t = if rng.chance(75) {
            rng.skewed(10)
        } else {
            10 + rng.below(threads.len() - 10)
        };
        let (thread_name, kind) = &threads[t];
        let endpoint = (*kind == 0).then(|| ENDPOINTS[rng.skewed(ENDPOINTS.len())]);

        // Walk the call graph: outermost first.
        frames.clear();
        let chain = &program.roots[*kind];
        for (i, &f) in chain.iter().enumerate() {
            let next = chain.get(i + 1).copied();
            frames.push((
                f,
                program.funcs[f].start_line + 2 + next.map_or(0, |n| n as i64 % 7),
            ));
        }
        let mut f = *chain.last().expect("roots are not empty");
        while frames.len() < 64 {
            let callees = &program.funcs[f].callees;
            if callees.is_empty() || (frames.len() > 6 && rng.chance(6)) {
                break;
            }
            let (g, line) = callees[rng.skewed(callees.len())];
            frames.last_mut().expect("frames start non-empty").1 = line;
            let hot = &program.funcs[g].hot_lines;
            frames.push((g, hot[rng.below(hot.len())]));
            f = g;
        }

        // Symbolize and intern, leaf first as pprof wants.
        key.clear();
        for &(f, line) in frames.iter().rev() {
            let func = &program.funcs[f];
            let name = s.intern(&func.name);
            let system_name = s.intern(&func.system_name);
            let filename = s.intern(&func.file);
            let function_id = b.function(name, system_name, filename, func.start_line);
            let location_id = b.location(
                function_id,
                line,
                PACKAGES[func.package].mapping,
                func.address + (line - func.start_line) as u64 * 24,
            );
            key.push(location_id);
        }

        // Values and labels.
        let leaf = &program.funcs[frames.last().expect("frames are not empty").0];
        let wall = PERIOD_NANOS - 50_000 + rng.below(100_000) as i64;
        let cpu = if leaf.blocking {
            wall * rng.below(4) as i64 / 100
        } else {
            wall * (70 + rng.below(31)) as i64 / 100
        };
        let mut label = vec![
            Label {
                key: s.intern("thread name"),
                str: s.intern(thread_name),
                ..Label::default()
            },
            Label {
                key: s.intern("thread id"),
                num: 4_101 + t as i64,
                ..Label::default()
            },
        ];
        if let Some(endpoint) = endpoint {
            label.push(Label {
                key: s.intern("trace endpoint"),
                str: s.intern(endpoint),
                ..Label::default()
            });
        }

        // Merge with an identical stack and labels.
        let stack_len = key.len();
        key.push(t as u64);
        key.push(endpoint.map_or(0, |e| e.len() as u64 + 1));
        key.push(label.last().map_or(0, |l| l.str as u64));
        b.sample(&key, stack_len, [1, cpu, wall], label);
    }
}

/// The profile's fixed header, interned at profile start: sample types,
/// the period type and the process's mappings.
fn header(s: &mut impl Intern) -> (Vec<ValueType>, ValueType, Vec<Mapping>) {
    let mut value_type = |t: &str, u: &str| ValueType {
        r#type: s.intern(t),
        unit: s.intern(u),
    };
    let sample_type = vec![
        value_type("samples", "count"),
        value_type("cpu-time", "nanoseconds"),
        value_type("wall-time", "nanoseconds"),
    ];
    let period_type = value_type("wall-time", "nanoseconds");
    let mapping = vec![
        Mapping {
            id: 1,
            memory_start: 0x0040_0000,
            memory_limit: 0x0400_0000,
            file_offset: 0,
            filename: s.intern("/usr/local/bin/acme-checkout"),
            build_id: s.intern("9f3c1d27a4be6e0d5b8a7c21f04e93ab6d1c0e52"),
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            has_inline_frames: false,
        },
        Mapping {
            id: 2,
            memory_start: 0x7f3a_c002_8000,
            memory_limit: 0x7f3a_c01b_d000,
            file_offset: 0x28000,
            filename: s.intern("/usr/lib/x86_64-linux-gnu/libc.so.6"),
            build_id: s.intern("c289da5071a3399de893d2af81d6a30c62646e1e"),
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            has_inline_frames: false,
        },
    ];
    (sample_type, period_type, mapping)
}

/// Assembles the profile, interning its comment and default sample type
/// (at export).
fn finish(
    config: &Config,
    s: &mut impl Intern,
    (sample_type, period_type, mapping): (Vec<ValueType>, ValueType, Vec<Mapping>),
    b: Builder,
    threads: usize,
) -> Profile {
    let comment = vec![s.intern(&format!(
        "strtab examples/pprof: simulated acme-checkout, {} functions, {} samples, seed {:#x}",
        config.functions, config.samples, config.seed
    ))];
    let default_sample_type = s.intern("cpu-time");
    let samples_per_thread = config.samples as i64 / threads as i64;
    Profile {
        sample_type,
        sample: b.sample,
        mapping,
        location: b.location,
        function: b.function,
        string_table: Vec::new(),
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: 1_732_900_000_000_000_000,
        duration_nanos: samples_per_thread.max(1) * PERIOD_NANOS,
        period_type: Some(period_type),
        period: PERIOD_NANOS,
        comment,
        default_sample_type,
        doc_url: 0,
    }
}

/// Runs the simulated profiler: generates the program, samples
/// `config.samples` stacks over 16 threads, interning every function name,
/// file name and label as it is seen, and merges identical samples.
pub fn simulate(config: &Config) -> Simulation {
    let mut rng = Rng(config.seed);
    let program = generate(config, &mut rng);
    let mut s = Interner {
        table: StringTable::new(),
        calls: 0,
    };
    let header = header(&mut s);
    let threads = app_threads();
    let mut b = Builder::default();
    take_samples(&mut b, &mut s, &mut rng, &program, &threads, config.samples);
    let profile = finish(config, &mut s, header, b, threads.len());
    Simulation {
        profile,
        table: s.table,
        intern_calls: s.calls,
        samples_taken: config.samples,
        program_functions: program.funcs.len(),
    }
}

/// [`simulate`] with `samplers` profiler threads sampling at once, each
/// its share of `config.samples` stacks with a seed of its own, all
/// interning into one [`SharedStringTable`]; their function, location and
/// sample tables are merged at export (string ids need no remapping: there
/// is one table). String ids depend on how the threads interleave, the
/// profile's content does not.
pub fn simulate_shared(config: &Config, samplers: usize) -> SharedSimulation {
    let samplers = samplers.max(1);
    let mut rng = Rng(config.seed);
    let program = generate(config, &mut rng);
    let table = SharedStringTable::new();
    let mut s = SharedInterner {
        table: &table,
        calls: 0,
    };
    let header = header(&mut s);
    let threads = app_threads();
    let results: Vec<(Builder, u64)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..samplers)
            .map(|k| {
                let (table, program, threads) = (&table, &program, &threads);
                let count = config.samples / samplers + usize::from(k < config.samples % samplers);
                scope.spawn(move || {
                    let mut rng = Rng(config.seed ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9));
                    let mut s = SharedInterner { table, calls: 0 };
                    let mut b = Builder::default();
                    take_samples(&mut b, &mut s, &mut rng, program, threads, count);
                    (b, s.calls)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a sampler thread panicked"))
            .collect()
    });
    let mut merged = Builder::default();
    for (b, calls) in results {
        s.calls += calls;
        merged.merge(b);
    }
    let profile = finish(config, &mut s, header, merged, threads.len());
    let intern_calls = s.calls;
    SharedSimulation {
        profile,
        table,
        intern_calls,
        samples_taken: config.samples,
        program_functions: program.funcs.len(),
    }
}
