"""The Python module on a GPU (issue 20's bars), beside torch.matmul:

  1. each schedule on random torch matrices equals torch.matmul within the
     CLI's random-mode tolerance (runtime/validate.cpp: relative Frobenius
     error <= 2^-24 (4 sqrt(K) + 8) + 2 u_out);
  2. time per call of k(a, b, c) and of torch.matmul(a, b, out=c), CUDA
     events, warm-up, median of rounds, the two interleaved: the ratio to
     set beside `schedc bench`'s ratio to cuBLAS in the same call;
  3. the Python side's cost of a warm call: 1000 calls of a small GEMM
     through k(a, b, c) against 1000 through the binding's raw launch
     (integer pointers, no checks), both timed with CUDA events.

  python3 bench/python_check.py [--shape 4096] [SCHEDULE...]
Prints one line per figure; the last line is a summary.
"""

import argparse
import ctypes
import math
import os
import statistics
import sys

import torch

import schedc

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TORCH = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
U_OUT = {"f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}


def tolerance(dtype, k):
    return 2.0**-24 * (4.0 * math.sqrt(k) + 8.0) + 2.0 * U_OUT[dtype]


def rel_err(c, ref):
    c, ref = c.double(), ref.double()
    return (torch.linalg.norm(c - ref) / torch.linalg.norm(ref)).item()


def ms_per_call(fn, calls):
    """CUDA-event time of `calls` back-to-back calls of fn, in ms per call."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(calls):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / calls


def timed_once(fn, flush, gap=True):
    """CUDA-event time of one call of fn, in ms: L2 flushed first (a memset
    of twice the L2), then (`gap`) the GPU held busy for about 50 us
    (torch.cuda._sleep), then the start event, the call, the stop event.

    The gap keeps Python out of the figure: k(a, b, c) spends some 20 us
    enqueueing, and without the gap part of it fell between the events
    (hgemm_best read 0.933-0.975x of torch.matmul in three rounds, 0.980x
    with the gap; H100, 2026-11-26). It also lets the flush's aftermath
    settle, which moves both kernels: hgemm_best and cuBLAS at 4096^3 take
    0.194 and 0.190 ms after it, 0.216 and 0.218 ms right after the flush
    (bench/NOTES.md, "Session 17"). So the CLI's ratio set beside this one
    is timed with the same idle time: `schedc bench` with
    SCHEDC_TIMING_IDLE_US=50 (runtime/timing.h; gpu_check.sh python)."""
    flush.zero_()
    if gap:
        torch.cuda._sleep(100_000)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def time_pair(f, g, min_rounds=20, min_ms=100.0, gap=True):
    """Median ms of one call of f and of g, timed as `schedc bench` times a
    kernel beside cuBLAS: each call alone between its own two events
    (timed_once), f and g alternating, at least `min_rounds` rounds and
    `min_ms` of each. Back-to-back calls under one pair of events (as
    before 2026-11-25) hide the launch gaps but let one call's tail overlap
    the next, and gave ratios 5% off the CLI's for hgemm_best on an H200."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        f(), g()
    torch.cuda.synchronize()
    tf, tg = [], []
    while len(tf) < min_rounds or min(sum(tf), sum(tg)) < min_ms:
        tf.append(timed_once(f, flush, gap))
        tg.append(timed_once(g, flush, gap))
    return statistics.median(tf), statistics.median(tg)


def per_call_us(fn, calls=1000, rounds=5):
    """Median over rounds of microseconds per call, `calls` calls a round."""
    fn()
    torch.cuda.synchronize()
    return statistics.median(ms_per_call(fn, calls) * 1000.0 for _ in range(rounds))


def check_schedule(path, m, n, k):
    kern = schedc.compile_file(path)
    dt = TORCH[kern.dtype]
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn((m, k), device="cuda", generator=g).to(dt)
    b = torch.randn((k, n), device="cuda", generator=g).to(dt)
    c = torch.empty((m, n), device="cuda", dtype=dt)
    ref = torch.empty_like(c)
    kern(a, b, c)
    ref_f32 = torch.matmul(a.float(), b.float())
    err, tol = rel_err(c, ref_f32), tolerance(kern.dtype, k)
    ms_s, ms_t = time_pair(lambda: kern(a, b, c), lambda: torch.matmul(a, b, out=ref))
    flops = 2.0 * m * n * k
    ratio = ms_t / ms_s
    name = os.path.basename(path)
    print(f"{name} {m}x{n}x{k} {kern.dtype}: rel_err {err:.3g} (tolerance {tol:.3g}) "
          f"{'ok' if err <= tol else 'WRONG'}; schedc {flops / ms_s / 1e9:.1f} TFLOP/s, "
          f"torch.matmul {flops / ms_t / 1e9:.1f}: {ratio:.3f}x of torch.matmul")
    ms_sg, ms_tg = time_pair(lambda: kern(a, b, c), lambda: torch.matmul(a, b, out=ref), gap=False)
    print(f"  without the gap after the flush: schedc {flops / ms_sg / 1e9:.1f} TFLOP/s, "
          f"torch.matmul {flops / ms_tg / 1e9:.1f}: {ms_tg / ms_sg:.3f}x of torch.matmul")
    try:
        cli = CliCublas()
        ms_s2, ms_c = time_pair(lambda: kern(a, b, c), lambda: cli.gemm(a, b, ref, kern.dtype))
        print(f"  the CLI's baseline from Python ({cli.name} cublasGemmEx): "
              f"{flops / ms_c / 1e9:.1f} TFLOP/s, schedc {flops / ms_s2 / 1e9:.1f}: "
              f"{ms_c / ms_s2:.3f}x of it; cuBLAS loaded: {', '.join(loaded_cublas())}")
    except (OSError, RuntimeError) as e:
        print(f"  the CLI's baseline from Python: not available ({e})")
    # Which of torch's BLAS back ends torch.matmul's figure is (schedc's
    # baseline is cublasGemmEx, runtime/validate.cpp): both, timed the same way.
    pick = getattr(torch.backends.cuda, "preferred_blas_library", None)
    if pick is not None:
        before = pick()
        figures = []
        for lib in ("cublas", "cublaslt"):
            pick(lib)
            _, ms_lib = time_pair(lambda: kern(a, b, c), lambda: torch.matmul(a, b, out=ref))
            figures.append(f"{lib} {flops / ms_lib / 1e9:.1f} TFLOP/s")
        pick(before)
        print(f"  torch.matmul by back end: {', '.join(figures)} (default: {before})")
    return err <= tol, ratio


class CliCublas:
    """The CLI's baseline called from Python: cublasGemmEx from the cuBLAS
    `schedc bench` loads (libcublas.so.13, the toolkit schedc is built
    against), with the CLI's handle setup and arguments (runtime/run.cpp,
    runtime/validate.cpp: 32 MiB workspace, row-major C = A B as
    column-major C^T = B^T A^T, pedantic f32 for SIMT f32, f32 accumulation
    for f16/bf16). Timed beside torch.matmul in the same harness, it tells
    whether the two ratios differ by the harness or by the baseline."""

    TYPES = {"f32": 0, "f16": 2, "bf16": 14}  # cudaDataType_t

    def __init__(self, name="libcublas.so.13"):
        self.lib = ctypes.CDLL(name)
        self.name = name
        self.handle = ctypes.c_void_p()
        if self.lib.cublasCreate_v2(ctypes.byref(self.handle)) != 0:
            raise RuntimeError("cublasCreate failed")
        self.workspace = torch.empty(32 << 20, dtype=torch.uint8, device="cuda")
        self.lib.cublasSetWorkspace_v2(self.handle, ctypes.c_void_p(self.workspace.data_ptr()),
                                       ctypes.c_size_t(32 << 20))

    def gemm(self, a, b, c, dtype):
        m, k = a.shape
        n = b.shape[1]
        self.lib.cublasSetStream_v2(self.handle,
                                    ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        pedantic = dtype == "f32"
        self.lib.cublasSetMathMode(self.handle, 2 if pedantic else 0)
        compute = 69 if pedantic else 68  # CUBLAS_COMPUTE_32F_PEDANTIC / _32F
        t = self.TYPES[dtype]
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        st = self.lib.cublasGemmEx(self.handle, 0, 0, n, m, k, ctypes.byref(one),
                                   ctypes.c_void_p(b.data_ptr()), t, n,
                                   ctypes.c_void_p(a.data_ptr()), t, k, ctypes.byref(zero),
                                   ctypes.c_void_p(c.data_ptr()), t, n, compute, -1)
        if st != 0:
            raise RuntimeError(f"cublasGemmEx failed with status {st}")


def loaded_cublas():
    """The cuBLAS libraries this process has loaded (torch's, and ours)."""
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "libcublas" in line})


def overhead():
    kern = schedc.compile("tile 64x64x8\nthread 4x4\nvectorize 4\n", name="small.sched")
    a = torch.randn((256, 256), device="cuda")
    b = torch.randn((256, 256), device="cuda")
    c = torch.empty((256, 256), device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    raw = kern._k.launch
    # The binding's launch: ..., alpha, beta, bias, scale (0: none), stream.
    args = (256, 256, 256, a.data_ptr(), 256, b.data_ptr(), 256, c.data_ptr(), 256, 1.0, 0.0, 0,
            0, stream)
    t_call = per_call_us(lambda: kern(a, b, c))
    t_raw = per_call_us(lambda: raw(*args))
    t_torch = per_call_us(lambda: torch.matmul(a, b, out=c))
    print(f"warm call 256^3 f32, 1000 calls: k(a, b, c) {t_call:.2f} us, raw launch "
          f"{t_raw:.2f} us, torch.matmul {t_torch:.2f} us: Python side {t_call - t_raw:.2f} us")
    return t_call - t_raw


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="4096")
    p.add_argument("schedules", nargs="*")
    args = p.parse_args()
    dims = [int(x) for x in args.shape.split("x")]
    m, n, k = (dims * 3)[:3] if len(dims) == 1 else dims
    files = args.schedules or [os.path.join(ROOT, "examples", f)
                               for f in ("sgemm_best.sched", "hgemm_best.sched")]
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"schedc {schedc.__version__}")
    ok, ratios = True, []
    for f in files:
        good, ratio = check_schedule(f, m, n, k)
        ok &= good
        ratios.append(f"{os.path.basename(f)} {ratio:.3f}x")
    over = overhead()
    print(f"SUMMARY {'ok' if ok else 'WRONG'}; vs torch.matmul: {', '.join(ratios)}; "
          f"Python side of a warm call {over:.2f} us")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
