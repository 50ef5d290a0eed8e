// The convolution runtime's host side (issue 21), no GPU needed: ConvArgs
// against compiler::offset_table, the host im2col against the compiler's
// address arithmetic, the inputs' ranges, ResNet-50's list, the launch's
// refusals and its choice of A's copy, and the reports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "report/json.h"
#include "runtime/conv_args.h"
#include "runtime/conv_launch.h"
#include "runtime/conv_layers.h"
#include "runtime/conv_report.h"
#include "runtime/conv_run.h"
#include "runtime/error.h"
#include "runtime/host_data.h"
#include "runtime/im2col.h"
#include "runtime/tma_map.h"

namespace schedc {
namespace {

using runtime::conv2d;  // (n, h, w, c, k, r, s[, stride, pad, dilation])

TEST(ConvArgs, FieldsAndTapsAreTheOffsetTable) {
  for (const compiler::Conv2d& v : {conv2d(2, 17, 19, 32, 40, 3, 3, 1, 2, 2),    // 3x3 dilated
                                    conv2d(8, 224, 224, 16, 64, 7, 7, 2, 3)}) {  // the stem
    const runtime::ConvArgs a = runtime::make_conv_args(v);
    EXPECT_EQ(a.n, v.n);
    EXPECT_EQ(a.h, v.h);
    EXPECT_EQ(a.w, v.w);
    EXPECT_EQ(a.c, v.c);
    EXPECT_EQ(a.p, v.p());
    EXPECT_EQ(a.q, v.q());
    EXPECT_EQ(a.stride_h, v.stride_h);
    EXPECT_EQ(a.stride_w, v.stride_w);
    EXPECT_EQ(a.pad_h, v.pad_h);
    EXPECT_EQ(a.pad_w, v.pad_w);
    EXPECT_EQ(a.im2col, 0);  // the launch sets it
    const std::vector<compiler::ConvTap> taps = compiler::offset_table(v);
    ASSERT_EQ(a.taps, int32_t(taps.size()));
    ASSERT_EQ(a.taps, v.r * v.s);
    for (size_t i = 0; i < taps.size(); ++i) {
      EXPECT_EQ(a.tap[i].offset, taps[i].offset) << i;
      EXPECT_EQ(a.tap[i].dh, taps[i].dh) << i;
      EXPECT_EQ(a.tap[i].dw, taps[i].dw) << i;
    }
  }
  // The last tap of the dilated 3x3: (2·2) rows and (2·2) pixels of 32 channels in.
  const runtime::ConvArgs d = runtime::make_conv_args(conv2d(2, 17, 19, 32, 40, 3, 3, 1, 2, 2));
  EXPECT_EQ(d.tap[8].offset, 4 * 19 * 32 + 4 * 32);
  EXPECT_EQ(d.tap[8].dh, 4);
  EXPECT_EQ(d.tap[8].dw, 4);
  EXPECT_THROW(runtime::make_conv_args(conv2d(1, 1, 1, 16, 8, 3, 3)), runtime::Error);  // no output
}

TEST(ConvRunError, ChannelsInWholeSixteenByteChunks) {
  EXPECT_EQ(runtime::conv_run_error(conv2d(1, 7, 9, 16, 40, 3, 3, 1, 1), "s8", "nhwc"), "");
  EXPECT_EQ(runtime::conv_run_error(conv2d(1, 7, 9, 8, 40, 3, 3, 1, 1), "f16", "nhwc"), "");
  EXPECT_EQ(runtime::conv_run_error(conv2d(1, 7, 9, 8, 40, 3, 3, 1, 1), "bf16", "nhwc"), "");
  const std::string s8 = runtime::conv_run_error(conv2d(1, 7, 9, 8, 40, 3, 3, 1, 1), "s8", "nhwc");
  EXPECT_NE(s8.find("not a multiple of 16"), std::string::npos) << s8;
  EXPECT_NE(s8.find("C a multiple of 16"), std::string::npos) << s8;
  const std::string f16 =
      runtime::conv_run_error(conv2d(1, 7, 9, 3, 40, 3, 3, 1, 1), "f16", "nhwc");
  EXPECT_NE(f16.find("C a multiple of 8"), std::string::npos) << f16;
  EXPECT_NE(runtime::conv_run_error(conv2d(1, 7, 9, 16, 40, 0, 3), "s8", "nhwc"),
            "");  // conv_error's
}

TEST(ConvRunError, TheModulesLayout) {
  compiler::Conv2d nchw = conv2d(1, 7, 9, 32, 64, 3, 3, 1, 1);
  nchw.layout = compiler::ConvLayout::nchw32;
  EXPECT_EQ(runtime::conv_run_error(nchw, "s8", "nchw32"), "");
  EXPECT_EQ(runtime::conv_run_error(nchw, "s8", "nhwc"),
            "the module computes nhwc convolutions (this one is nchw32)");
  EXPECT_EQ(runtime::conv_run_error(conv2d(1, 7, 9, 32, 64, 3, 3, 1, 1), "s8", "nchw32"),
            "the module computes nchw32 convolutions (this one is nhwc)");
  nchw.k = 40;  // the output is NCHW32 too
  EXPECT_NE(runtime::conv_run_error(nchw, "s8", "nchw32").find("K to be a multiple of 32"),
            std::string::npos);
  // A convolution whose text named no layout takes the module's; a padded
  // C (the stem's) grows to NCHW32's 32.
  runtime::NamedConv stem = runtime::resnet50_convs(1).front();
  ASSERT_TRUE(stem.padded_channels);
  const runtime::NamedConv in32 = runtime::in_layout(stem, compiler::ConvLayout::nchw32);
  EXPECT_EQ(in32.conv.layout, compiler::ConvLayout::nchw32);
  EXPECT_EQ(in32.conv.c, 32);
  EXPECT_EQ(runtime::in_layout(stem, compiler::ConvLayout::nhwc).conv.c, 16);
  runtime::NamedConv given{"", conv2d(1, 7, 9, 32, 64, 3, 3, 1, 1), true};
  EXPECT_EQ(runtime::in_layout(given, compiler::ConvLayout::nchw32).conv.layout,
            compiler::ConvLayout::nhwc);
}

// The host im2col (the convolution's definition) and the compiler's
// address arithmetic (pixel base + tap offset + channel, predicated) give
// the same A: two independent derivations of every element.
TEST(Im2colHost, MatchesTheOffsetTableArithmetic) {
  auto nchw32 = [](compiler::Conv2d v) {
    v.layout = compiler::ConvLayout::nchw32;
    return v;
  };
  const compiler::Conv2d cases[] = {
      conv2d(3, 7, 9, 16, 40, 3, 3, 1, 1),
      conv2d(2, 13, 11, 32, 24, 1, 1, 2, 0),
      conv2d(1, 15, 17, 16, 40, 3, 3, 1, 2, 2),
      conv2d(2, 9, 7, 48, 72, 5, 5, 2, 3),
      conv2d(1, 5, 5, 16, 8, 7, 7, 1, 4),
      conv2d(1, 224, 224, 16, 64, 7, 7, 2, 3),
      // NCHW32: channel groups outermost in both the input and A's K order.
      nchw32(conv2d(3, 7, 9, 64, 32, 3, 3, 1, 1)),
      nchw32(conv2d(2, 9, 7, 96, 64, 5, 5, 2, 3)),
      nchw32(conv2d(1, 15, 17, 32, 32, 3, 3, 1, 2, 2)),
  };
  for (const compiler::Conv2d& v : cases) {
    SCOPED_TRACE(runtime::conv_string(v));
    std::vector<char> input(size_t(v.n * v.h * v.w * v.c));
    for (size_t i = 0; i < input.size(); ++i) input[i] = char(1 + i % 251);  // never 0
    const std::vector<char> a = runtime::im2col_host(v, input, 1);
    ASSERT_EQ(a.size(), size_t(v.gemm_m() * v.gemm_k()));
    const std::vector<compiler::ConvTap> taps = compiler::offset_table(v);
    int64_t zeros = 0, bad = 0;
    for (int64_t m = 0; m < v.gemm_m(); ++m)
      for (int64_t kk = 0; kk < v.gemm_k(); ++kk) {
        const std::optional<int64_t> at = compiler::gemm_a_offset(v, taps, m, kk);
        const char want = at ? input[size_t(*at)] : 0;
        zeros += !at;
        bad += a[size_t(m * v.gemm_k() + kk)] != want;
      }
    EXPECT_EQ(bad, 0);
    if (v.pad_h > 0) {
      EXPECT_GT(zeros, 0);
    }
  }
  // Elements of two bytes (f16) move whole.
  const compiler::Conv2d v = conv2d(1, 3, 3, 8, 4, 3, 3, 1, 1);
  std::vector<char> input(size_t(3 * 3 * 8 * 2));
  for (size_t i = 0; i < input.size(); ++i) input[i] = char(i + 1);
  const std::vector<char> a = runtime::im2col_host(v, input, 2);
  // Output pixel (0, 1, 1) (m = 4) reads the whole input: A(4, kk) is input element kk.
  EXPECT_EQ(std::memcmp(a.data() + 4 * 72 * 2, input.data(), input.size()), 0);
  // Output pixel (0, 0, 0): its first tap (r = s = 0) lies in the padding.
  EXPECT_EQ(a[0], 0);
  EXPECT_EQ(a[15], 0);
}

TEST(ConvInputs, RangesFollowTheGemmRule) {
  // s8, K = 576: the full int8 range; z and bias as a GEMM's C0 and bias.
  const compiler::Conv2d v = conv2d(2, 9, 7, 64, 40, 3, 3, 1, 1);
  runtime::ConvInputs in = runtime::make_conv_inputs(v, runtime::ElemType::s8, 1, 1, 1, true);
  ASSERT_EQ(in.input.size(), size_t(2 * 9 * 7 * 64));
  ASSERT_EQ(in.filters.size(), size_t(40 * 576));
  ASSERT_EQ(in.z.size(), size_t(v.gemm_m() * 40));
  ASSERT_EQ(in.bias.size(), 40u);
  EXPECT_EQ(in.range, 128);
  float lo = 0, hi = 0;
  for (float x : in.input) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  for (float x : in.z) EXPECT_TRUE(std::isfinite(x) && x == std::nearbyint(x));
  // alpha 2^16 leaves too small a budget for the full range at K = 576.
  in = runtime::make_conv_inputs(v, runtime::ElemType::s8, 1, 65536, 0, false);
  EXPECT_LT(in.range, 128);
  EXPECT_GE(in.range, 1);
  for (float x : in.filters) EXPECT_LE(std::fabs(x), in.range);
  for (float x : in.z) EXPECT_TRUE(std::isnan(x));  // beta 0: the output's poison
  EXPECT_TRUE(in.bias.empty());
  // f16: [-1, 1] in f16 values; drawn alike for the same seed, not for another.
  in = runtime::make_conv_inputs(v, runtime::ElemType::f16, 3, 1, 0, false);
  for (float x : in.input) {
    EXPECT_LE(std::fabs(x), 1.0f);
    EXPECT_EQ(x, runtime::round_to(runtime::ElemType::f16, x));
  }
  EXPECT_EQ(in.input, runtime::make_conv_inputs(v, runtime::ElemType::f16, 3, 1, 0, false).input);
  EXPECT_NE(in.input, runtime::make_conv_inputs(v, runtime::ElemType::f16, 4, 1, 0, false).input);
}

// The case run_conv validates with (and the library's GPU test): the
// inputs' bytes, A from the definition, the output's prior content.
TEST(ConvCase, HoldsTheInputsBytesAndTheirIm2col) {
  const compiler::Conv2d v = conv2d(2, 9, 7, 16, 40, 3, 3, 1, 1);
  compiler::Epilogue epi;
  epi.beta = 1, epi.bias = true;
  const runtime::ConvCase cc = runtime::make_conv_case(v, "s8", 5, epi);
  const runtime::ConvInputs in = runtime::make_conv_inputs(v, runtime::ElemType::s8, 5, 1, 1, true);
  EXPECT_EQ(cc.input, runtime::encode(runtime::ElemType::s8, in.input));
  EXPECT_EQ(cc.hc.a, runtime::im2col_host(v, cc.input, 1));
  EXPECT_EQ(cc.hc.b, runtime::encode(runtime::ElemType::s8, in.filters));
  EXPECT_EQ(cc.hc.sent, runtime::encode(runtime::ElemType::s32, in.z));  // int32, z
  EXPECT_EQ(cc.hc.bias, in.bias);
  EXPECT_EQ(cc.reference_inputs.c0.size(), size_t(v.gemm_m() * v.gemm_n()));
  EXPECT_EQ(cc.reference_inputs.bias, in.bias);
  // An int8 C (`epilogue ... requantize`): inputs drawn for alpha 1, z int8
  // (one byte an element, sent as drawn), the bias small multiples of 1/8.
  compiler::Epilogue rq = epi;
  rq.alpha = 0.001f, rq.requantize = true;
  const runtime::ConvCase q = runtime::make_conv_case(v, "s8", 5, rq);
  ASSERT_EQ(q.hc.sent.size(), size_t(v.gemm_m() * v.gemm_n()));
  ASSERT_EQ(q.reference_inputs.c0.size(), q.hc.sent.size());
  for (size_t i = 0; i < q.hc.sent.size(); ++i) {
    const float z = q.reference_inputs.c0[i];
    ASSERT_TRUE(z >= -128 && z <= 127) << z;
    ASSERT_EQ(int(static_cast<signed char>(q.hc.sent[i])), int(z));
  }
  for (float b : q.hc.bias) EXPECT_LE(std::fabs(b), 32.0f);
  EXPECT_EQ(runtime::drawn_scalars(rq), (std::pair<float, float>{1.0f, 1.0f}));
  rq.beta = 0;
  EXPECT_EQ(runtime::drawn_scalars(rq), (std::pair<float, float>{1.0f, 0.0f}));
  EXPECT_EQ(runtime::drawn_scalars(epi), (std::pair<float, float>{epi.alpha, epi.beta}));
  // beta 0: the output is poisoned (INT32_MIN) before the run.
  const runtime::ConvCase poisoned = runtime::make_conv_case(v, "s8", 5, {});
  std::vector<int32_t> sent;
  runtime::decode_s32_into(poisoned.hc.sent, sent);
  EXPECT_EQ(sent.front(), runtime::kPoisonS32);
}

// An NCHW32 output, [N][K/32][P][Q][32], from and back to the GEMM's C.
TEST(ConvOutput, Nchw32PutsEachElementInItsGroupPlane) {
  compiler::Conv2d v = conv2d(2, 5, 7, 32, 64, 3, 3, 2, 1);  // P 3, Q 4, K 64
  const int64_t M = v.gemm_m(), K = v.k, P = v.p(), Q = v.q();
  std::vector<int32_t> values(size_t(M * K));
  for (size_t i = 0; i < values.size(); ++i) values[i] = int32_t(i);
  std::vector<char> c(values.size() * 4);
  std::memcpy(c.data(), values.data(), c.size());
  EXPECT_EQ(runtime::output_in_layout(v, c, 4), c);  // NHWC is the GEMM's C
  v.layout = compiler::ConvLayout::nchw32;
  const std::vector<char> out = runtime::output_in_layout(v, c, 4);
  ASSERT_EQ(out.size(), c.size());
  int64_t bad = 0;
  for (int64_t n = 0; n < v.n; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < P; ++oh)
        for (int64_t ow = 0; ow < Q; ++ow) {
          int32_t got = 0;
          const int64_t at = (((n * (K / 32) + k / 32) * P + oh) * Q + ow) * 32 + k % 32;
          std::memcpy(&got, out.data() + at * 4, 4);
          bad += got != int32_t(((n * P + oh) * Q + ow) * K + k);
        }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(runtime::output_as_matrix(v, out, 4), c);
}

TEST(ResNet50, TwentyThreeDistinctLayersEveryModuleComputes) {
  for (int64_t batch : {1, 8, 32}) {
    const std::vector<runtime::NamedConv> layers = runtime::resnet50_convs(batch);
    ASSERT_EQ(layers.size(), 23u);
    std::set<std::string> seen;
    for (const runtime::NamedConv& l : layers) {
      EXPECT_TRUE(seen.insert(runtime::conv_string(l.conv)).second) << l.name;
      EXPECT_EQ(l.conv.n, batch);
      for (const char* dtype : {"s8", "f16", "bf16"}) {
        EXPECT_EQ(runtime::conv_run_error(l.conv, dtype, "nhwc"), "") << l.name << " " << dtype;
        const runtime::NamedConv n32 = runtime::in_layout(l, compiler::ConvLayout::nchw32);
        EXPECT_EQ(runtime::conv_run_error(n32.conv, dtype, "nchw32"), "") << l.name << " " << dtype;
      }
    }
    // The stem: 224 -> 112; stage 5: 7x7.
    EXPECT_EQ(layers.front().conv.p(), 112);
    EXPECT_EQ(layers.front().conv.gemm_k(), 16 * 49);
    EXPECT_EQ(layers.back().conv.p(), 7);
    // Each stage's stride-2 3x3 and projection halve the size.
    int stride2 = 0;
    for (const runtime::NamedConv& l : layers)
      if (l.conv.stride_h == 2) {
        ++stride2;
        EXPECT_EQ(l.conv.p() * 2, l.conv.h) << l.name;
      }
    EXPECT_EQ(stride2, 7);  // the stem, three 3x3/2 and three 1x1/2 projections
  }
}

TEST(ConvReport, NamesTheConvolutionAndItsGemm) {
  compiler::Conv2d v = conv2d(8, 56, 56, 64, 64, 3, 3, 1, 1);
  EXPECT_EQ(runtime::conv_title(v),
            "conv 8x56x56x64 filter 64x3x3 stride 1 pad 1 NHWC: GEMM 25088x64x576");
  v.stride_w = 2, v.pad_h = 2, v.dil_h = v.dil_w = 2;
  EXPECT_EQ(runtime::conv_string(v), "8x56x56x64 filter 64x3x3 stride 1x2 pad 2x1 dilation 2 NHWC");
  const compiler::Problem p =
      runtime::conv_problem(conv2d(8, 56, 56, 64, 64, 3, 3, 1, 1), compiler::DType::s8);
  EXPECT_EQ(p.m, 25088);
  EXPECT_EQ(p.n, 64);
  EXPECT_EQ(p.k, 576);
  EXPECT_TRUE(p.b_col);
  EXPECT_FALSE(p.a_col || p.c_col);
  EXPECT_EQ(p.b_ld(), 576);
  EXPECT_EQ(p.c_ld(), 64);
}

runtime::ConvReport timed_report() {
  runtime::ConvReport r;
  r.conv = conv2d(8, 56, 56, 64, 64, 3, 3, 1, 1);
  r.problem = runtime::conv_problem(r.conv, compiler::DType::s8);
  r.entry.name = "schedc_conv";
  runtime::ValidationResult v;
  v.ok = true;
  v.bit_exact = true;
  r.validations.push_back(v);
  r.ref_mode = runtime::RefMode::s8;
  r.im2col_checked = true;
  r.timed = true;
  r.kernel.median_ms = 0.1;
  r.cublas.median_ms = 0.09;
  r.explicit_pipeline.median_ms = 0.25;
  return r;
}

TEST(ConvReport, BlockAndJsonCarryTheThreeTimings) {
  const runtime::ConvReport r = timed_report();
  EXPECT_DOUBLE_EQ(r.percent_of_cublas(), 90.0);
  EXPECT_DOUBLE_EQ(r.x_of_explicit(), 2.5);
  std::ostringstream block;
  runtime::print_conv_block(block, "conv.sched", "s8", r);
  const std::string text = block.str();
  std::cout << text;
  EXPECT_NE(text.find("conv.sched  conv 8x56x56x64 filter 64x3x3 stride 1 pad 1 NHWC: GEMM "
                      "25088x64x576 s8"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ok: bit-exact vs cuBLAS int8"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU im2col = host im2col"), std::string::npos) << text;
  EXPECT_NE(text.find("(kernel at 90.0% of it)"), std::string::npos) << text;
  EXPECT_NE(text.find("(kernel 2.50x faster)"), std::string::npos) << text;
  EXPECT_NE(text.find("TOPS"), std::string::npos) << text;

  runtime::PreparedKernel prepared;
  prepared.kernel.dtype = "s8";
  const report::Json j = report::Json::parse(
      report::json_text(runtime::conv_json("conv.sched", prepared, r, {{"layer", "res2 3x3"}})));
  EXPECT_EQ(j["m"], 25088);
  EXPECT_EQ(j["conv"]["text"], "8x56x56x64 filter 64x3x3 stride 1 pad 1 NHWC");
  EXPECT_EQ(j["conv"]["p"], 56);
  EXPECT_EQ(j["conv"]["stride"][1], 1);
  EXPECT_EQ(j["percent_of_cublas"], 90.0);
  EXPECT_EQ(j["x_of_explicit"], 2.5);
  EXPECT_EQ(j["explicit_ms"]["median"], 0.25);
  EXPECT_TRUE(j["im2col_checked"].get<bool>());
  EXPECT_EQ(j["layer"], "res2 3x3");

  // Without a baseline (cuBLAS int8 rejected the problem): no ratios.
  runtime::ConvReport n = r;
  n.no_baseline = "cuBLAS int8 rejects this problem";
  EXPECT_TRUE(std::isnan(n.x_of_explicit()));
  const report::Json k =
      report::Json::parse(report::json_text(runtime::conv_json("conv.sched", prepared, n)));
  EXPECT_TRUE(k["x_of_explicit"].is_null());
  EXPECT_TRUE(k["explicit_ms"].is_null());
}

// The launch's refusals need no device: check_conv_launch is host logic.
TEST(ConvLaunch, RefusesWhatTheModuleCannotRun) {
  codegen::GeneratedKernel k;
  k.dtype = "s8";
  k.conv = "nhwc";
  k.b_col = true;
  k.main.name = "schedc_conv";
  const compiler::Conv2d v = conv2d(2, 7, 9, 16, 40, 3, 3, 1, 1);
  const runtime::ConvArgs args = runtime::make_conv_args(v);
  const compiler::Problem p = runtime::conv_problem(v, compiler::DType::s8);
  runtime::EntryChoice choice;
  choice.entry = &k.main;
  choice.name = k.main.name;
  const void* aligned = reinterpret_cast<const void*>(uintptr_t(256));
  runtime::GemmArgs good{aligned, aligned, const_cast<void*>(aligned), 1, 0, nullptr, &args};
  EXPECT_NO_THROW(runtime::check_conv_launch(k, choice, p, good));
  auto refused = [&](const runtime::EntryChoice& ch, const compiler::Problem& pr,
                     const runtime::GemmArgs& a, const std::string& words) {
    try {
      runtime::check_conv_launch(k, ch, pr, a);
      ADD_FAILURE() << "not refused: " << words;
    } catch (const runtime::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  runtime::GemmArgs no_conv = good;
  no_conv.conv = nullptr;
  refused(choice, p, no_conv, "needs the convolution's geometry");
  runtime::GemmArgs odd = good;
  odd.a = reinterpret_cast<const void*>(uintptr_t(264));
  refused(choice, p, odd, "not 16-byte aligned");
  runtime::EntryChoice repack = choice;
  repack.repack_a = true;
  refused(repack, p, good, "cannot be repacked");
  compiler::Problem other = p;
  other.k += 1;
  refused(choice, other, good, "not the convolution's implicit GEMM");
  // A GEMM module takes no ConvArgs, and launches as before without one.
  k.conv.clear();
  refused(choice, p, good, "takes no convolution");
  EXPECT_NO_THROW(runtime::check_conv_launch(k, choice, p, no_conv));
}

// Where ConvArgs goes: right after the parameters each entry declares.
TEST(ConvLaunch, ConvArgsFollowTheEntrysOwnParameters) {
  codegen::KernelEntry e;
  EXPECT_EQ(runtime::entry_extra_params(e), 0u);  // SIMT, mma.sync: the GEMM's alone
  e.stream_k = true;
  EXPECT_EQ(runtime::entry_extra_params(e), 0u);  // SIMT stream_k: the split is its grid
  e.stream_k = false;
  e.tma_a = e.tma_b = {64, 64};
  EXPECT_EQ(runtime::entry_extra_params(e), 2u);  // tma_a, tma_b
  e.tma_c = {64, 64};
  EXPECT_EQ(runtime::entry_extra_params(e), 3u);  // and tma_c (tma_store)
  e.tma_c = {};
  e.stream_k = true;
  EXPECT_EQ(runtime::entry_extra_params(e), 4u);  // tma_a, tma_b, tma_c, sk_whole_tiles
}

// The launch's choice of A's copy (runtime/conv_launch.h): the geometry it
// takes from ConvArgs is the Conv2d's (the last tap is the dilated reach),
// and TMA's im2col mode is taken exactly where the entry can and
// compiler::im2col_error allows, not under SCHEDC_CONV_IM2COL=0.
TEST(ConvLaunch, ChoosesTheIm2colCopyWhereItApplies) {
  compiler::Conv2d skew = conv2d(2, 11, 8, 128, 40, 3, 5, 1, 1);
  skew.stride_h = 2, skew.pad_w = 2, skew.dil_w = 2;
  for (const compiler::Conv2d& v :
       {conv2d(8, 28, 28, 128, 128, 3, 3, 1, 1), conv2d(1, 15, 17, 256, 40, 3, 3, 1, 2, 2), skew}) {
    SCOPED_TRACE(compiler::conv_text(v));
    const runtime::ConvArgs a = runtime::make_conv_args(v);
    const compiler::Im2colGeometry got = runtime::im2col_geometry(a),
                                   want = compiler::im2col_geometry(v);
    EXPECT_EQ(got.n, want.n);
    EXPECT_EQ(got.h, want.h);
    EXPECT_EQ(got.w, want.w);
    EXPECT_EQ(got.c, want.c);
    EXPECT_EQ(got.stride_h, want.stride_h);
    EXPECT_EQ(got.stride_w, want.stride_w);
    EXPECT_EQ(got.pad_h, want.pad_h);
    EXPECT_EQ(got.pad_w, want.pad_w);
    EXPECT_EQ(got.reach_h, want.reach_h);
    EXPECT_EQ(got.reach_w, want.reach_w);
  }
  codegen::KernelEntry e;
  e.tma_a = e.tma_b = {128, 128};  // BM x BK: one 128-byte panel of k (s8)
  e.tile_k = 128;
  const runtime::ConvArgs c128 = runtime::make_conv_args(conv2d(8, 28, 28, 128, 128, 3, 3, 1, 1));
  const runtime::ConvArgs c64 = runtime::make_conv_args(conv2d(8, 56, 56, 64, 64, 3, 3, 1, 1));
  EXPECT_NE(runtime::conv_im2col_error(e, c128).find("producer copies A itself"),
            std::string::npos);  // an entry without a_im2col (mma.sync, NCHW32)
  e.a_im2col = true;
  EXPECT_EQ(runtime::conv_im2col_error(e, c128), "");
  const runtime::ConvArgs c48 = runtime::make_conv_args(conv2d(8, 56, 56, 48, 64, 3, 3, 1, 1));
  EXPECT_EQ(runtime::conv_im2col_error(e, c64), "");  // two copies a k-tile
  EXPECT_EQ(runtime::conv_im2col_copies(e, c64), 2);
  EXPECT_EQ(runtime::conv_im2col_copies(e, c128), 1);
  EXPECT_NE(runtime::conv_im2col_error(e, c48).find("C = 48 is not a multiple of BK / 2 = 64"),
            std::string::npos);
  EXPECT_EQ(runtime::conv_im2col_copies(e, c48), 0);
  std::string why = "unset";  // the reason comes back with the count
  EXPECT_EQ(runtime::conv_im2col_copies(e, c64, &why), 2);
  EXPECT_EQ(why, "");
  EXPECT_EQ(runtime::conv_im2col_copies(e, c48, &why), 0);
  EXPECT_NE(why.find("C = 48 is not a multiple of BK / 2 = 64"), std::string::npos);
  setenv("SCHEDC_CONV_IM2COL", "0", 1);
  EXPECT_EQ(runtime::conv_im2col_error(e, c128), "SCHEDC_CONV_IM2COL=0");
  EXPECT_EQ(runtime::conv_im2col_copies(e, c64), 0);
  unsetenv("SCHEDC_CONV_IM2COL");
  EXPECT_EQ(runtime::conv_im2col_error(e, c128), "");
  // A k-tile of two 128-byte panels (BK 256): one copy a panel, where C is a
  // multiple of a panel; no 64-byte halves.
  e.tile_k = 256;
  EXPECT_EQ(runtime::conv_im2col_copies(e, c128), 1);
  EXPECT_EQ(runtime::conv_im2col_copies(e, c64, &why), 0);
  EXPECT_NE(why.find("C = 64 is not a multiple of 128, the channels of one of BK = 256's"),
            std::string::npos)
      << why;
}

// The one-wave rule (Module::conv_a_copies asks it with the grid and the
// device's blocks at once): two copies where every block runs at once,
// the producer's copies (0, with the reason) past one wave; one copy and
// none pass through whatever the grid.
TEST(ConvLaunch, TwoCopiesOnlyInOneWave) {
  std::string why = "unset";
  EXPECT_EQ(runtime::conv_copies_in_one_wave(2, 98, 132, 64, &why), 2);  // res2, batch 1
  EXPECT_EQ(why, "unset");
  EXPECT_EQ(runtime::conv_copies_in_one_wave(2, 396, 396, 64, &why), 2);   // exactly one wave
  EXPECT_EQ(runtime::conv_copies_in_one_wave(2, 1568, 396, 64, &why), 0);  // res2, batch 32
  EXPECT_EQ(why,
            "C = 64 takes two 64-byte copies a k-tile, and the grid's 1568 blocks run in more "
            "than one wave (396 at once)");
  EXPECT_EQ(runtime::conv_copies_in_one_wave(1, 1568, 396, 128), 1);
  EXPECT_EQ(runtime::conv_copies_in_one_wave(0, 1568, 396, 48), 0);
  EXPECT_EQ(runtime::conv_copies_in_one_wave(2, 397, 396, 64), 0);  // no reason asked for
}

// `halo`: the plan a halo entry takes for a convolution, and why not where
// it does not; the ConvArgs it sets (each tap's window in bytes), the map's
// box, the panels a split_k slice spans, and the convolution ConvArgs
// describe.
TEST(ConvLaunch, HaloPlanWhereItFits) {
  codegen::KernelEntry e;
  e.tma_a = e.tma_b = {64, 128};  // BM x BK: one 128-byte panel of k (s8)
  e.tile_m = 64, e.tile_k = 128;
  const runtime::ConvArgs res5 = runtime::make_conv_args(conv2d(8, 7, 7, 512, 512, 3, 3, 1, 1));
  std::string why = "unset";
  EXPECT_FALSE(runtime::conv_halo_plan(e, res5, 1, 1, &why));
  EXPECT_NE(why.find("`halo`'s"), std::string::npos);
  e.a_halo_bytes = 6 * 64 * 128;  // six stages of A: 48 KB
  const std::optional<compiler::HaloGeometry> g = runtime::conv_halo_plan(e, res5, 1, 1, &why);
  ASSERT_TRUE(g);  // four panels of 84 rows: 43 KB
  EXPECT_EQ(why, "");
  EXPECT_EQ(g->tiles, 8);
  EXPECT_EQ(runtime::halo_note(*g, 128),
            "the input once a tile (halo): one image a tile, 1 phase image(s) a panel of "
            "channels, 8 tiles");
  runtime::ConvArgs a = res5;
  runtime::set_conv_halo(a, *g, 1);
  EXPECT_EQ(a.im2col, 3);
  EXPECT_EQ(a.halo_pitch, 9);
  EXPECT_EQ(a.halo_region_bytes, 88 * 128);  // 64 + 20 rows, to a multiple of 8
  EXPECT_EQ(a.halo_bytes, 81 * 128);         // a panel's one 9x9 image
  EXPECT_EQ(a.tap[0].offset, 0);
  EXPECT_EQ(a.tap[8].offset, (2 * 9 + 2) * 128);
  const runtime::HaloBox b = runtime::halo_box(a, *g, 1);
  EXPECT_EQ(b.row_bytes, 128);
  EXPECT_EQ(b.box_w, 9);
  EXPECT_EQ(b.box_h, 9);
  EXPECT_EQ(b.box_n, 1);
  // Its 3x3/2: four phase images of 8x8 a panel (265 rows with the reach),
  // each box walking every other pixel; all four panels do not fit in 48 KB,
  // a slice's two of `split_k 2` in nine stages' 72 KB do.
  const runtime::ConvArgs res5s2 = runtime::make_conv_args(conv2d(8, 14, 14, 512, 512, 3, 3, 2, 1));
  EXPECT_FALSE(runtime::conv_halo_plan(e, res5s2, 1, 1, &why));
  EXPECT_NE(why.find("(4 panel(s) of channels)"), std::string::npos) << why;
  EXPECT_TRUE(runtime::conv_halo_plan(e, res5s2, 1, 0));  // the shared memory not yet known
  e.a_halo_bytes = 9 * 64 * 128;
  const std::optional<compiler::HaloGeometry> g2 = runtime::conv_halo_plan(e, res5s2, 1, 2);
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->phases.size(), 4u);
  EXPECT_EQ(runtime::halo_box(res5s2, *g2, 1).box_w, 16);
  EXPECT_EQ(compiler::halo_blocks_a_slice(36, 9, 1), 4);
  EXPECT_EQ(compiler::halo_blocks_a_slice(36, 9, 2), 2);
  EXPECT_EQ(compiler::halo_blocks_a_slice(36, 9, 3), 2);  // 12 k-tiles: blocks 1 and 2
  EXPECT_EQ(compiler::halo_blocks_a_slice(36, 9, 4), 1);
  EXPECT_EQ(compiler::halo_blocks_a_slice(36, 9, 5), 2);
  e.a_halo_bytes = 6 * 64 * 128;
  // NHWC C = 64 of s8 is 64 bytes a pixel, half a panel: an entry whose
  // k-tile is one 128-byte panel (a_halo_64b) takes it in 64-byte rows, two
  // taps a k-tile (ConvArgs::im2col 4); another entry does not. res2 at
  // batch 1: one output row a tile (a band), 3 input rows of pitch 58.
  const runtime::ConvArgs res2 = runtime::make_conv_args(conv2d(1, 56, 56, 64, 64, 3, 3, 1, 1));
  EXPECT_FALSE(runtime::conv_halo_plan(e, res2, 1, 1, &why));
  EXPECT_NE(why.find("64 bytes a pixel"), std::string::npos) << why;
  e.a_halo_64b = true;
  const std::optional<compiler::HaloGeometry> g3 = runtime::conv_halo_plan(e, res2, 1, 1, &why);
  ASSERT_TRUE(g3) << why;
  EXPECT_EQ(g3->bands, 56);
  EXPECT_EQ(g3->pitch, 58);
  runtime::ConvArgs a3 = res2;
  runtime::set_conv_halo(a3, *g3, 1);
  EXPECT_EQ(a3.im2col, 4);
  EXPECT_EQ(a3.halo_bytes, 3 * 58 * 64);      // one phase image of 3 rows of 58 pixels
  EXPECT_EQ(a3.halo_region_bytes, 184 * 64);  // 64 + 118 rows of reach, to a multiple of 8
  EXPECT_EQ(a3.tap[1].offset, 64);
  EXPECT_EQ(a3.tap[8].offset, (2 * 58 + 2) * 64);
  EXPECT_EQ(runtime::halo_box(a3, *g3, 1).row_bytes, 64);
  EXPECT_EQ(runtime::halo_box(a3, *g3, 1).box_w, 58);
  EXPECT_EQ(runtime::halo_note(*g3, 64),
            "the input once a tile (halo): 1 output row(s) of an image a tile, 1 phase image(s) "
            "of 64-byte pixels (two taps a k-tile), 56 tiles");
  // f16: C = 32 is 64 bytes a pixel, C = 64 a panel (a_halo_64b or not).
  EXPECT_EQ(compiler::halo_row_bytes(conv2d(1, 56, 56, 32, 64, 3, 3, 1, 1), 2), 64);
  EXPECT_EQ(compiler::halo_row_bytes(conv2d(1, 56, 56, 64, 64, 3, 3, 1, 1), 2), 128);
  // A k-tile of two panels would be four taps of 64-byte pixels: not taken.
  e.tile_k = 256;
  EXPECT_FALSE(runtime::conv_halo_plan(e, res2, 1, 1, &why));
  EXPECT_NE(why.find("not one 128-byte panel"), std::string::npos) << why;
  e.tile_k = 128;
  e.a_halo_64b = false;
  // C = 48 of s8 is neither 64 bytes nor a multiple of a panel.
  EXPECT_FALSE(runtime::conv_halo_plan(
      e, runtime::make_conv_args(conv2d(8, 56, 56, 48, 64, 3, 3, 1, 1)), 1, 1, &why));
  EXPECT_NE(why.find("neither 64 nor a multiple of a 128-byte panel"), std::string::npos) << why;
  EXPECT_TRUE(runtime::conv_halo_plan(
      e, runtime::make_conv_args(conv2d(8, 7, 7, 384, 64, 3, 3, 1, 1)), 1, 1, &why));
  EXPECT_EQ(why, "");
  e.tile_k = 256;
  EXPECT_FALSE(runtime::conv_halo_plan(
      e, runtime::make_conv_args(conv2d(8, 7, 7, 384, 64, 3, 3, 1, 1)), 1, 1, &why));
  EXPECT_NE(why.find("not a multiple of BK = 256"), std::string::npos);
  // BK 256 (res5's 18 k-tiles): a slice of split_k 2 is one block of two
  // panels (21.5 KB), the whole k two blocks (43 KB).
  e.a_halo_bytes = 16 * 1024;
  EXPECT_FALSE(runtime::conv_halo_plan(e, res5, 1, 2, &why));
  EXPECT_NE(why.find("(2 panel(s) of channels)"), std::string::npos) << why;
  e.a_halo_bytes = 2 * 64 * 256;
  EXPECT_TRUE(runtime::conv_halo_plan(e, res5, 1, 2));
  EXPECT_FALSE(runtime::conv_halo_plan(e, res5, 1, 1, &why));
  EXPECT_NE(why.find("(4 panel(s) of channels)"), std::string::npos) << why;
  e.a_halo_bytes = 6 * 64 * 128;
  e.tile_k = 128;
  setenv("SCHEDC_CONV_HALO", "0", 1);
  EXPECT_FALSE(runtime::conv_halo_plan(e, res5, 1, 1, &why));
  EXPECT_EQ(why, "SCHEDC_CONV_HALO=0");
  unsetenv("SCHEDC_CONV_HALO");
  // The convolution ConvArgs describe: R, S and the dilation from the taps.
  for (const compiler::Conv2d& v : {conv2d(2, 17, 19, 32, 40, 3, 5, 1, 2, 2),
                                    conv2d(1, 9, 9, 16, 8, 1, 1), conv2d(1, 9, 9, 16, 8, 7, 1)}) {
    const compiler::Conv2d got = runtime::conv_of_args(runtime::make_conv_args(v));
    EXPECT_EQ(got.r, v.r);
    EXPECT_EQ(got.s, v.s);
    EXPECT_EQ(got.dil_h, v.dil_h);
    EXPECT_EQ(got.dil_w, v.dil_w);
    EXPECT_EQ(got.p(), v.p());
    EXPECT_EQ(got.q(), v.q());
  }
}

}  // namespace
}  // namespace schedc
