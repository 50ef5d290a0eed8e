#!/usr/bin/env python3
"""expect_exit.py CODE CMD ARGS...: run CMD, pass its output through, and
succeed only if it exited with CODE (lit's `not` accepts any failure; the
diagnostics tests pin schedc's exit code 2 for bad input). A crash (signal)
never matches."""
import subprocess
import sys

want = int(sys.argv[1])
rc = subprocess.run(sys.argv[2:]).returncode
if rc != want:
    sys.stderr.write(f"expect_exit.py: expected exit code {want}, got {rc}\n")
    sys.exit(1)
