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
  double real = 0.0;            // a number written with a fraction or exponent
  bool is_real = false;
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

}  // namespace schedc::dsl
