// compiler::analyze: Ast -> Schedule. Three passes over the directives:
//   1. read each directive's arguments (ranges, names, instruction shapes),
//      reporting duplicates with the first place as a note;
//   2. presence rules: what needs `tile`, what excludes what, dtype vs MMA
//      type vs target;
//   3. arithmetic rules on the tiles: divisibility, threads per block, vector
//      width, the global->shared copy, shared-memory bytes.
// Every violation is reported (pass 3 only runs on directives whose own
// values were fine, so one mistake does not cascade into several).
// The rules of the tensor-core paths live in compiler/analyze_tensor_cores.cpp,
// `split_k`'s in compiler/analyze_split_k.cpp;
// the Analyzer class they share, in compiler/analyzer.h.
//
// The global->shared copy has no rule of its own: the block's T threads copy
// each tile in vectors of N elements (N = vectorize; N | BK and N | BN, so a
// vector never crosses a row of A or B in global memory), thread t taking
// vectors t, t + T, ...; when T does not divide the vector count (fewer
// vectors than threads, or a count that is not a multiple of T), the last
// round is guarded and the threads past the last vector skip it
// (compiler/lower_copies.cpp, docs/language.md "The global -> shared copy").
#include "compiler/analyzer.h"
#include "compiler/problem.h"

namespace schedc::compiler::analysis {

void Analyzer::read(const Directive& d) {
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
    choice<DType>(
        a[0], "element type",
        {{"f32", DType::f32}, {"f16", DType::f16}, {"bf16", DType::bf16}, {"s8", DType::s8}},
        s_.dtype);
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
  } else if (k == "layout") {
    // A, B or C (C is no operand of the copies, so it is chosen here).
    char which = 0;
    if (!choice<char>(a[0], "matrix", {{"A", 'A'}, {"B", 'B'}, {"C", 'C'}}, which)) return;
    if (!first_time(std::string("layout ") + which, d)) return;
    if (a[1].text != "row" && a[1].text != "col") {
      bad_value(a[1].span,
                "expected row (row-major) or col (column-major), got '" + a[1].text + "'");
      return;
    }
    const bool col = a[1].text == "col";
    bool& flag = which == 'A' ? s_.a_col : which == 'B' ? s_.b_col : s_.c_col;
    Origin& where = which == 'A' ? s_.a_layout_at : which == 'B' ? s_.b_layout_at : s_.c_layout_at;
    flag = col;
    where = at(d);
  } else if (k == "batch") {
    if (!first_time(k, d)) return;
    int64_t n = 0;  // the grammar takes whole numbers only
    if (extent(a[0], 0, "batch", 1, kMaxBatch, n)) s_.batch = n;
    s_.batch_at = at(d);
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
    if (extent(a[0], 0, "stages", 2, 16, n)) s_.stages = int(n);
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
  } else if (k == "conv") {
    if (!first_time(k, d)) return;
    read_conv(d);
  } else if (k == "cluster") {
    if (!first_time(k, d)) return;
    std::vector<int64_t> v;
    if (extents(a[0], {"CM", "CN"}, 1, 2, v)) {
      if (v[0] * v[1] > 2)
        bad_value(a[0].span, "a cluster of " + std::to_string(v[0] * v[1]) +
                                 " CTAs is not built: 'cluster' takes 2x1 (two tiles along M "
                                 "sharing B) or 1x2 (along N sharing A)");
      else
        s_.cluster_m = int(v[0]), s_.cluster_n = int(v[1]);
    }
    s_.cluster_at = at(d);
  } else if (k == "split_k") {
    if (!first_time(k, d)) return;
    int64_t n = 0;
    if (extent(a[0], 0, "split_k", 2, kMaxSplitK, n)) s_.split_k = int(n);
    s_.split_k_at = at(d);
  } else if (k == "blocks_per_sm") {
    if (!first_time(k, d)) return;
    int64_t n = 0;
    if (extent(a[0], 0, "blocks_per_sm", 1, 4, n)) s_.blocks_per_sm = int(n);
    s_.blocks_per_sm_at = at(d);
  } else if (k == "persistent") {
    if (!first_time(k, d)) return;
    s_.persistent = true;
    s_.persistent_at = at(d);
  } else if (k == "halo") {
    if (!first_time(k, d)) return;
    s_.halo = true;
    s_.halo_at = at(d);
    if (!a.empty()) choice<bool>(a[0], "halo form", {{"only", true}}, s_.halo_only);
  } else if (k == "warp_specialize") {
    if (!first_time(k, d)) return;
    s_.warp_specialize = true;
    s_.warp_specialize_at = at(d);
    if (!a.empty())
      choice<bool>(a[0], "consumer order", {{"cooperative", false}, {"pingpong", true}},
                   s_.pingpong);
  } else if (k == "wmma" || k == "mma" || k == "wgmma") {
    read_mma(d);
  } else if (k == "epilogue") {
    read_epilogue(d);
  } else {
    // The grammar only lets the keywords above through.
    SCHEDC_INTERNAL_ASSERT(false, "analyze: unexpected directive '" + k + "'");
  }
}

bool swizzle_broken_ = false;  // a `swizzle` whose kind could not be read

void Analyzer::read_swizzle(const Directive& d) {
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

void Analyzer::read_epilogue(const Directive& d) {
  if (!first_time("epilogue", d)) return;
  s_.epilogue_at = at(d);
  std::map<std::string, const Arg*> items;
  const std::vector<std::string> names = {"alpha", "beta", "bias", "scale", "relu", "requantize"};
  for (size_t i = 0; i < d.args.size(); ++i) {
    const Arg& w = d.args[i];
    if (std::find(names.begin(), names.end(), w.text) == names.end()) {
      std::string msg = "unknown epilogue item '" +
                        (w.text.size() > 40 ? w.text.substr(0, 40) + "..." : w.text) + "'";
      std::string guess = dsl::closest_spelling(w.text, names);
      if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
      bad_value(w.span, msg + " (expected alpha X, beta Y, bias, scale, relu or requantize)");
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
    if (w.text == "requantize") s_.epilogue.requantize = true;
    if (w.text == "scale") s_.epilogue.scale = true;
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

void Analyzer::presence_rules() {
  bool has_tile = given("tile") != nullptr;
  if (!has_tile) {
    for (const char* k : {"thread", "warp", "vectorize", "transpose A", "transpose B", "pad A",
                          "pad B", "swizzle smem", "swizzle block", "double_buffer", "stages",
                          "stream_k", "split_k", "warp_specialize", "persistent", "tma_store"})
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
  hopper_presence_rules();
  dtype_rules();
  target_rules();
  tensor_core_rules();
  tma_presence_rules();
  stream_k_rules();
  conv_rules();  // (sets `halo only`'s A region, which split_k's sums may wait in)
  split_k_rules();
}

void Analyzer::stream_k_rules() {
  const Directive* d = given("stream_k");
  if (!d || !mma_dir_) return;
  if (!s_.uses_wgmma()) {
    auto& e = error(d->keyword_span, "'stream_k' is not implemented with '" + mma_dir_->keyword +
                                         "' yet: only the SIMT (f32 FMA) and 'wgmma' kernels "
                                         "split their k loop");
    e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
    return;
  }
  // The tail computes one slice per block, alone: a cluster's two CTAs would
  // need slices of neighbouring tiles with the same k range.
  if (const Directive* c = given("cluster"); c && s_.cluster_m * s_.cluster_n > 1) {
    auto& e = error(d->keyword_span,
                    "'stream_k' is not implemented with 'cluster' yet: the stream_k tail's "
                    "blocks each compute one slice of one tile alone");
    e.notes.push_back({c->span, "'cluster' given here"});
  }
}

void Analyzer::requantize_rules() {
  const Directive* ep = given("epilogue");
  if (!ep) return;
  dsl::SourceSpan at = ep->keyword_span, scale_at = ep->keyword_span;
  for (const Arg& w : ep->args) {
    if (w.text == "requantize") at = w.span;
    if (w.text == "scale") scale_at = w.span;
  }
  if (s_.epilogue.scale && !s_.epilogue.requantize)
    error(scale_at,
          "'scale' (per-channel scales) is implemented for 'requantize' only: add "
          "'requantize' (dtype s8, an int8 C), or fold one scale for all channels into alpha");
  if (!s_.epilogue.requantize) return;
  if (s_.dtype != DType::s8) {
    auto& e = error(at,
                    "'requantize' needs dtype s8: it rounds and saturates the int32 sums of "
                    "int8 operands to an int8 C");
    note(e, dtype_note(), "dtype set here");
    return;
  }
  if (const Directive* t = given("tma_store")) {
    auto& e = error(at,
                    "'requantize' is not implemented yet with 'tma_store': the int8 C is "
                    "written by direct stores");
    e.notes.push_back({t->keyword_span, "'tma_store' given here"});
  }
}

void Analyzer::dtype_rules() {
  bool half = s_.dtype != DType::f32;
  if (s_.dtype == DType::s8 && !s_.mma) {
    error(dtype_arg_,
          "dtype s8 needs 'mma s8' (sm_80) or 'wgmma s8' (sm_90): the SIMT path computes in "
          "f32 only, and int8 runs on the tensor cores");
    return;
  }
  requantize_rules();
  if (const Directive* ep = given("epilogue");
      ep && s_.dtype == DType::s8 && !s_.epilogue.requantize) {
    // The s8 epilogue scales the exact s32 sum by integers (cuBLAS's int8
    // GEMM takes int32 alpha and beta); requantize's is f32.
    for (size_t i = 0; i + 1 < ep->args.size(); ++i) {
      const Arg& w = ep->args[i];
      if (w.text != "alpha" && w.text != "beta") continue;
      const Arg& v = ep->args[i + 1];
      if (std::isfinite(v.real) && v.real != std::floor(v.real)) {
        auto& e = error(
            v.span, "dtype s8 computes in s32: " + w.text + " must be an integer, got " + v.text);
        note(e, dtype_note(), "dtype set here");
      }
    }
  }
  if (half && !s_.mma) {
    error(dtype_arg_, std::string("dtype ") + to_string(s_.dtype) +
                          " needs 'wmma' or 'mma': the SIMT path computes in f32 only");
  }
  if (s_.mma && mma_type_arg_.valid() && values_ok_ok_for_type()) {
    MmaType want = s_.dtype == DType::f32    ? MmaType::tf32
                   : s_.dtype == DType::f16  ? MmaType::f16
                   : s_.dtype == DType::bf16 ? MmaType::bf16
                                             : MmaType::s8;
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

void Analyzer::target_rules() {
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
                                 target_.arch_name() + ": use 'mma " +
                                 std::string(to_string(m.type)) + "' (mma.sync) there");
    } else if (m.type != MmaType::f16)
      need(80, mma_type_arg_, what);
    else if (m.api == MmaApi::wmma)
      need(70, mma_type_arg_, what);
    else
      need(m.k == 16 ? 80 : 75, mma_type_arg_, what);
  }
}

void Analyzer::arithmetic_rules() {
  if (!given("tile")) {
    naive_threads();
    return;
  }
  if (tile_broken_ || !s_.tile) return;
  const BlockTile& t = *s_.tile;
  bool shapes_ok = s_.mma ? tensor_core_tiles(t) : simt_tiles(t);
  if (shapes_ok && s_.uses_wgmma()) shapes_ok = wgmma_tiles(t) && pingpong_tile_rule(t);
  if (shapes_ok) registers_rule();
  if (shapes_ok) tma_tile_rules(t);
  bool threads_fine = shapes_ok && threads_ok();
  if (threads_fine) {
    vector_rules(t);
  } else {
    vector_width_rules(t);
  }
  smem_rule(threads_fine);
  if (threads_fine) blocks_per_sm_rule();
}

void Analyzer::naive_threads() {
  int64_t n = threads_per_block(s_);
  SourceSpan sp = s_.block_at.from_source ? given("block")->args[0].span : SourceSpan{};
  if (n % target_.warp_size != 0)
    error(sp, "block " + dims_text({s_.block_x, s_.block_y}) + " has " + std::to_string(n) +
                  " threads, not a multiple of the warp size " + std::to_string(target_.warp_size));
  else if (n > target_.max_threads_per_block)
    error(sp, "block " + dims_text({s_.block_x, s_.block_y}) + " has " + std::to_string(n) +
                  " threads, more than the " + std::to_string(target_.max_threads_per_block) +
                  " a block may have on " + target_.arch_name());
}

bool Analyzer::simt_tiles(const BlockTile& t) {
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

void Analyzer::registers_rule() {
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

bool Analyzer::threads_ok() {
  int64_t n = threads_per_block(s_);
  SourceSpan sp = tile_arg_;
  std::string how;
  const BlockTile& t = *s_.tile;
  if (s_.uses_wgmma()) {
    sp = warp_arg_;
    how = s_.pingpong
              ? std::string("(two ping-pong consumer warpgroups of 128)")
              : "(" + std::to_string(t.m) + "/" + std::to_string(s_.warp->m) + ") x (" +
                    std::to_string(t.n) + "/" + std::to_string(s_.warp->n) + ") warpgroups of 128";
    how += s_.warp_specialize ? " and a producer warpgroup" : "";
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

bool Analyzer::vector_width_rules(const BlockTile& t) {
  int n = s_.vectorize;
  if (n == 1) return true;
  std::string vec = "vectorize " + std::to_string(n);
  int bytes = n * size_of(s_.dtype);
  if (bytes > 16) {
    auto& e =
        error(vectorize_arg_, vec + " of " + to_string(s_.dtype) + " is " + std::to_string(bytes) +
                                  " bytes; the widest access is 16 bytes");
    note(e, dtype_note(), "dtype set here");
    return false;
  }
  // A vector runs along the operand's contiguous side in global memory: a
  // row of A's tile is BK long (BM with `layout A col`), one of B's BN (BK
  // with `layout B col`). (wgmma refuses a column-major operand.)
  const bool wg = s_.uses_wgmma();
  const bool a_col = s_.a_col && !wg, b_col = s_.b_col && !wg;
  bool ok = divides(n, a_col ? t.m : t.k, vectorize_arg_,
                    vec + " does not divide tile " + (a_col ? "BM " : "BK ") +
                        std::to_string(a_col ? t.m : t.k) +
                        " (a vector never crosses a row of A's tile in memory, which is " +
                        (a_col ? "BM long: layout A col)" : "BK long)"),
                    tile_note(), "block tile set here") &&
            divides(n, b_col ? t.k : t.n, vectorize_arg_,
                    vec + " does not divide tile " + (b_col ? "BK " : "BN ") +
                        std::to_string(b_col ? t.k : t.n) +
                        " (a vector never crosses a row of B's tile in memory, which is " +
                        (b_col ? "BK long: layout B col)" : "BN long)"),
                    tile_note(), "block tile set here");
  if (ok && !s_.mma && !s_.c_col) {  // (a column-major C is stored element by element)
    // The thread writes C from each piece's row: TN/PN contiguous elements.
    int row = s_.thread.n / std::max(s_.thread.split_n, 1);
    std::string what = s_.thread.split_n > 1
                           ? "the thread tile's row piece TN/PN = " + std::to_string(row)
                           : "thread tile TN " + std::to_string(row);
    ok = divides(n, row, vectorize_arg_,
                 vec + " does not divide " + what + " (C is written from that row)", thread_note(),
                 "thread tile set here");
  }
  return ok;
}

void Analyzer::vector_rules(const BlockTile& t) {
  if (!vector_width_rules(t)) return;
  int n = s_.vectorize;
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

void Analyzer::smem_rule(bool threads_fine) {
  SmemUse u = smem_use(s_);
  int64_t bytes = threads_fine ? u.total() : u.pipeline();
  if (bytes <= target_.smem_per_block_optin) return;
  std::ostringstream m;
  m << "the block needs " << bytes << " bytes of shared memory (" << smem_parts_text(u)
    << "), more than the " << target_.smem_per_block_optin << " a block may use on "
    << target_.arch_name();
  auto& e = error(tile_arg_, m.str());
  note(e, s_.stages_at, "stages set here");
  note(e, s_.double_buffer_at, "double_buffer set here");
  note(e, s_.pad_a_at, "pad A set here");
  note(e, s_.pad_b_at, "pad B set here");
}

// `blocks_per_sm N`: N blocks' shared memory (and CUDA's reserve for each)
// side by side on one SM.
void Analyzer::blocks_per_sm_rule() {
  const Directive* d = given("blocks_per_sm");
  if (!d || s_.blocks_per_sm <= 1 || !s_.tile) return;
  const int64_t per_block = smem_use(s_).total() + target_.smem_reserved_per_block;
  if (s_.blocks_per_sm * per_block <= target_.smem_per_sm) return;
  error(d->args[0].span, "blocks_per_sm " + std::to_string(s_.blocks_per_sm) + " needs " +
                             std::to_string(s_.blocks_per_sm) + " x " + std::to_string(per_block) +
                             " bytes of shared memory (the block's and CUDA's 1 KB reserve), "
                             "more than the " +
                             std::to_string(target_.smem_per_sm) + " of an SM on " +
                             target_.arch_name() + "; use fewer stages or blocks");
}

}  // namespace schedc::compiler::analysis

namespace schedc::compiler {

std::optional<Schedule> analyze(const dsl::Ast& ast, const std::string& file_name,
                                const Target& target, dsl::Diagnostics& diags) {
  return analysis::Analyzer(target, diags).run(ast, file_name);
}

}  // namespace schedc::compiler
