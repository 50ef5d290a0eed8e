#pragma once
// compiler::analyze: Ast -> validated Schedule for a Target, or diagnostics.
// Checks every rule of docs/language.md ("What a schedule can get wrong")
// and reports all violations it finds, each with its place.

#include <optional>

#include "compiler/schedule.h"
#include "compiler/target.h"
#include "dsl/ast.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

std::optional<Schedule> analyze(const dsl::Ast& ast, const std::string& file_name,
                                const Target& target, dsl::Diagnostics& diags);

// Static resources of a valid schedule (what `schedc check` prints).
struct Resources {
  int threads_per_block = 0;
  int smem_bytes = 0;       // shared memory per block, padding and stages included
  int blocks_per_sm = 0;    // bounded by shared memory and threads (registers unknown)
  const char* limited_by = "";
};
Resources static_resources(const Schedule& s, const Target& t);

}  // namespace schedc::compiler
