"""torch._int_mm (cuBLASLt int8 -> int32) at the given shapes, timed as
triton.testing.do_bench times (CUDA events, L2 flushed before each run,
median): the reference figure issue 21 quotes beside schedc's int8 kernels.

    python3 bench/int8_torch.py 4096 8192 4096x4096x1024

Prints one line per shape: shape, median ms, TOPS. A shape torch cannot run
(no GPU, no torch) prints why and exits 0: the figure is context, not a check.
"""
import sys


def parse(shape):
    parts = [int(x) for x in shape.split("x")]
    return parts * 3 if len(parts) == 1 else parts


def main():
    try:
        import torch
        import triton.testing
    except ImportError as e:
        print(f"int8_torch: skipped ({e})")
        return 0
    if not torch.cuda.is_available():
        print("int8_torch: skipped (no CUDA device)")
        return 0
    for shape in sys.argv[1:]:
        m, n, k = parse(shape)
        g = torch.Generator(device="cuda").manual_seed(21)
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda", generator=g)
        # B as nn.Linear's weight (N x K, k contiguous): _int_mm's fast "TN" form.
        b = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda", generator=g).t()
        ms = triton.testing.do_bench(lambda: torch._int_mm(a, b), warmup=50, rep=300,
                                     return_mode="median")
        print(f"torch._int_mm {m}x{n}x{k}  {ms:.4f} ms  {2.0 * m * n * k / ms / 1e9:.1f} TOPS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
