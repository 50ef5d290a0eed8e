#include "runtime/conv_args.h"

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

std::string conv_run_error(const compiler::Conv2d& conv, const std::string& dtype,
                           const std::string& module_layout) {
  if (std::string why = compiler::conv_error(conv); !why.empty()) return why;
  const std::string layout = compiler::layout_word(conv.layout);
  if (layout != module_layout)
    return "the module computes " + module_layout + " convolutions (this one is " + layout + ")";
  return compiler::conv_channels_error(conv, elem_size(elem_type(dtype)), dtype);
}

}  // namespace schedc::runtime
