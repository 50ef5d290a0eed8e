#!/usr/bin/env bash
# The unit tests under AddressSanitizer + UBSan (build-asan, from
# scripts/sanitize-build.sh, whose libraries scripts/test-fuzz.sh's fuzzer
# links too). Any sanitizer report fails the run.
#
# CI budget (a 2-core machine, the whole scripts/test.sh well under 15 min):
# the heavy plan sweeps are left out, because under ASan they cost minutes
# and add no code paths beyond the sweep that stays:
#   PlanSweep.MapsCoverEveryElementOnce, PlanSweep.EmulationMatchesReference
#     walk the same lowering as PlanSweep.EveryPlanEmits, only with more
#     integer arithmetic per plan (both run unsanitized in ctest);
#   PlanExamples.EveryExampleEmulatesCorrectlyInEveryLayout (63 s of the
#     127 s the rest takes under ASan, 2026-11-27) walks the emulation of
#     Parts/PlanExamplesPart.EveryExampleEmulatesCorrectly/*, which stay, once more per
#     layout: the same code, other indices (it runs unsanitized in ctest);
#   PlanSweep.EveryPlanEmits stays: it lowers and emits every plan of the
#     sweep, the string-heavy code where memory bugs would be.
# SCHEDC_SANITIZE_ALL=1 runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sanitize-build.sh schedc_unit_tests
filter='-PlanSweep.MapsCoverEveryElementOnce:PlanSweep.EmulationMatchesReference'
filter+=':PlanExamples.EveryExampleEmulatesCorrectlyInEveryLayout'
[ "${SCHEDC_SANITIZE_ALL:-0}" = 1 ] && filter='*'
# Eight shards (gtest's sharding: the tests are independent), run one per
# core as cores come free: the tests' costs under ASan are uneven (a few
# take 10-35 s), and with one shard per core one shard ran more than twice
# as long as the other (100 s against 42 in a fresh-clone run on 2 cores,
# 2026-11-28).
shards=8
run_shard() {
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$1 \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build-asan/tests/schedc_unit_tests --gtest_brief=1 --gtest_filter="$filter" \
    >"build-asan/shard.$1.log" 2>&1
}
export -f run_shard
export shards filter
# xargs exits non-zero when any shard did.
rc=0
seq 0 $((shards - 1)) | xargs -P "$(nproc)" -I{} bash -c 'run_shard {}' || rc=1
for ((i = 0; i < shards; i++)); do cat "build-asan/shard.$i.log"; done
[ $rc -eq 0 ] || { echo "test-sanitize: a shard failed (logs above)"; exit 1; }
echo "test-sanitize: unit tests pass under ASan + UBSan (filter: $filter)"
