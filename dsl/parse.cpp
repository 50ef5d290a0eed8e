// STUB: replaced by the front-end work (issue 2).
#include "dsl/parse.h"
namespace schedc::dsl {
std::optional<Ast> parse(const SourceFile& file, Diagnostics& diags) {
  diags.error({}, "parser not implemented yet");
  return std::nullopt;
}
}  // namespace schedc::dsl
