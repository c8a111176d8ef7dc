//! `table_ops`: arbitrary sequences of table operations, checked step by
//! step against a simple model (a `Vec<String>` in id order and a
//! `HashMap<String, id>`).
//!
//! Checked after every operation:
//! - ids are dense and in insertion order: a new string gets id `len()`,
//!   a known string gets its old id, `""` is always id 0;
//! - `resolve(intern(s)) == s`, `table[id]` agrees with `resolve`;
//! - `get` and `contains` never insert;
//! - an error leaves the table unchanged (same `len`, the failed string
//!   absent, every earlier id resolving to its string), hits never fail,
//!   and the error names the limit that was hit;
//! - `memory_usage() <= limits().get_max_bytes()` and
//!   `len() <= limits().get_max_strings()`, always;
//! - `clear` keeps the memory, and refilling with the same strings
//!   allocates nothing and hands out the same ids;
//! - `into_resolver` keeps every string and id;
//! - `try_intern_batch` gives the ids one-by-one interning would, and on
//!   error reports how far it got, with those strings kept;
//! - `try_merge` returns a remap to the ids the model gives the other
//!   table's strings, and on error one of exactly the strings it merged;
//! - `try_compact` keeps `""` and exactly the chosen strings, in order,
//!   with a remap that agrees, and leaves the table untouched;
//! - `shrink_to` never grows the table, does nothing within `max_bytes`,
//!   keeps every string and id, and right after `clear` gets the table
//!   under `max_bytes` or a new table's footprint;
//! - `try_reserve` keeps every string and id, fails only for the limits
//!   or the arena's room, and makes no room when asked for none.
//!
//! Every few operations, and at the end, the whole table is compared with
//! the model (`iter`, forwards and backwards, `resolve` and `get` of every
//! string).

#![no_main]

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hasher};

#[path = "common/slices.rs"]
mod slices;
#[path = "common/text.rs"]
mod text;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use strtab::{ErrorKind, IdSet, Limits, Resolver, StringId, StringTable};
use text::{Text, make_all};

/// Compare the whole table with the model every this many operations.
const FULL_CHECK_EVERY: usize = 32;

#[derive(Arbitrary, Debug)]
struct Input {
    setup: Setup,
    hasher: HasherKind,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum HasherKind {
    /// hashbrown's randomly seeded foldhash (what users get).
    Default,
    /// std's SipHash with fixed keys: reproducible.
    Sip,
    /// A terrible hasher that only looks at the length modulo 4: nearly
    /// every lookup walks a collision chain and compares bytes.
    Colliding,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Setup {
    /// `Builder::capacity(strings, bytes)`.
    capacity: Option<(u16, u32)>,
    max_strings: Option<u16>,
    /// In units of 64 bytes (so 0..4 MiB).
    max_bytes: Option<u16>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Intern(Text),
    TryIntern(Text),
    Get(Text),
    Resolve(u32),
    Clear,
    ClearAndRefill,
    IntoResolver,
    Check,
    /// `try_intern_batch` of several strings (duplicates included).
    Batch(Vec<Text>),
    /// `try_merge` of a fresh table holding these strings.
    Merge(Vec<Text>),
    /// `try_compact` keeping the ids whose bit is set (cycled over ids).
    Compact(Vec<u8>),
    /// `shrink_to`, after a `clear` if `clear_first`.
    ShrinkTo {
        clear_first: bool,
        max: Shrink,
    },
    /// `try_reserve(strings, bytes * 16)` (up to 1 MiB: libFuzzer counts
    /// a larger allocation as running out of memory).
    Reserve {
        strings: u16,
        bytes: u16,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Shrink {
    /// `shrink_to_fit`.
    Fit,
    /// `shrink_to(memory_usage() * n / 256)`.
    Fraction(u8),
    /// `shrink_to(n * 64)`.
    Bytes(u16),
}

#[derive(Clone, Copy, Default)]
struct Colliding;

/// Hashes a value to its length modulo 4 (times a constant, so both
/// halves of the 64-bit hash are non-zero).
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

/// The strings in id order, and their ids.
struct Model {
    strings: Vec<String>,
    ids: HashMap<String, u32>,
    total_bytes: usize,
}

impl Model {
    fn new() -> Model {
        Model {
            strings: vec![String::new()],
            ids: HashMap::from([(String::new(), 0)]),
            total_bytes: 0,
        }
    }

    fn push(&mut self, s: &str) -> u32 {
        let id = u32::try_from(self.strings.len()).unwrap();
        self.strings.push(s.to_owned());
        self.ids.insert(s.to_owned(), id);
        self.total_bytes += s.len();
        id
    }
}

fn build<S: BuildHasher>(setup: Setup, hasher: S) -> StringTable<S> {
    let mut limits = Limits::new();
    if let Some(n) = setup.max_strings {
        limits = limits.max_strings(usize::from(n));
    }
    if let Some(b) = setup.max_bytes {
        limits = limits.max_bytes(usize::from(b) * 64);
    }
    let mut builder = StringTable::builder().hasher(hasher).limits(limits);
    if let Some((strings, bytes)) = setup.capacity {
        builder = builder.capacity(usize::from(strings), bytes as usize % (4 << 20));
    }
    let table = builder
        .try_build()
        .expect("building a table within 4 MiB must not fail");
    // Limits are kept; only a byte limit below the *empty* table's
    // footprint (a few dozen bytes) is raised, and only to that footprint.
    let effective = table.limits();
    assert_eq!(effective.get_max_strings(), limits.get_max_strings());
    if effective.get_max_bytes() != limits.get_max_bytes() {
        let floor = empty_footprint();
        assert!(
            limits.get_max_bytes() < floor && effective.get_max_bytes() == floor,
            "a byte limit of {} was raised to {} (the empty table holds {floor} bytes)",
            limits.get_max_bytes(),
            effective.get_max_bytes(),
        );
    }
    table
}

/// Heap bytes of the smallest table: what a byte limit below it is raised to.
fn empty_footprint() -> usize {
    StringTable::with_limits(Limits::new().max_bytes(0)).memory_usage()
}

/// Heap bytes of `StringTable::new()`: what a cleared table shrinks to at
/// most (or to `max_bytes`, if larger).
fn new_footprint() -> usize {
    StringTable::new().memory_usage()
}

fn limited<S>(table: &StringTable<S>) -> bool {
    table.limits() != Limits::new()
}

/// The cheap invariants, checked after every operation.
fn check_invariants<S: BuildHasher>(table: &StringTable<S>, model: &Model) {
    assert_eq!(table.len(), model.strings.len());
    assert_ne!(table.len(), 0);
    assert_eq!(table.is_empty(), model.strings.len() < 2);
    assert!(table.len() <= table.limits().get_max_strings());
    assert!(
        table.memory_usage() <= table.limits().get_max_bytes(),
        "memory_usage {} over the limit {}",
        table.memory_usage(),
        table.limits().get_max_bytes()
    );
    assert_eq!(table.resolve(StringId::EMPTY), Some(""));
    let last = StringId::from_u32(u32::try_from(model.strings.len() - 1).unwrap());
    assert_eq!(
        table.resolve(last),
        Some(model.strings[last.index()].as_str())
    );
    let past = StringId::from_u32(u32::try_from(model.strings.len()).unwrap());
    assert_eq!(table.resolve(past), None);
}

/// The whole table against the model.
fn check_full<S: BuildHasher>(table: &StringTable<S>, model: &Model) {
    check_invariants(table, model);
    assert!(table.iter().eq(model.strings.iter().map(String::as_str)));
    assert!(
        table
            .iter()
            .rev()
            .eq(model.strings.iter().rev().map(String::as_str))
    );
    assert_eq!(table.iter().len(), model.strings.len());
    // Internal iteration (`fold`: the arena block by block, long strings
    // found through their records' links), whole and from the middle.
    for skip in [0, model.strings.len() / 2] {
        let mut iter = table.iter();
        if skip > 0 {
            iter.nth(skip - 1);
        }
        let mut folded = Vec::new();
        iter.for_each(|s| folded.push(s));
        assert!(
            folded
                .iter()
                .copied()
                .eq(model.strings[skip..].iter().map(String::as_str))
        );
    }
    for (i, s) in model.strings.iter().enumerate() {
        let id = StringId::from_u32(u32::try_from(i).unwrap());
        assert_eq!(table.resolve(id), Some(s.as_str()));
        assert_eq!(&table[id], s.as_str());
        assert_eq!(table.get(s), Some(id));
    }
    assert_eq!(table.len(), model.strings.len(), "get inserted");
}

fn check_resolver(resolver: &Resolver, model: &Model) {
    assert_eq!(resolver.len(), model.strings.len());
    assert_eq!(resolver.is_empty(), model.strings.len() == 1);
    assert!(resolver.iter().eq(model.strings.iter().map(String::as_str)));
    for (i, s) in model.strings.iter().enumerate() {
        let id = StringId::from_u32(u32::try_from(i).unwrap());
        assert_eq!(resolver.resolve(id), Some(s.as_str()));
        assert_eq!(&resolver[id], s.as_str());
    }
    let past = StringId::from_u32(u32::try_from(model.strings.len()).unwrap());
    assert_eq!(resolver.resolve(past), None);
}

/// `try_intern(s)` against the model.
fn try_intern<S: BuildHasher>(table: &mut StringTable<S>, model: &mut Model, s: &str) {
    let known = model.ids.get(s).copied();
    let before_len = table.len();
    match table.try_intern(s) {
        Ok(id) => match known {
            Some(old) => assert_eq!(id.to_u32(), old, "a known string got a new id"),
            None => {
                let new = model.push(s);
                assert_eq!(id.to_u32(), new, "ids are not dense");
                assert_eq!(table.resolve(id), Some(s));
            }
        },
        Err(e) => {
            let _ = e.to_string();
            assert!(known.is_none(), "a hit failed: {e}");
            assert!(!s.is_empty());
            assert_eq!(table.len(), before_len, "an error changed the table");
            assert_eq!(table.get(s), None, "a failed string was added");
            let limits = table.limits();
            match e.kind() {
                ErrorKind::IdsExhausted => {
                    assert!(
                        before_len >= limits.get_max_strings(),
                        "IdsExhausted below the limit: {e}"
                    );
                }
                ErrorKind::MemoryLimit => {
                    assert!(
                        before_len < limits.get_max_strings(),
                        "ids were exhausted, not memory: {e}"
                    );
                    assert_ne!(
                        limits.get_max_bytes(),
                        usize::MAX,
                        "MemoryLimit without a limit: {e}"
                    );
                }
                kind => panic!("unexpected error {kind:?}: {e}"),
            }
        }
    }
}

fn run<S: BuildHasher + Clone>(input: &Input, hasher: S) {
    let mut table = build(input.setup, hasher.clone());
    let mut model = Model::new();
    check_full(&table, &model);
    for (step, op) in input.ops.iter().enumerate() {
        match op {
            Op::Intern(text) => {
                let s = text.make(&model.strings, model.total_bytes, 0);
                if !limited(&table) || model.ids.contains_key(&s) {
                    // Tables without limits, and hits, never fail.
                    let id = table.intern(&s);
                    match model.ids.get(&s) {
                        Some(&old) => assert_eq!(id.to_u32(), old),
                        None => assert_eq!(id.to_u32(), model.push(&s)),
                    }
                    assert_eq!(table.resolve(id), Some(s.as_str()));
                } else {
                    try_intern(&mut table, &mut model, &s);
                }
            }
            Op::TryIntern(text) => {
                let s = text.make(&model.strings, model.total_bytes, 0);
                try_intern(&mut table, &mut model, &s);
            }
            Op::Get(text) => {
                let s = text.make(&model.strings, model.total_bytes, 0);
                let want = model.ids.get(&s).map(|&id| StringId::from_u32(id));
                assert_eq!(table.get(&s), want);
                assert_eq!(table.contains(&s), want.is_some());
            }
            Op::Resolve(raw) => {
                let id =
                    StringId::from_u32(*raw % (u32::try_from(model.strings.len()).unwrap() + 2));
                assert_eq!(
                    table.resolve(id),
                    model.strings.get(id.index()).map(String::as_str)
                );
            }
            Op::Clear => {
                let memory = table.memory_usage();
                table.clear();
                model = Model::new();
                assert_eq!(
                    table.memory_usage(),
                    memory,
                    "clear changed the memory held"
                );
            }
            Op::ClearAndRefill => {
                let memory = table.memory_usage();
                let old = std::mem::replace(&mut model, Model::new());
                table.clear();
                for (i, s) in old.strings.iter().enumerate().skip(1) {
                    let id = table
                        .try_intern(s)
                        .expect("refilling a cleared table cannot fail");
                    assert_eq!(id.index(), i);
                    model.push(s);
                }
                assert_eq!(
                    table.memory_usage(),
                    memory,
                    "refilling after clear allocated"
                );
                check_full(&table, &model);
            }
            Op::IntoResolver => {
                let memory = table.memory_usage();
                let resolver = std::mem::replace(&mut table, build(input.setup, hasher.clone()))
                    .into_resolver();
                check_resolver(&resolver, &model);
                assert!(resolver.memory_usage() <= memory);
                drop(resolver);
                model = Model::new();
            }
            Op::Check => check_full(&table, &model),
            Op::Batch(texts) => {
                // Slices of one buffer, as a profiler's sample passes them.
                let made = make_all(texts, &model.strings, model.total_bytes);
                let model = &mut model;
                let table = &mut table;
                let mut failed = None;
                slices::intern_sample(
                    &made,
                    |strings, ids| table.try_intern_batch(strings, ids),
                    |s, id| {
                        let want = match model.ids.get(s) {
                            Some(&old) => old,
                            None => model.push(s),
                        };
                        assert_eq!(id.to_u32(), want, "batch id differs from one-by-one");
                    },
                    |s, e| failed = Some((s.to_owned(), e.error().kind(), e.to_string())),
                );
                if let Some((s, kind, e)) = failed {
                    // The failing string is new, and was not added.
                    assert!(!model.ids.contains_key(&s), "a batch hit failed: {e}");
                    assert_eq!(table.get(&s), None);
                    assert!(matches!(
                        kind,
                        ErrorKind::IdsExhausted | ErrorKind::MemoryLimit
                    ));
                }
            }
            Op::Merge(texts) => {
                let mut other = StringTable::new();
                let mut other_strings = vec![String::new()];
                for s in make_all(texts, &model.strings, model.total_bytes) {
                    if other.get(&s).is_none() {
                        other_strings.push(s.clone());
                    }
                    other.intern(&s);
                }
                match table.try_merge(&other) {
                    Ok(remap) => {
                        assert_eq!(remap.len(), other.len());
                        for (i, s) in other_strings.iter().enumerate() {
                            let want = match model.ids.get(s) {
                                Some(&old) => old,
                                None => model.push(s),
                            };
                            let old = StringId::from_u32(u32::try_from(i).unwrap());
                            assert_eq!(remap[old].to_u32(), want, "merge remapped wrongly");
                        }
                    }
                    Err(e) => {
                        assert!(matches!(
                            e.error().kind(),
                            ErrorKind::IdsExhausted | ErrorKind::MemoryLimit
                        ));
                        // The partial remap maps exactly the strings merged
                        // before the error, to themselves in this table.
                        let remap = e.remap();
                        assert_eq!(remap.len(), e.merged() + 1);
                        assert!(
                            remap.len() < other.len(),
                            "a failed merge mapped everything"
                        );
                        for (i, s) in other_strings.iter().enumerate() {
                            let old = StringId::from_u32(u32::try_from(i).unwrap());
                            match remap.get(old) {
                                Some(new) => {
                                    assert_eq!(&table[new], s.as_str(), "merge remapped wrongly")
                                }
                                None => assert!(i >= remap.len(), "a merged string has no new id"),
                            }
                        }
                        // Strings merged before the error stay: resync the
                        // model with the table, which must extend it.
                        for i in model.strings.len()..table.len() {
                            let s = table[StringId::from_u32(u32::try_from(i).unwrap())].to_owned();
                            assert!(other.get(&s).is_some(), "merge added a foreign string");
                            assert!(!model.ids.contains_key(&s), "merge duplicated a string");
                            model.push(&s);
                        }
                    }
                }
            }
            Op::Compact(bits) => {
                let kept_ids: Vec<usize> = (0..model.strings.len())
                    .filter(|&i| !bits.is_empty() && bits[i % bits.len()] & (1 << (i % 8)) != 0)
                    .collect();
                let keep: IdSet = kept_ids
                    .iter()
                    .map(|&i| StringId::from_u32(u32::try_from(i).unwrap()))
                    .collect();
                // The set gives back exactly the ids put in, ascending.
                assert!(
                    keep.iter()
                        .map(StringId::index)
                        .eq(kept_ids.iter().copied()),
                    "IdSet::iter gave other ids"
                );
                let before = table.memory_usage();
                if let Ok((compact, remap)) = table.try_compact(&keep) {
                    let kept: Vec<&str> = std::iter::once("")
                        .chain(
                            model
                                .strings
                                .iter()
                                .enumerate()
                                .filter(|&(i, _)| {
                                    i > 0
                                        && keep
                                            .contains(StringId::from_u32(u32::try_from(i).unwrap()))
                                })
                                .map(|(_, s)| s.as_str()),
                        )
                        .collect();
                    assert!(
                        compact.iter().eq(kept.iter().copied()),
                        "compact kept the wrong strings"
                    );
                    for (old, new) in remap.iter() {
                        match new {
                            Some(new) => {
                                assert_eq!(&compact[new], model.strings[old.index()].as_str());
                                assert_eq!(compact.get(&compact[new]), Some(new));
                            }
                            None => assert!(old != StringId::EMPTY && !keep.contains(old)),
                        }
                    }
                    assert!(compact.memory_usage() <= compact.limits().get_max_bytes());
                }
                assert_eq!(table.memory_usage(), before, "compact changed the table");
            }
            Op::ShrinkTo { clear_first, max } => {
                if *clear_first {
                    table.clear();
                    model = Model::new();
                }
                let before = table.memory_usage();
                let max_bytes = match max {
                    Shrink::Fit => 0,
                    Shrink::Fraction(n) => before / 256 * usize::from(*n),
                    Shrink::Bytes(n) => usize::from(*n) * 64,
                };
                if matches!(max, Shrink::Fit) {
                    table.shrink_to_fit();
                } else {
                    table.shrink_to(max_bytes);
                }
                let after = table.memory_usage();
                assert!(
                    after <= before,
                    "shrink_to grew the table: {before} -> {after}"
                );
                if max_bytes >= before {
                    assert_eq!(after, before, "shrink_to released memory within max_bytes");
                }
                if table.len() == 1 {
                    let bound = max_bytes.max(new_footprint());
                    assert!(
                        after <= bound,
                        "shrink_to({max_bytes}) after clear left {after} bytes (bound {bound})"
                    );
                }
                check_full(&table, &model);
            }
            Op::Reserve { strings, bytes } => {
                let (strings, bytes) = (usize::from(*strings), usize::from(*bytes) * 16);
                let before = table.memory_usage();
                match table.try_reserve(strings, bytes) {
                    Ok(()) => {
                        if strings == 0 {
                            assert_eq!(table.memory_usage(), before, "reserved room for nothing");
                        }
                    }
                    Err(e) => assert!(
                        matches!(
                            e.kind(),
                            ErrorKind::MemoryLimit | ErrorKind::CapacityOverflow
                        ),
                        "try_reserve failed: {e}"
                    ),
                }
                check_full(&table, &model);
            }
        }
        check_invariants(&table, &model);
        if step % FULL_CHECK_EVERY == FULL_CHECK_EVERY - 1 {
            check_full(&table, &model);
        }
    }
    check_full(&table, &model);
    let resolver = table.into_resolver();
    check_resolver(&resolver, &model);
}

fuzz_target!(|input: Input| {
    match input.hasher {
        HasherKind::Default => run(&input, strtab::StringTable::new().hasher().clone()),
        HasherKind::Sip => run(&input, BuildHasherDefault::<DefaultHasher>::default()),
        HasherKind::Colliding => run(&input, Colliding),
    }
});
