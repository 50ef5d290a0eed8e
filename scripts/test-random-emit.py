#!/usr/bin/env python3
"""test-random-emit.py [--count N] [--seed S] [--schedc PATH] [--keep DIR]

Writes N random, valid-looking .sched files (random combinations of
directives and values, biased towards schedules that pass analysis), runs
`schedc emit` on each (sm_90, and sm_80 for every other one) and reports every
file that analysis accepted but lowering or codegen then failed on: exit code
3, or "internal error" in the output. Such a file is a schedc bug: either
analysis is missing a rule or the lowering is wrong.

Exit 0 when none is found, 1 otherwise (each failing schedule is printed and,
with --keep, written to DIR). Exit codes 0 (emitted) and 2 (rejected by
analysis, with a diagnostic) are both fine here."""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def pick(r, *xs):
    return r.choice(xs)


def random_schedule(r):
    lines = []
    tc = r.random() < 0.6
    dtype = "f32"
    if tc:
        dtype = pick(r, "f32", "f16", "f16", "bf16")
    elif r.random() < 0.03:
        dtype = pick(r, "f16", "bf16")  # rejected: SIMT computes in f32 only
    if dtype != "f32" or r.random() < 0.5:
        lines.append(f"dtype {dtype}")
    if r.random() < 0.3:
        lines.append("shape %dx%dx%d" % (r.randint(1, 5000), r.randint(1, 5000), r.randint(1, 5000)))
    if r.random() < 0.05:
        lines.append("block %dx%d" % (pick(r, 8, 16, 32, 64), pick(r, 1, 2, 4, 8, 16)))
        return lines
    bm = pick(r, 16, 32, 64, 64, 128, 128, 256)
    bn = pick(r, 16, 32, 64, 64, 128, 128, 256)
    bk = pick(r, 4, 8, 8, 16, 16, 32, 32, 64)
    lines.append(f"tile {bm}x{bn}x{bk}")
    if tc:
        api = pick(r, "mma", "wmma")
        typ = {"f32": "tf32", "f16": "f16", "bf16": "bf16"}[dtype]
        if r.random() < 0.03:
            typ = pick(r, "tf32", "f16", "bf16")
        shape = ""
        if r.random() < 0.6:
            if api == "mma":
                shape = " " + pick(r, "m16n8k8", "m16n8k4") if typ == "tf32" else " " + pick(
                    r, "m16n8k16", "m16n8k8")
            else:
                shape = " 16x16x8" if typ == "tf32" else " " + pick(r, "16x16x16", "32x8x16",
                                                                   "8x32x16")
        lines.append(f"{api} {typ}{shape}")
        wm = pick(r, 16, 32, 32, 64, 64, 128)
        wn = pick(r, 8, 16, 32, 32, 64, 64, 128)
        lines.append(f"warp {min(wm, bm)}x{min(wn, bn)}")
    else:
        tm = pick(r, 1, 2, 4, 4, 8, 8)
        tn = pick(r, 1, 2, 4, 4, 8, 8)
        th = f"thread {tm}x{tn}"
        if r.random() < 0.2:
            th += " split %dx%d" % (pick(r, 1, 2), pick(r, 1, 2))
        if r.random() < 0.9:
            lines.append(th)
        if r.random() < 0.25:
            lines.append("warp %dx%d" % (tm * pick(r, 4, 8, 2, 16), tn * pick(r, 8, 4, 16, 2)))
    if r.random() < 0.7:
        lines.append("vectorize %d" % pick(r, 1, 2, 4, 4, 8))
    for op in "AB":
        if r.random() < 0.15:
            lines.append(f"transpose {op}")
    swz = r.random() < 0.25
    if swz:
        lines.append("swizzle smem")
    else:
        for op in "AB":
            if r.random() < 0.3:
                lines.append("pad %s %d" % (op, pick(r, 0, 1, 2, 3, 4, 8, 16)))
    if r.random() < 0.3:
        lines.append("swizzle block %d" % pick(r, 1, 2, 4, 8, 16))
    if r.random() < 0.2:
        lines.append("stream_k")
    p = r.random()
    if p < 0.2:
        lines.append("double_buffer")
    elif p < 0.6:
        lines.append("stages %d" % pick(r, 2, 3, 4, 5))
    if r.random() < 0.3:
        items = []
        if r.random() < 0.5:
            items.append("alpha %s" % pick(r, "1", "0.5", "-2"))
        if r.random() < 0.5:
            items.append("beta %s" % pick(r, "0", "1", "0.5"))
        if r.random() < 0.5:
            items.append("bias")
        if r.random() < 0.5 or not items:
            items.append("relu")
        r.shuffle(items)
        lines.append("epilogue " + " ".join(items))
    r.shuffle(lines)
    return lines


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--schedc", default=os.path.join(root, "build", "cli", "schedc"))
    ap.add_argument("--keep", help="write each failing schedule to this folder")
    a = ap.parse_args()
    r = random.Random(a.seed)
    counts = {0: 0, 2: 0}
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.count):
            text = "\n".join(random_schedule(r)) + "\n"
            path = os.path.join(tmp, f"r{i}.sched")
            with open(path, "w") as f:
                f.write(text)
            arch = "sm_80" if i % 2 else "sm_90"
            p = subprocess.run([a.schedc, "emit", path, "--arch", arch], capture_output=True,
                               text=True, errors="replace")
            internal = "internal error" in (p.stdout + p.stderr).lower()
            if p.returncode in counts and not internal:
                counts[p.returncode] += 1
                continue
            bad.append((i, arch, p.returncode, text, p.stderr.strip()[-600:]))
    for i, arch, rc, text, err in bad:
        print(f"--- schedule {i} ({arch}): exit {rc}\n{text}{err}\n")
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            with open(os.path.join(a.keep, f"r{i}.sched"), "w") as f:
                f.write(text)
    print(f"test-random-emit: {a.count} schedules, {counts[0]} emitted, {counts[2]} rejected by "
          f"analysis, {len(bad)} failed after analysis (seed {a.seed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
