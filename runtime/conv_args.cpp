#include "runtime/conv_args.h"

#include <algorithm>

#include "runtime/error.h"
#include "runtime/host_data.h"

namespace schedc::runtime {

ConvArgs make_conv_args(const compiler::Conv2d& conv) {
  if (std::string why = compiler::conv_error(conv); !why.empty())
    throw Error(Error::Kind::cuda, "internal error: ConvArgs of an invalid convolution: " + why);
  ConvArgs a;
  a.n = int32_t(conv.n), a.h = int32_t(conv.h), a.w = int32_t(conv.w), a.c = int32_t(conv.c);
  a.p = int32_t(conv.p()), a.q = int32_t(conv.q());
  a.stride_h = int32_t(conv.stride_h), a.stride_w = int32_t(conv.stride_w);
  a.pad_h = int32_t(conv.pad_h), a.pad_w = int32_t(conv.pad_w);
  const std::vector<compiler::ConvTap> taps = compiler::offset_table(conv);
  a.taps = int32_t(taps.size());
  for (size_t i = 0; i < taps.size(); ++i) {
    a.tap[i].offset = int32_t(taps[i].offset);
    a.tap[i].dh = int16_t(taps[i].dh);
    a.tap[i].dw = int16_t(taps[i].dw);
  }
  return a;
}

compiler::Conv2d conv_of_args(const ConvArgs& a) {
  compiler::Conv2d v;
  v.n = a.n, v.h = a.h, v.w = a.w, v.c = a.c;
  v.stride_h = a.stride_h, v.stride_w = a.stride_w, v.pad_h = a.pad_h, v.pad_w = a.pad_w;
  // Taps in r·S + s order: the first row's have dh = 0.
  int64_t s = 0;
  while (s < a.taps && a.tap[s].dh == a.tap[0].dh) ++s;
  v.s = std::max<int64_t>(1, s);
  v.r = std::max<int64_t>(1, a.taps / v.s);
  v.dil_w = v.s > 1 ? a.tap[1].dw : 1;
  v.dil_h = v.r > 1 ? a.tap[v.s].dh : 1;
  return v;
}

std::string conv_run_error(const compiler::Conv2d& conv, const std::string& dtype,
                           const std::string& module_layout) {
  if (std::string why = compiler::conv_error(conv); !why.empty()) return why;
  const std::string layout = compiler::layout_word(conv.layout);
  if (layout != module_layout)
    return "the module computes " + module_layout + " convolutions (this one is " + layout + ")";
  return compiler::conv_channels_error(conv, elem_size(elem_type(dtype)), dtype);
}

}  // namespace schedc::runtime
