set -u
export LD_LIBRARY_PATH=$PWD/build-gpu
build-gpu/schedc_api_conv_tests --gtest_color=no 2>&1 | grep -E "^\[  (PASSED|FAILED) "
CONV_SPECS="1x14x14x64 filter 64x3x3 stride 1 pad 1" PYTHON_ROUNDS=0 BUDGET_S=540 bash bench/gpu_check.sh conv python 2>&1 | tail -8
grep -E "nchw32|NCHW32" $OUT/*/python-tests.log /tmp/gpu_check*/python-tests.log 2>/dev/null | head
