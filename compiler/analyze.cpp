// STUB: replaced by the front-end work (issue 2).
#include "compiler/analyze.h"
namespace schedc::compiler {
std::optional<Schedule> analyze(const dsl::Ast&, const std::string&, const Target&,
                                dsl::Diagnostics& diags) {
  diags.error({}, "analysis not implemented yet");
  return std::nullopt;
}
Resources static_resources(const Schedule&, const Target&) { return {}; }
}  // namespace schedc::compiler
