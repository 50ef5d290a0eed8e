#!/usr/bin/env bash
# Configures build-asan (clang, AddressSanitizer + UBSan, -O1 with line
# tables only) and builds the targets named on the command line. One build
# serves scripts/test-sanitize.sh (schedc_unit_tests) and scripts/test-fuzz.sh
# (fuzz_compile): the dsl, compiler and codegen libraries carry libFuzzer's
# coverage instrumentation too (tests/fuzz/CMakeLists.txt), so they compile
# once for both (the fuzzer had its own RelWithDebInfo build until
# 2026-11-28: about a minute of a 2-core CI machine).
#
# clang, not g++: 121 s against g++'s ~220 s for the same targets (2026-11-27);
# -O1 -g1, which ASan recommends and which compiles much faster than
# RelWithDebInfo.
set -euo pipefail
cd "$(dirname "$0")/.."
# A build-asan configured with another compiler (g++, before 2026-11-27) starts over.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:FILEPATH=.*clang++' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
mkdir -p build-asan
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
  -DSCHEDC_SANITIZE=ON -DSCHEDC_FUZZ=ON >build-asan/cmake.log 2>&1 || { cat build-asan/cmake.log; exit 1; }
cmake --build build-asan --target "$@" -j"$(nproc)"
