//! A single-shot driver for instruction counts: runs one workload once for
//! one implementation, for `valgrind --tool=callgrind` (criterion's
//! repetitions would only add noise under valgrind).
//!
//! ```text
//! cargo bench --bench profile --no-run      # prints the binary's path
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*workload*' \
//!     target/release/deps/profile-HASH stream strtab
//! ```
//!
//! Dimensions: workload (`stream`, `hash_only`, `fill`, `fill-hint`,
//! `get-hit`, `get-miss`, `resolve`, `iterate`, `wordpress`) x
//! implementation (the labels of `intern.rs`, all with foldhash).

use std::hash::BuildHasher;
use std::hint::black_box;

#[macro_use]
mod setup;

use setup::Interner;

#[inline(never)]
fn workload_intern<T: Interner>(t: &mut T, input: &[&str]) {
    for s in input {
        black_box(t.intern(s));
    }
}

#[inline(never)]
fn workload_get<T: Interner>(t: &mut T, input: &[&str]) {
    for s in input {
        black_box(t.get(s));
    }
}

#[inline(never)]
fn workload_resolve<T: Interner>(t: &T, ids: &[u32], buf: &mut Vec<u8>) {
    for &id in ids {
        let s = t.resolve(id);
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    }
}

#[inline(never)]
fn workload_iterate<T: Interner>(t: &T, buf: &mut Vec<u8>) {
    t.for_each_str(|s| {
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    });
}

#[inline(never)]
fn workload_hash(input: &[&str]) {
    let h = setup::Fold::default();
    for s in input {
        black_box(h.hash_one(*s));
    }
}

fn run<T: Interner>(name: &str, workload: &str) {
    let strings = setup::unique_strings(setup::UNIQUE, setup::SEED);
    let uniq: Vec<&str> = strings.iter().map(String::as_str).collect();
    let stream = setup::skewed_stream(&strings, setup::STREAM_LEN, setup::SEED);
    let wordpress = setup::wordpress_strings();
    let wordpress: Vec<&str> = wordpress.iter().map(String::as_str).collect();
    let mut buf = Vec::with_capacity(setup::total_bytes(&stream) + 4 * stream.len());
    let start = std::time::Instant::now();
    match workload {
        "stream" => workload_intern(&mut T::new(), &stream),
        "hash_only" => workload_hash(&stream),
        "fill" => workload_intern(&mut T::new(), &uniq),
        "fill-hint" => workload_intern(
            &mut T::with_capacity(uniq.len() + 1, setup::total_bytes(&uniq)),
            &uniq,
        ),
        "wordpress" => workload_intern(&mut T::new(), &wordpress),
        "get-hit" | "get-miss" => {
            let mut t = T::new();
            uniq.iter().for_each(|s| {
                t.intern(s);
            });
            let input = if workload == "get-hit" {
                setup::shuffled(&strings, setup::SEED)
            } else {
                let others =
                    setup::unique_strings(setup::UNIQUE + setup::UNIQUE / 2, setup::MISS_SEED);
                let v: Vec<&str> = others
                    .iter()
                    .map(String::as_str)
                    .filter(|s| t.get(s).is_none())
                    .collect();
                return workload_get(&mut t, &v);
            };
            workload_get(&mut t, &input);
        }
        "resolve" => {
            let mut t = T::new();
            let ids: Vec<u32> = stream.iter().map(|s| t.intern(s)).collect();
            workload_resolve(&t, &ids, &mut buf);
        }
        "iterate" => {
            let mut t = T::new();
            uniq.iter().for_each(|s| {
                t.intern(s);
            });
            workload_iterate(&t, &mut buf);
        }
        other => panic!("unknown workload {other}"),
    }
    black_box(&buf);
    // Includes building the table for the read-only workloads.
    eprintln!("ran {workload} on {name} in {:?}", start.elapsed());
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (workload, imp) = match args.as_slice() {
        [w, i] => (w.as_str(), i.as_str()),
        _ => {
            // `cargo bench` runs every bench target: do nothing by default.
            eprintln!("usage: profile WORKLOAD IMPL (see the module docs)");
            return;
        }
    };
    let mut found = false;
    let mut pick = |name: &str, f: &dyn Fn()| {
        if name == imp {
            found = true;
            f();
        }
    };
    macro_rules! one {
        ($t:ty, $name:expr) => {
            pick($name, &|| run::<$t>($name, workload))
        };
    }
    use setup::{Blaz, Fold, IdxSet, Lasso, Naive, SiBuffer, SiString, Strtab};
    one!(Strtab<Fold>, "strtab");
    one!(Lasso<Fold>, "lasso");
    one!(SiString<Fold>, "si-string");
    one!(SiBuffer<Fold>, "si-buffer");
    one!(Blaz<Fold>, "blazinterner");
    one!(IdxSet<Fold>, "indexset");
    one!(Naive<Fold>, "naive-hashmap");
    assert!(found, "unknown implementation {imp}");
}
