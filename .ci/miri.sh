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

