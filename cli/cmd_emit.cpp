// STUB: replaced by the work that owns `schedc emit`.
#include <iostream>
#include "cli/commands.h"
#include "cli/exit_codes.h"
namespace schedc::cli {
Command add_emit_command(CLI::App& root) {
  CLI::App* sub = root.add_subcommand("emit", "(not implemented yet)");
  return {sub, [] { std::cerr << "schedc emit: not implemented yet\n"; return int(kToolchain); }};
}
}  // namespace schedc::cli
