#!/usr/bin/env bash
# Checks the pprof examples with a real pprof reader (Go's `go tool pprof`):
# both examples' outputs must be readable (-raw and -top), the profile
# written by four sampler threads through a SharedStringTable too (with
# all 100,000 samples), and the
# rewritten WordPress fixture must print the same -raw profile (samples,
# locations, functions, mappings, labels) as the original.
#
# Run from the repository root; takes no arguments.
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
    echo "pprof-check: installing golang-go"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq golang-go >/dev/null
fi
go version

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release --example pprof --example pprof_rewrite
examples=target/release/examples

pprof() {
    # -symbolize=none: offline, never looks for binaries or servers.
    go tool pprof -symbolize=none "$@"
}

# Lines from "Samples:" up to (not including) "Locations".
samples_section() {
    sed -n '/^Samples:$/,/^Locations$/p' "$1" | sed '$d'
}

echo "== examples/pprof"
"$examples/pprof" "$work/profile.pb.gz"
pprof -raw "$work/profile.pb.gz" >"$work/profile.raw"
pprof -top "$work/profile.pb.gz" >"$work/profile.top"
head -n 12 "$work/profile.top"
test "$(samples_section "$work/profile.raw" | wc -l)" -gt 1000

echo "== examples/pprof --threads 4 (SharedStringTable)"
"$examples/pprof" --threads 4 "$work/shared.pb.gz"
pprof -raw "$work/shared.pb.gz" >"$work/shared.raw"
pprof -top "$work/shared.pb.gz" >"$work/shared.top"
head -n 12 "$work/shared.top"
test "$(samples_section "$work/shared.raw" | wc -l)" -gt 1000
pprof -sample_index=samples -top "$work/shared.pb.gz" >"$work/shared.samples.top"
grep -q " of 100000 total" "$work/shared.samples.top" || {
    head -n 6 "$work/shared.samples.top" >&2
    echo "pprof-check: FAIL: the shared-table profile does not hold all 100000 samples" >&2
    exit 1
}
"$examples/pprof_rewrite" "$work/shared.pb.gz" "$work/shared2.pb.gz"
pprof -raw "$work/shared2.pb.gz" >"$work/shared2.raw"
cmp -s "$work/shared.raw" "$work/shared2.raw" || {
    echo "pprof-check: FAIL: rewriting the shared-table profile changed its -raw output" >&2
    exit 1
}

echo "== examples/pprof_rewrite on tests/data/wordpress.pprof"
"$examples/pprof_rewrite" tests/data/wordpress.pprof "$work/wordpress.pb.gz"
pprof -raw tests/data/wordpress.pprof >"$work/original.raw"
pprof -raw "$work/wordpress.pb.gz" >"$work/rewritten.raw"
pprof -top "$work/wordpress.pb.gz" >"$work/rewritten.top"
head -n 8 "$work/rewritten.top"

samples_section "$work/original.raw" >"$work/original.samples"
samples_section "$work/rewritten.raw" >"$work/rewritten.samples"
test "$(wc -l <"$work/original.samples")" -gt 3000
if ! cmp -s "$work/original.samples" "$work/rewritten.samples"; then
    diff -u "$work/original.samples" "$work/rewritten.samples" | head -n 40 >&2 || true
    echo "pprof-check: FAIL: the rewritten fixture's -raw sample section differs" >&2
    exit 1
fi
if ! cmp -s "$work/original.raw" "$work/rewritten.raw"; then
    diff -u "$work/original.raw" "$work/rewritten.raw" | head -n 40 >&2 || true
    echo "pprof-check: FAIL: the rewritten fixture's -raw output differs" >&2
    exit 1
fi
echo "rewritten fixture: -raw output identical ($(wc -l <"$work/original.samples") sample lines, $(wc -l <"$work/original.raw") lines in all)"

echo "== examples/pprof_rewrite on tests/data/go-cpu.pprof (written by Go's runtime/pprof)"
"$examples/pprof_rewrite" tests/data/go-cpu.pprof "$work/go.pb.gz"
pprof -raw tests/data/go-cpu.pprof >"$work/go-original.raw"
pprof -raw "$work/go.pb.gz" >"$work/go-rewritten.raw"
test "$(wc -l <"$work/go-original.raw")" -gt 20000
if ! cmp -s "$work/go-original.raw" "$work/go-rewritten.raw"; then
    diff -u "$work/go-original.raw" "$work/go-rewritten.raw" | head -n 40 >&2 || true
    echo "pprof-check: FAIL: the rewritten Go profile's -raw output differs" >&2
    exit 1
fi
echo "rewritten Go profile: -raw output identical ($(wc -l <"$work/go-original.raw") lines)"

echo "== examples/pprof_rewrite on the example's output"
"$examples/pprof_rewrite" "$work/profile.pb.gz" "$work/profile2.pb.gz"
pprof -raw "$work/profile2.pb.gz" >"$work/profile2.raw"
cmp -s "$work/profile.raw" "$work/profile2.raw" || {
    echo "pprof-check: FAIL: rewriting the example's profile changed its -raw output" >&2
    exit 1
}

echo "== bad input: one-line error, non-zero exit, no OUT"
head -c 1000 tests/data/wordpress.pprof >"$work/truncated.pprof"
printf 'garbage, not a profile\n' >"$work/garbage.pprof"
for bad in truncated garbage; do
    if "$examples/pprof_rewrite" "$work/$bad.pprof" "$work/$bad.out" 2>"$work/$bad.err"; then
        echo "pprof-check: FAIL: $bad input was accepted" >&2
        exit 1
    fi
    cat "$work/$bad.err"
    test "$(wc -l <"$work/$bad.err")" -eq 1
    if grep -q panicked "$work/$bad.err"; then
        echo "pprof-check: FAIL: $bad input made pprof_rewrite panic" >&2
        exit 1
    fi
    test ! -e "$work/$bad.out"
    test -z "$(find "$work" -name ".$bad.out.tmp.*")"
done

echo "== options the examples do not know: the usage line, exit status 2, no file"
(
    bin=$PWD/$examples
    cd "$work"
    for args in "pprof -" "pprof -o" "pprof_rewrite - out.pb.gz" "pprof_rewrite $work/garbage.pprof -"; do
        set +e
        # shellcheck disable=SC2086 # the words are the arguments
        "$bin/"$args 2>usage.err
        status=$?
        set -e
        test "$status" -eq 2 || {
            echo "pprof-check: FAIL: '$args' exited with $status, not 2" >&2
            exit 1
        }
        grep -q '^usage:' usage.err
        test ! -e ./-
    done
)

echo "pprof-check: OK"
