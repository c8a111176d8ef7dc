//! The burst scenario of the memory report, shared by `examples/memory.rs`
//! (glibc) and `memory-allocators/` (jemalloc, mimalloc).
//!
//! A continuous profiler keeps one table: every period interns 5,000 hot
//! strings and 1,000 new label values, exports, then `clear()`s the table
//! and (with `shrink`) calls `shrink_to(2 * steady)`, where `steady` is
//! the smallest `memory_usage()` at export over the last 8 periods. After
//! 20 such periods, one period adds a burst of unique strings; then 20
//! more steady periods. Process RSS and `memory_usage()` are taken before
//! the burst, at its peak, right after its `clear` (+ `shrink_to`), after
//! the allocator's own release call (`trim`), and after the 20 later
//! periods.

use std::collections::VecDeque;
use std::hint::black_box;

use strtab::StringTable;

/// Hot strings interned every period.
pub(crate) const HOT: usize = 5_000;
/// New label values per period.
pub(crate) const LABELS: usize = 1_000;
/// Steady periods before and after the burst.
pub(crate) const PERIODS: usize = 20;

/// Resident set size in bytes (VmRSS), 0 where /proc is missing.
pub(crate) fn rss() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<usize>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}

/// Process RSS and the table's `memory_usage()` at one point.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Point {
    pub(crate) rss: usize,
    pub(crate) usage: usize,
}

/// The measurements of one run.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Burst {
    pub(crate) before: Point,
    pub(crate) peak: Point,
    pub(crate) after_clear: Point,
    pub(crate) after_trim: Point,
    pub(crate) later: Point,
}

struct Profiler {
    table: StringTable,
    hot: Vec<String>,
    recent: VecDeque<usize>,
    shrink: bool,
}

impl Profiler {
    /// One period: intern, export (`at_peak` sees the table then), clear
    /// (and shrink).
    fn period(&mut self, period: usize, burst: usize, at_peak: &mut dyn FnMut(&StringTable)) {
        for s in &self.hot {
            black_box(self.table.intern(s));
        }
        for i in 0..LABELS {
            black_box(
                self.table
                    .intern(&format!("request_id=req-{period:06}-{i:05}")),
            );
        }
        for i in 0..burst {
            let pad = "x".repeat(i % 40);
            black_box(self.table.intern(&format!("burst/{period}/{i:08}/{pad}")));
        }
        // Export: walk the strings in id order, as an encoder would.
        black_box(self.table.iter().map(str::len).sum::<usize>());
        at_peak(&self.table);
        self.recent.push_back(self.table.memory_usage());
        if self.recent.len() > 8 {
            self.recent.pop_front();
        }
        let steady = *self.recent.iter().min().expect("a period");
        self.table.clear();
        if self.shrink {
            self.table.shrink_to(2 * steady);
        }
    }
}

/// Runs the scenario with a burst of `burst` strings; `trim` is the
/// allocator's call to return free memory to the OS.
pub(crate) fn run(burst: usize, shrink: bool, trim: &dyn Fn()) -> Burst {
    let mut p = Profiler {
        table: StringTable::new(),
        hot: (0..HOT)
            .map(|i| format!("service_{}::module_{}::function_{i}", i % 13, i % 97))
            .collect(),
        recent: VecDeque::new(),
        shrink,
    };
    let point = |t: &StringTable| Point {
        rss: rss(),
        usage: t.memory_usage(),
    };
    let mut out = Burst::default();
    let mut steady_usage = 0;
    for period in 0..PERIODS {
        p.period(period, 0, &mut |t| steady_usage = t.memory_usage());
    }
    out.before = Point {
        rss: rss(),
        usage: steady_usage,
    };
    let mut peak = Point::default();
    p.period(PERIODS, burst, &mut |t| peak = point(t));
    out.peak = peak;
    out.after_clear = point(&p.table);
    trim();
    out.after_trim = point(&p.table);
    let mut later = 0;
    for period in PERIODS + 1..2 * PERIODS + 1 {
        p.period(period, 0, &mut |t| later = t.memory_usage());
    }
    out.later = Point {
        rss: rss(),
        usage: later,
    };
    out
}

/// `bytes` in MiB, two decimals.
pub(crate) fn mib(bytes: usize) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The markdown table header for [`row`].
pub(crate) const HEADER: &str = "| allocator | burst | after export | memory_usage() before / peak / after clear / 20 periods later | RSS before burst | RSS at peak | RSS after clear | RSS after trim | RSS 20 periods later |\n|---|---:|---|---|---:|---:|---:|---:|---:|";

/// One markdown row.
pub(crate) fn row(allocator: &str, burst: usize, shrink: bool, b: &Burst) -> String {
    format!(
        "| {allocator} | {burst} | {} | {} / {} / {} / {} | {} | {} | {} | {} | {} |",
        if shrink {
            "`clear` + `shrink_to`"
        } else {
            "`clear` only"
        },
        mib(b.before.usage),
        mib(b.peak.usage),
        mib(b.after_clear.usage),
        mib(b.later.usage),
        mib(b.before.rss),
        mib(b.peak.rss),
        mib(b.after_clear.rss),
        mib(b.after_trim.rss),
        mib(b.later.rss),
    )
}
