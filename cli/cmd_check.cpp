// STUB: replaced by the work that owns `schedc check`.
#include <iostream>
#include "cli/commands.h"
#include "cli/exit_codes.h"
namespace schedc::cli {
Command add_check_command(CLI::App& root) {
  CLI::App* sub = root.add_subcommand("check", "(not implemented yet)");
  return {sub, [] { std::cerr << "schedc check: not implemented yet\n"; return int(kToolchain); }};
}
}  // namespace schedc::cli
