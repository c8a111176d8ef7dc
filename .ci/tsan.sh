#!/usr/bin/env bash
# Runs the shared table's concurrent tests (tests/shared.rs) and the
# library's unit tests under ThreadSanitizer (nightly, std rebuilt with
# the sanitizer so its own synchronisation is instrumented too).
# Usage: bash .ci/tsan.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
    rustup component add --toolchain nightly rust-src
fi
target=x86_64-unknown-linux-gnu
# Own target dir: the sanitizer rebuilds everything, std included.
export CARGO_TARGET_DIR=target/tsan
export RUSTFLAGS="${RUSTFLAGS:-} -Zsanitizer=thread"
export RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -Zsanitizer=thread"
# Fail on the first report rather than printing and carrying on.
export TSAN_OPTIONS="${TSAN_OPTIONS:-} halt_on_error=1 abort_on_error=1"
cargo +nightly test -Zbuild-std --target "$target" --lib --test shared "$@"
