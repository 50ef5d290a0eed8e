#include "cli/tuned.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/exit_codes.h"
#include "cli/space_walk.h"
#include "runtime/conv_report.h"
#include "runtime/report.h"
#include "tune/database.h"

namespace schedc::cli {

std::optional<Compiled> tuned_schedule(const std::string& file, const std::string& shape_arg,
                                       const ConvOptions& conv_arg, const std::string& database,
                                       const std::optional<runtime::DeviceInfo>& device,
                                       const compiler::Target& target, int& rc) {
  rc = kBadInput;
  std::string why;
  std::optional<std::string> text = read_file(file, why);
  if (!text) {
    std::cerr << file << ": error: " << why << "\n";
    return std::nullopt;
  }
  // FILE's own schedule, or a space's best-ranked candidate: its dtype and shape.
  std::ostringstream walk_err;
  std::optional<SpaceWalk> walk = walk_space(file, *text, target, walk_err);
  const bool space = walk.has_value();
  std::string own = *text;
  if (space) {
    if (walk->kept.empty()) {
      std::cerr << walk_err.str() << file
                << ": error: --tuned: analysis keeps no candidate of this space (schedc check "
                << file << " says why)\n";
      return std::nullopt;
    }
    own = walk->space.candidate_text(*text, walk->kept[0].index);
  }
  std::optional<Compiled> c =
      compile_source(std::make_shared<dsl::SourceFile>(file, own), target, std::cerr);
  if (!c) return std::nullopt;
  compiler::Shape shape = c->schedule.shape;
  if (!shape_arg.empty() && !parse_shape(shape_arg, shape)) {
    std::cerr << "schedc run: error: bad --shape '" << shape_arg
              << "' (expected MxNxK, each >= 1)\n";
    return std::nullopt;
  }
  // A convolution module: the convolution (--conv, else its `conv`) is the key.
  std::string conv, conv_arg_text;
  if (c->schedule.conv) {
    if (!shape_arg.empty()) {
      std::cerr << "schedc run: error: --shape does not apply to a convolution: its implicit "
                   "GEMM's sizes are the convolution's (give --conv SPEC)\n";
      return std::nullopt;
    }
    const std::optional<runtime::NamedConv> one = one_convolution(file, *c, conv_arg, std::cerr);
    if (!one) return std::nullopt;
    const compiler::Conv2d& v = one->conv;
    conv = runtime::conv_string(v);
    conv_arg_text = " --conv '" + conv + "'";
    shape = {v.gemm_m(), v.gemm_n(), v.gemm_k()};
  } else if (conv_arg.given()) {
    std::cerr << file
              << ": error: --conv: the schedule computes a GEMM (it has no `conv` directive); "
                 "only a convolution module takes a convolution\n";
    return std::nullopt;
  }
  if (!device) {
    rc = kToolchain;
    std::cerr << "schedc run: error: --tuned needs a GPU: tuned results are kept per device\n";
    return std::nullopt;
  }
  const std::string path = database.empty() ? tune::default_database_path() : database;
  const tune::Key key{device->name,
                      runtime::driver_version(),
                      compiler::dtype_name(c->schedule.dtype),
                      c->kernel.layout(),
                      shape.m,
                      shape.n,
                      shape.k,
                      conv};
  const std::string what = key.dtype + " " +
                           (conv.empty() ? std::to_string(shape.m) + "x" + std::to_string(shape.n) +
                                               "x" + std::to_string(shape.k)
                                         : "conv " + conv) +
                           " on " + key.device + " (driver " + key.driver + ")";
  std::optional<tune::Result> best;
  try {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) best = tune::Database(path).best(key);
  } catch (const std::exception& e) {
    std::cerr << "schedc run: error: --tuned: " << e.what() << "\n";
    return std::nullopt;
  }
  if (!best) {
    if (space) {
      std::cerr << file << ": error: --tuned: " << path << " holds no correct result for " << what
                << ": run schedc tune " << file
                << (conv.empty() ? " --shapes " + std::to_string(shape.m) + "x" +
                                       std::to_string(shape.n) + "x" + std::to_string(shape.k)
                                 : conv_arg_text)
                << " first\n";
      return std::nullopt;
    }
    std::cerr << "schedc run: note: --tuned: " << path << " holds no result for " << what
              << "; running " << file << " as it is\n";
    rc = kOk;
    return c;
  }
  std::optional<Compiled> tuned =
      compile_source(std::make_shared<dsl::SourceFile>(file, best->schedule), target, std::cerr);
  if (!tuned) {
    std::cerr << "schedc run: error: --tuned: the recorded schedule no longer checks (the "
                 "language changed since it was measured); tune again\n";
    return std::nullopt;
  }
  char figures[128];
  const char* rate = runtime::rate_unit(key.dtype);
  if (conv.empty())
    std::snprintf(figures, sizeof figures, "%.1f %s, %.1f%% of cuBLAS", best->tflops, rate,
                  best->percent_of_cublas());
  else
    std::snprintf(figures, sizeof figures, "%.1f %s, %.2fx of im2col + cuBLAS", best->tflops, rate,
                  best->x_of_pipeline());
  std::cerr << "schedc run: note: --tuned: the fastest known schedule for " << what << " ("
            << figures << ", measured " << best->created << " on " << best->host;
  if (!best->space.empty()) std::cerr << "; " << best->space << " " << best->choices;
  std::cerr << ") from " << path << "\n";
  // Run it at the tuned shape (a schedule's own `shape` is the space's
  // default); a convolution's is its `conv` or --conv, as tuned.
  if (conv.empty()) tuned->schedule.shape = shape;
  rc = kOk;
  return tuned;
}

}  // namespace schedc::cli
