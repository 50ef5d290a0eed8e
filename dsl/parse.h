#pragma once
// dsl::parse: .sched text -> Ast, through the PEGTL grammar in dsl/grammar.h.
// On a syntax error reports to `diags` (with place and caret) and returns
// nothing. Never throws on any input bytes.

#include <optional>

#include "dsl/ast.h"
#include "dsl/diagnostics.h"

namespace schedc::dsl {

std::optional<Ast> parse(const SourceFile& file, Diagnostics& diags);

}  // namespace schedc::dsl
