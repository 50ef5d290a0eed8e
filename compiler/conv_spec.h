#pragma once
// TEMPORARY (the conv-runtime branch): the lead's compiler/conv_spec.h
// replaces this file when the branches merge. Only the signature is
// relied on by the runtime and the command line.
//
// A convolution written as the `conv` directive's arguments, e.g.
// "8x56x56x64 filter 64x3x3 stride 1 pad 1": the input N x H x W x C, the
// filters K x R x S, then optionally `stride A[xB]`, `pad A[xB]`,
// `dilation A[xB]` and the layout word `nhwc` (or `nchw32`).

#include <optional>
#include <string>

#include "compiler/conv.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

// The convolution `text` describes, or nothing with the errors in `diags`
// (located in diags.file(), a source named "--conv" holding `text`).
std::optional<Conv2d> parse_conv_option(const std::string& text, dsl::Diagnostics& diags);

}  // namespace schedc::compiler
