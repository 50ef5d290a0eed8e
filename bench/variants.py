#!/usr/bin/env python3
"""Hand edits of a schedule's emitted CUDA, timed beside the unedited kernel.

    bench/variants.py write [--schedule F] [--out DIR]     (no GPU needed)
    bench/variants.py time  [--schedule F] [--out DIR] [--shapes S] [--rounds R]

`write` runs `schedc emit` on the schedule and writes DIR/base.cu plus one
file per edit below; each is then compiled here by `schedc run
--kernel-source` (NVRTC, no GPU), which prints its registers and spills.
`time` (on the GPU machine) runs `schedc run --kernel-source` for every file
and shape, round-robin over the files `--rounds` times so that drift in the
card's clocks reaches all of them alike, and prints a table of medians and
ratios to cuBLAS (each timed beside cuBLAS in its own process).

An edit that fails to apply (the emitted text changed) is an error: the
edits are tried ideas for what codegen could emit, kept to be re-measured,
not code anyone runs in production. What each one tests:

  l2_128      cp.async with the .L2::128B prefetch hint (cuBLAS's SIMT kernel
              issues its copies that way: LDGSTS.E.LTC128B in its SASS)
  l2_256      the same with .L2::256B
  copies_last every warp issues the next tile's copies at the last k-step,
              just before the wait and the barrier (where cuBLAS's SIMT kernel
              issues them), instead of at steps 0 and BK/4
  l2_128+copies_last  both
  unroll8     the main entry's k-step loop as two passes of 8 unrolled steps:
              half the loop's code (ncu: sgemm_best stalls on instruction
              fetch, cuBLAS hardly at all)
  fma_pairs   the FMAs of a step ordered two columns at a time, serpentine
              over the rows, so both fragment operands stay in the operand
              reuse caches (cuBLAS's order); ptxas may reorder anyway
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def schedc():
    """$SCHEDC, else the newer of build-gpu/schedc and build/cli/schedc."""
    if os.environ.get("SCHEDC"):
        return os.environ["SCHEDC"]
    found = [os.path.join(ROOT, p) for p in ("build-gpu/schedc", "build/cli/schedc")]
    found = [p for p in found if os.access(p, os.X_OK)]
    if not found:
        sys.exit("variants.py: no schedc binary (run scripts/build.sh or bench/stage_gpu.sh)")
    return max(found, key=os.path.getmtime)


def replace_once(text, old, new, edit):
    if text.count(old) < 1:
        sys.exit(f"variants.py: edit '{edit}' no longer applies: text not found:\n{old}")
    return text.replace(old, new)


def l2_prefetch(size):
    def edit(src):
        n = len(re.findall(r"cp\.async\.c[ag]\.shared\.global \[", src))
        if n == 0:
            sys.exit("variants.py: edit 'l2_*': no cp.async in the source")
        return re.sub(r"(cp\.async\.c[ag]\.shared\.global)( \[)", rf"\1.L2::{size}B\2", src)
    return edit


def copies_last(src):
    src = replace_once(src, "if ((kk == 0 && !copies_late) || (kk == COPY_LATE_STEP && copies_late)) {",
                       "if (kk == BK - 1) {", "copies_last")
    return replace_once(src, "if (kk == COPY_LATE_STEP) cp_async_commit();",
                        "if (kk == BK - 1) cp_async_commit();", "copies_last")


def fma_pairs(src):
    old = """      for (int j = 0; j < TN; ++j) {
        #pragma unroll
        for (int i = 0; i < TM; ++i) rC[i][j] += rA[kk % 2][i] * rB[kk % 2][j];
      }"""
    new = """      for (int j = 0; j < TN; j += 2) {
        #pragma unroll
        for (int ii = 0; ii < TM; ++ii) {
          const int i = j / 2 % 2 ? TM - 1 - ii : ii;
          rC[i][j] += rA[kk % 2][i] * rB[kk % 2][j];
          rC[i][j + 1] += rA[kk % 2][i] * rB[kk % 2][j + 1];
        }
      }"""
    return replace_once(src, old, new, "fma_pairs")


def unroll8(src):
    # Main entry only (the first k-loop); the fallback keeps its full unroll.
    old = "    #pragma unroll\n    for (int kk = 0; kk < BK; ++kk) {"
    if old not in src:
        sys.exit("variants.py: edit 'unroll8' no longer applies")
    i = src.index(old)
    # Two passes of 8 fully unrolled steps; kk's parity (the fragment slot) stays static.
    new = ("    #pragma unroll 1\n    for (int half = 0; half < BK / 8; ++half)\n"
           "    #pragma unroll\n    for (int k8 = 0; k8 < 8; ++k8) {\n"
           "      const int kk = half * 8 + k8;")
    return src[:i] + new + src[i + len(old):]


EDITS = {
    "l2_128": l2_prefetch(128),
    "l2_256": l2_prefetch(256),
    "copies_last": copies_last,
    "fma_pairs": fma_pairs,
    "l2_128+copies_last": lambda src: copies_last(l2_prefetch(128)(src)),
    "unroll8": unroll8,
}


def write(args):
    os.makedirs(args.out, exist_ok=True)
    base = subprocess.run([schedc(), "emit", args.schedule], check=True, capture_output=True,
                          text=True).stdout
    files = {"base": base}
    for name, edit in EDITS.items():
        files[name] = edit(base)
    for name, text in files.items():
        path = os.path.join(args.out, name + ".cu")
        with open(path, "w") as f:
            f.write(text)
        # Compile (NVRTC) and, on a GPU, validate at 1x1x1: registers, spills, stack per
        # entry. Without a GPU schedc exits 3 after compiling ("no CUDA device").
        r = subprocess.run([schedc(), "run", args.schedule, "--kernel-source", path,
                            "--shape", "1x1x1", "--no-time", "--verbose"],
                           capture_output=True, text=True)
        info = [l for l in r.stdout.splitlines() if l.startswith("NVRTC")]
        info += [l for l in r.stderr.splitlines() if l.startswith("ptxas:")]
        if r.returncode not in (0, 3) or not info:
            sys.exit(f"variants.py: {path}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        print(f"{path}: " + "; ".join(info))


def time(args):
    names = ["base"] + list(EDITS)
    shapes = args.shapes.split(",")
    runs = {}  # (name, shape) -> [(ms, percent)]
    for rnd in range(args.rounds):
        for shape in shapes:
            s = shape if "x" in shape else f"{shape}x{shape}x{shape}"
            for name in names:
                path = os.path.join(args.out, name + ".cu")
                r = subprocess.run([schedc(), "run", args.schedule, "--kernel-source", path,
                                    "--shape", s, "--json"], capture_output=True, text=True)
                try:
                    j = json.loads(r.stdout)
                except json.JSONDecodeError:
                    j = {"ok": False, "failure": r.stderr.strip()[-300:]}
                if not j.get("ok"):
                    why = j.get("failure") or j.get("error") or f"exit {r.returncode}"
                    print(f"{name} {s}: FAILED: {why}", file=sys.stderr)
                    runs.setdefault((name, s), []).append(None)
                    continue
                runs.setdefault((name, s), []).append(
                    (j["time_ms"]["median"], j["percent_of_cublas"]))
                print(f"round {rnd} {name:12s} {s}: {j['time_ms']['median']:.4f} ms "
                      f"{j['percent_of_cublas']:.1f}% of cuBLAS", file=sys.stderr)
    failed = False
    print(f"{'variant':12s} {'shape':16s} {'ms (median of rounds)':>22s} {'% of cuBLAS':>24s}")
    for (name, s), v in runs.items():
        good = [x for x in v if x]
        if len(good) < len(v):
            print(f"{name:12s} {s:16s} {'FAILED':>22s}")
            failed = True
            continue
        ms = statistics.median(x[0] for x in good)
        pct = [x[1] for x in good]
        print(f"{name:12s} {s:16s} {ms:22.4f} {statistics.median(pct):10.1f} "
              f"({min(pct):.1f}-{max(pct):.1f})")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["write", "time"])
    ap.add_argument("--schedule", default=os.path.join(ROOT, "examples/sgemm_best.sched"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out/variants"))
    ap.add_argument("--shapes", default="4096,8192,4095x4097x1023")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    sys.exit(write(args) if args.what == "write" else time(args))


if __name__ == "__main__":
    main()
