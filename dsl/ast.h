#pragma once
// The syntax tree of a .sched file: a list of directives, each with its
// keyword and arguments, every one carrying its source span. The parser
// checks the form of each directive (which arguments, in which order); what
// the numbers mean is compiler::analyze's business.

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/source.h"

namespace schedc::dsl {

struct Arg {
  enum class Kind { number, dims, word };
  Kind kind = Kind::word;
  std::string text;             // as written
  std::vector<int64_t> values;  // number: 1 value; dims (128x128x8): each extent
  // Span of each value in `values` (for a caret under the one extent that is wrong).
  std::vector<SourceSpan> value_spans;
  // A number too large for int64 is kept as INT64_MAX/INT64_MIN with this flag.
  bool overflow = false;
  double real = 0.0;     // every number's value as a double (alpha/beta are reals)
  bool is_real = false;  // written with a fraction or exponent (0.5, 2e-1)
  SourceSpan span;
};

struct Directive {
  std::string keyword;  // "tile", "thread", …
  SourceSpan keyword_span;
  std::vector<Arg> args;
  SourceSpan span;  // the whole statement
};

struct Ast {
  std::vector<Directive> directives;
};

// The directive keywords of the language, in the order docs/language.md
// lists them (for "did you mean" and for tests).
inline const std::vector<std::string>& directive_keywords() {
  static const std::vector<std::string> k = {
      "shape",           "dtype",      "block",         "tile",
      "thread",          "warp",       "vectorize",     "layout",
      "batch",           "transpose",  "pad",           "swizzle",
      "double_buffer",   "stages",     "tma",           "stream_k",
      "split_k",         "wmma",       "mma",           "wgmma",
      "warp_specialize", "persistent", "blocks_per_sm", "tma_store",
      "cluster",         "epilogue",   "conv",          "halo"};
  return k;
}

// The closest of `choices` to `word` when it is a plausible misspelling
// (case-insensitive equal, or within 2 edits and fewer edits than letters),
// else "". Used for "did you mean '…'?".
std::string closest_spelling(const std::string& word, const std::vector<std::string>& choices);

}  // namespace schedc::dsl
