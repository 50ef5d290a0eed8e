#pragma once
// `schedc tune` (docs/tuning.md): the candidates of a search space that
// analysis keeps, ranked by the static model (cli/space_walk.h); the first N
// generated and compiled on the host's cores; then, on one GPU or several,
// each validated against cuBLAS before it is timed beside it, and every
// outcome recorded in the tuning database (tune/database.h). A candidate
// whose result is wrong is recorded as such and never chosen.
//
// A space of convolution modules (`conv`) is measured on convolutions
// instead of shapes: each candidate validated against the explicit im2col +
// cuBLAS pipeline (bit for bit in s8) and timed beside cuBLAS's GEMM alone
// and that pipeline (runtime::GpuSession::run_conv, as `schedc bench
// --conv`).
//
// Two stages overlap: compile threads hand candidates, best-ranked first, to
// one measuring thread per GPU (each with its own CUDA session), so the GPUs
// start while the rest still compiles.

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/space_walk.h"
#include "codegen/generated_kernel.h"
#include "compiler/problem.h"
#include "compiler/target.h"
#include "runtime/conv_layers.h"
#include "runtime/jit.h"
#include "tune/database.h"

namespace schedc::tune {

// A candidate whose first timed run takes more than this many times cuBLAS's
// is timed no further (runtime::TimingOptions::give_up_ratio): its figure is
// that one run's, and its `detail` says so.
constexpr double kGiveUpRatio = 4;

// How long a candidate is timed on each shape: at least kTuneMinRuns runs
// and kTuneMinTotalMs of kernel time each (schedc run and bench: 20 runs,
// 100 ms). A tune ranks hundreds of candidates: two tunes of the f16 space
// on two H100s gave each candidate TFLOP/s within 1.0-1.9% of each other
// (median over the 184, per shape; bench/NOTES.md, session 15). The short
// windows run at higher clocks than bench's, so compare a tune's figures
// with each other or as ratios to cuBLAS, and re-bench the winner.
constexpr int kTuneMinRuns = 10;
constexpr double kTuneMinTotalMs = 25;

// One candidate's outcome on one problem (or, with compile_only or when it
// failed to compile, on none: `column` and `shape` are then the first's).
struct Measured {
  int model_rank = 0;
  std::string choices;         // its choice in each set
  std::string text;            // its schedule
  size_t column = 0;           // which of TuneReport::shapes (and convs)
  compiler::Problem shape;     // a convolution's: its implicit GEMM
  std::string conv;            // the convolution (runtime::conv_string), "" for a GEMM
  std::string layout = "NNN";  // A's, B's and C's layouts (the database key's)
  Status status = Status::failed;
  std::string detail;     // why wrong or failed
  double compile_ms = 0;  // its entries' compiles, one after the other (0: cache hits)
  // cublas_ms: a convolution's GEMM alone (A given); pipeline_ms: its
  // explicit im2col + cuBLAS (0 for a GEMM). tflops: TOPS for s8.
  double median_ms = 0, cublas_ms = 0, pipeline_ms = 0, tflops = 0;
  int gpu = -1;           // the device ordinal that measured it
  bool measured = false;  // false: compiled only (or failed before a GPU saw it)

  double percent_of_cublas() const { return median_ms > 0 ? 100.0 * cublas_ms / median_ms : 0; }
  double x_of_pipeline() const { return median_ms > 0 ? pipeline_ms / median_ms : 0; }
};

struct Progress {
  int candidates = 0;  // being compiled and measured
  int compiled = 0, measured = 0, wrong = 0, failed = 0;
  std::optional<Measured> best;  // fastest correct so far (on the first shape)
  double elapsed_s = 0;
};

struct TuneOptions {
  std::string space_path;  // the space's name in messages and the database
  std::string space_text;
  // Each candidate runs on each (packed); none: the `shape` of the model's
  // best candidate. A space of convolution modules takes none.
  std::vector<compiler::Problem> shapes;
  // A space of convolution modules: each candidate computes each (in its
  // module's layout where the text named none, runtime::in_layout); none:
  // the model's best candidate's `conv`. A GEMM space takes none.
  std::vector<runtime::NamedConv> convs;
  // Each timed run the replay of a CUDA graph of this many runs (0: each
  // launched alone; runtime::TimingOptions::graph_runs, bench's --graph).
  int graph_runs = 0;
  int top = 0;  // the model's first N candidates (0: every one analysis keeps)
  // 0 = none. Otherwise no candidate starts measuring after this many seconds
  // from the start: the rest stay compiled only (TuneReport::time_limit_reached).
  double time_limit_s = 0;
  int jobs = 0;           // compile threads (0: host cores less one per GPU, at least 1)
  std::vector<int> gpus;  // device ordinals; empty: compile only
  runtime::JitOptions jit;
  std::string database;  // "" = record nothing
  std::string host;      // the database's `host`
  // For tests: edits the generated kernel of the candidate of this model
  // rank before it is compiled (a planted wrong candidate). Called from the
  // compile threads, one candidate each.
  std::function<void(int model_rank, codegen::GeneratedKernel&)> edit_kernel;
  // Called after each compile and each measurement, one call at a time.
  std::function<void(const Progress&)> progress;
};

struct TuneReport {
  cli::SpaceWalk walk;
  // The columns: measured on (TuneOptions::shapes or the default); for a
  // space of convolutions, each convolution's implicit GEMM, and `convs`
  // the convolutions themselves (empty for GEMMs).
  std::vector<compiler::Problem> shapes;
  std::vector<runtime::NamedConv> convs;
  int selected = 0;               // candidates compiled (the model's first N)
  std::vector<Measured> results;  // one per candidate and column, in model order
  double compile_s = 0;           // wall time until every selected candidate compiled
  double total_s = 0;
  int jobs = 0;                     // compile threads used
  bool time_limit_reached = false;  // some selected candidates were not measured
  int measured = 0;                 // candidates measured (each on every shape)
  // Where measuring went, summed over the GPUs' workers: validating against
  // cuBLAS and timing (host wall seconds of RunReport::validate_ms, time_ms).
  double validate_s = 0, timing_s = 0;
  // GPUs that stopped measuring, each with why (a candidate that hung).
  std::vector<std::string> abandoned_gpus;

  // The fastest correct result on column `column` (of shapes), if any.
  std::optional<Measured> best(size_t column) const;
  // Spearman's rank correlation between the model's order and the measured
  // one among the correct results on `column`; nothing below 3 of them.
  std::optional<double> rank_correlation(size_t column) const;
  // The column's name: "MxNxK", or the convolution's layer name or text.
  std::string column_name(size_t column) const;
};

// Walks, compiles and (with GPUs) measures. Problems with the space itself
// (no set, malformed, every candidate dropped) come back as
// report.walk.candidates == 0 or report.selected == 0, with the reason
// printed to `err`. Throws runtime::Error when a GPU cannot be used and
// std::runtime_error when the database cannot be written.
TuneReport tune(const compiler::Target& target, const TuneOptions& options, std::ostream& err);

// Spearman's rho of two rankings of the same items (1..n each, no ties).
double spearman(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace schedc::tune
