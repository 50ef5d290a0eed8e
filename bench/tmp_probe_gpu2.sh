set -u
export LD_LIBRARY_PATH=$PWD/build-gpu
S=build-gpu/schedc
build-gpu/schedc_gpu_tests --gtest_color=no --gtest_filter='*ConvScheduleTest*nchw32*:ConvSchedules*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED"
build-gpu/schedc_api_conv_tests --gtest_color=no 2>&1 | grep -E "^\[  (PASSED|FAILED) "
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
n=0; ok=0
for spec in "" "3x7x9x32 filter 64x3x3 stride 2 pad 1"; do for t in memcheck racecheck synccheck; do for f in examples/conv/int8_nchw32.sched tests/gpu/schedules/conv_s8_nchw32_pingpong.sched tests/gpu/schedules/conv_f16_nchw32_stream_k.sched; do
  n=$((n+1)); if [ -n "$spec" ]; then timeout 120 $CS --tool $t --error-exitcode 9 $S run $f --conv "$spec" --no-time >/tmp/cs.log 2>&1; else timeout 120 $CS --tool $t --error-exitcode 9 $S run $f --no-time >/tmp/cs.log 2>&1; fi
  r=$?; [ $r = 0 ] && ok=$((ok+1)) || { echo "NOT CLEAN $t $f $spec rc $r"; tail -5 /tmp/cs.log; }; done; done; done; echo "sanitizer $ok of $n clean"
mapfile -t L < <(grep -E "^(1|8|32)x" bench/conv_3x3.txt)
args=(); for l in "${L[@]}"; do args+=(--conv "$l"); done
for i in 1 2; do $S bench examples/conv/int8_nchw32.sched examples/conv/int8_nhwc.sched "${args[@]}" 2>/dev/null >> $OUT/bench.txt; done
grep -c " ok " $OUT/bench.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for f in int8_nchw32 int8_nhwc; do echo "== $f"; timeout 120 $NCU --metrics gpu__time_duration.sum,sm__cycles_active.avg -k regex:schedc_int8_n --launch-count 1 $S run examples/conv/$f.sched --conv "8x56x56x64 filter 64x3x3 stride 1 pad 1" --no-time 2>&1 | grep -E "gpu__|sm__" ; done
