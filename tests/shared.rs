//! `SharedStringTable` under concurrent use, checked against a model.
//!
//! - `model_concurrent`: several writer threads intern overlapping streams
//!   (profiler-like names, duplicates across threads, odd characters and
//!   lengths around the arena's chunk and block boundaries) while a
//!   resolver thread resolves every id the writers hand it over a channel,
//!   immediately. Afterwards every string has one id, the ids are exactly
//!   `0..len()`, and `into_resolver` iterates them in id order, `""` first.
//! - Limits (strings and bytes) are never exceeded while threads race
//!   against them, and a failure leaves no id hole.
//! - Hostile input: a hasher that sends every string to one shard and one
//!   bucket, huge strings, NUL and non-ASCII bytes, and a hasher whose
//!   output changes during the table's life (a logic error, but safe
//!   code: it may cost duplicate ids, never memory safety, also when the
//!   hint cache moves to a larger level).
//! - Capacity hints pre-size the table (it does not grow within them) and
//!   give way to the byte limit; one thread gets the ids a `StringTable`
//!   would give, and the resolver feeds `pprof` and `merge` unchanged.
//!
//! Runs under Miri (which detects data races; Stacked Borrows and strict
//! provenance, like the rest of the suite: the arena writes records
//! through raw pointers derived from its chunks, never through a `&mut`
//! over a block, so readers' record addresses stay valid) and
//! ThreadSanitizer (`.ci/tsan.sh`), with far fewer and shorter strings.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::mpsc;
use std::thread;

use strtab::{
    ErrorKind, FIRST_CHUNK_CAPACITY, Limits, MAX_CHUNK_CAPACITY, SharedStringTable, StringId,
    StringTable,
};

mod common;

use common::Rng;

/// Writer threads.
const WRITERS: usize = if cfg!(miri) { 2 } else { 4 };
/// Interns per writer.
const INTERNS: usize = if cfg!(miri) { 40 } else { 20_000 };

/// The strings every writer draws from: profiler-like names, labels, odd
/// bytes, and lengths around the arena's boundaries (128, where a
/// record's length took a second byte until the one-byte length with an
/// escape; 255, that escape, where strings leave the inlined hit path for
/// the long one; the first chunk, a 64 KiB block, and the threshold for
/// a chunk of its own).
fn pool() -> Vec<String> {
    let mut rng = Rng(7);
    let mut pool = vec![String::new()];
    let names = if cfg!(miri) { 30 } else { 3000 };
    for i in 0..names {
        pool.push(match rng.below(5) {
            0 => format!("tokio::runtime::task::harness::Harness<T>::poll_{i}"),
            1 => format!("/usr/src/app/src/handlers/route_{}.rs", i % 700),
            2 => format!("span id {}", rng.next()),
            3 => format!("ünïcödé-{i}-\u{1F980}"),
            _ => format!("nul\0byte\0{i}"),
        });
    }
    let mut lengths = vec![127, 128, 129, 254, 255, 256, 16_383, 16_384];
    if !cfg!(miri) {
        lengths.extend([
            FIRST_CHUNK_CAPACITY - 2,
            FIRST_CHUNK_CAPACITY - 1,
            FIRST_CHUNK_CAPACITY,
            MAX_CHUNK_CAPACITY / 4,
            MAX_CHUNK_CAPACITY / 4 + 1,
            MAX_CHUNK_CAPACITY - 3,
            MAX_CHUNK_CAPACITY + 1,
            300_000,
        ]);
    }
    for (k, len) in lengths.into_iter().enumerate() {
        let c = char::from(b'a' + k as u8);
        pool.push(c.to_string().repeat(len));
    }
    pool
}

/// Writer `w`'s stream: mostly strings shared with the other writers
/// (skewed towards the first ones, as a profiler's hot frames), some only
/// its own.
fn stream(pool: &[String], w: usize) -> Vec<String> {
    let mut rng = Rng(100 + w as u64);
    (0..INTERNS)
        .map(|i| match rng.below(10) {
            0 => format!("thread-{w}-own-{}", i % 97),
            1..=3 => pool[rng.below(pool.len())].clone(),
            _ => {
                let u = rng.below(1000) as f64 / 1000.0;
                pool[((u * u * u) * pool.len() as f64) as usize].clone()
            }
        })
        .collect()
}

/// The end state: one id per string, ids exactly `0..len()`, every id
/// resolving to its string, and `into_resolver` iterating in id order.
fn check_final(table: SharedStringTable, seen: &HashMap<String, StringId>) {
    assert_eq!(
        table.len(),
        seen.len() + usize::from(!seen.contains_key(""))
    );
    let ids: HashSet<u32> = seen.values().map(|id| id.to_u32()).collect();
    assert_eq!(ids.len(), seen.len(), "two strings share an id");
    for (s, &id) in seen {
        assert_eq!(table.resolve(id), Some(s.as_str()));
        assert_eq!(table.get(s), Some(id));
        assert!(id.index() < table.len());
    }
    for i in 0..table.len() {
        assert!(
            table.resolve(StringId::from_u32(i as u32)).is_some(),
            "hole at {i}"
        );
    }
    assert_eq!(table.resolve(StringId::from_u32(table.len() as u32)), None);
    let len = table.len();
    let resolver = table.into_resolver();
    assert_eq!(resolver.len(), len);
    let strings: Vec<&str> = resolver.iter().collect();
    assert_eq!(strings.len(), len);
    assert_eq!(strings[0], "");
    for (s, &id) in seen {
        assert_eq!(strings[id.index()], s);
        assert_eq!(&resolver[id], s);
    }
    assert_eq!(resolver.iter().rev().count(), len);
}

#[test]
fn model_concurrent() {
    model_concurrent_on(SharedStringTable::builder().shards(8).build());
}

/// The same on a table pre-sized for half the pool: its first strings
/// land in the pre-sized chunks and tables (whose blocks must still be
/// published for the hint cache), the rest make them grow.
#[test]
fn model_concurrent_presized() {
    let pool = pool();
    let bytes: usize = pool.iter().map(String::len).sum();
    model_concurrent_on(
        SharedStringTable::builder()
            .shards(8)
            .capacity(pool.len() / 2, bytes / 2)
            .build(),
    );
}

fn model_concurrent_on(table: SharedStringTable) {
    let pool = pool();
    let streams: Vec<Vec<String>> = (0..WRITERS).map(|w| stream(&pool, w)).collect();
    let seen = thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(StringId, &str)>();
        let table = &table;
        // The resolver: every id it is handed resolves at once.
        let resolver = scope.spawn(move || {
            let mut n = 0;
            for (id, s) in rx {
                assert_eq!(table.resolve(id), Some(s), "{id:?}");
                n += 1;
            }
            n
        });
        let writers: Vec<_> = streams
            .iter()
            .map(|stream| {
                let tx = tx.clone();
                scope.spawn(move || {
                    let mut mine = HashMap::new();
                    for (i, s) in stream.iter().enumerate() {
                        let id = table.intern(s);
                        assert_eq!(table.resolve(id), Some(s.as_str()));
                        if let Some(&prev) = mine.get(s.as_str()) {
                            assert_eq!(id, prev, "{s:?} changed id");
                        } else {
                            mine.insert(s.as_str(), id);
                        }
                        if i % 7 == 0 {
                            tx.send((id, s.as_str())).unwrap();
                        }
                    }
                    mine
                })
            })
            .collect();
        drop(tx);
        let mut seen: HashMap<String, StringId> = HashMap::new();
        for w in writers {
            for (s, id) in w.join().unwrap() {
                let prev = *seen.entry(s.to_owned()).or_insert(id);
                assert_eq!(prev, id, "{s:?} got two ids across threads");
            }
        }
        assert!(resolver.join().unwrap() > 0);
        seen
    });
    assert_eq!(seen.get(""), Some(&StringId::EMPTY));
    check_final(table, &seen);
}

/// Threads race to intern distinct strings into a table with a string
/// limit: exactly the limit is reached, never passed, with no hole.
#[test]
fn string_limit_under_contention() {
    let max = if cfg!(miri) { 12 } else { 1000 };
    let table = SharedStringTable::with_limits(Limits::new().max_strings(max));
    let seen = thread::scope(|scope| {
        let workers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let table = &table;
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0.. {
                        let s = format!("w{w}-s{i}");
                        match table.try_intern(&s) {
                            Ok(id) => mine.push((s, id)),
                            Err(e) => {
                                assert_eq!(e.kind(), ErrorKind::IdsExhausted);
                                assert!(table.len() <= max);
                                break;
                            }
                        }
                        assert!(table.len() <= max);
                    }
                    mine
                })
            })
            .collect();
        let mut seen = HashMap::new();
        for w in workers {
            seen.extend(w.join().unwrap());
        }
        seen
    });
    assert_eq!(table.len(), max);
    // Hits still succeed at the limit.
    for (s, &id) in &seen {
        assert_eq!(table.try_intern(s), Ok(id));
    }
    check_final(table, &seen);
}

/// Threads race against a byte limit: `memory_usage` never passes it,
/// every failure is `MemoryLimit`, and the ids stay dense.
#[test]
fn byte_limit_under_contention() {
    let max = if cfg!(miri) { 40 << 10 } else { 1 << 20 };
    let table = SharedStringTable::builder()
        .shards(4)
        .limits(Limits::new().max_bytes(max))
        .build();
    let seen = thread::scope(|scope| {
        let workers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let table = &table;
                scope.spawn(move || {
                    let mut rng = Rng(w as u64);
                    let mut mine = Vec::new();
                    let mut failures = 0;
                    for i in 0.. {
                        // Mostly short strings, some large ones that need
                        // chunks of their own.
                        let len = if rng.below(50) == 0 { 70_000 } else { 20 };
                        let len = if cfg!(miri) { len.min(200) } else { len };
                        let s = format!("{w}-{i}-{}", "x".repeat(len));
                        match table.try_intern(&s) {
                            Ok(id) => mine.push((s, id)),
                            Err(e) => {
                                assert_eq!(e.kind(), ErrorKind::MemoryLimit, "{e}");
                                failures += 1;
                                if failures > 20 {
                                    break;
                                }
                            }
                        }
                        assert!(table.memory_usage() <= max);
                    }
                    mine
                })
            })
            .collect();
        let mut seen = HashMap::new();
        for w in workers {
            seen.extend(w.join().unwrap());
        }
        seen
    });
    assert!(table.memory_usage() <= max);
    assert!(seen.len() > 10);
    check_final(table, &seen);
}

/// A failed insertion leaves the table as it was: same length, the string
/// absent, and the next string gets the next id.
#[test]
fn failure_leaves_no_hole() {
    let table = SharedStringTable::with_limits(Limits::new().max_bytes(64 << 10));
    let a = table.intern("a");
    let err = table.try_intern(&"x".repeat(1 << 20)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MemoryLimit);
    assert_eq!(table.len(), 2);
    assert_eq!(table.get(&"x".repeat(1 << 20)), None);
    assert_eq!(table.intern("b").to_u32(), a.to_u32() + 1);
    assert!(table.memory_usage() <= 64 << 10);
}

/// A hasher that sends every string to the same shard and bucket.
#[derive(Default)]
struct Constant;

impl Hasher for Constant {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, _: &[u8]) {}
}

#[test]
fn hostile_hasher_still_correct() {
    let n = if cfg!(miri) { 20 } else { 2000 };
    let table = SharedStringTable::builder()
        .hasher(BuildHasherDefault::<Constant>::default())
        .build();
    let seen = thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let table = &table;
                scope.spawn(move || {
                    (0..n)
                        .map(|i| {
                            // Both threads intern the same strings, in
                            // opposite orders.
                            let i = if w == 0 { i } else { n - 1 - i };
                            let s = format!("collide-{i}");
                            let id = table.intern(&s);
                            (s, id)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen: HashMap<String, StringId> = HashMap::new();
        for w in workers {
            for (s, id) in w.join().unwrap() {
                assert_eq!(*seen.entry(s).or_insert(id), id);
            }
        }
        seen
    });
    assert_eq!(seen.len(), n);
    let len = table.len();
    assert_eq!(len, n + 1);
    for (s, &id) in &seen {
        assert_eq!(table.resolve(id), Some(s.as_str()));
        assert_eq!(table.get(s), Some(id));
    }
    let resolver = table.into_resolver();
    assert_eq!(resolver.iter().next(), Some(""));
    assert_eq!(resolver.len(), len);
}

#[test]
fn odd_strings() {
    let table = SharedStringTable::new();
    let odd = [
        "\0",
        "\0\0\0",
        "\u{FEFF}",
        "\u{10FFFF}",
        "a\u{0301}",
        "\r\n",
        " ",
        "\u{1F980}\u{200D}\u{1F980}",
    ];
    let ids: Vec<StringId> = odd.iter().map(|s| table.intern(s)).collect();
    for (s, id) in odd.iter().zip(&ids) {
        assert_eq!(&table[*id], *s);
    }
    assert_eq!(table.intern(""), StringId::EMPTY);
    assert_eq!(table.get("\0\0"), None);
    assert_eq!(table.resolve(StringId::from_u32(u32::MAX)), None);
    assert_eq!(table.resolve(StringId::from_u32(u32::MAX - 1)), None);
}

#[test]
#[cfg_attr(miri, ignore = "allocates megabytes")]
fn huge_string() {
    let table = SharedStringTable::new();
    let big = "z".repeat(20 << 20);
    let id = table.intern(&big);
    assert_eq!(table.resolve(id).map(str::len), Some(20 << 20));
    assert!(table.memory_usage() >= 20 << 20);
    assert_eq!(table.intern("after"), StringId::from_u32(2));
}

#[test]
#[should_panic(expected = "string table is full")]
fn intern_panics_with_the_error() {
    let table = SharedStringTable::with_limits(Limits::new().max_strings(1));
    table.intern("a");
}

#[test]
fn debug_is_a_summary() {
    let table = SharedStringTable::new();
    table.intern("secret-label-value");
    let debug = format!("{table:?}");
    assert!(debug.starts_with("SharedStringTable {"), "{debug}");
    assert!(debug.contains("len: 2"), "{debug}");
    assert!(!debug.contains("secret"), "{debug}");
    let resolver = format!("{:?}", table.into_resolver());
    assert!(!resolver.contains("secret"), "{resolver}");
}

/// The frozen form works everywhere a `StringTable`'s does: pprof
/// encoding, and merging into a `StringTable`.
#[test]
fn resolver_feeds_pprof_and_merge() {
    let table = SharedStringTable::new();
    let (a, b) = (table.intern("main"), table.intern("poll"));
    let resolver = table.into_resolver();
    let mut out = Vec::new();
    strtab::pprof::write_string_table(resolver.iter(), &mut out);
    assert_eq!(out, b"\x32\x00\x32\x04main\x32\x04poll");
    assert_eq!(strtab::pprof::string_table_len(resolver.iter()), out.len());
    let mut other = StringTable::new();
    other.intern("poll");
    let remap = other.merge(&resolver);
    assert_eq!(&other[remap[b]], "poll");
    assert_eq!(&other[remap[a]], "main");
    assert_eq!(remap[b], StringId::from_u32(1));
    assert!(resolver.memory_usage() > 0);
    let shared: std::sync::Arc<strtab::Resolver> = std::sync::Arc::new(resolver);
    let s2 = shared.clone();
    thread::spawn(move || assert_eq!(s2.resolve(a), Some("main")))
        .join()
        .unwrap();
}

/// A table pre-sized for its strings fills without allocating, hands out
/// the ids a plain table does, and counts the pre-sized memory.
#[test]
fn presized_table_does_not_grow() {
    let n = if cfg!(miri) { 60 } else { 20_000 };
    let strings: Vec<String> = (0..n).map(|i| format!("profiler::frame_{i}")).collect();
    let bytes: usize = strings.iter().map(String::len).sum();
    // A fixed hasher, so the shards' shares (which the margin covers in
    // all but about one table in a thousand per shard) are reproducible.
    let builder = SharedStringTable::builder()
        .shards(8)
        .hasher(BuildHasherDefault::<std::hash::DefaultHasher>::default());
    let plain = builder.clone().build();
    let presized = builder.capacity(n, bytes).build();
    let before = presized.memory_usage();
    assert!(before > plain.memory_usage() + bytes, "{before}");
    for s in &strings {
        assert_eq!(presized.intern(s), plain.intern(s), "{s:?}");
    }
    assert_eq!(presized.memory_usage(), before, "the pre-sized table grew");
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(presized.get(s).map(StringId::index), Some(i + 1));
    }
    let resolver = presized.into_resolver();
    assert!(
        resolver
            .iter()
            .eq(std::iter::once("").chain(strings.iter().map(String::as_str)))
    );
}

/// A capacity hint beyond the byte limit is ignored: the table starts as
/// a plain one and stays within the limit.
#[test]
fn presize_beyond_the_byte_limit_starts_plain() {
    let limit = 256 << 10;
    let plain = SharedStringTable::builder()
        .shards(4)
        .limits(Limits::new().max_bytes(limit))
        .build();
    let table = SharedStringTable::builder()
        .shards(4)
        .limits(Limits::new().max_bytes(limit))
        .capacity(1 << 20, 64 << 20)
        .build();
    assert_eq!(table.memory_usage(), plain.memory_usage());
    assert_eq!(table.limits().get_max_bytes(), limit);
    while table.try_intern(&format!("label-{}", table.len())).is_ok() {}
    assert!(table.memory_usage() <= limit);
    // A hint that fits is kept.
    let small = SharedStringTable::builder()
        .shards(4)
        .limits(Limits::new().max_bytes(limit))
        .capacity(100, 2_000)
        .build();
    let before = small.memory_usage();
    assert!(before > plain.memory_usage());
    for i in 0..100 {
        small.intern(&format!("l{i:05}"));
    }
    assert_eq!(small.memory_usage(), before);
}

/// An empty hint pre-sizes nothing: such a table holds what a table
/// without a hint holds (the index segment and hint level that a plan for
/// one string would allocate are left to the first string).
#[test]
fn an_empty_hint_is_no_hint() {
    for shards in [1, 8] {
        let plain = SharedStringTable::builder().shards(shards).build();
        let table = SharedStringTable::builder()
            .shards(shards)
            .capacity(0, 0)
            .build();
        assert_eq!(table.memory_usage(), plain.memory_usage());
        let one = SharedStringTable::builder()
            .shards(shards)
            .limits(Limits::new().max_strings(1))
            .capacity(1000, 1 << 20)
            .build();
        assert_eq!(one.memory_usage(), plain.memory_usage());
    }
}

/// A hint of fewer strings than shards pre-sizes the index and the hint
/// level, not the shards: an even share below one string leaves no margin
/// to plan, and giving each shard room for two strings and a chunk took
/// 1,024 shards 655 KB for 5 strings. Once the strings are in, the table
/// holds what it holds without a hint.
#[test]
fn a_hint_below_the_shard_count_leaves_the_shards_alone() {
    // One fixed hasher for both tables, so that the strings reach the same
    // shards in each (the default hasher is seeded per table).
    type Fixed = BuildHasherDefault<std::hash::DefaultHasher>;
    let builder = || {
        SharedStringTable::builder()
            .shards(64)
            .hasher(Fixed::default())
    };
    let plain = builder().build();
    let hinted = builder().capacity(5, 50).build();
    // The index's first segment and the hint level for 64 shards.
    let added = hinted.memory_usage() - plain.memory_usage();
    assert!(added <= 16 << 10, "{added} bytes for a hint of 5 strings");
    for i in 0..5 {
        plain.intern(&format!("s{i}"));
        hinted.intern(&format!("s{i}"));
    }
    assert_eq!(hinted.memory_usage(), plain.memory_usage());
}

/// A capacity hint beyond the string limit is cut to it, the bytes in
/// proportion, as `StringTable`'s is.
#[test]
fn presize_is_cut_to_the_string_limit() {
    let limits = Limits::new().max_strings(11);
    let build = |strings, bytes| {
        SharedStringTable::builder()
            .shards(2)
            .limits(limits)
            .capacity(strings, bytes)
            .build()
    };
    let hinted = build(1 << 20, 64 << 20);
    assert_eq!(hinted.memory_usage(), build(10, 640).memory_usage());
}

#[test]
fn one_thread_matches_string_table() {
    let pool = pool();
    let stream = stream(&pool, 0);
    let shared = SharedStringTable::new();
    let mut single = StringTable::new();
    for s in &stream {
        assert_eq!(shared.intern(s), single.intern(s), "{s:?}");
    }
    let a: Vec<&str> = single.iter().collect();
    let resolver = shared.into_resolver();
    let b: Vec<&str> = resolver.iter().collect();
    assert_eq!(a, b);
}

/// A hasher that gives strings starting with `o` shard bit 9 (shard 512
/// of 1024) and every other string shard 0, all in one hint set with one
/// tag.
#[derive(Default)]
struct TwoShards(u64);

impl Hasher for TwoShards {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = if bytes.first() == Some(&b'o') {
            1 << 49
        } else {
            0
        };
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hint names a record by its location in its shard's arena, so the
/// hint cache must never read one shard's entry for a string of another:
/// a level has at least as many sets as the table has shards. Here every
/// string is in one set with one tag; shard 0's first string fills its
/// first block, so the hints of the next ones name its second block,
/// which shard 512 (one block) does not have: read in shard 512's arena,
/// they would point nowhere. Every string must keep its id.
#[test]
fn hints_stay_in_their_shard() {
    let (long, short) = if cfg!(miri) { (8, 4) } else { (300, 50) };
    let table = SharedStringTable::builder()
        .shards(1024)
        .hasher(BuildHasherDefault::<TwoShards>::default())
        .build();
    // The first string leaves its block too little room for a 200-byte
    // one (the first chunk holds `FIRST_CHUNK_CAPACITY` bytes).
    let strings: Vec<String> = (0..long)
        .map(|i| match i {
            0 => "x".repeat(FIRST_CHUNK_CAPACITY - 150),
            _ => format!("{i:0200}"),
        })
        .chain((0..short).map(|i| format!("o{i}")))
        .collect();
    for _ in 0..2 {
        for s in &strings {
            table.intern(s);
        }
    }
    let ids: Vec<StringId> = strings.iter().map(|s| table.intern(s)).collect();
    for (s, &id) in strings.iter().zip(&ids) {
        assert_eq!(table.get(s), Some(id), "{s:?}");
        assert_eq!(table.resolve(id), Some(s.as_str()));
    }
    assert_eq!(table.len(), strings.len() + 1);
}

/// A hasher whose output changes while the table lives: the salt, shared
/// with the test, is the hash's shard bit (bit 40) of a table of two
/// shards. A logic error, but safe code, so it may cost lookups, never
/// memory safety.
#[derive(Clone, Default)]
struct Salted(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl std::hash::BuildHasher for Salted {
    type Hasher = SaltedHasher;
    fn build_hasher(&self) -> SaltedHasher {
        SaltedHasher {
            salt: self.0.load(std::sync::atomic::Ordering::Relaxed),
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }
}

/// [`Salted`]'s hasher: FNV-1a over the bytes, bit 40 the salt.
struct SaltedHasher {
    salt: u64,
    hash: u64,
}

impl Hasher for SaltedHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.hash = (self.hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.hash & !(1 << 40) | self.salt << 40
    }
}

/// When a hint level replaces another, its hints are carried over by
/// hashing their strings again. With a hasher that now sends the strings
/// of shard 0 to shard 1, a carried hint filed under shard 1 would name a
/// shard-0 record that lookups then read through shard 1's block biases:
/// a wild read (this crashed before carry-over dropped such hints). The
/// first strings fill several of shard 0's blocks; the switch to the
/// second level comes at id 512. Whatever `get` finds afterwards must be
/// the string looked up.
#[test]
fn a_hasher_that_changes_its_output_stays_memory_safe() {
    let salt = Salted::default();
    let table = SharedStringTable::builder()
        .shards(2)
        .hasher(salt.clone())
        .build();
    let first: Vec<String> = (0..400)
        .map(|i| format!("phase-one/{i:04}/{}", "x".repeat(40)))
        .collect();
    for s in &first {
        table.intern(s);
    }
    salt.0.store(1, std::sync::atomic::Ordering::Relaxed);
    let mut i = 0;
    while table.len() <= 600 {
        let s = format!("phase-two/{i}");
        let id = table.intern(&s);
        assert_eq!(table.resolve(id), Some(s.as_str()));
        i += 1;
    }
    for s in &first {
        if let Some(id) = table.get(s) {
            assert_eq!(table.resolve(id), Some(s.as_str()));
        }
    }
    let len = table.len();
    assert_eq!(table.into_resolver().len(), len);
}

/// Strings too long for what is left of their block run on into the next
/// block (`Arena::spill`, in a shard's arena once its chunks hold more than
/// one block); the strings after them fill what is left of that block.
/// Each block must still be published to the hint cache before a hint
/// names a record in it: the hinted hits below read the records through
/// their block's published address, so an unpublished block would be a
/// wild read (and a failed `debug_assert` in `insert_new`).
#[test]
#[cfg_attr(
    miri,
    ignore = "a megabyte per shard (a minute); the spill's reads and writes are in the arena's own Miri-run test"
)]
fn spilled_records_and_the_block_after_them() {
    // One shard, so one arena; its chunks span several blocks once it
    // holds more than 16 of its 64 KiB chunks.
    let (n, size) = (60, 50_000);
    let table = SharedStringTable::builder().shards(1).build();
    let strings: Vec<String> = (0..n)
        .flat_map(|i| {
            [
                format!("{i:05}").repeat(size / 5 + 1)[..size - i].to_string(),
                format!("after-{i}"),
            ]
        })
        .collect();
    let ids: Vec<StringId> = strings.iter().map(|s| table.intern(s)).collect();
    // Again, now through the hints the insertions stored.
    for (s, &id) in strings.iter().zip(&ids) {
        assert_eq!(table.intern(s), id);
        assert_eq!(table.get(s), Some(id));
        assert_eq!(table.resolve(id), Some(s.as_str()));
    }
    let resolver = table.into_resolver();
    assert!(
        resolver
            .iter()
            .skip(1)
            .eq(strings.iter().map(String::as_str))
    );
}

/// Batches from several threads at once, each sample a mix of slices of
/// one pool (repeated within the sample, as a profiler's mapping file is,
/// and prefixes at the same addresses), owned copies, `""` and long
/// strings: every id is the string's one id,
/// the same as a later one-by-one `get` gives, and the table ends dense.
/// Each thread's batches of owned copies send its recent-slice cache into
/// its pause and back.
#[test]
fn batches_from_threads_agree() {
    let pool = pool();
    let table = SharedStringTable::new();
    let threads = if cfg!(miri) { 2 } else { 4 };
    let rounds = if cfg!(miri) { 12 } else { 400 };
    let seen: Vec<Vec<(String, StringId)>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                let (pool, table) = (&pool, &table);
                scope.spawn(move || {
                    let mut rng = Rng(500 + w as u64);
                    let mut seen = Vec::new();
                    for round in 0..rounds {
                        let len = rng.below(40);
                        let sample: Vec<&str> = (0..len)
                            .map(|_| {
                                let s = pool[rng.below(pool.len().min(8 + round % 60))].as_str();
                                // Now and then a prefix: the same address,
                                // another length.
                                match rng.below(5) {
                                    0 => s.get(..rng.below(s.len() + 1)).unwrap_or(s),
                                    _ => s,
                                }
                            })
                            .collect();
                        let mut ids = vec![StringId::EMPTY; sample.len()];
                        if round % 7 < 3 {
                            let owned: Vec<String> = sample.iter().map(|s| s.to_string()).collect();
                            table.intern_batch(&owned, &mut ids);
                        } else {
                            table.intern_batch(&sample, &mut ids);
                        }
                        for (s, id) in sample.iter().zip(ids) {
                            assert_eq!(table.resolve(id), Some(*s));
                            seen.push((s.to_string(), id));
                        }
                    }
                    seen
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut one: HashMap<String, StringId> = HashMap::new();
    for (s, id) in seen.into_iter().flatten() {
        assert_eq!(*one.entry(s).or_insert(id), id, "two ids for one string");
    }
    for (s, &id) in &one {
        assert_eq!(table.get(s), Some(id));
    }
    check_final(table, &one);
}

/// A batch that meets the string limit stops there: the strings before it
/// keep their ids, the error says how many, and no id is lost or doubled.
#[test]
fn failed_batch_reports_progress() {
    let table = SharedStringTable::with_limits(Limits::new().max_strings(11));
    let strings: Vec<String> = (0..30).map(|i| format!("frame-{}", i % 15)).collect();
    let slices: Vec<&str> = strings.iter().map(String::as_str).collect();
    let mut ids = vec![StringId::EMPTY; slices.len()];
    let err = table.try_intern_batch(&slices, &mut ids).unwrap_err();
    assert_eq!(err.interned(), 10);
    assert_eq!(err.error().kind(), ErrorKind::IdsExhausted);
    for (s, id) in slices.iter().zip(&ids).take(10) {
        assert_eq!(table.resolve(*id), Some(*s));
    }
    assert_eq!(table.len(), 11);
    // A batch of strings the table holds still succeeds.
    table.intern_batch(&slices[..10], &mut ids[..10]);
}

#[test]
#[should_panic(expected = "one output id per input string")]
fn batch_wants_one_id_per_string() {
    SharedStringTable::new().intern_batch(&["a", "b"], &mut [StringId::EMPTY]);
}

/// The file and line a panic in `f` reports, from a panic hook that
/// records only this thread's panics (and passes the others on).
fn panic_line(f: impl FnOnce()) -> Option<(String, u32)> {
    use std::cell::{Cell, RefCell};
    thread_local! {
        static CAPTURE: Cell<bool> = const { Cell::new(false) };
        static WHERE: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if CAPTURE.get() {
            let at = info.location().map(|l| (l.file().to_owned(), l.line()));
            WHERE.set(at);
        } else {
            previous(info);
        }
    }));
    CAPTURE.set(true);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CAPTURE.set(false);
    assert!(caught.is_err(), "no panic");
    WHERE.take()
}

#[test]
fn batch_length_panics_name_the_caller() {
    let (a, b) = (["a", "b"], &mut [StringId::EMPTY]);
    let shared = SharedStringTable::new();
    let mut table = StringTable::new();
    let cases: [(u32, Option<(String, u32)>); 4] = [
        (line!(), panic_line(|| shared.intern_batch(&a, b))),
        (line!(), panic_line(|| drop(shared.try_intern_batch(&a, b)))),
        (line!(), panic_line(|| table.intern_batch(&a, b))),
        (line!(), panic_line(|| drop(table.try_intern_batch(&a, b)))),
    ];
    for (line, at) in cases {
        assert_eq!(at, Some((file!().to_owned(), line)));
    }
}

/// Every panic a caller can provoke (a limit reached, a failed build, an
/// id the table never gave out) names the caller's line, not the crate's.
#[test]
fn limit_and_index_panics_name_the_caller() {
    let full = || Limits::new().max_strings(1);
    let shared = SharedStringTable::with_limits(full());
    let mut table = StringTable::with_limits(full());
    let mut other = StringTable::new();
    other.intern("a");
    let frozen = StringTable::new().into_resolver();
    let unknown = StringId::from_u32(7);
    // Builds that fail: more bytes, or more strings, than the crate can
    // hold.
    let huge_shared = || SharedStringTable::builder().capacity(10, usize::MAX);
    let huge_table = || StringTable::builder().capacity(usize::MAX, 0);
    let cases: [(u32, Option<(String, u32)>); 8] = [
        (line!(), panic_line(|| _ = shared.intern("a"))),
        (line!(), panic_line(|| _ = table.intern("a"))),
        (line!(), panic_line(|| drop(table.merge(&other)))),
        (line!(), panic_line(|| _ = &shared[unknown])),
        (line!(), panic_line(|| _ = &other[unknown])),
        (line!(), panic_line(|| _ = &frozen[unknown])),
        (line!(), panic_line(|| drop(huge_shared().build()))),
        (line!(), panic_line(|| drop(huge_table().build()))),
    ];
    for (i, (line, at)) in cases.into_iter().enumerate() {
        assert_eq!(at, Some((file!().to_owned(), line)), "case {i}");
    }
}

/// A profiler may wrap its interning in `catch_unwind`: the tables, the
/// frozen form and an iterator are unwind-safe.
#[test]
fn tables_are_unwind_safe() {
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>(_: &T) {}
    let table = StringTable::new();
    unwind_safe(&table);
    unwind_safe(&table.iter());
    unwind_safe(&SharedStringTable::new());
    unwind_safe(&table.into_resolver());
    let shared = SharedStringTable::new();
    let id = shared.intern("a");
    let r = std::panic::catch_unwind(|| shared.resolve(id).map(str::len));
    assert_eq!(r.ok(), Some(Some(1)));
}
