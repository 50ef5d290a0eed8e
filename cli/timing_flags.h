#pragma once
// `run` and `bench`'s timing flags: --flush-l2 (each timed run after an L2
// flush) and --graph N (each timed run the replay of a CUDA graph of N runs
// back to back; runtime::TimingOptions::graph_runs). The two exclude each
// other: a flush needs each run alone.

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/timing.h"

namespace schedc::cli {

struct TimingFlags {
  bool flush_l2 = false;
  int graph_runs = 0;

  void add_to(CLI::App* sub) {
    sub->add_flag("--flush-l2", flush_l2, "flush L2 before each timed run");
    sub->add_option("--graph", graph_runs,
                    "time replays of a CUDA graph of N back-to-back runs of each kernel (and of "
                    "each baseline), per run: a small problem's cost without an idle stream's "
                    "launch latency (default: each run launched alone)");
  }
  // The line under a bench table that says how its times were taken.
  std::string describe() const {
    if (graph_runs > 0)
      return "timing: per run, each kernel replayed in CUDA graphs of " +
             std::to_string(graph_runs) + " runs (--graph)";
    return flush_l2 ? "timing: each run launched alone after an L2 flush (--flush-l2)"
                    : "timing: each run launched alone on an idle stream";
  }
  // "" or why these flags cannot be honoured.
  std::string error() const {
    runtime::TimingOptions t;
    t.graph_runs = graph_runs;
    if (graph_runs != 0 && flush_l2)
      return "choose one of --graph and --flush-l2 (a flush needs each run alone)";
    return runtime::graph_timing_error(t);
  }
};

}  // namespace schedc::cli
