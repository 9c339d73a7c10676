#!/bin/sh
# Fuzzes the two readers for a bounded time each: seeds from freshly
# recorded sessions (fuzz_seeds), then each libFuzzer target over its corpus.
# Fails on any crash, sanitizer report, leak or timeout (libFuzzer exits
# non-zero and writes the input as crash-*, leak-* or timeout-* into the
# build directory; its log is printed).
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS_EACH
set -eu
build=$(cd "$1" && pwd)
seconds=$2
corpus=$build/fuzz-corpus
rm -rf "$corpus"
"$build/tests/fuzz/fuzz_seeds" "$corpus"
for target in ndjson gflt; do
    log=$build/fuzz_$target.log
    echo "== fuzz_$target: $seconds s, seeded with $(ls "$corpus/$target" | wc -l) files"
    status=0
    (cd "$build" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "./tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=262144 -print_final_stats=1 "$corpus/$target" >"$log" 2>&1) || status=$?
    if [ "$status" -ne 0 ]; then
        cat "$log" >&2
        echo "fuzz_$target failed (exit $status); the input that did it is in $build" >&2
        exit 1
    fi
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ +DONE" "$log" | sed 's/^/   /'
done
