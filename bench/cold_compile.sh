#!/usr/bin/env bash
# Cold compile of every example (issue 19): NVRTC's time for the whole module
# (every entry in one program, as before entries compiled alone: the same
# source through `schedc run --kernel-source`, which compiles a person's file
# whole) beside the entries a launch at $SHAPE needs, compiled side by side
# (`schedc run`). --no-cache, so both are cold. Works with or without a GPU
# (without one, schedc run compiles and stops). Prints a Markdown table.
#
#   bash bench/cold_compile.sh [FILE...]      SHAPE=4096x4096x4096 by default
set -uo pipefail
cd "$(dirname "$0")/.."
# NVRTC 12.9+ keeps a cache of its own in the driver's compute cache (where a
# driver is installed): a second compile of the same source then takes ~0.2 s
# instead of ~2 (H100 machine, 2026-11-25). Off, so that cold means cold.
export CUDA_CACHE_DISABLE=1
SCHEDC=${SCHEDC:-build/cli/schedc}
[ -x "$SCHEDC" ] || SCHEDC=build-gpu/schedc
SHAPE=${SHAPE:-4096x4096x4096}
files=("$@")
[ ${#files[@]} -eq 0 ] && mapfile -t files < <(find examples -name '*.sched' | sort)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile_ms() { grep -oE 'NVRTC compile [0-9.]+ ms' "$1" | head -1 | grep -oE '[0-9.]+'; }
echo "cold NVRTC compile at $SHAPE, $(nproc) host cores, NVRTC of $SCHEDC"
echo
echo "| schedule | whole module (ms) | entries a launch needs (ms) | entries |"
echo "|---|---|---|---|"
for f in "${files[@]}"; do
  "$SCHEDC" emit "$f" >"$tmp/k.cu" 2>/dev/null || { echo "| $f | emit failed | | |"; continue; }
  "$SCHEDC" run "$f" --shape "$SHAPE" --no-cache --no-time -v --kernel-source "$tmp/k.cu" \
    >/dev/null 2>"$tmp/whole.err"
  "$SCHEDC" run "$f" --shape "$SHAPE" --no-cache --no-time -v >"$tmp/entries.out" 2>"$tmp/entries.err"
  entries=$(grep -oE 'NVRTC compile [0-9.]+ ms for sm_[0-9a]+: .*' "$tmp/entries.err" | head -1 |
    sed -E 's/NVRTC compile [0-9.]+ ms for sm_[0-9a]+: //; s/, cached at.*//; s/ \(cache off\)//')
  echo "| $f | $(compile_ms "$tmp/whole.err") | $(compile_ms "$tmp/entries.err") | $entries |"
done
