#!/usr/bin/env bash
# The whole test suite in one command (CI runs exactly this): install, build,
# unit tests, golden lit tests, NVRTC compiles of every example, GPU tests
# (SKIPPED without a device), the installed CMake package built against by
# a consumer project, the Python module (pip install . in a fresh venv,
# pytest), random schedules through `schedc emit`,
# sanitizer build of the unit tests, bounded fuzz. Each step prints its time
# on stderr; the whole must stay well under CI's 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() {
  local t=$SECONDS
  "$@"
  echo "test.sh: '$*' took $((SECONDS - t)) s" >&2
}
step scripts/install-deps.sh
# One compile of each library source serves the CMake build and the Python
# module's (pip install . compiles the same sources with the same flags):
# ccache, kept under build/, keyed without the build folder (NOHASHDIR) and
# with paths under the tree made relative to the compile's folder (BASEDIR),
# since the unity sources (CMakeLists.txt) live in each build's own folder,
# build/ and build-python/, one level deep both (scripts/test-python.sh).
# ccache keys on the compiler's name too, so both builds name g++.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR=$PWD/build/ccache CCACHE_NOHASHDIR=1
  export CCACHE_BASEDIR=$PWD
  export CXX=${CXX:-g++}
fi
step scripts/build.sh
step bash -c 'set -o pipefail; ctest --test-dir build --output-on-failure -j"$(nproc)" | tee build/ctest.log' 
step scripts/test-package.sh
step scripts/test-python.sh
step python3 scripts/test-random-emit.py --count "${SCHEDC_RANDOM_EMIT_COUNT:-300}"
if [ -x scripts/test-sanitize.sh ]; then step scripts/test-sanitize.sh; fi
if [ -x scripts/test-fuzz.sh ]; then step scripts/test-fuzz.sh; fi
echo "test.sh: all passed in $((SECONDS - start)) s" >&2
# One closing line with ctest's counts (GPU tests count as skipped here).
total=$(grep -oE 'tests failed out of [0-9]+' build/ctest.log | grep -oE '[0-9]+$')
failed=$(grep -oE '[0-9]+ tests failed out of' build/ctest.log | grep -oE '^[0-9]+')
skipped=$(grep -c '\*\*\*Skipped' build/ctest.log || true)
echo "ctest: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
