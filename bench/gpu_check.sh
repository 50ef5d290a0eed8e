#!/usr/bin/env bash
# THE GPU check: one call on the GPU machine runs the GPU tests, schedc run
# on every example, the cache checks, compute-sanitizer and the benchmark,
# keeps full logs and prints a short summary LAST.
#
#   bash bench/gpu_check.sh [SECTION...]
#
# Sections (default: all, in this order):
#   tests     schedc_gpu_tests (planted kernels, every example x shapes x lds)
#   lit       lit tests (REQUIRES: cuda ones run only with a device), with
#             this machine's lit and FileCheck, else bench/stage_gpu.sh's
#             copies in $BIN/lit-tools
#   run       schedc run on every example at ragged shapes (127x129x65, 4095x4097x1023)
#   hang      schedc run of a GEMM and a conv module whose main entry spins
#             forever (--kernel-source): the hang reported, exit 3
#   cache     two concurrent runs on an empty cache; a truncated entry is
#             rebuilt with a warning; warm 1024^3 host overhead (--verbose)
#   sanitize  compute-sanitizer memcheck, racecheck (synccheck: tensor cores and cp.async pipelines) on every
#             example at 127x129x65, with odd and with aligned leading dimensions
#   bench     schedc bench examples/ladder/*.sched examples/*.sched
#             --shapes $BENCH_SHAPES (default 1024,2048,4096,8192,4095x4097x1023),
#             with a plot (bench.svg)
#   ablate    schedc ablate examples/sgemm_best.sched at $ABLATE_SHAPE (default
#             4096x4096x4096), cumulative and leave-one-out, with a plot
#   ncu       explain's predicted shared wavefronts beside ncu's counters
#             (--clock-control none) for $NCU_EXAMPLES at 1024^3
#   variants  bench/variants.py: hand edits of sgemm_best's emitted CUDA
#             (schedc run --kernel-source) timed round-robin beside the
#             unedited kernel at $VARIANT_SHAPES (default 4096,8192,4095x4097x1023)
#   tune      schedc tune on bench/spaces/*.sched ($TUNE_SPACES, $TUNE_SHAPES,
#             $TUNE_GPUS, $TUNE_TOP, $TUNE_TIME_LIMIT), the hand-made bests
#             benched beside them
#   tuneconv  schedc tune on spaces of convolution modules ($TUNE_CONV_SPACES,
#             default bench/spaces/conv_res5_space.sched) on $TUNE_CONV_SPECS
#             (';'-separated --conv values, default res5 3x3 at batch 8),
#             --graph 20; `schedc run --tuned` of the first space on the first
#             convolution; then the hand-made bests ($TUNE_CONV_HAND) benched
#             on the same convolutions, --graph 20, in the same call
#   cold      bench/cold_compile.sh: cold NVRTC compile of the best examples
#   python    the Python module built there (pip install .), tests/python on
#             torch, bench/python_check.py beside schedc bench at $PYTHON_SHAPE,
#             $PYTHON_ROUNDS (default 3) rounds in alternation, their ratios
#             compared by bench/python_vs_cli.py; both sides idle 50 us after
#             each L2 flush ($PYTHON_CLI_IDLE_US, SCHEDC_TIMING_IDLE_US)
#   batch     issue 18's strided-batch bars: schedc bench on bench/batch/h_*.sched
#             (f16, 64 x 512^3) and s_*.sched (f32, 256 x 128^3), each file's
#             own batch, beside cublasGemmStridedBatchedEx; $BATCH_ROUNDS
#             (default 2) rounds, as cuBLAS's figure moves from run to run
#   int8      issue 21: schedc bench on examples/int8_best.sched,
#             bench/candidates/s8_*.sched, examples/tc/mma_s8.sched (mma.sync)
#             and bench/candidates/mma_s8_*.sched ($INT8_FILES) at $INT8_SHAPES
#             (default 4096,8192) beside cuBLAS int8, $INT8_ROUNDS (default 2)
#             rounds, then torch._int_mm (cuBLASLt) by bench/int8_torch.py
#   conv      issue 21's convolutions: schedc_gpu_tests' convolution tests
#             ($CONV_FILTER: the planted kernel, every examples/conv and
#             tests/gpu/schedules/conv_* schedule on ResNet-50 and ragged
#             convolutions); schedc run of each examples/conv/*.sched and
#             tests/gpu/schedules/conv_*.sched on its
#             own `conv` and on ragged ones; compute-sanitizer memcheck,
#             racecheck and synccheck of those; then schedc bench examples/conv/*.sched
#             --conv $CONV_SPECS (';'-separated, default resnet50:8) beside
#             cuBLAS's GEMM alone and im2col + cuBLAS, $CONV_ROUNDS (default 1)
#             rounds ($CONV_BENCH_FILES in place of examples/conv; each round
#             once per ';'-separated flag set of $CONV_TIMINGS, e.g. ";--graph 20")
#   stalls    ncu's warp states and scheduler statistics (--clock-control
#             none) for $STALLS_SCHEDULE (default examples/sgemm_best.sched)
#             and the cuBLAS kernel its validation runs, at $STALLS_SHAPE
#             (default 4096x4096x4096): where issue slots go unused
# BENCH_PLOT=0 skips the bench section's ladder chart.
# TEST_SHARDS (default 4) sets how many test processes share the GPU.
# SANITIZE_EXAMPLES (space-separated files) limits the sanitize section and
# SANITIZE_SHAPE (default 127x129x65) sets its problem,
# BENCH_FILES the bench section, BENCH_LAYOUTS (e.g. "NN NT TN TT") benches
# each of them once per layout (--layout). The bench section samples the SM clock,
# power and temperature (nvidia-smi, read only) into clocks.csv and
# summarizes them: a ratio to cuBLAS means little if the clocks moved.
#
# Each call may take at most 10 minutes; the whole check fits in three:
#   bash bench/gpu_check.sh tests lit run cache
#   bash bench/gpu_check.sh sanitize
#   bash bench/gpu_check.sh bench
#
# Binaries: $SCHEDC_BIN_DIR, else build-gpu/ (bench/stage_gpu.sh), else build/.
# Time: the device allows 10 minutes a command; sections stop when
# $BUDGET_S (default 560) seconds have passed since the start, and the
# summary is printed anyway. Logs: $OUT (the device tool's folder) or
# out/gpu_check: summary.txt, bench.txt, bench.csv and logs.tgz.

set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)
BUDGET_S=${BUDGET_S:-560}
BENCH_SHAPES=${BENCH_SHAPES:-1024,2048,4096,8192,4095x4097x1023}
DEST=${OUT:-$ROOT/out/gpu_check}
mkdir -p "$DEST"
LOGS=$(mktemp -d /tmp/schedc_gpu_check.XXXXXX)
export SCHEDC_SOURCE_DIR=$ROOT                 # examples_test reads examples from here
export SCHEDC_CACHE_DIR=$LOGS/cache            # start from an empty cache
export SCHEDC_NVRTC_ALL_ARCHES=1               # examples_test compiles tests/gpu/schedules for sm_80 too (CI: sm_90)

if [ -n "${SCHEDC_BIN_DIR:-}" ]; then BIN=$SCHEDC_BIN_DIR
elif [ -x build-gpu/schedc ]; then BIN=build-gpu
else BIN=build; fi
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac  # absolute: the lit and python sections leave the tree
SCHEDC=$BIN/schedc; GPU_TESTS=$BIN/schedc_gpu_tests
[ -x "$SCHEDC" ] || SCHEDC=$BIN/cli/schedc
[ -x "$GPU_TESTS" ] || GPU_TESTS=$BIN/tests/schedc_gpu_tests

SECTIONS=("$@")
[ ${#SECTIONS[@]} -eq 0 ] && SECTIONS=(tests lit run cache sanitize bench)
SUMMARY=()
note() { SUMMARY+=("$(printf '%-9s %s' "$1" "$2")"); }
elapsed() { echo $(( $(date +%s) - START )); }
left() { local l=$(( BUDGET_S - $(elapsed) )); [ $l -lt 5 ] && l=5; echo $l; }

# EXAMPLES: every GEMM example, ladder first (the conv section runs
# examples/conv/: a convolution module takes a convolution, not --shape).
mapfile -t EXAMPLES < <(find examples -name '*.sched' -not -path 'examples/conv/*' 2>/dev/null | sort)

section_tests() {
  # TEST_SHARDS processes (default 4) share the one GPU: the examples'
  # checks spend most of their time on the host (inputs, comparison), so
  # shards finish the suite several times sooner. rc is the worst shard's.
  local log=$LOGS/tests.log shards=${TEST_SHARDS:-4} i rc=0 r pids=()
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$(left)" "$GPU_TESTS" --gtest_color=no \
      --gtest_filter="${GTEST_FILTER:-*}" >"$LOGS/tests.$i.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < shards; i++)); do
    wait "${pids[$i]}"; r=$?
    [ $r -gt $rc ] && rc=$r
  done
  for ((i = 0; i < shards; i++)); do cat "$LOGS/tests.$i.log"; done >"$log"
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$log")
  failed=$(grep -c '^\[  FAILED  \] [A-Za-z].*(' "$log")
  skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z].*(' "$log")
  local s="rc $rc: $passed passed, $failed failed, $skipped skipped"
  [ "$skipped" -gt 0 ] && s="$s (SKIPPED on a GPU machine: no device seen?)"
  [ $rc -eq 124 ] && s="$s (TIMED OUT)"
  note tests "$s"
  grep '^\[  FAILED  \] [A-Za-z].*(' "$log" | head -20 >"$LOGS/tests.failed"
  # The library API's tests (tests/api/), linked against libschedc (api_conv:
  # convolutions through it, against the runtime's reference).
  local name api alog arc
  for name in api api_conv; do
    api=$BIN/schedc_${name}_tests
    [ -x "$api" ] || api=$BIN/tests/schedc_${name}_tests
    [ -x "$api" ] || continue
    alog=$LOGS/${name}_tests.log
    LD_LIBRARY_PATH="$BIN:$BIN/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "$(left)" "$api" \
      --gtest_color=no --gtest_filter="${API_FILTER:-*}" >"$alog" 2>&1
    arc=$?
    local as="rc $arc: $(grep -c '^\[       OK \]' "$alog") passed, $(grep -c '^\[  FAILED  \] [A-Za-z].*(' "$alog") failed, $(grep -c '^\[  SKIPPED \] [A-Za-z].*(' "$alog") skipped"
    # timeout's 124: BUDGET_S ran out, in the tests or in the process's exit after them
    if [ $arc -eq 124 ]; then
      if grep -q '^\[==========\] .* ran\.' "$alog"; then as="$as (TIMED OUT after its tests ended)"
      else as="$as (TIMED OUT before its tests ended)"; fi
    fi
    note "$name" "$as"
  done
}

section_lit() {
  local lit filecheck
  lit=$(command -v lit || command -v llvm-lit || true)
  [ -z "$lit" ] && [ -f /usr/lib/llvm-14/build/utils/lit/lit.py ] && lit="python3 /usr/lib/llvm-14/build/utils/lit/lit.py"
  local tools  # bench/stage_gpu.sh's copy, where this machine has neither
  tools=$(cd "$BIN/lit-tools" 2>/dev/null && pwd)
  [ -z "$lit" ] && [ -f "$tools/lit.py" ] && lit="python3 $tools/lit.py"
  filecheck=$(command -v FileCheck || command -v FileCheck-14 || command -v filecheck || true)
  [ -z "$filecheck" ] && [ -x /usr/lib/llvm-14/bin/FileCheck ] && filecheck=/usr/lib/llvm-14/bin/FileCheck
  if [ -z "$filecheck" ] && [ -x "$tools/FileCheck" ]; then  # with the libraries it needs
    filecheck=$tools/FileCheck
    export LD_LIBRARY_PATH="$tools/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  local n_cuda
  n_cuda=$(grep -rl 'REQUIRES:.*cuda' tests/lit 2>/dev/null | wc -l)
  if [ -z "$lit" ] || [ -z "$filecheck" ]; then
    note lit "not run: lit or FileCheck missing on this machine ($n_cuda tests REQUIRE cuda; the run section covers schedc run)"
    return
  fi
  local site=$LOGS/lit-site
  mkdir -p "$site" "$LOGS/litbin/cli"
  # lit.cfg.py puts its outputs beside the binary's folder: keep them out of the tree.
  ln -sf "$SCHEDC" "$LOGS/litbin/cli/schedc"
  sed -e "s|@CMAKE_BINARY_DIR@/cli/schedc|$LOGS/litbin/cli/schedc|" -e "s|@FILECHECK_EXECUTABLE@|$filecheck|" \
      -e "s|@PROJECT_SOURCE_DIR@|$ROOT|" -e "s|@CMAKE_CURRENT_SOURCE_DIR@|$ROOT/tests|" \
      tests/lit/lit.site.cfg.py.in >"$site/lit.site.cfg.py"
  timeout "$(left)" $lit -sv "$site" >"$LOGS/lit.log" 2>&1
  local rc=$?
  note lit "rc $rc: $(grep -E '^ *(Passed|Failed|Unsupported)' "$LOGS/lit.log" | tr -s ' ' | tr '\n' ' ')"
}

section_run() {
  local log=$LOGS/run.log ok=0 bad=0 total=0
  : >"$log"
  for f in "${EXAMPLES[@]}"; do
    for shape in 127x129x65 4095x4097x1023; do
      [ $(( BUDGET_S - $(elapsed) )) -lt 15 ] && { echo "budget reached" >>"$log"; break 2; }
      total=$((total + 1))
      echo "\$ schedc run $f --shape $shape --verbose" >>"$log"
      if timeout "$(left)" "$SCHEDC" run "$f" --shape "$shape" --verbose >>"$log" 2>&1; then
        ok=$((ok + 1))
      else
        echo "exit code $?" >>"$log"; bad=$((bad + 1))
      fi
    done
  done
  note run "$ok of $total runs ok, $bad not ok (${#EXAMPLES[@]} examples x 127x129x65, 4095x4097x1023)"
}

# A main entry that spins forever (as tests/lit/run/hang_gpu.test, which
# needs lit): schedc run must report the hang and exit 3, GEMM and conv.
section_hang() {
  local log=$LOGS/hang.log ok=0 total=0 f name shape rc
  : >"$log"
  for f in examples/ladder/v0_naive.sched examples/conv/int8_nhwc_128x64.sched; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .sched)
    shape=(--shape 64x64x64); case "$f" in *conv/*) shape=(--conv "1x8x8x64 filter 64x3x3 pad 1");; esac
    "$SCHEDC" emit "$f" | sed "/^schedc_$name(/s/{\$/{ for (;;) __nanosleep(1000);/" >"$LOGS/hang_$name.cu"
    total=$((total + 1))
    SCHEDC_HANG_SECONDS=1 timeout 120 "$SCHEDC" run "$f" "${shape[@]}" --kernel-source "$LOGS/hang_$name.cu" >"$LOGS/hang.tmp" 2>&1
    rc=$?
    { echo "\$ schedc run $f ${shape[*]} --kernel-source (spinning main): rc $rc"; cat "$LOGS/hang.tmp"; } >>"$log"
    if [ $rc -eq 3 ] && grep -q 'did not finish in' "$LOGS/hang.tmp" && grep -c 'for (;;) __nanosleep' "$LOGS/hang_$name.cu" | grep -qx 1; then
      ok=$((ok + 1))
    fi
  done
  note hang "$ok of $total spinning kernels reported as a hang (exit 3, within 120 s)"
}

section_cache() {
  local log=$LOGS/cache.log ex=examples/ladder/v0_naive.sched
  [ -f "$ex" ] || ex=${EXAMPLES[0]:-}
  [ -n "$ex" ] || { note cache "no example to run"; return; }
  local dir=$LOGS/cache-race
  rm -rf "$dir"
  # Two processes at once on an empty cache.
  SCHEDC_CACHE_DIR=$dir "$SCHEDC" run "$ex" --shape 1024x1024x1024 >"$LOGS/cache-a.log" 2>&1 &
  local pa=$!
  SCHEDC_CACHE_DIR=$dir "$SCHEDC" run "$ex" --shape 1024x1024x1024 >"$LOGS/cache-b.log" 2>&1 &
  local pb=$!
  wait $pa; local ra=$?
  wait $pb; local rb=$?
  { echo "concurrent: rc $ra and $rb"; cat "$LOGS/cache-a.log" "$LOGS/cache-b.log"; ls -la "$dir"; } >"$log"
  # Truncate the entry by hand: the next run warns and rebuilds.
  local entry
  entry=$(ls "$dir"/*.cubin 2>/dev/null | head -1)
  local rebuilt="no entry"
  if [ -n "$entry" ]; then
    truncate -s 100 "$entry"
    SCHEDC_CACHE_DIR=$dir "$SCHEDC" run "$ex" --shape 1024x1024x1024 --verbose >>"$log" 2>"$LOGS/cache-c.err"
    local rc=$?
    cat "$LOGS/cache-c.err" >>"$log"
    if grep -q "corrupt" "$LOGS/cache-c.err" && grep -q "NVRTC compile" "$LOGS/cache-c.err" && [ $rc -eq 0 ]; then
      rebuilt="rebuilt with a warning"
    else
      rebuilt="NOT rebuilt as expected (rc $rc)"
    fi
  fi
  # Warm run (cache hit): host overhead outside GPU work.
  SCHEDC_CACHE_DIR=$dir "$SCHEDC" run "$ex" --shape 1024x1024x1024 --verbose >>"$log" 2>"$LOGS/cache-d.err"
  cat "$LOGS/cache-d.err" >>"$log"
  local hit host cold
  hit=$(grep -c "kernel cache hit" "$LOGS/cache-d.err")
  host=$(grep "host work outside the GPU" "$LOGS/cache-d.err" | grep -o '[0-9.]* ms' | tail -1)
  cold=$(grep "NVRTC compile" "$LOGS/cache-c.err" | grep -o '[0-9.]* ms' | head -1)
  note cache "concurrent rc $ra/$rb; truncated entry $rebuilt; warm hit=$hit host overhead ${host:-?}; cold NVRTC ${cold:-?}"
}

# The next multiple of 16 elements above n, plus 16: a leading dimension that
# satisfies every vectorized entry's alignment.
ld_aligned() { echo $(( ($1 + 15) / 16 * 16 + 16 )); }

# True when a racecheck log's every reported error is a race between two
# accesses of kernels that are not schedc's (named schedc_*): cuBLAS's,
# which the validation runs as the reference.
reference_races_only() {
  local errors races
  errors=$(grep -c "Error:" "$1")
  races=$(grep -c "Error: Race reported between" "$1")
  [ "$errors" -gt 0 ] && [ "$errors" -eq "$races" ] && ! grep -q "access at schedc_" "$1"
}

section_sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [ -x "$cs" ] || { note sanitize "compute-sanitizer not found"; return; }
  local list=("${EXAMPLES[@]}")
  # Words split on spaces and newlines alike (`$(ls …)` gives newlines).
  [ -n "${SANITIZE_EXAMPLES:-}" ] && read -r -d "" -a list <<<"$SANITIZE_EXAMPLES"
  local shape=${SANITIZE_SHAPE:-127x129x65} sm sn sk
  sm=$(echo "$shape" | cut -dx -f1); sn=$(echo "$shape" | cut -dx -f2); sk=$(echo "$shape" | cut -dx -f3)
  # Aligned leading dimensions long enough for either layout of A (K or M)
  # and of B (N or K).
  local lda_al ldb_al
  lda_al=$(ld_aligned $(( sk > sm ? sk : sm ))); ldb_al=$(ld_aligned $(( sn > sk ? sn : sk )))
  for tool in memcheck racecheck synccheck; do
    local log=$LOGS/sanitize-$tool.log clean=0 dirty=0 total=0 ref=0
    : >"$log"
    for f in "${list[@]}"; do
      # synccheck checks barrier use: the tensor-core and cp.async pipelines.
      [ "$tool" = synccheck ] && ! grep -qE '^(mma|wmma|stages) ' "$f" && continue
      [ $(( BUDGET_S - $(elapsed) )) -lt 15 ] && { echo "budget reached" >>"$log"; break; }
      # The dense odd leading dimensions (K = 65: lda 65) take the fallback entry;
      # multiples of 16 plus 16 the main one (vectorized or TMA copies) on the same
      # ragged shape.
      for lds in "" "--lda $lda_al --ldb $ldb_al --ldc $(ld_aligned "$sn")"; do
        total=$((total + 1))
        echo "\$ compute-sanitizer --tool $tool schedc run $f --shape $shape $lds --no-time" >>"$log"
        # shellcheck disable=SC2086
        SCHEDC_HANG_SECONDS=300 timeout "$(left)" "$cs" --tool "$tool" --error-exitcode 99 "$SCHEDC" run "$f" \
          --shape "$shape" $lds --no-time >"$LOGS/cs.tmp" 2>&1
        local rc=$?
        cat "$LOGS/cs.tmp" >>"$log"
        if [ $rc -eq 0 ] && ! grep -qE "ERROR SUMMARY: [1-9]|[1-9][0-9]* errors?\)|Hazard" "$LOGS/cs.tmp"; then
          clean=$((clean + 1))
        elif reference_races_only "$LOGS/cs.tmp"; then
          # racecheck reported hazards, all of them in cuBLAS's kernels (the
          # validation's reference; seen at 1000^3: nvjet_sm90_*), none in schedc's.
          echo "CLEAN in schedc's kernels (hazards only in the cuBLAS reference's)" >>"$log"
          clean=$((clean + 1)); ref=$((ref + 1))
        else
          echo "NOT CLEAN (rc $rc)" >>"$log"; dirty=$((dirty + 1))
        fi
      done
    done
    note "$tool" "$clean of $total runs clean at $shape (fallback and main entries), $dirty not clean$([ "$ref" -gt 0 ] && echo "; $ref of the clean ones with hazards in cuBLAS's reference kernels only")"
  done
}

# Samples the card's clocks into $LOGS/clocks.csv while "$@" runs; prints a
# one-line summary (min/median/max SM clock, max power and temperature).
with_clock_log() {
  local smi=""
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits \
      -lms 250 >>"$LOGS/clocks.csv" 2>/dev/null &
    smi=$!
  fi
  "$@"
  local rc=$?
  [ -n "$smi" ] && kill "$smi" 2>/dev/null && wait "$smi" 2>/dev/null
  return $rc
}
clock_summary() {
  [ -s "$LOGS/clocks.csv" ] || { echo "no clock samples"; return; }
  sort -t, -k1 -n "$LOGS/clocks.csv" | awk -F', *' '{c[NR]=$1; if ($2>p) p=$2; if ($3>t) t=$3}
    END {printf "SM clock %d/%d/%d MHz (min/median/max of %d samples), power <= %.0f W, <= %d C",
         c[1], c[int((NR+1)/2)], c[NR], NR, p, t}'
}

section_bench() {
  : >"$LOGS/clocks.csv"
  with_clock_log bench_files
  cp "$LOGS/clocks.csv" "$DEST/clocks.csv" 2>/dev/null
  SUMMARY[${#SUMMARY[@]}-1]+="; $(clock_summary)"
}

bench_files() {
  local files=()
  for f in ${BENCH_FILES:-examples/ladder/*.sched examples/*.sched}; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || { note bench "no examples"; return; }
  # One schedc bench per file, so running out of time loses one file's rows, not the table.
  : >"$LOGS/bench.txt"; : >"$LOGS/bench.progress"
  local rc=0 done_files=0 layout
  for f in "${files[@]}"; do
    # BENCH_LAYOUTS (e.g. "NN NT"): each file once per layout, `--layout L`.
    local layouts=${BENCH_LAYOUTS:-default}
    grep -q '^layout ' "$f" && layouts=default  # the file sets its own
    for layout in $layouts; do
      if [ $(( BUDGET_S - $(elapsed) )) -lt 30 ]; then echo "(budget reached before $f)" >>"$LOGS/bench.txt"; break 2; fi
      local flag=()
      if [ "$layout" != default ]; then flag=(--layout "$layout"); echo "## $f --layout $layout" >>"$LOGS/bench.txt"; fi
      timeout "$(left)" "$SCHEDC" bench "$f" --shapes "$BENCH_SHAPES" "${flag[@]}" \
        >"$LOGS/bench.one" 2>>"$LOGS/bench.progress"
      local r=$?
      [ $r -gt $rc ] && rc=$r
      if [ $done_files -eq 0 ]; then cat "$LOGS/bench.one"; else grep -v '^device:\|^schedule ' "$LOGS/bench.one"; fi >>"$LOGS/bench.txt"
      [ $r -eq 124 ] && echo "($f: TIMED OUT)" >>"$LOGS/bench.txt"
      done_files=$((done_files + 1))
    done
  done
  cp "$LOGS/bench.txt" "$DEST/bench.txt" 2>/dev/null
  # The ladder's chart, from one call (4 shapes).
  if [ "${BENCH_PLOT:-1}" = 1 ] && [ $(( BUDGET_S - $(elapsed) )) -gt 60 ]; then
    timeout "$(left)" "$SCHEDC" bench examples/ladder/v0_naive.sched examples/ladder/v3_thread_8x8.sched \
      examples/ladder/v9_swizzle_block.sched examples/sgemm_best.sched --shapes 1024,2048,4096 \
      --plot "$DEST/bench.svg" >"$LOGS/bench-plot.txt" 2>&1
  fi
  local rows failed
  rows=$(grep -cE '\.sched +[0-9]+x[0-9]+x[0-9]+ +[a-z0-9]+ +(ok|FAILED|ERROR) ' "$LOGS/bench.txt")
  failed=$(grep -cE '\.sched +[0-9]+x[0-9]+x[0-9]+ +[a-z0-9]+ +(FAILED|ERROR) ' "$LOGS/bench.txt")
  note bench "worst rc $rc: $done_files of ${#files[@]} files, $rows rows, $failed FAILED/ERROR (shapes $BENCH_SHAPES)"
}

# The Python module (issue 20): built there by `pip install .` (scikit-build-core
# and nanobind are in that machine's Python; the header-only libraries come in
# build-gpu/deps, bench/stage_gpu.sh), then tests/python with torch and
# bench/python_check.py (torch.matmul equality, ratio, warm-call cost) beside
# `schedc bench` on the same schedules and shape ($PYTHON_SHAPE, default 4096).
section_python() {
  local site=/tmp/schedc_site shape=${PYTHON_SHAPE:-4096} rc
  rm -rf "$site"
  CMAKE_PREFIX_PATH="$BIN/deps" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout "$(left)" \
    python3 -m pip install --no-build-isolation --no-deps --no-index --target "$site" . \
    >"$LOGS/python-build.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { note python "pip install . failed (rc $rc): python-build.log"; return; }
  PYTHONPATH=$site timeout "$(left)" python3 -m pytest -v -p no:cacheprovider tests/python \
    >"$LOGS/python-tests.log" 2>&1
  rc=$?
  note pytest "rc $rc: $(tail -1 "$LOGS/python-tests.log")"
  # PYTHON_ROUNDS (default 3) rounds of the Python check and `schedc bench`
  # in alternation; bench/python_vs_cli.py sets their ratios side by side.
  local i rounds=${PYTHON_ROUNDS:-3} pys=() clis=()
  for ((i = 0; i < rounds; i++)); do
    PYTHONPATH=$site PYTHONUNBUFFERED=1 timeout "$(left)" python3 bench/python_check.py \
      --shape "$shape" >"$LOGS/python-check.$i.log" 2>&1
    rc=$?
    note python "round $i rc $rc: $(grep SUMMARY "$LOGS/python-check.$i.log" || tail -1 "$LOGS/python-check.$i.log")"
    # The CLI with the Python check's idle time after each flush (bench/python_check.py,
    # timed_once): the same harness on both sides.
    SCHEDC_TIMING_IDLE_US=${PYTHON_CLI_IDLE_US:-50} timeout "$(left)" "$SCHEDC" bench \
      examples/sgemm_best.sched examples/hgemm_best.sched \
      --shapes "$shape" >"$LOGS/python-cli-bench.$i.txt" 2>&1
    pys+=("$LOGS/python-check.$i.log"); clis+=("$LOGS/python-cli-bench.$i.txt")
  done
  [ "$rounds" -gt 0 ] || return 0  # PYTHON_ROUNDS=0: the tests alone
  python3 bench/python_vs_cli.py --python "${pys[@]}" --cli "${clis[@]}" >"$LOGS/python-ratios.txt" 2>&1
  note ratios "$(tail -1 "$LOGS/python-ratios.txt")"
  cp "${pys[@]}" "${clis[@]}" "$LOGS/python-ratios.txt" "$DEST/" 2>/dev/null
}

# schedc tune (issue 19): each space of $TUNE_SPACES (default the two under
# bench/spaces/) tuned at $TUNE_SHAPES on $TUNE_GPUS (default 0; "all" for
# every GPU) into one database, then the hand-made bests benched at the same
# shapes, the database as CSV. Cold compile: bench/cold_compile.sh on the
# best examples (empty cache each).
section_tune() {
  local db=$LOGS/tune.sqlite shapes=${TUNE_SHAPES:-4096,2048x8192x1024,1024} rc t0
  local spaces=(${TUNE_SPACES:-bench/spaces/sgemm_space.sched bench/spaces/hgemm_space.sched})
  for space in "${spaces[@]}"; do
    local name
    name=$(basename "$space" .sched)
    t0=$(date +%s)
    timeout "$(left)" "$SCHEDC" tune "$space" --top "${TUNE_TOP:-0}" --shapes "$shapes" \
      --gpus "${TUNE_GPUS:-0}" --time-limit "${TUNE_TIME_LIMIT:-0}" --db "$db" >"$LOGS/tune-$name.txt" 2>"$LOGS/tune-$name.progress"
    rc=$?
    note tune "$name: rc $rc in $(( $(date +%s) - t0 )) s; $(grep -c '^ *[0-9]' "$LOGS/tune-$name.txt") candidates; $(grep '^# best at' "$LOGS/tune-$name.txt" | sed 's/: model rank/ rank/; s/of cuBLAS.*/of cuBLAS/' | tr '\n' ';')"
    cp "$LOGS/tune-$name.txt" "$DEST/" 2>/dev/null
  done
  timeout "$(left)" "$SCHEDC" bench examples/sgemm_best.sched examples/hgemm_best.sched \
    --shapes "$shapes" >"$LOGS/tune-hand-bests.txt" 2>&1
  "$SCHEDC" tune --csv --db "$db" >"$DEST/tune.csv" 2>/dev/null
  cp "$LOGS/tune-hand-bests.txt" "$DEST/" 2>/dev/null
}

# schedc tune on spaces of convolution modules (issue 21): each space of
# $TUNE_CONV_SPACES on the convolutions of $TUNE_CONV_SPECS, graph-timed as
# the conv section's ratios are, into one database; then the hand-made bests
# of $TUNE_CONV_HAND benched on the same convolutions beside them.
section_tuneconv() {
  local db=$LOGS/tune-conv.sqlite rc t0 args=()
  local spaces=(${TUNE_CONV_SPACES:-bench/spaces/conv_res5_space.sched})
  local hand=(${TUNE_CONV_HAND:-bench/candidates/conv_s8_64x64_s8_split8.sched examples/conv/int8_nhwc_64x128.sched})
  IFS=';' read -r -a specs <<<"${TUNE_CONV_SPECS:-8x7x7x512 filter 512x3x3 stride 1 pad 1}"
  for spec in "${specs[@]}"; do args+=(--conv "$spec"); done
  for space in "${spaces[@]}"; do
    local name
    name=$(basename "$space" .sched)
    t0=$(date +%s)
    timeout "$(left)" "$SCHEDC" tune "$space" "${args[@]}" --graph 20 --top "${TUNE_TOP:-0}" \
      --gpus "${TUNE_GPUS:-0}" --time-limit "${TUNE_TIME_LIMIT:-0}" --db "$db" >"$LOGS/tune-$name.txt" 2>"$LOGS/tune-$name.progress"
    rc=$?
    note tuneconv "$name: rc $rc in $(( $(date +%s) - t0 )) s; $(grep -c '^ *[0-9]' "$LOGS/tune-$name.txt") candidates; $(grep '^# best at' "$LOGS/tune-$name.txt" | sed 's/: model rank/ rank/; s/ of im2col + cuBLAS.*/ of im2col + cuBLAS/' | tr '\n' ';')"
    cp "$LOGS/tune-$name.txt" "$DEST/" 2>/dev/null
  done
  # The database's best for the first convolution, run by `run --tuned`.
  timeout "$(left)" "$SCHEDC" run "${spaces[0]}" --tuned "${args[@]:0:2}" --db "$db" --graph 20 \
    >"$LOGS/tune-conv-run-tuned.txt" 2>&1
  note tuneconv "run --tuned: rc $?; $(grep -o 'the fastest known schedule for .*)' "$LOGS/tune-conv-run-tuned.txt" | cut -c1-160); $(grep -o 'kernel [0-9.]*x faster' "$LOGS/tune-conv-run-tuned.txt")"
  timeout "$(left)" "$SCHEDC" bench "${hand[@]}" "${args[@]}" --graph 20 >"$LOGS/tune-conv-hand-bests.txt" 2>&1
  note tuneconv "hand-made: $(grep -o '[0-9.]*x of im2col + cuBLAS' "$LOGS/tune-conv-hand-bests.txt" | tr '\n' ';')"
  "$SCHEDC" tune --csv --db "$db" >"$DEST/tune-conv.csv" 2>/dev/null
  cp "$LOGS/tune-conv-hand-bests.txt" "$DEST/" 2>/dev/null
}

section_cold() {
  SCHEDC=$SCHEDC timeout "$(left)" bash bench/cold_compile.sh examples/sgemm_best.sched \
    examples/hgemm_best.sched examples/bf16_best.sched examples/tf32_best.sched \
    >"$DEST/cold_compile.md" 2>&1
  note cold "$(grep -E 'sgemm_best' "$DEST/cold_compile.md" | tr -s ' ')"
  # Issue 19's figure as a user would take it: schedc run -v, nothing cached
  # (neither schedc's cache nor NVRTC's own, bench/cold_compile.sh says why).
  local i ms=()
  for i in 1 2 3; do
    CUDA_CACHE_DISABLE=1 timeout "$(left)" "$SCHEDC" run examples/sgemm_best.sched --no-cache -v \
      >"$LOGS/cold-run-$i.txt" 2>&1
    ms+=("$(grep -oE 'NVRTC compile [0-9.]+ ms' "$LOGS/cold-run-$i.txt" | grep -oE '[0-9.]+')")
  done
  cp "$LOGS"/cold-run-*.txt "$DEST/" 2>/dev/null
  note cold "schedc run examples/sgemm_best.sched --no-cache -v, three times: NVRTC ${ms[*]} ms"
}

section_ablate() {
  local f=${ABLATE_FILE:-examples/sgemm_best.sched} shape=${ABLATE_SHAPE:-4096x4096x4096} rc1 rc2
  timeout "$(left)" "$SCHEDC" ablate "$f" --shape "$shape" --plot "$DEST/ablate.svg" \
    >"$LOGS/ablate.txt" 2>"$LOGS/ablate.progress"
  rc1=$?
  timeout "$(left)" "$SCHEDC" ablate "$f" --shape "$shape" --mode leave-one-out \
    >"$LOGS/ablate-loo.txt" 2>>"$LOGS/ablate.progress"
  rc2=$?
  { echo "\$ schedc ablate $f --shape $shape"; cat "$LOGS/ablate.txt"; echo
    echo "\$ schedc ablate $f --shape $shape --mode leave-one-out"; cat "$LOGS/ablate-loo.txt"; } \
    >"$DEST/ablate.txt"
  note ablate "rc $rc1 (cumulative), $rc2 (leave-one-out); tables in ablate.txt, plot ablate.svg"
}

# Prints the path of ncu (on PATH or under /opt/nvidia), or nothing.
find_ncu() {
  local ncu
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
  [ -n "$ncu" ] && [ -x "$ncu" ] && echo "$ncu"
}

section_ncu() {
  local ncu
  ncu=$(find_ncu) || { note ncu "ncu not found"; return; }
  local metrics=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  local out=$LOGS/ncu.txt n=0
  : >"$out"
  for f in ${NCU_EXAMPLES:-examples/ladder/v3_thread_8x8.sched examples/ladder/v5_transpose_a.sched examples/tc/mma_f16.sched}; do
    [ $(( BUDGET_S - $(elapsed) )) -lt 30 ] && break
    echo "==== $f" >>"$out"
    "$SCHEDC" explain "$f" --shape 1024x1024x1024 >>"$out" 2>&1
    timeout "$(left)" "$ncu" --clock-control none --metrics "$metrics" -k regex:schedc_ -c 1 \
      "$SCHEDC" run "$f" --shape 1024x1024x1024 --no-time >>"$out" 2>&1
    n=$((n + 1))
  done
  cp "$out" "$DEST/ncu.txt"
  note ncu "$n examples profiled at 1024^3; predicted vs measured in ncu.txt"
}

section_variants() {
  python3 bench/variants.py write --out "$LOGS/variants" >"$LOGS/variants.txt" 2>&1 || {
    note variants "variants.py write failed (variants.txt)"; cp "$LOGS/variants.txt" "$DEST/"; return; }
  timeout "$(left)" python3 bench/variants.py time --out "$LOGS/variants" \
    --shapes "${VARIANT_SHAPES:-4096,8192,4095x4097x1023}" >>"$LOGS/variants.txt" 2>"$LOGS/variants.progress"
  local rc=$?
  cat "$LOGS/variants.progress" >>"$LOGS/variants.txt"
  cp "$LOGS/variants.txt" "$DEST/variants.txt"
  note variants "rc $rc; table in variants.txt"
}

section_batch() {
  local rounds=${BATCH_ROUNDS:-2} i rc=0 r
  : >"$LOGS/batch.txt"
  for ((i = 0; i < rounds; i++)); do
    echo "## round $i" >>"$LOGS/batch.txt"
    timeout "$(left)" "$SCHEDC" bench bench/batch/h_*.sched --shapes 512x512x512 \
      >>"$LOGS/batch.txt" 2>>"$LOGS/batch.progress"
    r=$?; [ $r -gt $rc ] && rc=$r
    timeout "$(left)" "$SCHEDC" bench bench/batch/s_*.sched --shapes 128x128x128 \
      >>"$LOGS/batch.txt" 2>>"$LOGS/batch.progress"
    r=$?; [ $r -gt $rc ] && rc=$r
  done
  cp "$LOGS/batch.txt" "$DEST/batch.txt" 2>/dev/null
  note batch "worst rc $rc: $rounds rounds, $(grep -cE ' ok ' "$LOGS/batch.txt") rows ok, $(grep -cE 'FAILED|ERROR' "$LOGS/batch.txt") FAILED/ERROR"
}

section_int8() {
  local rounds=${INT8_ROUNDS:-2} i rc=0 r
  local files=${INT8_FILES:-"examples/int8_best.sched bench/candidates/s8_*.sched examples/tc/mma_s8.sched bench/candidates/mma_s8_*.sched"}
  local shapes=${INT8_SHAPES:-4096,8192}
  : >"$LOGS/int8.txt"
  for ((i = 0; i < rounds; i++)); do
    echo "## round $i" >>"$LOGS/int8.txt"
    # shellcheck disable=SC2086
    timeout "$(left)" "$SCHEDC" bench $files --shapes "$shapes" \
      >>"$LOGS/int8.txt" 2>>"$LOGS/int8.progress"
    r=$?; [ $r -gt $rc ] && rc=$r
  done
  timeout "$(left)" python3 bench/int8_torch.py ${shapes//,/ } >>"$LOGS/int8.txt" 2>&1
  cp "$LOGS/int8.txt" "$DEST/int8.txt" 2>/dev/null
  note int8 "worst rc $rc: $rounds rounds, $(grep -cE ' ok ' "$LOGS/int8.txt") rows ok, $(grep -cE 'FAILED|ERROR' "$LOGS/int8.txt") FAILED/ERROR"
}

# A ragged convolution every NHWC convolution module computes (16 channels:
# one 16-byte chunk of int8, two of f16), and one for the NCHW32 modules (C
# and K multiples of 32; --conv takes the module's layout).
CONV_RAGGED=${CONV_RAGGED:-"3x7x9x16 filter 40x3x3 stride 1 pad 1"}
CONV_RAGGED_NCHW32=${CONV_RAGGED_NCHW32:-"3x7x9x32 filter 64x3x3 stride 2 pad 1"}
# And one the Hopper NHWC kernels read A of by TMA's im2col mode (C a
# multiple of their k-tile; a filter and strides unlike per axis).
CONV_RAGGED_TMA=${CONV_RAGGED_TMA:-"2x11x9x128 filter 40x3x5 stride 2 pad 1"}
# And one whose C is a multiple of half an int8 k-tile only (two im2col
# copies a k-tile, 64-byte panels; K = 576 ends mid-k-tile).
CONV_RAGGED_HALVES=${CONV_RAGGED_HALVES:-"2x11x9x64 filter 40x3x3 stride 1 pad 1"}

section_conv() {
  local log=$LOGS/conv-tests.log rc=0 r f
  timeout "$(left)" "$GPU_TESTS" --gtest_color=no \
    --gtest_filter="${CONV_FILTER:-PlantedConv*:ConvSchedules*:*ConvScheduleTest*}" >"$log" 2>&1
  r=$?
  note conv-tests "rc $r: $(grep -c '^\[       OK \]' "$log") passed, $(grep -c '^\[  FAILED  \] [A-Za-z].*(' "$log") failed, $(grep -c '^\[  SKIPPED \] [A-Za-z].*(' "$log") skipped"
  grep '^\[  FAILED  \] [A-Za-z].*(' "$log" | head -20 >>"$LOGS/tests.failed"
  local files=()
  for f in examples/conv/*.sched; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || { note conv "no examples/conv/*.sched"; return; }
  # schedc run on each file's own convolution and on the ragged one (the
  # examples and the GPU test schedules); the same under compute-sanitizer
  # (cuBLAS's reference kernels may report racecheck hazards of their own:
  # reference_races_only).
  local ok=0 total=0 clean=0 checked=0 cs spec tool run_files=("${files[@]}")
  for f in tests/gpu/schedules/conv_*.sched; do [ -f "$f" ] && run_files+=("$f"); done
  # CONV_RUN_FILES (space-separated) limits the runs and the sanitizer to those.
  [ -n "${CONV_RUN_FILES:-}" ] && read -r -a run_files <<<"$CONV_RUN_FILES"
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  : >"$LOGS/conv-run.log"
  for f in "${run_files[@]}"; do
    local ragged=("$CONV_RAGGED" "$CONV_RAGGED_TMA" "$CONV_RAGGED_HALVES")
    grep -q '^conv .*nchw32' "$f" && ragged=("$CONV_RAGGED_NCHW32")
    for spec in "" "${ragged[@]}"; do
      [ $(( BUDGET_S - $(elapsed) )) -lt 30 ] && break 2
      local flag=()
      [ -n "$spec" ] && flag=(--conv "$spec")
      total=$((total + 1))
      echo "\$ schedc run $f ${spec:+--conv \"$spec\"} --verbose" >>"$LOGS/conv-run.log"
      if timeout "$(left)" "$SCHEDC" run "$f" "${flag[@]}" --verbose >>"$LOGS/conv-run.log" 2>&1; then
        ok=$((ok + 1))
      else
        echo "exit code $?" >>"$LOGS/conv-run.log"
      fi
      [ -x "$cs" ] || continue
      for tool in memcheck racecheck synccheck; do
        checked=$((checked + 1))
        echo "\$ compute-sanitizer --tool $tool schedc run $f ${spec:+--conv \"$spec\"} --no-time" >>"$LOGS/conv-run.log"
        SCHEDC_HANG_SECONDS=300 timeout "$(left)" "$cs" --tool "$tool" --error-exitcode 99 \
          "$SCHEDC" run "$f" "${flag[@]}" \
          --no-time >"$LOGS/cs.tmp" 2>&1
        r=$?
        cat "$LOGS/cs.tmp" >>"$LOGS/conv-run.log"
        if { [ $r -eq 0 ] && ! grep -qE "ERROR SUMMARY: [1-9]|[1-9][0-9]* errors?\)|Hazard" "$LOGS/cs.tmp"; } ||
          reference_races_only "$LOGS/cs.tmp"; then
          clean=$((clean + 1))
        else
          echo "NOT CLEAN (rc $r)" >>"$LOGS/conv-run.log"
        fi
      done
    done
  done
  note conv-run "$ok of $total runs ok; compute-sanitizer $clean of $checked clean (memcheck, racecheck, synccheck; own conv, $CONV_RAGGED and $CONV_RAGGED_TMA or, NCHW32, $CONV_RAGGED_NCHW32)"
  local rounds=${CONV_ROUNDS:-1} i specs=() list timings timing
  IFS=';' read -r -a list <<<"${CONV_SPECS:-resnet50:8}"
  for spec in "${list[@]}"; do specs+=(--conv "$spec"); done
  # CONV_BENCH_FILES (space-separated) replaces examples/conv/*.sched in the
  # bench; CONV_TIMINGS (';'-separated flag sets, e.g. ";--graph 20": each
  # launched alone, then graphs of 20) times each round once per set.
  [ -n "${CONV_BENCH_FILES:-}" ] && read -r -a files <<<"$CONV_BENCH_FILES"
  IFS=";" read -r -a timings <<<"${CONV_TIMINGS:-};"
  [ ${#timings[@]} -gt 0 ] || timings=("")
  : >"$LOGS/conv.txt"
  for ((i = 0; i < rounds; i++)); do
    for timing in "${timings[@]}"; do
      local tflags=()
      read -r -a tflags <<<"$timing"
      echo "## round $i: schedc bench ${files[*]} ${CONV_SPECS:-resnet50:8} ${timing:-(each run alone)}" >>"$LOGS/conv.txt"
      timeout "$(left)" "$SCHEDC" bench "${files[@]}" "${specs[@]}" "${tflags[@]}" \
        >>"$LOGS/conv.txt" 2>>"$LOGS/conv.progress"
      r=$?; [ $r -gt $rc ] && rc=$r
    done
  done
  cp "$LOGS/conv.txt" "$DEST/conv.txt" 2>/dev/null
  note conv "worst rc $rc: $rounds rounds x ${#timings[@]} timings, $(grep -cE ' ok ' "$LOGS/conv.txt") rows ok, $(grep -cE 'FAILED|ERROR' "$LOGS/conv.txt") FAILED/ERROR"
}

section_stalls() {
  local ncu
  ncu=$(find_ncu) || { note stalls "ncu not found"; return; }
  local f=${STALLS_SCHEDULE:-examples/sgemm_best.sched} shape=${STALLS_SHAPE:-4096x4096x4096}
  # Validation launches schedc's kernel and cuBLAS's, twice each (exact and random inputs).
  timeout "$(left)" "$ncu" --clock-control none --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section InstructionStats -k regex:'schedc_|gemm' -c 4 \
    "$SCHEDC" run "$f" --shape "$shape" --no-time >"$LOGS/stalls.txt" 2>&1
  local rc=$?
  cp "$LOGS/stalls.txt" "$DEST/stalls.txt"
  note stalls "rc $rc: $f and cuBLAS at $shape, $(grep -c '^  [a-z_0-9]*gemm\|^  schedc_' "$LOGS/stalls.txt") kernels profiled; stalls.txt"
}

{
  echo "schedc gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(cat "$BIN/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "binaries: $SCHEDC $GPU_TESTS; ${#EXAMPLES[@]} examples; sections: ${SECTIONS[*]}"
} >"$LOGS/env.txt"

for s in "${SECTIONS[@]}"; do
  if [ $(( BUDGET_S - $(elapsed) )) -lt 20 ]; then note "$s" "SKIPPED: time budget ($BUDGET_S s) spent"; continue; fi
  t0=$(date +%s)
  echo "== $s (at $(elapsed) s)" >&2
  if declare -f "section_$s" >/dev/null; then "section_$s"; else note "$s" "unknown section"; continue; fi
  SUMMARY[${#SUMMARY[@]}-1]+=" [$(( $(date +%s) - t0 )) s]"
done

{
  cat "$LOGS/env.txt"
  if [ -s "$LOGS/bench.txt" ]; then echo "---- bench ----"; cat "$LOGS/bench.txt"; fi
  if [ -s "$LOGS/batch.txt" ]; then echo "---- batch ----"; cat "$LOGS/batch.txt"; fi
  if [ -s "$LOGS/int8.txt" ]; then echo "---- int8 ----"; cat "$LOGS/int8.txt"; fi
  if [ -s "$LOGS/conv.txt" ]; then echo "---- conv ----"; cat "$LOGS/conv.txt"; fi
  if [ -s "$LOGS/variants.txt" ]; then echo "---- variants ----"; grep -vE '^round |FAILED: ' "$LOGS/variants.txt"; fi
  [ -s "$LOGS/tests.failed" ] && { echo "---- failed tests ----"; cat "$LOGS/tests.failed"; }
  echo "---- summary ($(elapsed) s) ----"
  printf '%s\n' "${SUMMARY[@]}"
} >"$DEST/summary.txt"
tar czf "$DEST/logs.tgz" -C "$LOGS" --exclude=cache --exclude=cache-race . 2>/dev/null
cat "$DEST/summary.txt"
