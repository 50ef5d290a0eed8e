// compiler::analyze: Ast -> Schedule. Three passes over the directives:
//   1. read each directive's arguments (ranges, names, instruction shapes),
//      reporting duplicates with the first place as a note;
//   2. presence rules: what needs `tile`, what excludes what, dtype vs MMA
//      type vs target;
//   3. arithmetic rules on the tiles: divisibility, threads per block, vector
//      width, the global->shared copy, shared-memory bytes.
// Every violation is reported (pass 3 only runs on directives whose own
// values were fine, so one mistake does not cascade into several).
//
// The global->shared copy rule, which the lowering relies on: the block's
// T threads copy each tile in vectors of N elements (N = vectorize), every
// thread the same whole number of vectors. So N | BK and N | BN (a vector
// never crosses a row of A (BK long) or of B (BN long) in global memory), and
//   (BM*BK / N) % T == 0   and   (BK*BN / N) % T == 0.
// A thread copies (BM*BK/N)/T vectors of A and (BK*BN/N)/T vectors of B per
// k-tile; no thread idles and none needs a bounds check on its vector count.
#include "compiler/analyze.h"

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace schedc::compiler {

namespace {

using dsl::Arg;
using dsl::Directive;
using dsl::SourceSpan;

constexpr int64_t kMaxExtent = 65536;  // tile, thread, warp, block, split
constexpr int64_t kMaxShape = (int64_t(1) << 31) - 1;

std::string join(const std::vector<std::string>& v, const char* last = " or ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? last : ", ") + v[i];
  return s;
}

std::string dims_text(std::initializer_list<int64_t> v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// A number as the user wrote it (so an overflowing one reads as written).
std::string shown(const Arg& a, size_t i) {
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
    return choice<MmaType>(
        a, "tensor-core type",
        {{"tf32", MmaType::tf32}, {"f16", MmaType::f16}, {"bf16", MmaType::bf16}}, out);
  }

  void read(const Directive& d) {
    const std::string& k = d.keyword;
    const std::vector<Arg>& a = d.args;
    std::vector<int64_t> v;
    if (k == "shape") {
      if (!first_time(k, d)) return;
      if (extents(a[0], {"M", "N", "K"}, 1, kMaxShape, v)) s_.shape = Shape{v[0], v[1], v[2]};
      s_.shape_at = at(d);
    } else if (k == "dtype") {
      if (!first_time(k, d)) return;
      dtype_arg_ = a[0].span;
      choice<DType>(a[0], "element type",
                    {{"f32", DType::f32}, {"f16", DType::f16}, {"bf16", DType::bf16}}, s_.dtype);
      s_.dtype_at = at(d);
    } else if (k == "block") {
      if (!first_time(k, d)) return;
      if (extents(a[0], {"block X", "block Y"}, 1, kMaxExtent, v)) {
        s_.block_x = int(v[0]);
        s_.block_y = int(v[1]);
      }
      s_.block_at = at(d);
    } else if (k == "tile") {
      if (!first_time(k, d)) return;
      tile_arg_ = a[0].span;
      if (extents(a[0], {"tile BM", "tile BN", "tile BK"}, 1, kMaxExtent, v))
        s_.tile = BlockTile{int(v[0]), int(v[1]), int(v[2])};
      else
        tile_broken_ = true;
      s_.tile_at = at(d);
    } else if (k == "thread") {
      if (!first_time(k, d)) return;
      thread_arg_ = a[0].span;
      if (extents(a[0], {"thread TM", "thread TN"}, 1, kMaxExtent, v)) {
        s_.thread.m = int(v[0]);
        s_.thread.n = int(v[1]);
      }
      if (a.size() == 3) {  // split PMxPN
        split_arg_ = a[2].span;
        if (extents(a[2], {"split PM", "split PN"}, 1, kMaxExtent, v)) {
          s_.thread.split_m = int(v[0]);
          s_.thread.split_n = int(v[1]);
        }
      }
      s_.thread_at = at(d);
    } else if (k == "warp") {
      if (!first_time(k, d)) return;
      warp_arg_ = a[0].span;
      if (extents(a[0], {"warp WM", "warp WN"}, 1, kMaxExtent, v))
        s_.warp = WarpTile{int(v[0]), int(v[1])};
      else
        s_.warp = WarpTile{1, 1};  // given but bad: keeps "warp is required" quiet
      s_.warp_at = at(d);
    } else if (k == "vectorize") {
      if (!first_time(k, d)) return;
      vectorize_arg_ = a[0].span;
      int64_t n = 0;
      if (a[0].is_real) {
        bad_value(a[0].span, "vector width must be a whole number: 1, 2, 4 or 8");
      } else if (extent(a[0], 0, "vector width", 1, 8, n)) {
        if (n & (n - 1))
          bad_value(a[0].span,
                    "vector width must be a power of two (1, 2, 4 or 8), got " + std::to_string(n));
        else
          s_.vectorize = int(n);
      }
      s_.vectorize_at = at(d);
    } else if (k == "transpose") {
      Operand op;
      if (!operand(a[0], op)) return;
      std::string key = std::string("transpose ") + (op == Operand::A ? "A" : "B");
      if (!first_time(key, d)) return;
      (op == Operand::A ? s_.transpose_a : s_.transpose_b) = true;
      (op == Operand::A ? s_.transpose_a_at : s_.transpose_b_at) = at(d);
    } else if (k == "pad") {
      Operand op;
      if (!operand(a[0], op)) return;
      std::string key = std::string("pad ") + (op == Operand::A ? "A" : "B");
      if (!first_time(key, d)) return;
      int64_t n = 0;
      if (a[1].is_real)
        bad_value(a[1].span, "padding must be a whole number of elements");
      else if (extent(a[1], 0, "padding", 0, 64, n))
        (op == Operand::A ? s_.pad_a : s_.pad_b) = int(n);
      (op == Operand::A ? s_.pad_a_at : s_.pad_b_at) = at(d);
    } else if (k == "swizzle") {
      read_swizzle(d);
    } else if (k == "double_buffer") {
      if (!first_time(k, d)) return;
      s_.double_buffer = true;
      s_.double_buffer_at = at(d);
    } else if (k == "stages") {
      if (!first_time(k, d)) return;
      int64_t n = 0;
      if (extent(a[0], 0, "stages", 2, 5, n)) s_.stages = int(n);
      s_.stages_at = at(d);
    } else if (k == "tma") {
      if (!first_time(k, d)) return;
      s_.tma = true;
      s_.tma_at = at(d);
    } else if (k == "stream_k") {
      if (!first_time(k, d)) return;
      s_.stream_k = true;
      s_.stream_k_at = at(d);
    } else if (k == "tma_store") {
      if (!first_time(k, d)) return;
      s_.tma_store = true;
      s_.tma_store_at = at(d);
    } else if (k == "persistent") {
      if (!first_time(k, d)) return;
      s_.persistent = true;
      s_.persistent_at = at(d);
    } else if (k == "warp_specialize") {
      if (!first_time(k, d)) return;
      s_.warp_specialize = true;
      s_.warp_specialize_at = at(d);
    } else if (k == "wmma" || k == "mma" || k == "wgmma") {
      read_mma(d);
    } else if (k == "epilogue") {
      read_epilogue(d);
    } else {
      // The grammar only lets the keywords above through.
      SCHEDC_INTERNAL_ASSERT(false, "analyze: unexpected directive '" + k + "'");
    }
  }
  bool tile_broken_ = false;
  bool swizzle_broken_ = false;  // a `swizzle` whose kind could not be read

  void read_swizzle(const Directive& d) {
    const Arg& kind = d.args[0];
    if (kind.text == "block" && d.args.size() == 2) {
      if (!first_time("swizzle block", d)) return;
      int64_t n = 0;
      if (extent(d.args[1], 0, "swizzle group size", 1, kMaxExtent, n)) s_.swizzle_block = int(n);
      s_.swizzle_block_at = at(d);
      return;
    }
    int which = 0;
    if (!choice<int>(kind, "swizzle", {{"smem", 0}, {"block", 1}}, which)) {
      swizzle_broken_ = true;  // no "'tma' needs 'swizzle smem'" on top of this error
      return;
    }
    if (!first_time("swizzle smem", d)) return;
    s_.swizzle_smem = true;
    s_.swizzle_smem_at = at(d);
  }

  void read_mma(const Directive& d) {
    const std::string& k = d.keyword;
    if (mma_dir_) {
      auto& e = error(d.span, mma_dir_->keyword == k
                                  ? "duplicate '" + k + "'; each directive may be given once"
                                  : "'" + mma_dir_->keyword + "' and '" + k +
                                        "' exclude each other: choose one tensor-core API");
      e.notes.push_back({mma_dir_->span, mma_dir_->keyword == k
                                             ? "first given here"
                                             : "'" + mma_dir_->keyword + "' given here"});
      return;
    }
    mma_dir_ = &d;
    MmaSpec m;
    m.api = k == "wmma" ? MmaApi::wmma : k == "wgmma" ? MmaApi::wgmma : MmaApi::mma_sync;
    s_.mma_at = at(d);
    if (!mma_type(d.args[0], m.type)) {
      s_.mma = m;  // keep "tensor cores in use" for the presence rules
      return;
    }
    bool tf32 = m.type == MmaType::tf32;
    std::string type = to_string(m.type);
    if (m.api == MmaApi::wgmma) {
      read_wgmma_shape(d, m);
    } else if (m.api == MmaApi::wmma) {
      m.m = 16, m.n = 16, m.k = tf32 ? 8 : 16;
      // WMMA's 32x8x16 (f16/bf16) is not offered: its B fragments start every
      // 8 columns (16 bytes) of the shared B tile, and load_matrix_sync needs
      // 32-byte aligned pointers.
      std::vector<std::string> valid = tf32 ? std::vector<std::string>{"16x16x8"}
                                            : std::vector<std::string>{"16x16x16", "8x32x16"};
      if (d.args.size() == 2) {
        const Arg& sh = d.args[1];
        std::string want = dims_text({sh.values[0], sh.values[1], sh.values[2]});
        if (!tf32 && !sh.overflow && want == "32x8x16") {
          bad_value(sh.span, "wmma " + type +
                                 " 32x8x16 is not supported: its B fragments start every 8 "
                                 "columns (16 bytes) of shared memory and WMMA loads need "
                                 "32-byte aligned pointers (valid: " +
                                 join(valid) + ")");
        } else if (sh.overflow || std::find(valid.begin(), valid.end(), want) == valid.end()) {
          bad_value(sh.span,
                    "wmma " + type + " has no shape " + sh.text + " (valid: " + join(valid) + ")");
        } else {
          m.m = int(sh.values[0]), m.n = int(sh.values[1]), m.k = int(sh.values[2]);
        }
      }
    } else {
      m.m = 16, m.n = 8, m.k = tf32 ? 8 : 16;
      std::vector<std::string> valid = tf32 ? std::vector<std::string>{"m16n8k8", "m16n8k4"}
                                            : std::vector<std::string>{"m16n8k16", "m16n8k8"};
      // `mma tf32 truncate`: the grammar reads the word after the type as
      // the shape; the rounding is only ever the word after the shape.
      if (d.args.size() >= 2 && d.args[1].kind == Arg::Kind::word && d.args[1].text == "truncate") {
        read_tf32_rounding(d.args[1], m);  // f16/bf16: "applies to tf32 only"
        if (tf32) {
          // `mma tf32 truncate m16n8k4`: suggest the shape written after it.
          bool shape_after = d.args.size() == 3 &&
                             std::find(valid.begin(), valid.end(), d.args[2].text) != valid.end();
          bad_value(d.args[1].span,
                    "'truncate' comes after the instruction shape: write the shape first, "
                    "e.g. 'mma tf32 " +
                        (shape_after ? d.args[2].text : valid[0]) + " truncate'");
        }
        s_.mma = m;
        return;
      }
      if (d.args.size() == 3) read_tf32_rounding(d.args[2], m);
      if (d.args.size() >= 2) {
        const Arg& sh = d.args[1];
        if (sh.kind != Arg::Kind::word) {
          bad_value(sh.span, "an mma instruction shape is written m16n8kK, e.g. '" + valid[0] +
                                 "', not " + sh.text);
        } else if (std::find(valid.begin(), valid.end(), sh.text) == valid.end()) {
          std::string msg = "mma " + type + " has no shape '" +
                            (sh.text.size() > 40 ? sh.text.substr(0, 40) + "..." : sh.text) + "'";
          std::string guess = dsl::closest_spelling(sh.text, valid);
          if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
          bad_value(sh.span, msg + " (valid: " + join(valid) + ")");
        } else {
          m.k = sh.text == "m16n8k16" ? 16 : sh.text == "m16n8k8" ? 8 : 4;
        }
      }
    }
    s_.mma = m;
  }

  // `wgmma TYPE [m64nNkK]`: M is 64 (one warpgroup), K is 32 bytes of the
  // type (16 for f16/bf16, 8 for tf32), N a multiple of 8 up to 256. Without
  // a shape, N is the warpgroup tile's WN (n stays 0 here; see wgmma_tiles).
  void read_wgmma_shape(const Directive& d, MmaSpec& m) {
    m.m = 64;
    m.k = m.type == MmaType::tf32 ? 8 : 16;
    m.n = 0;
    if (m.type == MmaType::tf32) {
      // The tf32 wgmma reads both operands k-major; row-major B is n-major.
      bad_value(d.args[0].span,
                "'wgmma tf32' is not implemented yet: tf32 wgmma reads B k-major and schedc's B "
                "is row-major (n-major); use 'mma tf32' with 'tma'");
      return;
    }
    if (d.args.size() < 2) return;
    const Arg& sh = d.args[1];
    const std::string example = "m64n256k" + std::to_string(m.k);
    int64_t mm = 0, nn = 0, kk = 0;
    char tail = 0;
    if (sh.kind != Arg::Kind::word ||
        std::sscanf(sh.text.c_str(), "m%" SCNd64 "n%" SCNd64 "k%" SCNd64 "%c", &mm, &nn, &kk,
                    &tail) != 3) {
      bad_value(sh.span, "a wgmma instruction shape is written m64nNkK, e.g. '" + example +
                             "', not '" +
                             (sh.text.size() > 40 ? sh.text.substr(0, 40) + "..." : sh.text) + "'");
      return;
    }
    std::string type = to_string(m.type);
    if (mm != 64)
      bad_value(sh.span, "wgmma computes 64 rows per warpgroup: M must be 64, got " +
                             std::to_string(mm) + " (e.g. '" + example + "')");
    else if (kk != m.k)
      bad_value(sh.span, "wgmma " + type + " has K " + std::to_string(m.k) + " (32 bytes), got " +
                             std::to_string(kk) + " (e.g. '" + example + "')");
    else if (nn < 8 || nn > 256 || nn % 8 != 0)
      bad_value(sh.span,
                "wgmma N must be a multiple of 8 from 8 to 256, got " + std::to_string(nn));
    else
      m.n = int(nn);
  }

  // The word after an `mma` shape: `truncate` (tf32 only), else an error.
  void read_tf32_rounding(const Arg& w, MmaSpec& m) {
    if (w.text != "truncate") {
      std::string msg = "unknown rounding '" +
                        (w.text.size() > 40 ? w.text.substr(0, 40) + "..." : w.text) +
                        "' after the mma shape";
      std::string guess = dsl::closest_spelling(w.text, {"truncate"});
      if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
      bad_value(w.span, msg + " (expected truncate, for tf32 only; the default rounds to nearest)");
      return;
    }
    if (m.type != MmaType::tf32) {
      bad_value(w.span,
                "truncate applies to tf32 only: f16/bf16 inputs are already in the multiplier's "
                "type");
      return;
    }
    m.tf32_rounding = Tf32Rounding::truncate;
    m.tf32_rounding_at = Origin{w.span, true};
  }

  void read_epilogue(const Directive& d) {
    if (!first_time("epilogue", d)) return;
    s_.epilogue_at = at(d);
    std::map<std::string, const Arg*> items;
    const std::vector<std::string> names = {"alpha", "beta", "bias", "relu"};
    for (size_t i = 0; i < d.args.size(); ++i) {
      const Arg& w = d.args[i];
      if (std::find(names.begin(), names.end(), w.text) == names.end()) {
        std::string msg = "unknown epilogue item '" +
                          (w.text.size() > 40 ? w.text.substr(0, 40) + "..." : w.text) + "'";
        std::string guess = dsl::closest_spelling(w.text, names);
        if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
        bad_value(w.span, msg + " (expected alpha X, beta Y, bias or relu)");
        continue;
      }
      bool has_value = w.text == "alpha" || w.text == "beta";
      const Arg* value = has_value && i + 1 < d.args.size() ? &d.args[++i] : nullptr;
      auto [it, inserted] = items.emplace(w.text, &w);
      if (!inserted) {
        auto& e = bad_value(w.span, "'" + w.text + "' given twice in one epilogue");
        e.notes.push_back({it->second->span, "first given here"});
        continue;
      }
      if (w.text == "bias") s_.epilogue.bias = true;
      if (w.text == "relu") s_.epilogue.relu = true;
      if (value) {
        double x = value->real;
        if (!std::isfinite(x) || std::fabs(x) > FLT_MAX) {
          bad_value(value->span, w.text + " " + value->text + " does not fit in a float");
          continue;
        }
        (w.text == "alpha" ? s_.epilogue.alpha : s_.epilogue.beta) = float(x);
      }
    }
  }

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

  void presence_rules() {
    bool has_tile = given("tile") != nullptr;
    if (!has_tile) {
      for (const char* k : {"thread", "warp", "vectorize", "transpose A", "transpose B", "pad A",
                            "pad B", "swizzle smem", "swizzle block", "double_buffer", "stages",
                            "stream_k", "warp_specialize", "persistent", "tma_store"})
        if (const Directive* d = given(k))
          error(d->keyword_span, "'" + std::string(k) +
                                     "' needs 'tile': without a block tile the kernel is naive "
                                     "(one thread per C element, no shared memory)");
      if (mma_dir_)
        error(mma_dir_->keyword_span, "'" + mma_dir_->keyword +
                                          "' needs 'tile' and 'warp': tensor cores compute warp "
                                          "tiles of a block tile");
    }
    excludes("block", "tile",
             "'block' shapes the naive kernel; with a tile the block follows from the tile");
    excludes("double_buffer", "stages",
             "both pipeline the k loop; 'stages 2' is the cp.async form of double buffering");
    excludes("pad A", "swizzle smem", "swizzle already avoids bank conflicts for both operands");
    excludes("pad B", "swizzle smem", "swizzle already avoids bank conflicts for both operands");

    if (mma_dir_) {
      if (const Directive* t = given("thread")) {
        auto& e = error(t->keyword_span, "'thread' does not apply with '" + mma_dir_->keyword +
                                             "': tensor cores compute whole warp tiles");
        e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
      }
      if (has_tile && !given("warp"))
        error(mma_dir_->keyword_span,
              "'" + mma_dir_->keyword + "' needs 'warp WMxWN': the C tile each " +
                  (mma_dir_->keyword == "wgmma" ? "warpgroup (4 warps)" : "warp") + " computes");
    }
    if (const Directive* d = given("tma_store"); d && !s_.uses_wgmma()) {
      auto& e = error(d->keyword_span,
                      "'tma_store' needs 'wgmma': the Hopper kernel is the one whose epilogue "
                      "stages C in shared memory for TMA");
      if (mma_dir_) e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
    }
    if (const Directive* d = given("persistent"); d && !s_.uses_wgmma()) {
      auto& e = error(d->keyword_span,
                      "'persistent' needs 'wgmma': the Hopper kernel is the one whose blocks walk "
                      "the C tiles");
      if (mma_dir_) e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
    }
    if (const Directive* d = given("warp_specialize"); d && !s_.uses_wgmma()) {
      auto& e = error(d->keyword_span,
                      "'warp_specialize' needs 'wgmma': it splits the block into a TMA producer "
                      "warpgroup and wgmma consumer warpgroups");
      if (mma_dir_) e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
    }
    dtype_rules();
    target_rules();
    tensor_core_rules();
    tma_presence_rules();
    stream_k_rules();
  }

  // `stream_k` splits the k loop of the SIMT tiled kernels; the tensor-core
  // kernels do not take its workspace yet.
  void stream_k_rules() {
    const Directive* d = given("stream_k");
    if (!d || !mma_dir_) return;
    auto& e = error(d->keyword_span, "'stream_k' is not implemented with '" + mma_dir_->keyword +
                                         "' yet: only the SIMT (f32 FMA) kernels split their k "
                                         "loop");
    e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
  }

  // `tma` fills the stages of the mma.sync pipeline with TMA boxes written in
  // the 128-byte swizzle (compiler/lower_mma.cpp, docs/tensor_cores.md).
  void tma_presence_rules() {
    const Directive* d = given("tma");
    if (!d && s_.uses_wgmma()) {
      error(mma_dir_->keyword_span,
            "'wgmma' needs 'tma': it reads both operands from shared memory in the 128-byte "
            "swizzle that TMA writes (add 'tma', 'stages N' and 'swizzle smem')");
      return;
    }
    if (!d) return;
    if (!mma_dir_ || mma_dir_->keyword == "wmma") {
      auto& e = error(d->keyword_span,
                      "'tma' needs 'mma' or 'wgmma': it fills their shared-memory pipeline (wmma "
                      "and the SIMT kernels copy with cp.async or plain loads)");
      if (mma_dir_) e.notes.push_back({mma_dir_->span, "'wmma' given here"});
      return;
    }
    if (!given("stages")) {
      auto& e = error(d->keyword_span,
                      "'tma' needs 'stages N': TMA copies fill the stages of a multi-stage "
                      "pipeline");
      if (const Directive* db = given("double_buffer"))
        e.notes.push_back({db->span, "'double_buffer' given here: write 'stages 2' instead"});
    }
    if (!given("swizzle smem") && !swizzle_broken_)
      error(d->keyword_span,
            "'tma' needs 'swizzle smem': TMA writes the 128-byte XOR swizzle that the fragment "
            "loads read");
  }

  // Box shapes of `tma` (after the tile's values are known).
  void tma_tile_rules(const BlockTile& t) {
    const Directive* d = given("tma");
    if (!d || !s_.mma || s_.mma->api == MmaApi::wmma) return;
    const int elem = size_of(s_.dtype);
    auto tile_error = [&](const std::string& m) {
      auto& e = error(d->keyword_span, m);
      note(e, tile_note(), "block tile set here");
    };
    if (t.k * elem != 128)
      tile_error("'tma' loads A as (BM, BK) boxes of 128-byte rows: BK must be " +
                 std::to_string(128 / elem) + " for " + to_string(s_.dtype) + " (BK is " +
                 std::to_string(t.k) + ")");
    if ((t.n * elem) % 128 != 0)
      tile_error("'tma' loads B as (BK, " + std::to_string(128 / elem) +
                 ") column panels of 128 bytes: BN must be a multiple of " +
                 std::to_string(128 / elem) + " for " + to_string(s_.dtype) + " (BN is " +
                 std::to_string(t.n) + ")");
    if (t.m > 256)
      tile_error("'tma' loads A as one (BM, BK) box, and a TMA box has at most 256 rows (BM is " +
                 std::to_string(t.m) + ")");
  }

  // What the tensor-core lowering (compiler/lower_mma.cpp) cannot do: its
  // global->shared copies are 16-byte cp.async chunks of whole rows, and WMMA
  // reads a plain strided layout.
  void tensor_core_rules() {
    if (!mma_dir_) return;
    const std::string& api = mma_dir_->keyword;
    for (const char* k : {"transpose A", "transpose B"})
      if (const Directive* d = given(k)) {
        auto& e = error(d->span, "'" + std::string(k) + "' does not apply with '" + api +
                                     "': the tensor-core copies move 16-byte chunks of rows "
                                     "with cp.async, which cannot transpose an operand");
        e.notes.push_back({mma_dir_->span, "'" + api + "' given here"});
      }
    if (api == "wmma")
      if (const Directive* d = given("swizzle smem")) {
        auto& e = error(d->span,
                        "'swizzle smem' and 'wmma' exclude each other: WMMA loads fragments from "
                        "a plain strided shared layout (use 'pad' against bank conflicts, or "
                        "'mma', which reads a swizzled layout with ldmatrix)");
        e.notes.push_back({mma_dir_->span, "'wmma' given here"});
      }
    // Padded rows stay whole 16-byte chunks (cp.async destinations, ldmatrix
    // rows, WMMA strides).
    const int elem = size_of(s_.dtype);
    if (api == "wgmma")
      for (const char* k : {"pad A", "pad B"})
        if (const Directive* d = given(k)) {
          auto& e = error(d->span, "'" + std::string(k) +
                                       "' does not apply with 'wgmma': its operands stay in the "
                                       "128-byte swizzle TMA writes, which has no padding");
          e.notes.push_back({mma_dir_->span, "'wgmma' given here"});
        }
    for (Operand op : {Operand::A, Operand::B}) {
      const char* k = op == Operand::A ? "pad A" : "pad B";
      const int pad = op == Operand::A ? s_.pad_a : s_.pad_b;
      const Directive* d = given(k);
      if (!d || !values_ok_ || (pad * elem) % 16 == 0) continue;
      std::ostringstream m;
      m << k << " " << pad << " of " << to_string(s_.dtype) << " is " << pad * elem
        << " bytes; with '" << api
        << "' each padded shared row must stay 16-byte aligned, so pad x " << elem
        << " bytes must be a multiple of 16 (pad " << (op == Operand::A ? "A " : "B ") << 16 / elem
        << ", " << 32 / elem << ", ...)";
      auto& e = error(d->args[1].span, m.str());
      e.notes.push_back({mma_dir_->span, "'" + api + "' given here"});
      note(e, dtype_note(), "dtype set here");
    }
  }

  void dtype_rules() {
    bool half = s_.dtype != DType::f32;
    if (half && !s_.mma) {
      error(dtype_arg_, std::string("dtype ") + to_string(s_.dtype) +
                            " needs 'wmma' or 'mma': the SIMT path computes in f32 only");
    }
    if (s_.mma && mma_type_arg_.valid() && values_ok_ok_for_type()) {
      MmaType want = s_.dtype == DType::f32   ? MmaType::tf32
                     : s_.dtype == DType::f16 ? MmaType::f16
                                              : MmaType::bf16;
      if (s_.mma->type != want) {
        auto& e = error(mma_type_arg_,
                        std::string("'") + mma_dir_->keyword + " " + to_string(s_.mma->type) +
                            "' does not match dtype " + to_string(s_.dtype) +
                            (s_.dtype_at.from_source ? "" : " (the default)") + "; use '" +
                            mma_dir_->keyword + " " + to_string(want) + "'");
        note(e, dtype_note(), "dtype set here");
      }
    }
  }
  // The mma type was read (an unknown type name is reported on its own).
  bool values_ok_ok_for_type() const {
    std::string t = mma_dir_ ? mma_dir_->args[0].text : "";
    return t == "tf32" || t == "f16" || t == "bf16";
  }

  void target_rules() {
    auto need = [&](int sm, SourceSpan at, const std::string& what) {
      if (target_.sm >= sm) return;
      error(at, what + " needs sm_" + std::to_string(sm) + " or newer; the target is " +
                    target_.arch_name());
    };
    if (const Directive* d = given("stages")) need(80, d->keyword_span, "'stages' (cp.async)");
    if (s_.mma && values_ok_ok_for_type()) {
      const MmaSpec& m = *s_.mma;
      std::string what = "'" + mma_dir_->keyword + " " + to_string(m.type) + "'";
      if (m.api == MmaApi::wgmma) {
        if (target_.sm < 90)
          error(mma_type_arg_, what + " needs sm_90 (Hopper, compiled for sm_90a); the target is " +
                                   target_.arch_name() + ": use 'mma " + to_string(m.type) +
                                   "' (mma.sync) there");
      } else if (m.type != MmaType::f16)
        need(80, mma_type_arg_, what);
      else if (m.api == MmaApi::wmma)
        need(70, mma_type_arg_, what);
      else
        need(m.k == 16 ? 80 : 75, mma_type_arg_, what);
    }
  }

  // ---- pass 3: arithmetic -----------------------------------------------------
  void arithmetic_rules() {
    if (!given("tile")) {
      naive_threads();
      return;
    }
    if (tile_broken_ || !s_.tile) return;
    const BlockTile& t = *s_.tile;
    bool shapes_ok = s_.mma ? tensor_core_tiles(t) : simt_tiles(t);
    if (shapes_ok && s_.uses_wgmma()) shapes_ok = wgmma_tiles(t);
    if (shapes_ok) registers_rule();
    if (shapes_ok) tma_tile_rules(t);
    bool threads_fine = shapes_ok && threads_ok();
    if (threads_fine) {
      vector_rules(t);
    } else {
      vector_width_rules(t);
    }
    smem_rule(threads_fine);
  }

  void naive_threads() {
    int64_t n = threads_per_block(s_);
    SourceSpan sp = s_.block_at.from_source ? given("block")->args[0].span : SourceSpan{};
    if (n % target_.warp_size != 0)
      error(sp, "block " + dims_text({s_.block_x, s_.block_y}) + " has " + std::to_string(n) +
                    " threads, not a multiple of the warp size " +
                    std::to_string(target_.warp_size));
    else if (n > target_.max_threads_per_block)
      error(sp, "block " + dims_text({s_.block_x, s_.block_y}) + " has " + std::to_string(n) +
                    " threads, more than the " + std::to_string(target_.max_threads_per_block) +
                    " a block may have on " + target_.arch_name());
  }

  // Reports "X does not divide Y" at `at` with a note at the bigger tile.
  bool divides(int64_t small, int64_t big, SourceSpan at, const std::string& msg,
               const Origin& big_at, const std::string& big_note) {
    if (small > 0 && big % small == 0) return true;
    auto& e = error(at, msg);
    note(e, big_at, big_note);
    return false;
  }

  bool simt_tiles(const BlockTile& t) {
    const ThreadTile& th = s_.thread;
    std::string tt = dims_text({th.m, th.n}), bt = dims_text({t.m, t.n});
    bool ok = divides(th.m, t.m, thread_arg_,
                      "thread tile " + tt + " does not divide block tile " + bt + " (BM " +
                          std::to_string(t.m) + " % TM " + std::to_string(th.m) + " != 0)",
                      tile_note(), "block tile set here") &&
              divides(th.n, t.n, thread_arg_,
                      "thread tile " + tt + " does not divide block tile " + bt + " (BN " +
                          std::to_string(t.n) + " % TN " + std::to_string(th.n) + " != 0)",
                      tile_note(), "block tile set here");
    if (th.split_m != 1 || th.split_n != 1) {
      std::string st = dims_text({th.split_m, th.split_n});
      ok = divides(th.split_m, th.m, split_arg_,
                   "split " + st + " does not divide thread tile " + tt +
                       " into equal pieces (TM % PM != 0)",
                   {}, "") &&
           divides(th.split_n, th.n, split_arg_,
                   "split " + st + " does not divide thread tile " + tt +
                       " into equal pieces (TN % PN != 0)",
                   {}, "") &&
           ok;
    }
    if (!ok || !s_.warp) return ok;
    const WarpTile& w = *s_.warp;
    std::string wt = dims_text({w.m, w.n});
    ok = divides(w.m, t.m, warp_arg_, "warp tile " + wt + " does not divide block tile " + bt,
                 tile_note(), "block tile set here") &&
         divides(w.n, t.n, warp_arg_, "warp tile " + wt + " does not divide block tile " + bt,
                 tile_note(), "block tile set here") &&
         divides(th.m, w.m, warp_arg_, "thread tile " + tt + " does not divide warp tile " + wt,
                 thread_note(), "thread tile set here") &&
         divides(th.n, w.n, warp_arg_, "thread tile " + tt + " does not divide warp tile " + wt,
                 thread_note(), "thread tile set here");
    if (!ok) return false;
    int64_t per_warp = int64_t(w.m / th.m) * (w.n / th.n);
    if (per_warp != 32) {
      auto& e = error(warp_arg_, "warp tile " + wt + " holds " + std::to_string(per_warp) +
                                     " thread tiles of " + tt +
                                     "; a warp tile must hold exactly 32, one per lane");
      note(e, thread_note(), "thread tile set here");
      return false;
    }
    return true;
  }

  bool tensor_core_tiles(const BlockTile& t) {
    if (!s_.warp || !given("warp") || !values_ok_ok_for_type()) return false;
    const WarpTile& w = *s_.warp;
    const MmaSpec& m = *s_.mma;
    if (m.api == MmaApi::wgmma) return true;  // wgmma_tiles
    std::string wt = dims_text({w.m, w.n}), bt = dims_text({t.m, t.n});
    std::string inst =
        mma_dir_->keyword + " " + to_string(m.type) + " " +
        (m.api == MmaApi::wmma ? dims_text({m.m, m.n, m.k}) : "m16n8k" + std::to_string(m.k));
    bool ok = divides(w.m, t.m, warp_arg_, "warp tile " + wt + " does not divide block tile " + bt,
                      tile_note(), "block tile set here") &&
              divides(w.n, t.n, warp_arg_, "warp tile " + wt + " does not divide block tile " + bt,
                      tile_note(), "block tile set here");
    ok = divides(m.m, w.m, warp_arg_,
                 "warp tile " + wt + " is not a whole number of '" + inst + "' tiles (WM " +
                     std::to_string(w.m) + " % " + std::to_string(m.m) + " != 0)",
                 s_.mma_at, "instruction chosen here") &&
         divides(m.n, w.n, warp_arg_,
                 "warp tile " + wt + " is not a whole number of '" + inst + "' tiles (WN " +
                     std::to_string(w.n) + " % " + std::to_string(m.n) + " != 0)",
                 s_.mma_at, "instruction chosen here") &&
         ok;
    ok = divides(m.k, t.k, tile_arg_,
                 "tile BK " + std::to_string(t.k) + " is not a multiple of the k " +
                     std::to_string(m.k) + " of '" + inst + "'",
                 s_.mma_at, "instruction chosen here") &&
         ok;
    return ok;
  }

  // `warp WMxWN` with wgmma is one consumer warpgroup's C tile: WM/64
  // instructions of m64nNkK down, WN/N across. B is read in 128-byte column
  // panels (64 f16), and an instruction's N starts at a panel.
  bool wgmma_tiles(const BlockTile& t) {
    const WarpTile& w = *s_.warp;
    MmaSpec& m = *s_.mma;
    std::string wt = dims_text({w.m, w.n}), bt = dims_text({t.m, t.n});
    const int panel = 128 / size_of(s_.dtype);
    bool ok =
        divides(w.m, t.m, warp_arg_, "warpgroup tile " + wt + " does not divide block tile " + bt,
                tile_note(), "block tile set here") &&
        divides(w.n, t.n, warp_arg_, "warpgroup tile " + wt + " does not divide block tile " + bt,
                tile_note(), "block tile set here");
    ok = divides(64, w.m, warp_arg_,
                 "warpgroup tile " + wt +
                     ": wgmma computes 64 rows per instruction, so WM must "
                     "be a multiple of 64 (WM is " +
                     std::to_string(w.m) + ")",
                 s_.mma_at, "wgmma chosen here") &&
         ok;
    ok = divides(panel, w.n, warp_arg_,
                 "warpgroup tile " + wt + ": wgmma reads B in 128-byte column panels of " +
                     std::to_string(panel) + " " + to_string(s_.dtype) +
                     ", so WN must be a multiple of " + std::to_string(panel) + " (WN is " +
                     std::to_string(w.n) + ")",
                 s_.mma_at, "wgmma chosen here") &&
         ok;
    if (!ok) return false;
    if (m.n == 0) m.n = w.n <= 256 ? w.n : 256;  // the widest instruction that tiles WN
    std::string inst = "wgmma " + std::string(to_string(m.type)) + " m64n" + std::to_string(m.n) +
                       "k" + std::to_string(m.k);
    ok = divides(m.n, w.n, warp_arg_,
                 "warpgroup tile " + wt + " is not a whole number of '" + inst + "' tiles (WN " +
                     std::to_string(w.n) + " % " + std::to_string(m.n) + " != 0)",
                 s_.mma_at, "instruction chosen here") &&
         divides(m.k, t.k, tile_arg_,
                 "tile BK " + std::to_string(t.k) + " is not a multiple of the k " +
                     std::to_string(m.k) + " of '" + inst + "'",
                 s_.mma_at, "instruction chosen here");
    if (ok && m.n % panel != 0) {
      // The descriptor of an n-major B addresses whole 128-byte panels.
      error(s_.mma_at.span, "'" + inst +
                                "' reads B in 128-byte column panels: N must be a "
                                "multiple of " +
                                std::to_string(panel) + " for " + to_string(s_.dtype));
      return false;
    }
    return ok;
  }

  // A thread's f32 accumulators plus two k-slices of its A and B fragments
  // (the emitters double-buffer them) must fit in the registers a thread may
  // have (255), with room left for addresses and indices; past that ptxas
  // spills to local memory: correct, but far from what the schedule promises.
  // Seen: `mma tf32` with `warp 64x128` (256 accumulators) compiled to 17 KB
  // of spills.
  static constexpr int64_t kRegisterBudget = 224;
  void registers_rule() {
    int64_t acc = 0, frag = 0;
    SourceSpan at;
    std::string what;
    if (s_.uses_wgmma()) {
      wgmma_registers_rule();
      return;
    } else if (s_.mma) {
      const WarpTile& w = *s_.warp;
      acc = int64_t(w.m) * w.n / 32;
      frag = 2 * (int64_t(w.m) / 16 * 4 + int64_t(w.n) / 8 * 2);
      at = warp_arg_;
      what = "warp tile " + dims_text({w.m, w.n}) + " gives each lane";
    } else {
      const ThreadTile& th = s_.thread;
      acc = int64_t(th.m) * th.n;
      frag = 2 * (int64_t(th.m) + th.n);
      at = thread_arg_;
      what = "thread tile " + dims_text({th.m, th.n}) + " needs";
    }
    if (acc + frag <= kRegisterBudget) return;
    error(at, what + " " + std::to_string(acc) + " accumulator registers and about " +
                  std::to_string(frag) + " for its A and B fragments, more than the " +
                  std::to_string(kRegisterBudget) +
                  " of a thread's 255 registers schedc plans for; the kernel would spill to "
                  "local memory (use a smaller tile per thread or warp)");
  }

  // wgmma: ptxas compiles the whole kernel within the registers each thread
  // gets at launch (64K / threads, in steps of 8, at most 255; setmaxnreg
  // moves registers between warpgroups later but does not raise that bound),
  // and a thread holds its accumulators plus about 26 more (descriptors,
  // addresses, indices). Seen: 3 consumers of m64n256 (512 threads, 128
  // registers) made ptxas stop with "Insufficient registers".
  void wgmma_registers_rule() {
    const WarpTile& w = *s_.warp;
    const int64_t threads = threads_per_block(s_);
    if (threads <= 0) return;
    const int64_t acc = int64_t(w.m) * w.n / 128;
    const int64_t cap = std::min<int64_t>(255, 65536 / threads / 8 * 8);
    if (acc + 26 <= cap) return;
    error(warp_arg_, "warpgroup tile " + dims_text({w.m, w.n}) + " gives each consumer thread " +
                         std::to_string(acc) +
                         " accumulator registers (+ about 26 for addresses), "
                         "but a block of " +
                         std::to_string(threads) + " threads gets " + std::to_string(cap) +
                         " registers per thread; use fewer or smaller "
                         "warpgroup tiles");
  }

  // Threads per block within the target's limits; the place is the directive
  // that decided the count (thread or warp), else the tile.
  bool threads_ok() {
    int64_t n = threads_per_block(s_);
    SourceSpan sp = tile_arg_;
    std::string how;
    const BlockTile& t = *s_.tile;
    if (s_.uses_wgmma()) {
      sp = warp_arg_;
      how = "(" + std::to_string(t.m) + "/" + std::to_string(s_.warp->m) + ") x (" +
            std::to_string(t.n) + "/" + std::to_string(s_.warp->n) + ") warpgroups of 128" +
            (s_.warp_specialize ? " and a producer warpgroup" : "");
    } else if (s_.mma) {
      sp = warp_arg_;
      how = "(" + std::to_string(t.m) + "/" + std::to_string(s_.warp->m) + ") x (" +
            std::to_string(t.n) + "/" + std::to_string(s_.warp->n) + ") warps of 32";
    } else {
      if (s_.thread_at.from_source) sp = thread_arg_;
      how = "(" + std::to_string(t.m) + "/" + std::to_string(s_.thread.m) + ") x (" +
            std::to_string(t.n) + "/" + std::to_string(s_.thread.n) + ") thread tiles";
    }
    std::string msg;
    if (n % target_.warp_size != 0)
      msg = "the block has " + std::to_string(n) + " threads " + how +
            ", not a multiple of the warp size " + std::to_string(target_.warp_size);
    else if (n > target_.max_threads_per_block)
      msg = "the block has " + std::to_string(n) + " threads " + how + ", more than the " +
            std::to_string(target_.max_threads_per_block) + " a block may have on " +
            target_.arch_name();
    if (msg.empty()) return true;
    auto& e = error(sp, msg);
    if (sp.offset != tile_arg_.offset) note(e, tile_note(), "block tile set here");
    return false;
  }

  // Vector width against the element type and the rows it is read from.
  bool vector_width_rules(const BlockTile& t) {
    int n = s_.vectorize;
    if (n == 1) return true;
    std::string vec = "vectorize " + std::to_string(n);
    int bytes = n * size_of(s_.dtype);
    if (bytes > 16) {
      auto& e = error(vectorize_arg_, vec + " of " + to_string(s_.dtype) + " is " +
                                          std::to_string(bytes) +
                                          " bytes; the widest access is 16 bytes");
      note(e, dtype_note(), "dtype set here");
      return false;
    }
    bool ok = divides(n, t.k, vectorize_arg_,
                      vec + " does not divide tile BK " + std::to_string(t.k) +
                          " (a vector never crosses a row of A, which is BK long)",
                      tile_note(), "block tile set here") &&
              divides(n, t.n, vectorize_arg_,
                      vec + " does not divide tile BN " + std::to_string(t.n) +
                          " (a vector never crosses a row of B, which is BN long)",
                      tile_note(), "block tile set here");
    if (ok && !s_.mma) {
      // The thread writes C from each piece's row: TN/PN contiguous elements.
      int row = s_.thread.n / std::max(s_.thread.split_n, 1);
      std::string what = s_.thread.split_n > 1
                             ? "the thread tile's row piece TN/PN = " + std::to_string(row)
                             : "thread tile TN " + std::to_string(row);
      ok = divides(n, row, vectorize_arg_,
                   vec + " does not divide " + what + " (C is written from that row)",
                   thread_note(), "thread tile set here");
    }
    return ok;
  }

  void vector_rules(const BlockTile& t) {
    if (!vector_width_rules(t)) return;
    int n = s_.vectorize;
    int64_t threads = threads_per_block(s_);
    SourceSpan sp = s_.vectorize_at.from_source ? vectorize_arg_ : tile_arg_;
    auto copy = [&](const char* name, int64_t rows, int64_t cols) {
      int64_t vectors = rows * cols / n;
      if (vectors % threads == 0) return true;
      std::ostringstream m;
      m << "the " << name << " tile (" << rows << "x" << cols << " = " << rows * cols
        << " elements) is " << vectors << " vectors of " << n << ", which " << threads
        << " threads cannot copy evenly (" << vectors << " / " << threads
        << " is not a whole number of vectors per thread)";
      auto& e = error(sp, m.str());
      if (sp.offset != tile_arg_.offset) note(e, tile_note(), "block tile set here");
      return false;
    };
    // TMA copies whole boxes: no per-thread copy map to divide.
    if (!s_.uses_wgmma() && copy("A", t.m, t.k)) copy("B", t.k, t.n);
    // cp.async moves 4, 8 or 16 bytes. The SIMT lowering copies N elements
    // per cp.async; the tensor-core copies are always 16-byte chunks
    // (compiler/lower_mma.cpp does not read `vectorize`), so no rule there.
    int bytes = n * size_of(s_.dtype);
    if (s_.stages > 1 && bytes < 4 && !s_.mma) {
      auto& e = error(given("stages")->keyword_span,
                      "'stages' copies with cp.async, which moves 4, 8 or 16 bytes; vectorize " +
                          std::to_string(n) + " of " + to_string(s_.dtype) + " is " +
                          std::to_string(bytes) + " bytes (use vectorize " +
                          std::to_string(4 / size_of(s_.dtype)) + " or more)");
      note(e, s_.vectorize_at, "vector width set here");
    }
  }

  // With a bad thread count, only the pipeline is measured: the wmma
  // epilogue's scratch (warps x 1024 bytes) follows the thread count, which
  // threads_ok has reported already.
  void smem_rule(bool threads_fine) {
    SmemUse u = smem_use(s_);
    int64_t bytes = threads_fine ? u.total() : u.pipeline();
    if (bytes <= target_.smem_per_block_optin) return;
    std::ostringstream m;
    m << "the block needs " << bytes << " bytes of shared memory (" << u.buffers
      << (u.buffers == 1 ? " buffer" : " buffers") << " x (A " << u.a_bytes << " + B " << u.b_bytes
      << " bytes)"
      << (u.barrier_bytes ? " + " + std::to_string(u.barrier_bytes) + " mbarrier bytes" : "")
      << (u.c_stage_bytes ? " + " + std::to_string(u.c_stage_bytes) + " bytes of C for tma_store"
                          : "")
      << "), more than the " << target_.smem_per_block_optin << " a block may use on "
      << target_.arch_name();
    auto& e = error(tile_arg_, m.str());
    note(e, s_.stages_at, "stages set here");
    note(e, s_.double_buffer_at, "double_buffer set here");
    note(e, s_.pad_a_at, "pad A set here");
    note(e, s_.pad_b_at, "pad B set here");
  }
};

}  // namespace

std::optional<Schedule> analyze(const dsl::Ast& ast, const std::string& file_name,
                                const Target& target, dsl::Diagnostics& diags) {
  return Analyzer(target, diags).run(ast, file_name);
}

}  // namespace schedc::compiler
