#!/usr/bin/env bash
# The installed CMake package, as a user's project sees it: `cmake --install`
# the build into a fresh prefix, then configure, build and run
# tests/package/ (find_package(schedc CONFIG REQUIRED)) against that prefix
# alone. Part of scripts/test.sh; needs scripts/build.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
prefix=$BUILD_DIR/package/prefix consumer=$BUILD_DIR/package/consumer
rm -rf "$BUILD_DIR/package"
cmake --install "$BUILD_DIR" --prefix "$prefix" >/dev/null
test -f "$prefix/include/schedc/schedc.h" && test -x "$prefix/bin/schedc"
cmake -S tests/package -B "$consumer" -DCMAKE_PREFIX_PATH="$PWD/$prefix" >/dev/null
cmake --build "$consumer" >/dev/null
"$consumer/consumer"
