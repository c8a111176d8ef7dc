//! Model-based property test: seeded random sequences of operations applied
//! to a [`StringTable`] and to a plain reference model (`HashMap<String,
//! u32>` + `Vec<String>`), compared after every step.
//!
//! The strings cover the cases that matter for the arena: the empty string,
//! non-ASCII and NUL bytes, and lengths at and around chunk and block
//! boundaries, so that chunk growth, dedicated chunks and reuse after
//! `clear` are all exercised, and `shrink_to` after `clear` and on a
//! table that holds strings.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use strtab::{ErrorKind, FIRST_CHUNK_CAPACITY, Limits, MAX_CHUNK_CAPACITY, StringId, StringTable};

mod common;

use common::Rng;

/// Sequences per table configuration (far fewer under Miri).
const SEQUENCES: u64 = if cfg!(miri) { 2 } else { 40 };
/// Operations per sequence.
const STEPS: usize = if cfg!(miri) { 60 } else { 1000 };

/// The reference model.
#[derive(Default)]
struct Model {
    ids: HashMap<String, u32>,
    strings: Vec<String>,
}

impl Model {
    fn new() -> Model {
        let mut m = Model::default();
        m.clear();
        m
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.strings.clear();
        self.ids.insert(String::new(), 0);
        self.strings.push(String::new());
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.ids.insert(s.to_owned(), id);
        self.strings.push(s.to_owned());
        id
    }
}

/// Builds a test string: a mix of profiler-like names, odd characters and
/// lengths around the arena's boundaries.
fn make_string(rng: &mut Rng, pool: &[String]) -> String {
    let big = !cfg!(miri);
    match rng.below(12) {
        // Re-intern a known string: the common case for a profiler.
        0..=3 if !pool.is_empty() => pool[rng.below(pool.len())].clone(),
        4 => String::new(),
        5 => format!(
            "crate::module{}::function_{}",
            rng.below(50),
            rng.below(500)
        ),
        6 => format!("/src/path/{}/file_{}.rs", rng.below(20), rng.below(200)),
        7 => ["é", "日本語", "🦀", "\0", "a\0b", "ß", "\u{10FFFF}"][rng.below(7)]
            .repeat(1 + rng.below(5)),
        8 => {
            // Lengths near block and chunk boundaries.
            let lens = if big {
                [
                    1,
                    15,
                    16,
                    17,
                    4080,
                    FIRST_CHUNK_CAPACITY - 1,
                    FIRST_CHUNK_CAPACITY,
                    FIRST_CHUNK_CAPACITY + 1,
                ]
            } else {
                [1, 15, 16, 17, 100, 200, 300, 400]
            };
            let len = lens[rng.below(lens.len())];
            let c = (b'a' + rng.below(26) as u8) as char;
            c.to_string().repeat(len)
        }
        9 if big && rng.below(8) == 0 => {
            // Larger than any normal chunk, just a dedicated one, or
            // between a quarter and a whole block (the last three: these
            // run on into the next block when they do not fit,
            // `Arena::spill`).
            let lens = [
                MAX_CHUNK_CAPACITY / 4 + 1,
                MAX_CHUNK_CAPACITY,
                MAX_CHUNK_CAPACITY + 7,
                300_000,
                20_000,
                33 << 10,
                60_000,
            ];
            let len = lens[rng.below(lens.len())];
            format!("{}{}", rng.next(), "z".repeat(len))
        }
        _ => {
            let len = rng.below(64);
            (0..len)
                .map(|_| (b' ' + rng.below(95) as u8) as char)
                .collect()
        }
    }
}

/// Compares every string and id of `table` with the model.
fn check_all<S: std::hash::BuildHasher>(table: &StringTable<S>, model: &Model) {
    assert_eq!(table.len(), model.strings.len());
    assert!(table.iter().eq(model.strings.iter().map(String::as_str)));
    assert!(
        table
            .iter()
            .rev()
            .eq(model.strings.iter().rev().map(String::as_str))
    );
    // Internal iteration (`fold`, which reads the arena block by block),
    // over the whole table and over ranges left by `next` and `next_back`.
    let n = model.strings.len();
    for (front, back) in [
        (0, 0),
        (1, 0),
        (n / 3, n / 4),
        (n / 2, 1),
        (0, n / 2),
        (n, 0),
    ] {
        let mut iter = table.iter();
        for _ in 0..front {
            iter.next();
        }
        for _ in 0..back.min(n - front) {
            iter.next_back();
        }
        let mut folded = Vec::new();
        iter.for_each(|s| folded.push(s));
        let expected = &model.strings[front.min(n)..n - back.min(n - front)];
        assert!(
            folded
                .iter()
                .copied()
                .eq(expected.iter().map(String::as_str))
        );
    }
    for (i, s) in model.strings.iter().enumerate() {
        assert_eq!(table.get(s), Some(StringId::from_u32(i as u32)));
        assert_eq!(&table[StringId::from_u32(i as u32)], s.as_str());
    }
}

/// Runs one random sequence against a table made by `make`.
fn run<S: std::hash::BuildHasher>(
    seed: u64,
    limits: Option<Limits>,
    make: &dyn Fn() -> StringTable<S>,
) {
    let mut rng = Rng(seed);
    let mut table = make();
    let mut model = Model::new();
    let mut pool: Vec<String> = Vec::new();
    for step in 0..STEPS {
        match rng.below(21) {
            0..=9 => {
                let s = make_string(&mut rng, &pool);
                let before = table.len();
                match table.try_intern(&s) {
                    Ok(id) => {
                        assert_eq!(
                            id.to_u32(),
                            model.intern(&s),
                            "step {step}: id of {:.40?}",
                            s
                        );
                        assert_eq!(table.resolve(id), Some(s.as_str()));
                    }
                    Err(e) => {
                        // Only limited tables fail, and only on new strings.
                        let limits = limits.expect("an unlimited table failed");
                        assert!(!model.ids.contains_key(&s), "a hit failed: {e}");
                        assert_eq!(table.len(), before, "a failed insert changed the table");
                        match e.kind() {
                            ErrorKind::IdsExhausted => {
                                assert_eq!(table.len(), limits.get_max_strings())
                            }
                            ErrorKind::MemoryLimit => {}
                            other => panic!("unexpected error {other:?}: {e}"),
                        }
                        assert!(!e.to_string().is_empty());
                    }
                }
                if pool.len() < 400 && s.len() < 1000 {
                    pool.push(s);
                }
            }
            10..=13 => {
                let s = make_string(&mut rng, &pool);
                let before = table.len();
                let expected = model.ids.get(&s).map(|&id| StringId::from_u32(id));
                assert_eq!(table.get(&s), expected, "step {step}");
                assert_eq!(table.contains(&s), expected.is_some());
                assert_eq!(table.len(), before, "get inserted");
            }
            14..=16 => {
                let raw = rng.below(model.strings.len() + 3) as u32;
                let expected = model.strings.get(raw as usize).map(String::as_str);
                assert_eq!(table.resolve(StringId::from_u32(raw)), expected);
            }
            17 if rng.below(6) == 0 => {
                let memory = table.memory_usage();
                table.clear();
                model.clear();
                assert_eq!(table.memory_usage(), memory, "clear changed memory");
                check_all(&table, &model);
            }
            18 if rng.below(10) == 0 => {
                check_all(&table, &model);
                let old = std::mem::replace(&mut table, make());
                let resolver = old.into_resolver();
                assert_eq!(resolver.len(), model.strings.len());
                assert!(resolver.iter().eq(model.strings.iter().map(String::as_str)));
                for (i, s) in model.strings.iter().enumerate() {
                    assert_eq!(
                        resolver.resolve(StringId::from_u32(i as u32)),
                        Some(s.as_str())
                    );
                }
                assert_eq!(
                    resolver.resolve(StringId::from_u32(model.strings.len() as u32)),
                    None
                );
                model.clear();
            }
            19 => check_all(&table, &model),
            20 => {
                // shrink_to: after a clear (everything can go) or on the
                // table as it is (only index and hash-table slack).
                if rng.below(3) == 0 {
                    table.clear();
                    model.clear();
                }
                let memory = table.memory_usage();
                let max_bytes = match rng.below(4) {
                    0 => 0,
                    1 => memory / 2,
                    2 => memory.saturating_sub(1),
                    _ => usize::MAX,
                };
                table.shrink_to(max_bytes);
                let shrunk = table.memory_usage();
                assert!(shrunk <= memory, "step {step}: shrink_to grew the table");
                if max_bytes >= memory {
                    assert_eq!(shrunk, memory, "step {step}: shrink_to within max_bytes");
                }
                check_all(&table, &model);
            }
            _ => {}
        }
        if let Some(limits) = limits {
            assert!(table.memory_usage() <= table.limits().get_max_bytes());
            assert!(table.len() <= limits.get_max_strings());
        }
        assert_eq!(table.len(), model.strings.len());
    }
    check_all(&table, &model);
}

#[test]
fn default_table_matches_model() {
    for seed in 0..SEQUENCES {
        run(seed, None, &StringTable::new);
    }
}

#[test]
fn unsized_table_matches_model() {
    // No initial allocation: every growth path starts from nothing.
    for seed in 0..SEQUENCES {
        run(1000 + seed, None, &|| StringTable::with_capacity(0, 0));
    }
}

#[test]
fn fixed_hasher_table_matches_model() {
    type Fixed = BuildHasherDefault<std::hash::DefaultHasher>;
    for seed in 0..SEQUENCES {
        run(2000 + seed, None, &|| {
            StringTable::builder().hasher(Fixed::default()).build()
        });
    }
}

#[test]
fn limited_tables_match_model() {
    for seed in 0..SEQUENCES {
        let limits = match seed % 3 {
            0 => Limits::new().max_strings(50),
            1 => Limits::new().max_bytes(40_000),
            _ => Limits::new().max_strings(300).max_bytes(400_000),
        };
        run(3000 + seed, Some(limits), &|| {
            StringTable::with_limits(limits)
        });
    }
}
