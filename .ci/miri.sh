#!/usr/bin/env bash
# Runs the test suite under Miri with strict provenance.
# Usage: bash .ci/miri.sh [extra cargo test args]
#
# Without arguments the suite runs as two Miri processes at once, each
# with its own target directory (Miri interprets a test binary on one
# host thread, and the suite took 22 minutes in one process on a 2-vCPU
# machine): the shared table's tests, the failing-allocator tests, the
# model-based tests and the operations' tests in one (about 740 s of
# wall time on that machine: 324, 388 and 30); the library's unit tests
# and every other file of `tests/` in the other (about 780 s: unit tests
# 344, `table` 165, `shrink` 175, `hostile` about 100), so a new test
# file is covered without being listed here. With arguments, one process
# runs `cargo miri test --lib --tests` with them, as before.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src
fi
cargo +nightly miri setup
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-strict-provenance"

if [[ $# -gt 0 ]]; then
    # Own target dir so Miri's artifacts never mix with the normal build.
    CARGO_TARGET_DIR=target/miri cargo +nightly miri test --lib --tests "$@"
    exit 0
fi

first=(shared alloc_failure model ops)
second=(--lib)
for file in tests/*.rs; do
    name=$(basename "$file" .rs)
    if [[ ! " ${first[*]} " == *" $name "* ]]; then
        second+=(--test "$name")
    fi
done
first_args=()
for name in "${first[@]}"; do
    first_args+=(--test "$name")
done

logs=$(mktemp -d)
CARGO_TARGET_DIR=target/miri cargo +nightly miri test "${first_args[@]}" \
    >"$logs/first.log" 2>&1 &
first_pid=$!
CARGO_TARGET_DIR=target/miri-b cargo +nightly miri test "${second[@]}" \
    >"$logs/second.log" 2>&1 &
second_pid=$!
status=0
wait "$first_pid" || status=1
wait "$second_pid" || status=1
echo "--- miri: ${first_args[*]}"
cat "$logs/first.log"
echo "--- miri: ${second[*]}"
cat "$logs/second.log"
rm -rf "$logs"
exit "$status"
