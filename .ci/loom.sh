#!/usr/bin/env bash
# Model-checks the shared table's publish protocols (src/shared/index.rs:
# ids and records; src/shared/hints.rs: hints and block biases)
# with loom: every interleaving of two writers and a reader, and every
# value the memory model lets each atomic load return.
# Usage: bash .ci/loom.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

# Own target dir: `--cfg loom` rebuilds everything.
export CARGO_TARGET_DIR=target/loom
export RUSTFLAGS="${RUSTFLAGS:-} --cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
cargo test --release --lib "$@" -- loom_tests
