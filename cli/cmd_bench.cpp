// STUB: replaced by the work that owns `schedc bench`.
#include <iostream>
#include "cli/commands.h"
#include "cli/exit_codes.h"
namespace schedc::cli {
Command add_bench_command(CLI::App& root) {
  CLI::App* sub = root.add_subcommand("bench", "(not implemented yet)");
  return {sub, [] { std::cerr << "schedc bench: not implemented yet\n"; return int(kToolchain); }};
}
}  // namespace schedc::cli
