"""The main entry of an emitted schedc module, for the tools that instrument it
(bench/block_trace.py, bench/conv_timeline.py)."""
import re
import sys


def main_entry(src, src_path, tool):
    """(the entry's `extern "C" __global__` match, its name, its closing line "} // name\\n"):
    the module's first entry (the fallback and other entries come after it). Exits naming
    `tool` where the source has no entry or the entry no closing line."""
    m = re.search(r'extern "C" __global__ void(?: __launch_bounds__\([^)]*\))?\s+(\w+)\(', src)
    if not m:
        sys.exit(f"{tool}: no extern \"C\" __global__ entry in {src_path}")
    name = m.group(1)
    end_marker = "} // " + name + "\n"
    if end_marker not in src:
        sys.exit(f"{tool}: the entry's closing line '{end_marker.strip()}' is missing")
    return m, name, end_marker
