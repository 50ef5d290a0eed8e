// schedc: a compiler for GEMM schedules. One screen: parse the command line,
// run the chosen subcommand, map failures to exit codes (cli/exit_codes.h).

#include <cstdlib>
#include <iostream>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "dsl/diagnostics.h"
#include "runtime/error.h"

int main(int argc, char** argv) {
  using namespace schedc::cli;
  CLI::App app{
      "schedc: compile GEMM schedules (.sched files) to CUDA kernels, run them, check them "
      "against cuBLAS and time them beside it.\n"
      "Exit codes: 0 ok, 1 wrong result, 2 bad input, 3 toolchain/device failure."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "schedc " SCHEDC_VERSION_STRING);

  std::vector<Command> commands = {
      add_check_command(app), add_emit_command(app),    add_run_command(app),
      add_bench_command(app), add_explain_command(app), add_ablate_command(app),
      add_tune_command(app),
  };

  // Every command reads .sched files: each takes the diagnostics' error limit.
  int error_limit = schedc::dsl::kDefaultErrorLimit;
  for (const Command& c : commands)
    c.app
        ->add_option("--error-limit", error_limit,
                     "stop showing errors after this many and only count the rest (0: no limit)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();

  // An unknown first word is a misspelled command: say so plainly.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const Command& c : commands) known = known || c.app->get_name() == argv[1];
    if (!known) {
      std::cerr
          << "schedc: error: unknown command '" << argv[1]
          << "' (commands: check, emit, run, bench, explain, ablate, tune; see schedc --help)\n";
      return kBadInput;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kBadInput;
  }
  set_error_limit(error_limit);

  try {
    for (const Command& c : commands)
      if (c.app->parsed()) {
        const int rc = c.run();
        if (schedc::runtime::kernel_hung()) {
          // CUDA's exit handlers would wait for the hung kernel forever;
          // the driver ends it when the process is gone.
          std::cout.flush();
          std::cerr.flush();
          std::_Exit(rc);
        }
        return rc;
      }
  } catch (const schedc::dsl::InternalError& e) {
    std::cerr << "schedc: internal error: " << e.what()
              << "\n(this is a bug in schedc; please report it with the .sched file)\n";
    return kToolchain;
  }
  return kBadInput;
}
