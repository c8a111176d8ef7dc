//! Tests of the profiler operations: batch intern, merge with a remap,
//! compaction, and sharing a frozen table between threads. Each is checked
//! against the one-at-a-time path or a plain model.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use strtab::{ErrorKind, IdSet, Limits, StringId, StringTable};

/// Loop counts, scaled down under Miri.
const fn scaled(n: usize) -> usize {
    if cfg!(miri) { n / 1000 + 1 } else { n }
}

/// A deterministic stream of strings with many repeats.
fn stream(n: usize, distinct: usize, seed: u64) -> Vec<String> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 7 {
                0 => String::new(),
                1 => format!("é日{}", x % 50),
                _ => format!("crate::module::function_{}", x % distinct as u64),
            }
        })
        .collect()
}

#[test]
fn batch_gives_the_ids_of_one_by_one() {
    // Uneven slices and duplicates (the prefetching path has its own test,
    // `batch_and_merge_beyond_the_prefetch_threshold`).
    for (n, distinct) in [(scaled(5000), 300), (scaled(200_000), scaled(60_000))] {
        let strings = stream(n, distinct, 42);
        let mut one = StringTable::new();
        let expected: Vec<StringId> = strings.iter().map(|s| one.intern(s)).collect();
        let mut batch = StringTable::new();
        let mut ids = vec![StringId::EMPTY; n];
        // Uneven slices exercise partial groups.
        let mut start = 0;
        for (k, len) in [1usize, 15, 16, 17, 1000].iter().cycle().enumerate() {
            if start == n || k > 10_000 {
                break;
            }
            let end = (start + len).min(n);
            batch.intern_batch(&strings[start..end], &mut ids[start..end]);
            start = end;
        }
        batch.intern_batch(&strings[start..], &mut ids[start..]);
        assert_eq!(ids, expected);
        assert!(batch.iter().eq(one.iter()));
    }
}

#[test]
fn batch_of_shared_slices_gives_the_ids_of_one_by_one() {
    // A profiler's samples pass the same slices again (a mapping's file for
    // every frame), and slices of one buffer can share an address with
    // different lengths ("main" and "ma"): the batch's recent-slice cache
    // must answer only the same slice. Batches of owned copies in between
    // send the cache into its pause and back.
    let text: String = (0..scaled(400))
        .map(|i| format!("pkg::mod_{}::f{};", i % 37, i % 101))
        .collect();
    let words: Vec<&str> = text.split(';').filter(|w| !w.is_empty()).collect();
    let mut one = StringTable::new();
    let mut batch = StringTable::new();
    let mut x = 7u64;
    for round in 0..scaled(300) {
        let mut sample: Vec<&str> = Vec::new();
        for _ in 0..(round % 40) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = words[x as usize % words.len().min(12 + round % 50)];
            // The word, a prefix at the same address, or `""`.
            sample.push(match x % 5 {
                0 => &w[..(x as usize / 5) % w.len() + 1],
                1 => "",
                _ => w,
            });
        }
        let expected: Vec<StringId> = sample.iter().map(|s| one.intern(s)).collect();
        let mut ids = vec![StringId::EMPTY; sample.len()];
        if round % 7 < 3 {
            let owned: Vec<String> = sample.iter().map(|s| s.to_string()).collect();
            batch.intern_batch(&owned, &mut ids);
        } else {
            batch.intern_batch(&sample, &mut ids);
        }
        assert_eq!(ids, expected, "round {round}");
    }
    assert!(batch.iter().eq(one.iter()));
}

#[test]
fn batch_reads_a_reused_buffer_afresh() {
    // The same address in the next batch may hold other bytes.
    let mut t = StringTable::new();
    let mut buf = String::with_capacity(16);
    let mut ids = [StringId::EMPTY; 2];
    for word in ["alpha", "bravo", "alpha", "delta"] {
        buf.clear();
        buf.push_str(word);
        t.intern_batch(&[buf.as_str(), buf.as_str()], &mut ids);
        assert_eq!(&t[ids[0]], word);
        assert_eq!(ids[0], ids[1]);
    }
    assert_eq!(t.len(), 4);
}

#[test]
fn failed_batch_reports_progress_and_loses_nothing() {
    let mut t = StringTable::with_limits(Limits::new().max_strings(101));
    let strings: Vec<String> = (0..200).map(|i| format!("s{}", i % 150)).collect();
    let mut ids = vec![StringId::EMPTY; strings.len()];
    let err = t.try_intern_batch(&strings, &mut ids).unwrap_err();
    assert_eq!(err.interned(), 100);
    assert_eq!(err.error().kind(), ErrorKind::IdsExhausted);
    assert!(
        err.to_string()
            .starts_with("batch stopped after 100 strings: string table is full")
    );
    for (s, id) in strings.iter().zip(&ids).take(100) {
        assert_eq!(&t[*id], s.as_str());
    }
    assert_eq!(t.len(), 101);
}

#[test]
#[should_panic(
    expected = "a batch intern needs one output id per input string: given 1 string and 0 ids"
)]
fn batch_checks_output_length() {
    StringTable::new().intern_batch(&["a"], &mut []);
}

/// Merges `sources` into a fresh table built by `make` and checks every
/// remapped id against a model.
fn check_merge<S: std::hash::BuildHasher>(mut global: StringTable<S>, sources: &[StringTable<S>]) {
    let mut model: HashMap<String, u32> = HashMap::from([(String::new(), 0)]);
    let mut order = vec![String::new()];
    for src in sources {
        let remap = global.merge(src);
        assert_eq!(remap.len(), src.len());
        for (i, s) in src.iter().enumerate() {
            let next = order.len() as u32;
            let id = *model.entry(s.to_owned()).or_insert_with(|| {
                order.push(s.to_owned());
                next
            });
            let old = StringId::from_u32(i as u32);
            assert_eq!(remap[old].to_u32(), id);
            assert_eq!(remap.get(old), Some(StringId::from_u32(id)));
        }
        assert_eq!(remap.get(StringId::from_u32(src.len() as u32)), None);
    }
    assert!(global.iter().eq(order.iter().map(String::as_str)));
}

#[test]
fn merge_with_shared_hasher() {
    let global = StringTable::new();
    let sources: Vec<_> = (0..4)
        .map(|t| {
            let mut table = StringTable::builder()
                .hasher(global.hasher().clone())
                .build();
            for s in stream(scaled(20_000), scaled(5000), t) {
                table.intern(&s);
            }
            table
        })
        .collect();
    check_merge(global, &sources);
}

#[test]
fn merge_with_different_seeds_rehashes() {
    // Each `StringTable::new()` has its own random seed.
    let sources: Vec<_> = (0..3)
        .map(|t| {
            let mut table = StringTable::new();
            for s in stream(scaled(5000), scaled(2000), 100 + t) {
                table.intern(&s);
            }
            table
        })
        .collect();
    check_merge(StringTable::new(), &sources);
}

#[test]
fn merge_with_fixed_hasher_and_from_resolver() {
    type Fixed = BuildHasherDefault<std::hash::DefaultHasher>;
    let mut a = StringTable::<Fixed>::with_default_hasher();
    let mut b = StringTable::<Fixed>::with_default_hasher();
    a.intern("shared");
    let x = b.intern("only in b");
    let y = b.intern("shared");
    let remap = a.merge(&b.into_resolver());
    assert_eq!(&a[remap[x]], "only in b");
    assert_eq!(remap[y].index(), 1);
    assert_eq!(a.len(), 3);
}

#[test]
fn merge_into_a_full_table_fails_cleanly() {
    let mut small = StringTable::with_limits(Limits::new().max_strings(3));
    small.intern("keep");
    let mut big = StringTable::new();
    for i in 0..10 {
        big.intern(&i.to_string());
    }
    let err = small.try_merge(&big).unwrap_err();
    assert_eq!(err.error().kind(), ErrorKind::IdsExhausted);
    assert_eq!(small.len(), 3);
    assert_eq!(small.get("keep").map(StringId::index), Some(1));
    assert_eq!(small.get("0").map(StringId::index), Some(2));
    // The strings merged before the failure keep their mapping.
    assert_eq!(err.merged(), 1);
    assert_eq!(
        err.to_string(),
        format!(
            "merge stopped after 1 of the other table's strings: {}",
            err.error()
        )
    );
    let remap = err.into_remap();
    assert_eq!(remap.len(), 2);
    let zero = big.get("0").unwrap();
    assert_eq!(&small[remap[zero]], "0");
    assert_eq!(remap.get(StringId::EMPTY), Some(StringId::EMPTY));
    assert_eq!(remap.get(big.get("1").unwrap()), None);
}

#[test]
fn compact_keeps_referenced_strings_in_order() {
    let mut t = StringTable::new();
    let n = scaled(10_000);
    let ids: Vec<StringId> = (0..n).map(|i| t.intern(&format!("frame {i}"))).collect();
    let big = t.intern(&"x".repeat(if cfg!(miri) { 1000 } else { 300_000 }));
    let keep: IdSet = ids.iter().copied().step_by(10).chain([big]).collect();
    let before: Vec<String> = t.iter().map(str::to_owned).collect();
    let (c, remap) = t.compact(&keep);
    // The old table is untouched.
    assert!(t.iter().eq(before.iter().map(String::as_str)));
    // The new one holds "" and the kept strings, in old order.
    let expected: Vec<&str> = std::iter::once("")
        .chain(
            before
                .iter()
                .enumerate()
                .filter(|(i, _)| keep.contains(StringId::from_u32(*i as u32)))
                .map(|(_, s)| s.as_str()),
        )
        .collect();
    assert!(c.iter().eq(expected.iter().copied()));
    assert_eq!(c.len(), keep.len() + 1);
    for (old, new) in remap.iter() {
        match new {
            Some(new) => {
                assert_eq!(c[new], t[old]);
                // The compact table is a working table: lookups find it.
                assert_eq!(c.get(&t[old]), Some(new));
            }
            None => assert!(!keep.contains(old) && old != StringId::EMPTY),
        }
    }
    assert_eq!(remap.get(StringId::EMPTY), Some(StringId::EMPTY));
    assert!(c.memory_usage() < t.memory_usage());
}

#[test]
fn compact_keeping_nothing_or_everything() {
    let mut t = StringTable::new();
    for i in 0..100 {
        t.intern(&i.to_string());
    }
    let (none, remap) = t.compact(&IdSet::new());
    assert_eq!(none.len(), 1);
    assert_eq!(remap.iter().filter(|(_, n)| n.is_some()).count(), 1);
    let all: IdSet = (0..t.len() as u32).map(StringId::from_u32).collect();
    let (every, remap) = t.compact(&all);
    assert!(every.iter().eq(t.iter()));
    assert!(remap.iter().all(|(old, new)| new == Some(old)));
}

#[test]
fn resolvers_compact_as_tables_do() {
    let n = scaled(5_000);
    let names: Vec<String> = (0..n).map(|i| format!("frame {i}")).collect();
    let mut table = StringTable::new();
    let shared = strtab::SharedStringTable::new();
    for s in &names {
        // From one thread, the shared table numbers as the table does.
        assert_eq!(shared.intern(s), table.intern(s));
    }
    let keep: IdSet = (1..table.len() as u32)
        .step_by(7)
        .map(StringId::from_u32)
        .collect();
    // What compacting must give: `""`, then the kept names in id order,
    // numbered from 1; every other id dropped.
    let kept: Vec<&str> = names.iter().step_by(7).map(String::as_str).collect();
    let (from_table, table_remap) = table.compact(&keep);
    let resolvers = [
        table.into_resolver().compact(&keep),
        shared.into_resolver().compact(&keep),
    ];
    for (c, remap) in resolvers {
        assert!(c.iter().eq(std::iter::once("").chain(kept.iter().copied())));
        assert!(c.iter().eq(from_table.iter()));
        assert_eq!(remap, table_remap);
        for (old, new) in remap.iter() {
            if old.to_u32() % 7 == 1 {
                let new = new.expect("a kept id has a new one");
                assert_eq!(new.to_u32(), old.to_u32() / 7 + 1);
                assert_eq!(
                    c.resolve(new),
                    Some(names[old.to_u32() as usize - 1].as_str())
                );
            } else {
                assert_eq!(new.is_some(), old == StringId::EMPTY, "{old:?}");
            }
        }
        for s in &kept {
            assert_eq!(c.get(s).map(|id| &c[id]), Some(*s));
        }
    }
}

#[test]
#[should_panic(expected = "has no new id in this remap")]
fn remap_index_panics_on_dropped_id() {
    let mut t = StringTable::new();
    let a = t.intern("a");
    let (_, remap) = t.compact(&IdSet::new());
    let _ = remap[a];
}

#[test]
fn frozen_table_encodes_from_several_threads() {
    let mut t = StringTable::new();
    for i in 0..scaled(20_000) {
        t.intern(&format!("thread-shared string {i}"));
    }
    let resolver = t.into_resolver();
    let mut expected = Vec::new();
    strtab::pprof::write_string_table(resolver.iter(), &mut expected);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let mut out =
                        Vec::with_capacity(strtab::pprof::string_table_len(resolver.iter()));
                    strtab::pprof::write_string_table(resolver.iter(), &mut out);
                    out
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), expected);
        }
    });
}

#[test]
fn id_set_basics() {
    let mut set = IdSet::with_capacity(10);
    assert!(set.insert(StringId::from_u32(1000)));
    assert!(!set.insert(StringId::from_u32(1000)));
    assert!(set.contains(StringId::from_u32(1000)));
    assert!(!set.contains(StringId::from_u32(999)));
    assert!(!set.contains(StringId::from_u32(u32::MAX - 1)));
    assert_eq!(set.len(), 1);
    set.clear();
    assert!(set.is_empty());
}

/// `IdSet::iter` against a sorted, deduplicated model, for sets with ids
/// at word edges, in sparse words and in dense ones.
#[test]
fn id_set_iterates_in_ascending_order() {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    for round in 0..scaled(200) {
        let mut set = IdSet::new();
        let mut model = Vec::new();
        let spread = [64, 1000, 100_000][round % 3];
        for _ in 0..round % 50 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = match x % 5 {
                0 => (x >> 8) % 2 * 64 + 63,
                1 => (x >> 8) % 2 * 64,
                _ => (x >> 8) % spread,
            } as u32;
            set.insert(StringId::from_u32(id));
            model.push(id);
        }
        model.sort_unstable();
        model.dedup();
        let it = set.iter();
        assert_eq!(it.len(), model.len());
        assert_eq!(it.map(u32::from).collect::<Vec<_>>(), model);
        assert!((&set).into_iter().eq(set.iter()));
        let mut it = set.iter();
        for left in (0..model.len()).rev() {
            it.next();
            assert_eq!(it.size_hint(), (left, Some(left)));
        }
        assert_eq!(it.next(), None);
        assert_eq!(it.next(), None);
    }
    let far = if cfg!(miri) { 1 << 12 } else { 1 << 24 };
    let mut set: IdSet = [far, 0].map(StringId::from_u32).into_iter().collect();
    assert!(set.iter().map(u32::from).eq([0, far]));
    set.clear();
    assert_eq!(set.iter().next(), None);
}

#[test]
fn remap_iterates_both_ways() {
    let mut t = StringTable::new();
    for i in 0..20 {
        t.intern(&i.to_string());
    }
    let keep: IdSet = (0..20).step_by(3).map(StringId::from_u32).collect();
    let (_, remap) = t.compact(&keep);
    let pairs: Vec<_> = (&remap).into_iter().collect();
    assert_eq!(pairs.len(), t.len());
    assert_eq!(remap.iter().len(), t.len());
    for (i, &(old, new)) in pairs.iter().enumerate() {
        assert_eq!(old.index(), i);
        assert_eq!(new, remap.get(old));
    }
    let mut back: Vec<_> = remap.iter().rev().collect();
    back.reverse();
    assert_eq!(back, pairs);
}

#[test]
fn batch_and_merge_beyond_the_prefetch_threshold() {
    // Over 16 MiB of strings, so batches and merges run the prefetching
    // pipeline (below it they are the one-by-one loop); under Miri, which
    // lowers that threshold to 64 KiB (`PREFETCH_MIN_BYTES`), over 64 KiB,
    // so that it checks the pipeline's reads of the records its slots
    // name. Some strings repeat, in and across batches.
    // (Under Miri 960 distinct non-empty strings of 1,200: 121 KB of
    // records.)
    let (n, distinct, threshold) = if cfg!(miri) {
        (1_200, 997, 64 << 10)
    } else {
        (160_000, 200_000, 16 << 20)
    };
    // Every 97th string is `""`, which the pipeline answers too.
    let strings: Vec<String> = (0..n)
        .map(|i| {
            if i % 97 == 96 {
                return String::new();
            }
            format!(
                "{:0>120}",
                (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % distinct
            )
        })
        .collect();
    let mut one = StringTable::new();
    let expected: Vec<StringId> = strings.iter().map(|s| one.intern(s)).collect();
    assert!(one.memory_usage() > threshold);
    let mut batch = StringTable::new();
    let mut ids = vec![StringId::EMPTY; n];
    for (chunk, out) in strings.chunks(37).zip(ids.chunks_mut(37)) {
        batch.intern_batch(chunk, out);
    }
    assert_eq!(ids, expected);
    // Hits on the big table, through the pipeline from the first group.
    batch.intern_batch(&strings, &mut ids);
    assert_eq!(ids, expected);
    let mut merged = StringTable::new();
    merged.intern("first");
    let remap = merged.merge(&one);
    for (i, s) in one.iter().enumerate() {
        assert_eq!(&merged[remap[StringId::from_u32(i as u32)]], s);
    }
    assert_eq!(merged.len(), one.len() + 1);
    // Merges into tables past the threshold from the start run the
    // pipeline too: into one that holds every string (hits), and into one
    // reserved for them (insertions).
    let mut reserved = StringTable::new();
    reserved.reserve(one.len(), one.memory_usage());
    for table in [&mut batch, &mut reserved] {
        let remap = table.merge(&one);
        for (i, s) in one.iter().enumerate() {
            assert_eq!(&table[remap[StringId::from_u32(i as u32)]], s);
        }
        assert_eq!(table.len(), one.len());
    }
}
