#!/usr/bin/env bash
# Runs the test suite under Miri with strict provenance.
# Usage: bash .ci/miri.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src
fi
cargo +nightly miri setup
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-strict-provenance"
# Own target dir so Miri's artifacts never mix with the normal build.
CARGO_TARGET_DIR=target/miri cargo +nightly miri test --lib --tests "$@"

# The shared table's tests again, under Tree Borrows: its readers keep
# addresses of records in blocks that writers keep appending to, and
# `Arena::push` writes through a `&mut` over the whole block, which
# Stacked Borrows counts as a write to every byte of it (so the run above
# skips tests/shared.rs) while Tree Borrows tracks the bytes written.
STRTAB_MIRI_TREE_BORROWS=1 \
    MIRIFLAGS="$MIRIFLAGS -Zmiri-tree-borrows -Zmiri-env-forward=STRTAB_MIRI_TREE_BORROWS" \
    CARGO_TARGET_DIR=target/miri cargo +nightly miri test --test shared "$@"
