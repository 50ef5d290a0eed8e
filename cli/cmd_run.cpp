// schedc run FILE: compile, run, validate against cuBLAS, time beside cuBLAS.
// Without a GPU it still checks and emits (and compiles with NVRTC for the
// default target), prints what would run, and exits 3 with "no CUDA device".

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "cli/batch_options.h"
#include "cli/commands.h"
#include "cli/conv_options.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "cli/scalars.h"
#include "cli/timing_flags.h"
#include "cli/tuned.h"
#include "runtime/conv_report.h"
#include "runtime/conv_run.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/report.h"
#include "runtime/run.h"

namespace schedc::cli {

namespace {

struct RunArgs {
  std::string file;
  std::string shape;
  uint64_t seed = 1;
  bool json = false, verbose = false, no_cache = false, no_time = false;
  TimingFlags timing;  // --flush-l2, --graph
  std::string save_dir;
  std::string kernel_source;  // a CUDA file run in place of the emitted source
  std::string print_global;   // a __device__ variable printed after the run
  Scalars scalars;            // --alpha, --beta
  bool tuned = false;         // run the tuning database's best for the shape (cli/tuned.h)
  std::string db;             // --db: that database
  std::string layout;         // --layout NN|NT|TN|TT ("" = the file's)
  int64_t lda = 0, ldb = 0, ldc = 0;
  BatchOptions batch;  // --batch, --stride-a, --stride-b, --stride-c
  ConvOptions conv;    // --conv: a convolution module's convolution
};

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", v);
  return buf;
}

std::string dims(const codegen::Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

void print_entry(std::ostream& os, const char* role, const codegen::KernelEntry& e,
                 const compiler::Problem& p, bool batched) {
  os << "  " << role << " " << e.name << ": block " << dims(e.block) << ", grid ";
  if (e.stream_k) {
    const codegen::Dim3 t = e.grid(p.m, p.n);
    os << "split at launch (stream_k: of the " << uint64_t(t.x) * t.y
       << " tiles, those of whole waves here, the rest on " << e.stream_k_tail << ")";
  } else {
    codegen::Dim3 grid = e.grid(p.m, p.n);
    if (batched) grid.z = p.batch;  // one z index per GEMM (codegen/generated_kernel.h)
    os << dims(grid);
  }
  os << ", dynamic smem " << e.dynamic_smem << " B";
  if (e.align_bytes > 1 || e.ld_multiple > 1)
    os << ", needs " << e.aligned_operands() << " " << e.align_bytes
       << "-byte aligned, leading dimensions multiples of " << e.ld_multiple;
  if (e.n_multiple > 1) os << ", N a multiple of " << e.n_multiple;
  os << "\n";
}

// What would run, for a machine without a GPU (`conv`: the convolution
// whose implicit GEMM `p` is).
void print_summary(std::ostream& os, const Compiled& c, const compiler::Problem& p,
                   const compiler::Conv2d* conv) {
  const compiler::Schedule& s = c.schedule;
  const compiler::KernelPlan& plan = c.plan;
  os << "schedule " << c.file->name() << ": dtype " << compiler::to_string(s.dtype) << ", "
     << (s.is_naive() ? "naive" : "tiled") << ", " << plan.block_threads << " threads/block, "
     << plan.smem_bytes << " B shared, target " << c.target.arch_name() << "\n";
  if (conv)
    os << conv_summary(*conv) << "\n";
  else
    os << "problem " << p.m << "x" << p.n << "x" << p.k << ", lda " << p.a_ld()
       << (p.a_col ? " (A column-major)" : "") << ", ldb " << p.b_ld()
       << (p.b_col ? " (B column-major)" : "") << ", ldc " << p.c_ld()
       << (p.c_col ? " (C column-major)" : "") << "\n";
  if (c.kernel.batched)
    os << "batch of " << p.batch << " GEMM" << (p.batch == 1 ? "" : "s") << ", "
       << runtime::strides_string(p) << " elements"
       << (p.stride_a || p.stride_b || p.stride_c ? "" : " (packed)") << "\n";
  os << "kernel (" << c.kernel.dtype
     << (c.kernel.tensor_cores ? ", tensor cores " + c.kernel.mma_type : "") << "):\n";
  print_entry(os, "main    ", c.kernel.main, p, c.kernel.batched);
  if (c.kernel.has_fallback()) print_entry(os, "fallback", c.kernel.fallback, p, c.kernel.batched);
  if (c.kernel.has_repack())
    os << "  repack   " << c.kernel.repack
       << ": copies A or B into aligned scratch first when main's alignment fails\n";
  if (c.kernel.transposes_a)
    os << "  transpose " << c.kernel.transpose
       << ": copies the column-major A into row-major scratch before every launch ("
       << c.kernel.mma_type << " reads only k-major operands"
       << (c.kernel.mma_type == "tf32" ? ", and B is not)\n" : ")\n");
  if (c.kernel.transposes_b)
    os << "  transpose " << c.kernel.transpose
       << ": copies the row-major B into column-major scratch before every launch ("
       << c.kernel.mma_type << " reads only k-major operands)\n";
}

// "  NVRTC compile 967.4 ms for sm_90: main, main_stream_k, side by side, cached at …";
// a module without entry guards (--kernel-source) is compiled whole.
void print_compile(std::ostream& os, const runtime::JitResult& jit,
                   const std::vector<std::string>& names, const std::string& arch, bool whole) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  if (whole) list = "the whole module (" + list + ")";
  if (jit.cache_hit)
    os << "  kernel cache hit " << ms(jit.ms) << " for " << list << " (" << jit.cache_path << ")\n";
  else
    os << "  NVRTC compile " << ms(jit.compile_ms) << " for " << arch << ": " << list
       << (names.size() > 1 && !whole ? ", side by side" : "")
       << (jit.cache_path.empty() ? " (cache off)" : ", cached at " + jit.cache_path) << "\n";
}

void print_stage_times(std::ostream& os, const StageTimes& t) {
  os << "  read " << ms(t.read_ms) << ", parse " << ms(t.parse_ms) << ", analyze "
     << ms(t.analyze_ms) << ", lower " << ms(t.lower_ms) << ", emit " << ms(t.emit_ms) << "\n";
}

report::Json stage_times_json(const StageTimes& t) {
  using report::json_number;
  return {{"read", json_number(t.read_ms)},
          {"parse", json_number(t.parse_ms)},
          {"analyze", json_number(t.analyze_ms)},
          {"lower", json_number(t.lower_ms)},
          {"emit", json_number(t.emit_ms)}};
}

// --kernel-source: the schedule still gives the entries' names, launch
// configuration and alignment preconditions; `path` replaces only the CUDA
// text, so an edit of `schedc emit`'s output can be validated and timed.
bool use_kernel_source(const std::string& path, const std::string& sched,
                       codegen::GeneratedKernel& kernel) {
  std::string why;
  std::optional<std::string> read = read_file(path, why);
  if (!read) {
    std::cerr << path << ": error: --kernel-source: " << why << "\n";
    return false;
  }
  const std::string& text = *read;
  for (const std::string& name : kernel.entry_names())
    if (text.find(name) == std::string::npos) {
      std::cerr << path << ": error: no kernel named '" << name << "', which " << sched
                << " launches (start from `schedc emit " << sched << "`)\n";
      return false;
    }
  kernel.source = text;
  kernel.source_file = path;
  kernel.entry_guards = false;  // a person's file: compiled whole, guards or not
  std::cerr << "schedc run: note: running " << path << " in place of the CUDA emitted for " << sched
            << "\n";
  return true;
}

// --print-global: the module's `__device__` variable `name` after the run,
// as 64-bit words, eight a line ("name[i]: w_i .. w_i+7"), the lines of
// zeros left out (a trace buffer is mostly unwritten). False, the error
// printed, where the module has none or its size is not whole words.
bool print_global(std::ostream& os, const runtime::Module& module, const std::string& name) {
  std::optional<std::vector<char>> bytes = module.read_global(name);
  if (!bytes) {
    std::cerr << "schedc run: error: --print-global: the module has no __device__ variable '"
              << name << "'\n";
    return false;
  }
  if (bytes->size() % 8) {
    std::cerr << "schedc run: error: --print-global: '" << name << "' is " << bytes->size()
              << " bytes, not a whole number of 64-bit words\n";
    return false;
  }
  std::vector<uint64_t> w(bytes->size() / 8);
  std::memcpy(w.data(), bytes->data(), bytes->size());
  os << "global " << name << ": " << w.size() << " 64-bit words, eight a line, lines of zeros "
     << "left out\n";
  for (size_t i = 0; i < w.size(); i += 8) {
    const size_t end = std::min(w.size(), i + 8);
    if (std::all_of(w.begin() + i, w.begin() + end, [](uint64_t x) { return x == 0; })) continue;
    os << name << "[" << i << "]:";
    for (size_t j = i; j < end; ++j) os << " " << w[j];
    os << "\n";
  }
  return true;
}

// The GEMM `run` computes: --shape (else the schedule's), the leading
// dimensions, the batch; nothing on bad input, the error printed.
std::optional<compiler::Problem> gemm_problem(const RunArgs& a, const Compiled& c) {
  compiler::Shape shape = c.schedule.shape;
  if (!a.shape.empty() && !parse_shape(a.shape, shape)) {
    std::cerr << "schedc run: error: bad --shape '" << a.shape << "' (expected MxNxK, each >= 1)\n";
    return std::nullopt;
  }
  // The operands' layouts are the kernel's: lda, ldb and ldc are in them.
  compiler::Problem p = c.kernel.in_layouts(
      compiler::Problem{shape.m, shape.n, shape.k, a.lda, a.ldb, a.ldc, c.schedule.dtype});
  if ((a.lda && a.lda < p.a_row_len()) || (a.ldb && a.ldb < p.b_row_len()) ||
      (a.ldc && a.ldc < p.c_row_len())) {
    std::cerr << "schedc run: error: leading dimensions must be at least the row length in "
                 "memory (lda >= "
              << (p.a_col ? "M: A is column-major" : "K")
              << ", ldb >= " << (p.b_col ? "K: B is column-major" : "N")
              << ", ldc >= " << (p.c_col ? "M: C is column-major" : "N") << ")\n";
    return std::nullopt;
  }
  if (std::string why = a.batch.apply(p, c.schedule.batch); !why.empty()) {
    std::cerr << "schedc run: error: " << why << "\n";
    return std::nullopt;
  }
  return p;
}

// The one convolution `run` computes, or nothing with the error printed:
// --conv (a single convolution), else the schedule's own `conv`. The
// options that shape a GEMM are refused: the convolution decides them.
std::optional<runtime::NamedConv> convolution_of(const RunArgs& a, const Compiled& c) {
  const char* refused = !a.shape.empty()          ? "--shape"
                        : a.lda || a.ldb || a.ldc ? "--lda, --ldb and --ldc"
                        : !a.layout.empty()       ? "--layout"
                        : a.batch.directive()     ? "--batch"
                        : a.batch.stride_a || a.batch.stride_b || a.batch.stride_c ? "--stride-*"
                        : !a.save_dir.empty()                                      ? "--save"
                                                                                   : nullptr;
  if (refused) {
    std::cerr << "schedc run: error: " << refused
              << " does not apply to a convolution: its implicit GEMM's sizes, layouts and "
                 "leading dimensions are the convolution's (give --conv SPEC)\n";
    return std::nullopt;
  }
  return one_convolution(a.file, c, a.conv, std::cerr);
}

int run_command(const RunArgs& a) {
  using Clock = std::chrono::steady_clock;
  auto t_start = Clock::now();

  std::string no_device_why;
  std::optional<runtime::DeviceInfo> device = runtime::find_device(no_device_why);
  compiler::Target target = device ? runtime::target_for_device(*device) : compiler::Target{};

  if (std::string why = a.batch.check_batch(); !why.empty()) {
    std::cerr << "schedc run: error: " << why << "\n";
    return kBadInput;
  }
  if (std::string why = a.timing.error(); !why.empty()) {
    std::cerr << "schedc run: error: " << why << "\n";
    return kBadInput;
  }
  if (!a.print_global.empty() && a.json) {
    std::cerr << "schedc run: error: --print-global prints lines after the run's; choose one of "
                 "it and --json\n";
    return kBadInput;
  }
  std::optional<Compiled> c;
  if (a.tuned) {
    if (!a.kernel_source.empty() || !a.layout.empty() || a.batch.directive()) {
      std::cerr << "schedc run: error: --tuned runs the tuned schedule as recorded; choose one "
                   "of --tuned and "
                << (!a.layout.empty()     ? "--layout"
                    : a.batch.directive() ? "--batch (tunes are of one GEMM)"
                                          : "--kernel-source")
                << "\n";
      return kBadInput;
    }
    int rc = kOk;
    c = tuned_schedule(a.file, a.shape, a.conv, a.db, device, target, rc);
    if (!c) return rc;
  } else {
    c = compile_file_with(a.file, {a.layout, a.batch.directive()}, target, std::cerr);
  }
  if (!c) return kBadInput;
  if (!a.kernel_source.empty() && !use_kernel_source(a.kernel_source, a.file, c->kernel))
    return kBadInput;

  // A convolution module computes a convolution (--conv, else its
  // schedule's `conv`); the problem is its implicit GEMM.
  std::optional<runtime::NamedConv> conv;
  if (a.conv.given() || !c->kernel.conv.empty()) {
    conv = convolution_of(a, *c);
    if (!conv) return kBadInput;
  }
  std::optional<compiler::Problem> problem =
      conv ? runtime::conv_problem(conv->conv, c->schedule.dtype) : gemm_problem(a, *c);
  if (!problem) return kBadInput;
  const compiler::Problem& p = *problem;
  // s8 takes whole-number scalars (the kernel converts them with int()):
  // said here, before any device, so `--alpha 0.5` is bad input everywhere.
  const compiler::Epilogue epilogue = a.scalars.applied_to(c->schedule.epilogue);
  if (std::string why = runtime::integer_scalars_error(c->kernel, epilogue.alpha, epilogue.beta);
      !why.empty()) {
    std::cerr << "schedc run: error: " << why << "\n";
    return kBadInput;
  }
  runtime::JitOptions jit_options;
  jit_options.use_cache = !a.no_cache;
  // Without a device: compile what a launch at this shape would (packed
  // operands at aligned addresses: the entry choose_entry picks, its
  // stream_k tail), side by side, as GpuSession::prepare does.
  auto compile_here = [&](std::vector<std::string>& names) {
    names = runtime::entries_for(c->kernel, p);  // a person's file: every entry, compiled whole
    const Clock::time_point t0 = Clock::now();
    std::vector<runtime::JitResult> parts =
        runtime::jit_entries(c->kernel, target.arch_name(), names, jit_options);
    return runtime::combine(parts,
                            std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  };

  try {
    if (!device && a.json) {  // stdout holds JSON alone
      std::vector<std::string> names;
      compile_here(names);
      report::Json o = {
          {"file", a.file}, {"ok", false}, {"error", "no CUDA device: " + no_device_why}};
      std::cout << report::json_text(o) << "\n";
      std::cerr << "schedc: no CUDA device: " << no_device_why << "\n";
      return kToolchain;
    }
    if (!device) {
      // Show what would run, compile it for the default target, then say why it cannot.
      print_summary(std::cout, *c, p, conv ? &conv->conv : nullptr);
      std::vector<std::string> names;
      runtime::JitResult j = compile_here(names);
      std::cout << "NVRTC " << target.arch_name() << (j.cache_hit ? " (cache hit)" : "")
                << ", the entries a launch at this shape needs:";
      for (const auto& [name, f] : j.functions) {
        std::cout << "  " << name << " ";
        if (f.entry)
          std::cout << f.registers << " registers, ";
        else
          std::cout << "(device function) ";
        std::cout << f.spill_store_bytes + f.spill_load_bytes << " B spills, "
                  << f.stack_frame_bytes << " B stack";
      }
      std::cout << "\n// ---- "
                << (c->kernel.source_file.empty() ? "generated CUDA" : c->kernel.source_file)
                << " ----\n"
                << c->kernel.source;
      if (!c->kernel.source.empty() && c->kernel.source.back() != '\n') std::cout << "\n";
      if (a.verbose) {
        print_stage_times(std::cerr, c->times);
        print_compile(std::cerr, j, names, target.arch_name(), !c->kernel.entry_guards);
      }
      std::cerr << "schedc: no CUDA device: " << no_device_why
                << " (the schedule was checked, emitted and compiled, but cannot run here)\n";
      return kToolchain;
    }

    runtime::GpuSession session(*device);
    std::shared_ptr<runtime::PreparedKernel> prepared = session.prepare(c->kernel, jit_options, &p);
    const std::string label = base_name(a.file);
    report::Json extra = {{"stages_ms", stage_times_json(c->times)}, {"device", device->name}};
    if (!a.kernel_source.empty()) extra["kernel_source"] = a.kernel_source;
    std::unique_ptr<runtime::RunReport> report;
    compiler::Problem grid_p = p;  // as the launch's grid counts it (ConvReport::grid_problem)
    if (conv) {
      runtime::ConvRunOptions opt;
      opt.conv = conv->conv;
      opt.epilogue = epilogue;
      opt.seed = a.seed;
      opt.flush_l2 = a.timing.flush_l2;
      opt.timing.graph_runs = a.timing.graph_runs;
      opt.time = !a.no_time;
      opt.jit = jit_options;
      auto r = std::make_unique<runtime::ConvReport>(session.run_conv(*prepared, opt));
      grid_p = r->grid_problem;
      if (a.json)
        std::cout << report::json_text(runtime::conv_json(a.file, *prepared, *r, extra)) << "\n";
      else
        runtime::print_conv_block(std::cout, label, c->kernel.dtype, *r);
      report = std::move(r);
    } else {
      runtime::RunOptions opt;
      opt.problem = p;
      opt.epilogue = epilogue;
      opt.seed = a.seed;
      opt.flush_l2 = a.timing.flush_l2;
      opt.timing.graph_runs = a.timing.graph_runs;
      opt.time = !a.no_time;
      opt.save_dir = a.save_dir;
      report = std::make_unique<runtime::RunReport>(session.run(*prepared, opt));
      const runtime::RunReport& r = *report;
      if (a.json) {
        std::cout << report::json_text(runtime::run_json(a.file, p, *prepared, r, extra)) << "\n";
      } else {
        std::cout << runtime::run_line(label, p, c->kernel.dtype, r) << "\n";
        if (!r.ok()) runtime::print_failure_details(std::cout, r);
      }
      for (const std::string& f : r.saved) std::cerr << "schedc: wrote " << f << "\n";
    }
    const runtime::RunReport& r = *report;
    if (!a.print_global.empty() && !print_global(std::cout, *prepared->module, a.print_global))
      return kBadInput;
    double total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
    if (a.verbose) {
      std::ostream& v = std::cerr;
      const runtime::JitResult& j = prepared->jit;
      v << "time breakdown (host wall clock):\n";
      print_stage_times(v, c->times);
      v << "  device init (context, stream, cuBLAS) " << ms(session.init_ms()) << "\n";
      print_compile(v, j, prepared->entries, device->arch(), !c->kernel.entry_guards);
      v << "  module load " << ms(prepared->load_ms) << "\n";
      if (!r.late.entries.empty()) {
        print_compile(v, r.late.jit, r.late.entries, device->arch(), !c->kernel.entry_guards);
        v << "  module load " << ms(r.late.load_ms) << "\n";
      }
      v << (conv ? "  validate (random inputs, with im2col + cuBLAS; the GPU im2col checked) "
                 : "  validate (exact + random, with cuBLAS) ")
        << ms(r.validate_ms) << "\n";
      if (r.timed && !r.has_baseline())
        v << "  time (schedc alone, " << r.kernel.runs << " runs) " << ms(r.time_ms) << "\n";
      else if (conv)
        v << "  time (schedc, cuBLAS alone, im2col + cuBLAS: " << r.kernel.runs << " runs each) "
          << ms(r.time_ms) << "\n";
      else
        v << "  time (schedc + cuBLAS, " << r.kernel.runs << " + " << r.cublas.runs << " runs) "
          << ms(r.time_ms) << "\n";
      if (r.timed) v << "  " << a.timing.describe() << "\n";
      v << "  total " << ms(total_ms) << "\n";
      double host = c->times.read_ms + c->times.parse_ms + c->times.analyze_ms + c->times.lower_ms +
                    c->times.emit_ms + j.ms + prepared->load_ms + r.late.jit.ms + r.late.load_ms;
      v << "  host work outside the GPU (pipeline + " << (j.cache_hit ? "cache" : "NVRTC")
        << " + load) " << ms(host) << "\n";
      v << "entry: " << (r.entry.fallback ? "fallback " : "main ") << r.entry.name
        << (r.entry.repack_a || r.entry.repack_b ? " on repacked operands" : "") << " ("
        << r.entry.why << ")\n";
      v << "launch: " << prepared->module->launch_note(r.entry, grid_p) << "\n";
      v << "reference: " << runtime::to_string(r.ref_mode) << " on " << device->name << "\n";
      v << "scalars: alpha " << epilogue.alpha << ", beta " << epilogue.beta
        << (epilogue.bias ? ", bias" : "")
        << (epilogue.scale ? ", per-channel scales (multiples of 1/64 in [0.5, 2])" : "")
        << (epilogue.relu ? ", relu" : "")
        << (epilogue.requantize ? ", requantized to int8 (from the reference's exact sums)" : "")
        << "\n";
      for (const auto& [name, f] : j.functions)
        v << "ptxas: " << name << " "
          << (f.entry ? std::to_string(f.registers) + " registers, " : "(device function) ")
          << f.spill_store_bytes << "+" << f.spill_load_bytes << " B spill stores+loads, "
          << f.stack_frame_bytes << " B stack, " << f.shared_bytes << " B static smem\n";
      if (r.timed) {
        v << "timing: schedc median " << r.kernel.median_ms << " ms (min " << r.kernel.min_ms
          << ", max " << r.kernel.max_ms << "); ";
        if (r.has_baseline())
          v << "cuBLAS median " << r.cublas.median_ms << " ms (min " << r.cublas.min_ms << ", max "
            << r.cublas.max_ms << ")\n";
        else
          v << "no cuBLAS baseline: " << r.no_baseline << "\n";
      }
    }
    return r.ok() ? kOk : kWrongResult;
  } catch (const runtime::Error& e) {
    std::cerr << "schedc: error: " << e.what() << "\n";
    return e.kind() == runtime::Error::Kind::rejected_source ||
                   e.kind() == runtime::Error::Kind::refused
               ? kBadInput
               : kToolchain;
  }
}

}  // namespace

Command add_run_command(CLI::App& root) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* sub = root.add_subcommand(
      "run", "Compile a schedule, run it, validate it against cuBLAS and time it beside cuBLAS");
  sub->add_option("file", a->file, ".sched file")->required();
  sub->add_option("--shape", a->shape, "problem size MxNxK (default: the schedule's shape)");
  sub->add_option("--seed", a->seed, "seed of the random inputs (default 1)");
  a->scalars.add_to(sub);
  sub->add_option(
      "--layout", a->layout,
      "A's and B's layouts: NN, NT (B column-major: C = X·Wᵀ), TN or TT; N row-major, "
      "T column-major; a third letter gives C's (default: the file's `layout`, else NN)");
  sub->add_option(
      "--lda", a->lda,
      "leading dimension of A (default: its row length in memory, K; M when A is column-major)");
  sub->add_option(
      "--ldb", a->ldb,
      "leading dimension of B (default: its row length in memory, N; K when B is column-major)");
  sub->add_option(
      "--ldc", a->ldc,
      "leading dimension of C (default: its row length in memory, N; M when C is column-major)");
  a->batch.add_to(sub);
  a->conv.add_to(sub, false);
  sub->add_flag("--json", a->json, "print one JSON object on stdout");
  sub->add_flag("--verbose,-v", a->verbose, "time breakdown and the entry that ran, on stderr");
  sub->add_flag("--no-cache", a->no_cache, "neither read nor write the kernel cache");
  a->timing.add_to(sub);
  sub->add_flag("--no-time", a->no_time, "validate only (e.g. under compute-sanitizer)");
  sub->add_option("--save", a->save_dir, "write A, B, C_schedc, C_cublas as .npy files here");
  sub->add_flag("--tuned", a->tuned,
                "run the tuning database's fastest correct schedule for this dtype, shape and "
                "device (FILE: the tuned space, or a schedule run as it is when none is known)");
  sub->add_option("--db", a->db, "the tuning database for --tuned (default: as schedc tune's)");
  sub->add_option("--kernel-source", a->kernel_source,
                  "run this CUDA file (e.g. an edited `schedc emit` output) in place of the "
                  "emitted source; the schedule still gives entry names and launch");
  sub->add_option("--print-global", a->print_global,
                  "after the run, print the module's __device__ variable of this name as 64-bit "
                  "words, eight a line, lines of zeros left out (numbers a --kernel-source edit "
                  "leaves there, as bench/conv_timeline.py's stamps)");
  return {sub, [a] { return run_command(*a); }};
}

}  // namespace schedc::cli
