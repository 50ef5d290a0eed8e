// `conv`: the directive's arguments (compiler/conv.h's Conv2d) and the rules
// of a convolution kernel (docs/convolution.md). The kernel is the wgmma
// GEMM with a producer that copies A from the input through the offset
// table, or the mma.sync GEMM whose threads copy A the same way, so:
//   - it needs `wgmma` f16, bf16 or s8 and `warp_specialize` (the producer
//     warpgroup's 128 threads make the copies), or `mma` f16, bf16 or s8
//     with cp.async stages (2 or more) and no `tma`; tf32, `wmma` and SIMT
//     are not implemented yet;
//   - it fixes the layouts (the input as A, the filters as a column-major B,
//     the output as C, all in the convolution's layout, NHWC or NCHW32) and
//     the GEMM's shape, so `layout`, `shape` and `batch` do not apply;
//     `cluster` is split_k's pair sharing the filters (2x1, not with
//     `persistent`; A is never multicast); an NCHW32 output is
//     not one matrix a TMA box can address, so `tma_store` does not apply
//     there;
//   - a copy is one 16-byte chunk of a pixel's channels: C·sizeof(T) must be
//     a multiple of 16.
#include "compiler/analyze.h"
#include "compiler/analyzer.h"
#include "compiler/conv.h"
#include "compiler/conv_halo.h"
#include "dsl/parse.h"

namespace schedc::compiler::analysis {

void Analyzer::read_conv(const Directive& d) {
  const std::vector<Arg>& a = d.args;
  Conv2d v;
  std::vector<int64_t> x;
  bool ok = true;
  ok &= extents(a[0], {"N", "H", "W", "C"}, 1, kMaxShape, x);
  if (ok) v.n = x[0], v.h = x[1], v.w = x[2], v.c = x[3];
  ok &= a.size() > 1 && extents(a[1], {"K", "R", "S"}, 1, kMaxShape, x);
  if (ok) v.k = x[0], v.r = x[1], v.s = x[2];
  // stride / pad / dilation: a word, then one extent (both axes) or two (H, W).
  for (size_t i = 2; i < a.size(); ++i) {
    if (a[i].kind == Arg::Kind::word && a[i].text != "stride" && a[i].text != "pad" &&
        a[i].text != "dilation") {
      if (const std::optional<ConvLayout> l = layout_from_word(a[i].text)) {
        v.layout = *l;
        continue;
      }
      bad_value(a[i].span,
                "unknown convolution layout '" + a[i].text + "'; the layouts are nhwc and nchw32");
      ok = false;
      continue;
    }
    if (a[i].kind != Arg::Kind::word || i + 1 >= a.size()) continue;
    const std::string what = a[i].text;
    const Arg& val = a[++i];
    if (val.values.size() != 1 && val.values.size() != 2) {
      bad_value(val.span, "'" + what + "' takes one value (both axes) or two (HxW), got " +
                              std::to_string(val.values.size()));
      ok = false;
      continue;
    }
    const int64_t lo = what == "pad" ? 0 : 1;
    std::vector<int64_t> y;
    const std::string name = what == "pad" ? "the padding" : "the " + what;
    if (!extents(val, std::vector<std::string>(val.values.size(), name), lo, kMaxExtent, y)) {
      ok = false;
      continue;
    }
    const int64_t hv = y[0], wv = y.size() > 1 ? y[1] : y[0];
    if (what == "stride") v.stride_h = hv, v.stride_w = wv;
    if (what == "pad") v.pad_h = hv, v.pad_w = wv;
    if (what == "dilation") v.dil_h = hv, v.dil_w = wv;
  }
  s_.conv_at = at(d);
  if (!ok) return;
  if (std::string why = conv_error(v); !why.empty()) {
    bad_value(d.span, "not a convolution schedc computes: " + why);
    return;
  }
  if (v.gemm_m() > kMaxShape || v.gemm_k() > kMaxShape) {
    bad_value(d.span, "the convolution's GEMM (" + std::to_string(v.gemm_m()) + "x" +
                          std::to_string(v.gemm_n()) + "x" + std::to_string(v.gemm_k()) +
                          ") is larger than a GEMM schedc takes (" + std::to_string(kMaxShape) +
                          " per extent)");
    return;
  }
  s_.conv = v;
}

void Analyzer::conv_rules() {
  const Directive* d = given("conv");
  const Directive* halo = given("halo");
  if (!d) {
    if (halo)
      error(halo->keyword_span,
            "'halo' needs 'conv': it copies a convolution's input once a tile (docs/"
            "convolution.md)");
    return;
  }
  auto refuse = [&](const std::string& other, const std::string& why) {
    if (const Directive* o = given(other)) {
      auto& e = error(o->keyword_span, "'" + other + "' does not apply with 'conv': " + why);
      e.notes.push_back({d->keyword_span, "'conv' given here"});
    }
  };
  refuse("shape", "the convolution gives the GEMM's shape (M = N·P·Q, N = K, K = C·R·S)");
  for (const char* l : {"layout A", "layout B", "layout C"})
    refuse(l,
           "the convolution fixes the layouts: the input is A, the filters a column-major B, "
           "the output C, each in the convolution's layout (nhwc or nchw32)");
  refuse("batch", "the convolution's images are its batch (N of NxHxWxC)");
  if (!s_.mma || s_.mma->api == MmaApi::wmma) {
    auto& e = error(d->keyword_span,
                    "'conv' is not implemented yet without 'wgmma' or 'mma': the convolution "
                    "kernels are the tensor-core ones (add 'wgmma s8' or 'wgmma f16', 'tma', "
                    "'warp_specialize' on sm_90, or 'mma s8' or 'mma f16' and 'stages 2' or more; "
                    "docs/convolution.md)");
    if (mma_dir_) e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
    return;
  }
  if (s_.mma->type == MmaType::tf32) {
    auto& e = error(d->keyword_span, "'conv' is not implemented yet with '" + mma_dir_->keyword +
                                         " tf32': use f16, bf16 or s8");
    e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
  }
  if (s_.uses_wgmma()) {  // the producer warpgroup copies A
    if (!given("warp_specialize"))
      error(d->keyword_span,
            "'conv' needs 'warp_specialize': the producer warpgroup's 128 threads copy A from "
            "the input through the offset table");
    // `cluster 2x1` shares the filters (B) between two tiles along M on
    // split_k's clusters (cluster_split_k_rules); A is copied by the
    // producer's threads or the halo's boxes, never multicast.
    if (const Directive* c = given("cluster");
        c && s_.cluster_m * s_.cluster_n > 1 && given("persistent")) {
      auto& e = error(c->keyword_span,
                      "'cluster' with 'conv' is not implemented with 'persistent' yet: the "
                      "convolution's clusters are split_k's (add 'split_k N', drop "
                      "'persistent'), each slice's two tiles along M sharing the filters");
      e.notes.push_back({d->keyword_span, "'conv' given here"});
    }
    // The producer's threads split a k-tile's row of 16-byte chunks evenly
    // (WgmmaConvCopy: 128 / chunks rows a pass), so its 128-byte panels of k
    // are a power of two.
    const int64_t panels = s_.tile ? s_.tile->k * size_of(s_.dtype) / 128 : 1;
    if (panels > 1 && (panels & (panels - 1)) != 0) {
      auto& e = error(d->keyword_span,
                      "'conv' on 'wgmma' copies A's k-tile with the producer's 128 threads, "
                      "16 bytes each, an even share of its rows: BK must make 1, 2, 4 or 8 "
                      "128-byte panels of k (BK is " +
                          std::to_string(s_.tile->k) + ": " + std::to_string(panels) + ")");
      note(e, tile_note(), "block tile set here");
    }
    halo_rules();
  } else {  // mma.sync: every thread copies A through the offset table
    if (halo)
      error(halo->keyword_span,
            "'halo' is not implemented on 'mma': the input's copy is TMA boxes that the Hopper "
            "kernel's windows read ('wgmma', 'tma', 'warp_specialize')");
    refuse("tma",
           "not implemented yet on 'mma' (A comes from the input through the offset table by "
           "cp.async; 'wgmma' loads the filters by TMA)");
    if (s_.stages < 2)
      error(d->keyword_span,
            "'conv' on 'mma' needs 'stages 2' or more: A's chunks come by cp.async through the "
            "offset table");
  }
  s_.b_col = true;  // the filters [K][R][S][C]: N x K, k contiguous
  if (!s_.conv) return;
  if (halo && s_.uses_wgmma() && s_.conv->layout == ConvLayout::nchw32) {
    auto& e = error(halo->keyword_span,
                    "'halo' copies NHWC pixels of 128-byte panels of channels; this convolution "
                    "is NCHW32");
    e.notes.push_back({d->span, "'conv' given here"});
  }
  const Conv2d& v = *s_.conv;
  if (s_.uses_wgmma() && v.layout == ConvLayout::nchw32)
    refuse("tma_store",
           "an NCHW32 output ([N][K/32][P][Q][32]) is not a row-major matrix: a tile's rows "
           "cross images and its columns channel-group planes, which no TMA box addresses; the "
           "epilogue stores it directly");
  if (std::string why = conv_channels_error(v, size_of(s_.dtype), to_string(s_.dtype));
      !why.empty())
    bad_value(d->span, "'conv': " + why);
  s_.shape = Shape{v.gemm_m(), v.gemm_n(), v.gemm_k()};
  s_.shape_at = s_.conv_at;
  if (halo && s_.halo_only && s_.uses_wgmma()) halo_only_rule(*halo);
}

// `halo only`: A's shared memory is the file's convolution's phase images
// (a slice's panels of them, split_k slices), rounded up to 1 KB, so it
// needs a convolution that takes them.
void Analyzer::halo_only_rule(const Directive& halo) {
  if (!s_.tile) return;
  int64_t bytes = 0;
  const int64_t unbounded = int64_t(1) << 40;  // the room is what the images take
  if (std::string why = halo_fit_error(*s_.conv, s_.tile->m, s_.tile->k, int(size_of(s_.dtype)),
                                       unbounded, std::max(1, s_.split_k), &bytes);
      !why.empty()) {
    auto& e = error(halo.span,
                    "'halo only' sizes A's shared memory for the file's convolution's phase "
                    "images, and this convolution does not take its input once a tile: " +
                        why);
    note(e, s_.conv_at, "'conv' given here");
    return;
  }
  s_.halo_a_bytes = (bytes + 1023) / 1024 * 1024;
  // (split_k's pulled sums wait in the pipeline that this region shrinks:
  // split_k_rules, which runs after, counts it.)
}

// `halo` on the Hopper kernel: one tile a block, its input copied at the
// tile's first k-tile, its valid rows stored straight from the accumulators.
void Analyzer::halo_rules() {
  const Directive* halo = given("halo");
  if (!halo) return;
  auto refuse = [&](const std::string& other, const std::string& why) {
    if (const Directive* o = given(other)) {
      auto& e = error(o->keyword_span, "'" + other + "' does not apply with 'halo': " + why);
      e.notes.push_back({halo->keyword_span, "'halo' given here"});
    }
  };
  refuse("persistent",
         "a persistent block walks many tiles, and the input's copy is a tile's, made at its "
         "first k-tile while the last tile's windows may still be read");
  refuse("stream_k", "a stream-K block's k-tiles cross tiles; the input's copy is one tile's");
  refuse("tma_store",
         "a tile's rows are windows of its images, some of them junk (past an output row or "
         "image), so the epilogue stores the valid ones itself");
  if (s_.pingpong) {
    auto& e = error(halo->keyword_span,
                    "'halo' does not apply with 'warp_specialize pingpong': its consumers take "
                    "whole tiles in turn, and the input's copy is one tile's");
    if (const Directive* ws = given("warp_specialize"))
      e.notes.push_back({ws->span, "'warp_specialize pingpong' given here"});
  }
}

}  // namespace schedc::compiler::analysis

namespace schedc::compiler {

dsl::SourceFile conv_option_source(const std::string& text) {
  return dsl::SourceFile("--conv", "conv " + text);
}

std::optional<Conv2d> parse_conv_option(const dsl::SourceFile& source, const Target& target,
                                        dsl::Diagnostics& diags) {
  const std::optional<dsl::Ast> ast = dsl::parse(source, diags);
  if (!ast) return std::nullopt;
  if (ast->directives.size() != 1 || ast->directives[0].keyword != "conv") {
    diags.error(ast->directives.size() > 1 ? ast->directives[1].span : dsl::SourceSpan{},
                "--conv takes one convolution, e.g. --conv \"8x56x56x64 filter 64x3x3 stride 1 "
                "pad 1\"");
    return std::nullopt;
  }
  return analysis::Analyzer(target, diags).read_conv_only(ast->directives[0]);
}

}  // namespace schedc::compiler
