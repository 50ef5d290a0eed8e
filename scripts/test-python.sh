#!/usr/bin/env bash
# The Python module as a user installs it: a fresh virtual environment,
# `pip install .` (scikit-build-core builds the module with CMake and
# nanobind, from PyPI), then pytest on tests/python (GPU tests SKIPPED
# without torch and a device). Part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/pyvenv
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python" -m pip install -q ".[test]"
cd build  # import the installed package, not python/schedc in the tree
"$PWD/pyvenv/bin/python" -m pytest -q -rs ../tests/python
