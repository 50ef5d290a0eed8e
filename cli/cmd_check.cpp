// `schedc check FILE... [--arch sm_90] [--json]`: parse and analyze each file;
// print its resolved schedule (canonical .sched text, every default explicit)
// and its static resources. Exit 2 if any file is bad.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "cli/space_check.h"
#include "codegen/blocks_wgmma.h"
#include "compiler/analyze.h"
#include "compiler/copy_notes.h"
#include "compiler/lower.h"
#include "report/json.h"

namespace schedc::cli {

namespace {

using compiler::Resources;
using compiler::Schedule;
using compiler::Target;

using report::Json;

Json schedule_json(const Schedule& s) {
  Json o = {{"shape", {s.shape.m, s.shape.n, s.shape.k}},
            {"dtype", compiler::to_string(s.dtype)},
            {"naive", s.is_naive()}};
  if (s.is_naive()) {
    o["block"] = {s.block_x, s.block_y};
  } else {
    const auto& t = *s.tile;
    o["tile"] = {t.m, t.n, t.k};
    if (!s.uses_tensor_cores()) {
      o["thread"] = {s.thread.m, s.thread.n};
      o["split"] = {s.thread.split_m, s.thread.split_n};
    }
    if (s.warp) o["warp"] = {s.warp->m, s.warp->n};
    o["vectorize"] = s.vectorize;
    o["transpose_a"] = s.transpose_a;
    o["transpose_b"] = s.transpose_b;
    o["pad_a"] = s.pad_a;
    o["pad_b"] = s.pad_b;
    o["swizzle_smem"] = s.swizzle_smem;
    o["swizzle_block"] = s.swizzle_block;
    o["double_buffer"] = s.double_buffer;
    o["stages"] = s.stages;
    o["tma"] = s.tma;
    o["stream_k"] = s.stream_k;
    if (s.uses_wgmma()) {  // the Hopper kernel's choices
      o["warp_specialize"] = s.warp_specialize;
      if (s.warp_specialize) o["consumer_order"] = s.pingpong ? "pingpong" : "cooperative";
      o["cluster"] = {s.cluster_m, s.cluster_n};
      o["persistent"] = s.persistent;
      if (s.warp_specialize) o["blocks_per_sm"] = s.blocks_per_sm;
      o["tma_store"] = s.tma_store;
      o["split_k"] = s.split_k;
      if (s.halo) {  // the input once a tile; `halo only`: A's region its phase images
        o["halo"] = true;
        o["halo_only"] = s.halo_only;
      }
    }
    if (s.mma) {
      const compiler::MmaSpec& m = *s.mma;
      Json mma = {{"api", m.api == compiler::MmaApi::wmma    ? "wmma"
                          : m.api == compiler::MmaApi::wgmma ? "wgmma"
                                                             : "mma"},
                  {"type", compiler::to_string(m.type)},
                  {"shape", {m.m, m.n, m.k}}};
      // How f32 inputs become tf32 (`mma tf32 … truncate`); only `mma tf32` has a choice.
      if (m.api == compiler::MmaApi::mma_sync && m.type == compiler::MmaType::tf32)
        mma["tf32_rounding"] = compiler::to_string(m.tf32_rounding);
      o["mma"] = std::move(mma);
    }
  }
  o["epilogue"] = {{"alpha", report::json_real(s.epilogue.alpha)},
                   {"beta", report::json_real(s.epilogue.beta)},
                   {"bias", s.epilogue.bias},
                   {"relu", s.epilogue.relu},
                   {"requantize", s.epilogue.requantize},
                   {"scale", s.epilogue.scale}};
  return o;
}

Json resources_json(const Resources& r) {
  Json o = {{"threads_per_block", r.threads_per_block},
            {"smem_bytes", r.smem_bytes},
            {"a_tile_bytes", r.a_tile_bytes},
            {"b_tile_bytes", r.b_tile_bytes},
            {"buffers", r.buffers},
            {"blocks_per_sm", r.blocks_per_sm},
            {"limited_by", r.limited_by}};
  if (r.a_region_bytes) o["a_region_bytes"] = r.a_region_bytes;  // halo only
  return o;
}

// The resources as comments under the schedule, so the output stays a .sched file.
void print_resources(std::ostream& o, const Resources& r, const Target& t) {
  o << "# resources on " << t.arch_name() << ":\n";
  o << "#   threads per block: " << r.threads_per_block << "\n";
  o << "#   shared memory:     " << r.smem_bytes << " bytes per block";
  if (r.smem_bytes > 0) {
    if (r.epilogue_bytes == r.smem_bytes)  // the wmma epilogue's scratch is the larger
      o << " (WMMA epilogue: " << r.epilogue_bytes / 1024 << " warps x 1024; pipeline " << r.buffers
        << (r.buffers == 1 ? " buffer" : " buffers") << " x (A " << r.a_tile_bytes << " + B "
        << r.b_tile_bytes << "))";
    else
      o << " (" << r.smem_parts << ")";
    if (r.smem_bytes > t.smem_per_block_default)
      o << ", over " << t.smem_per_block_default << ": needs the opt-in attribute";
  }
  o << "\n";
  o << "#   blocks per SM:     " << r.blocks_per_sm << " (limited by " << r.limited_by << ")\n";
  if (!r.tma_copies.empty()) o << "#   copies (tma):      " << r.tma_copies << "\n";
}

// SIMT `stages`: how the lowered plan copies each operand with cp.async (one
// contiguous shared address per copy, so a transposed operand, or one whose
// padded rows break the vector, goes element by element), and at which
// k-steps the warps issue them.
void print_cp_async_copies(std::ostream& o, const compiler::Schedule& s, const Target& t) {
  if (s.is_naive() || s.stages < 2 || s.uses_tensor_cores()) return;
  const compiler::KernelPlan p = compiler::lower(s, t);
  auto copy = [&](const compiler::TileCopy& c, const compiler::SmemLayout& l) -> std::string {
    if (c.smem_vec > 1)
      return std::to_string(c.vec * compiler::elem_bytes(p.dtype)) + "-byte copies";
    if (l.transposed != c.global_transposed)
      return "one element per copy (transposed in shared memory)";
    return c.vec > 1 ? "one element per copy (padded rows)" : "one element per copy";
  };
  o << "#   copies (cp.async): A " << copy(p.copy_a, p.smem_a) << ", B "
    << copy(p.copy_b, p.smem_b);
  if (p.copy_late_step > 0)
    o << "; issued at step 0 by warps 0-" << p.block_threads / 64 - 1 << ", at step "
      << p.copy_late_step << " by warps " << p.block_threads / 64 << "-"
      << p.block_threads / 32 - 1;
  o << "\n";
}

// `layout A col` / `layout B col` (issue 18): what the copies do with a
// column-major operand, and so what `transpose` means with it.
void print_layouts(std::ostream& o, const compiler::Schedule& s, const Target& t) {
  // s8 reads B k-major only: a row-major B (the default) is worth a line too.
  if (!s.a_col && !s.b_col && !s.c_col && s.dtype != compiler::DType::s8) return;
  if (s.is_naive()) {
    std::string which;
    for (auto [col, name] : {std::pair{s.a_col, "A"}, {s.b_col, "B"}, {s.c_col, "C"}})
      if (col) which += (which.empty() ? "" : ", ") + std::string(name);
    o << "#   layouts:           " << which
      << " column-major, read and written in place by each thread\n";
    return;
  }
  const compiler::KernelPlan p = compiler::lower(s, t);
  if (p.wgmma) {  // TMA lands each tile in its memory order; wgmma reads either
    const compiler::WgmmaPlan& w = *p.wgmma;
    auto op_line = [&](const char* op, const compiler::WgmmaOperand& x, const char* map) {
      o << "#   layout " << op << " col:      TMA loads " << op << "'s tile in its memory order ("
        << codegen::wgmma_boxes_text(x) << " of its " << map << " map); wgmma reads it "
        << (x.mn_major ? "m" : "k") << "-major by descriptor"
        << (x.mn_major ? ", transpose flag set" : "") << "\n";
    };
    const bool s8 = w.type == compiler::MmaType::s8;
    if (s.a_col && w.a_transposed)
      o << "#   layout A col:      "
        << (s8 ? "wgmma s8 reads only k-major operands"
               : "neither A nor B is k-major, which wgmma tf32 needs of one")
        << ": the runtime transposes A into row-major scratch before each launch (the "
           "_transpose entry), and TMA loads that\n";
    else if (s.a_col)
      op_line("A", w.a, "K x M");
    if (w.b_transposed)
      o << "#   layout B row:      wgmma s8 reads only k-major operands: the runtime transposes B "
           "into column-major scratch before each launch (the _transpose entry), and TMA loads "
           "that; 'layout B col' (B stored N x K, as nn.Linear's weight) spares the copy\n";
    if (s.b_col) op_line("B", w.b, "N x K");
    if (s.c_col)
      o << "#   layout C col:      "
        << (w.tma_store ? "the epilogue stages C m-major (stmatrix .trans) and TMA stores boxes "
                          "of its N x M map"
            : w.swapped ? "the transposed product's accumulators go to C in its memory order"
                        : "each thread stores its C elements one at a time (a pair's two "
                          "columns lie ldc apart)")
        << "\n";
    return;
  }
  if (p.mma) {  // mma / wmma: the stages keep each operand's layout in memory
    const compiler::MmaPlan& m = *p.mma;
    const bool wmma = m.api == compiler::MmaApi::wmma;
    auto tc = [&](const char* op, const compiler::SmemTile& st, const char* mem_rows,
                  const char* contiguous, const std::string& read) {
      o << "#   layout " << op << " col:      memory holds " << op << "'s tile as " << st.rows
        << " " << mem_rows << " rows of " << st.cols << " " << contiguous
        << "; its shared stage keeps that order (" << (m.tma ? "TMA boxes" : "16-byte chunks")
        << "), read by " << read << "\n";
    };
    // s8 reads only k-major stages: the runtime's transposed scratch (MmaPlan::a_transposed).
    auto transposed = [&](const char* op, const char* layout, const char* into) {
      o << "#   layout " << op << " " << layout
        << ":      mma s8 reads only k-major operands (ldmatrix.trans moves 16-bit pairs): the "
           "runtime transposes "
        << op << " into " << into
        << " scratch before each launch (the _transpose entry), and the kernel copies that\n";
    };
    if (m.a_transposed)
      transposed("A", "col", "row-major");
    else if (s.a_col)
      tc("A", m.a, "k", "m",
         wmma           ? "wmma::load_matrix_sync (col_major)"
         : m.ldmatrix_a ? "ldmatrix.trans"
                        : "4-byte shared loads (tf32: no 32-bit ldmatrix.trans)");
    if (m.b_transposed)
      transposed("B", "row", "column-major");
    else if (s.b_col)
      tc("B", m.b, "n", "k",
         wmma ? "wmma::load_matrix_sync (col_major)" : "ldmatrix without .trans (mma's col B)");
    if (s.c_col)
      o << "#   layout C col:      each thread stores its C elements one at a time (a "
           "fragment's neighbours along n lie ldc apart)\n";
    return;
  }
  auto line = [&](const char* op, const compiler::TileCopy& c, const compiler::SmemLayout& l,
                  const char* mem_rows, const char* contiguous, bool transpose_given) {
    o << "#   layout " << op << " col:      memory holds " << op << "'s tile as " << c.rows << " "
      << mem_rows << " rows of " << c.cols << " " << contiguous << "; ";
    if (l.transposed == c.global_transposed)
      o << "shared " << op << " has that order"
        << (transpose_given ? " ('transpose " + std::string(op) + "' keeps memory's order)" : "")
        << ", so the copies move vectors unchanged\n";
    else
      o << "shared " << op << " holds the other order"
        << ", so the copies transpose element by element"
        << (transpose_given ? "" : " ('transpose " + std::string(op) + "' would spare that)")
        << "\n";
  };
  if (s.a_col) line("A", p.copy_a, p.smem_a, "k", "m", s.transpose_a);
  if (s.b_col) line("B", p.copy_b, p.smem_b, "n", "k", s.transpose_b);
  if (s.c_col)
    o << "#   layout C col:      each thread stores its C elements one at a time, column by "
         "column (m is contiguous in memory, n in a thread's tile)\n";
}

// Copies whose vectors (or 16-byte chunks) the threads do not divide: which
// threads skip the last round. Nothing for even copies.
std::vector<std::string> uneven_copies(const compiler::Schedule& s, const Target& t) {
  if (s.is_naive()) return {};
  return compiler::uneven_copy_notes(compiler::lower(s, t));
}

void print_uneven_copies(std::ostream& o, const compiler::Schedule& s, const Target& t) {
  for (const std::string& n : uneven_copies(s, t)) o << "#   uneven copy:       " << n << "\n";
}

// `stream_k`: the split is the launch's (it depends on the device's SM
// count and the kernel's occupancy, which registers decide), so say how it
// is chosen and where to see it.
void print_stream_k(std::ostream& o, const compiler::Schedule& s) {
  if (!s.stream_k) return;
  o << "#   stream_k:          a second kernel (<name>_stream_k) cuts the tiles of a partial\n"
    << "#                      last wave along k, a block per slice; the split is chosen at\n"
    << "#                      launch (schedc run --verbose prints it)\n";
}

// `batch N`: how the kernel walks the batch.
void print_batch(std::ostream& o, const compiler::Schedule& s) {
  if (s.batch == 0) return;
  o << "#   batch:             " << s.batch
    << " GEMMs unless run or bench say --batch; one GEMM per grid z\n"
    << "#                      index, its A, B and C the batch strides on\n";
  if (s.uses_wgmma() || s.tma)
    o << "#                      the TMA maps are 3-D: the batch is their third dimension\n";
  if (s.persistent || s.stream_k)
    o << "#                      each GEMM's tiles are split as one GEMM's (persistent, "
         "stream_k)\n";
}

}  // namespace

Command add_check_command(CLI::App& root) {
  struct Options {
    std::vector<std::string> files;
    std::string arch = "sm_90";
    bool json = false;
    int top = 10;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "check",
      "Parse and validate schedules; print each resolved schedule (every default explicit) and "
      "its static resources (threads, shared memory, blocks per SM). For a search space (a file "
      "with {a,b} sets, docs/tuning.md): its size, what analysis drops and why, and the kept "
      "candidates ranked by the static model.");
  sub->add_option("files", opt->files, ".sched files")->required();
  sub->add_option("--arch", opt->arch, "target architecture: sm_80, sm_86, sm_89, sm_90")
      ->capture_default_str();
  sub->add_flag("--json", opt->json, "print JSON on stdout (diagnostics still on stderr)");
  sub->add_option("--top", opt->top,
                  "search spaces (files with {a,b} sets): how many kept candidates to list, "
                  "best first by the static model")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));

  return {sub, [opt] {
            Target target;
            if (!compiler::target_for_arch(opt->arch, target)) {
              std::cerr << "schedc check: error: unknown architecture '" << opt->arch
                        << "' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)\n";
              return int(kBadInput);
            }
            bool all_ok = true;
            Json json = Json::array();
            for (size_t i = 0; i < opt->files.size(); ++i) {
              const std::string& path = opt->files[i];
              std::ostringstream diags;
              std::optional<Compiled> c;
              std::string why;
              // Read once: the file may be a pipe.
              if (std::optional<std::string> text = read_file(path, why)) {
                if (opt->json) {
                  if (std::optional<Json> space =
                          space_json(path, *text, target, opt->top, std::cerr)) {
                    all_ok = all_ok && (*space)["ok"].get<bool>();
                    json.push_back(std::move(*space));
                    continue;
                  }
                } else {
                  // A search space: its report instead of one schedule's.
                  std::ostringstream report;
                  std::optional<SpaceReport> space =
                      check_space(path, *text, target, opt->top, report, std::cerr);
                  if (space) {
                    if (i) std::cout << "\n";
                    std::cout << report.str();
                    all_ok = all_ok && space->kept > 0;
                    continue;
                  }
                }
                c = check_source(std::make_shared<dsl::SourceFile>(path, std::move(*text)), target,
                                 diags);
              } else {
                diags << path << ": error: " << why << "\n";
              }
              std::cerr << diags.str();
              all_ok = all_ok && c.has_value();
              if (opt->json) {
                Json f = {{"file", path}, {"arch", target.arch_name()}, {"ok", c.has_value()}};
                if (c) {
                  f["schedule"] = schedule_json(c->schedule);
                  f["resources"] = resources_json(compiler::static_resources(c->schedule, target));
                  // Only for schedules with an uneven copy, as the text's lines.
                  std::vector<std::string> uneven = uneven_copies(c->schedule, target);
                  if (!uneven.empty()) f["resources"]["uneven_copies"] = uneven;
                } else {
                  f["diagnostics"] = diags.str();
                }
                json.push_back(std::move(f));
                continue;
              }
              if (!c) continue;
              if (i) std::cout << "\n";
              std::cout << "# " << path << ": ok for " << target.arch_name() << "\n"
                        << compiler::to_sched_text(c->schedule);
              print_resources(std::cout, compiler::static_resources(c->schedule, target), target);
              print_cp_async_copies(std::cout, c->schedule, target);
              print_layouts(std::cout, c->schedule, target);
              print_uneven_copies(std::cout, c->schedule, target);
              print_stream_k(std::cout, c->schedule);
              print_batch(std::cout, c->schedule);
            }
            if (opt->json) std::cout << report::json_text(json) << "\n";
            return int(all_ok ? kOk : kBadInput);
          }};
}

}  // namespace schedc::cli
