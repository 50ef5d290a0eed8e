#!/usr/bin/env bash
# Bounded libFuzzer run over the compiler short of NVRTC: parse, analyze,
# lower, verify, emit (tests/fuzz/fuzz_compile.cpp). Builds in build-asan
# (scripts/sanitize-build.sh: clang, ASan + UBSan; after
# scripts/test-sanitize.sh only fuzz_compile.cpp is left to compile), seeds the corpus with every example and
# every lit test schedule, runs SCHEDC_FUZZ_SECONDS (default 30: the test
# command stays under CI's 15 minutes on 2 cores) seconds, and fails on a
# crash, an internal error in the back end, a hang (-timeout), a leak or any
# sanitizer report. The corpus (build-asan/fuzz-corpus) is kept between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SCHEDC_FUZZ_SECONDS:-30}"
scripts/sanitize-build.sh fuzz_compile
seeds=build-asan/fuzz-seeds
corpus=build-asan/fuzz-corpus
rm -rf "$seeds" && mkdir -p "$seeds" "$corpus"
i=0
while IFS= read -r -d '' f; do
  cp "$f" "$seeds/$i-$(basename "$f")"
  i=$((i + 1))
done < <(find examples tests/lit -name '*.sched' -print0)
echo "test-fuzz: $i seed files, ${seconds}s"

# One fuzzing process a core (-fork): the -O1 ASan build of build-asan runs
# about half as many inputs a second as the RelWithDebInfo build the fuzzer
# had of its own before 2026-11-28 (35 against 70 on the 2-core CI machine);
# two processes ran ~2,900 inputs in 22 s there, the old one 2,180 in 30 s.
# A crash, leak or timeout in any of them ends the run with an error (the
# pipeline's status is the fuzzer's: pipefail). In fork mode libFuzzer prints
# a NEW_FUNC line for each function a child first covers whatever
# -print_funcs says: those are dropped.
build-asan/tests/fuzz/fuzz_compile "$corpus" "$seeds" -fork="$(nproc)" \
  -dict=tests/fuzz/sched.dict -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$seconds" -print_final_stats=1 -print_funcs=0 -artifact_prefix=build-asan/ \
  2>&1 | { grep -v '^ *NEW_FUNC' || true; }
echo "test-fuzz: no crash, hang or sanitizer report in ${seconds}s"
