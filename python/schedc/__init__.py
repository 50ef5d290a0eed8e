"""schedc: GEMM schedules compiled to CUDA kernels (docs/api.md).

    import schedc
    print(schedc.check("tile 128x128x8; thread 8x8\\n"))   # the resolved schedule
    print(schedc.emit(text))                                # the generated CUDA C++
    k = schedc.compile(open("examples/hgemm_best.sched").read())
    c = k(a, b)                  # torch (or CuPy) CUDA matrices: C = A @ B
    y = conv_k.conv(x, w)        # a `conv` schedule: NHWC x (N, H, W, C), w (K, R, S, C)

Bad schedules raise ScheduleError, whose .diagnostics say where and why.
"""

from __future__ import annotations

from typing import Any, List, Optional

from . import _schedc

__version__ = _schedc.version()

__all__ = ["check", "emit", "compile", "compile_file", "Kernel", "ScheduleError", "Diagnostic",
           "ConvGeometry", "__version__"]

Diagnostic = _schedc.Diagnostic
# A convolution's sizes, stride, padding and dilation (include/schedc/schedc.h).
ConvGeometry = _schedc.ConvGeometry


class ScheduleError(ValueError):
    """A schedule that does not parse or check. str() is the diagnostics as
    schedc prints them (place, source line, caret); .diagnostics holds them
    as values (severity, where.file/line/column/length, message, notes)."""

    def __init__(self, rendered: str, diagnostics: List[Diagnostic]):
        super().__init__(rendered.rstrip("\n"))
        self.diagnostics = diagnostics


_DTYPES = {"f32": ("float32", 4), "f16": ("float16", 2), "bf16": ("bfloat16", 2),
           "s8": ("int8", 1)}
# C's element type (Kernel.c_dtype) as torch and the array interface name it.
_C_NAMES = {**{dtype: name for dtype, (name, _) in _DTYPES.items()}, "s32": "int32"}


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


def _packed_strides(shape) -> tuple:
    """The strides, in elements, of a packed row-major array of `shape`."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return tuple(strides)


def _view(x: Any, what: str, noun: str, want_stream: bool = False):
    """(pointer, shape, strides in elements, dtype name, stream) of a CUDA
    array: a torch tensor, or anything with __cuda_array_interface__. A torch
    tensor's current stream is looked up only with `want_stream` (a call
    needs one operand's alone; each lookup costs microseconds), else it is 0."""
    stream = 0
    if hasattr(x, "data_ptr") and hasattr(x, "is_cuda"):  # torch
        if not x.is_cuda:
            raise ValueError(f"{what} must be on a CUDA device")
        if want_stream:
            import torch

            stream = torch.cuda.current_stream(x.device).cuda_stream
        name = str(x.dtype).replace("torch.", "")
        return x.data_ptr(), tuple(x.shape), tuple(x.stride()), name, stream
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"{what} must be a CUDA {noun} (a torch tensor or an object with "
                        "__cuda_array_interface__)")
    shape, typestr = tuple(cai["shape"]), cai["typestr"]
    size = int(typestr[2:])
    strides = cai.get("strides")
    if strides is None:
        strides = _packed_strides(shape)
    elif any(step % size for step in strides):
        raise ValueError(f"{what}'s strides {tuple(strides)} are not whole elements of {size} "
                         "bytes")
    else:
        strides = tuple(step // size for step in strides)
    kind = {"f4": "float32", "f2": "float16", "i1": "int8", "i4": "int32"}.get(typestr[1:], typestr)
    if cai.get("stream") not in (None, 1, 2):
        stream = int(cai["stream"])
    return int(cai["data"][0]), shape, strides, kind, stream


def _matrix(x: Any, what: str, col: bool = False, want_stream: bool = False):
    """(pointer, rows, cols, leading dimension, dtype name, stream) of a CUDA
    matrix (_view). Row-major (its rows contiguous), or with `col`
    column-major (its columns contiguous: the transpose of a row-major
    matrix, e.g. w.t())."""
    pointer, shape, strides, name, stream = _view(x, what, "matrix", want_stream)
    if len(shape) != 2:
        raise ValueError(f"{what} must be a matrix (2 dimensions), not {len(shape)}")
    inner, outer = (0, 1) if col else (1, 0)
    if strides[inner] != 1 and shape[inner] > 1:
        order = "column-major (its columns contiguous, e.g. w.t())" if col else \
            "row-major (its rows contiguous)"
        raise ValueError(f"{what} must be {order}: strides {strides}")
    return pointer, shape[0], shape[1], max(strides[outer], shape[inner]), name, stream


def _packed_tensor(x: Any, what: str, dims: str, want_stream: bool = False, rank: int = 4):
    """(pointer, shape, dtype name, stream) of a packed `rank`-D CUDA tensor
    (_view) whose dimensions are `dims` ("N, H, W, C"), the last contiguous."""
    pointer, shape, strides, name, stream = _view(x, what, "tensor", want_stream)
    if len(shape) != rank:
        raise ValueError(f"{what} must be a {rank}-D tensor ({dims}), not {len(shape)}-D")
    if any(step != packed for step, packed, extent in zip(strides, _packed_strides(shape), shape)
           if extent > 1):
        raise ValueError(f"{what} must be a packed ({dims}) tensor: strides {strides} (a torch "
                         "tensor t of shape (N, C, H, W) in channels_last memory is "
                         "t.permute(0, 2, 3, 1), no copy)")
    return pointer, shape, name, stream


def _nchw32(x: Any, what: str, dims: str, want_stream: bool = False):
    """_packed_tensor of a 5-D NCHW32 tensor (`dims` "N, C/32, H, W, 32"), its
    shape given back as (N, H, W, C)."""
    pointer, (n, groups, h, w, lanes), name, stream = _packed_tensor(x, what, dims, want_stream,
                                                                     rank=5)
    if lanes != 32:
        raise ValueError(f"{what} must be an NCHW32 tensor ({dims}): its last extent is {lanes}, "
                         "not 32")
    return pointer, (n, h, w, groups * 32), name, stream


def _vector_pointer(values: Optional[Any], n: int, what: str) -> int:
    """The device pointer of `n` float32 values (one per output column: a
    bias or per-channel scales), 0 for None."""
    if values is None:
        return 0
    if hasattr(values, "reshape"):  # torch, CuPy: any shape of n values
        values = values.reshape(1, -1)
    pointer, rows, cols, _, kind, _ = _matrix(values, what)
    if kind != "float32" or rows * cols != n:
        raise ValueError(f"{what} must be {n} float32 values")
    return pointer


def _pair(value: Any, what: str, default: tuple) -> tuple:
    """(h, w) of a stride, padding or dilation given as an int (both axes),
    a pair, or None (`default`)."""
    if value is None:
        return default
    if isinstance(value, int):
        return value, value
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or an (h, w) pair, not {value!r}")
    return int(value[0]), int(value[1])


class Kernel:
    """A compiled schedule: its text, its CUDA source, and a call that runs
    it on CUDA matrices (conv() on NHWC tensors for a `conv` schedule)."""

    def __init__(self, impl):
        self._k = impl

    schedule_text = property(lambda self: self._k.schedule_text)
    cuda_source = property(lambda self: self._k.cuda_source)
    entry_name = property(lambda self: self._k.entry_name)
    dtype = property(lambda self: self._k.dtype)
    # C's element type: dtype, but "s32" for s8 and "s8" for s8 with
    # `epilogue ... requantize` (an int8 C).
    c_dtype = property(lambda self: self._k.c_dtype)
    # `epilogue ... scale requantize`: calls take `scale`, one float32 per
    # output column (channel).
    takes_scale = property(lambda self: self._k.takes_scale)
    arch = property(lambda self: self._k.arch)
    layout = property(lambda self: self._k.layout)  # A, B, C: "NNN", "NTN" (B column-major), …
    block_threads = property(lambda self: self._k.block_threads)
    shared_memory_bytes = property(lambda self: self._k.shared_memory_bytes)
    # A `conv` schedule: conv() runs it; `convolution` is the geometry its
    # schedule names (None for a GEMM).
    is_convolution = property(lambda self: self._k.is_convolution)
    # "nhwc" or "nchw32": the layout conv() takes its tensors in ("" for a GEMM).
    convolution_layout = property(lambda self: self._k.convolution_layout)
    convolution = property(lambda self: self._k.convolution)

    def __repr__(self) -> str:
        return f"<schedc.Kernel {self.entry_name} {self.dtype} {self.arch}>"

    def __call__(self, a: Any, b: Any, c: Optional[Any] = None, alpha: float = 1.0,
                 beta: float = 0.0, bias: Optional[Any] = None,
                 scale: Optional[Any] = None) -> Any:
        """C = alpha * A @ B (+ beta * C, bias, relu as the schedule's epilogue
        says) on the current CUDA stream of A's device (torch) or the stream
        A's __cuda_array_interface__ names. With c None, C is a new matrix
        (torch tensors only). Returns C. dtype s8: A and B int8, C int32,
        alpha and beta integers; with `epilogue ... requantize` (c_dtype
        "s8") C int8 and alpha, beta, bias any floats, and with `scale`
        (takes_scale) column n's scale alpha * scale[n]. bias and scale are
        N float32 values, given exactly when the epilogue reads them."""
        if self.is_convolution:
            raise ValueError(f"{self.entry_name} computes a convolution (its schedule has "
                             "'conv'): call k.conv(x, w), not k(a, b)")
        want, _ = _DTYPES[self.dtype]
        a_col, b_col, c_col = (letter == "T" for letter in self.layout)
        pa, m, ka, lda, ta, stream = _matrix(a, "a", a_col, want_stream=True)
        pb, kb, n, ldb, tb, _ = _matrix(b, "b", b_col)
        if ka != kb:
            raise ValueError(f"a is {m}x{ka} and b {kb}x{n}: their inner sizes differ")
        for t, what in ((ta, "a"), (tb, "b")):
            if t != want:
                raise TypeError(f"{what} is {t}; this kernel takes {want} (dtype {self.dtype})")
        want_c = _C_NAMES[self.c_dtype]
        if c is None:
            import torch

            t = getattr(torch, want_c)
            c = torch.empty((m, n), dtype=t, device=a.device) if not c_col else \
                torch.empty((n, m), dtype=t, device=a.device).t()
        pc, mc, nc, ldc, tc, _ = _matrix(c, "c", c_col)
        if (mc, nc) != (m, n) or tc != want_c:
            raise ValueError(f"c must be a {m}x{n} {want_c} matrix, not {mc}x{nc} {tc}")
        # An int32 C takes integer scalars; a requantized one (c_dtype s8) any floats.
        if self.c_dtype == "s32" and (float(alpha) != int(alpha) or float(beta) != int(beta)):
            raise ValueError(f"dtype s8 computes in int32: alpha and beta must be integers, "
                             f"not {alpha} and {beta}")
        self._k.launch(m, n, ka, pa, lda, pb, ldb, pc, ldc, float(alpha), float(beta),
                       _vector_pointer(bias, n, "bias"), _vector_pointer(scale, n, "scale"),
                       stream)
        return c

    def conv(self, x: Any, w: Any, y: Optional[Any] = None, stride: Any = None,
             padding: Any = None, dilation: Any = None, alpha: float = 1.0, beta: float = 0.0,
             bias: Optional[Any] = None, scale: Optional[Any] = None) -> Any:
        """y = alpha * conv2d(x, w) (+ beta * y, bias, relu as the schedule's
        epilogue says) for a convolution module (is_convolution), in its
        layout (convolution_layout): NHWC x (N, H, W, C), w (K, R, S, C), y
        (N, P, Q, K); NCHW32 x (N, C/32, H, W, 32), w (K, C/32, R, S, 32), y
        (N, K/32, P, Q, 32). Each packed, on the
        current CUDA stream of x's device (torch) or the stream x's
        __cuda_array_interface__ names. stride, padding and dilation are an
        int (both axes) or an (h, w) pair; None takes the schedule's own
        (`conv ... stride 1 pad 1`, the `convolution` property). With y None,
        y is a new tensor (torch tensors only). Returns y. dtype s8: x and w
        int8, y int32 (int8 with `epilogue ... requantize`), alpha and beta integers
        (any floats when requantized); bias and scale (takes_scale) are K
        float32 values, given exactly when the epilogue reads them."""
        if not self.is_convolution:
            raise ValueError(f"{self.entry_name} computes a GEMM (its schedule has no 'conv' "
                             "directive): call k(a, b), not k.conv(x, w)")
        nchw32 = self.convolution_layout == "nchw32"
        if nchw32:  # x (N, C/32, H, W, 32), w (K, C/32, R, S, 32)
            px, (n, h, wd, c), tx, stream = _nchw32(x, "x", "N, C/32, H, W, 32", want_stream=True)
            pw, (k, r, s, cw), tw, _ = _nchw32(w, "w", "K, C/32, R, S, 32")
        else:
            px, (n, h, wd, c), tx, stream = _packed_tensor(x, "x", "N, H, W, C", want_stream=True)
            pw, (k, r, s, cw), tw, _ = _packed_tensor(w, "w", "K, R, S, C")
        if cw != c:
            raise ValueError(f"x has {c} channels and w {cw}: they must be the same")
        want, _ = _DTYPES[self.dtype]
        for t, what in ((tx, "x"), (tw, "w")):
            if t != want:
                raise TypeError(f"{what} is {t}; this kernel takes {want} (dtype {self.dtype})")
        named = self.convolution or ConvGeometry()  # every `conv` schedule names one
        g = ConvGeometry()
        g.n, g.h, g.w, g.c, g.k, g.r, g.s = n, h, wd, c, k, r, s
        g.stride_h, g.stride_w = _pair(stride, "stride", (named.stride_h, named.stride_w))
        g.pad_h, g.pad_w = _pair(padding, "padding", (named.pad_h, named.pad_w))
        g.dilation_h, g.dilation_w = _pair(dilation, "dilation",
                                           (named.dilation_h, named.dilation_w))
        p, q = g.p(), g.q()
        want_y = _C_NAMES[self.c_dtype]
        # No output pixel (p or q below 1): y stays 0 and the library says why.
        shape_y, dims_y = ((n, k // 32, p, q, 32), "N, K/32, P, Q, 32") if nchw32 else \
            ((n, p, q, k), "N, P, Q, K")
        if y is None and p >= 1 and q >= 1 and (not nchw32 or k % 32 == 0):
            import torch

            y = torch.empty(shape_y, dtype=getattr(torch, want_y), device=x.device)
        py = 0
        if y is not None:
            py, got_y, ty, _ = _packed_tensor(y, "y", dims_y, rank=len(shape_y))
            if tuple(got_y) != shape_y or ty != want_y:
                raise ValueError(f"y must be a {'x'.join(map(str, shape_y))} {want_y} tensor "
                                 f"({dims_y}), not {'x'.join(map(str, got_y))} {ty}")
        self._k.launch_conv(g, px, pw, py, float(alpha), float(beta),
                            _vector_pointer(bias, k, "bias"), _vector_pointer(scale, k, "scale"),
                            stream)
        return y
