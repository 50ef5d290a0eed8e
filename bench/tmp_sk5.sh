#!/bin/bash
S=build-gpu/schedc
timeout 120 build-gpu/schedc_gpu_tests --gtest_filter='*int8_nhwc_split_k*-*Nvrtc*' > $OUT/tests.txt 2>&1
echo "tests rc $?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/tests.txt | head; grep -c "OK \]" $OUT/tests.txt
C=bench/candidates
for t in "--graph 20" ""; do
  timeout 40 $S bench examples/conv/int8_nhwc_split_k.sched $C/conv_s8_64x32_s16_split3.sched $C/conv_s8_64x32_s16_split6.sched --conv "1x7x7x512 filter 512x3x3 stride 1 pad 1" $t 2>/dev/null | grep -E "ok|FAIL" | awk '{print $1, $(NF-5), $(NF-3), $(NF-1), $NF}'
done
