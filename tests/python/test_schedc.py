"""The Python module (`pip install .`): check, emit and compile without a
GPU, diagnostics as Python exceptions with their places; on a GPU with torch,
a schedule run on torch tensors equals torch.matmul (SKIPPED otherwise)."""

import os

import pytest

import schedc

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SGEMM = "tile 64x64x8\nthread 4x4\nvectorize 4\n"


def test_check_returns_the_resolved_schedule():
    text = schedc.check(SGEMM)
    assert "tile 64x64x8\n" in text
    assert "vectorize 4\n" in text
    assert schedc.__version__ == "0.2.1"


def test_emit_returns_cuda_named_after_the_text():
    src = schedc.emit(SGEMM, name="small.sched")
    assert 'extern "C" __global__' in src
    assert "schedc_small(" in src


def test_compile_gives_a_kernel_with_its_figures():
    k = schedc.compile(SGEMM)
    assert k.entry_name == "schedc_gemm"
    assert k.dtype == "f32"
    assert k.arch == "sm_90"
    assert k.block_threads == 256
    assert k.shared_memory_bytes == (64 * 8 + 8 * 64) * 4
    assert "schedc.Kernel schedc_gemm" in repr(k)
    best = schedc.compile_file(os.path.join(ROOT, "examples", "hgemm_best.sched"))
    assert best.dtype == "f16"


def test_layout_says_which_operands_are_column_major():
    assert schedc.compile(SGEMM).layout == "NNN"
    assert schedc.compile(SGEMM + "layout B col\n").layout == "NTN"
    assert schedc.compile(SGEMM + "layout A col\nlayout B col\nlayout C col\n").layout == "TTT"
    xwt = schedc.compile_file(os.path.join(ROOT, "examples", "sgemm_xwt.sched"))
    assert xwt.layout == "NTN"


def test_bad_schedule_raises_with_located_diagnostics():
    with pytest.raises(schedc.ScheduleError) as e:
        schedc.check("tile 100x128x8\nthread 8x8\n")
    err = e.value
    assert isinstance(err, ValueError)
    assert "gemm.sched:2:8: error:" in str(err)
    d = err.diagnostics[0]
    assert d.severity == "error"
    assert (d.where.file, d.where.line, d.where.column) == ("gemm.sched", 2, 8)
    assert "does not divide" in d.message
    assert d.notes and d.notes[0].where.line == 1


def test_unknown_architecture_and_missing_file_raise_too():
    with pytest.raises(schedc.ScheduleError, match="unknown architecture 'sm_42'"):
        schedc.compile(SGEMM, arch="sm_42")
    with pytest.raises(schedc.ScheduleError) as e:
        schedc.compile_file("/nonexistent/x.sched")
    assert e.value.diagnostics[0].where.line == 0
    with pytest.raises(schedc.ScheduleError, match="wgmma"):
        schedc.compile_file(os.path.join(ROOT, "examples", "hgemm_best.sched"), arch="sm_80")


def _torch_cuda():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch


def test_sgemm_best_on_torch_tensors_equals_matmul():
    torch = _torch_cuda()
    k = schedc.compile_file(os.path.join(ROOT, "examples", "sgemm_best.sched"))
    a = torch.randint(-3, 4, (300, 70), device="cuda").float()
    b = torch.randint(-3, 4, (70, 260), device="cuda").float()
    c = k(a, b)
    torch.cuda.synchronize()
    assert torch.equal(c, a @ b)  # small integers: exact


def test_hgemm_best_on_torch_tensors_equals_matmul():
    torch = _torch_cuda()
    k = schedc.compile_file(os.path.join(ROOT, "examples", "hgemm_best.sched"))
    # Ragged sizes and a leading dimension that is no multiple of 8 (a view
    # of a wider matrix): the kernel's fallback entry and edges.
    a = torch.randint(-3, 4, (300, 75), device="cuda").half()
    wide = torch.randint(-3, 4, (75, 270), device="cuda").half()
    b = wide[:, :261]
    c = k(a, b)
    torch.cuda.synchronize()
    assert torch.equal(c, (a.float() @ b.float()).half())  # |sums| < 2048: exact in f16


def test_x_times_w_transposed_on_torch_equals_matmul():
    torch = _torch_cuda()
    k = schedc.compile_file(os.path.join(ROOT, "examples", "sgemm_xwt.sched"))
    x = torch.randint(-3, 4, (300, 70), device="cuda").float()
    w = torch.randint(-3, 4, (260, 70), device="cuda").float()  # nn.Linear's weight, N x K
    c = k(x, w.t())  # w.t(): column-major K x N, no copy
    torch.cuda.synchronize()
    assert torch.equal(c, x @ w.t())
    with pytest.raises(ValueError, match="column-major"):
        k(x, w.t().contiguous())


def test_int8_best_on_torch_tensors_equals_int_mm():
    torch = _torch_cuda()
    k = schedc.compile_file(os.path.join(ROOT, "examples", "int8_best.sched"))
    assert k.dtype == "s8" and k.layout == "NTN"
    # Full-range int8, ragged sizes: C is int32, exact.
    x = torch.randint(-128, 128, (300, 200), dtype=torch.int8, device="cuda")
    w = torch.randint(-128, 128, (260, 200), dtype=torch.int8, device="cuda")
    c = k(x, w.t())
    torch.cuda.synchronize()
    assert c.dtype == torch.int32
    # (CUDA has no integer matmul: the reference runs on the CPU in int64.)
    assert torch.equal(c.cpu(), (x.cpu().long() @ w.t().cpu().long()).int())
    with pytest.raises(ValueError, match="integers"):
        k(x, w.t(), alpha=0.5)


def test_wrong_inputs_raise_before_launching():
    torch = _torch_cuda()
    k = schedc.compile(SGEMM)
    a = torch.zeros((8, 4), device="cuda")
    with pytest.raises(ValueError, match="inner sizes differ"):
        k(a, torch.zeros((5, 8), device="cuda"))
    with pytest.raises(TypeError, match="takes float32"):
        k(a.half(), torch.zeros((4, 8), device="cuda").half())
    with pytest.raises(ValueError, match="row-major"):
        k(a, torch.zeros((8, 4), device="cuda").t())
