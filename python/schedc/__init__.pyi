# Type stubs of the schedc package (python/schedc/__init__.py).
from typing import Any, List, Optional

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

class Kernel:
    schedule_text: str
    cuda_source: str
    entry_name: str
    dtype: str  # "f32", "f16", "bf16", "s8" (int8 A and B, int32 C)
    arch: str
    layout: str  # A, B, C: "NNN"; "NTN" (B column-major: x @ w.t()); T = column-major
    block_threads: int
    shared_memory_bytes: int
    def __call__(self, a: Any, b: Any, c: Optional[Any] = ..., alpha: float = ...,
                 beta: float = ..., bias: Optional[Any] = ...) -> Any: ...

def compile(text: str, arch: str = ..., name: str = ...) -> Kernel: ...
def compile_file(path: str, arch: str = ...) -> Kernel: ...
def check(text: str, arch: str = ..., name: str = ...) -> str: ...
def emit(text: str, arch: str = ..., name: str = ...) -> str: ...
