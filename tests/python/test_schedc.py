"""The Python module (`pip install .`): check, emit and compile without a
GPU, diagnostics as Python exceptions with their places; on a GPU with torch,
a schedule run on torch tensors equals torch.matmul, a convolution schedule
run on NHWC or NCHW32 tensors torch.nn.functional.conv2d (SKIPPED otherwise)."""

import os

import pytest

import schedc

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SGEMM = "tile 64x64x8\nthread 4x4\nvectorize 4\n"


def test_check_returns_the_resolved_schedule():
    text = schedc.check(SGEMM)
    assert "tile 64x64x8\n" in text
    assert "vectorize 4\n" in text
    assert schedc.__version__ == "0.3.0"


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


REQUANTIZE = os.path.join(ROOT, "tests", "gpu", "schedules", "wgmma_s8_requantize.sched")


def test_c_dtype_names_each_modules_output():
    assert schedc.compile(SGEMM).c_dtype == "f32"
    assert schedc.compile_file(os.path.join(ROOT, "examples", "int8_best.sched")).c_dtype == "s32"
    assert schedc.compile_file(REQUANTIZE).c_dtype == "s8"


def test_requantized_int8_gemm_on_torch_equals_its_f32_definition():
    torch = _torch_cuda()
    k = schedc.compile_file(REQUANTIZE)  # epilogue alpha 0.0005 beta 0.5 bias relu requantize
    x = torch.randint(-128, 128, (300, 700), dtype=torch.int8, device="cuda")
    w = torch.randint(-128, 128, (260, 700), dtype=torch.int8, device="cuda")
    z = torch.randint(-128, 128, (300, 260), dtype=torch.int8, device="cuda")
    bias = (torch.randint(-256, 257, (260,), device="cuda") / 8).float()
    c = z.clone()
    k(x, w.t(), c=c, alpha=0.0005, beta=0.5, bias=bias)
    torch.cuda.synchronize()
    assert c.dtype == torch.int8
    # The kernel's steps in f32 on the CPU, each rounded: alpha·acc, + beta·z, + bias, relu,
    # round half to even, saturate.
    acc = (x.cpu().long() @ w.t().cpu().long()).float()
    v = torch.tensor(0.0005, dtype=torch.float32) * acc
    v = v + torch.tensor(0.5, dtype=torch.float32) * z.cpu().float()
    v = (v + bias.cpu()).clamp_min(0)
    want = torch.round(v.clamp(-128, 127)).to(torch.int8)
    assert torch.equal(c.cpu(), want)
    assert 0 < int((want == 127).sum()) < want.numel()  # some saturate, not all


REQUANTIZE_SCALE = os.path.join(ROOT, "tests", "gpu", "schedules",
                                "wgmma_s8_requantize_pingpong.sched")


def test_requantized_gemm_with_channel_scales_on_torch_equals_its_definition():
    torch = _torch_cuda()
    k = schedc.compile_file(REQUANTIZE_SCALE)  # epilogue alpha 0.0003 scale requantize, C col
    assert k.takes_scale and k.layout == "NNT"
    x = torch.randint(-128, 128, (300, 700), dtype=torch.int8, device="cuda")
    w = torch.randint(-128, 128, (700, 260), dtype=torch.int8, device="cuda")
    scale = (torch.randint(32, 129, (260,), device="cuda") / 64).float()
    c = torch.empty((260, 300), dtype=torch.int8, device="cuda").t()  # column-major
    k(x, w, c=c, alpha=0.0003, scale=scale)
    torch.cuda.synchronize()
    # (alpha·scale[n])·acc in f32, rounded half to even, saturated.
    acc = (x.cpu().long() @ w.cpu().long()).float()
    column = torch.tensor(0.0003, dtype=torch.float32) * scale.cpu()
    want = torch.round((column * acc).clamp(-128, 127)).to(torch.int8)
    assert torch.equal(c.cpu(), want)
    assert 0 < int((want == -128).sum()) and 0 < int((want.abs() < 100).sum())


def test_scale_and_bias_are_given_exactly_when_the_epilogue_reads_them():
    # Checked by the library before any device is looked for.
    scaled = schedc.compile_file(REQUANTIZE_SCALE)  # scale, no bias; C column-major
    plain = schedc.compile_file(REQUANTIZE)         # bias, no scale; B column-major
    assert scaled.takes_scale and not plain.takes_scale
    a = _NeverRead((64, 32), "|i1")
    c_col = _NeverRead((64, 48), "|i1", strides=(1, 64))
    b_row = _NeverRead((32, 48), "|i1")
    b_col = _NeverRead((32, 48), "|i1", strides=(1, 32))
    c_row = _NeverRead((64, 48), "|i1")
    vector = _NeverRead((1, 48), "<f4", data=512)
    with pytest.raises(ValueError, match="scale must point to N device floats"):
        scaled(a, b_row, c=c_col)
    with pytest.raises(ValueError, match="bias given, but .* has no 'bias'"):
        scaled(a, b_row, c=c_col, scale=vector, bias=vector)
    with pytest.raises(ValueError, match="bias must point to N device floats"):
        plain(a, b_col, c=c_row)
    with pytest.raises(ValueError, match="scale given, but .* has no 'scale'"):
        plain(a, b_col, c=c_row, bias=vector, scale=vector)
    with pytest.raises(ValueError, match="scale must be 48 float32 values"):
        scaled(a, b_row, c=c_col, scale=_NeverRead((1, 47), "<f4"))


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


CONV_INT8 = os.path.join(ROOT, "examples", "conv", "int8_nhwc.sched")


class _NeverRead:
    """A CUDA array by its __cuda_array_interface__ alone, at an address no
    one reads: for the checks made before any launch (no GPU needed)."""

    def __init__(self, shape, typestr, data=256, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (data, False), "strides": strides,
                                         "version": 3}


def test_conv_schedule_is_a_convolution_module_with_its_geometry():
    k = schedc.compile_file(CONV_INT8)
    assert k.is_convolution and k.dtype == "s8"
    g = k.convolution  # conv 8x28x28x128 filter 128x3x3 stride 1 pad 1
    assert (g.n, g.h, g.w, g.c, g.k, g.r, g.s) == (8, 28, 28, 128, 128, 3, 3)
    assert (g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w) == \
        (1, 1, 1, 1, 1, 1)
    assert (g.p(), g.q()) == (28, 28)
    assert "ConvGeometry(n=8, h=28" in repr(g)
    gemm = schedc.compile(SGEMM)
    assert not gemm.is_convolution and gemm.convolution is None
    mine = schedc.ConvGeometry()
    mine.h, mine.w, mine.r, mine.s, mine.stride_h, mine.pad_w = 9, 7, 3, 3, 2, 1
    assert (mine.p(), mine.q()) == (4, 7)


def test_conv_arguments_raise_before_launching():
    k = schedc.compile_file(CONV_INT8)
    x = _NeverRead((8, 28, 28, 128), "|i1")
    w = _NeverRead((128, 3, 3, 128), "|i1")
    y = _NeverRead((8, 28, 28, 128), "<i4")
    with pytest.raises(ValueError, match="computes a GEMM"):
        schedc.compile(SGEMM).conv(x, w, y)
    with pytest.raises(ValueError, match=r"computes a convolution .*call k.conv\(x, w\)"):
        k(_NeverRead((4, 4), "|i1"), _NeverRead((4, 4), "|i1"))
    with pytest.raises(ValueError, match=r"4-D tensor \(N, H, W, C\), not 3-D"):
        k.conv(_NeverRead((28, 28, 128), "|i1"), w, y)
    with pytest.raises(ValueError, match="must be a packed"):
        k.conv(_NeverRead((8, 28, 28, 128), "|i1", strides=(28 * 28 * 128, 28 * 128, 128 * 2, 1)),
               w, y)
    with pytest.raises(ValueError, match="x has 128 channels and w 64"):
        k.conv(x, _NeverRead((128, 3, 3, 64), "|i1"), y)
    with pytest.raises(TypeError, match="takes int8"):
        k.conv(_NeverRead((8, 28, 28, 128), "<f2"), w, y)
    # stride, padding and dilation default to the schedule's (pad 1: y is 28x28).
    with pytest.raises(ValueError, match="y must be a 8x28x28x128 int32 tensor"):
        k.conv(x, w, _NeverRead((8, 26, 26, 128), "<i4"))
    with pytest.raises(ValueError, match="y must be a 8x26x26x128 int32 tensor"):
        k.conv(x, w, y, padding=0)
    with pytest.raises(ValueError, match=r"an int or an \(h, w\) pair"):
        k.conv(x, w, y, stride=(1, 1, 1))
    # The library's own checks, raised as ValueError with its words.
    with pytest.raises(ValueError, match="C = 24 channels of s8 are 24 bytes a pixel"):
        k.conv(_NeverRead((8, 28, 28, 24), "|i1"), _NeverRead((128, 3, 3, 24), "|i1"), y)
    with pytest.raises(ValueError, match="not 16-byte aligned"):
        k.conv(_NeverRead((8, 28, 28, 128), "|i1", data=264), w, y)
    with pytest.raises(ValueError, match="alpha 0.5 is not a whole number"):
        k.conv(x, w, y, alpha=0.5)
    with pytest.raises(ValueError, match="no output pixel"):  # y None: nothing to allocate
        k.conv(_NeverRead((1, 2, 2, 16), "|i1"), _NeverRead((16, 3, 3, 16), "|i1"), padding=0)


CONV_NCHW32 = os.path.join(ROOT, "examples", "conv", "int8_nchw32.sched")


def test_nchw32_conv_takes_five_dimensional_tensors():
    k = schedc.compile_file(CONV_NCHW32)
    assert k.convolution_layout == "nchw32"
    assert schedc.compile_file(CONV_INT8).convolution_layout == "nhwc"
    assert schedc.compile(SGEMM).convolution_layout == ""
    x = _NeverRead((8, 4, 28, 28, 32), "|i1")
    w = _NeverRead((128, 4, 3, 3, 32), "|i1")
    with pytest.raises(ValueError, match=r"5-D tensor \(N, C/32, H, W, 32\), not 4-D"):
        k.conv(_NeverRead((8, 28, 28, 128), "|i1"), w)
    with pytest.raises(ValueError, match="its last extent is 16, not 32"):
        k.conv(_NeverRead((8, 8, 28, 28, 16), "|i1"), w)
    with pytest.raises(ValueError, match="x has 128 channels and w 64"):
        k.conv(x, _NeverRead((128, 2, 3, 3, 32), "|i1"))
    with pytest.raises(ValueError, match=r"y must be a 5-D tensor \(N, K/32, P, Q, 32\), not 4-D"):
        k.conv(x, w, _NeverRead((8, 28, 28, 128), "<i4"))
    with pytest.raises(ValueError, match=r"y must be a 8x4x28x28x32 int32 tensor \(N, K/32"):
        k.conv(x, w, _NeverRead((8, 4, 26, 26, 32), "<i4"))
    with pytest.raises(ValueError, match="NCHW32 needs K to be a multiple of 32"):
        k.conv(x, _NeverRead((40, 4, 3, 3, 32), "|i1"), _NeverRead((8, 1, 28, 28, 32), "<i4"))


def test_int8_nchw32_conv_on_torch_tensors_equals_conv2d():
    torch = _torch_cuda()
    import torch.nn.functional as F

    k = schedc.compile_file(CONV_NCHW32)
    for n, h, wd, c, kk, r, stride, pad in ((2, 28, 28, 128, 128, 3, None, None),
                                            (3, 7, 9, 32, 64, 3, 2, (1, 2))):
        # NCHW -> NCHW32: (N, C/32, 32, H, W) -> (N, C/32, H, W, 32), packed.
        x_nchw = torch.randint(-128, 128, (n, c, h, wd), dtype=torch.int8, device="cuda")
        w_kcrs = torch.randint(-128, 128, (kk, c, r, r), dtype=torch.int8, device="cuda")
        x = x_nchw.reshape(n, c // 32, 32, h, wd).permute(0, 1, 3, 4, 2).contiguous()
        w = w_kcrs.reshape(kk, c // 32, 32, r, r).permute(0, 1, 3, 4, 2).contiguous()
        y = k.conv(x, w, stride=stride, padding=pad)
        torch.cuda.synchronize()
        assert y.dtype == torch.int32 and y.shape[1] == kk // 32 and y.shape[4] == 32
        ref = F.conv2d(x_nchw.cpu().double(), w_kcrs.cpu().double(), stride=stride or 1,
                       padding=pad or 1).round().int()
        got = y.cpu().permute(0, 1, 4, 2, 3).reshape(ref.shape)  # back to NCHW
        assert torch.equal(got, ref)


def test_requantized_nchw32_conv_with_scales_on_torch_equals_its_definition():
    torch = _torch_cuda()
    import torch.nn.functional as F

    # The seed's kernel with per-output-channel scales: int8 in and out, NCHW32.
    path = os.path.join(ROOT, "examples", "conv", "int8_nchw32_requantize.sched")
    with open(path) as f:
        text = f.read().replace("bias relu requantize", "bias scale relu requantize")
    k = schedc.compile(text, name="int8_nchw32_scale.sched")
    assert k.takes_scale and k.c_dtype == "s8" and k.convolution_layout == "nchw32"
    n, h, wd, c, kk = 2, 14, 14, 64, 96
    x_nchw = torch.randint(-128, 128, (n, c, h, wd), dtype=torch.int8, device="cuda")
    w_kcrs = torch.randint(-128, 128, (kk, c, 3, 3), dtype=torch.int8, device="cuda")
    x = x_nchw.reshape(n, c // 32, 32, h, wd).permute(0, 1, 3, 4, 2).contiguous()
    w = w_kcrs.reshape(kk, c // 32, 32, 3, 3).permute(0, 1, 3, 4, 2).contiguous()
    bias = (torch.randint(-256, 257, (kk,), device="cuda") / 8).float()
    scale = (torch.randint(32, 129, (kk,), device="cuda") / 64).float()
    y = k.conv(x, w, alpha=0.0003, bias=bias, scale=scale)  # the schedule's stride 1, pad 1
    torch.cuda.synchronize()
    assert y.dtype == torch.int8 and tuple(y.shape) == (n, kk // 32, h, wd, 32)
    # The kernel's steps in f32 on the CPU, each rounded: (alpha·scale[k])·acc, + bias[k],
    # relu, round half to even, saturate. |acc| < 2^24: exact in f32.
    acc = F.conv2d(x_nchw.cpu().double(), w_kcrs.cpu().double(), padding=1).float()
    column = (torch.tensor(0.0003, dtype=torch.float32) * scale.cpu()).view(1, kk, 1, 1)
    v = (column * acc + bias.cpu().view(1, kk, 1, 1)).clamp_min(0)
    want = torch.round(v.clamp(-128, 127)).to(torch.int8)
    got = y.cpu().permute(0, 1, 4, 2, 3).reshape(n, kk, h, wd)  # back to NCHW
    assert torch.equal(got, want)
    assert 0 < int((want == 127).sum()) < want.numel() and int((want == 0).sum()) < want.numel()


def test_int8_conv_on_torch_tensors_equals_conv2d():
    torch = _torch_cuda()
    import torch.nn.functional as F

    k = schedc.compile_file(os.path.join(ROOT, "examples", "conv", "int8_nhwc_small.sched"))
    # The schedule's own layer (its stride and padding by default), then a
    # ragged one given as a channels_last NCHW tensor (permuted: no copy).
    for n, h, wd, c, kk, r, stride, pad in ((1, 14, 14, 256, 256, 3, None, None),
                                            (3, 7, 9, 16, 40, 3, 2, (1, 2))):
        x = torch.randint(-128, 128, (n, c, h, wd), dtype=torch.int8, device="cuda")
        x = x.to(memory_format=torch.channels_last).permute(0, 2, 3, 1)
        w = torch.randint(-128, 128, (kk, r, r, c), dtype=torch.int8, device="cuda")
        y = k.conv(x, w, stride=stride, padding=pad)
        torch.cuda.synchronize()
        assert y.dtype == torch.int32
        # Exact in f64 (|sums| < 2^53); the reference runs on the CPU.
        ref = F.conv2d(x.cpu().permute(0, 3, 1, 2).double(), w.cpu().permute(0, 3, 1, 2).double(),
                       stride=stride or 1, padding=pad or 1)
        assert torch.equal(y.cpu(), ref.permute(0, 2, 3, 1).round().int())
