# Type stubs of the schedc package (python/schedc/__init__.py).
from typing import Any, List, Optional, Tuple, Union

__version__: str

class SourceLocation:
    file: str
    line: int
    column: int
    length: int

class DiagnosticNote:
    where: SourceLocation
    message: str

class Diagnostic:
    severity: str  # "error" or "warning"
    where: SourceLocation
    message: str
    notes: List[DiagnosticNote]

class ScheduleError(ValueError):
    diagnostics: List[Diagnostic]

class ConvGeometry:
    # NHWC: N images of H x W pixels, C channels; K filters of R x S taps.
    n: int
    h: int
    w: int
    c: int
    k: int
    r: int
    s: int
    stride_h: int
    stride_w: int
    pad_h: int
    pad_w: int
    dilation_h: int
    dilation_w: int
    def __init__(self) -> None: ...
    def p(self) -> int: ...  # the output's height
    def q(self) -> int: ...  # the output's width

class Kernel:
    schedule_text: str
    cuda_source: str
    entry_name: str
    dtype: str  # "f32", "f16", "bf16", "s8" (int8 A and B, int32 C)
    c_dtype: str  # C's: dtype, "s32" for s8, "s8" with `epilogue ... requantize`
    takes_scale: bool  # `epilogue ... scale`: calls take scale (N float32 values)
    arch: str
    layout: str  # A, B, C: "NNN"; "NTN" (B column-major: x @ w.t()); T = column-major
    block_threads: int
    shared_memory_bytes: int
    is_convolution: bool
    convolution: Optional[ConvGeometry]  # the schedule's `conv`; None for a GEMM
    convolution_layout: str  # "nhwc", "nchw32"; "" for a GEMM
    def __call__(self, a: Any, b: Any, c: Optional[Any] = ..., alpha: float = ...,
                 beta: float = ..., bias: Optional[Any] = ...,
                 scale: Optional[Any] = ...) -> Any: ...
    def conv(self, x: Any, w: Any, y: Optional[Any] = ...,
             stride: Union[int, Tuple[int, int], None] = ...,
             padding: Union[int, Tuple[int, int], None] = ...,
             dilation: Union[int, Tuple[int, int], None] = ..., alpha: float = ...,
             beta: float = ..., bias: Optional[Any] = ...,
             scale: Optional[Any] = ...) -> Any: ...

def compile(text: str, arch: str = ..., name: str = ...) -> Kernel: ...
def compile_file(path: str, arch: str = ...) -> Kernel: ...
def check(text: str, arch: str = ..., name: str = ...) -> str: ...
def emit(text: str, arch: str = ..., name: str = ...) -> str: ...
