#pragma once
// The analyzer behind compiler::analyze (compiler/analyze.h), shared by the
// files that hold its rules: compiler/analyze.cpp (reading, presence and
// arithmetic rules of every path) and compiler/analyze_tensor_cores.cpp (the
// rules of `wmma`, `mma`, `wgmma`, `tma` and the Hopper directives). Internal
// to compiler/: nothing outside includes it.
#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/analyze.h"
#include "dsl/ast.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler::analysis {

using dsl::Arg;
using dsl::Directive;
using dsl::SourceSpan;

inline constexpr int64_t kMaxExtent = 65536;  // tile, thread, warp, block, split
inline constexpr int64_t kMaxShape = (int64_t(1) << 31) - 1;

inline std::string join(const std::vector<std::string>& v, const char* last = " or ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? last : ", ") + v[i];
  return s;
}

inline std::string dims_text(std::initializer_list<int64_t> v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// A number as the user wrote it (so an overflowing one reads as written).
inline std::string shown(const Arg& a, size_t i) {
  if (!a.overflow && i < a.values.size()) return std::to_string(a.values[i]);
  std::string text = a.text;
  if (i < a.value_spans.size() && a.value_spans[i].offset >= a.span.offset)
    text = text.substr(a.value_spans[i].offset - a.span.offset, a.value_spans[i].length);
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

class Analyzer {
 public:
  Analyzer(const Target& target, dsl::Diagnostics& diags) : target_(target), diags_(diags) {}

  std::optional<Schedule> run(const dsl::Ast& ast, const std::string& file_name) {
    s_.file = file_name;
    int errors_before = diags_.error_count();
    for (const Directive& d : ast.directives) read(d);
    presence_rules();
    if (values_ok_) arithmetic_rules();
    if (diags_.error_count() > errors_before) return std::nullopt;
    return s_;
  }
  // `--conv`'s text as a `conv` directive (compiler::parse_conv_option).
  std::optional<Conv2d> read_conv_only(const Directive& d) {
    read_conv(d);
    return s_.conv;
  }

 private:
  const Target& target_;
  dsl::Diagnostics& diags_;
  Schedule s_;
  bool values_ok_ = true;                         // no directive had a bad value
  std::map<std::string, const Directive*> seen_;  // "tile", "pad A", … -> first
  const Directive* mma_dir_ = nullptr;            // wmma or mma
  SourceSpan dtype_arg_, mma_type_arg_, thread_arg_, split_arg_, warp_arg_, tile_arg_,
      vectorize_arg_;

  dsl::Diagnostic& error(SourceSpan at, std::string msg) {
    return diags_.error(at, std::move(msg));
  }
  dsl::Diagnostic& bad_value(SourceSpan at, std::string msg) {
    values_ok_ = false;
    return error(at, std::move(msg));
  }
  static void note(dsl::Diagnostic& d, const Origin& o, std::string msg) {
    if (o.from_source) d.notes.push_back({o.span, std::move(msg)});
  }
  static Origin at(const Directive& d) { return Origin{d.span, true}; }
  // Notes point at the argument that set the related value.
  Origin tile_note() const { return {tile_arg_, s_.tile_at.from_source}; }
  Origin thread_note() const { return {thread_arg_, s_.thread_at.from_source}; }
  Origin dtype_note() const { return {dtype_arg_, s_.dtype_at.from_source}; }

  // ---- pass 1: reading ------------------------------------------------------
  bool first_time(const std::string& key, const Directive& d) {
    auto [it, inserted] = seen_.emplace(key, &d);
    if (inserted) return true;
    auto& e = error(d.span, "duplicate '" + key + "'; each directive may be given once");
    e.notes.push_back({it->second->span, "first given here"});
    return false;
  }

  // Extent i of a dims/number argument, in [lo, hi].
  bool extent(const Arg& a, size_t i, const std::string& name, int64_t lo, int64_t hi,
              int64_t& out) {
    SourceSpan sp = i < a.value_spans.size() ? a.value_spans[i] : a.span;
    if (i >= a.values.size()) return false;
    int64_t v = a.values[i];
    if (v < lo) {
      bad_value(sp, name + " must be at least " + std::to_string(lo) + ", got " + shown(a, i));
      return false;
    }
    if (v > hi || a.overflow) {
      bad_value(sp, name + " must be at most " + std::to_string(hi) + ", got " + shown(a, i));
      return false;
    }
    out = v;
    return true;
  }

  // Reads all extents of `a` into `out` (names give each extent's name).
  bool extents(const Arg& a, const std::vector<std::string>& names, int64_t lo, int64_t hi,
               std::vector<int64_t>& out) {
    out.assign(names.size(), 0);
    bool ok = a.values.size() == names.size();
    for (size_t i = 0; ok && i < names.size(); ++i) ok = extent(a, i, names[i], lo, hi, out[i]);
    return ok;
  }

  template <typename E>
  bool choice(const Arg& a, const std::string& what,
              const std::vector<std::pair<std::string, E>>& c, E& out) {
    std::vector<std::string> names;
    for (auto& [name, value] : c) {
      if (a.text == name) {
        out = value;
        return true;
      }
      names.push_back(name);
    }
    std::string msg = "unknown " + what + " '" +
                      (a.text.size() > 40 ? a.text.substr(0, 40) + "..." : a.text) + "'";
    std::string guess = dsl::closest_spelling(a.text, names);
    if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
    bad_value(a.span, msg + " (expected " + join(names) + ")");
    return false;
  }

  bool operand(const Arg& a, Operand& out) {
    return choice<Operand>(a, "operand", {{"A", Operand::A}, {"B", Operand::B}}, out);
  }

  bool mma_type(const Arg& a, MmaType& out) {
    mma_type_arg_ = a.span;
    return choice<MmaType>(a, "tensor-core type",
                           {{"tf32", MmaType::tf32},
                            {"f16", MmaType::f16},
                            {"bf16", MmaType::bf16},
                            {"s8", MmaType::s8}},
                           out);
  }

  void read(const Directive& d);
  bool tile_broken_ = false;
  bool swizzle_broken_ = false;  // a `swizzle` whose kind could not be read

  void read_swizzle(const Directive& d);

  void read_mma(const Directive& d);

  // `wgmma TYPE [m64nNkK]`: M is 64 (one warpgroup), K is 32 bytes of the
  // type (16 for f16/bf16, 8 for tf32), N a multiple of 8 up to 256. Without
  // a shape, N is the warpgroup tile's WN (n stays 0 here; see wgmma_tiles).
  void read_wgmma_shape(const Directive& d, MmaSpec& m);

  // The word after an `mma` shape: `truncate` (tf32 only), else an error.
  void read_tf32_rounding(const Arg& w, MmaSpec& m);

  void read_epilogue(const Directive& d);

  // ---- pass 2: presence rules -------------------------------------------------
  const Directive* given(const std::string& key) const {
    auto it = seen_.find(key);
    return it == seen_.end() ? nullptr : it->second;
  }

  void excludes(const std::string& a, const std::string& b, const std::string& why) {
    const Directive* da = given(a);
    const Directive* db = given(b);
    if (!da || !db) return;
    const Directive* later = da->span.offset > db->span.offset ? da : db;
    const Directive* earlier = later == da ? db : da;
    auto& e = error(later->span, "'" + a + "' and '" + b + "' exclude each other: " + why);
    e.notes.push_back({earlier->span, "'" + (earlier == da ? a : b) + "' given here"});
  }

  void presence_rules();

  // `conv` (compiler/analyze_conv.cpp): its arguments into a Conv2d, and
  // what a convolution kernel needs and excludes.
  void read_conv(const Directive& d);
  void conv_rules();
  void halo_rules();
  void halo_only_rule(const Directive& halo);

  // `warp_specialize`, `persistent` and `tma_store` shape the wgmma kernel only.
  void hopper_presence_rules();
  void cluster_split_k_rules(const Directive& cluster);

  // `stream_k` splits the k loop of the SIMT tiled and the wgmma kernels
  // (not with `cluster`); the wmma and mma.sync kernels do not take its
  // workspace yet.
  void stream_k_rules();
  void split_k_rules();

  // `tma` fills the stages of the mma.sync pipeline with TMA boxes written in
  // the 128-byte swizzle (compiler/lower_mma.cpp, docs/tensor_cores.md).
  void tma_presence_rules();

  // Box shapes of `tma` (after the tile's values are known).
  void tma_tile_rules(const BlockTile& t);

  // What the tensor-core lowering (compiler/lower_mma.cpp) cannot do: its
  // global->shared copies are 16-byte cp.async chunks of whole rows, and WMMA
  // reads a plain strided layout.
  void tensor_core_rules();

  void dtype_rules();
  // `epilogue ... requantize`: dtype s8, the wgmma kernel's direct stores.
  void requantize_rules();
  // The mma type was read (an unknown type name is reported on its own).
  bool values_ok_ok_for_type() const {
    std::string t = mma_dir_ ? mma_dir_->args[0].text : "";
    return t == "tf32" || t == "f16" || t == "bf16" || t == "s8";
  }

  void target_rules();

  // ---- pass 3: arithmetic -----------------------------------------------------
  void arithmetic_rules();

  void naive_threads();

  // Reports "X does not divide Y" at `at` with a note at the bigger tile.
  bool divides(int64_t small, int64_t big, SourceSpan at, const std::string& msg,
               const Origin& big_at, const std::string& big_note) {
    if (small > 0 && big % small == 0) return true;
    auto& e = error(at, msg);
    note(e, big_at, big_note);
    return false;
  }

  bool simt_tiles(const BlockTile& t);

  bool tensor_core_tiles(const BlockTile& t);

  // `warp WMxWN` with wgmma is one consumer warpgroup's C tile: WM/64
  // instructions of m64nNkK down, WN/N across. B is read in 128-byte column
  // panels (64 f16), and an instruction's N starts at a panel.
  bool wgmma_tiles(const BlockTile& t);
  bool wgmma_tf32_tiles(const BlockTile& t);
  // The warpgroup tile divides the block tile (both wgmma types).
  bool warpgroup_tile_divides(const BlockTile& t);
  // pingpong: each consumer computes whole block tiles.
  bool pingpong_tile_rule(const BlockTile& t);

  // A thread's f32 accumulators plus two k-slices of its A and B fragments
  // (the emitters double-buffer them) must fit in the registers a thread may
  // have (255), with room left for addresses and indices; past that ptxas
  // spills to local memory: correct, but far from what the schedule promises.
  // Seen: `mma tf32` with `warp 64x128` (256 accumulators) compiled to 17 KB
  // of spills.
  static constexpr int64_t kRegisterBudget = 224;
  void registers_rule();

  // wgmma: ptxas compiles the whole kernel within the registers each thread
  // gets at launch (64K / threads, in steps of 8, at most 255; setmaxnreg
  // moves registers between warpgroups later but does not raise that bound),
  // and a thread holds its accumulators plus about 26 more (descriptors,
  // addresses, indices). Seen: 3 consumers of m64n256 (512 threads, 128
  // registers) made ptxas stop with "Insufficient registers".
  void wgmma_registers_rule();

  // Threads per block within the target's limits; the place is the directive
  // that decided the count (thread or warp), else the tile.
  bool threads_ok();

  // Vector width against the element type and the rows it is read from.
  bool vector_width_rules(const BlockTile& t);

  // The vector width rules, then the cp.async copy size of SIMT `stages`
  // (the copy's split over the threads needs no rule: uneven copies are
  // guarded).
  void vector_rules(const BlockTile& t);

  // With a bad thread count, only the pipeline is measured: the wmma
  // epilogue's scratch (warps x 1024 bytes) follows the thread count, which
  // threads_ok has reported already.
  void smem_rule(bool threads_fine);
  void blocks_per_sm_rule();
};

}  // namespace schedc::compiler::analysis
