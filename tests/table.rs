//! Behaviour tests for `StringTable` and `Resolver`.

use std::hash::BuildHasherDefault;

/// Scales loop counts down under Miri, which is orders of magnitude slower.
const fn scaled(n: usize) -> usize {
    if cfg!(miri) { n / 1000 + 1 } else { n }
}

use strtab::{
    ErrorKind, FIRST_CHUNK_CAPACITY, INITIAL_INDEX_CAPACITY, INITIAL_TABLE_CAPACITY, IdSet, Limits,
    MAX_CHUNK_CAPACITY, PAGE_SIZE, StringId, StringTable,
};

#[test]
fn empty_string_is_id_zero_everywhere() {
    let tables = [
        StringTable::new(),
        StringTable::default(),
        StringTable::with_capacity(0, 0),
        StringTable::with_limits(Limits::new().max_bytes(0).max_strings(0)),
    ];
    for mut t in tables {
        assert_eq!(t.len(), 1);
        assert!(t.is_empty());
        assert_eq!(t.get(""), Some(StringId::EMPTY));
        assert_eq!(t.intern(""), StringId::EMPTY);
        assert_eq!(t.resolve(StringId::EMPTY), Some(""));
        assert_eq!(&t[StringId::EMPTY], "");
        assert_eq!(t.iter().collect::<Vec<_>>(), [""]);
        assert_eq!(t.into_resolver().resolve(StringId::EMPTY), Some(""));
    }
}

#[test]
fn ids_are_dense_and_in_insertion_order() {
    let mut t = StringTable::new();
    let words: Vec<String> = (0..scaled(2000)).map(|i| format!("fn_{i}")).collect();
    for (i, w) in words.iter().enumerate() {
        assert_eq!(t.intern(w).index(), i + 1);
    }
    for (i, w) in words.iter().enumerate() {
        assert_eq!(t.intern(w).index(), i + 1, "a hit must return the first id");
    }
    assert_eq!(t.len(), words.len() + 1);
    let all: Vec<&str> = t.iter().collect();
    assert_eq!(all[0], "");
    assert_eq!(
        &all[1..],
        words.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(t.iter().len(), t.len());
}

#[test]
fn get_never_inserts() {
    let mut t = StringTable::new();
    assert_eq!(t.get("absent"), None);
    assert_eq!(t.len(), 1);
    let id = t.intern("present");
    assert_eq!(t.get("present"), Some(id));
    assert_eq!(t.get("absent"), None);
    assert_eq!(t.len(), 2);
}

#[test]
fn odd_strings_round_trip() {
    let mut t = StringTable::new();
    let long = "ä".repeat(5000);
    let strings = [
        "\0",
        "a\0b",
        "é",
        "日本語",
        "🦀🦀",
        "\u{10FFFF}",
        " ",
        "\n\t",
        long.as_str(),
    ];
    let ids: Vec<StringId> = strings.iter().map(|s| t.intern(s)).collect();
    for (s, id) in strings.iter().zip(&ids) {
        assert_eq!(&t[*id], *s);
        assert_eq!(t.get(s), Some(*id));
    }
    // Prefixes and extensions of stored strings are different strings.
    assert_eq!(t.get("a"), None);
    assert_eq!(t.get("a\0"), None);
    assert_ne!(t.intern("a\0b\0"), ids[1]);
}

#[test]
fn strings_larger_than_any_chunk() {
    let mut t = StringTable::new();
    let small = t.intern("before");
    let len = if cfg!(miri) {
        MAX_CHUNK_CAPACITY / 2
    } else {
        3 * MAX_CHUNK_CAPACITY
    };
    let big = "abcdefghijklmnopqrstuvwxyz".repeat(len / 26);
    let id = t.intern(&big);
    let after = t.intern("after");
    assert_eq!(&t[id], big.as_str());
    assert_eq!(t.get(&big), Some(id));
    assert_eq!(&t[small], "before");
    assert_eq!(&t[after], "after");
    // The big string costs about its own size, not a doubled chunk.
    assert!(
        t.memory_usage() < big.len() + 2 * MAX_CHUNK_CAPACITY,
        "{}",
        t.memory_usage()
    );
}

#[test]
fn resolve_unknown_ids_is_none() {
    let mut t = StringTable::new();
    t.intern("a");
    assert_eq!(t.resolve(StringId::from_u32(2)), None);
    assert_eq!(t.resolve(StringId::from_u32(u32::MAX)), None);
}

#[test]
#[should_panic(expected = "StringId(5) was not given out by this table, which holds 2 strings")]
fn index_panics_on_unknown_id() {
    let mut t = StringTable::new();
    t.intern("a");
    let _ = &t[StringId::from_u32(5)];
}

#[test]
#[should_panic(expected = "string table is full: it holds 2 strings, the most its limits allow")]
fn intern_panics_with_the_try_intern_message() {
    let mut t = StringTable::with_limits(Limits::new().max_strings(2));
    t.intern("a");
    t.intern("a"); // a hit never fails
    t.intern("b");
}

#[test]
fn messages_count_one_string_in_the_singular() {
    let mut t = StringTable::with_limits(Limits::new().max_strings(1));
    let err = t.try_intern("a").unwrap_err();
    assert_eq!(
        err.to_string(),
        "string table is full: it holds 1 string, the most its limits allow"
    );
    let mut ids = [StringId::EMPTY; 2];
    let err = t.try_intern_batch(&["", "a"], &mut ids).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("batch stopped after 1 string: string table is full"),
        "{err}"
    );
}

#[test]
fn index_panic_counts_one_string_in_the_singular() {
    let t = StringTable::new();
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = &t[StringId::from_u32(3)];
    }))
    .unwrap_err();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("StringId(3) was not given out by this table, which holds 1 string")
    );
}

#[test]
fn builders_debug_names_the_hasher_without_its_seeds() {
    let table = format!("{:?}", StringTable::builder().capacity(10, 100));
    let shared = format!("{:?}", strtab::SharedStringTable::builder().shards(2));
    for dbg in [&table, &shared] {
        assert!(!dbg.contains("seed"), "{dbg}");
        assert!(dbg.contains("hasher: \"hashbrown::"), "{dbg}");
    }
    assert!(
        table.starts_with("Builder { capacity: Some((10, 100)), limits: "),
        "{table}"
    );
    assert!(shared.contains("shards: 2"), "{shared}");
    // A hasher without `Debug` leaves the builder `Debug`.
    #[derive(Default, Clone)]
    struct Plain;
    impl std::hash::BuildHasher for Plain {
        type Hasher = std::hash::DefaultHasher;
        fn build_hasher(&self) -> Self::Hasher {
            std::hash::DefaultHasher::new()
        }
    }
    assert!(format!("{:?}", StringTable::builder().hasher(Plain)).contains("Plain"));
}

#[test]
fn string_limit_is_exact() {
    let mut t = StringTable::with_limits(Limits::new().max_strings(10));
    for i in 1..10 {
        t.try_intern(&i.to_string()).unwrap();
    }
    assert_eq!(t.len(), 10);
    let e = t.try_intern("one more").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdsExhausted);
    assert_eq!(t.len(), 10);
    assert_eq!(t.try_intern("9").unwrap().index(), 9);
    t.clear();
    assert_eq!(t.try_intern("one more").unwrap().index(), 1);
}

#[test]
fn memory_limit_is_hard_and_named() {
    let limit = if cfg!(miri) { 40_000 } else { 100_000 };
    let mut t = StringTable::with_limits(Limits::new().max_bytes(limit));
    let mut ok = Vec::new();
    let err = loop {
        let s = format!("some/fairly/long/path/to/a/source/file_{}.rs", ok.len());
        match t.try_intern(&s) {
            Ok(id) => ok.push((id, s)),
            Err(e) => break e,
        }
        assert!(t.memory_usage() <= limit);
    };
    assert_eq!(err.kind(), ErrorKind::MemoryLimit);
    assert!(err.to_string().contains("memory limit"), "{err}");
    assert!(err.to_string().contains(&limit.to_string()), "{err}");
    assert!(
        ok.len() > limit / 100,
        "only {} strings fit in {limit} bytes",
        ok.len()
    );
    for (id, s) in &ok {
        assert_eq!(&t[*id], s.as_str());
    }
    // Hits still work at the limit.
    assert_eq!(t.try_intern(&ok[0].1).unwrap(), ok[0].0);
}

/// A larger byte limit takes at least as many strings: near the limit the
/// index and the arena's chunks take at most half of what is left (after
/// what the hash table's growth and the string's chunk need), so that
/// neither leaves the others no room (until 2026-12-06 a limit of 4,160
/// bytes took no string where 4,144 took 84, 20,640 took 3 where 20,592
/// took 409, and 59,616 took 816 where a smaller one took 1,478).
#[test]
fn larger_byte_limits_take_as_many_strings() {
    let (step, end) = if cfg!(miri) {
        (4096, 24 << 10)
    } else {
        (32, 96 << 10)
    };
    let mut took = 0;
    for max in (0..end).step_by(step) {
        let mut t = StringTable::with_limits(Limits::new().max_bytes(max));
        let n = (0..)
            .take_while(|i| t.try_intern(&format!("string number {i}")).is_ok())
            .count();
        assert!(
            n >= took,
            "a limit of {max} bytes took {n} strings where a smaller one took {took}"
        );
        took = n;
        assert!(t.memory_usage() <= max.max(t.limits().get_max_bytes()));
    }
    assert!(took > 100);
}

#[test]
// Thousands of strings take minutes under Miri; the rule it tests added no
// `unsafe`, and the smaller limits of the tests above run under Miri.
#[cfg_attr(miri, ignore)]
fn a_table_near_its_byte_limit_grows_in_few_steps() {
    // Filling a table to its byte limit: once the hash table can no longer
    // grow, the index grew by one entry per string, each a reallocation
    // of the whole index (9,859 of them at 4 MiB, 90,456 at 64 MiB; with an
    // allocator that copies on `realloc`, filling 32 MiB took 78 s). Each
    // growth shows as a change of `memory_usage`: 9,862 changes then, 204
    // now (most of them the arena's smallest chunks, which it settles for
    // near the limit).
    let max = 4 << 20;
    let mut t = StringTable::with_limits(Limits::new().max_bytes(max));
    let (mut growths, mut before) = (0, t.memory_usage());
    for i in 0.. {
        if t.try_intern(&format!("string number {i}")).is_err() {
            break;
        }
        let after = t.memory_usage();
        growths += usize::from(after != before);
        before = after;
    }
    assert!(t.memory_usage() <= max);
    assert!(growths < 500, "{growths} growths to fill {max} bytes");
}

#[test]
fn new_table_is_page_tuned() {
    let t = StringTable::new();
    let m = t.memory_usage();
    // One 16 KiB chunk (with footer), a one-page index (5-byte entries:
    // a record's word and a length byte, behind 16 bytes of block bases
    // for each of the first two blocks), a 512-bucket table (5-byte slots,
    // the record's location and length byte, and a control byte each),
    // and a few dozen bytes of bookkeeping.
    let bases = 2 * 16;
    let expected_min = FIRST_CHUNK_CAPACITY
        + strtab::CHUNK_FOOTER_SIZE
        + bases
        + INITIAL_INDEX_CAPACITY * 5
        + 512 * 6;
    assert!(
        m >= expected_min && m < expected_min + 256,
        "{m} vs {expected_min}"
    );
    assert_eq!(FIRST_CHUNK_CAPACITY + strtab::CHUNK_OVERHEAD, 4 * PAGE_SIZE);
    assert_eq!(
        PAGE_SIZE - (bases + INITIAL_INDEX_CAPACITY * 5 + strtab::MALLOC_HEADER_SIZE),
        3,
        "one page but 3 bytes (less than an entry)"
    );
    assert_eq!(INITIAL_TABLE_CAPACITY, 448);
    const { assert!(512 * 5 + 16 <= PAGE_SIZE) };
}

#[test]
fn first_growths_stay_within_page_tuned_allocations() {
    // Filling the first chunk, index and table allocates nothing new.
    let mut t = StringTable::new();
    let m = t.memory_usage();
    let mut bytes = 0;
    let mut i = 0;
    while t.len() < INITIAL_TABLE_CAPACITY {
        let s = format!("f{i:05}");
        if bytes + s.len() > FIRST_CHUNK_CAPACITY {
            break;
        }
        bytes += s.len();
        t.intern(&s);
        i += 1;
    }
    assert_eq!(t.memory_usage(), m);
}

#[test]
fn capacity_hint_means_no_growth() {
    let strings: Vec<String> = (0..scaled(10_000))
        .map(|i| format!("module::function_{i}"))
        .collect();
    let bytes: usize = strings.iter().map(String::len).sum();
    let mut t = StringTable::with_capacity(strings.len(), bytes);
    let m = t.memory_usage();
    for s in &strings {
        t.intern(s);
    }
    assert_eq!(t.memory_usage(), m);
    assert_eq!(t.len(), strings.len() + 1);
}

#[test]
fn capacity_hint_is_cut_to_the_string_limit() {
    let limits = Limits::new().max_strings(10);
    let hinted = StringTable::builder()
        .limits(limits)
        .capacity(1 << 20, 64 << 20)
        .build();
    let exact = StringTable::builder()
        .limits(limits)
        .capacity(9, 9 * 64)
        .build();
    // The hint's 1Mi strings of 64 bytes, cut to the 9 the limit allows
    // besides "": the same allocations as a hint of 9 strings of 64 bytes.
    assert_eq!(hinted.memory_usage(), exact.memory_usage());
    let mut t = hinted;
    let m = t.memory_usage();
    for i in 0..9 {
        t.intern(&format!("{i:064}"));
    }
    assert_eq!(t.memory_usage(), m);
}

#[test]
fn clear_keeps_memory_and_refill_allocates_nothing() {
    let mut t = StringTable::new();
    let fill = |t: &mut StringTable| {
        for i in 0..scaled(20_000) {
            t.intern(&format!("label_value_{i}"));
        }
        t.intern(&"x".repeat(100_000)); // a dedicated chunk
        t.intern(&"y".repeat(20_000));
    };
    fill(&mut t);
    let full = t.memory_usage();
    t.clear();
    assert_eq!(t.len(), 1);
    assert_eq!(t.get("label_value_1"), None);
    assert_eq!(t.memory_usage(), full);
    fill(&mut t);
    assert_eq!(
        t.memory_usage(),
        full,
        "refilling to the same size allocated"
    );
    assert_eq!(t.intern("label_value_0").index(), 1);
    assert_eq!(t.len(), scaled(20_000) + 3);
}

#[test]
fn refill_after_clear_places_long_strings_as_before() {
    // Found by fuzzing. After `clear`, refilling the same strings must
    // place each where the first fill could: a long first string that
    // fitted a table's first chunk goes back there as a normal record
    // (not into a block of its own, which sent the strings after it to a
    // new chunk), and one that had a dedicated block gets it back.
    let cases: [(usize, &[usize]); 5] = [
        (200_000, &[150_000, 20]),
        (0, &[483_745, 147_873]),
        (0, &[100_000, 300_000, 70_000, 10]),
        (0, &[73_664, 77_828, 65_622, 24_872, 40_763]),
        (0, &[251_077, 134_866, 92_625, 52_886, 47_848, 216]),
    ];
    for (capacity, lens) in cases {
        let strings: Vec<String> = lens
            .iter()
            .enumerate()
            .map(|(i, &n)| char::from(b'a' + i as u8).to_string().repeat(n))
            .collect();
        let mut t = StringTable::with_capacity(strings.len(), capacity);
        let fill = |t: &mut StringTable| {
            for s in &strings {
                t.intern(s);
            }
        };
        fill(&mut t);
        let full = t.memory_usage();
        t.clear();
        fill(&mut t);
        assert_eq!(
            t.memory_usage(),
            full,
            "refilling {lens:?} (capacity {capacity}) allocated"
        );
    }
}

/// Random fills mixing short strings, strings that fill much of a 64 KiB
/// block (which run on into the next one) and strings that take a block
/// of their own, with and without a capacity hint: after `clear`, the
/// same strings in the same order get the same ids and allocate nothing.
#[test]
fn refill_after_clear_allocates_nothing_for_any_mix_of_lengths() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for round in 0..scaled(REFILL_ROUNDS) {
        let count = 1 + next(8);
        let lens: Vec<usize> = (0..count)
            .map(|_| match next(20) {
                0..=9 => 1 + next(300),
                10..=16 => 1_000 + next(64_000),
                _ => 64_000 + next(300_000),
            })
            .collect();
        let strings: Vec<String> = lens
            .iter()
            .enumerate()
            .map(|(i, &n)| format!("{i}:{}", "w".repeat(n)))
            .collect();
        let capacity = [0, 1 << 16, 200_000][next(3)];
        let mut t = StringTable::with_capacity(count, capacity);
        let first: Vec<StringId> = strings.iter().map(|s| t.intern(s)).collect();
        let full = t.memory_usage();
        t.clear();
        let again: Vec<StringId> = strings.iter().map(|s| t.intern(s)).collect();
        assert_eq!(again, first, "round {round}: {lens:?}");
        assert_eq!(
            t.memory_usage(),
            full,
            "round {round}: refilling {lens:?} (capacity {capacity}) allocated"
        );
    }
}

/// Rounds of `refill_after_clear_allocates_nothing_for_any_mix_of_lengths`.
const REFILL_ROUNDS: usize = 2000;

#[test]
fn into_resolver_drops_the_hash_table() {
    let mut t = StringTable::new();
    let n = scaled(5000);
    let ids: Vec<_> = (0..n).map(|i| t.intern(&format!("s{i}"))).collect();
    let before = t.memory_usage();
    let r = t.into_resolver();
    assert!(r.memory_usage() < before);
    assert_eq!(r.len(), n + 1);
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(&r[*id], format!("s{i}"));
    }
    assert_eq!(r.iter().next_back(), Some(format!("s{}", n - 1).as_str()));
    assert!(format!("{r:?}").starts_with("Resolver"));
}

#[test]
fn debug_is_a_summary() {
    let mut t = StringTable::new();
    let n = scaled(100_000);
    for i in 0..n {
        t.intern(&format!("string number {i}"));
    }
    let d = format!("{t:?}");
    assert!(d.len() < 200, "{d}");
    assert!(d.contains(&format!("len: {}", n + 1)), "{d}");
    assert!(!d.contains("string number"));
}

#[test]
fn table_moves_to_another_thread() {
    let mut t = StringTable::new();
    let id = t.intern("exported");
    let handle = std::thread::spawn(move || {
        let r = t.into_resolver();
        r[id].to_owned()
    });
    assert_eq!(handle.join().unwrap(), "exported");
}

#[test]
fn readers_share_a_table_between_writes() {
    use std::sync::RwLock;
    let n = scaled(3000);
    // Long strings among short ones (natively, records in several blocks).
    let name = |i: usize| {
        if i.is_multiple_of(97) {
            format!("{i}{}", "x".repeat(300))
        } else {
            format!("fn_{i}")
        }
    };
    let table = RwLock::new(StringTable::new());
    let (tx, rx) = std::sync::mpsc::channel::<(StringId, String)>();
    std::thread::scope(|s| {
        let table = &table;
        s.spawn(move || {
            for i in 0..n {
                let id = table.write().unwrap().intern(&name(i));
                tx.send((id, name(i))).unwrap();
            }
        });
        // Two readers of the same table at once, each walking what the
        // writer interned so far, a few times over: every walk sees the
        // writer's strings in order, none torn or missing; then every id
        // the writer handed out is resolved and looked up again.
        std::thread::scope(|r| {
            let reader = || {
                for _ in 0..4 {
                    let t = table.read().unwrap();
                    assert!(t.iter().skip(1).eq((0..t.len() - 1).map(name)));
                    drop(t);
                    std::thread::yield_now();
                }
            };
            r.spawn(reader);
            r.spawn(reader);
        });
        for (id, s) in rx {
            let t = table.read().unwrap();
            assert_eq!(t.resolve(id), Some(s.as_str()));
            assert_eq!(t.get(&s), Some(id));
        }
    });
    let t = table.into_inner().unwrap();
    assert_eq!(t.len(), n + 1);
    // An iterator sent to another thread.
    let names: Vec<String> = std::thread::scope(|s| {
        let iter = t.iter();
        s.spawn(move || iter.map(str::to_owned).collect())
            .join()
            .unwrap()
    });
    assert_eq!(names.len(), n + 1);
    assert_eq!(names[1], format!("0{}", "x".repeat(300)));
}

#[test]
fn custom_hasher() {
    type Fixed = BuildHasherDefault<std::hash::DefaultHasher>;
    let mut a = StringTable::builder().hasher(Fixed::default()).build();
    let mut b = StringTable::<Fixed>::with_default_hasher();
    for i in 0..scaled(1000) {
        let s = i.to_string();
        assert_eq!(a.intern(&s), b.intern(&s));
    }
    assert_eq!(a.get("0").map(StringId::index), Some(1));
}

#[test]
fn string_id_conversions() {
    let id = StringId::from_u32(u32::MAX);
    assert_eq!(id.to_u32(), u32::MAX);
    assert_eq!(id.index(), u32::MAX as usize);
    assert_eq!(u32::from(StringId::from_u32(7)), 7);
    assert_eq!(usize::from(StringId::from_u32(7)), 7);
    assert_eq!(format!("{:?}", StringId::EMPTY), "StringId(0)");
    assert!(StringId::from_u32(1) < StringId::from_u32(2));
    assert_eq!(StringId::default(), StringId::EMPTY);
}

#[test]
fn limits_clamp() {
    assert_eq!(Limits::new().max_strings(0).get_max_strings(), 1);
    let t = StringTable::with_limits(Limits::new().max_bytes(1));
    assert!(t.limits().get_max_bytes() >= t.memory_usage());
    assert!(
        t.memory_usage() < 256,
        "a tiny limit must start with a tiny table"
    );
}

#[test]
fn interleaved_large_strings_keep_blocks_open() {
    // Strings just over the dedicated threshold, alternating with small
    // ones and sometimes two in a row: each must resolve, and the small
    // strings keep filling their block instead of wasting it.
    let big = 70_000;
    let mut t = StringTable::new();
    let mut expected = Vec::new();
    let mut stored = 0;
    for i in 0..scaled(400) {
        let s = if i % 7 == 3 || i % 7 == 4 {
            format!("{i}{}", "L".repeat(big))
        } else {
            format!("small string {i}")
        };
        stored += s.len();
        expected.push((t.intern(&s), s));
    }
    for (id, s) in &expected {
        assert_eq!(&t[*id], s.as_str());
        assert_eq!(t.get(s), Some(*id));
    }
    assert!(
        t.iter()
            .skip(1)
            .eq(expected.iter().map(|(_, s)| s.as_str()))
    );
    if !cfg!(miri) {
        assert!(
            t.memory_usage() < stored + stored / 4 + (64 << 10),
            "{} for {stored}",
            t.memory_usage()
        );
    }
}

/// A string over 64 KiB costs about its own size in a table whose chunks
/// have grown, or that was pre-sized, as in a new one: bumpalo, after a
/// large chunk, offers only chunks of up to twice the request, and such a
/// table once spent 131 KB per 70 KB string (a compacted copy of it, up to
/// 1.77x the original's memory).
#[test]
fn strings_over_64_kib_cost_their_size_in_any_table() {
    let (short, long) = if cfg!(miri) { (300, 2) } else { (20_000, 20) };
    let big = |k: usize| format!("{k}{}", "L".repeat(70_000));
    for mut t in [
        StringTable::new(),
        // Room for every id, bytes for the short strings only.
        StringTable::with_capacity(short + long, 16 * short),
    ] {
        for i in 0..short {
            t.intern(&format!("short string {i:05}"));
        }
        let before = t.memory_usage();
        for k in 0..long {
            t.intern(&big(k));
        }
        let per_string = (t.memory_usage() - before) / long;
        assert!(
            per_string < big(0).len() + 8 * 1024,
            "{per_string} bytes per string of {}",
            big(0).len()
        );
        // Keeping everything, a compacted copy is no larger.
        let all: IdSet = (0..t.len() as u32).map(StringId::from_u32).collect();
        let (copy, _) = t.compact(&all);
        assert!(
            copy.memory_usage() <= t.memory_usage() + t.memory_usage() / 20,
            "compacted {} against {}",
            copy.memory_usage(),
            t.memory_usage()
        );
    }
}

/// `reserve` makes room as a capacity hint does: filling it allocates
/// nothing, on a new table, one holding strings, and one cleared, for
/// short, long-form and multi-block strings.
#[test]
fn reserve_means_no_growth() {
    let shapes: &[(usize, usize)] = if cfg!(miri) {
        &[(50, 10), (5, 300)]
    } else {
        &[(1000, 10), (5000, 40), (300, 300), (100, 5000), (3, 60_000)]
    };
    for &(n, len) in shapes {
        for start in 0..3 {
            let mut t = StringTable::new();
            if start > 0 {
                for i in 0..scaled(777) {
                    t.intern(&format!("earlier {i}"));
                }
            }
            if start == 2 {
                t.clear();
            }
            let before = t.len();
            t.reserve(n, n * len);
            let m = t.memory_usage();
            let strings: Vec<String> = (0..n).map(|i| format!("{i:0len$}")).collect();
            for s in &strings {
                t.intern(s);
            }
            assert_eq!(t.len(), before + n);
            assert_eq!(
                t.memory_usage(),
                m,
                "{n} strings of {len} bytes, start {start}: grew"
            );
            for s in &strings {
                assert_eq!(&t[t.get(s).unwrap()], s.as_str());
            }
            // Not much more than a table sized for all of it from the start
            // (a new table's page-tuned parts and one record's end aside).
            if start < 2 {
                let total = t.iter().map(str::len).sum();
                let mut hinted = StringTable::with_capacity(t.len() - 1, total);
                for s in t.iter().skip(1) {
                    hinted.intern(s);
                }
                let fresh = StringTable::new().memory_usage();
                let bound = hinted.memory_usage() * 21 / 20 + fresh + len;
                assert!(
                    m <= bound,
                    "{n} strings of {len} bytes, start {start}: {m} against {}",
                    hinted.memory_usage()
                );
            }
            // Room that is there already is not made again.
            let m = t.memory_usage();
            t.clear();
            t.reserve(n, n * len);
            assert_eq!(
                t.memory_usage(),
                m,
                "{n} strings of {len} bytes: reserved again"
            );
        }
    }
}

/// `try_reserve` keeps the limits: past the byte limit it fails and
/// changes no string; past the string limit it is cut to it.
#[test]
fn reserve_keeps_the_limits() {
    let mut t = StringTable::with_limits(Limits::new().max_bytes(200_000).max_strings(1001));
    let a = t.intern("a");
    let e = t.try_reserve(100, 1 << 20).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MemoryLimit);
    assert!(t.memory_usage() <= 200_000);
    assert_eq!((t.len(), &t[a]), (2, "a"));
    // A million strings asked, 999 allowed: cut to those, bytes scaled.
    t.try_reserve(1_000_000, 10_000_000).unwrap();
    let m = t.memory_usage();
    assert!(m <= 200_000, "{m}");
    for i in 0..999 {
        t.intern(&format!("{i:08}"));
    }
    assert_eq!(t.memory_usage(), m);
    assert_eq!(
        t.try_intern("one more").unwrap_err().kind(),
        ErrorKind::IdsExhausted
    );
    // Nothing asked, nothing allocated.
    let mut t = StringTable::new();
    let m = t.memory_usage();
    t.reserve(0, 0);
    assert_eq!(t.memory_usage(), m);
    // As a builder's hint, `u32::MAX` strings or more are refused.
    let e = t.try_reserve(u32::MAX as usize, 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IdsExhausted);
    assert_eq!(t.memory_usage(), m);
    // Strings over 64 KiB get no arena room: each takes a chunk when
    // interned.
    t.reserve(2, 200_000);
    assert!(t.memory_usage() < m + 4096, "{}", t.memory_usage());
}

/// A hasher that sends every string to the same bucket and control byte,
/// so every lookup meets every stored string as a candidate.
#[derive(Default)]
struct Constant;

impl std::hash::Hasher for Constant {
    fn write(&mut self, _: &[u8]) {}
    fn finish(&self) -> u64 {
        0x5EED
    }
}

#[test]
fn lengths_around_the_record_forms() {
    // Every length from 0 to 300 (the one-byte form ends at 254, the long
    // form starts at 255), twice each with different bytes of the same
    // length, first with the default hasher, then with one under which
    // all strings collide: candidates of the right length that are other
    // strings must send the lookup on to the full comparison.
    let lengths: Vec<usize> = (0..=scaled(300).max(40))
        .chain([253, 254, 255, 256, 1000])
        .collect();
    let strings: Vec<String> = lengths
        .iter()
        .flat_map(|&n| {
            let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let mut b = a.clone();
            if n > 0 {
                b.replace_range(n - 1.., "#");
            }
            [a, b]
        })
        .collect();
    fn check<S: std::hash::BuildHasher>(mut t: StringTable<S>, strings: &[String]) {
        let ids: Vec<StringId> = strings.iter().map(|s| t.intern(s)).collect();
        for (s, &id) in strings.iter().zip(&ids) {
            assert_eq!(t.intern(s), id, "re-intern of {} bytes", s.len());
            assert_eq!(t.get(s), Some(id), "get of {} bytes", s.len());
            assert_eq!(t.resolve(id), Some(s.as_str()));
        }
        let distinct: std::collections::HashSet<&String> = strings.iter().collect();
        assert_eq!(t.len(), distinct.len());
        let mut seen = std::collections::HashSet::new();
        let order: Vec<&str> = strings
            .iter()
            .map(String::as_str)
            .filter(|s| !s.is_empty() && seen.insert(*s))
            .collect();
        assert_eq!(t.iter().skip(1).collect::<Vec<_>>(), order);
        // Internal iteration walks each block's records in place, with a
        // loop of its own for blocks that hold long records.
        let folded = t.iter().fold(Vec::new(), |mut v, s| {
            v.push(s);
            v
        });
        assert_eq!(folded[0], "");
        assert_eq!(folded[1..], order[..]);
        assert_eq!(t.get(&"z".repeat(255)), None);
        assert_eq!(t.get(&"a".repeat(3)), None);
    }
    check(StringTable::new(), &strings);
    check(
        StringTable::builder()
            .hasher(BuildHasherDefault::<Constant>::default())
            .build(),
        &strings,
    );
}

/// Iteration reads the strings before each long one (255 bytes or more)
/// as short ones and finds the next long one through the link the long
/// record holds: mixes of short and long strings, long ones back to back,
/// at the 254/255-byte boundary, in dedicated chunks (64 KiB and more),
/// via the in-place and the slow insertion, folded whole and from every
/// position `next` and `next_back` leave, in a resolver, after a
/// `compact`, and after `clear` (which forgets the links) and a refill.
#[test]
fn iteration_finds_every_long_string() {
    let n = if cfg!(miri) { 60 } else { 3_000 };
    let mut t = StringTable::new();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    for round in 0..2 {
        let mut model = vec![String::new()];
        for i in 0..n {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) as usize;
            let len = match r % 16 {
                0..=7 => 1 + r % 40,
                8..=11 => 255 + r % 200,
                12 => 254,
                13 => 255,
                14 if i % 50 == 0 && !cfg!(miri) => 65_000 + r % 2_000,
                _ => 10,
            };
            let mut s = format!("{round}:{i}:");
            while s.len() < len {
                s.push(char::from(b'a' + (s.len() % 26) as u8));
            }
            if t.intern(&s).index() == model.len() {
                model.push(s);
            }
        }
        let folded = |iter: strtab::Iter<'_>| {
            let mut v = Vec::new();
            iter.for_each(|s| v.push(s.to_owned()));
            v
        };
        assert_eq!(folded(t.iter()), model, "round {round}");
        assert!(t.iter().eq(model.iter().map(String::as_str)));
        let step = if cfg!(miri) { 7 } else { 37 };
        for front in (0..model.len()).step_by(step) {
            let mut iter = t.iter();
            if front > 0 {
                iter.nth(front - 1);
            }
            let back = model.len() - front / 2;
            for _ in back..model.len() {
                iter.next_back();
            }
            assert_eq!(
                folded(iter),
                model[front..back.max(front)],
                "{front}..{back}"
            );
        }
        let (compacted, _) = t.compact(&IdSet::from_iter(
            (0..t.len() as u32).map(StringId::from_u32),
        ));
        assert_eq!(folded(compacted.iter()), model);
        let resolver = compacted.into_resolver();
        assert_eq!(folded(resolver.iter()), model);
        t.clear();
        assert_eq!(folded(t.iter()), [""]);
    }
}
