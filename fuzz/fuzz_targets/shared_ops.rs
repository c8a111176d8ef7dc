//! `shared_ops`: arbitrary sequences of `SharedStringTable` operations on
//! one thread, checked step by step against a simple model (a
//! `Vec<String>` in id order and a `HashMap<String, id>`). The concurrent
//! behaviour is covered by tests/shared.rs, loom and ThreadSanitizer; this
//! target explores shard counts, limits, capacity hints, hashers and
//! string shapes.
//!
//! Checked after every operation:
//! - ids are dense and in insertion order: a new string gets id `len()`,
//!   a known string its old id, `""` is always id 0;
//! - `resolve(intern(s)) == s`, `table[id]` agrees with `resolve`, ids
//!   never given out resolve to `None`;
//! - `get` never inserts;
//! - an error leaves the table unchanged (same `len`, no id taken, the
//!   string absent, earlier ids resolving), hits never fail, and the
//!   error kind matches the limit;
//! - `memory_usage() <= limits().get_max_bytes()` and
//!   `len() <= limits().get_max_strings()`, always;
//! - at the end, `into_resolver` iterates the model's strings in id order.

#![no_main]

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hasher};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use strtab::{ErrorKind, Limits, SharedStringTable, StringId};

/// Longest string a `Repeat` makes: past a 256 KiB chunk, so dedicated
/// chunks are exercised.
const MAX_REPEAT: usize = 600 * 1024;
/// Cap on the bytes one input may intern in total (keeps RSS bounded).
const MAX_TOTAL_BYTES: usize = 8 << 20;

#[derive(Arbitrary, Debug)]
struct Input {
    /// log2 of the shard count (modulo 11: 1 to 1024 shards).
    shards_log2: u8,
    max_strings: Option<u16>,
    /// In units of 64 bytes (so 0..4 MiB).
    max_bytes: Option<u16>,
    hasher: HasherKind,
    /// `SharedBuilder::capacity`: strings, and bytes in units of 64.
    capacity: Option<(u16, u16)>,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum HasherKind {
    Default,
    Sip,
    /// Every string in one shard and few buckets.
    Colliding,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Intern(Text),
    TryIntern(Text),
    Get(Text),
    Resolve(u32),
    Check,
}

#[derive(Arbitrary, Debug)]
enum Text {
    Bytes(Vec<u8>),
    Existing(u16),
    Repeat { byte: u8, lo: u16, hi: Option<u8> },
    Numbered(u16),
}

impl Text {
    fn make(&self, model: &Model) -> String {
        match self {
            Text::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Text::Existing(i) => model.strings[usize::from(*i) % model.strings.len()].clone(),
            Text::Repeat { byte, lo, hi } => {
                let c = char::from(b' ' + byte % 95);
                let len = match hi {
                    None => usize::from(*lo),
                    Some(hi) => (usize::from(*hi) << 16 | usize::from(*lo)) % MAX_REPEAT,
                };
                if model.total_bytes + len > MAX_TOTAL_BYTES {
                    String::from("too-big")
                } else {
                    c.to_string().repeat(len)
                }
            }
            Text::Numbered(n) => format!("s{n}"),
        }
    }
}

/// Hashes a value to its length modulo 4 (times a constant, so both
/// halves of the 64-bit hash are non-zero, but the shard bits barely
/// vary).
#[derive(Clone, Copy, Default)]
struct Colliding;

#[derive(Default)]
struct CollidingHasher(u64);

impl Hasher for CollidingHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = self.0.wrapping_add(bytes.len() as u64);
    }
    fn finish(&self) -> u64 {
        (self.0 % 4).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl BuildHasher for Colliding {
    type Hasher = CollidingHasher;
    fn build_hasher(&self) -> CollidingHasher {
        CollidingHasher::default()
    }
}

struct Model {
    strings: Vec<String>,
    ids: HashMap<String, u32>,
    total_bytes: usize,
}

fn id(i: usize) -> StringId {
    StringId::from_u32(u32::try_from(i).unwrap())
}

fn check_invariants<S>(table: &SharedStringTable<S>, model: &Model) {
    assert_eq!(table.len(), model.strings.len());
    assert!(table.len() <= table.limits().get_max_strings());
    assert!(table.memory_usage() <= table.limits().get_max_bytes());
    assert_eq!(table.resolve(id(model.strings.len())), None);
}

fn check_full<S: BuildHasher>(table: &SharedStringTable<S>, model: &Model) {
    check_invariants(table, model);
    for (i, s) in model.strings.iter().enumerate() {
        assert_eq!(table.resolve(id(i)), Some(s.as_str()));
        assert_eq!(table.get(s), Some(id(i)));
    }
}

fn run<S: BuildHasher>(input: &Input, hasher: S) {
    let mut limits = Limits::new();
    if let Some(n) = input.max_strings {
        limits = limits.max_strings(usize::from(n));
    }
    if let Some(b) = input.max_bytes {
        limits = limits.max_bytes(usize::from(b) * 64);
    }
    let mut builder = SharedStringTable::builder()
        .shards(1 << (input.shards_log2 % 11))
        .limits(limits);
    if let Some((strings, bytes)) = input.capacity {
        builder = builder.capacity(usize::from(strings), usize::from(bytes) * 64);
    }
    let table = builder
        .hasher(hasher)
        .try_build()
        .expect("building a shared table must not fail");
    assert_eq!(table.limits().get_max_strings(), limits.get_max_strings());
    let mut model = Model {
        strings: vec![String::new()],
        ids: HashMap::from([(String::new(), 0)]),
        total_bytes: 0,
    };
    for op in &input.ops {
        match op {
            Op::Intern(t) | Op::TryIntern(t) => {
                let s = t.make(&model);
                let len = table.len();
                match table.try_intern(&s) {
                    Ok(got) => {
                        let expect = match model.ids.get(&s) {
                            Some(&known) => known,
                            None => {
                                let new = u32::try_from(model.strings.len()).unwrap();
                                model.strings.push(s.clone());
                                model.ids.insert(s.clone(), new);
                                model.total_bytes += s.len();
                                new
                            }
                        };
                        assert_eq!(got, StringId::from_u32(expect), "{s:?}");
                        assert_eq!(table.resolve(got), Some(s.as_str()));
                        assert_eq!(&table[got], s.as_str());
                    }
                    Err(e) => {
                        assert!(!model.ids.contains_key(&s), "a hit failed: {e}");
                        match e.kind() {
                            ErrorKind::IdsExhausted => {
                                assert_eq!(len, table.limits().get_max_strings())
                            }
                            ErrorKind::MemoryLimit => {
                                assert_ne!(table.limits().get_max_bytes(), usize::MAX)
                            }
                            kind => panic!("unexpected {kind:?}: {e}"),
                        }
                        assert_eq!(table.len(), len, "a failure took an id");
                        assert_eq!(table.get(&s), None);
                        if let Some(last) = model.strings.last() {
                            assert_eq!(table.resolve(id(len - 1)), Some(last.as_str()));
                        }
                    }
                }
            }
            Op::Get(t) => {
                let s = t.make(&model);
                assert_eq!(table.get(&s), model.ids.get(&s).map(|&i| StringId::from_u32(i)));
            }
            Op::Resolve(i) => {
                let got = table.resolve(StringId::from_u32(*i));
                assert_eq!(got, model.strings.get(*i as usize).map(String::as_str));
            }
            Op::Check => check_full(&table, &model),
        }
        check_invariants(&table, &model);
    }
    check_full(&table, &model);
    let resolver = table.into_resolver();
    assert_eq!(resolver.len(), model.strings.len());
    assert!(resolver.iter().eq(model.strings.iter().map(String::as_str)));
    assert!(resolver.iter().rev().eq(model.strings.iter().rev().map(String::as_str)));
}

fuzz_target!(|input: Input| {
    match input.hasher {
        HasherKind::Default => run(&input, hashbrown_default()),
        HasherKind::Sip => run(&input, BuildHasherDefault::<DefaultHasher>::default()),
        HasherKind::Colliding => run(&input, Colliding),
    }
});

/// The default hasher's type, without naming hashbrown.
fn hashbrown_default() -> impl BuildHasher {
    SharedStringTable::new().hasher().clone()
}
