#!/usr/bin/env python3
"""Instruction counts per operation for every workload x implementation.

    python3 benches/callgrind.py [-w WORKLOAD,...] [-i IMPL,...] [-j JOBS]
                                 [--out-dir DIR] [--binary BIN]

Builds the single-shot driver (`cargo bench --bench profile --no-run`),
runs each pair once under

    valgrind --tool=callgrind --toggle-collect='*workload*' \
        --callgrind-out-file=DIR/WORKLOAD.IMPL.out PROFILE-BIN WORKLOAD IMPL

reads the total Ir from the output file's `totals:` line (only the
driver's `workload_*` functions and their callees are counted), divides
it by the operation count the driver prints on stderr (`ops=N`), and
prints markdown: a table with one row per workload and one column per
implementation (Ir/op; the best peer's cell in bold, then strtab / best
peer, <= 1.00 meaning strtab executes no more instructions; the peers are
lasso, string-interner's two backends and blazinterner, the `indexset`
and `naive-hashmap` baselines are shown but not counted as peers), the
`intern_batch` vs plain-loop comparison of the replay workloads, and the
hash-only floor. Python 3 standard library only; needs valgrind.
`-w replay-pprof,replay-pprof-batch,replay-pprof-loop` with
`STRTAB_PPROF=FILE` adds a profile of your own (not in the default
matrix).

Runtime: 6.2 minutes for the whole matrix (82 runs) with `-j 1` on 2
vCPUs shared with other builds. No workload is too slow for valgrind; the
slowest runs take 10 to 16 s: `replay-sim` (the simulated profile is
generated under valgrind before the measured part), `resolve` (1M interns
to build the table first) and blazinterner's. Counts move by less than
0.01% between runs (the hasher is randomly seeded); wall-clock effects
that add no instructions (see benches/README.md) are invisible here.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import time

IMPLS = ["strtab", "lasso", "si-string", "si-buffer", "blazinterner", "indexset", "naive-hashmap"]
# Shown for reference, not peers (issue 9: "keep the IndexSet and naive
# baselines in the tables").
BASELINES = ("indexset", "naive-hashmap")
# Compared across every implementation, in table order.
WORKLOADS = [
    "stream", "fill", "fill-hint", "get-hit", "get-miss", "resolve", "iterate",
    "wordpress", "wordpress-reintern", "replay-wordpress", "replay-go", "replay-sim",
]
# One thread of the concurrent benchmark: StringTable against the
# concurrent tables used alone (issue 10: one thread using
# SharedStringTable alone), with their own implementations.
THREAD = ["thread-stream"]
THREAD_IMPLS = ["strtab", "strtab-shared", "lasso-threaded", "blazinterner"]
# strtab only: intern_batch per sample and its plain-loop baseline.
BATCH = [
    "replay-wordpress-batch", "replay-wordpress-loop", "replay-go-batch", "replay-go-loop",
    "replay-sim-batch", "replay-sim-loop",
]
# No table: the implementation argument is ignored, run once.
FLOOR = ["hash_only", "hash_bytes"]
ALL = WORKLOADS + THREAD + BATCH + FLOOR
# Opt-in (not in the default matrix): the pprof file named by
# STRTAB_PPROF, replayed across every implementation, and strtab's batch
# against its plain loop on it.
PPROF = ["replay-pprof"]
PPROF_BATCH = ["replay-pprof-batch", "replay-pprof-loop"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build():
    """Builds the profile bench and returns its executable's path."""
    out = subprocess.run(
        ["cargo", "bench", "--bench", "profile", "--no-run", "--message-format=json"],
        cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if (msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "profile"
                and msg.get("executable")):
            return msg["executable"]
    sys.exit("callgrind.py: cargo did not report the profile bench's executable")


def run_one(binary, out_dir, workload, impl):
    """One callgrind run; returns (workload, impl, Ir, ops, seconds)."""
    out_file = os.path.join(out_dir, f"{workload}.{impl}.out")
    start = time.monotonic()
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--toggle-collect=*workload*",
         f"--callgrind-out-file={out_file}", binary, workload, impl],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    ops = re.search(r"^ops=(\d+)$", proc.stderr, re.M)
    if proc.returncode != 0 or not ops:
        sys.exit(f"callgrind.py: {workload} {impl} failed:\n{proc.stderr[-2000:]}")
    ir = None
    with open(out_file) as f:
        for line in f:
            if line.startswith("totals:") or (ir is None and line.startswith("summary:")):
                ir = int(line.split()[1])
    if ir is None:
        sys.exit(f"callgrind.py: no totals in {out_file}")
    return workload, impl, ir, int(ops.group(1)), seconds


def fmt(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-w", "--workloads", default=",".join(ALL),
                    help="comma-separated workloads (default: all): " + ", ".join(ALL)
                    + "; also, with STRTAB_PPROF=FILE: " + ", ".join(PPROF + PPROF_BATCH))
    ap.add_argument("-i", "--impls", default=",".join(IMPLS),
                    help="comma-separated implementations (default: all): " + ", ".join(IMPLS))
    ap.add_argument("-j", "--jobs", type=int, default=1, help="parallel valgrind runs (default 1)")
    ap.add_argument("--out-dir", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "callgrind"),
        help="where the callgrind.out files go (default: target/callgrind)")
    ap.add_argument("--binary", metavar="BIN",
                    help="use this profile binary instead of building one")
    args = ap.parse_args()
    workloads = [w for w in args.workloads.split(",") if w]
    impls = [i for i in args.impls.split(",") if i]
    for w in workloads:
        if w not in ALL + PPROF + PPROF_BATCH:
            ap.error(f"unknown workload {w}")
        if w in PPROF + PPROF_BATCH and "STRTAB_PPROF" not in os.environ:
            ap.error(f"{w} replays the pprof file named by STRTAB_PPROF, which is not set")
    for i in impls:
        if i not in IMPLS + THREAD_IMPLS:
            ap.error(f"unknown implementation {i}")

    binary = args.binary or build()
    os.makedirs(args.out_dir, exist_ok=True)
    runs = []
    for w in workloads:
        if w in WORKLOADS + PPROF:
            runs += [(w, i) for i in impls if i in IMPLS]
        elif w in THREAD:
            runs += [(w, i) for i in THREAD_IMPLS]
        elif "strtab" in impls or w in FLOOR:
            runs.append((w, "strtab"))

    results = {}
    begin = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_one, binary, args.out_dir, w, i) for w, i in runs]
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            w, i, ir, ops, secs = fut.result()
            results[(w, i)] = ir / ops
            print(f"[{n}/{len(runs)}] {w} {i}: {ir} Ir / {ops} ops = {ir / ops:.1f} "
                  f"({secs:.0f} s)", file=sys.stderr)
    elapsed = time.monotonic() - begin

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True).stdout.strip()
    except OSError:
        commit = "?"
    print(f"Instructions per operation (callgrind Ir / ops), commit {commit}, "
          f"{datetime.date.today().isoformat()}, {len(runs)} runs in {elapsed / 60:.1f} min.\n")

    rows = [w for w in workloads if w in WORKLOADS + PPROF]
    impls = [i for i in impls if i in IMPLS]
    if rows:
        # The peers; the IndexSet and naive HashMap tables are
        # baselines, shown but not competed against.
        peers = [i for i in impls if i not in ("strtab",) + BASELINES]
        head = impls + (["best peer", "strtab / best"] if "strtab" in impls and peers else [])
        print("| workload | " + " | ".join(head) + " |")
        print("|---|" + "---:|" * len(impls) + ("---|---:|" if len(head) > len(impls) else ""))
        for w in rows:
            best = min(peers, key=lambda i: results[(w, i)]) if peers else None
            cells = [f"**{fmt(results[(w, i)])}**" if i == best else fmt(results[(w, i)])
                     for i in impls]
            if len(head) > len(impls):
                ratio = results[(w, "strtab")] / results[(w, best)]
                cells += [best, f"{ratio:.2f}"]
            print(f"| {w} | " + " | ".join(cells) + " |")
        print()

    if any((w, i) in results for w in THREAD for i in THREAD_IMPLS):
        print("| workload | " + " | ".join(THREAD_IMPLS) + " |")
        print("|---|" + "---:|" * len(THREAD_IMPLS))
        for w in THREAD:
            base = results[(w, "strtab")]
            cells = [fmt(results[(w, i)]) + ("" if i == "strtab" else f" ({results[(w, i)] / base:.2f}x)")
                     for i in THREAD_IMPLS]
            print(f"| {w} | " + " | ".join(cells) + " |")
        print()

    pairs = [(w, w[:-len("-batch")] + "-loop") for w in workloads if w.endswith("-batch")]
    pairs = [(b, l) for b, l in pairs if (b, "strtab") in results and (l, "strtab") in results]
    if pairs:
        print("| strtab, fresh table | plain loop | `intern_batch` per sample | batch / loop |")
        print("|---|---:|---:|---:|")
        for b, l in pairs:
            lo, ba = results[(l, "strtab")], results[(b, "strtab")]
            print(f"| {b[:-len('-batch')]} | {fmt(lo)} | {fmt(ba)} | {100 * (ba / lo - 1):+.1f}% |")
        print()

    if ("hash_only", "strtab") in results:
        print(f"Hash-only floor (the stream's strings, foldhash, no table): "
              f"{fmt(results[('hash_only', 'strtab')])} Ir/hash with `hash_one` (the peers)"
              + (f", {fmt(results[('hash_bytes', 'strtab')])} with the bytes alone (strtab)."
                 if ("hash_bytes", "strtab") in results else "."))


if __name__ == "__main__":
    main()
