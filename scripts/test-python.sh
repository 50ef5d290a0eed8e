#!/usr/bin/env bash
# The Python module as a user installs it: a fresh virtual environment,
# `pip install .` (scikit-build-core builds the module with CMake and
# nanobind, from PyPI), then pytest on tests/python (GPU tests SKIPPED
# without torch and a device). Part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# The module's build takes the CMake build's generator: with Ninja a compile
# runs in the build folder, with Makefiles in the target's folder, and the
# paths in its command (which ccache hashes) follow.
gen=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' build/CMakeCache.txt 2>/dev/null || true)
if [ -n "$gen" ]; then export CMAKE_GENERATOR="$gen"; fi
venv=build/pyvenv
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python" -m pip install -q ".[test]"
cd build  # import the installed package, not python/schedc in the tree
"$PWD/pyvenv/bin/python" -m pytest -q -rs ../tests/python
