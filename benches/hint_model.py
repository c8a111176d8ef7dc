#!/usr/bin/env python3
"""A model of `SharedStringTable`'s hint cache: how many interns it sends
to the locked path, for cache designs that are not built.

    python3 benches/hint_model.py [--strings N] [--interns M] [--seed S]
                                  [--two RATIO]

Runs one thread's stream of the concurrent benchmark (the skew of
`setup::skewed_stream`: new strings spread over the stream, the others
drawn as `next_new * u^3`, so early strings are the hot ones) through a
model of `src/shared/hints.rs` twice: the first pass into an empty table
(the benchmark's `thread-stream`), the second into the full one (the
steady state, every intern a hit). For each design it prints the locked
calls of each pass: insertions (first pass only) plus hits the cache did
not answer.

What is modelled: levels of 4x entries (2Ki to 128Ki), switched to when a
power-of-two id is given out and the table holds more strings than the
level serves (a quarter of its entries, half for the 32Ki level:
`level_fill`; one per entry until 2026-12-03); the carry-over of the old level's hints into the new
one (first empty way, else dropped); a string found under the lock or
inserted is put into its set's first empty way, else evicts a victim (the
policy); a hit writes nothing. Not modelled: shards (a set is of one
shard; it changes no count), tag collisions (about 0.5% of lookups in the
real cache), the 16 MiB-per-shard hinted limit.

Validation (2026-12-03, callgrind call counts of `intern_locked`): with
one string per entry, the model gives 131.4k locked calls in the first
pass and 29.0k in the second; the library of 656dbdc counts 135.6k
(`thread-stream strtab-shared`) and 32.0k (a second pass of the same
stream over the filled table, a scratch workload). With `level_fill`,
114.0k in the first pass against 117.5k counted. Results of the designs are in `benches/README.md` ("Levers
tried for the shared table", session 16). Python 3 standard library only;
under 10 s for all the designs.

`--two RATIO` models two threads: a second stream (the next seed, as
`setup::thread_streams` gives each thread its own) merged into the first,
running at RATIO of its speed (1.0: in step; two real threads drift
apart), both into one cache (its first pass is the benchmark's; the
second replays the merged stream over the full table). Counters in a scratch
build (session 17) measured 143k-161k locked calls for two threads of 1M
interns each (the model: 127k in step, 139k-143k at 0.9-0.5).
"""
import argparse
import random


def skewed_stream(n, length, seed):
    """String indices in the order `setup::skewed_stream` interns them."""
    rng = random.Random(seed)
    out, next_new = [], 0
    for step in range(length):
        due = (step + 1) * n // length
        if next_new < n and (next_new < due or next_new == 0):
            out.append(next_new)
            next_new += 1
        else:
            u = rng.random()
            out.append(min(int(next_new * u * u * u), next_new - 1))
    out.extend(range(next_new, n))
    return out


def merged(first, second, ratio):
    """Two threads' streams as one cache sees them: `second` interned at
    `ratio` of `first`'s speed, the rest of the slower one at the end."""
    out, j, due = [], 0, 0.0
    for s in first:
        out.append(s)
        due += ratio
        while j < len(second) and j + 1 <= due:
            out.append(second[j])
            j += 1
    out.extend(second[j:])
    return out


def run(stream, n, ways=4, first_bits=11, levels=4, policy="last", buddy=False, seed=1,
        level_lens=None, load=(0.25, 0.25, 0.5, 1.0)):
    """Locked calls of the two passes for one design.

    `policy` picks the victim when a string's set (and, with `buddy`, the
    other set of its pair) is full: "last" (the last way, as built),
    "random", "fifo" (a rotating victim per set) or "oldest" (keep the
    oldest strings: evict the newest, unless the string is newer still).
    `level_lens` replaces the 4x levels from `2^first_bits` entries; level
    `k` (not the last) is left once the table holds more than `load[k]`
    strings per entry (`load` may also be one number for every level).
    """
    rng = random.Random(seed)
    hashes = [rng.getrandbits(40) for _ in range(n)]
    level_len = level_lens or [1 << (first_bits + 2 * k) for k in range(levels)]
    levels = len(level_len)
    sets, victim = None, None
    held, strings, current = set(), 0, -1

    def pair(s, table):
        i = hashes[s] % len(table)
        return i, table[i], table[i ^ 1]

    def place(s, table, evict):
        i, home, other = pair(s, table)
        for candidates in ([home, other] if buddy else [home]):
            for w in range(ways):
                if candidates[w] is None:
                    candidates[w] = s
                    return
        if not evict:
            return
        if policy == "last":
            home[ways - 1] = s
        elif policy == "random":
            home[rng.randrange(ways)] = s
        elif policy == "fifo":
            home[victim[i]] = s
            victim[i] = (victim[i] + 1) % ways
        elif policy == "oldest":
            w = max(range(ways), key=lambda w: home[w])
            if home[w] > s:
                home[w] = s

    def install(k, old):
        table = [[None] * ways for _ in range(level_len[k] // ways)]
        for old_set in old or []:
            for s in old_set:
                if s is not None:
                    place(s, table, evict=False)
        return table

    def fill(k):
        return load[k] if isinstance(load, (list, tuple)) else load

    locked = []
    for _ in range(2):
        count = 0
        for s in stream:
            if sets is not None:
                _, home, other = pair(s, sets)
                if s in home:
                    continue
                if buddy and home[ways - 1] is not None and s in other:
                    continue
            count += 1
            if s not in held:
                held.add(s)
                strings += 1
                if sets is not None:
                    place(s, sets, evict=True)
                if strings & (strings - 1) == 0:
                    k = 0
                    while k + 1 < levels and strings + 1 > fill(k) * level_len[k]:
                        k += 1
                    if current < k:
                        sets, current = install(k, sets), k
                        victim = [0] * len(sets)
            elif sets is not None:
                place(s, sets, evict=True)
        locked.append(count)
    return locked


# The designs below were weighed against the levels of then.
OLD = {"load": 1.0}

DESIGNS = [
    ("as built: 4 ways, the last way evicted, `level_fill`", {}),
    ("levels used up to one string per entry (until 2026-12-03)", {"load": 1.0}),
    ("levels left at a quarter string per entry, the 32Ki one too", {"load": 0.25}),
    ("a random way evicted", {"policy": "random", **OLD}),
    ("a rotating victim per set (FIFO)", {"policy": "fifo", **OLD}),
    ("the newest string evicted (keep the oldest)", {"policy": "oldest", **OLD}),
    ("a full set's strings into the other set of its pair", {"buddy": True, **OLD}),
    ("8 ways, the same entries", {"ways": 8, **OLD}),
    ("16 ways, the same entries", {"ways": 16, **OLD}),
    ("levels of twice the entries", {"first_bits": 12, **OLD}),
    ("levels of half the entries", {"first_bits": 10, **OLD}),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strings", type=int, default=100_000)
    parser.add_argument("--interns", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--two", type=float, default=None, metavar="RATIO")
    args = parser.parse_args()
    stream = skewed_stream(args.strings, args.interns, args.seed)
    if args.two is not None:
        second = skewed_stream(args.strings, args.interns, args.seed + 1)
        stream = merged(stream, second, args.two)
    print("| design | locked calls, first pass | locked calls, second pass |")
    print("|---|---:|---:|")
    for name, design in DESIGNS:
        first, second = run(stream, args.strings, **design)
        print(f"| {name} | {first:,} | {second:,} |")


if __name__ == "__main__":
    main()
