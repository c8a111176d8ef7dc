//! `shrink_to` and `shrink_to_fit`: a soak test of a continuous profiler
//! (thousands of export periods with occasional bursts), shrinking tables
//! that hold strings, and shrinking under `Limits`.
//!
//! Sizes are scaled down under Miri and under `.ci/valgrind.sh` (which
//! sets `STRTAB_VALGRIND=1`).

use std::collections::HashMap;

use strtab::{ErrorKind, Limits, MAX_CHUNK_CAPACITY, StringId, StringTable};

mod common;

use common::{Rng, id, scaled};

/// The strings of a table in id order, checked against it.
#[derive(Default)]
struct Model {
    strings: Vec<String>,
    ids: HashMap<String, StringId>,
}

impl Model {
    fn new() -> Model {
        Model {
            strings: vec![String::new()],
            ids: HashMap::from([(String::new(), StringId::EMPTY)]),
        }
    }

    /// Interns `s` into `table` and checks the id it gets.
    fn intern(&mut self, table: &mut StringTable, s: &str) -> StringId {
        let got = table.intern(s);
        match self.ids.get(s) {
            Some(&want) => assert_eq!(got, want, "a known string got a new id"),
            None => {
                assert_eq!(got, id(self.strings.len()), "ids are not dense");
                self.strings.push(s.to_owned());
                self.ids.insert(s.to_owned(), got);
            }
        }
        got
    }

    /// Every id resolves to its string, and `get` finds every string.
    fn check(&self, table: &StringTable) {
        assert_eq!(table.len(), self.strings.len());
        assert!(table.iter().eq(self.strings.iter().map(String::as_str)));
        for (i, s) in self.strings.iter().enumerate() {
            assert_eq!(table.resolve(id(i)), Some(s.as_str()));
            assert_eq!(table.get(s), Some(id(i)));
        }
        assert_eq!(table.resolve(id(self.strings.len())), None);
    }
}

/// A continuous profiler: every period interns the same hot strings and a
/// few new label values, exports (checks every id and string), then
/// `clear()`s the table and `shrink_to(2 * steady)`. A few periods add a
/// burst of unique strings. Checked:
///
/// - steady periods allocate nothing, before and after a burst;
/// - after a burst, `clear` + `shrink_to` brings `memory_usage()` back
///   under twice the steady level, every time, and never higher than
///   after the first burst (no creep);
/// - refilling to the steady size after a shrink allocates at most what
///   the shrink released (here: nothing at all);
/// - ids and strings are right after every period.
#[test]
fn soak_periods_with_bursts() {
    let periods = scaled(2_000, 200, 12);
    let hot = scaled(500, 300, 40);
    let fresh = scaled(100, 60, 10);
    let burst = scaled(20_000, 4_000, 600);
    // The steady level is measured at the end of this period.
    let settle = scaled(5, 5, 2);
    let is_burst = |p: usize| p > settle && p.is_multiple_of(scaled(173, 41, 5));

    let hot_strings: Vec<String> = (0..hot)
        .map(|i| format!("service::module_{}::function_{i}", i % 37))
        .collect();
    let mut rng = Rng(11);
    let mut table = StringTable::new();
    let mut steady = 0;
    let mut start = table.memory_usage();
    let mut bursts = 0;
    let mut after_burst = Vec::new();
    for period in 0..periods {
        // Every string is new in its period: ids 1, 2, ... in order.
        let mut strings: Vec<String> = hot_strings.clone();
        strings.extend((0..fresh).map(|i| format!("label=value-{period}-{i}")));
        let burst_period = is_burst(period);
        if burst_period {
            bursts += 1;
            strings.extend((0..burst).map(|i| {
                let pad = "x".repeat(rng.below(80));
                format!("burst-{period}-{i}-{pad}")
            }));
        }
        for (i, s) in strings.iter().enumerate() {
            assert_eq!(table.intern(s), id(i + 1));
        }
        // Hits after the misses: the same ids.
        for (i, s) in hot_strings.iter().enumerate().step_by(7) {
            assert_eq!(table.intern(s), id(i + 1));
        }
        // Export: every id and string.
        assert_eq!(table.len(), strings.len() + 1);
        assert!(table.iter().skip(1).eq(strings.iter().map(String::as_str)));
        for (i, s) in strings.iter().enumerate() {
            assert_eq!(table.resolve(id(i + 1)), Some(s.as_str()));
            assert_eq!(table.get(s), Some(id(i + 1)));
        }

        let used = table.memory_usage();
        if period > settle && !burst_period {
            assert_eq!(used, start, "period {period}: a steady period allocated");
        }
        if period == settle {
            steady = used;
        }
        table.clear();
        assert_eq!(table.memory_usage(), used, "clear changed memory");
        if steady > 0 {
            table.shrink_to(2 * steady);
        }
        let shrunk = table.memory_usage();
        assert!(shrunk <= used, "shrink_to grew the table");
        if period >= settle {
            assert!(
                shrunk <= 2 * steady,
                "period {period}: {shrunk} bytes after shrink_to({})",
                2 * steady
            );
        }
        if burst_period {
            assert!(shrunk < used, "the burst's memory was not released");
            after_burst.push(shrunk);
        }
        start = shrunk;
        assert_eq!(table.len(), 1);
        assert_eq!(table.get(&hot_strings[0]), None);
    }
    assert!(bursts >= 2, "only {bursts} bursts");
    // No creep: no burst leaves more behind than the first.
    assert!(
        after_burst.iter().all(|&m| m <= after_burst[0]),
        "{after_burst:?}"
    );
}

/// The profiler pattern at several steady sizes: after a peak of `n`
/// strings, `clear` + `shrink_to(2 * steady)` (where `steady` is the
/// footprint of a new table filled with the steady strings) releases
/// memory, and refilling the steady strings allocates nothing: the refill
/// takes only memory the shrink kept, never any the shrink released.
#[test]
fn refill_after_shrink_allocates_nothing_within_max_bytes() {
    let n = scaled(30_000, 5_000, 300);
    let strings: Vec<String> = (0..n)
        .map(|i| format!("refill/{i:06}/name{}", "x".repeat(i % 40)))
        .collect();
    let mut table = StringTable::new();
    for s in &strings {
        table.intern(s);
    }
    let full = table.memory_usage();
    for divisor in [2, 3, 5, 10, 50] {
        let subset = &strings[..n / divisor];
        let mut fresh = StringTable::new();
        for s in subset {
            fresh.intern(s);
        }
        let steady = fresh.memory_usage();
        table.clear();
        table.shrink_to(2 * steady);
        let shrunk = table.memory_usage();
        assert!(shrunk <= (2 * steady).max(full), "{shrunk}");
        let mut model = Model::new();
        for s in subset {
            model.intern(&mut table, s);
        }
        model.check(&table);
        assert_eq!(
            table.memory_usage(),
            shrunk,
            "1/{divisor}: refilling {} strings after shrink_to({}) allocated",
            subset.len(),
            2 * steady
        );
        // Back to the peak for the next round: growth as usual.
        for s in &strings {
            table.intern(s);
        }
        assert_eq!(table.len(), n + 1);
    }
}

/// After `clear`, `shrink_to` gets under `max_bytes` (or to a new table's
/// footprint), and `shrink_to_fit` to exactly a new table's footprint.
#[test]
fn shrink_after_clear_reaches_the_target() {
    let new = StringTable::new().memory_usage();
    let n = scaled(50_000, 10_000, 400);
    let mut table = StringTable::new();
    for i in 0..n {
        table.intern(&format!("label-{i}-{}", "v".repeat(i % 50)));
    }
    // Plus a string with a chunk of its own.
    if !cfg!(miri) {
        table.intern(&"d".repeat(MAX_CHUNK_CAPACITY + 5));
    }
    let full = table.memory_usage();
    table.clear();
    for max_bytes in [full - 1, full / 2, full / 10, 3 * new, new + 1] {
        table.shrink_to(max_bytes);
        let m = table.memory_usage();
        assert!(m <= max_bytes.max(new), "shrink_to({max_bytes}): {m}");
        // The shrunk table fills to its size without allocating.
        table.intern("after");
        assert_eq!(table.memory_usage(), m);
        table.clear();
    }
    table.shrink_to_fit();
    assert_eq!(table.memory_usage(), new);
    table.shrink_to_fit();
    assert_eq!(table.memory_usage(), new);
    let mut model = Model::new();
    for i in 0..n.min(2_000) {
        model.intern(&mut table, &format!("again-{i}"));
    }
    model.check(&table);
}

/// `shrink_to` on a table that holds strings keeps every id resolving and
/// `get` working, releases only index and hash-table slack, and the table
/// keeps working afterwards.
#[test]
fn shrink_full_table_keeps_every_string() {
    let mut rng = Rng(7);
    let mut table = StringTable::new();
    let mut model = Model::new();
    let n = scaled(40_000, 8_000, 300);
    for i in 0..n {
        let s = match rng.below(10) {
            0 => format!("é日本-{i}-🦀"),
            1 if !cfg!(miri) && i % 500 == 1 => format!("{i}{}", "L".repeat(70_000)),
            2 => format!("{i}\0{}", "m".repeat(rng.below(3_000))),
            _ => format!("fn_{i}"),
        };
        model.intern(&mut table, &s);
    }
    for max_bytes in [usize::MAX, table.memory_usage(), 1 << 20, 0] {
        let before = table.memory_usage();
        table.shrink_to(max_bytes);
        assert!(table.memory_usage() <= before);
        model.check(&table);
    }
    // Slack was released: the index and hash table now fit the strings.
    let shrunk = table.memory_usage();
    table.shrink_to_fit();
    assert_eq!(
        table.memory_usage(),
        shrunk,
        "shrink_to(0) is shrink_to_fit"
    );
    // Growing again works, and old ids still resolve.
    for i in 0..scaled(5_000, 1_000, 100) {
        model.intern(&mut table, &format!("more-{i}"));
    }
    model.check(&table);
    table.shrink_to_fit();
    model.check(&table);
}

/// A table that was pre-sized or just grew has slack that `shrink_to_fit`
/// gives back while it holds strings.
#[test]
fn shrink_releases_index_and_table_slack() {
    let mut table = StringTable::with_capacity(scaled(100_000, 20_000, 2_000), 64 << 10);
    let mut model = Model::new();
    for i in 0..100 {
        model.intern(&mut table, &format!("s{i}"));
    }
    let before = table.memory_usage();
    table.shrink_to_fit();
    let after = table.memory_usage();
    assert!(
        before - after >= scaled(100_000, 20_000, 2_000) * 4,
        "{before} -> {after}"
    );
    model.check(&table);
    // Within max_bytes: nothing to do.
    table.shrink_to(after);
    assert_eq!(table.memory_usage(), after);
}

/// Under `Limits`, `shrink_to` keeps the table within them, loses nothing,
/// and the table refills up to the same limits afterwards.
#[test]
fn shrink_under_limits() {
    let sizes = [
        40_000,
        scaled(300_000, 300_000, 0),
        scaled(4 << 20, 1 << 20, 0),
    ];
    for max_bytes in sizes.into_iter().filter(|&b| b > 0) {
        let limits = Limits::new().max_bytes(max_bytes);
        let mut table = StringTable::with_limits(limits);
        let fill = |table: &mut StringTable, tag: &str| {
            let mut model = Model::new();
            let mut i = 0;
            loop {
                let s = format!("{tag}-{i}-{}", "p".repeat(i % 90));
                match table.try_intern(&s) {
                    Ok(got) => {
                        assert_eq!(got, id(model.strings.len()));
                        model.strings.push(s.clone());
                        model.ids.insert(s, got);
                    }
                    Err(e) => {
                        assert!(matches!(e.kind(), ErrorKind::MemoryLimit), "{e}");
                        break;
                    }
                }
                i += 1;
            }
            model
        };
        let model = fill(&mut table, "a");
        let strings = model.strings.len();
        assert!(table.memory_usage() <= max_bytes);
        table.shrink_to_fit();
        assert!(table.memory_usage() <= max_bytes);
        model.check(&table);
        table.shrink_to(max_bytes / 2);
        model.check(&table);
        table.clear();
        table.shrink_to(max_bytes / 4);
        assert!(table.memory_usage() <= max_bytes);
        assert_eq!(table.limits(), limits);
        let model = fill(&mut table, "b");
        model.check(&table);
        assert!(table.memory_usage() <= max_bytes);
        // About as many strings fit after the shrink as before.
        assert!(
            model.strings.len() * 10 >= strings * 9,
            "{} strings fit after the shrink, {strings} before",
            model.strings.len()
        );
        table.clear();
        table.shrink_to_fit();
        assert!(table.memory_usage() <= max_bytes);
    }
}

/// Tables that start with less than a new table's sizes never grow in a
/// shrink, and `shrink_to` on a new table does nothing.
#[test]
fn shrink_never_grows() {
    let tables = [
        StringTable::new(),
        StringTable::with_capacity(0, 0),
        StringTable::with_limits(Limits::new().max_bytes(0)),
        StringTable::with_limits(Limits::new().max_bytes(10_000)),
    ];
    for mut table in tables {
        let m = table.memory_usage();
        table.shrink_to_fit();
        assert_eq!(table.memory_usage(), m);
        // The table limited to its empty footprint takes no strings.
        let _ = table.try_intern("one");
        let _ = table.try_intern(&"two".repeat(100));
        let m = table.memory_usage();
        table.shrink_to_fit();
        assert!(table.memory_usage() <= m);
        if table.len() > 1 {
            assert_eq!(table.get("one").map(StringId::index), Some(1));
        }
        table.clear();
        let m = table.memory_usage();
        table.shrink_to_fit();
        assert!(table.memory_usage() <= m);
        if let Ok(three) = table.try_intern("three") {
            assert_eq!(three.index(), 1);
        }
    }
}
