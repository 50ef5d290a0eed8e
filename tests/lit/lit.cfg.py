# lit configuration for schedc's golden tests: each .sched file under
# tests/lit is a test, with its RUN: and CHECK: lines in comments.
import os
import subprocess

import lit.formats

config.name = "schedc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".sched", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.schedc_bin), "..", "tests", "lit-out")
config.excludes = ["inputs", "lit.cfg.py", "lit.site.cfg.py.in"]

config.substitutions.append(("%schedc", config.schedc_bin))
config.substitutions.append(("%examples", os.path.join(config.schedc_source_dir, "examples")))
config.substitutions.append(("FileCheck", config.filecheck))
# `%expect_exit CODE CMD…` pins an exact exit code (lit's `not` accepts any).
config.substitutions.append(
    ("%expect_exit", "python3 " + os.path.join(os.path.dirname(__file__), "diag", "expect_exit.py")))
# `%bounded_run [--exit N --max-seconds S --max-rss-mb M --max-errors N --fifo P --stdin
# --feed T --forever] -- CMD…` pins time, memory and error count (hostile inputs).
config.substitutions.append(
    ("%bounded_run", "python3 " + os.path.join(os.path.dirname(__file__), "diag", "bounded_run.py")))
config.environment["SCHEDC_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")

# GPU-only tests say `REQUIRES: cuda`; they show as UNSUPPORTED without a device.
def has_cuda_device():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20)
        return out.returncode == 0 and b"GPU" in out.stdout
    except Exception:
        return False

# Tests of the no-GPU behaviour (exit 3, "no CUDA device") say `REQUIRES: no-cuda`.
if has_cuda_device():
    config.available_features.add("cuda")
else:
    config.available_features.add("no-cuda")
