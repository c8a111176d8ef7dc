#!/usr/bin/env python3
"""Markdown tables from criterion's saved results.

    python3 benches/report.py [CRITERION_DIR]   # default: target/criterion

For every benchmark group and dimension (the part of the id before the
implementation), prints each implementation's median time and, in the
style of hyperfine's "Relative" column, that time divided by strtab's
(so > 1.00 means strtab is faster).
"""
import json
import os
import sys
from collections import defaultdict

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")


def fmt(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            return f"{ns / div:.3g} {unit}" if ns / div < 100 else f"{ns / div:.0f} {unit}"
    return f"{ns:.3g} ns"


tables = defaultdict(dict)
throughput = {}
for dirpath, _, files in os.walk(root):
    if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
        continue
    bench = json.load(open(os.path.join(dirpath, "benchmark.json")))
    est = json.load(open(os.path.join(dirpath, "estimates.json")))
    group, func = bench["group_id"], bench["function_id"]
    dim, _, imp = func.rpartition("/")
    if group == "stream" and not dim:
        dim = "intern"  # the hash-only floor sits beside the intern runs
    tables[(group, dim)][imp] = (est["median"]["point_estimate"],
                                 est["median"]["confidence_interval"]["lower_bound"],
                                 est["median"]["confidence_interval"]["upper_bound"])
    throughput[(group, dim)] = bench.get("throughput")

ORDER = ["wordpress", "stream", "stream_default_hasher", "fill", "get", "resolve", "encode"]
for key in sorted(tables, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[1])):
    group, dim = key
    rows = tables[key]
    base_name = next((n for n in ("strtab", "strtab (foldhash)", "strtab_direct") if n in rows), None)
    base = rows[base_name][0] if base_name else None
    tp = throughput.get(key) or {}
    elements = (tp.get("ElementsAndBytes") or {}).get("elements")
    print(f"#### `{group}/{dim}`" if dim else f"#### `{group}`")
    print()
    print("| implementation | median time [95% CI] | per element | Relative (time / strtab) |")
    print("|---|---:|---:|---:|")
    for imp, (t, lo, hi) in sorted(rows.items(), key=lambda r: r[1][0]):
        rel = f"{t / base:.2f}" if base else "—"
        if imp == base_name:
            rel = "**1.00**"
        per = fmt(t / elements) if elements else ""
        print(f"| {imp} | {fmt(t)} [{fmt(lo)}, {fmt(hi)}] | {per} | {rel} |")
    # The IndexSet and naive HashMap tables are baselines, not peers.
    peers = {k: v[0] for k, v in rows.items()
             if k not in (base_name, "hash_only", "indexset", "naive-hashmap")}
    if base and peers:
        best = min(peers, key=peers.get)
        print()
        print(f"Best peer: {best}; best peer / strtab = **{peers[best] / base:.2f}x**.")
    if "hash_only" in rows and base:
        print(f"strtab / hash-only floor = **{base / rows['hash_only'][0]:.2f}x**.")
    print()
