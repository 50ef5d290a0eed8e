#!/usr/bin/env bash
# The whole test suite in one command (CI runs exactly this): install, build,
# unit tests, golden lit tests, NVRTC compiles of every example, GPU tests
# (SKIPPED without a device), sanitizer build of the unit tests, bounded fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [ -x scripts/test-sanitize.sh ]; then scripts/test-sanitize.sh; fi
if [ -x scripts/test-fuzz.sh ]; then scripts/test-fuzz.sh; fi
