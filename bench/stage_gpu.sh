#!/usr/bin/env bash
# Builds schedc and its GPU tests here (no GPU needed) and copies stripped
# binaries into build-gpu/ (a few MB: the device tool carries at most 64 MiB,
# and build/ is larger). Then, on the GPU machine:
#   bash bench/gpu_check.sh [SECTION...]        with carry = ["build-gpu"]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target schedc schedc_gpu_tests schedc_api_tests \
  schedc_api_conv_tests
mkdir -p build-gpu
strip -o build-gpu/schedc "$BUILD_DIR/cli/schedc"
strip -o build-gpu/schedc_gpu_tests "$BUILD_DIR/tests/schedc_gpu_tests"
# The library API's tests and libschedc (run with LD_LIBRARY_PATH=build-gpu).
strip -o build-gpu/schedc_api_tests "$BUILD_DIR/tests/schedc_api_tests"
strip -o build-gpu/schedc_api_conv_tests "$BUILD_DIR/tests/schedc_api_conv_tests"
strip -o build-gpu/libschedc.so.0.3 "$BUILD_DIR/api/libschedc.so.0.3"
# The header-only libraries and their CMake files, for building the Python
# module there (gpu_check.sh python): that machine has no package registry.
rm -rf build-gpu/deps && mkdir -p build-gpu/deps/include build-gpu/deps/share/cmake
cp -r /usr/include/tao /usr/include/CLI /usr/include/nlohmann build-gpu/deps/include/
cp -r /usr/share/pegtl build-gpu/deps/share/
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json build-gpu/deps/share/cmake/
# lit and FileCheck (llvm-14-tools) with the two libraries FileCheck needs, so
# that gpu_check.sh lit runs the lit tests that REQUIRE cuda there (that
# machine has neither; ~24 MB of the 64 MiB the device tool carries).
rm -rf build-gpu/lit-tools
if [ -x /usr/lib/llvm-14/bin/FileCheck ] && [ -f /usr/lib/llvm-14/build/utils/lit/lit.py ]; then
  mkdir -p build-gpu/lit-tools/lib
  cp /usr/lib/llvm-14/bin/FileCheck build-gpu/lit-tools/
  cp -r /usr/lib/llvm-14/build/utils/lit/lit /usr/lib/llvm-14/build/utils/lit/lit.py build-gpu/lit-tools/
  for l in $(ldd /usr/lib/llvm-14/bin/FileCheck | awk '/libz3|libtinfo/ {print $3}'); do
    cp -L "$l" build-gpu/lit-tools/lib/
  done
  strip build-gpu/lit-tools/lib/* 2>/dev/null || true
fi
git rev-parse HEAD > build-gpu/COMMIT 2>/dev/null || true
ls -la build-gpu
