"""Issue 20's ratio bar from several rounds of bench/python_check.py and
`schedc bench` run in alternation (bench/gpu_check.sh python): per schedule,
the ratio to torch.matmul in Python and the ratio to cuBLAS in the CLI, each
round's and their medians, and how far apart the medians are. One round
each is at the mercy of the GPU's clocks between the two processes (seen:
13.9% apart once, 2.9% another time, on one H100); the median of rounds
taken in alternation is not.

  python3 bench/python_vs_cli.py --python LOG... --cli TXT...
"""

import argparse
import re
import statistics

PY = re.compile(r"^(\S+\.sched) \S+ \S+: .*: ([0-9.]+)x of torch\.matmul$")
CLI = re.compile(r"^(\S+\.sched)\s+\S+\s+\S+\s+ok\s.*\s([0-9.]+)$")


def ratios(paths, pattern, scale):
    found = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                m = pattern.match(line.strip())
                if m:
                    found.setdefault(m.group(1), []).append(float(m.group(2)) * scale)
    return found


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python", nargs="+", required=True)
    p.add_argument("--cli", nargs="+", required=True)
    args = p.parse_args()
    py = ratios(args.python, PY, 1.0)
    cli = ratios(args.cli, CLI, 0.01)  # "% of cuBLAS"
    worst = 0.0
    for name in sorted(py):
        if name not in cli:
            print(f"{name}: no CLI figure")
            worst = float("inf")
            continue
        mp, mc = statistics.median(py[name]), statistics.median(cli[name])
        apart = abs(mp - mc) / mc
        worst = max(worst, apart)
        print(f"{name}: Python x torch.matmul {', '.join(f'{r:.3f}' for r in py[name])} "
              f"(median {mp:.3f}); CLI x cuBLAS {', '.join(f'{r:.3f}' for r in cli[name])} "
              f"(median {mc:.3f}); medians {100 * apart:.1f}% apart")
    print(f"RATIOS worst {100 * worst:.1f}% apart over {len(args.python)} rounds (bar 3%)")


if __name__ == "__main__":
    main()
