// STUB: replaced by the work that owns `schedc run`.
#include <iostream>
#include "cli/commands.h"
#include "cli/exit_codes.h"
namespace schedc::cli {
Command add_run_command(CLI::App& root) {
  CLI::App* sub = root.add_subcommand("run", "(not implemented yet)");
  return {sub, [] { std::cerr << "schedc run: not implemented yet\n"; return int(kToolchain); }};
}
}  // namespace schedc::cli
