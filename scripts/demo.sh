#!/usr/bin/env bash
# The main job in one command: install, build, and run the best f32 schedule
# (check, emit, compile, run, validate against cuBLAS, time beside it). On a
# machine with no GPU, schedc prints the checked schedule and the generated
# kernel, then says there is no CUDA device and exits 3.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
exec build/cli/schedc run examples/sgemm_best.sched "$@"
