#!/usr/bin/env python3
"""Per-block timeline of a kernel: which SM ran each block, when it started and ended.

    bench/block_trace.py write SRC.cu OUT.cu    (no GPU needed)
    schedc run F.sched --kernel-source OUT.cu --shape S > trace.txt   (on the GPU)
    bench/block_trace.py analyze trace.txt [--launches N]

`write` instruments the main entry of an emitted kernel (the first
`extern "C" __global__` function; the fallback is left alone): thread 0 of
each block reads %globaltimer and %smid at entry, and after the epilogue a
barrier and one printf line `TRACE block sm t_start t_end` (nanoseconds).
The printf adds a small stack frame and, between blocks, a gap of up to
~100 us while the SM drains it, so the kernel's elapsed time is not
representative; the block durations (taken before the printf) are, as far
as the call site leaves the kernel's code alone: it did not in a
warp-specialized wgmma kernel (res5 3x3's halo kernel ran 55% slower with
a printf at its end), which bench/conv_timeline.py stamps into a
`__device__` array that `schedc run --print-global` prints instead.

`analyze` splits the lines into launches (512 lines each for a 512-block grid:
launches do not overlap on a stream, so start times sort them apart) and
prints, for the last N launches, block durations per wave of the grid and
per SM. A duration that depends on the SM and stays the same from launch
to launch points at the hardware an SM reaches (instruction fetch, L2
distance) rather than at the block's tile.
"""
import argparse
import collections
import statistics
import sys

from kernel_entry import main_entry


def write(src_path, out_path):
    src = open(src_path).read()
    m, name, end_marker = main_entry(src, src_path, "block_trace.py")
    tid_line = "  const int tid = threadIdx.x;\n"
    if src.find(tid_line, m.start()) < 0:
        sys.exit(f"block_trace.py: {name} has no line '{tid_line.strip()}' to start the trace after")
    start = src.index(tid_line, m.start()) + len(tid_line)
    head = ('  unsigned long long trace_t0;\n  unsigned trace_sm;\n'
            '  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(trace_t0));\n'
            '  asm volatile("mov.u32 %0, %%smid;" : "=r"(trace_sm));\n')
    tail = ('  __syncthreads();  // block_trace: every thread has stored its part of C\n'
            '  if (tid == 0) {\n    unsigned long long trace_t1;\n'
            '    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(trace_t1));\n'
            '    printf("TRACE %d %u %llu %llu\\n", blockIdx.x, trace_sm, trace_t0, trace_t1);\n'
            '  }\n')
    body_end = src.index(end_marker, start)
    if "return;" in src[start:body_end]:
        sys.exit("block_trace.py: the entry returns early; the trace would miss blocks")
    out = src[:start] + head + src[start:body_end] + tail + src[body_end:]
    open(out_path, "w").write(out)
    print(f"{out_path}: {name} instrumented")


def duration_us(row):
    return (row[3] - row[2]) / 1e3


def analyze(path, launches):
    rows = []
    for line in open(path):
        if line.startswith("TRACE"):
            _, b, sm, t0, t1 = line.split()
            rows.append((int(b), int(sm), int(t0), int(t1)))
    if not rows:
        sys.exit("block_trace.py: no TRACE lines in " + path)
    grid = max(r[0] for r in rows) + 1
    rows.sort(key=lambda r: r[2])
    if len(rows) % grid:
        sys.exit(f"block_trace.py: {len(rows)} lines is not a whole number of {grid}-block launches")
    runs = [rows[i:i + grid] for i in range(0, len(rows), grid)]
    sms = len({r[1] for r in rows})
    launches = min(launches, len(runs))
    print(f"{len(runs)} launches of {grid} blocks on {sms} SMs; the last {launches}:")
    per_sm = collections.defaultdict(list)
    for run in runs[-launches:]:
        t0 = min(r[2] for r in run)
        elapsed = (max(r[3] for r in run) - t0) / 1e3
        dur = [duration_us(r) for r in run]
        print(f"  elapsed {elapsed:.1f} us; block duration median {statistics.median(dur):.1f}, "
              f"min {min(dur):.1f}, max {max(dur):.1f} us")
        by_start = sorted(run, key=lambda r: r[2])
        for w in range(0, grid, sms):
            wave = by_start[w:w + sms]
            d = sorted(duration_us(r) for r in wave)
            print(f"    wave {w // sms}: {len(wave)} blocks, start {(wave[0][2] - t0) / 1e3:.1f}-"
                  f"{(wave[-1][2] - t0) / 1e3:.1f} us, duration {d[0]:.0f} / {statistics.median(d):.0f}"
                  f" / {d[-1]:.0f} us (min / median / max)")
        for r in run:
            per_sm[r[1]].append(duration_us(r))
    med = {sm: statistics.median(v) for sm, v in per_sm.items()}
    fastest = min(med.values())
    print(f"per SM, median block duration over those launches (fastest SM {fastest:.0f} us):")
    slow = sorted(med.items(), key=lambda x: -x[1])
    print("  slowest: " + ", ".join(f"SM {sm} {v:.0f}" for sm, v in slow[:16]))
    print(f"  mean over SMs {statistics.mean(med.values()):.0f} us, "
          f"SMs more than 5% slower than the fastest: {sum(v > 1.05 * fastest for v in med.values())}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("write")
    w.add_argument("src")
    w.add_argument("out")
    a = sub.add_parser("analyze")
    a.add_argument("trace")
    a.add_argument("--launches", type=int, default=3)
    args = ap.parse_args()
    if args.what == "write":
        write(args.src, args.out)
    else:
        analyze(args.trace, args.launches)


if __name__ == "__main__":
    main()
