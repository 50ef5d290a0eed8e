#pragma once
// `run` and `bench`'s --conv (issue 21): the convolutions a convolution
// module (GeneratedKernel::conv) computes. A value is the `conv`
// directive's arguments ("8x56x56x64 filter 64x3x3 stride 1 pad 1", parsed
// by compiler::parse_conv_option with the directive's grammar and checks,
// errors located in a source named "--conv"), or `resnet50[:B]`: ResNet-50's distinct layers at
// batch B (default 1; runtime/conv_layers.h). Without --conv a convolution module computes its
// schedule's own `conv`; a GEMM module takes no --conv.

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/pipeline.h"
#include "compiler/target.h"
#include "runtime/conv_layers.h"

namespace schedc::cli {

struct ConvOptions {
  std::vector<std::string> texts;  // each --conv, in order
  CLI::Option* option = nullptr;

  // --conv SPEC, once (`many`: repeatable, bench's).
  void add_to(CLI::App* sub, bool many);
  bool given() const { return !texts.empty(); }
  // The convolutions the values name, in order, checked for `target`;
  // nothing on bad input, the errors printed to `err` (exit 2).
  std::optional<std::vector<runtime::NamedConv>> parse(const compiler::Target& target,
                                                       std::ostream& err) const;
};

// The convolutions `c` (compiled from `file`) computes: `given` (--conv)
// when there are any, each in the module's layout where its text named none
// (runtime::in_layout), else its schedule's own `conv`. Nothing, with the
// reason printed to `err` ("FILE: error: …"; exit 2), for a GEMM module
// given --conv, a convolution module without any convolution, or one it
// cannot compute (runtime::conv_run_error: C·sizeof(T) not a multiple of
// 16 bytes, …).
std::optional<std::vector<runtime::NamedConv>> convs_for(
    const std::string& file, const Compiled& c, const std::vector<runtime::NamedConv>& given,
    std::ostream& err);

// The one convolution `run` computes with `c`: --conv (`opt`, a single
// convolution), else its schedule's `conv`, as convs_for gives them.
// Nothing, with the reason printed to `err` (exit 2), where that is none or
// several (`schedc bench FILE --conv resnet50` runs a list).
std::optional<runtime::NamedConv> one_convolution(const std::string& file, const Compiled& c,
                                                  const ConvOptions& opt, std::ostream& err);

// "convolution 8x56x56x64 filter 64x3x3 stride 1 pad 1 NHWC: output
// 8x56x56x64, GEMM 25088x64x576 (A the input, B the filters column-major,
// C the output); offset table 9 taps, 72 B": what `run` prints without a
// GPU.
std::string conv_summary(const compiler::Conv2d& conv);

}  // namespace schedc::cli
