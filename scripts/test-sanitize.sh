#!/usr/bin/env bash
# AddressSanitizer + UBSan build of the unit tests (build-asan); runs only the
# schedc_unit_tests binary. Any sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build-asan
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHEDC_SANITIZE=ON \
  >build-asan/cmake.log 2>&1 || { cat build-asan/cmake.log; exit 1; }
cmake --build build-asan --target schedc_unit_tests -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  build-asan/tests/schedc_unit_tests --gtest_brief=1
echo "test-sanitize: unit tests pass under ASan + UBSan"
