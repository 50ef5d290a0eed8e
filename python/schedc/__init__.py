"""schedc: GEMM schedules compiled to CUDA kernels (docs/api.md).

    import schedc
    print(schedc.check("tile 128x128x8; thread 8x8\\n"))   # the resolved schedule
    print(schedc.emit(text))                                # the generated CUDA C++
    k = schedc.compile(open("examples/hgemm_best.sched").read())
    c = k(a, b)                  # torch (or CuPy) CUDA matrices: C = A @ B

Bad schedules raise ScheduleError, whose .diagnostics say where and why.
"""

from __future__ import annotations

from typing import Any, List, Optional

from . import _schedc

__version__ = _schedc.version()

__all__ = ["check", "emit", "compile", "compile_file", "Kernel", "ScheduleError", "Diagnostic",
           "__version__"]

Diagnostic = _schedc.Diagnostic


class ScheduleError(ValueError):
    """A schedule that does not parse or check. str() is the diagnostics as
    schedc prints them (place, source line, caret); .diagnostics holds them
    as values (severity, where.file/line/column/length, message, notes)."""

    def __init__(self, rendered: str, diagnostics: List[Diagnostic]):
        super().__init__(rendered.rstrip("\n"))
        self.diagnostics = diagnostics


_DTYPES = {"f32": ("float32", 4), "f16": ("float16", 2), "bf16": ("bfloat16", 2),
           "s8": ("int8", 1)}
# C's element type where it is not the operands': int32 for s8 (exact sums).
_C_DTYPES = {"s8": "int32"}


def _compiled(result) -> "Kernel":
    if not result.ok:
        raise ScheduleError(result.rendered, list(result.diagnostics))
    return Kernel(result.kernel)


def compile(text: str, arch: str = "sm_90", name: str = "gemm.sched") -> "Kernel":
    """Parses, checks, lowers and generates the schedule `text` for `arch`.
    `name` is the text's name in diagnostics and gives the kernel its name."""
    return _compiled(_schedc.compile(text, arch, name))


def compile_file(path: str, arch: str = "sm_90") -> "Kernel":
    return _compiled(_schedc.compile_file(path, arch))


def check(text: str, arch: str = "sm_90", name: str = "gemm.sched") -> str:
    """The schedule as schedc resolves it (defaults filled in), one directive
    a line; raises ScheduleError when it is not a valid schedule."""
    return compile(text, arch, name).schedule_text


def emit(text: str, arch: str = "sm_90", name: str = "gemm.sched") -> str:
    """The CUDA C++ module the schedule compiles to."""
    return compile(text, arch, name).cuda_source


def _matrix(x: Any, what: str, col: bool = False, want_stream: bool = False):
    """(pointer, rows, cols, leading dimension, dtype name, stream) of a CUDA
    matrix: a torch tensor, or anything with __cuda_array_interface__.
    Row-major (its rows contiguous), or with `col` column-major (its columns
    contiguous: the transpose of a row-major matrix, e.g. w.t()). A torch
    tensor's current stream is looked up only with `want_stream` (a call
    needs A's alone; each lookup costs microseconds), else it is 0."""
    stream = 0
    order = "column-major (its columns contiguous, e.g. w.t())" if col else \
        "row-major (its rows contiguous)"
    if hasattr(x, "data_ptr") and hasattr(x, "is_cuda"):  # torch
        import torch

        if not x.is_cuda:
            raise ValueError(f"{what} must be on a CUDA device")
        if x.dim() != 2:
            raise ValueError(f"{what} must be a matrix (2 dimensions), not {x.dim()}")
        inner, outer, length = (0, 1, x.shape[0]) if col else (1, 0, x.shape[1])
        if x.stride(inner) != 1 and x.shape[inner] > 1:
            raise ValueError(f"{what} must be {order}: stride {tuple(x.stride())}")
        if want_stream:
            stream = torch.cuda.current_stream(x.device).cuda_stream
        name = str(x.dtype).replace("torch.", "")
        return x.data_ptr(), x.shape[0], x.shape[1], max(x.stride(outer), length), name, stream
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"{what} must be a CUDA matrix (a torch tensor or an object with "
                        "__cuda_array_interface__)")
    shape, typestr = cai["shape"], cai["typestr"]
    if len(shape) != 2:
        raise ValueError(f"{what} must be a matrix (2 dimensions), not {len(shape)}")
    size = int(typestr[2:])
    strides = cai.get("strides") or (shape[1] * size, size)
    inner, outer, length = (0, 1, shape[0]) if col else (1, 0, shape[1])
    if (strides[inner] != size and shape[inner] > 1) or strides[outer] % size:
        raise ValueError(f"{what} must be {order}: strides {strides}")
    kind = {"f4": "float32", "f2": "float16", "i1": "int8", "i4": "int32"}.get(typestr[1:], typestr)
    if cai.get("stream") not in (None, 1, 2):
        stream = int(cai["stream"])
    return int(cai["data"][0]), shape[0], shape[1], max(strides[outer] // size, length), kind, stream


class Kernel:
    """A compiled schedule: its text, its CUDA source, and a call that runs
    it on CUDA matrices."""

    def __init__(self, impl):
        self._k = impl

    schedule_text = property(lambda self: self._k.schedule_text)
    cuda_source = property(lambda self: self._k.cuda_source)
    entry_name = property(lambda self: self._k.entry_name)
    dtype = property(lambda self: self._k.dtype)
    arch = property(lambda self: self._k.arch)
    layout = property(lambda self: self._k.layout)  # A, B, C: "NNN", "NTN" (B column-major), …
    block_threads = property(lambda self: self._k.block_threads)
    shared_memory_bytes = property(lambda self: self._k.shared_memory_bytes)

    def __repr__(self) -> str:
        return f"<schedc.Kernel {self.entry_name} {self.dtype} {self.arch}>"

    def __call__(self, a: Any, b: Any, c: Optional[Any] = None, alpha: float = 1.0,
                 beta: float = 0.0, bias: Optional[Any] = None) -> Any:
        """C = alpha * A @ B (+ beta * C, bias, relu as the schedule's epilogue
        says) on the current CUDA stream of A's device (torch) or the stream
        A's __cuda_array_interface__ names. With c None, C is a new matrix
        (torch tensors only). Returns C. dtype s8: A and B int8, C int32,
        alpha and beta integers."""
        want, _ = _DTYPES[self.dtype]
        a_col, b_col, c_col = (letter == "T" for letter in self.layout)
        pa, m, ka, lda, ta, stream = _matrix(a, "a", a_col, want_stream=True)
        pb, kb, n, ldb, tb, _ = _matrix(b, "b", b_col)
        if ka != kb:
            raise ValueError(f"a is {m}x{ka} and b {kb}x{n}: their inner sizes differ")
        for t, what in ((ta, "a"), (tb, "b")):
            if t != want:
                raise TypeError(f"{what} is {t}; this kernel takes {want} (dtype {self.dtype})")
        want_c = _C_DTYPES.get(self.dtype, want)
        if c is None:
            import torch

            t = getattr(torch, want_c)
            c = torch.empty((m, n), dtype=t, device=a.device) if not c_col else \
                torch.empty((n, m), dtype=t, device=a.device).t()
        pc, mc, nc, ldc, tc, _ = _matrix(c, "c", c_col)
        if (mc, nc) != (m, n) or tc != want_c:
            raise ValueError(f"c must be a {m}x{n} {want_c} matrix, not {mc}x{nc} {tc}")
        if self.dtype == "s8" and (float(alpha) != int(alpha) or float(beta) != int(beta)):
            raise ValueError(f"dtype s8 computes in int32: alpha and beta must be integers, "
                             f"not {alpha} and {beta}")
        pbias = 0
        if bias is not None:
            pbias, rows, cols, _, tbias, _ = _matrix(bias.reshape(1, -1), "bias")
            if tbias != "float32" or rows * cols != n:
                raise ValueError(f"bias must be {n} float32 values")
        self._k.launch(m, n, ka, pa, lda, pb, ldb, pc, ldc, float(alpha), float(beta), pbias,
                       stream)
        return c
