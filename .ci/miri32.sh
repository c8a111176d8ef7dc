#!/usr/bin/env bash
# Runs the unit tests of the size arithmetic (the shared table's id
# index's segments and capacity plan, `StringTable::try_reserve`) under
# Miri on a 32-bit target, i686-unknown-linux-gnu, where `usize` is 32
# bits: sums and shifts that are safe on 64-bit targets must saturate or
# fail there; and iteration's end-of-links address, which must not wrap
# around there. (The whole
# `--lib` suite passes there too, in about 4 minutes of tests: run it with
# the same command and no filter.)
# Miri interprets the target, so no 32-bit machine or libc is needed;
# only the C compiler used by a dev-dependency's build script (criterion's
# `alloca`) must build for it, hence gcc-multilib.
#
#   bash .ci/miri32.sh      # about 3 minutes once Miri's sysroot is built
set -euo pipefail
cd "$(dirname "$0")/.."

if ! dpkg -s gcc-multilib >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc-multilib
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src
fi
target=i686-unknown-linux-gnu
cargo +nightly miri setup --target "$target"
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-strict-provenance"
# Own target dir, as in miri.sh. `--include-ignored`: the capacity-plan
# test, too slow for the 64-bit Miri run, is the one this run is for;
# `fold_follows_long_links` checks iteration's address for "no next long
# string", which a 32-bit address space could wrap around.
CARGO_TARGET_DIR=target/miri32 cargo +nightly miri test --target "$target" --lib \
    -- --include-ignored index:: presize reserve_sizes fold_follows_long_links
