#!/usr/bin/env bash
# Runs every test binary (unit and integration tests, release build) and
# the pprof example under valgrind memcheck: any memory error or any
# definitely-lost byte fails the run.
#
#   bash .ci/valgrind.sh            # all test binaries and the example
#   bash .ci/valgrind.sh hostile    # only binaries whose name contains it
#
# Tests scale their sizes down when STRTAB_VALGRIND is set (memcheck runs
# code 20-50x slower); the scaled runs still cross every chunk, index and
# hash-table growth.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind
fi
valgrind --version

filter="${1:-}"
export STRTAB_VALGRIND=1
memcheck=(valgrind --tool=memcheck --error-exitcode=1 --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite --quiet)

if ! command -v python3 >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3
fi

# Build the test binaries and list them (profile.test marks test harnesses,
# not examples or build scripts). The build's messages go to a file first,
# so that a failed build fails this script (a process substitution's exit
# status is not checked).
messages="$(mktemp)"
trap 'rm -f "$messages"' EXIT
cargo test --release --no-run --message-format=json > "$messages"
bins=()
while IFS= read -r bin; do
    bins+=("$bin")
done < <(python3 -c '
import json, sys
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") == "compiler-artifact" and msg.get("profile", {}).get("test") and msg.get("executable"):
        print(msg["executable"])
' < "$messages")
if [[ ${#bins[@]} -eq 0 ]]; then
    echo "valgrind.sh: no test binaries found" >&2
    exit 1
fi

failed=0
ran=0
for bin in "${bins[@]}"; do
    name="$(basename "$bin")"
    if [[ -n "$filter" && "$name" != *"$filter"* ]]; then
        continue
    fi
    echo "--- memcheck: $name"
    start=$SECONDS
    if "${memcheck[@]}" "$bin" -q; then
        echo "--- memcheck: $name: clean ($((SECONDS - start)) s)"
    else
        echo "--- memcheck: $name: FAILED ($((SECONDS - start)) s)" >&2
        failed=$((failed + 1))
    fi
    ran=$((ran + 1))
done

# The pprof example: a whole simulated profiler run, encoded and gzipped.
if [[ -z "$filter" || "pprof" == *"$filter"* ]] && [[ -f examples/pprof.rs ]]; then
    cargo build --release --example pprof
    out="$(mktemp -d)"
    echo "--- memcheck: example pprof"
    start=$SECONDS
    if "${memcheck[@]}" target/release/examples/pprof "$out/profile.pb.gz" >/dev/null; then
        echo "--- memcheck: example pprof: clean ($((SECONDS - start)) s)"
    else
        echo "--- memcheck: example pprof: FAILED ($((SECONDS - start)) s)" >&2
        failed=$((failed + 1))
    fi
    rm -rf "$out"
    ran=$((ran + 1))
fi

echo "valgrind: $((ran - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
