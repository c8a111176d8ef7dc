#!/usr/bin/env bash
# Builds the cargo-fuzz targets in fuzz/ with nightly and runs each for a
# short, fixed time, so they cannot rot.
#
#   bash .ci/fuzz.sh                      # every target, 60 s each
#   FUZZ_SECONDS=600 bash .ci/fuzz.sh table_ops
#
# New corpus entries go to a temporary directory; the committed seeds in
# fuzz/corpus/<target>/ are only read. A crash leaves its input in
# fuzz/artifacts/<target>/ (git-ignored) and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: the nightly toolchain is required (rustup toolchain install nightly)" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
cargo fuzz --version

# -max_len per target: table_ops inputs are operation lists; pprof_decode's
# 16 KiB bound keeps a gzip bomb (about 1,000x) plus decoding (up to 36x)
# under the RSS limit for one decoded copy (the target compares the input
# and the output profile to profile, four copies, only up to 1 MiB
# decoded).
declare -A max_len=([table_ops]=4096 [shared_ops]=4096 [pprof_decode]=16384)
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

cargo +nightly fuzz build -O

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
for target in "${targets[@]}"; do
    mkdir -p "$work/$target"
    seeds=()
    if [[ -d "fuzz/corpus/$target" ]]; then
        seeds=("fuzz/corpus/$target")
    fi
    echo "--- fuzz $target for ${seconds} s"
    if cargo +nightly fuzz run -O "$target" "$work/$target" "${seeds[@]}" -- \
        -max_total_time="$seconds" -max_len="${max_len[$target]:-4096}" \
        -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 >"$work/$target.log" 2>&1; then
        runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || true)"
        echo "--- fuzz $target: ok, ${runs:-?} executions in ${seconds} s, corpus $(ls "$work/$target" | wc -l) inputs"
    else
        tail -n 80 "$work/$target.log" >&2
        echo "--- fuzz $target: FAILED" >&2
        failed=$((failed + 1))
    fi
done
echo "fuzz: $((${#targets[@]} - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
