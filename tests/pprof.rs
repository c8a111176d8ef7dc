//! The pprof export path: what `examples/pprof.rs` and
//! `examples/pprof_rewrite.rs` write, decoded with prost and checked.

#[allow(dead_code)] // the tests use most of it, not all
#[path = "../examples/common/mod.rs"]
pub mod common;

use std::collections::HashSet;

use common::proto::{Profile, Sample, try_for_each_string_index};
use common::read::{self, ReadError};
use common::workload::{self, Config};
use prost::Message;

const WORDPRESS: &[u8] = include_bytes!("data/wordpress.pprof");
/// A CPU profile Go's runtime wrote (gzip'd; `tests/data/README.md`).
const GO_CPU: &[u8] = include_bytes!("data/go-cpu.pprof");

/// Every index in range, `""` first, no string twice.
fn check_string_table(profile: &Profile) {
    assert_eq!(profile.string_table.first().map(String::as_str), Some(""));
    let len = profile.string_table.len();
    try_for_each_string_index(profile, |&i| {
        if (0..len as i64).contains(&i) {
            Ok(())
        } else {
            Err(i)
        }
    })
    .unwrap();
    let mut seen = HashSet::new();
    for s in &profile.string_table {
        assert!(seen.insert(s.as_str()), "{s:?} appears twice");
    }
}

/// Every string but `""` is referenced.
fn check_all_referenced(profile: &Profile) {
    let mut used = vec![false; profile.string_table.len()];
    used[0] = true;
    try_for_each_string_index(profile, |&i| {
        used[i as usize] = true;
        Ok::<(), ()>(())
    })
    .unwrap();
    let unused: Vec<_> = (0..used.len()).filter(|&i| !used[i]).collect();
    assert!(unused.is_empty(), "unreferenced strings at {unused:?}");
}

fn label<'a>(p: &'a Profile, s: &Sample, key: &str) -> Option<&'a str> {
    let l = s
        .label
        .iter()
        .find(|l| p.string_table[l.key as usize] == key)?;
    Some(&p.string_table[l.str as usize])
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn simulated_profile_round_trips_through_prost() {
    let sim = workload::simulate(&Config::SMALL);
    let bytes = common::encode(&sim.profile, sim.table.iter());
    let decoded = Profile::decode(bytes.as_slice()).unwrap();

    // The string table is the StringTable, in id order.
    let ids_in_order: Vec<&str> = sim.table.iter().collect();
    assert_eq!(decoded.string_table, ids_in_order);
    check_string_table(&decoded);
    check_all_referenced(&decoded);
    assert_eq!(read::read_profile(&bytes).unwrap(), decoded);

    // Everything else (values, labels, locations, ...) is what was built.
    let without_strings = Profile {
        string_table: Vec::new(),
        ..decoded.clone()
    };
    assert_eq!(without_strings, sim.profile);

    // And means what the profiler meant.
    let st = |i: i64| decoded.string_table[i as usize].as_str();
    let types: Vec<_> = decoded
        .sample_type
        .iter()
        .map(|t| (st(t.r#type), st(t.unit)))
        .collect();
    assert_eq!(
        types,
        [
            ("samples", "count"),
            ("cpu-time", "nanoseconds"),
            ("wall-time", "nanoseconds")
        ]
    );
    assert_eq!(st(decoded.default_sample_type), "cpu-time");
    assert!(st(decoded.comment[0]).starts_with("strtab examples/pprof"));
    assert_eq!(decoded.period, workload::PERIOD_NANOS);
    let total: i64 = decoded.sample.iter().map(|s| s.value[0]).sum();
    assert_eq!(total, Config::SMALL.samples as i64);
    for s in &decoded.sample {
        assert_eq!(s.value.len(), 3);
        assert!(s.value[1] <= s.value[2], "cpu time exceeds wall time");
        let thread = label(&decoded, s, "thread name").expect("every sample has a thread");
        let endpoint = label(&decoded, s, "trace endpoint");
        assert_eq!(
            thread.starts_with("tokio-runtime-worker"),
            endpoint.is_some()
        );
        assert!(endpoint.is_none_or(|e| e.contains(" /")), "{endpoint:?}");
    }
    let names: HashSet<&str> = decoded.function.iter().map(|f| st(f.name)).collect();
    assert!(names.contains("start_thread"));
    assert!(names.contains("tokio::runtime::scheduler::multi_thread::worker::run"));
    assert!(
        sim.intern_hits() * 10 > sim.intern_calls * 9,
        "most interns are hits"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn simulation_is_deterministic() {
    let config = Config {
        samples: 300,
        ..Config::SMALL
    };
    let a = workload::simulate(&config);
    let b = workload::simulate(&config);
    assert_eq!(
        common::encode(&a.profile, a.table.iter()),
        common::encode(&b.profile, b.table.into_resolver().iter())
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn rewritten_wordpress_is_the_same_profile() {
    let original = read::read_profile(WORDPRESS).unwrap();
    check_string_table(&original);
    assert_eq!(original.sample.len(), 3_330);

    let (renumbered, table) = common::reintern(original.clone()).unwrap();
    let bytes = common::encode(&renumbered, table.iter());
    let rewritten = read::read_profile(&bytes).unwrap();
    assert_eq!(rewritten.string_table, table.iter().collect::<Vec<_>>());
    check_string_table(&rewritten);
    check_all_referenced(&rewritten);

    // Same samples, locations, functions, ..., resolved to the same strings.
    let (a, b) = (
        common::resolve(&original).unwrap(),
        common::resolve(&rewritten).unwrap(),
    );
    assert_eq!(a.shape.sample, b.shape.sample);
    assert_eq!(a.shape.location, b.shape.location);
    assert_eq!(a.shape.function, b.shape.function);
    assert_eq!(a.strings, b.strings);
    assert_eq!(a, b);
    let name = |p: &Profile, i: usize| p.string_table[p.function[i].name as usize].clone();
    for i in 0..original.function.len() {
        assert_eq!(name(&original, i), name(&rewritten, i));
    }

    // The whole path, gzip included, gives the same bytes.
    let gz = gzip(WORDPRESS);
    let r = common::rewrite(&gz).unwrap();
    assert_eq!(r.encoded, bytes);
    assert_eq!(r.strings_before, 1_059);
    assert_eq!(r.strings_after, table.len());
    assert_eq!(r.input_decompressed_bytes, WORDPRESS.len());
    // Rewriting is idempotent.
    assert_eq!(common::rewrite(&r.encoded).unwrap().encoded, r.encoded);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn rewrite_merges_duplicates_and_drops_unreferenced_strings() {
    let mut p = read::read_profile(WORDPRESS).unwrap();
    let n = p.string_table.len();
    // Point every function name at a fresh duplicate of its string, and
    // add strings nobody references.
    for f in &mut p.function {
        p.string_table.push(p.string_table[f.name as usize].clone());
        f.name = p.string_table.len() as i64 - 1;
    }
    p.string_table
        .extend(["unused 1".to_string(), "unused 2".to_string()]);
    assert!(p.string_table.len() > n + 2);

    let bytes = p.encode_to_vec();
    let r = common::rewrite(&bytes).unwrap();
    let rewritten = read::read_profile(&r.encoded).unwrap();
    check_string_table(&rewritten);
    check_all_referenced(&rewritten);
    assert!(rewritten.string_table.len() <= n);
    assert!(
        !rewritten
            .string_table
            .iter()
            .any(|s| s.starts_with("unused "))
    );
    assert_eq!(
        common::resolve(&p).unwrap(),
        common::resolve(&rewritten).unwrap()
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn simulated_profile_survives_rewrite() {
    let sim = workload::simulate(&Config {
        samples: 500,
        ..Config::SMALL
    });
    let bytes = common::encode(&sim.profile, sim.table.iter());
    let r = common::rewrite(&bytes).unwrap();
    // Nothing to merge or drop; only the order may change.
    assert_eq!(r.strings_after, sim.table.len());
    let (a, b) = (
        read::read_profile(&bytes).unwrap(),
        read::read_profile(&r.encoded).unwrap(),
    );
    assert_eq!(common::resolve(&a).unwrap(), common::resolve(&b).unwrap());
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// The error `rewrite` gives, which must be a clean one-liner.
fn rewrite_error(bytes: &[u8]) -> String {
    let e = common::rewrite(bytes).expect_err("bad input must be rejected");
    let message = e.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert_eq!(
        read::read_profile(bytes)
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        message
    );
    message
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn bad_input_gives_clear_errors() {
    assert_eq!(rewrite_error(b""), "the profile is empty");
    assert_eq!(rewrite_error(&gzip(b"")), "the profile is empty");

    // Truncated, raw and gzipped.
    let m = rewrite_error(&WORDPRESS[..WORDPRESS.len() / 2]);
    assert!(m.starts_with("not a valid pprof profile: "), "{m}");
    let gz = gzip(WORDPRESS);
    let m = rewrite_error(&gz[..gz.len() / 2]);
    assert!(m.starts_with("corrupt or truncated gzip data"), "{m}");

    // Garbage.
    let m = rewrite_error(b"\xff\xfe\xfd garbage \x00\x01\x02");
    assert!(m.starts_with("not a valid pprof profile"), "{m}");
    let m = rewrite_error(&gzip(b"not a profile"));
    assert!(m.starts_with("not a valid pprof profile"), "{m}");
    let m = rewrite_error(b"\x1f\x8b\x08\x00garbage");
    assert!(m.starts_with("corrupt or truncated gzip data"), "{m}");

    // A string index out of range.
    let mut p = read::read_profile(WORDPRESS).unwrap();
    p.function[7].filename = p.string_table.len() as i64;
    assert_eq!(
        rewrite_error(&p.encode_to_vec()),
        "not a valid pprof profile: function[7].filename is string index 1059, \
         but string_table has only 1059 strings"
    );
    let mut p = read::read_profile(WORDPRESS).unwrap();
    p.sample[2].label.push(common::proto::Label {
        key: -1,
        ..Default::default()
    });
    let m = rewrite_error(&p.encode_to_vec());
    assert!(
        m.contains("sample[2].label[") && m.contains("string index -1"),
        "{m}"
    );

    // A string that is not UTF-8.
    let mut bytes = WORDPRESS.to_vec();
    let at = bytes.windows(10).position(|w| w == b"add_filter").unwrap();
    bytes[at] = 0xff;
    let m = rewrite_error(&bytes);
    assert!(m.contains("UTF-8"), "{m}");

    // string_table[0] must be "".
    let mut p = read::read_profile(WORDPRESS).unwrap();
    p.string_table[0] = "x".into();
    assert_eq!(
        rewrite_error(&p.encode_to_vec()),
        "not a valid pprof profile: string_table[0] is \"x\", it must be \"\""
    );
    p.string_table.clear();
    assert_eq!(
        rewrite_error(&p.encode_to_vec()),
        "not a valid pprof profile: it has no string_table"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn decompression_is_capped() {
    let bomb = gzip(&vec![0u8; 1 << 20]);
    let e = read::read_profile_with_limit(&bomb, 64 << 10).unwrap_err();
    assert!(
        matches!(e, ReadError::TooLarge { limit } if limit == 64 << 10),
        "{e}"
    );
    // Under the cap it decompresses and decodes.
    assert!(read::read_profile_with_limit(&gzip(WORDPRESS), 1 << 20).is_ok());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn output_is_never_partial() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pprof-atomic");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.pb.gz");
    let _ = std::fs::remove_file(&out);

    let e = common::write_atomically(&out, |file| {
        std::io::Write::write_all(file, b"half a profile")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "disk full");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing left behind"
    );

    let size = common::write_gzip_atomically(&out, WORDPRESS).unwrap();
    let written = std::fs::read(&out).unwrap();
    assert_eq!(written.len() as u64, size);
    assert_eq!(
        read::read_profile(&written).unwrap(),
        read::read_profile(WORDPRESS).unwrap()
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary file left"
    );
}

/// The real fixture's 1,059 strings (all distinct, `""` first), interned
/// twice: the first pass numbers them 0..1059 in order, the second returns
/// the same ids, and the table iterates in exactly the profile's order.
#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn wordpress_strings_intern_twice() {
    let strings = read::read_profile(WORDPRESS).unwrap().string_table;
    assert_eq!(strings.len(), 1059);
    let mut table = strtab::StringTable::new();
    for round in 0..2 {
        for (i, s) in strings.iter().enumerate() {
            assert_eq!(table.intern(s).index(), i, "round {round}: {s:?}");
        }
        assert_eq!(table.len(), strings.len());
    }
    assert!(table.iter().eq(strings.iter().map(String::as_str)));
    let resolver = table.into_resolver();
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(
            resolver.resolve(strtab::StringId::from_u32(i as u32)),
            Some(s.as_str())
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn go_profile_rewrites_to_the_same_profile() {
    let original = read::read_profile(GO_CPU).unwrap();
    check_string_table(&original);
    assert_eq!(original.sample.len(), 9_445);
    let r = common::rewrite(GO_CPU).unwrap();
    let rewritten = read::read_profile(&r.encoded).unwrap();
    check_string_table(&rewritten);
    check_all_referenced(&rewritten);
    assert_eq!(
        common::resolve(&original).unwrap(),
        common::resolve(&rewritten).unwrap()
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "file I/O and prost/flate2 decoding, outside strtab's unsafe code"
)]
fn go_profile_samples_batch_like_one_by_one() {
    // A sample's strings as a profiler interns them: the mapping's file
    // per location, name, system name and file per line, then the labels,
    // each a slice of the decoded string table, so a string repeated in a
    // sample is the same slice (the batch's recent-slice cache answers
    // it).
    let p = read::read_profile(GO_CPU).unwrap();
    let s = |i: i64| p.string_table[i as usize].as_str();
    let by_id = |id: u64| p.location.iter().find(|l| l.id == id).unwrap();
    let function = |id: u64| p.function.iter().find(|f| f.id == id).unwrap();
    let mapping = |id: u64| p.mapping.iter().find(|m| m.id == id).unwrap();
    let mut one = strtab::StringTable::new();
    let mut batch = strtab::StringTable::new();
    let (mut total, mut repeated) = (0, 0);
    for sample in &p.sample {
        let mut calls: Vec<&str> = Vec::new();
        for &id in &sample.location_id {
            let loc = by_id(id);
            if loc.mapping_id != 0 {
                calls.push(s(mapping(loc.mapping_id).filename));
            }
            for line in &loc.line {
                let f = function(line.function_id);
                calls.extend([s(f.name), s(f.system_name), s(f.filename)]);
            }
        }
        for label in &sample.label {
            calls.push(s(label.key));
            if label.str != 0 {
                calls.push(s(label.str));
            }
        }
        total += calls.len();
        repeated += (1..calls.len())
            .filter(|&i| calls[..i].iter().any(|c| core::ptr::eq(*c, calls[i])))
            .count();
        let expected: Vec<strtab::StringId> = calls.iter().map(|c| one.intern(c)).collect();
        let mut ids = vec![strtab::StringId::EMPTY; calls.len()];
        batch.intern_batch(&calls, &mut ids);
        assert_eq!(ids, expected);
    }
    // More than half the calls repeat a slice of their own sample.
    assert_eq!(total, 477_381);
    assert!(repeated * 2 > total, "{repeated} repeats in {total} calls");
    assert!(batch.iter().eq(one.iter()));
}
