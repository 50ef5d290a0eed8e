// `schedc emit FILE [--shape MxNxK] [--arch sm_90] [-o out.cu] [--dump-plan]`:
// print the CUDA C++ a schedule compiles to.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"

namespace schedc::cli {

namespace {

struct EmitOptions {
  std::string file;
  std::string shape;
  std::string arch = "sm_90";
  std::string out;
  bool dump_plan = false;
};

int run_emit(const EmitOptions& o) {
  compiler::Target target;
  if (!compiler::target_for_arch(o.arch, target)) {
    std::cerr << "schedc emit: error: unknown architecture '" << o.arch << "'\n";
    return kBadInput;
  }
  compiler::Shape shape;
  if (!o.shape.empty() && !parse_shape(o.shape, shape)) {
    std::cerr << "schedc emit: error: bad --shape '" << o.shape << "' (expected MxNxK)\n";
    return kBadInput;
  }
  std::optional<Compiled> c = compile_file(o.file, target, std::cerr);
  if (!c) return kBadInput;
  if (o.dump_plan) std::cerr << compiler::dump(c->plan);
  // The kernel serves every shape; --shape only sets the comment's example launch.
  const codegen::KernelEntry& k = c->kernel.main;
  int64_t m = o.shape.empty() ? c->schedule.shape.m : shape.m;
  int64_t n = o.shape.empty() ? c->schedule.shape.n : shape.n;
  int64_t kk = o.shape.empty() ? c->schedule.shape.k : shape.k;
  codegen::Dim3 g = k.grid(m, n);
  const int64_t batch = c->schedule.batch;  // a batched kernel: one z index per GEMM
  std::string text = c->kernel.source;
  text += "// Launch for " + (batch > 0 ? std::to_string(batch) + " x " : std::string()) +
          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kk) + ": " + k.name +
          "<<<(" + std::to_string(g.x) + ", " + std::to_string(g.y) +
          (batch > 0 ? ", " + std::to_string(batch) : std::string()) + "), (" +
          std::to_string(k.block.x) + ", " + std::to_string(k.block.y) + "), " +
          std::to_string(k.dynamic_smem) + ">>>" +
          (k.stream_k ? " at most: stream_k splits at launch, " + k.stream_k_tail +
                            " computes the tiles of a partial last wave, cut along k"
                      : "") +
          (k.split_k > 1 ? ", grid x times the slices: split_k " + std::to_string(k.split_k) +
                               " launches clusters of up to " + std::to_string(k.split_k) +
                               " CTAs along x, one a C tile (fewer where the k-tiles are fewer "
                               "or the tiles fill the device)"
                         : "") +
          "\n";
  if (c->kernel.has_fallback())
    text += "// Fallback " + c->kernel.fallback.name + " when " + k.aligned_operands() +
            " are not " + std::to_string(k.align_bytes) +
            "-byte aligned or their leading dimensions not multiples of " +
            std::to_string(k.ld_multiple) +
            (k.n_multiple > 1 ? " or N not a multiple of " + std::to_string(k.n_multiple) : "") +
            "\n";
  if (c->kernel.has_repack())
    text += "// Repack " + c->kernel.repack + " first, for each of " + k.aligned_operands() +
            " that is not " + std::to_string(k.align_bytes) +
            "-byte aligned or whose leading dimension is not a multiple of " +
            std::to_string(k.ld_multiple) + "\n";
  // (a module with a fallback runs it on the scratch too where main's preconditions fail)
  const std::string reader = c->kernel.has_fallback() ? "main or the fallback" : "main";
  if (c->kernel.transposes_a)
    text += "// Transpose " + c->kernel.transpose +
            " first, every launch: A (column-major) into row-major scratch, which " + reader +
            " reads\n";
  if (c->kernel.transposes_b)
    text += "// Transpose " + c->kernel.transpose +
            " first, every launch: B (row-major) into column-major scratch, which " + reader +
            " reads\n";
  if (o.out.empty()) {
    std::cout << text;
    return kOk;
  }
  std::ofstream f(o.out, std::ios::binary);
  f << text;
  if (!f) {
    std::cerr << "schedc emit: error: cannot write " << o.out << "\n";
    return kBadInput;
  }
  return kOk;
}

}  // namespace

Command add_emit_command(CLI::App& root) {
  auto o = std::make_shared<EmitOptions>();
  CLI::App* sub = root.add_subcommand("emit", "Print the CUDA C++ a schedule compiles to");
  sub->add_option("file", o->file, "the .sched file")->required();
  sub->add_option("--shape", o->shape, "problem size MxNxK for the launch comment");
  sub->add_option("--arch", o->arch, "target architecture (default sm_90)");
  sub->add_option("-o,--output", o->out, "write to this file instead of stdout");
  sub->add_flag("--dump-plan", o->dump_plan, "print the KernelPlan to stderr");
  return {sub, [o] { return run_emit(*o); }};
}

}  // namespace schedc::cli
