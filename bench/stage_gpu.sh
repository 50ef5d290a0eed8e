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
git rev-parse HEAD > build-gpu/COMMIT 2>/dev/null || true
ls -la build-gpu
