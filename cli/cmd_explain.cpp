// `schedc explain FILE [--shape MxNxK] [--arch sm_90] [--json]`: why a
// schedule is fast or slow, from its KernelPlan and NVRTC's register count,
// with no GPU: occupancy and its limit, arithmetic intensity and roofline,
// predicted bank wavefronts per shared access, global coalescing.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "compiler/explain.h"
#include "runtime/error.h"
#include "runtime/jit.h"
#include "runtime/report.h"

namespace schedc::cli {

namespace {

struct ExplainArgs {
  std::string file;
  std::string shape;
  std::string arch = "sm_90";
  bool json = false;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_text(std::ostream& os, const Compiled& c, const compiler::Explanation& e,
                const compiler::Shape& shape, const std::string& entry) {
  const compiler::Occupancy& o = e.occupancy;
  const compiler::Roofline& r = e.roofline;
  const compiler::Target& t = c.target;
  os << c.file->name() << ": " << t.arch_name() << ", shape " << shape.m << "x" << shape.n << "x"
     << shape.k << "\n\n";
  os << "resources\n";
  os << "  threads per block    " << o.threads << "\n";
  os << "  registers per thread ";
  if (o.registers >= 0)
    os << o.registers << " (ptxas, " << entry << ")\n";
  else
    os << "unknown\n";
  os << "  shared memory        " << o.smem_bytes << " bytes per block\n";
  os << "  blocks per SM        " << o.blocks_per_sm << " (limited by " << o.limited_by << "), "
     << o.warps_per_sm << " warps = " << fmt("%.1f", 100 * o.occupancy) << "% occupancy\n\n";
  os << "arithmetic intensity and roofline (" << t.arch_name() << " datasheet peaks)\n";
  os << "  global memory        " << fmt("%.1f", r.intensity_global)
     << " FLOP/byte (block tile, each k-step)\n";
  if (r.intensity_shared > 0)
    os << "  shared memory        " << fmt("%.1f", r.intensity_shared)
       << " FLOP/byte (per predicted 128-byte wavefront)\n";
  os << "  peaks                " << r.unit << " " << fmt("%.1f", r.peak_tflops)
     << " TFLOP/s, DRAM " << fmt("%.2f", r.dram_tbps) << " TB/s, shared "
     << fmt("%.1f", r.smem_tbps) << " TB/s\n";
  os << "  bound                " << fmt("%.1f", r.bound_tflops) << " TFLOP/s (" << r.bound_by
     << ")\n\n";
  if (!e.shared.empty()) {
    os << "shared-memory accesses, one k-step of one block (bank model: docs/explain.md)\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %-46s %6s %9s %11s %6s %9s\n", "access", "bytes",
                  "requests", "wavefronts", "ideal", "conflict");
    os << line;
    for (const compiler::SharedAccess& s : e.shared) {
      std::snprintf(line, sizeof line, "  %-46s %6d %9d %11d %6d %8.2fx\n", s.what.c_str(),
                    s.width_bytes, s.requests, s.cost.wavefronts, s.cost.ideal_wavefronts,
                    s.cost.degree());
      os << line;
    }
    os << "\n";
  }
  os << "global accesses, one k-step of one block (C: the whole tile)\n";
  char line[200];
  std::snprintf(line, sizeof line, "  %-46s %6s %9s %10s %9s %10s\n", "access", "bytes", "requests",
                "requested", "sectors", "efficiency");
  os << line;
  for (const compiler::GlobalAccess& g : e.global) {
    std::snprintf(line, sizeof line, "  %-46s %6d %9d %10lld %9lld %9.0f%%\n", g.what.c_str(),
                  g.width_bytes, g.requests, g.bytes, g.sectors, 100 * g.efficiency());
    os << line;
  }
  if (!e.notes.empty()) {
    os << "\nnotes\n";
    for (const std::string& n : e.notes) os << "  - " << n << "\n";
  }
}

void print_json(std::ostream& os, const Compiled& c, const compiler::Explanation& e,
                const compiler::Shape& shape) {
  using report::Json;
  using report::json_number;
  const compiler::Occupancy& o = e.occupancy;
  const compiler::Roofline& r = e.roofline;
  Json shared = Json::array(), global = Json::array();
  for (const compiler::SharedAccess& s : e.shared)
    shared.push_back({{"access", s.what},
                      {"width_bytes", s.width_bytes},
                      {"requests", s.requests},
                      {"wavefronts", s.cost.wavefronts},
                      {"ideal_wavefronts", s.cost.ideal_wavefronts},
                      {"conflict_degree", json_number(s.cost.degree())}});
  for (const compiler::GlobalAccess& g : e.global)
    global.push_back({{"access", g.what},
                      {"width_bytes", g.width_bytes},
                      {"requests", g.requests},
                      {"bytes", g.bytes},
                      {"sectors", g.sectors},
                      {"efficiency", json_number(g.efficiency())}});
  Json j = {{"file", c.file->name()},
            {"arch", c.target.arch_name()},
            {"shape", {shape.m, shape.n, shape.k}},
            {"occupancy",
             {{"threads", o.threads},
              {"registers", o.registers},
              {"smem_bytes", o.smem_bytes},
              {"blocks_per_sm", o.blocks_per_sm},
              {"warps_per_sm", o.warps_per_sm},
              {"occupancy", json_number(o.occupancy)},
              {"limited_by", o.limited_by}}},
            {"roofline",
             {{"intensity_global", json_number(r.intensity_global)},
              {"intensity_shared", json_number(r.intensity_shared)},
              {"unit", r.unit},
              {"peak_tflops", json_number(r.peak_tflops)},
              {"dram_tbps", json_number(r.dram_tbps)},
              {"smem_tbps", json_number(r.smem_tbps)},
              {"bound_tflops", json_number(r.bound_tflops)},
              {"bound_by", r.bound_by}}},
            {"shared", std::move(shared)},
            {"global", std::move(global)},
            {"notes", e.notes}};
  os << report::json_text(j) << "\n";
}

int run_explain(const ExplainArgs& a) {
  compiler::Target target;
  if (!compiler::target_for_arch(a.arch, target)) {
    std::cerr << "schedc explain: error: unknown architecture '" << a.arch
              << "' (known: sm_80, sm_86, sm_89, sm_90)\n";
    return kBadInput;
  }
  std::optional<Compiled> c = compile_file(a.file, target, std::cerr);
  if (!c) return kBadInput;
  compiler::Shape shape = c->schedule.shape;
  if (!a.shape.empty() && !parse_shape(a.shape, shape)) {
    std::cerr << "schedc explain: error: --shape must be MxNxK with each at least 1, got '"
              << a.shape << "'\n";
    return kBadInput;
  }
  int registers = -1;
  try {
    // The main entry alone (its registers are what explain models).
    runtime::JitResult jit = runtime::jit(c->kernel, target.arch_name(), {}, c->kernel.main.name);
    auto f = jit.functions.find(c->kernel.main.name);
    if (f != jit.functions.end()) registers = f->second.registers;
  } catch (const runtime::Error& e) {
    std::cerr << "schedc explain: " << e.what() << "\n";
    return kToolchain;
  }
  compiler::Explanation e = compiler::explain(c->plan, registers, shape);
  if (a.json)
    print_json(std::cout, *c, e, shape);
  else
    print_text(std::cout, *c, e, shape, c->kernel.main.name);
  return kOk;
}

}  // namespace

Command add_explain_command(CLI::App& root) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* sub = root.add_subcommand(
      "explain",
      "Explain a schedule without a GPU: occupancy and its limit, arithmetic intensity and "
      "roofline bound, predicted shared-memory bank conflicts, global coalescing");
  sub->add_option("file", args->file, "the .sched file")->required();
  sub->add_option("--shape", args->shape, "MxNxK for the address model (default: the schedule's)");
  sub->add_option("--arch", args->arch, "target architecture (default sm_90)");
  sub->add_flag("--json", args->json, "print JSON alone on stdout");
  return {sub, [args] { return run_explain(*args); }};
}

}  // namespace schedc::cli
