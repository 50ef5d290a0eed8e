#!/usr/bin/env bash
# Bounded libFuzzer run over the compiler short of NVRTC: parse, analyze,
# lower, verify, emit (tests/fuzz/fuzz_compile.cpp). Builds with clang in
# build-fuzz, seeds the corpus with every example and every lit test
# schedule, runs SCHEDC_FUZZ_SECONDS (default 30: the test command stays
# under CI's 15 minutes on 2 cores) seconds, and fails on a
# crash, an internal error in the back end, a hang (-timeout), a leak or any
# sanitizer report. The corpus (build-fuzz/fuzz-corpus) is kept between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SCHEDC_FUZZ_SECONDS:-30}"

mkdir -p build-fuzz
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSCHEDC_FUZZ=ON >build-fuzz/cmake.log 2>&1 || { cat build-fuzz/cmake.log; exit 1; }
cmake --build build-fuzz --target fuzz_compile -j"$(nproc)"

seeds=build-fuzz/fuzz-seeds
corpus=build-fuzz/fuzz-corpus
rm -rf "$seeds" && mkdir -p "$seeds" "$corpus"
i=0
while IFS= read -r -d '' f; do
  cp "$f" "$seeds/$i-$(basename "$f")"
  i=$((i + 1))
done < <(find examples tests/lit -name '*.sched' -print0)
echo "test-fuzz: $i seed files, ${seconds}s"

build-fuzz/tests/fuzz/fuzz_compile "$corpus" "$seeds" \
  -dict=tests/fuzz/sched.dict -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix=build-fuzz/
echo "test-fuzz: no crash, hang or sanitizer report in ${seconds}s"
