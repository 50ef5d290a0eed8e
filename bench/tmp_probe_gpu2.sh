set -u
export LD_LIBRARY_PATH=$PWD/build-gpu
S=build-gpu/schedc
timeout 420 build-gpu/schedc_gpu_tests --gtest_color=no --gtest_filter='*requantize*:Requantize*:*ConvScheduleTest*:PlantedConv*:*CorrectOnGpu*wgmma_s8*' > $OUT/gtest.log 2>&1
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" $OUT/gtest.log | head -20
build-gpu/schedc_api_conv_tests --gtest_color=no 2>&1 | grep -E "^\[  (PASSED|FAILED) "
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
n=0; ok=0
for t in memcheck racecheck synccheck; do
  for f in tests/gpu/schedules/wgmma_s8_requantize.sched tests/gpu/schedules/wgmma_s8_requantize_pingpong.sched; do
    for sh in 127x129x65 256x256x256; do n=$((n+1)); timeout 120 $CS --tool $t --error-exitcode 9 $S run $f --shape $sh --no-time >/tmp/cs.log 2>&1 && ok=$((ok+1)) || { echo "NOT CLEAN $t $f $sh"; tail -5 /tmp/cs.log; }; done; done
  for f in examples/conv/int8_nchw32_requantize.sched tests/gpu/schedules/conv_s8_nhwc_requantize.sched; do
    n=$((n+1)); timeout 120 $CS --tool $t --error-exitcode 9 $S run $f --no-time >/tmp/cs.log 2>&1 && ok=$((ok+1)) || { echo "NOT CLEAN $t $f"; tail -5 /tmp/cs.log; }; done
done; echo "sanitizer $ok of $n clean"
for i in 1 2; do $S run tests/gpu/schedules/wgmma_s8_requantize.sched --shape 4096x4096x4096 2>&1 | tail -1; done
mapfile -t L < <(grep -E "^(1|8|32)x" bench/conv_3x3.txt)
args=(); for l in "${L[@]}"; do args+=(--conv "$l"); done
for i in 1 2; do $S bench examples/conv/int8_nchw32_requantize.sched examples/conv/int8_nchw32.sched "${args[@]}" 2>/dev/null >> $OUT/bench.txt; done
grep -c " ok " $OUT/bench.txt
PYTHON_ROUNDS=0 BUDGET_S=200 bash bench/gpu_check.sh python 2>&1 | tail -2
