#!/usr/bin/env python3
"""Landmarks of a warp-specialized wgmma kernel's CTAs: when each one's copies land and its sums end.

    bench/conv_timeline.py write SRC.cu OUT.cu [--launch N]   (no GPU needed)
    schedc run F.sched --kernel-source OUT.cu --print-global conv_timeline_stamps \
        [--conv SPEC] [--graph 20] > stamps.txt                  (on the GPU)
    bench/conv_timeline.py analyze stamps.txt

`write` instruments the main entry of an emitted wgmma kernel (the first
`extern "C" __global__` function: a `halo`, `split_k` or plain convolution
or GEMM with `warp_specialize`): the first consumer thread (threadIdx.x
128) reads %globaltimer at the kernel's start, when its first and its last
k-tile have landed (the stage's `full` wait passed; a persistent kernel's
last tile's), when its last wgmma has finished, after the split's sums
(where the kernel has `split_k`) and at the end. The CTAs of launch N
(counted from 0; default 3, a warm one: the first launch finds the input,
the filters and the instructions cold, which puts its first k-tile
microseconds late) write a row each of the `__device__` array
conv_timeline_stamps (cta, split rank, t0 .. t5 in nanoseconds; at most
2048 CTAs), which `schedc run --print-global` prints after the run. A CTA
knows its launch by a ticket it takes from a device counter at its end,
past its griddepcontrol.wait (which returns once the grid ahead has
completed, even where programmatic dependent launch started it early), so
launch N's CTAs draw tickets N * grid .. (N + 1) * grid - 1.

No printf: a kernel that calls it ran 55% slower (ptxas's code for the
call, not the printing), where these stamps cost ~6% (res5 3x3 b8's halo
kernel on an H100, graph-timed: 4.87 us as emitted, 5.1-5.2 stamped, 7.6
with a printf; bench/NOTES.md, session 48). The start is stamped before
the kernel's griddepcontrol.wait: with programmatic dependent launch it
includes the wait for the grid ahead.

`analyze` prints each landmark's mean and latest time over the CTAs, in
nanoseconds after the earliest start.
"""
import argparse
import re
import sys

from kernel_entry import main_entry

MAX_CTAS = 2048  # rows of conv_timeline_stamps
NAMES = ["start", "first k-tile", "last k-tile", "wgmma done", "sums", "end"]


def insert_after(src, anchor, text, what, name):
    if src.count(anchor) != 1:
        sys.exit(f"conv_timeline.py: {name} has {src.count(anchor)} lines '{anchor.strip()}' "
                 f"({what}), not one")
    return src.replace(anchor, anchor + text)


def write(src_path, out_path, launch):
    src = open(src_path).read()
    m, name, end_marker = main_entry(src, src_path, "conv_timeline.py")
    end_marker = "\n" + end_marker  # the entry's own closing line, at a line's start
    wait = re.search(r"\n( +)mbar_wait\(full_bar \+ 8 \* stage, \(it / (\d+)\) & 1\);"
                     r"  // its bytes have landed\n", src)
    if not wait:
        sys.exit(f"conv_timeline.py: {name} has no consumer's wait on a stage's full barrier "
                 "(a warp-specialized wgmma kernel's k loop)")
    head = ('__device__ unsigned conv_timeline_tickets = 0;\n'
            f'__device__ unsigned long long conv_timeline_stamps[{MAX_CTAS} * 8];\n'
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
           "  unsigned long long stamp[6] = {conv_timeline_now(), 0, 0, 0, 0, 0};"
           "  // conv_timeline\n" +
           src[line_end:])
    pad = wait.group(1)
    src = insert_after(src, wait.group(0),
                       f"{pad}if (threadIdx.x == 128 && k_tile == 0)\n"
                       f"{pad}  stamp[1] = conv_timeline_now();\n"
                       f"{pad}if (threadIdx.x == 128 && k_tile == num_k_tiles - 1)\n"
                       f"{pad}  stamp[2] = conv_timeline_now();\n",
                       "the consumer's k loop", name)
    split = "      #undef SPLIT_ACC\n" in src  # split_k: the sums have a stamp of their own
    done = "stamp[3]" if split else "stamp[3] = stamp[4]"  # without a split, no sums
    src = insert_after(src, "} // k_tile\n      wgmma_wait<0>();\n",
                       f"      if (threadIdx.x == 128) {done} = conv_timeline_now();\n",
                       "the k loop's end", name)
    if split:
        src = insert_after(src, "      #undef SPLIT_ACC\n",
                           "      if (threadIdx.x == 128) stamp[4] = conv_timeline_now();\n",
                           "the split's sums", name)
    rank = "split_rank" if split else "0"
    end = (f"  if (threadIdx.x == 128) {{  // conv_timeline: launch {launch}'s CTAs, a row each\n"
           "    stamp[5] = conv_timeline_now();\n"
           "    const unsigned grid = gridDim.x * gridDim.y * gridDim.z;\n"
           f"    const unsigned row = atomicAdd(&conv_timeline_tickets, 1u) - {launch}u * grid;\n"
           f"    if (row < grid && row < {MAX_CTAS}u) {{\n"
           "      unsigned long long* out = conv_timeline_stamps + 8 * row;\n"
           "      out[0] = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
           f"      out[1] = {rank};\n"
           "      for (int i = 0; i < 6; ++i) out[2 + i] = stamp[i];\n"
           "    }\n"
           "  }\n")
    i = src.index(end_marker) + 1
    src = src[:i] + end + src[i:]
    open(out_path, "w").write(src)
    print(f"{out_path}: {name} stamped (stages {wait.group(2)}, launch {launch})")


def analyze(path):
    rows = []
    for line in open(path):
        if line.startswith("conv_timeline_stamps["):
            f = line.split()
            if len(f) != 9:
                sys.exit(f"conv_timeline.py: a row of {len(f) - 1} words, not 8: {line.strip()}")
            rows.append([int(x) for x in f[3:]])
    if not rows:
        sys.exit(f"conv_timeline.py: no conv_timeline_stamps rows in {path} (schedc run "
                 "--print-global conv_timeline_stamps prints them)")
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
    w.add_argument("--launch", type=int, default=3,
                   help="the launch whose CTAs print (from 0; default 3, a warm one)")
    a = sub.add_parser("analyze")
    a.add_argument("stamps")
    args = ap.parse_args()
    if args.cmd == "write":
        if args.launch < 0:
            sys.exit("conv_timeline.py: --launch counts from 0")
        write(args.src, args.out, args.launch)
    else:
        analyze(args.stamps)


if __name__ == "__main__":
    main()
