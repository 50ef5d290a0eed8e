#!/usr/bin/env python3
"""Landmarks of a warp-specialized wgmma kernel's CTAs: when each one's copies land and its sums end.

    bench/conv_timeline.py write SRC.cu OUT.cu       (no GPU needed)
    schedc run F.sched --kernel-source OUT.cu [--conv SPEC] > stamps.txt   (on the GPU)
    bench/conv_timeline.py analyze stamps.txt

`write` instruments the main entry of an emitted wgmma kernel (the first
`extern "C" __global__` function: a `halo`, `split_k` or plain convolution
or GEMM with `warp_specialize`): the first consumer thread (threadIdx.x
128) reads %globaltimer at the kernel's start, when its first and its last
k-tile have landed (the stage's `full` wait passed; a persistent kernel's
last tile's), when its last wgmma has finished, after the split's sums (where the kernel has `split_k`) and at the
end, and the first launch's CTAs print one line each, `STAMP cta rank t0 ..
t5` (nanoseconds). The same landmarks as bench/probe_halo.cu's, to set
schedc's kernel beside the probe on one card (bench/NOTES.md, session 47).

`analyze` prints each landmark's mean and latest time over the CTAs, in
nanoseconds after the earliest start.
"""
import argparse
import re
import sys

from kernel_entry import main_entry

NAMES = ["start", "first k-tile", "last k-tile", "wgmma done", "sums", "end"]


def insert_after(src, anchor, text, what, name):
    if src.count(anchor) != 1:
        sys.exit(f"conv_timeline.py: {name} has {src.count(anchor)} lines '{anchor.strip()}' "
                 f"({what}), not one")
    return src.replace(anchor, anchor + text)


def write(src_path, out_path):
    src = open(src_path).read()
    m, name, end_marker = main_entry(src, src_path, "conv_timeline.py")
    end_marker = "\n" + end_marker  # the entry's own closing line, at a line's start
    wait = re.search(r"\n( +)mbar_wait\(full_bar \+ 8 \* stage, \(it / (\d+)\) & 1\);"
                     r"  // its bytes have landed\n", src)
    if not wait:
        sys.exit(f"conv_timeline.py: {name} has no consumer's wait on a stage's full barrier "
                 "(a warp-specialized wgmma kernel's k loop)")
    head = ('__device__ unsigned conv_timeline_prints = 0;\n'
            '__device__ __forceinline__ unsigned long long conv_timeline_now() {\n'
            '  unsigned long long t;\n'
            '  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));\n'
            '  return t;\n'
            '}\n')
    src = src[:m.start()] + head + src[m.start():]
    if src.count("  constexpr int THREADS = ") != 1:
        sys.exit(f"conv_timeline.py: {name} has no one line 'constexpr int THREADS = ...' to "
                 "start the stamps after")
    line_end = src.index("\n", src.index("  constexpr int THREADS = ")) + 1
    src = (src[:line_end] +
           "  unsigned long long stamp[6] = {conv_timeline_now(), 0, 0, 0, 0, 0};  // conv_timeline\n" +
           src[line_end:])
    pad = wait.group(1)
    src = insert_after(src, wait.group(0),
                       f"{pad}if (k_tile == 0) stamp[1] = conv_timeline_now();\n"
                       f"{pad}if (k_tile == num_k_tiles - 1) stamp[2] = conv_timeline_now();\n",
                       "the consumer's k loop", name)
    split = "      #undef SPLIT_ACC\n" in src  # split_k: the sums have a stamp of their own
    src = insert_after(src, "} // k_tile\n      wgmma_wait<0>();\n",
                       "      stamp[3] = conv_timeline_now();\n" if split else
                       "      stamp[3] = stamp[4] = conv_timeline_now();\n", "the k loop's end", name)
    if split:
        src = insert_after(src, "      #undef SPLIT_ACC\n", "      stamp[4] = conv_timeline_now();\n",
                           "the split's sums", name)
    rank = "split_rank" if split else "0"
    end = ("  if (threadIdx.x == 128) {  // conv_timeline: the first launch's CTAs, a line each\n"
           "    stamp[5] = conv_timeline_now();\n"
           "    if (atomicAdd(&conv_timeline_prints, 1u) < gridDim.x * gridDim.y * gridDim.z)\n"
           "      printf(\"STAMP %u %d %llu %llu %llu %llu %llu %llu\\n\",\n"
           "             (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x, " + rank +
           ",\n             stamp[0], stamp[1], stamp[2], stamp[3], stamp[4], stamp[5]);\n"
           "  }\n")
    i = src.index(end_marker) + 1
    src = src[:i] + end + src[i:]
    open(out_path, "w").write(src)
    print(f"{out_path}: {name} stamped (stages {wait.group(2)})")


def analyze(path):
    rows = []
    for line in open(path):
        if line.startswith("STAMP "):
            f = line.split()
            if len(f) != 9:
                sys.exit(f"conv_timeline.py: a STAMP line of {len(f)} fields, not 9: {line.strip()}")
            rows.append([int(x) for x in f[3:]])
    if not rows:
        sys.exit(f"conv_timeline.py: no STAMP lines in {path}")
    t0 = min(r[0] for r in rows)
    print(f"{len(rows)} CTAs; ns after the earliest start, mean / latest:")
    for i, n in enumerate(NAMES):
        times = [r[i] - t0 for r in rows]
        print(f"  {n:13s} {sum(times) / len(times):7.0f} / {max(times)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("src")
    w.add_argument("out")
    a = sub.add_parser("analyze")
    a.add_argument("stamps")
    args = ap.parse_args()
    if args.cmd == "write":
        write(args.src, args.out)
    else:
        analyze(args.stamps)


if __name__ == "__main__":
    main()
