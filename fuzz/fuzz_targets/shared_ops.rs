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
//! - `try_intern_batch` of slices of one buffer (repeats by the same
//!   slice, prefixes at the same address) gives the ids one-by-one
//!   interning gives, and on an error has interned exactly the strings
//!   before the one it reports;
//! - an error leaves the table unchanged (same `len`, no id taken, the
//!   string absent, earlier ids resolving), hits never fail, and the
//!   error kind matches the limit;
//! - `memory_usage() <= limits().get_max_bytes()` and
//!   `len() <= limits().get_max_strings()`, always;
//! - at the end, `into_resolver` iterates the model's strings in id order,
//!   and `Resolver::try_compact` keeps `""` and exactly the chosen ids.
//!
//! With the `Unstable` hasher, whose output changes at each `Reseed` (a
//! logic error the docs allow, but safe code), one string may get several
//! ids and `get` may miss; everything else is still checked: ids stay
//! dense, each id resolves to the string it was given for, `get` answers
//! an id of its string or `None`, errors take no id, the limits hold,
//! and `into_resolver` iterates exactly the ids given out.

#![no_main]

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[path = "common/slices.rs"]
mod slices;
#[path = "common/text.rs"]
mod text;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use strtab::{ErrorKind, Limits, SharedStringTable, StringId};
use text::{Text, make_all};

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
    /// SipHash under a salt that `Op::Reseed` changes.
    Unstable,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Intern(Text),
    TryIntern(Text),
    /// `try_intern_batch` of slices of one buffer (see `slices`).
    Batch(Vec<Text>),
    Get(Text),
    Resolve(u32),
    Check,
    /// Changes the `Unstable` hasher's salt (no effect with the others).
    Reseed(u64),
    /// Interns `count % 2048` numbered strings from `first` on, so that
    /// short inputs reach the hint cache's level switches (512 and 2Ki
    /// strings).
    Bulk {
        first: u16,
        count: u16,
    },
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

/// SipHash of the salt, then the value: a new salt moves every string to
/// another hash (and shard, and hint set).
#[derive(Clone, Default)]
struct Unstable(Arc<AtomicU64>);

impl BuildHasher for Unstable {
    type Hasher = DefaultHasher;
    fn build_hasher(&self) -> DefaultHasher {
        let mut h = DefaultHasher::new();
        h.write_u64(self.0.load(Ordering::Relaxed));
        h
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

fn check_full<S: BuildHasher>(
    table: &SharedStringTable<S>,
    model: &Model,
    salt: Option<&AtomicU64>,
) {
    check_invariants(table, model);
    for (i, s) in model.strings.iter().enumerate() {
        assert_eq!(table.resolve(id(i)), Some(s.as_str()));
        check_get(table, model, s, salt);
    }
}

/// `get(s)` against the model: the model's id; with an unstable hasher,
/// any id given out for `s`, or `None`.
fn check_get<S: BuildHasher>(
    table: &SharedStringTable<S>,
    model: &Model,
    s: &str,
    salt: Option<&AtomicU64>,
) {
    let got = table.get(s);
    if salt.is_none() {
        assert_eq!(got, model.ids.get(s).map(|&i| StringId::from_u32(i)));
    } else if let Some(got) = got {
        assert_eq!(model.strings.get(got.index()).map(String::as_str), Some(s));
    }
}

/// Interns `s` with `try_intern` and checks the answer against the model,
/// which it updates.
fn intern_checked<S: BuildHasher>(
    table: &SharedStringTable<S>,
    model: &mut Model,
    s: String,
    salt: Option<&AtomicU64>,
) {
    match table.try_intern(&s) {
        Ok(got) => accepted(table, model, &s, got, salt),
        Err(e) => refused(table, model, &s, &e, salt),
    }
}

/// Checks the id `got` that interning `s` gave against the model, which
/// it updates.
fn accepted<S: BuildHasher>(
    table: &SharedStringTable<S>,
    model: &mut Model,
    s: &str,
    got: StringId,
    salt: Option<&AtomicU64>,
) {
    if salt.is_some() {
        // A new id is the next one; an old one is of `s`.
        if got.index() == model.strings.len() {
            model.strings.push(s.to_owned());
            model.total_bytes += s.len();
        }
        assert_eq!(model.strings.get(got.index()).map(String::as_str), Some(s));
        assert_eq!(table.resolve(got), Some(s));
        return;
    }
    let expect = match model.ids.get(s) {
        Some(&known) => known,
        None => {
            let new = u32::try_from(model.strings.len()).unwrap();
            model.strings.push(s.to_owned());
            model.ids.insert(s.to_owned(), new);
            model.total_bytes += s.len();
            new
        }
    };
    assert_eq!(got, StringId::from_u32(expect), "{s:?}");
    assert_eq!(table.resolve(got), Some(s));
    assert_eq!(&table[got], s);
}

/// Checks that interning `s` failed as it may (a limit), leaving the
/// table as the model has it.
fn refused<S: BuildHasher>(
    table: &SharedStringTable<S>,
    model: &Model,
    s: &str,
    e: &strtab::Error,
    salt: Option<&AtomicU64>,
) {
    let len = model.strings.len();
    // With an unstable hasher a known string may be looked for in another
    // shard: an insertion.
    assert!(
        salt.is_some() || !model.ids.contains_key(s),
        "a hit failed: {e}"
    );
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
    check_get(table, model, s, salt);
    if let Some(last) = model.strings.last() {
        assert_eq!(table.resolve(id(len - 1)), Some(last.as_str()));
    }
}

/// Runs `input`'s operations; `salt` is the `Unstable` hasher's.
fn run<S: BuildHasher>(input: &Input, hasher: S, salt: Option<&AtomicU64>) {
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
    // A thread's batches share one pause of the recent-slice cache, which
    // the earlier inputs' batches may have started. Empty batches count
    // down a pause and, once it is over, end any run of strikes: each
    // input starts with the cache on, as on a new thread. (Not a thread
    // per input: LeakSanitizer can see a finished scoped thread's
    // destructor list before the thread frees it.)
    for _ in 0..64 {
        table.intern_batch::<&str>(&[], &mut []);
    }
    let mut model = Model {
        strings: vec![String::new()],
        ids: HashMap::from([(String::new(), 0)]),
        total_bytes: 0,
    };
    for op in &input.ops {
        match op {
            Op::Intern(t) | Op::TryIntern(t) => {
                let s = t.make(&model.strings, model.total_bytes, 0);
                intern_checked(&table, &mut model, s, salt);
            }
            // Bounded, so that an input's run stays short.
            Op::Bulk { .. } if model.strings.len() >= 1 << 14 => {}
            Op::Bulk { first, count } => {
                for n in 0..u32::from(*count) % 2048 {
                    let s = format!("bulk::{}", u32::from(*first) + n);
                    intern_checked(&table, &mut model, s, salt);
                }
            }
            Op::Batch(texts) => {
                // Slices of one buffer, as a profiler's sample passes them.
                let made = make_all(texts, &model.strings, model.total_bytes);
                let model = &mut model;
                let mut failed = None;
                slices::intern_sample(
                    &made,
                    |strings, ids| table.try_intern_batch(strings, ids),
                    |s, id| accepted(&table, model, s, id, salt),
                    |s, e| failed = Some((s.to_owned(), e.error().clone())),
                );
                if let Some((s, e)) = failed {
                    refused(&table, model, &s, &e, salt);
                }
            }
            Op::Get(t) => check_get(
                &table,
                &model,
                &t.make(&model.strings, model.total_bytes, 0),
                salt,
            ),
            Op::Resolve(i) => {
                let got = table.resolve(StringId::from_u32(*i));
                assert_eq!(got, model.strings.get(*i as usize).map(String::as_str));
            }
            Op::Check => check_full(&table, &model, salt),
            Op::Reseed(new) => {
                if let Some(salt) = salt {
                    salt.store(*new, Ordering::Relaxed);
                }
            }
        }
        check_invariants(&table, &model);
    }
    check_full(&table, &model, salt);
    let resolver = table.into_resolver();
    assert_eq!(resolver.len(), model.strings.len());
    assert!(resolver.iter().eq(model.strings.iter().map(String::as_str)));
    assert!(
        resolver
            .iter()
            .rev()
            .eq(model.strings.iter().rev().map(String::as_str))
    );
    // Compaction of the frozen table to every third id from 1: `""` is
    // kept though not chosen, then the chosen ids' strings in order. The
    // compacted table has no limits, so only the allocator could refuse.
    let keep: strtab::IdSet = (1..resolver.len() as u32)
        .step_by(3)
        .map(StringId::from_u32)
        .collect();
    let (compact, remap) = resolver
        .try_compact(&keep)
        .expect("an unlimited table compacts");
    let kept =
        std::iter::once("").chain(model.strings.iter().skip(1).step_by(3).map(String::as_str));
    assert!(compact.iter().eq(kept), "compact kept the wrong strings");
    for (old, new) in remap.iter() {
        match new {
            Some(new) => assert_eq!(&compact[new], &resolver[old]),
            None => assert!(old.index() % 3 != 1, "{old:?} was chosen"),
        }
    }
    assert_eq!(remap.get(StringId::EMPTY), Some(StringId::EMPTY));
}

fuzz_target!(|input: Input| {
    match input.hasher {
        HasherKind::Default => run(&input, hashbrown_default(), None),
        HasherKind::Sip => run(&input, BuildHasherDefault::<DefaultHasher>::default(), None),
        HasherKind::Colliding => run(&input, Colliding, None),
        HasherKind::Unstable => {
            let hasher = Unstable::default();
            let salt = Arc::clone(&hasher.0);
            run(&input, hasher, Some(&salt));
        }
    }
});

/// The default hasher's type, without naming hashbrown.
fn hashbrown_default() -> impl BuildHasher {
    SharedStringTable::new().hasher().clone()
}
