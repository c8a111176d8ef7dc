//! Hostile and extreme input: hash flooding, hard limits, huge strings,
//! millions of tiny strings, all-duplicate and all-unique streams.
//!
//! Sizes are scaled down under Miri and under `.ci/valgrind.sh` (which
//! sets `STRTAB_VALGRIND=1`); the largest test (hundreds of MiB) is
//! `#[ignore]`d and run by hand with
//! `cargo test --release --test hostile -- --ignored huge_strings_hundreds_of_mib`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;

use strtab::{ErrorKind, Limits, SharedStringTable, StringId, StringTable};

mod common;

use common::{Rng, id, scaled, under_valgrind};

/// Checks every id and string of `table` against `strings` (id order).
fn check_all<S: BuildHasher>(table: &StringTable<S>, strings: &[String]) {
    assert_eq!(table.len(), strings.len());
    assert!(table.iter().eq(strings.iter().map(String::as_str)));
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(table.resolve(id(i)), Some(s.as_str()));
        assert_eq!(table.get(s), Some(id(i)));
    }
    assert_eq!(table.resolve(id(strings.len())), None);
}

// ===========================================================================
// Hash flooding.
//
// What makes a flooded hash table slow is the *hashes* it is given: strings
// whose hashes share a bucket (same low bits) or a control byte (same top 7
// bits) lengthen probe sequences, and every control-byte match makes the
// table read a stored string and compare bytes. hashbrown exposes no probe
// counters and strtab has no test hook, and wall time is noise on a shared
// 2-core machine, so these tests measure work deterministically, in two
// steps:
//
// 1. `each_intern_hashes_once` pins down *which* hashes the table uses: a
//    recording hasher shows the table hashes each looked-up string exactly
//    once (growth re-hashes stored strings fewer than twice each over the
//    table's life) and that the value is the hasher fed `s`'s bytes alone
//    (`write(s.as_bytes())` then `finish`, no `str` terminator). So the
//    table's hashes can be recomputed from `table.hasher()`.
// 2. Those exact hashes are fed to a model of hashbrown's SwissTable probing
//    (`ProbeModel`: same bucket counts and growth, h1 = low bits, h2 = top 7
//    bits, 16-wide groups, triangular probing), which counts per intern the
//    groups probed and the control-byte matches (candidates: each one a read
//    of a stored string and a byte comparison), plus, as a finer measure,
//    the candidates whose whole 64-bit hash is equal. These counts are the
//    work of the table's lookup loop.
//
// With a fixed, unseeded hasher, the crafted set makes every count grow
// linearly per intern (quadratic in total); with the default, randomly
// seeded hasher, the same strings cost the same per intern at 1 Ki and at
// 128 Ki strings, as random strings do. (A library hook counting calls of
// the table's equality closure would make step 2 a direct count.)
// ===========================================================================

/// A fixed, unseeded hasher of the kind flooding attacks target: Java's
/// `String.hashCode` polynomial (base 31, here over 64 bits) with a fixed
/// multiplicative finaliser. "Aa" and "BB" hash alike, so do any two
/// equal-length concatenations of them: 2^k colliding strings of 2k bytes.
#[derive(Clone, Copy, Default)]
struct Poly31;

#[derive(Default)]
struct Poly31Hasher(u64);

impl Hasher for Poly31Hasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.wrapping_mul(31).wrapping_add(u64::from(b));
        }
    }

    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 32)
    }
}

impl BuildHasher for Poly31 {
    type Hasher = Poly31Hasher;
    fn build_hasher(&self) -> Poly31Hasher {
        Poly31Hasher::default()
    }
}

/// The 2^k strings made of k blocks, each "Aa" or "BB".
fn crafted(k: u32) -> Vec<String> {
    (0..1u32 << k)
        .map(|bits| {
            (0..k)
                .map(|i| if bits >> i & 1 == 0 { "Aa" } else { "BB" })
                .collect()
        })
        .collect()
}

/// `n` random-looking strings of the same length as the crafted ones.
fn random_strings(n: usize, len: usize) -> Vec<String> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    (0..n)
        .map(|i| {
            let mut s = format!("{i:x}-");
            while s.len() < len {
                s.push(char::from(b'a' + (rng.next() % 26) as u8));
            }
            s
        })
        .collect()
}

/// The hash a table uses for `s`: all 64 bits of the hasher fed `s`'s
/// bytes alone, without the `0xFF` terminator of `str`'s `Hash` (checked
/// by `each_intern_hashes_once`).
fn table_hash<S: BuildHasher>(hasher: &S, s: &str) -> u64 {
    let mut h = hasher.build_hasher();
    h.write(s.as_bytes());
    h.finish()
}

/// A model of hashbrown's SwissTable as strtab drives it: the table hash
/// is the string's 64-bit hash `h`, so the bucket (h1) is the low bits of
/// `h` and the control byte (h2) its top 7 bits. Starts at 512
/// buckets (`StringTable::new`) and doubles when full (7/8 load).
struct ProbeModel {
    /// Control bytes: `EMPTY` or h2.
    ctrl: Vec<u8>,
    /// The hash of the string in each full bucket.
    hashes: Vec<u64>,
    items: usize,
    work: Work,
}

const EMPTY: u8 = 0xFF;
const GROUP: usize = 16;

/// Work done by lookups (and the insert's own probe for a free slot is
/// not counted: it follows the same sequence).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Work {
    interns: usize,
    /// 16-byte control groups loaded.
    groups: usize,
    /// Control-byte matches: stored strings the table reads and compares.
    candidates: usize,
    /// Candidates whose whole 64-bit hash is equal (full hash collisions).
    byte_compares: usize,
}

impl Work {
    fn per_intern(&self) -> (f64, f64, f64) {
        let n = self.interns as f64;
        (
            self.groups as f64 / n,
            self.candidates as f64 / n,
            self.byte_compares as f64 / n,
        )
    }

    fn minus(&self, earlier: &Work) -> Work {
        Work {
            interns: self.interns - earlier.interns,
            groups: self.groups - earlier.groups,
            candidates: self.candidates - earlier.candidates,
            byte_compares: self.byte_compares - earlier.byte_compares,
        }
    }
}

impl ProbeModel {
    fn new() -> ProbeModel {
        ProbeModel {
            ctrl: vec![EMPTY; 512],
            hashes: vec![0; 512],
            items: 0,
            work: Work::default(),
        }
    }

    fn mask(&self) -> usize {
        self.ctrl.len() - 1
    }

    fn h2(h: u64) -> u8 {
        (h >> 57) as u8
    }

    /// The probe sequence of `h`: the start of each group loaded.
    fn probe(&self, h: u64, mut visit: impl FnMut(usize) -> bool) {
        let mask = self.mask();
        let mut pos = h as usize & mask;
        let mut stride = 0;
        loop {
            if visit(pos) {
                return;
            }
            stride += GROUP;
            pos = (pos + stride) & mask;
        }
    }

    /// Looks `h` up (a miss: the strings are distinct) and inserts it.
    fn intern(&mut self, h: u64) {
        if self.items == self.ctrl.len() / 8 * 7 {
            self.grow();
        }
        let (mask, h2) = (self.mask(), Self::h2(h));
        let mut work = self.work;
        work.interns += 1;
        let mut slot = None;
        self.probe(h, |start| {
            work.groups += 1;
            let mut empty = false;
            for i in 0..GROUP {
                let b = (start + i) & mask;
                if self.ctrl[b] == h2 {
                    work.candidates += 1;
                    if self.hashes[b] == h {
                        work.byte_compares += 1;
                    }
                } else if self.ctrl[b] == EMPTY {
                    empty = true;
                    slot.get_or_insert(b);
                }
            }
            empty
        });
        self.work = work;
        let b = slot.expect("a free slot");
        self.ctrl[b] = h2;
        self.hashes[b] = h;
        self.items += 1;
    }

    fn grow(&mut self) {
        let old: Vec<u64> = (0..self.ctrl.len())
            .filter(|&b| self.ctrl[b] != EMPTY)
            .map(|b| self.hashes[b])
            .collect();
        let work = self.work;
        let n = self.ctrl.len() * 2;
        *self = ProbeModel {
            ctrl: vec![EMPTY; n],
            hashes: vec![0; n],
            items: 0,
            work: Work::default(),
        };
        for h in old {
            self.intern(h);
        }
        // Growth re-inserts every stored string (re-hashed from the arena):
        // no lookups, no comparisons.
        self.work = work;
    }
}

/// Per-intern work at each checkpoint while interning `hashes` in order:
/// the work of the interns since the previous checkpoint.
fn work_curve(hashes: &[u64], checkpoints: &[usize]) -> Vec<Work> {
    let mut model = ProbeModel::new();
    let mut out = Vec::new();
    let mut last = Work::default();
    for (i, &h) in hashes.iter().enumerate() {
        model.intern(h);
        if checkpoints.contains(&(i + 1)) {
            out.push(model.work.minus(&last));
            last = model.work;
        }
    }
    out
}

/// A `BuildHasher` that records every hash its hashers finish.
#[derive(Clone)]
struct Recording<S> {
    inner: S,
    log: Rc<RefCell<Vec<u64>>>,
}

struct RecordingHasher<H> {
    inner: H,
    log: Rc<RefCell<Vec<u64>>>,
}

impl<H: Hasher> Hasher for RecordingHasher<H> {
    fn write(&mut self, bytes: &[u8]) {
        self.inner.write(bytes);
    }

    // Forwarded, not left to the defaults (which call `write`): hashers
    // like foldhash treat `write_u8(b)` and `write(&[b])` differently.
    fn write_u8(&mut self, i: u8) {
        self.inner.write_u8(i);
    }

    fn write_u16(&mut self, i: u16) {
        self.inner.write_u16(i);
    }

    fn write_u32(&mut self, i: u32) {
        self.inner.write_u32(i);
    }

    fn write_u64(&mut self, i: u64) {
        self.inner.write_u64(i);
    }

    fn write_u128(&mut self, i: u128) {
        self.inner.write_u128(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.inner.write_usize(i);
    }

    fn finish(&self) -> u64 {
        let h = self.inner.finish();
        self.log.borrow_mut().push(h);
        h
    }
}

impl<S: BuildHasher> BuildHasher for Recording<S> {
    type Hasher = RecordingHasher<S::Hasher>;
    fn build_hasher(&self) -> Self::Hasher {
        RecordingHasher {
            inner: self.inner.build_hasher(),
            log: Rc::clone(&self.log),
        }
    }
}

/// The table hashes each looked-up string once, with [`table_hash`];
/// growing the hash table re-hashes the stored strings from the arena, and
/// because the table doubles, that is at most about one more hash per
/// stored string over the table's life: growth cannot be turned into a
/// re-hashing storm. Every hash is the table's own, as the flooding model
/// below assumes.
#[test]
fn each_intern_hashes_once() {
    let inner = StringTable::new().hasher().clone();
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut table = StringTable::builder()
        .capacity(0, 0)
        .hasher(Recording {
            inner: inner.clone(),
            log: Rc::clone(&log),
        })
        .build();
    let n = scaled(20_000, 5_000, 300);
    let strings: Vec<String> = (0..n).map(|i| format!("flood-{i}")).collect();
    log.borrow_mut().clear();
    for s in &strings {
        table.intern(s);
    }
    let growth = log.borrow().len() - n;
    assert!(
        growth < 2 * n,
        "growth re-hashed {growth} strings for {n} stored"
    );
    log.borrow_mut().clear();
    for s in &strings {
        assert!(table.get(s).is_some());
    }
    table.intern(&strings[0]);
    let log = log.borrow();
    // n gets and one hit, each hashed once: no growth without inserts.
    assert_eq!(log.len(), n + 1, "strings were hashed more than once");
    for (s, &h) in strings.iter().zip(log.iter()) {
        assert_eq!(h, table_hash(&inner, s));
    }
}

/// The attack is real on a fixed hasher: the crafted strings all collide
/// under `Poly31`, so per-intern work grows linearly (every lookup walks
/// all earlier strings and compares bytes with each). The table stays
/// correct under it.
#[test]
fn crafted_strings_flood_a_fixed_hasher() {
    let k = if cfg!(miri) { 6 } else { 11 };
    let strings = crafted(k);
    let first = table_hash(&Poly31, &strings[0]);
    assert!(strings.iter().all(|s| table_hash(&Poly31, s) == first));

    let hashes: Vec<u64> = strings.iter().map(|s| table_hash(&Poly31, s)).collect();
    let n = strings.len();
    let curve = work_curve(&hashes, &[n / 4, n]);
    let (early, late) = (curve[0].per_intern(), curve[1].per_intern());
    println!(
        "Poly31, {n} crafted strings: per intern (groups, candidates, byte compares) {early:?} -> {late:?}"
    );
    // Intern i compares bytes with all i earlier strings.
    assert_eq!(
        curve[0].byte_compares + curve[1].byte_compares,
        n * (n - 1) / 2
    );
    assert!(
        late.2 > 4.0 * early.2,
        "not quadratic: {early:?} -> {late:?}"
    );
    assert!(
        late.0 > 2.0 * early.0,
        "probe sequences did not grow: {early:?} -> {late:?}"
    );

    // The real table under the same hasher: slow, but correct.
    let mut table = StringTable::builder().hasher(Poly31).build();
    let mut expected = vec![String::new()];
    for s in &strings {
        assert_eq!(table.intern(s).index(), expected.len());
        expected.push(s.clone());
    }
    for s in strings.iter().step_by(7) {
        assert_eq!(table.intern(s), table.get(s).unwrap());
    }
    check_all(&table, &expected);
}

/// The default, randomly seeded hasher: the same crafted strings cost as
/// much per intern at 128 Ki strings as at 1 Ki, and as much as random
/// strings of the same length: about one group probed and almost no false
/// candidates (each one a byte comparison), with full 64-bit hash
/// collisions as rare as chance makes them (about n^2 / 2^33 in all).
#[test]
fn default_hasher_resists_crafted_strings() {
    let k = if cfg!(miri) {
        7
    } else if under_valgrind() {
        13
    } else {
        17
    };
    let crafted = crafted(k);
    let n = crafted.len();
    let random = random_strings(n, 2 * k as usize);
    let checkpoints = [n / 128, n / 16, n / 2, n];

    let mut table = StringTable::new();
    let mut curves = Vec::new();
    for strings in [&crafted, &random] {
        let hashes: Vec<u64> = strings
            .iter()
            .map(|s| table_hash(table.hasher(), s))
            .collect();
        curves.push(work_curve(&hashes, &checkpoints));
    }
    for (curve, what) in curves.iter().zip(["crafted", "random"]) {
        let per: Vec<_> = curve.iter().map(Work::per_intern).collect();
        println!(
            "default hasher, {what}, at {checkpoints:?} strings: per intern (groups, candidates, byte compares) {per:?}"
        );
        let first = curve[0].per_intern();
        for w in curve {
            let (groups, candidates, compares) = w.per_intern();
            assert!(
                groups < 1.6,
                "{what}: {groups} groups per intern: {curve:?}"
            );
            assert!(
                candidates < 0.2,
                "{what}: {candidates} candidates per intern: {curve:?}"
            );
            assert!(
                compares < 0.01,
                "{what}: {compares} byte comparisons per intern: {curve:?}"
            );
            // Flat: no checkpoint costs much more than the first.
            assert!(groups < first.0 * 1.5 + 0.1, "{what}: not flat: {curve:?}");
        }
    }
    let total = |c: &[Work]| c.iter().fold(0, |a, w| a + w.groups);
    let (crafted_groups, random_groups) = (total(&curves[0]), total(&curves[1]));
    assert!(
        crafted_groups * 10 < random_groups * 13,
        "crafted strings cost more than random ones: {crafted_groups} vs {random_groups} groups"
    );

    // And the real table with those hashes is correct.
    let mut expected = vec![String::new()];
    for s in &crafted {
        assert_eq!(table.intern(s).index(), expected.len());
        expected.push(s.clone());
    }
    check_all(&table, &expected);
}

// ===========================================================================
// Limits are hard.
// ===========================================================================

/// Drives `table` with a deterministic mixed stream (new strings up to
/// `max_len` bytes, hits, gets, the odd clear) and checks after every
/// operation that the limits hold, that errors name the limit that was hit
/// and change nothing, and that every string stays resolvable.
fn stream_within_limits(mut table: StringTable, seed: u64, ops: usize, max_len: usize) {
    let mut rng = Rng(seed);
    let limits = table.limits();
    let mut strings = vec![String::new()];
    let mut ids: HashMap<String, usize> = HashMap::from([(String::new(), 0)]);
    let (mut errors, mut kinds) = (0, [0; 2]);
    for step in 0..ops {
        match rng.below(100) {
            0 => {
                table.clear();
                strings.truncate(1);
                ids.retain(|s, _| s.is_empty());
            }
            1..=20 => {
                let s = &strings[rng.below(strings.len())];
                assert_eq!(
                    table.try_intern(s).map(StringId::index),
                    Ok(ids[s]),
                    "a hit failed"
                );
            }
            21..=25 => {
                let s = format!("absent-{step}");
                assert_eq!(table.get(&s), None);
            }
            r => {
                let len = match r % 3 {
                    0 => rng.below(max_len + 1),
                    1 => rng.below(200),
                    _ => rng.below(16),
                };
                let s = format!("{step}:{}", "z".repeat(len));
                let before = (table.len(), table.memory_usage());
                match table.try_intern(&s) {
                    Ok(id) => {
                        assert_eq!(id.index(), strings.len());
                        ids.insert(s.clone(), id.index());
                        strings.push(s);
                    }
                    Err(e) => {
                        errors += 1;
                        assert_eq!(table.len(), before.0);
                        assert_eq!(table.get(&s), None);
                        if table.len() >= limits.get_max_strings() {
                            assert_eq!(e.kind(), ErrorKind::IdsExhausted, "{e}");
                            assert!(e.to_string().contains("full"), "{e}");
                            kinds[0] += 1;
                        } else {
                            assert_eq!(e.kind(), ErrorKind::MemoryLimit, "{e}");
                            let limit = limits.get_max_bytes().to_string();
                            assert!(e.to_string().contains(&limit), "{e}");
                            kinds[1] += 1;
                        }
                    }
                }
            }
        }
        assert!(table.len() <= limits.get_max_strings());
        assert!(
            table.memory_usage() <= limits.get_max_bytes(),
            "step {step}: memory_usage {} > max_bytes {}",
            table.memory_usage(),
            limits.get_max_bytes()
        );
        if step % 256 == 0 {
            let last = strings.len() - 1;
            assert_eq!(table.resolve(id(last)), Some(strings[last].as_str()));
        }
    }
    check_all(&table, &strings);
    let _ = (errors, kinds);
}

/// Byte limits from below the empty table's footprint to a few MiB, with
/// and without capacity hints, and string-count limits: `memory_usage()`
/// never exceeds `max_bytes`, `len()` never exceeds `max_strings`.
#[test]
fn limits_are_hard() {
    let ops = scaled(1_500, 400, 30);
    // Under Miri, every third byte limit.
    let every = if cfg!(miri) { 3 } else { 1 };
    let max_len = scaled(60_000, 60_000, 2_000);
    let byte_limits = [
        0,
        100,
        4_096,
        10_000,
        20_000,
        40_000,
        100_000,
        333_333,
        1 << 20,
        5 << 20,
    ];
    for (i, &max_bytes) in byte_limits.iter().enumerate().step_by(every) {
        let limits = Limits::new().max_bytes(max_bytes);
        stream_within_limits(StringTable::with_limits(limits), i as u64 + 1, ops, max_len);
        let hinted = StringTable::builder()
            .capacity(i * 50, i * 5_000)
            .limits(limits)
            .build();
        stream_within_limits(hinted, i as u64 + 100, ops, max_len);
    }
    for max_strings in [0, 1, 2, 3, 100, 1_000].into_iter().step_by(every) {
        let limits = Limits::new().max_strings(max_strings).max_bytes(1 << 20);
        stream_within_limits(
            StringTable::with_limits(limits),
            max_strings as u64 + 7,
            ops,
            2_000,
        );
    }
}

/// Both limits at once, hit in turn: the error says which.
#[test]
fn error_names_the_limit() {
    let mut table = StringTable::with_limits(Limits::new().max_strings(3).max_bytes(64 << 10));
    table.try_intern("a").unwrap();
    let big = "x".repeat(100 << 10);
    let e = table.try_intern(&big).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MemoryLimit);
    assert!(e.to_string().contains("65536"), "{e}");
    table.try_intern("b").unwrap();
    let e = table.try_intern("c").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdsExhausted);
    assert!(e.to_string().contains("holds 3 strings"), "{e}");
    // The string-count limit wins when both would be exceeded.
    assert_eq!(
        table.try_intern(&big).unwrap_err().kind(),
        ErrorKind::IdsExhausted
    );
    assert_eq!(table.try_intern("a").map(StringId::to_u32), Ok(1));
}

/// Regression: a capacity hint whose footprint `try_build` underestimates
/// (e.g. 57,345 strings: just past a hashbrown bucket-count doubling) used
/// to be built at full size anyway, with the byte limit then *raised* to
/// that footprint. Now a table built over the limit starts empty instead,
/// and only a limit below the empty table's footprint is raised.
#[test]
fn capacity_hint_never_raises_byte_limit() {
    let empty = StringTable::with_limits(Limits::new().max_bytes(0)).memory_usage();
    for strings in [449, 897, 7_169, 57_345, 114_689] {
        for bytes in [0, 1, 4_097, 100_000] {
            let footprint = StringTable::with_capacity(strings, bytes).memory_usage();
            let max_bytes = footprint - 1;
            assert!(max_bytes > empty);
            let table = StringTable::builder()
                .capacity(strings, bytes)
                .limits(Limits::new().max_bytes(max_bytes))
                .build();
            assert_eq!(
                table.limits().get_max_bytes(),
                max_bytes,
                "capacity({strings}, {bytes})"
            );
            assert!(
                table.memory_usage() <= max_bytes,
                "capacity({strings}, {bytes}): memory_usage {} > max_bytes {max_bytes}",
                table.memory_usage()
            );
        }
    }
}

/// Capacity hints whose byte plans exceed any address space (on 32-bit
/// targets too: the plans saturate instead of wrapping) make `try_build`
/// fail with an error that says so, for both tables and any shard count.
/// (A hint of many strings and no bytes is not among them: the string
/// count is capped at the id limit, and on a 64-bit target the plan for
/// `u32::MAX` strings, tens of GiB, is for the allocator to refuse.)
/// Not under Miri, which stops the program at an allocation it cannot
/// place instead of failing it.
#[test]
#[cfg_attr(miri, ignore)]
fn absurd_capacity_hints_fail_cleanly() {
    let absurd = [
        (0, usize::MAX),
        (1 << 20, usize::MAX),
        (usize::MAX, usize::MAX),
        (usize::MAX / 2, usize::MAX / 2),
    ];
    let expected = [
        ErrorKind::CapacityOverflow,
        ErrorKind::AllocFailed,
        ErrorKind::IdsExhausted,
    ];
    for (strings, bytes) in absurd {
        let e = StringTable::builder()
            .capacity(strings, bytes)
            .try_build()
            .expect_err("an absurd hint is refused");
        assert!(expected.contains(&e.kind()), "{strings}, {bytes}: {e}");
        for shards in [1, 8, 1024] {
            let e = SharedStringTable::builder()
                .shards(shards)
                .capacity(strings, bytes)
                .try_build()
                .expect_err("an absurd hint is refused");
            assert!(
                expected.contains(&e.kind()),
                "{shards} shards, {strings}, {bytes}: {e}"
            );
        }
    }
}

/// A byte hint past the arena's address space is reported as the caller
/// gave it, not as the arena's (or a shard's) share of it with
/// bookkeeping, by both builders.
#[test]
#[cfg(target_pointer_width = "64")]
#[cfg_attr(miri, ignore)]
fn byte_hints_past_the_arena_name_the_hint() {
    let bytes = 5usize << 32;
    let one = format!(
        "string table capacity hint of {bytes} bytes is more than its arena can hold \
         (under 2 GiB)"
    );
    let e = StringTable::builder()
        .capacity(10, bytes)
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityOverflow);
    assert_eq!(e.to_string(), one);
    for shards in [1, 8] {
        let e = SharedStringTable::builder()
            .shards(shards)
            .capacity(10, bytes)
            .try_build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CapacityOverflow);
        let message = if shards == 1 {
            one.clone()
        } else {
            format!(
                "string table capacity hint of {bytes} bytes is more than its {shards} shard \
                 arenas can hold (under 2 GiB each, with a margin for an uneven split)"
            )
        };
        assert_eq!(e.to_string(), message, "{shards} shards");
    }
}

/// A hint of `u32::MAX` strings or more is refused by both builders,
/// whatever the limits: cut to the default limit it would ask for tens of
/// gigabytes, which one machine grants and another refuses. One string
/// fewer is a hint like any other, cut to a small limit.
#[test]
fn hints_past_the_id_space_are_refused() {
    let small = Limits::new().max_strings(10);
    for strings in [u32::MAX as usize, u32::MAX as usize + 1, usize::MAX] {
        for limits in [Limits::new(), small] {
            let e = StringTable::builder()
                .limits(limits)
                .capacity(strings, 64)
                .try_build()
                .expect_err("a hint past the id space is refused");
            assert_eq!(e.kind(), ErrorKind::IdsExhausted, "{strings}: {e}");
            assert_eq!(
                e.to_string(),
                format!(
                    "string table capacity hint of {strings} strings is more than the 4294967294 a table can number besides \"\""
                )
            );
            let e = SharedStringTable::builder()
                .shards(2)
                .limits(limits)
                .capacity(strings, 64)
                .try_build()
                .expect_err("a hint past the id space is refused");
            assert_eq!(e.kind(), ErrorKind::IdsExhausted, "{strings}: {e}");
        }
    }
    let below = u32::MAX as usize - 1;
    assert_eq!(presized(small, below, 1 << 30), presized(small, 9, 3));
}

/// The memory usage of a `StringTable` and of a two-shard
/// `SharedStringTable` built with `limits` and a hint of `strings` strings
/// of `bytes` bytes.
fn presized(limits: Limits, strings: usize, bytes: usize) -> (usize, usize) {
    let table = StringTable::builder()
        .limits(limits)
        .capacity(strings, bytes)
        .build();
    let shared = SharedStringTable::builder()
        .shards(2)
        .limits(limits)
        .capacity(strings, bytes)
        .build();
    (table.memory_usage(), shared.memory_usage())
}

/// A table limited to `""` pre-sizes nothing, whatever bytes its hint
/// names: there is no string it could store them for.
#[test]
fn a_table_limited_to_the_empty_string_ignores_byte_hints() {
    let limits = Limits::new().max_strings(1);
    let hinted = presized(limits, 0, 64 << 20);
    assert_eq!(hinted, presized(limits, 0, 0));
    assert!(hinted.0 < 4096, "{}", hinted.0);
    assert!(hinted.1 < 64 << 10, "{}", hinted.1);
}

/// Regression: `Arena::add_chunk` cuts a chunk in two parts (the request at
/// the top, the steered excess below) and used to count one block too few
/// for them; when the block list was exactly full, the extra push grew it
/// uncharged past `max_bytes` (and infallibly). It now counts the blocks
/// of each part and reserves them, charged, before allocating the chunk.
#[test]
fn block_list_growth_is_charged() {
    let max_bytes = 992_390;
    let mut table = StringTable::builder()
        .capacity(0, 0)
        .limits(Limits::new().max_bytes(max_bytes))
        .build();
    for (i, len) in [
        94_472, 4_425, 82_606, 65_982, 86_925, 128_801, 100_948, 98_373,
    ]
    .into_iter()
    .enumerate()
    {
        let _ = table.try_intern(&format!("{i:03}-{}", "x".repeat(len)));
        assert!(
            table.memory_usage() <= max_bytes,
            "string {i}: memory_usage {} > max_bytes {max_bytes}",
            table.memory_usage()
        );
    }
}

// ===========================================================================
// Huge strings, many strings.
// ===========================================================================

/// Strings at and around every size boundary of the arena (first chunk,
/// dedicated-chunk threshold, largest chunk, largest block), interleaved
/// with small ones: all resolve, and the arena holds little beyond them.
#[test]
#[cfg_attr(miri, ignore = "megabytes of strings")]
fn strings_around_chunk_boundaries() {
    let mut sizes = Vec::new();
    for edge in [
        strtab::FIRST_CHUNK_CAPACITY,
        strtab::MAX_CHUNK_CAPACITY / 4,
        strtab::MAX_CHUNK_CAPACITY,
        (1 << 16) - 5,
        (1 << 18) - 2,
        1 << 20,
    ] {
        sizes.extend([edge - 1, edge, edge + 1]);
    }
    for table in [StringTable::new(), StringTable::with_capacity(0, 0)] {
        let mut table = table;
        let mut expected = vec![String::new()];
        let mut bytes = 0;
        for (i, &size) in sizes.iter().enumerate() {
            for s in [
                format!("{i}"),
                char::from(b'a' + i as u8).to_string().repeat(size),
            ] {
                assert_eq!(table.intern(&s).index(), expected.len());
                bytes += s.len();
                expected.push(s);
            }
        }
        check_all(&table, &expected);
        let resolver_bytes = table.into_resolver().memory_usage();
        // Each large string wastes at most the tail of one chunk (256 KiB).
        assert!(
            resolver_bytes < bytes + sizes.len() * strtab::MAX_CHUNK_CAPACITY / 2,
            "{resolver_bytes} bytes held for {bytes} bytes of strings"
        );
    }
}

/// Strings of 17 KiB to 60 KiB among small ones, too long to fit what is
/// left of a 64 KiB block but not long enough for a chunk of their own:
/// each runs on into the next block instead of leaving the rest of its
/// block unused. Heap beyond the strings' bytes here, before and since:
/// 17 KiB strings 36.5% -> 6.0%, 24 KiB 39.4% -> 17.9%, 33 KiB 119% ->
/// 31.4%, 40 KiB 76.4% -> 23.4%, 60 KiB 11.7% (what is left is at chunk
/// ends, where no next block joins). All resolve, and a refill after
/// `clear` takes no new memory.
#[test]
#[cfg_attr(miri, ignore = "megabytes of strings")]
fn block_sized_strings_waste_little() {
    for size in [17 << 10, 24 << 10, 33 << 10, 40 << 10, 60 << 10] {
        let mut table = StringTable::new();
        let mut expected = vec![String::new()];
        let mut bytes = 0;
        for i in 0..400 {
            let s = if i % 4 == 0 {
                format!("{i:06}").repeat(size / 6 + 1)[..size - i].to_string()
            } else {
                format!("small-{i}")
            };
            assert_eq!(table.intern(&s).index(), expected.len());
            bytes += s.len();
            expected.push(s);
        }
        check_all(&table, &expected);
        let held = table.memory_usage();
        // Chunk ends, the last chunk's unused tail (at most a 256 KiB
        // chunk), and the index and hash table of 401 strings.
        assert!(
            held < bytes + bytes / 3 + strtab::MAX_CHUNK_CAPACITY + (16 << 10),
            "{held} bytes held for {bytes} bytes of {size}-byte strings"
        );
        table.clear();
        for s in &expected[1..] {
            table.intern(s);
        }
        assert_eq!(table.memory_usage(), held, "the refill allocated");
        check_all(&table, &expected);
    }
}

/// One string of 64 MiB (16 MiB under valgrind), larger than any chunk:
/// it gets a chunk of its own, sized to it, and everything else keeps
/// working around it.
#[test]
#[cfg_attr(miri, ignore = "64 MiB")]
fn huge_string() {
    let len = scaled(64 << 20, 16 << 20, 0);
    let huge: String = "0123456789abcdef".repeat(len / 16);
    let mut table = StringTable::new();
    let a = table.intern("before");
    let before = table.memory_usage();
    let id = table.intern(&huge);
    let grown = table.memory_usage() - before;
    assert!(
        grown >= len && grown <= len + 3 * strtab::PAGE_SIZE,
        "{grown} bytes for {len}"
    );
    let b = table.intern("after");
    assert_eq!(table.resolve(id), Some(huge.as_str()));
    assert_eq!(table.get(&huge), Some(id));
    assert_eq!(table.intern(&huge), id);
    assert_eq!(table.get(&huge[1..]), None);
    assert_eq!((&table[a], &table[b]), ("before", "after"));
    assert_eq!(
        table.iter().map(str::len).sum::<usize>(),
        len + "beforeafter".len()
    );
    let resolver = table.into_resolver();
    assert_eq!(&resolver[id], huge.as_str());
}

/// A dedicated chunk for a string smaller than the previous chunk is sized
/// to the string. bumpalo only offers twice its current chunk, halved
/// repeatedly, so the arena first adds one small normal chunk (at most
/// 32 KiB, whose blocks later strings use) to make the request exact;
/// without it, after a 3 MiB string a 2 MiB string would take 3 MiB.
#[test]
#[cfg_attr(miri, ignore = "megabytes")]
fn dedicated_chunk_after_larger_one_fits_its_string() {
    let mut table = StringTable::new();
    for mib in [3, 2] {
        let s = "d".repeat(mib << 20);
        let before = table.memory_usage();
        table.intern(&s);
        let grown = table.memory_usage() - before;
        assert!(
            grown <= s.len() + 3 * strtab::PAGE_SIZE + (32 << 10),
            "{grown} bytes for a string of {}",
            s.len()
        );
    }
}

/// Strings of hundreds of MiB. Needs about 2 GiB of memory and a few
/// seconds in release mode: `cargo test --release --test hostile --
/// --ignored huge_strings_hundreds_of_mib`. Checked the fix of
/// `dedicated_chunk_after_larger_one_fits_its_string` (the 200 MiB string
/// after the 300 MiB one takes a 300 MiB chunk).
#[test]
#[ignore = "hundreds of MiB: run by hand in release mode"]
fn huge_strings_hundreds_of_mib() {
    let mut table = StringTable::new();
    let mut expected = vec![String::new()];
    let mut bytes = 0;
    for (i, mib) in [100usize, 300, 200].into_iter().enumerate() {
        let s = char::from(b'A' + i as u8).to_string().repeat(mib << 20);
        let before = table.memory_usage();
        assert_eq!(table.intern(&s).index(), expected.len());
        assert!(table.memory_usage() - before <= s.len() + 3 * strtab::PAGE_SIZE + (32 << 10));
        bytes += s.len();
        expected.push(s);
        table.intern(&format!("small-{i}"));
        expected.push(format!("small-{i}"));
        bytes += expected.last().unwrap().len();
    }
    check_all(&table, &expected);
    assert!(table.memory_usage() < bytes + (1 << 20));
}

/// Millions of tiny strings (2 Mi distinct strings of 1 to 7 bytes): dense
/// ids, and memory close to what the strings need: the bytes themselves
/// in records (a 4-byte id and a length byte each), 5 bytes of index per
/// id and the hash table (5-byte slots), with growth slack.
#[test]
#[cfg_attr(miri, ignore = "millions of strings")]
fn millions_of_tiny_strings() {
    let n = scaled(2 << 20, 100_000, 0);
    let mut table = StringTable::new();
    let mut bytes = 0;
    let tiny = |i: usize| {
        // Base-62 digits: "0", "1", ..., "zz", ...
        const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let mut s = String::new();
        let mut v = i + 1;
        while v > 0 {
            s.push(char::from(DIGITS[v % 62]));
            v /= 62;
        }
        s
    };
    for i in 0..n {
        let s = tiny(i);
        bytes += s.len();
        assert_eq!(table.intern(&s).index(), i + 1);
    }
    for i in (0..n).step_by(997) {
        let s = tiny(i);
        assert_eq!(table.get(&s).map(StringId::index), Some(i + 1));
        assert_eq!(table.resolve(id(i + 1)), Some(s.as_str()));
    }
    assert_eq!(table.len(), n + 1);
    let memory = table.memory_usage();
    // Record prefixes: id and length (5); index: 5 bytes per id, up to 2x
    // slack (10); hash table: 8/7 to 16/7 buckets per string of 6 bytes
    // each (14); arena: the last chunk's tail (under a ninth of the arena).
    let bound = bytes + n * (5 + 10 + 14) + bytes / 8 + (1 << 20);
    println!("{n} tiny strings, {bytes} bytes: memory_usage {memory} (bound {bound})");
    assert!(
        memory <= bound,
        "{memory} bytes for {n} strings of {bytes} bytes (bound {bound})"
    );
    let arena_and_index = table.into_resolver().memory_usage();
    // Records (5 bytes beyond the string) and the index (up to 10).
    assert!(arena_and_index <= bytes + n * 15 + strtab::MAX_CHUNK_CAPACITY + (64 << 10));
}

/// A hasher that reseeds on every call: each hash of a string differs.
/// A logic error of the user's, but safe code, so it may cost lookups and
/// duplicate ids, never memory safety.
#[derive(Default)]
struct Reseeding;

impl BuildHasher for Reseeding {
    type Hasher = std::hash::DefaultHasher;
    fn build_hasher(&self) -> std::hash::DefaultHasher {
        std::hash::RandomState::new().build_hasher()
    }
}

/// Both tables with [`Reseeding`]: every id an intern returns resolves to
/// its string, whatever `get` finds is the string looked up, and the
/// resolver holds every id. Strings of mixed lengths (long ones too) in
/// enough numbers for the hash tables and the shared table's hint cache
/// to grow several times. (Random hashes seldom make a lookup read a
/// misfiled hint: the regression test for those, with a hasher that
/// changes once, is in `tests/shared.rs`.)
#[test]
fn a_reseeding_hasher_stays_memory_safe() {
    let n = scaled(5_000, 1_000, 40);
    let strings: Vec<String> = (0..n)
        .map(|i| format!("frame::{i}::{}", "y".repeat(i * 7 % 300)))
        .collect();
    let mut table = StringTable::builder().hasher(Reseeding).build();
    let shared = strtab::SharedStringTable::builder()
        .shards(4)
        .hasher(Reseeding)
        .build();
    for _ in 0..2 {
        for s in &strings {
            let id = table.intern(s);
            assert_eq!(table.resolve(id), Some(s.as_str()));
            let id = shared.intern(s);
            assert_eq!(shared.resolve(id), Some(s.as_str()));
        }
    }
    for s in &strings {
        if let Some(id) = table.get(s) {
            assert_eq!(&table[id], s.as_str());
        }
        if let Some(id) = shared.get(s) {
            assert_eq!(shared.resolve(id), Some(s.as_str()));
        }
    }
    assert_eq!(table.iter().count(), table.len());
    let len = shared.len();
    assert_eq!(shared.into_resolver().iter().count(), len);
}

/// An all-duplicate stream: after the first round, nothing grows.
#[test]
fn all_duplicates() {
    let rounds = scaled(100_000, 10_000, 50);
    let words: Vec<String> = (0..10).map(|i| format!("dup-{i}")).collect();
    let mut table = StringTable::new();
    let ids: Vec<StringId> = words.iter().map(|w| table.intern(w)).collect();
    let memory = table.memory_usage();
    for r in 0..rounds {
        let w = r % words.len();
        assert_eq!(table.intern(&words[w]), ids[w]);
    }
    assert_eq!(table.len(), 11);
    assert_eq!(table.memory_usage(), memory);
}

/// An all-unique stream of mixed lengths, checked in full, then cleared
/// and refilled: the same ids, and no new memory.
#[test]
fn all_unique_then_refill() {
    let n = scaled(200_000, 20_000, 200);
    let mut rng = Rng(42);
    let strings: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{i}/{}",
                "u".repeat(rng.below(if i % 100 == 0 { 5_000 } else { 60 }))
            )
        })
        .collect();
    let mut table = StringTable::new();
    let mut expected = vec![String::new()];
    for s in &strings {
        assert_eq!(table.intern(s).index(), expected.len());
        expected.push(s.clone());
    }
    check_all(&table, &expected);
    let memory = table.memory_usage();
    table.clear();
    assert_eq!(table.len(), 1);
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(table.intern(s).index(), i + 1);
    }
    assert_eq!(table.memory_usage(), memory);
    check_all(&table, &expected);
}

/// More blocks than a byte can number (a block is 64 KiB, and a location's
/// block number is read as its own 16-bit half): strings of both record
/// forms in blocks 256 and up resolve, are found and iterate in order,
/// in a `StringTable` and in a one-shard `SharedStringTable`, whose hint
/// cache covers only a shard's first 256 blocks (the rest are found
/// under the shard's lock).
#[test]
#[cfg_attr(miri, ignore = "tens of MiB of strings")]
fn more_blocks_than_a_byte_numbers() {
    // About 20 MiB: 300-odd blocks of 64 KiB.
    let n = if under_valgrind() { 20_000 } else { 80_000 };
    let strings: Vec<String> = std::iter::once(String::new())
        .chain((0..n).map(|i| {
            // 200 to 319 bytes: about half of them the long record form
            // (255 bytes or more).
            let len = 200 + (i * 7919) % 120;
            let mut s = format!("block-test/{i}/");
            s.extend(std::iter::repeat_n(
                char::from(b'a' + (i % 26) as u8),
                len - s.len(),
            ));
            s
        }))
        .collect();
    let mut table = StringTable::new();
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(table.intern(s), id(i));
    }
    let bytes: usize = strings.iter().map(String::len).sum();
    if !under_valgrind() {
        assert!(bytes > 300 << 16, "{bytes} bytes: fewer than 300 blocks");
    }
    check_all(&table, &strings);
    let resolver = table.into_resolver();
    assert!(resolver.iter().eq(strings.iter().map(String::as_str)));

    let shared = strtab::SharedStringTable::builder().shards(1).build();
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(shared.intern(s), id(i));
    }
    // Twice: the second round's lookups find the strings through the hints
    // (the first 256 blocks) or the shard's lock (the rest).
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(shared.intern(s), id(i));
        assert_eq!(shared.get(s), Some(id(i)));
        assert_eq!(shared.resolve(id(i)), Some(s.as_str()));
    }
    let resolver = shared.into_resolver();
    assert!(resolver.iter().eq(strings.iter().map(String::as_str)));
}
