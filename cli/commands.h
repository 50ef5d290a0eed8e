#pragma once
// Each schedc subcommand lives in its own cli/cmd_*.cpp and registers itself
// here: it adds its options to a CLI11 subcommand and returns the action main
// runs if that subcommand was chosen. The action returns an ExitCode.

#include <CLI/CLI.hpp>
#include <functional>

namespace schedc::cli {

using Action = std::function<int()>;

struct Command {
  CLI::App* app;
  Action run;
};

Command add_check_command(CLI::App& root);
Command add_emit_command(CLI::App& root);
Command add_run_command(CLI::App& root);
Command add_bench_command(CLI::App& root);
Command add_explain_command(CLI::App& root);
Command add_ablate_command(CLI::App& root);
Command add_tune_command(CLI::App& root);

}  // namespace schedc::cli
