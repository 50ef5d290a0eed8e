// A convolution module through the library (include/schedc/schedc.h:
// ConvGeometry, Conv, Kernel::launch(const Conv&)): the public geometry as
// the compiler's Conv2d, checked by the runtime's own rules
// (runtime::conv_run_error, as `schedc run --conv` checks it), then the
// implicit GEMM launched with its ConvArgs as every convolution run is
// (runtime/conv_launch.h).
#include <cstdint>
#include <limits>
#include <string>

#include "api/kernel_impl.h"
#include "compiler/conv.h"
#include "runtime/conv_args.h"
#include "runtime/conv_run.h"

namespace schedc {

namespace {

compiler::Conv2d conv2d_of(const ConvGeometry& g) {
  return {.n = g.n,
          .c = g.c,
          .h = g.h,
          .w = g.w,
          .k = g.k,
          .r = g.r,
          .s = g.s,
          .stride_h = g.stride_h,
          .stride_w = g.stride_w,
          .pad_h = g.pad_h,
          .pad_w = g.pad_w,
          .dil_h = g.dilation_h,
          .dil_w = g.dilation_w};
}

ConvGeometry geometry_of(const compiler::Conv2d& v) {
  return {v.n,        v.h,        v.w,     v.c,     v.k,     v.r,    v.s,
          v.stride_h, v.stride_w, v.pad_h, v.pad_w, v.dil_h, v.dil_w};
}

// `g` as a Conv2d the module of `dtype` computes; throws ArgumentError
// naming what is wrong (the rules of `schedc run --conv`).
compiler::Conv2d checked_conv(const ConvGeometry& g, const std::string& entry,
                              const std::string& dtype, const std::string& layout) {
  compiler::Conv2d v = conv2d_of(g);
  v.layout = compiler::layout_from_word(layout).value_or(v.layout);  // the module's tensors
  const std::string cannot = "schedc: " + entry + " cannot compute the convolution ";
  // The rules' arithmetic is 64-bit; every value within 32 bits keeps it exact.
  const int64_t values[] = {g.n,     g.h,          g.w,         g.c,        g.k,
                            g.r,     g.s,          g.stride_h,  g.stride_w, g.pad_h,
                            g.pad_w, g.dilation_h, g.dilation_w};
  for (int64_t value : values)
    if (value > std::numeric_limits<int32_t>::max())
      throw ArgumentError(cannot + compiler::conv_text(v) + ": " + std::to_string(value) +
                          " is past 32 bits (the kernels take int)");
  if (std::string why = runtime::conv_run_error(v, dtype, layout); !why.empty())
    throw ArgumentError(cannot + compiler::conv_text(v) + ": " + why);
  return v;
}

}  // namespace

int64_t ConvGeometry::p() const {
  return conv2d_of(*this).p();
}
int64_t ConvGeometry::q() const {
  return conv2d_of(*this).q();
}

bool Kernel::is_convolution() const {
  return !impl_->compiled().kernel.conv.empty();
}

std::optional<ConvGeometry> Kernel::convolution() const {
  const std::optional<compiler::Conv2d>& v = impl_->compiled().schedule.conv;
  if (!is_convolution() || !v) return std::nullopt;
  return geometry_of(*v);
}

std::string Kernel::convolution_layout() const {
  return impl_->compiled().kernel.conv;
}

void Kernel::launch(const Conv& conv, void* stream) const {
  const cli::Compiled& c = impl_->compiled();
  if (!is_convolution())
    throw ArgumentError("schedc: " + entry_name() +
                        " computes a GEMM (its schedule has no 'conv' directive): launch it with "
                        "a schedc::Gemm, not a schedc::Conv");
  const compiler::Conv2d v =
      checked_conv(conv.geometry, entry_name(), dtype(), convolution_layout());
  if (!conv.x || !conv.w || !conv.y)
    throw ArgumentError("schedc: x, w and y must be device pointers, not null");
  const runtime::ConvArgs conv_args = runtime::make_conv_args(v);
  runtime::GemmArgs args{conv.x, conv.w, conv.y, conv.alpha, conv.beta, conv.bias, &conv_args};
  args.scale = conv.scale;
  impl_->launch(runtime::conv_problem(v, c.schedule.dtype), args, stream);
}

}  // namespace schedc
